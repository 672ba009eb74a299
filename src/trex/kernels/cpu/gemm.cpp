#include "trex/kernels/cpu/gemm.hpp"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>

#include "trex/base/error.hpp"

namespace trex::cpu {

void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
    if (M == 0 || N == 0) return;
    if (K == 0) {
        // C = beta·C (oneDNN rejects K == 0)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
        return;
    }
    // oneDNN partitions a multi-threaded sgemm (the K dimension included) by the number of threads, so its result
    // changes with the thread count. To keep the engine's contract (results independent of the thread count), C is
    // cut into fixed tiles that do not depend on the thread count, and each tile is one sgemm over the whole K called
    // inside the OpenMP loop, where oneDNN runs single-threaded.
    constexpr int64_t tile_m = 64, tile_n = 64;
    const int64_t tm = (M + tile_m - 1) / tile_m, tn = (N + tile_n - 1) / tile_n;
    int failed = (int)dnnl_success;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t tile = 0; tile < tm * tn; tile++) {
        const int64_t i0 = (tile / tn) * tile_m, j0 = (tile % tn) * tile_n;
        const int64_t mb = std::min(tile_m, M - i0), nb = std::min(tile_n, N - j0);
        const float* At = trans_a ? A + i0 : A + i0 * lda;  // rows i0.. of op(A)
        const float* Bt = trans_b ? B + j0 * ldb : B + j0;  // columns j0.. of op(B)
        const dnnl_status_t st = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', mb, nb, K, alpha, At, lda, Bt,
                                            ldb, beta, C + i0 * ldc + j0, ldc);
        if (st != dnnl_success) {
#pragma omp atomic write
            failed = (int)st;
        }
    }
    TREX_CHECK(failed == (int)dnnl_success, "oneDNN sgemm failed (status {}) for M={} N={} K={}", failed, M, N, K);
}

void linear_fwd(float* y, const float* x, const float* W, int64_t N, int64_t in, int64_t out, bool accumulate) {
    gemm(false, true, N, out, in, 1.0f, x, in, W, in, accumulate ? 1.0f : 0.0f, y, out);
}

void linear_bwd_data(float* dx, const float* dy, const float* W, int64_t N, int64_t in, int64_t out,
                     bool accumulate) {
    gemm(false, false, N, in, out, 1.0f, dy, out, W, in, accumulate ? 1.0f : 0.0f, dx, in);
}

void linear_bwd_weight(float* dW, const float* dy, const float* x, int64_t N, int64_t in, int64_t out) {
    gemm(true, false, out, in, N, 1.0f, dy, out, x, in, 1.0f, dW, in);
}

}  // namespace trex::cpu
