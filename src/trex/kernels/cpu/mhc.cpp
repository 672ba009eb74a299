// Manifold-constrained hyper-connections (docs/model.md §3.3): hc_pre (collapse + Sinkhorn), hc_post (expand +
// residual mix), hc_head (final collapse). The [N, n·d] × [n·d, rows] projections run as GEMMs; the per-token
// 4×4 work (sigmoids, Sinkhorn and its backward) runs in a token-parallel loop. Per-token parameter gradients
// (base, scale) are reduced over tokens in ascending order.
#include <algorithm>
#include <cmath>
#include <vector>

#include "trex/base/error.hpp"
#include "trex/kernels/cpu/gemm.hpp"
#include "trex/kernels/cpu/ops.hpp"
#include "trex/kernels/cpu/vec_math.hpp"

namespace trex::cpu {

namespace {

constexpr int max_streams = 8;
constexpr int max_sinkhorn_steps = 2 * 64;

inline float sigmoidf(float z) {
    return 1.0f / (1.0f + std::exp(-z));
}

// rho[t] = (mean over n·d of X² + eps)^-1/2
void stream_rms(float* rho, const float* X, int64_t N, int64_t nd, double eps) {
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++) {
        const float* x = X + t * nd;
        const float ss = dot_f(x, x, nd);
        rho[t] = 1.0f / std::sqrt(ss / (float)nd + (float)eps);
    }
}

// mix [N, rows] = rho ⊙ (X [N, n·d] · fnᵀ). Called from inside a parallel region (hc_pre_forward's token blocks),
// its loops and the GEMM run on the calling thread.
void project_streams(float* mix, float* rho, const float* X, const float* fn, int64_t N, int rows, int64_t nd,
                     double eps) {
    stream_rms(rho, X, N, nd, eps);
    gemm(false, true, N, rows, nd, 1.0f, X, nd, fn, nd, 0.0f, mix, rows);
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++)
        for (int r = 0; r < rows; r++) mix[t * rows + r] *= rho[t];
}

// Sinkhorn on a block of `lanes` tokens at once: matrices are stored entry-major, P[q·lanes + l] = entry q of token
// l's n×n matrix, so every loop below runs over the lanes innermost and vectorises (the 4×4 problem per token is
// too small for SIMD on its own). P0 = softmax_row(R); M[0] = P0 + eps; step s normalises columns when s is even,
// rows when s is odd; steps = 2·iters − 1. The trace (when not null) keeps P0 and every step's input for the
// backward: trace[0] = P0, trace[1 + s] = input of step s.
constexpr int lanes = 8;

inline float* trace_at(float* trace, int i, int n) {
    return trace + (int64_t)i * n * n * lanes;
}

