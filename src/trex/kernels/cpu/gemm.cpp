#include "trex/kernels/cpu/gemm.hpp"

#include <immintrin.h>

#include <oneapi/dnnl/dnnl.h>

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <vector>

#include "trex/base/error.hpp"
#include "trex/base/scratch.hpp"
#include "trex/kernels/cpu/gemm_bf16.hpp"
#include "trex/kernels/precision.hpp"

namespace trex::cpu {

namespace {

std::atomic<bool> g_counting{false};
std::atomic<const char*> g_section{nullptr};
std::mutex g_stats_mutex;
gemm_stats g_stats;

}  // namespace

void gemm_stats_begin() {
    std::lock_guard<std::mutex> lock(g_stats_mutex);
    g_stats = gemm_stats{};
    g_counting.store(true);
}

void gemm_stats_section(const char* name) {
    g_section.store(name, std::memory_order_relaxed);
}

gemm_stats gemm_stats_end() {
    g_counting.store(false);
    std::lock_guard<std::mutex> lock(g_stats_mutex);
    return g_stats;
}

namespace {

// The product in the current matmul precision: oneDNN sgemm, or the bf16 matmul (gemm_bf16.hpp).
void sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
           const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
    if (current_matmul_precision() == matmul_precision::bf16)
        return gemm_bf16(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    dnnl_status_t st =
        dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    TREX_CHECK(st == dnnl_success, "oneDNN sgemm failed (status {}) for M={} N={} K={}", (int)st, M, N, K);
}

}  // namespace

void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
    if (M == 0 || N == 0) return;
    if (K == 0) {
        // C = beta·C (oneDNN rejects K == 0)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
        return;
    }
    if (!g_counting.load(std::memory_order_relaxed)) {
        sgemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    const bool nested = omp_in_parallel();
    const auto t0 = std::chrono::steady_clock::now();
    sgemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double flops = 2.0 * (double)M * (double)N * (double)K;
    std::lock_guard<std::mutex> lock(g_stats_mutex);
    if (nested) {  // its time overlaps the other threads' work: counted, not timed
        g_stats.nested_calls++;
        g_stats.nested_flops += flops;
        return;
    }
    g_stats.calls++;
    g_stats.seconds += dt;
    g_stats.flops += flops;
    const char* section = g_section.load(std::memory_order_relaxed);
    g_stats.section_seconds[section ? section : ""] += dt;
}

namespace {

// Lower-triangle blocks of C = alpha·X·Xᵀ + beta·C (the diagonal leaf blocks are computed in full).
void syrk_lower(int64_t n, int64_t k, float alpha, const float* X, int64_t ldx, float beta, float* C, int64_t ldc) {
    constexpr int64_t leaf = 64;  // measured: 32 and 128 are slower at n = 256 and 512 (one thread)
    if (n <= leaf) {
        gemm(false, true, n, n, k, alpha, X, ldx, X, ldx, beta, C, ldc);
        return;
    }
    const int64_t n1 = std::min(n - 1, (n / 2 + 15) / 16 * 16);  // a multiple of 16 where possible
    syrk_lower(n1, k, alpha, X, ldx, beta, C, ldc);
    gemm(false, true, n - n1, n1, k, alpha, X + n1 * ldx, ldx, X, ldx, beta, C + n1 * ldc, ldc);  // C21 = X2·X1ᵀ
    syrk_lower(n - n1, k, alpha, X + n1 * ldx, ldx, beta, C + n1 * ldc + n1, ldc);
}

}  // namespace

void syrk(int64_t n, int64_t k, float alpha, const float* X, int64_t ldx, float beta, float* C, int64_t ldc) {
    if (n == 0) return;
    const scoped_matmul_precision fp32(matmul_precision::fp32);  // the optimizer's: always fp32
    syrk_lower(n, k, alpha, X, ldx, beta, C, ldc);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) C[i * ldc + j] = C[j * ldc + i];
}

void linear_fwd(float* y, const float* x, const float* W, int64_t N, int64_t in, int64_t out, bool accumulate) {
    gemm(false, true, N, out, in, 1.0f, x, in, W, in, accumulate ? 1.0f : 0.0f, y, out);
}

