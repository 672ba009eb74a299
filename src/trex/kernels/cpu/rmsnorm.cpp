// RMSNorm (weighted and unweighted), fp32 with fp32 accumulation per row.
#include <algorithm>
#include <cmath>
#include <vector>

#include <omp.h>

#include "trex/kernels/cpu/ops.hpp"

namespace trex::cpu {

// y [N,D] = w ⊙ x·rstd ; rstd [N] = (mean(x²)+eps)^-1/2 ; w [D] or nullptr
void rmsnorm_forward(float* y, float* rstd, const float* x, const float* w, int64_t N, int64_t D, double eps) {
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < N; n++) {
        const float* xr = x + n * D;
        float* yr = y + n * D;
        float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
        for (int64_t j = 0; j < D; j++) ss += xr[j] * xr[j];
        float r = 1.0f / std::sqrt(ss / (float)D + (float)eps);
        rstd[n] = r;
        if (w) {
#pragma omp simd
            for (int64_t j = 0; j < D; j++) yr[j] = w[j] * (xr[j] * r);
        } else {
#pragma omp simd
            for (int64_t j = 0; j < D; j++) yr[j] = xr[j] * r;
        }
    }
}

// dx = rstd·(g − x̂·mean(g·x̂)) with g = w ⊙ dy, x̂ = x·rstd ; dw += Σ_n dy ⊙ x̂
void rmsnorm_backward(float* dx, float* dw, const float* dy, const float* x, const float* w, const float* rstd,
                      int64_t N, int64_t D) {
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < N; n++) {
        const float* xr = x + n * D;
        const float* gr = dy + n * D;
        float* dr = dx + n * D;
        const float r = rstd[n];
        float dot = 0.0f;
        if (w) {
#pragma omp simd reduction(+ : dot)
            for (int64_t j = 0; j < D; j++) dot += w[j] * gr[j] * xr[j];
        } else {
#pragma omp simd reduction(+ : dot)
            for (int64_t j = 0; j < D; j++) dot += gr[j] * xr[j];
        }
        const float coef = dot * r * r / (float)D;
        if (w) {
#pragma omp simd
            for (int64_t j = 0; j < D; j++) dr[j] = r * (w[j] * gr[j] - xr[j] * coef);
        } else {
#pragma omp simd
            for (int64_t j = 0; j < D; j++) dr[j] = r * (gr[j] - xr[j] * coef);
        }
    }
    if (!w || !dw) return;
    // dw: parallel over column blocks, tokens ascending inside each block (fixed order).
    const int64_t blk = 64;
    const int64_t nblk = (D + blk - 1) / blk;
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < nblk; b++) {
        const int64_t j0 = b * blk, j1 = std::min(D, j0 + blk);
        float acc[64] = {0};
        for (int64_t n = 0; n < N; n++) {
            const float* xr = x + n * D;
            const float* gr = dy + n * D;
            const float r = rstd[n];
#pragma omp simd
            for (int64_t j = j0; j < j1; j++) acc[j - j0] += gr[j] * (xr[j] * r);
        }
        for (int64_t j = j0; j < j1; j++) dw[j] += acc[j - j0];
    }
}

}  // namespace trex::cpu