// NS > 0: n is the compile-time NS, so every loop over the n×n entries unrolls (4 streams, 2,048 tokens, 20
// iterations: forward 0.55 -> 0.23 ms, forward with trace + backward ~1.4 -> 0.75 ms);
// NS = 0: n at run time.
template <int NS>
void sinkhorn_block(float* comb, float* trace, const float* R, int n_rt, int iters, float eps) {
    const int n = NS > 0 ? NS : n_rt;
    float P[max_streams * max_streams * lanes];
    for (int j = 0; j < n; j++) {
        float mx[lanes], sum[lanes];
#pragma omp simd
        for (int l = 0; l < lanes; l++) mx[l] = R[(j * n) * lanes + l];
        for (int k = 1; k < n; k++)
#pragma omp simd
            for (int l = 0; l < lanes; l++) {
                const float v = R[(j * n + k) * lanes + l];
                mx[l] = v > mx[l] ? v : mx[l];
            }
#pragma omp simd
        for (int l = 0; l < lanes; l++) sum[l] = 0.0f;
        for (int k = 0; k < n; k++)
#pragma omp simd
            for (int l = 0; l < lanes; l++) {
                const float e = exp_fast(R[(j * n + k) * lanes + l] - mx[l]);
                P[(j * n + k) * lanes + l] = e;
                sum[l] += e;
            }
        for (int k = 0; k < n; k++)
#pragma omp simd
            for (int l = 0; l < lanes; l++) P[(j * n + k) * lanes + l] /= sum[l];
    }
    const int nn = n * n;
    if (trace) std::copy(P, P + nn * lanes, trace_at(trace, 0, n));
#pragma omp simd
    for (int q = 0; q < nn * lanes; q++) P[q] += eps;
    const int steps = 2 * iters - 1;
    for (int s = 0; s < steps; s++) {
        if (trace) std::copy(P, P + nn * lanes, trace_at(trace, 1 + s, n));
        for (int a = 0; a < n; a++) {
            // s even: column a (entries j·n + a); s odd: row a (entries a·n + k)
            float sum[lanes], inv[lanes];
#pragma omp simd
            for (int l = 0; l < lanes; l++) sum[l] = 0.0f;
            for (int b = 0; b < n; b++) {
                const int q = s % 2 == 0 ? b * n + a : a * n + b;
#pragma omp simd
                for (int l = 0; l < lanes; l++) sum[l] += P[q * lanes + l];
            }
#pragma omp simd
            for (int l = 0; l < lanes; l++) inv[l] = 1.0f / (sum[l] + eps);
            for (int b = 0; b < n; b++) {
                const int q = s % 2 == 0 ? b * n + a : a * n + b;
#pragma omp simd
                for (int l = 0; l < lanes; l++) P[q * lanes + l] *= inv[l];
            }
        }
    }
    std::copy(P, P + nn * lanes, comb);
}

// dR [nn·lanes] from dcomb [nn·lanes], walking the traced steps backwards:
// Y = P/(σ+eps) over a row or column with σ = ΣP gives dP = dY/(σ+eps) − (Σ dY·P)/(σ+eps)².
template <int NS>
void sinkhorn_block_back(float* dR, const float* dcomb, const float* trace, int n_rt, int iters, float eps) {
    const int n = NS > 0 ? NS : n_rt;
    const int nn = n * n, steps = 2 * iters - 1;
    float dY[max_streams * max_streams * lanes];
    std::copy(dcomb, dcomb + nn * lanes, dY);
    for (int s = steps - 1; s >= 0; s--) {
        const float* M = trace + (int64_t)(1 + s) * nn * lanes;
        for (int a = 0; a < n; a++) {
            float sum[lanes], dot[lanes];
#pragma omp simd
            for (int l = 0; l < lanes; l++) sum[l] = dot[l] = 0.0f;
            for (int b = 0; b < n; b++) {
                const int q = s % 2 == 0 ? b * n + a : a * n + b;
#pragma omp simd
                for (int l = 0; l < lanes; l++) {
                    sum[l] += M[q * lanes + l];
                    dot[l] += dY[q * lanes + l] * M[q * lanes + l];
                }
            }
            float inv[lanes], corr[lanes];  // one division per row or column
#pragma omp simd
            for (int l = 0; l < lanes; l++) {
                inv[l] = 1.0f / (sum[l] + eps);
                corr[l] = dot[l] * inv[l] * inv[l];
            }
            for (int b = 0; b < n; b++) {
                const int q = s % 2 == 0 ? b * n + a : a * n + b;
#pragma omp simd
                for (int l = 0; l < lanes; l++) dY[q * lanes + l] = dY[q * lanes + l] * inv[l] - corr[l];
            }
        }
    }
    // P = softmax_row(R) + eps: dR = P0 ⊙ (dP − rowsum(dP ⊙ P0))
    const float* P0 = trace;
    for (int j = 0; j < n; j++) {
        float dot[lanes];
#pragma omp simd
        for (int l = 0; l < lanes; l++) dot[l] = 0.0f;
        for (int k = 0; k < n; k++)
#pragma omp simd
            for (int l = 0; l < lanes; l++) dot[l] += dY[(j * n + k) * lanes + l] * P0[(j * n + k) * lanes + l];
        for (int k = 0; k < n; k++)
#pragma omp simd
            for (int l = 0; l < lanes; l++) {
                const int q = (j * n + k) * lanes + l;
                dR[q] = P0[q] * (dY[q] - dot[l]);
            }
    }
}