namespace {

#ifdef __AVX512F__
// (GCC 12 reports the intrinsic _mm512_reduce_add_ps's deliberately undefined upper half as uninitialised.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// y[t, o] (+)= x_t · W_o for RO rows of W and RT rows of x: RO·RT accumulators of 16 lanes over `in`, the tail
// masked. Each accumulator sees only its own x row and W row, in the same order whatever is grouped with it. The
// next RO rows of W are prefetched as these stream (measured on the 129K-row head at N = 8: 16.9 → 12.6 ms).
template <int RO, int RT>
void dots_avx512(float* y, const float* x, const float* W, int64_t in, int64_t out, int64_t o, int64_t t,
                 bool accumulate) {
    __m512 acc[RO][RT];
    for (int r = 0; r < RO; r++)
        for (int c = 0; c < RT; c++) acc[r][c] = _mm512_setzero_ps();
    const bool prefetch = o + 2 * RO <= out;
    auto step = [&](int64_t i, __mmask16 m) {
        __m512 w[RO];
        for (int r = 0; r < RO; r++) {
            w[r] = _mm512_maskz_loadu_ps(m, W + (o + r) * in + i);
            if (prefetch) _mm_prefetch((const char*)(W + (o + RO + r) * in + i), _MM_HINT_T0);
        }
        for (int c = 0; c < RT; c++) {
            const __m512 xv = _mm512_maskz_loadu_ps(m, x + (t + c) * in + i);
            for (int r = 0; r < RO; r++) acc[r][c] = _mm512_fmadd_ps(w[r], xv, acc[r][c]);
        }
    };
    int64_t i = 0;
    for (; i + 16 <= in; i += 16) step(i, (__mmask16)0xFFFF);
    if (i < in) step(i, (__mmask16)((1u << (in - i)) - 1));
    for (int r = 0; r < RO; r++)
        for (int c = 0; c < RT; c++) {
            float& dst = y[(t + c) * out + o + r];
            const float v = _mm512_reduce_add_ps(acc[r][c]);
            dst = accumulate ? dst + v : v;
        }
}

// RO W rows against every x row, 4 at a time
template <int RO>
void rows_avx512(float* y, const float* x, const float* W, int64_t N, int64_t in, int64_t out, int64_t o,
                 bool accumulate) {
    int64_t t = 0;
    for (; t + 4 <= N; t += 4) dots_avx512<RO, 4>(y, x, W, in, out, o, t, accumulate);
    switch (N - t) {
        case 3:
            dots_avx512<RO, 3>(y, x, W, in, out, o, t, accumulate);
            break;
        case 2:
            dots_avx512<RO, 2>(y, x, W, in, out, o, t, accumulate);
            break;
        case 1:
            dots_avx512<RO, 1>(y, x, W, in, out, o, t, accumulate);
            break;
        default:
            break;
    }
}
#endif

// W rows [o0, o1) against the N rows of x, each dot product on its own
void decode_rows_block(float* y, const float* x, const float* W, int64_t N, int64_t in, int64_t out, int64_t o0,
                       int64_t o1, bool accumulate) {
#ifdef __AVX512F__
    int64_t o = o0;
    for (; o + 4 <= o1; o += 4) rows_avx512<4>(y, x, W, N, in, out, o, accumulate);
    for (; o < o1; o++) rows_avx512<1>(y, x, W, N, in, out, o, accumulate);
#else
    for (int64_t o = o0; o < o1; o++)
        for (int64_t t = 0; t < N; t++) {
            const float* w = W + o * in;
            const float* xt = x + t * in;
            float acc = 0.0f;
#pragma omp simd reduction(+ : acc)
            for (int64_t i = 0; i < in; i++) acc += xt[i] * w[i];
            y[t * out + o] = accumulate ? y[t * out + o] + acc : acc;
        }
#endif
}

#ifdef __AVX512F__
// Tokens as lanes. xT [in, 16·NV] holds ≤ 16·NV rows of x transposed (lanes past n zero); acc[m][v] lane l is
// y[16v + l, o + m], one FMA chain over k = 0..in−1 (so a row's result does not depend on its lane or its company).
template <int RM, int NV>
void lanes_tile(float* y, const float* xT, const float* W, int64_t n, int64_t in, int64_t out, int64_t o,
                bool accumulate) {
    __m512 acc[RM][NV];
    for (int m = 0; m < RM; m++)
        for (int v = 0; v < NV; v++) acc[m][v] = _mm512_setzero_ps();
    const float* w = W + o * in;
    // the next RM rows of W are prefetched a cache line at a time as these stream (the vocabulary head at 32 rows:
    // 27 -> 24 ms per call, two threads)
    const bool prefetch = o + 2 * RM <= out;
    for (int64_t k = 0; k < in; k++) {
        if (prefetch && (k & 15) == 0)
            for (int m = 0; m < RM; m++) _mm_prefetch((const char*)(w + (RM + m) * in + k), _MM_HINT_T0);
        __m512 xv[NV];
        for (int v = 0; v < NV; v++) xv[v] = _mm512_loadu_ps(xT + k * 16 * NV + 16 * v);
        for (int m = 0; m < RM; m++) {
            const __m512 b = _mm512_set1_ps(w[m * in + k]);
            for (int v = 0; v < NV; v++) acc[m][v] = _mm512_fmadd_ps(b, xv[v], acc[m][v]);
        }
    }
    alignas(64) float lanes[16];
    for (int m = 0; m < RM; m++)
        for (int v = 0; v < NV; v++) {
            _mm512_store_ps(lanes, acc[m][v]);
            for (int64_t l = 0; l < 16 && 16 * v + l < n; l++) {
                float& dst = y[(16 * v + l) * out + o + m];
                dst = accumulate ? dst + lanes[l] : lanes[l];
            }
        }
}

// W rows [o0, o1) against the n ≤ 16·NV rows packed in xT: RM rows of W at a time (16 accumulators), the tail one
// row at a time
template <int NV>
void lanes_block(float* y, const float* xT, const float* W, int64_t n, int64_t in, int64_t out, int64_t o0, int64_t o1,
                 bool accumulate) {
    constexpr int RM = NV == 1 ? 16 : 8;
    int64_t o = o0;
    for (; o + RM <= o1; o += RM) lanes_tile<RM, NV>(y, xT, W, n, in, out, o, accumulate);
    for (; o < o1; o++) lanes_tile<1, NV>(y, xT, W, n, in, out, o, accumulate);
}

// xT [in, 16·NV] = the n ≤ 16·NV rows of x [n, in] transposed, lanes past n zero (a thread-local buffer)
template <int NV>
const float* pack_lanes(const float* x, int64_t n, int64_t in) {
    static thread_local std::vector<float> xT_buf;
    float* xT = grow(xT_buf, (size_t)(in * 16 * NV));
    std::fill(xT, xT + in * 16 * NV, 0.0f);
    for (int64_t t = 0; t < n; t++)
        for (int64_t k = 0; k < in; k++) xT[k * 16 * NV + t] = x[t * in + k];
    return xT;
}

// y[n, out] (+)= x[n, in]·Wᵀ for n ≤ 16·NV rows: x packed transposed once, then blocks of W rows per thread.
template <int NV>
void lanes_rows(float* y, const float* x, const float* W, int64_t n, int64_t in, int64_t out, bool accumulate) {
    const float* xT = pack_lanes<NV>(x, n, in);
    constexpr int64_t block = 64;  // W rows per task (a multiple of both RMs)
#pragma omp parallel for schedule(static)
    for (int64_t o0 = 0; o0 < out; o0 += block)
        lanes_block<NV>(y, xT, W, n, in, out, o0, std::min(out, o0 + block), accumulate);
}
#endif

}  // namespace

