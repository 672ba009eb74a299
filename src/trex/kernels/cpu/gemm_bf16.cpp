#include "trex/kernels/cpu/gemm_bf16.hpp"

#include <immintrin.h>

#include <omp.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include <oneapi/dnnl/dnnl.hpp>

#include "trex/base/error.hpp"
#include "trex/kernels/precision.hpp"

namespace trex::cpu {

namespace {

// ---------------------------------------------------------------- conversion

// 16 floats -> 16 bf16 with the hardware's rounding (vcvtneps2bf16: nearest even, NaN quietened), the tail masked
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void row_to_bf16_avx512(uint16_t* dst, const float* src,
                                                                                        int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256bh v = _mm512_cvtneps_pbh(_mm512_loadu_ps(src + i));
        _mm256_storeu_si256((__m256i*)(dst + i), (__m256i)v);
    }
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        const __m256bh v = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, src + i));
        _mm256_mask_storeu_epi16(dst + i, m, (__m256i)v);
    }
}

void row_to_bf16_scalar(uint16_t* dst, const float* src, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        const float r = round_to_bf16(src[i]);
        uint32_t u;
        std::memcpy(&u, &r, sizeof u);
        dst[i] = (uint16_t)(u >> 16);
    }
}

// ---------------------------------------------------------------- oneDNN matmul primitives, one per problem

// A problem: the layouts of the packed operands follow from (trans, dims); C's row stride, alpha and beta are
// attributes of the primitive.
using problem_key = std::tuple<bool, bool, int64_t, int64_t, int64_t, int64_t, float, float>;

struct problem {
    dnnl::matmul prim;
    dnnl::memory::desc src, weights, dst, scratchpad;
};

dnnl::engine& engine() {
    static dnnl::engine e(dnnl::engine::kind::cpu, 0);
    return e;
}

// op(A) [M,K] of A packed as stored: [M,K] or, transposed, [K,M]
dnnl::memory::desc operand_desc(bool trans, int64_t rows, int64_t cols) {
    using dt = dnnl::memory::data_type;
    return trans ? dnnl::memory::desc({rows, cols}, dt::bf16, {1, rows})
                 : dnnl::memory::desc({rows, cols}, dt::bf16, {cols, 1});
}

std::shared_ptr<const problem> make_problem(const problem_key& k) {
    const auto [ta, tb, M, N, K, ldc, alpha, beta] = k;
    auto p = std::make_shared<problem>();
    p->src = operand_desc(ta, M, K);
    p->weights = operand_desc(tb, K, N);
    p->dst = dnnl::memory::desc({M, N}, dnnl::memory::data_type::f32, {ldc, 1});
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // each thread passes its own (nested calls are safe)
    if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
    if (beta != 0.0f) {
        dnnl::post_ops po;
        po.append_sum(beta);
        attr.set_post_ops(po);
    }
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(p->src, p->weights, p->dst), attr, engine());
    p->scratchpad = pd.scratchpad_desc();
    p->prim = dnnl::matmul(pd);
    return p;
}

// The primitive of a problem, created on first use (~0.2 ms) and kept; the MoE's per-expert row counts vary from
// step to step, so the cache is emptied when it reaches `capacity` problems.
std::shared_ptr<const problem> problem_for(const problem_key& k) {
    constexpr size_t capacity = 4096;
    static std::mutex mutex;
    static std::map<problem_key, std::shared_ptr<const problem>> cache;
    {
        std::lock_guard<std::mutex> lock(mutex);
        const auto it = cache.find(k);
        if (it != cache.end()) return it->second;
    }
    std::shared_ptr<const problem> p;
    try {
        p = make_problem(k);
    } catch (const dnnl::error& e) {
        throw error(fmt::format("oneDNN bf16 matmul for M={} N={} K={}: {}", std::get<2>(k), std::get<3>(k),
                                std::get<4>(k), e.what()));
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (cache.size() >= capacity) cache.clear();
    cache.emplace(k, p);
    return p;
}

// A thread's operand or scratchpad buffer: grown on demand, 64-byte aligned (a vector's storage is 16-byte aligned
// at best, and a 64-byte load from an unaligned operand touches two cache lines).
class aligned_buffer {
   public:
    ~aligned_buffer() { std::free(data_); }
    template <typename T>
    T* get(size_t n) {
        const size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
        if (bytes > bytes_) {
            std::free(data_);
            data_ = std::aligned_alloc(64, bytes);
            if (!data_) throw std::bad_alloc();
            bytes_ = bytes;
        }
        return static_cast<T*>(data_);
    }

   private:
    void* data_ = nullptr;
    size_t bytes_ = 0;
};

}  // namespace

void convert_to_bf16(uint16_t* dst, const float* src, int64_t rows, int64_t cols, int64_t ld) {
    static const bool vector = __builtin_cpu_supports("avx512bf16");  // (the hardware, not cpu_has_bf16's override)
    const bool threads = !omp_in_parallel() && rows * cols >= (1 << 16);
#pragma omp parallel for schedule(static) if (threads)
    for (int64_t r = 0; r < rows; r++) {
        if (vector)
            row_to_bf16_avx512(dst + r * cols, src + r * ld, cols);
        else
            row_to_bf16_scalar(dst + r * cols, src + r * ld, cols);
    }
}

void gemm_bf16(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
               const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
    static thread_local aligned_buffer a_buf, b_buf, scratch_buf;
    // the operands as stored, packed: A [M,K] or [K,M], B [K,N] or [N,K]
    uint16_t* a = a_buf.get<uint16_t>((size_t)(M * K));
    uint16_t* b = b_buf.get<uint16_t>((size_t)(K * N));
    if (trans_a)
        convert_to_bf16(a, A, K, M, lda);
    else
        convert_to_bf16(a, A, M, K, lda);
    if (trans_b)
        convert_to_bf16(b, B, N, K, ldb);
    else
        convert_to_bf16(b, B, K, N, ldb);

    const auto p = problem_for(problem_key{trans_a, trans_b, M, N, K, ldc, alpha, beta});
    static thread_local dnnl::stream stream(engine());
    uint8_t* scratch = scratch_buf.get<uint8_t>(std::max<size_t>(1, p->scratchpad.get_size()));
    dnnl::memory src(p->src, engine(), a), weights(p->weights, engine(), b), dst(p->dst, engine(), C);
    dnnl::memory pad(p->scratchpad, engine(), scratch);
    p->prim.execute(
        stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, pad}});
    stream.wait();
}

}  // namespace trex::cpu