// Tokens per task of hc_pre's forward and backward: a block's rows of X ([32, n·d] = 128 KiB at n·d = 1,024) stay in
// cache from one pass to the next. A multiple of `lanes`, so the Sinkhorn blocks are those of a token-parallel loop.
constexpr int64_t token_block = 4 * lanes;

// dx_j [d] = Σ_k comb_jk·dX_out_k (hc_post's residual branch X_out_k = … + Σ_j comb_jk X_j); cj = comb row j [n]
inline void residual_backward(float* dxj, const float* cj, const float* dX_out, int n, int64_t d) {
#pragma omp simd
    for (int64_t i = 0; i < d; i++) dxj[i] = cj[0] * dX_out[i];
    for (int k = 1; k < n; k++) {
        const float c = cj[k];
        const float* gk = dX_out + k * d;
#pragma omp simd
        for (int64_t i = 0; i < d; i++) dxj[i] += c * gk[i];
    }
}

// The Sinkhorn of a block of tokens, forward (trace may be null) and backward: unrolled for the 4 streams of every
// released config, generic otherwise.
void sinkhorn(float* comb, float* trace, const float* R, int n, int iters, float eps) {
    if (n == 4)
        sinkhorn_block<4>(comb, trace, R, n, iters, eps);
    else
        sinkhorn_block<0>(comb, trace, R, n, iters, eps);
}
void sinkhorn_back(float* dR, const float* dcomb, const float* trace, int n, int iters, float eps) {
    if (n == 4)
        sinkhorn_block_back<4>(dR, dcomb, trace, n, iters, eps);
    else
        sinkhorn_block_back<0>(dR, dcomb, trace, n, iters, eps);
}

// y [d] = Σ_j pre_j X_j
inline void collapse(float* y, const float* X, const float* pre, int n, int64_t d) {
#pragma omp simd
    for (int64_t i = 0; i < d; i++) y[i] = pre[0] * X[i];
    for (int j = 1; j < n; j++) {
        const float* xj = X + j * d;
        const float pj = pre[j];
#pragma omp simd
        for (int64_t i = 0; i < d; i++) y[i] += pj * xj[i];
    }
}

// out[j] = a · X_j for the n streams of X [n, d]
inline void stream_dots(float* out, const float* a, const float* X, int n, int64_t d) {
    const float* rows[max_streams];
    for (int j = 0; j < n; j++) rows[j] = X + j * d;
    dots(out, a, rows, n, d);
}

// Sums per-token rows grad_t [N, cols] into out [cols] (+=), tokens ascending per column.
void reduce_rows(float* out, const float* per_token, int64_t N, int cols) {
    for (int c = 0; c < cols; c++) {
        double acc = 0.0;
        for (int64_t t = 0; t < N; t++) acc += per_token[t * cols + c];
        out[c] += (float)acc;
    }
}

}  // namespace

