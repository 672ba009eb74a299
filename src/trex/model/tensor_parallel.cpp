#include "trex/model/tensor_parallel.hpp"

#include <cstring>
#include <string>

namespace trex {

namespace {

bool ends_with(const std::string& s, const char* suffix) {
    const size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

}  // namespace

bool is_tp_sharded(const tensor_spec& s) {
    if (s.role != tensor_role::weight) return false;
    if (s.expert >= 0) return true;
    for (const char* suffix :
         {".attn.attn_sink", ".attn.wq_b.weight", ".attn.wo_a.weight", ".attn.wo_b.weight",
          ".ffn.shared_experts.w1.weight", ".ffn.shared_experts.w3.weight", ".ffn.shared_experts.w2.weight"})
        if (ends_with(s.name, suffix)) return true;
    return false;
}

namespace tp_copy {

void cols(float* dst, const float* src, int64_t R, int64_t C, int64_t c0, int64_t n) {
    for (int64_t r = 0; r < R; r++) std::memcpy(dst + r * n, src + r * C + c0, sizeof(float) * n);
}

void add_cols(float* dst, const float* src, int64_t R, int64_t C, int64_t c0, int64_t n) {
    for (int64_t r = 0; r < R; r++) {
        float* o = dst + r * C + c0;
        const float* s = src + r * n;
        for (int64_t j = 0; j < n; j++) o[j] += s[j];
    }
}

void w13(float* dst, const float* src, int64_t I, int64_t d, int64_t i0, int64_t n) {
    std::memcpy(dst, src + i0 * d, sizeof(float) * n * d);
    std::memcpy(dst + n * d, src + (I + i0) * d, sizeof(float) * n * d);
}

void add_w13(float* dst, const float* src, int64_t I, int64_t d, int64_t i0, int64_t n) {
    float* w1 = dst + i0 * d;
    float* w3 = dst + (I + i0) * d;
    for (int64_t j = 0; j < n * d; j++) w1[j] += src[j];
    for (int64_t j = 0; j < n * d; j++) w3[j] += src[n * d + j];
}

}  // namespace tp_copy

}  // namespace trex
