#include "trex/model/tensor_parallel.hpp"

#include <cstring>
#include <string>

#include "trex/base/error.hpp"

namespace trex {

namespace {

bool ends_with(const std::string& s, const char* suffix) {
    const size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// [rows, cols] of a shape viewed as a matrix (1-D: [n, 1]).
int64_t rows_of(const std::vector<int64_t>& shape) {
    return shape[0];
}
int64_t cols_of(const std::vector<int64_t>& shape) {
    int64_t c = 1;
    for (size_t i = 1; i < shape.size(); i++) c *= shape[i];
    return c;
}

}  // namespace

tp_split tp_split_of(const tensor_spec& s, bool experts_split) {
    if (s.role != tensor_role::weight) return tp_split::none;
    if (s.expert >= 0) {
        if (!experts_split) return tp_split::none;
        return ends_with(s.name, ".w2.weight") ? tp_split::cols : tp_split::rows;
    }
    if (s.name == "embed.weight" || s.name == "head.weight") return tp_split::rows;  // vocabulary parallel
    for (const char* suffix : {".attn.attn_sink", ".attn.wq_b.weight", ".attn.wo_a.weight",
                               ".ffn.shared_experts.w1.weight", ".ffn.shared_experts.w3.weight"})
        if (ends_with(s.name, suffix)) return tp_split::rows;
    for (const char* suffix : {".attn.wo_b.weight", ".ffn.shared_experts.w2.weight"})
        if (ends_with(s.name, suffix)) return tp_split::cols;
    return tp_split::none;
}

std::vector<int64_t> tp_local_shape(const std::string& name, const std::vector<int64_t>& full, tp_split split,
                                    int size) {
    if (split == tp_split::none) return full;
    const size_t dim = split == tp_split::rows ? 0 : full.size() - 1;
    TREX_CHECK(split == tp_split::rows || full.size() == 2, "tensor '{}': a column split needs a matrix", name);
    TREX_CHECK(full[dim] % size == 0, "tensor parallelism {}: tensor '{}' has {} {} (not divisible)", size, name,
               full[dim], dim == 0 ? "rows" : "columns");
    std::vector<int64_t> local = full;
    local[dim] /= size;
    return local;
}

int64_t tp_full_index(int64_t k, const std::vector<int64_t>& full, tp_split split, int rank, int size) {
    const int64_t R = rows_of(full), C = cols_of(full);
    switch (split) {
        case tp_split::none:
            return k;
        case tp_split::rows:
            return rank * (R / size) * C + k;
        case tp_split::cols: {
            const int64_t lc = C / size;
            return (k / lc) * C + rank * lc + k % lc;
        }
    }
    return k;
}

namespace {

// Copies between a full tensor and rank's slice of it: to_full false = full → local, true = local → full.
void copy_shard(float* local, float* full, const std::vector<int64_t>& shape, tp_split split, int rank, int size,
                bool to_full) {
    auto copy = [to_full](float* l, float* f, int64_t n) {
        if (to_full)
            std::memcpy(f, l, sizeof(float) * n);
        else
            std::memcpy(l, f, sizeof(float) * n);
    };
    const int64_t R = rows_of(shape), C = cols_of(shape);
    if (split == tp_split::none) {
        copy(local, full, R * C);
    } else if (split == tp_split::rows) {
        const int64_t n = R / size * C;
        copy(local, full + rank * n, n);
    } else {
        const int64_t lc = C / size;
        for (int64_t r = 0; r < R; r++) copy(local + r * lc, full + r * C + rank * lc, lc);
    }
}

}  // namespace

void tp_take_shard(float* local, const float* full, const std::vector<int64_t>& shape, tp_split split, int rank,
                   int size) {
    copy_shard(local, const_cast<float*>(full), shape, split, rank, size, false);  // full is only read
}

void tp_put_shard(float* full, const float* local, const std::vector<int64_t>& shape, tp_split split, int rank,
                  int size) {
    copy_shard(const_cast<float*>(local), full, shape, split, rank, size, true);  // local is only read
}

}  // namespace trex