void hc_pre_forward(float* y, float* post, float* comb, float* mix, float* rho, const float* X, const float* fn,
                    const float* base, const float* scale, int64_t N, mhc_dims dims) {
    const int n = dims.n, rows = dims.rows();
    const int64_t d = dims.d, nd = n * d;
    TREX_ASSERT(n <= max_streams && 2 * dims.iters <= max_sinkhorn_steps);
    const float eps = (float)dims.hc_eps;
    const int nn = n * n;
    // one block of tokens per task: its rows of X stay in cache from the RMS to the projection to the collapse
#pragma omp parallel for schedule(static)
    for (int64_t b0 = 0; b0 < N; b0 += token_block) {
        const int64_t nt = std::min(token_block, N - b0);
        project_streams(mix + b0 * rows, rho + b0, X + b0 * nd, fn, nt, rows, nd, dims.norm_eps);
        for (int64_t t0 = b0; t0 < b0 + nt; t0 += lanes) {
            const int nl = (int)std::min<int64_t>(lanes, b0 + nt - t0);
            float R[max_streams * max_streams * lanes], P[max_streams * max_streams * lanes];
            for (int l = 0; l < lanes; l++)
                for (int q = 0; q < nn; q++)
                    R[q * lanes + l] = l < nl ? mix[(t0 + l) * rows + 2 * n + q] * scale[2] + base[2 * n + q] : 0.0f;
            sinkhorn(P, nullptr, R, n, dims.iters, eps);
            for (int l = 0; l < nl; l++) {
                const int64_t t = t0 + l;
                const float* m = mix + t * rows;
                float pre[max_streams];
                for (int j = 0; j < n; j++) {
                    pre[j] = sigmoidf(m[j] * scale[0] + base[j]) + eps;
                    post[t * n + j] = 2.0f * sigmoidf(m[n + j] * scale[1] + base[n + j]);
                }
                for (int q = 0; q < nn; q++) comb[t * nn + q] = P[q * lanes + l];
                collapse(y + t * d, X + t * nd, pre, n, d);
            }
        }
    }
}