void linear_fwd_decode(float* y, const float* x, const float* W, int64_t N, int64_t in, int64_t out, bool accumulate) {
    if (N > decode_rows) {
        linear_fwd(y, x, W, N, in, out, accumulate);
        return;
    }
    if (N <= decode_dot_rows) {  // blocks of W rows per thread, each W row read once and dotted with the N rows of x
        constexpr int64_t block = 64;  // W rows per task
#pragma omp parallel for schedule(static)
        for (int64_t o0 = 0; o0 < out; o0 += block)
            decode_rows_block(y, x, W, N, in, out, o0, std::min(out, o0 + block), accumulate);
        return;
    }
#ifdef __AVX512F__
    for (int64_t t = 0; t < N; t += 32) {  // 32 rows per pass over W (2 registers of lanes), the rest in one
        const int64_t n = std::min<int64_t>(32, N - t);
        if (n > 16)
            lanes_rows<2>(y + t * out, x + t * in, W, n, in, out, accumulate);
        else
            lanes_rows<1>(y + t * out, x + t * in, W, n, in, out, accumulate);
    }
#endif
}

void linear_bwd_data(float* dx, const float* dy, const float* W, int64_t N, int64_t in, int64_t out, bool accumulate) {
    gemm(false, false, N, in, out, 1.0f, dy, out, W, in, accumulate ? 1.0f : 0.0f, dx, in);
}

void linear_bwd_weight(float* dW, const float* dy, const float* x, int64_t N, int64_t in, int64_t out) {
    if (out < 4 * in || out * in < (1 << 20)) {
        gemm(true, false, out, in, N, 1.0f, dy, out, x, in, 1.0f, dW, in);
        return;
    }
    // Wide outputs (the LM head: out = V ≫ in = d): oneDNN's Aᵀ·B runs at half speed when the transposed operand
    // is the wide one, so compute dWᵀ [in, out] = xᵀ·dy (the fast orientation) and add its transpose (measured
    // 63 -> 120 GFLOP/s for [4096 x 256] over 2048 tokens).
    static thread_local std::vector<float> t_buf;
    float* T = grow(t_buf, (size_t)in * out);
    gemm(true, false, in, out, N, 1.0f, x, in, dy, out, 0.0f, T, out);
    add_transposed(dW, T, out, in);
}

void add_transposed(float* dst, const float* src, int64_t rows, int64_t cols) {
    constexpr int64_t blk = 32;
#pragma omp parallel for schedule(static)
    for (int64_t r0 = 0; r0 < rows; r0 += blk)
        for (int64_t c0 = 0; c0 < cols; c0 += blk)
            for (int64_t r = r0; r < std::min(rows, r0 + blk); r++)
                for (int64_t c = c0; c < std::min(cols, c0 + blk); c++) dst[r * cols + c] += src[c * rows + r];
}

}  // namespace trex::cpu