void hc_pre_backward(float* dX, float* dfn, float* dbase, float* dscale, const float* dy, const float* dpost,
                     const float* dcomb, const float* X, const float* fn, const float* base, const float* scale,
                     const float* mix, const float* rho, int64_t N, mhc_dims dims, const float* dX_out) {
    const int n = dims.n, rows = dims.rows();
    const int64_t d = dims.d, nd = n * d;
    TREX_ASSERT(n <= max_streams && 2 * dims.iters <= max_sinkhorn_steps);
    const float eps = (float)dims.hc_eps;
    const int nn = n * n;
    std::vector<float> dz((size_t)N * rows);  // gradient w.r.t. the pre-activation z = mix·scale + base
    std::vector<float> dsc((size_t)N * 3);    // per-token scale gradients
    std::vector<float> G((size_t)N * rows);   // ρ·dmix, the GEMM operand
    // One block of tokens per task, so that its rows of X, dX and dX_out stay in cache through the passes below.
#pragma omp parallel
    {
        std::vector<float> trace((size_t)(2 * dims.iters) * nn * lanes);
        float cb[token_block * max_streams * max_streams];  // the block's comb (when dX_out is given)
#pragma omp for schedule(static)
        for (int64_t b0 = 0; b0 < N; b0 += token_block) {
            const int64_t nt = std::min(token_block, N - b0);
            // Sinkhorn backward, `lanes` tokens at a time: dz[t, 2n + q] = dR (and comb recomputed, bitwise as in
            // the forward)
            for (int64_t t0 = b0; t0 < b0 + nt; t0 += lanes) {
                const int nl = (int)std::min<int64_t>(lanes, b0 + nt - t0);
                float R[max_streams * max_streams * lanes], P[max_streams * max_streams * lanes];
                float dC[max_streams * max_streams * lanes], dR[max_streams * max_streams * lanes];
                for (int l = 0; l < lanes; l++)
                    for (int q = 0; q < nn; q++) {
                        R[q * lanes + l] =
                            l < nl ? mix[(t0 + l) * rows + 2 * n + q] * scale[2] + base[2 * n + q] : 0.0f;
                        dC[q * lanes + l] = l < nl ? dcomb[(t0 + l) * nn + q] : 0.0f;
                    }
                sinkhorn(P, trace.data(), R, n, dims.iters, eps);
                sinkhorn_back(dR, dC, trace.data(), n, dims.iters, eps);
                for (int l = 0; l < nl; l++)
                    for (int q = 0; q < nn; q++) {
                        dz[(t0 + l) * rows + 2 * n + q] = dR[q * lanes + l];
                        cb[(t0 + l - b0) * nn + q] = P[q * lanes + l];
                    }
            }
            for (int64_t t = b0; t < b0 + nt; t++) {
                const float* m = mix + t * rows;
                const float* x = X + t * nd;
                float* dzt = dz.data() + t * rows;
                float dpre[max_streams];
                stream_dots(dpre, dy + t * d, x, n, d);
                for (int j = 0; j < n; j++) {
                    float sp = sigmoidf(m[j] * scale[0] + base[j]);
                    dzt[j] = dpre[j] * sp * (1.0f - sp);
                    float so = sigmoidf(m[n + j] * scale[1] + base[n + j]);
                    dzt[n + j] = 2.0f * dpost[t * n + j] * so * (1.0f - so);
                }
                float s0 = 0, s1 = 0, s2 = 0, dm_dot_m = 0;
                float* g = G.data() + t * rows;
                for (int r = 0; r < rows; r++) {
                    const int part = r < n ? 0 : (r < 2 * n ? 1 : 2);
                    const float dmix = dzt[r] * scale[part];
                    (part == 0 ? s0 : part == 1 ? s1 : s2) += dzt[r] * m[r];
                    dm_dot_m += dmix * m[r];
                    g[r] = rho[t] * dmix;
                }
                dsc[t * 3 + 0] = s0;
                dsc[t * 3 + 1] = s1;
                dsc[t * 3 + 2] = s2;
                const float ct = -dm_dot_m * rho[t] * rho[t] / (float)nd;  // the RMS's share
                // dX_j (= Σ_k comb_jk·dX_out_k, hc_post's residual branch, when dX_out is given) += pre_j·dy + ct·X_j
                // (the fn term is added by the GEMM below)
                float* dxt = dX + t * nd;
                const float* dyt = dy + t * d;
                for (int j = 0; j < n; j++) {
                    const float pre = sigmoidf(m[j] * scale[0] + base[j]) + eps;
                    const float* xj = x + j * d;
                    float* dxj = dxt + j * d;
                    if (dX_out) residual_backward(dxj, cb + (t - b0) * nn + j * n, dX_out + t * nd, n, d);
#pragma omp simd
                    for (int64_t i = 0; i < d; i++) dxj[i] += pre * dyt[i] + ct * xj[i];
                }
            }
            // dX += G·fn for the block (one thread)
            gemm(false, false, nt, nd, rows, 1.0f, G.data() + b0 * rows, rows, fn, nd, 1.0f, dX + b0 * nd, nd);
        }
    }
    gemm(true, false, rows, nd, N, 1.0f, G.data(), rows, X, nd, 1.0f, dfn, nd);  // dfn += Gᵀ·X
    reduce_rows(dbase, dz.data(), N, rows);
    reduce_rows(dscale, dsc.data(), N, 3);
}

void hc_post_forward(float* X_out, const float* F, const float* X_in, const float* post, const float* comb, int64_t N,
                     mhc_dims dims) {
    const int n = dims.n;
    const int64_t d = dims.d, nd = n * d;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++) {
        const float* f = F + t * d;
        const float* xi = X_in + t * nd;
        const float* cb = comb + t * n * n;
        for (int k = 0; k < n; k++) {
            float* xo = X_out + t * nd + k * d;
            const float pk = post[t * n + k];
#pragma omp simd
            for (int64_t i = 0; i < d; i++) xo[i] = pk * f[i];
            for (int j = 0; j < n; j++) {
                const float c = cb[j * n + k];
                const float* xj = xi + j * d;
#pragma omp simd
                for (int64_t i = 0; i < d; i++) xo[i] += c * xj[i];
            }
        }
    }
}

void hc_post_backward(float* dF, float* dX_in, float* dpost, float* dcomb, const float* dX_out, const float* F,
                      const float* X_in, const float* post, const float* comb, int64_t N, mhc_dims dims) {
    const int n = dims.n;
    const int64_t d = dims.d, nd = n * d;
    TREX_ASSERT(n <= max_streams);
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++) {
        const float* f = F + t * d;
        const float* xi = X_in + t * nd;
        const float* go = dX_out + t * nd;
        const float* cb = comb + t * n * n;
        float* df = dF + t * d;
        // dpost_k = g_k · F, dcomb_jk = g_k · X_j: n + 1 dot products per stream k, with independent accumulators
        const float* rows[max_streams + 1];
        rows[0] = f;
        for (int j = 0; j < n; j++) rows[1 + j] = xi + j * d;
        for (int k = 0; k < n; k++) {
            float r[max_streams + 1];
            dots(r, go + k * d, rows, n + 1, d);
            dpost[t * n + k] = r[0];
            for (int j = 0; j < n; j++) dcomb[t * n * n + j * n + k] = r[1 + j];
        }
#pragma omp simd
        for (int64_t i = 0; i < d; i++) df[i] = post[t * n] * go[i];
        for (int k = 1; k < n; k++) {
            const float pk = post[t * n + k];
            const float* gk = go + k * d;
#pragma omp simd
            for (int64_t i = 0; i < d; i++) df[i] += pk * gk[i];
        }
        if (dX_in)
            for (int j = 0; j < n; j++) residual_backward(dX_in + t * nd + j * d, cb + j * n, go, n, d);
    }
}

void hc_head_forward(float* y, float* mix, float* rho, const float* X, const float* fn, const float* base,
                     const float* scale, int64_t N, mhc_dims dims) {
    const int n = dims.n;
    const int64_t d = dims.d, nd = n * d;
    TREX_ASSERT(n <= max_streams);
    project_streams(mix, rho, X, fn, N, n, nd, dims.norm_eps);
    const float eps = (float)dims.hc_eps;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++) {
        float pre[max_streams];
        for (int j = 0; j < n; j++) pre[j] = sigmoidf(mix[t * n + j] * scale[0] + base[j]) + eps;
        collapse(y + t * d, X + t * nd, pre, n, d);
    }
}

void hc_head_backward(float* dX, float* dfn, float* dbase, float* dscale, const float* dy, const float* X,
                      const float* fn, const float* base, const float* scale, const float* mix, const float* rho,
                      int64_t N, mhc_dims dims) {
    const int n = dims.n;
    const int64_t d = dims.d, nd = n * d;
    const float eps = (float)dims.hc_eps;
    std::vector<float> dz((size_t)N * n), dsc((size_t)N), G((size_t)N * n);
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++) {
        const float* m = mix + t * n;
        const float* x = X + t * nd;
        float s0 = 0.0f, dm_dot_m = 0.0f;
        float pre[max_streams], dpre[max_streams];
        stream_dots(dpre, dy + t * d, x, n, d);
        for (int j = 0; j < n; j++) {
            const float sp = sigmoidf(m[j] * scale[0] + base[j]);
            pre[j] = sp + eps;
            const float dzj = dpre[j] * sp * (1.0f - sp);
            dz[t * n + j] = dzj;
            s0 += dzj * m[j];
            const float dmix = dzj * scale[0];
            dm_dot_m += dmix * m[j];
            G[t * n + j] = rho[t] * dmix;
        }
        dsc[t] = s0;
        const float corr = -dm_dot_m * rho[t] * rho[t] / (float)nd;
        for (int j = 0; j < n; j++) {
            const float* dyt = dy + t * d;
            const float* xj = x + j * d;
            float* dxj = dX + t * nd + j * d;
#pragma omp simd
            for (int64_t i = 0; i < d; i++) dxj[i] = pre[j] * dyt[i] + corr * xj[i];
        }
    }
    gemm(false, false, N, nd, n, 1.0f, G.data(), n, fn, nd, 1.0f, dX, nd);
    gemm(true, false, n, nd, N, 1.0f, G.data(), n, X, nd, 1.0f, dfn, nd);
    reduce_rows(dbase, dz.data(), N, n);
    reduce_rows(dscale, dsc.data(), N, 1);
}

}  // namespace trex::cpu
