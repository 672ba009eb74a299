// DeepSeekMoE (docs/model.md §3.5): sqrt-softplus router with bias-for-selection or hash routing, clamped SwiGLU
// experts on permuted tokens (one GEMM per expert and projection), deterministic combine, sequence-wise balance loss.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "trex/base/error.hpp"
#include "trex/base/scratch.hpp"
#include "trex/kernels/cpu/gemm.hpp"
#include "trex/kernels/cpu/ops.hpp"
#include "trex/kernels/cpu/vec_math.hpp"

namespace trex::cpu {

namespace {

inline float softplusf(float u) {
    return std::max(u, 0.0f) + std::log1p(std::exp(-std::fabs(u)));
}
inline float sigmoidf(float u) {
    return 1.0f / (1.0f + std::exp(-u));
}

}  // namespace

// sel, weight [N,K]; s, logits [N,E]; bias [E] or nullptr; hash_sel [N,K] or nullptr
void router_forward(int32_t* sel, float* weight, float* s, const float* logits, const float* bias,
                    const int32_t* hash_sel, int64_t N, int E, int K, double route_scale) {
#pragma omp parallel
    {
        std::vector<int32_t> idx(E);
        std::vector<float> key(E);
#pragma omp for schedule(static)
        for (int64_t t = 0; t < N; t++) {
            float* st = s + t * E;
            for (int e = 0; e < E; e++) st[e] = std::sqrt(softplusf(logits[t * E + e]));
            int32_t* out = sel + t * K;
            if (hash_sel) {
                std::copy(hash_sel + t * K, hash_sel + (t + 1) * K, out);
            } else {
                for (int e = 0; e < E; e++) key[e] = st[e] + (bias ? bias[e] : 0.0f);
                std::iota(idx.begin(), idx.end(), 0);
                auto better = [&](int32_t a, int32_t b) { return key[a] > key[b] || (key[a] == key[b] && a < b); };
                std::partial_sort(idx.begin(), idx.begin() + K, idx.end(), better);
                std::copy(idx.begin(), idx.begin() + K, out);
            }
            float sum = 0.0f;
            for (int k = 0; k < K; k++) sum += st[out[k]];
            for (int k = 0; k < K; k++) weight[t * K + k] = (float)route_scale * st[out[k]] / sum;
        }
    }
}

// ds_sel_g = (rs/Σs)·(dw_g − Σ_f dw_f·w_f/rs); du = (ds_sel + ds_extra)·σ(u)/(2s)
void router_backward(float* dlogits, const float* dweight, const float* ds_extra, const float* logits, const float* s,
                     const int32_t* sel, const float* weight, int64_t N, int E, int K, double route_scale) {
    const float rs = (float)route_scale;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++) {
        const float* st = s + t * E;
        const int32_t* sl = sel + t * K;
        float* du = dlogits + t * E;
        for (int e = 0; e < E; e++) du[e] = ds_extra ? ds_extra[t * E + e] : 0.0f;
        float sum = 0.0f, dot = 0.0f;
        for (int k = 0; k < K; k++) {
            sum += st[sl[k]];
            dot += dweight[t * K + k] * weight[t * K + k] / rs;
        }
        for (int k = 0; k < K; k++) du[sl[k]] += (rs / sum) * (dweight[t * K + k] - dot);
        for (int e = 0; e < E; e++) {
            const float se = st[e];
            du[e] = se > 0.0f ? du[e] * sigmoidf(logits[t * E + e]) / (2.0f * se) : 0.0f;
        }
    }
}

// The clamp bound of swiglu: `limit` when positive, otherwise none (+inf, so that the loops below stay branch-free).
inline float swiglu_bound(double limit) {
    return limit > 0.0 ? (float)limit : std::numeric_limits<float>::infinity();
}

// h [n,I] = silu(min(a1,L)) ⊙ clamp(a3,−L,L) (· row_scale[r]) ; a13 [n,2I]
void swiglu_forward(float* h, const float* a13, int64_t n, int64_t I, double limit, const float* row_scale) {
    const float L = swiglu_bound(limit);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < n; r++) {
        const float* a1 = a13 + r * 2 * I;
        const float* a3 = a1 + I;
        float* hr = h + r * I;
        const float w = row_scale ? row_scale[r] : 1.0f;  // (× 1 is exact)
#pragma omp simd
        for (int64_t i = 0; i < I; i++) {
            const float a = min_v(a1[i], L), b = min_v(max_v(a3[i], -L), L);
            hr[i] = w * (a * sigmoid_fast(a) * b);
        }
    }
}

void swiglu_backward(float* da13, const float* dh, const float* a13, int64_t n, int64_t I, double limit) {
    const float L = swiglu_bound(limit);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < n; r++) {
        const float* a1 = a13 + r * 2 * I;
        const float* a3 = a1 + I;
        const float* g = dh + r * I;
        float* d1 = da13 + r * 2 * I;
        float* d3 = d1 + I;
#pragma omp simd
        for (int64_t i = 0; i < I; i++) {
            // the clamps block the gradient outside [−L, L] (a NaN passes: it reaches the gradient as it reached
            // the output); selects on values, no `||`, so that the loop vectorises on every x86-64 target
            const float u = a1[i], v = a3[i];
            const float a = min_v(u, L), b = min_v(max_v(v, -L), L);
            const float sg = sigmoid_fast(a);
            const float silu = a * sg;
            const float dsilu = sg * (1.0f + a * (1.0f - sg));
            const float g1 = g[i] * b * dsilu, g3 = g[i] * silu;
            d1[i] = u > L ? 0.0f : g1;
            d3[i] = v < -L ? 0.0f : (v > L ? 0.0f : g3);
        }
    }
}

namespace {

// Builds the expert-sorted permutation of the N·K routing slots (stable, ascending slot inside each expert).
void build_permutation(moe_state& st, const int32_t* sel, int64_t N, int E, int K) {
    const int64_t NK = N * K;
    TREX_CHECK((int64_t)st.expert_offset.size() == E + 1 && (int64_t)st.row_slot.size() == NK &&
                   (int64_t)st.slot_row.size() == NK,
               "moe routing: buffers sized for {} experts and {} slots, the layer has {} and {}",
               st.expert_offset.size() - 1, st.row_slot.size(), E, NK);
    std::fill(st.expert_offset.begin(), st.expert_offset.end(), 0);
    for (int64_t a = 0; a < NK; a++) st.expert_offset[sel[a] + 1]++;
    for (int e = 0; e < E; e++) st.expert_offset[e + 1] += st.expert_offset[e];
    std::vector<int64_t> fill(st.expert_offset.begin(), st.expert_offset.end() - 1);
    for (int64_t a = 0; a < NK; a++) {
        const int64_t r = fill[sel[a]]++;
        st.row_slot[r] = (int32_t)a;
        st.slot_row[a] = (int32_t)r;
    }
}

// rows [NK, d] gathered from x: row r holds x[token of slot row_slot[r]]
void gather_rows(float* rows, const float* x, const moe_state& st, int64_t d, int K) {
    const int64_t NK = (int64_t)st.row_slot.size();
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < NK; r++)
        std::memcpy(rows + r * d, x + (int64_t)(st.row_slot[r] / K) * d, d * sizeof(float));
}

// y[t] = Σ_k rows[slot_row[t·K+k]] (assigned, k ascending)
void combine_rows(float* y, const float* rows, const moe_state& st, int64_t N, int64_t d, int K) {
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++) {
        float* yt = y + t * d;
        const float* r0 = rows + (int64_t)st.slot_row[t * K] * d;
        std::memcpy(yt, r0, d * sizeof(float));
        for (int k = 1; k < K; k++) {
            const float* rk = rows + (int64_t)st.slot_row[t * K + k] * d;
#pragma omp simd
            for (int64_t i = 0; i < d; i++) yt[i] += rk[i];
        }
    }
}

}  // namespace

void moe_experts_forward(float* y, moe_state& st, const float* x, const int32_t* sel, const float* weight,
                         const float* const* w13, const float* const* w2, int64_t N, int64_t d, int E, int K, int64_t I,
                         double limit) {
    const int64_t NK = N * K;
    build_permutation(st, sel, N, E, K);
    static thread_local std::vector<float> xp_buf, hw_buf, yp_buf, wr_buf;
    float* xp = grow(xp_buf, (size_t)NK * d);
    float* hw = grow(hw_buf, (size_t)NK * I);
    float* yp = grow(yp_buf, (size_t)NK * d);
    float* wr = grow(wr_buf, (size_t)NK);
    TREX_CHECK((int64_t)st.a13.size() == NK * 2 * I, "moe routing: a13 holds {} floats, the experts need {}",
               st.a13.size(), NK * 2 * I);
    gather_rows(xp, x, st, d, K);
    for (int e = 0; e < E; e++) {
        const int64_t r0 = st.expert_offset[e], n = st.expert_offset[e + 1] - r0;
        if (n == 0) continue;
        linear_fwd(st.a13.data() + r0 * 2 * I, xp + r0 * d, w13[e], n, d, 2 * I);
    }
    for (int64_t r = 0; r < NK; r++) wr[r] = weight[st.row_slot[r]];
    swiglu_forward(hw, st.a13.data(), NK, I, limit, wr);  // w·h in one pass
    for (int e = 0; e < E; e++) {
        const int64_t r0 = st.expert_offset[e], n = st.expert_offset[e + 1] - r0;
        if (n == 0) continue;
        linear_fwd(yp + r0 * d, hw + r0 * I, w2[e], n, I, d);
    }
    combine_rows(y, yp, st, N, d, K);
}

void moe_experts_backward(float* dx, float* dweight, float* const* dw13, float* const* dw2, const float* dy,
                          const moe_state& st, const float* x, const float* weight, const float* const* w13,
                          const float* const* w2, int64_t N, int64_t d, int E, int K, int64_t I, double limit) {
    const int64_t NK = N * K;
    static thread_local std::vector<float> dyp_buf, hu_buf, dh_buf, da13_buf, xp_buf, dxp_buf;
    float* dyp = grow(dyp_buf, (size_t)NK * d);
    float* hu = grow(hu_buf, (size_t)NK * I);  // unweighted activations, recomputed
    swiglu_forward(hu, st.a13.data(), NK, I, limit);
    float* dh = grow(dh_buf, (size_t)NK * I);
    float* da13 = grow(da13_buf, (size_t)NK * 2 * I);
    float* xp = grow(xp_buf, (size_t)NK * d);
    float* dxp = grow(dxp_buf, (size_t)NK * d);
    gather_rows(dyp, dy, st, d, K);
    for (int e = 0; e < E; e++) {
        const int64_t r0 = st.expert_offset[e], n = st.expert_offset[e + 1] - r0;
        if (n == 0) continue;
        linear_bwd_data(dh + r0 * I, dyp + r0 * d, w2[e], n, I, d);  // d(w·h)
    }
    // dweight = dh·h ; then dh ← w·dh and dyp ← w·dyp (dW2 += (w·dy)ᵀ·h = dyᵀ·(w·h))
    moe_route_weight_backward(dh, dyp, dweight, hu, weight, st.row_slot.data(), NK, I, d);
    swiglu_backward(da13, dh, st.a13.data(), NK, I, limit);
    gather_rows(xp, x, st, d, K);
    for (int e = 0; e < E; e++) {
        const int64_t r0 = st.expert_offset[e], n = st.expert_offset[e + 1] - r0;
        if (n == 0) continue;
        linear_bwd_weight(dw2[e], dyp + r0 * d, hu + r0 * I, n, I, d);
        linear_bwd_weight(dw13[e], da13 + r0 * 2 * I, xp + r0 * d, n, d, 2 * I);
        linear_bwd_data(dxp + r0 * d, da13 + r0 * 2 * I, w13[e], n, d, 2 * I);
    }
    combine_rows(dx, dxp, st, N, d, K);
}

void moe_route_weight_backward(float* dh, float* dyp, float* dw, const float* h, const float* w, const int32_t* slot,
                               int64_t n, int64_t I, int64_t d) {
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < n; r++) {
        const int64_t s = slot ? slot[r] : r;
        const float wr = w[s];
        float* g = dh + r * I;
        const float* hr = h + r * I;
        float acc = 0.0f;
#pragma omp simd reduction(+ : acc)
        for (int64_t i = 0; i < I; i++) acc += g[i] * hr[i];
        dw[s] = acc;
#pragma omp simd
        for (int64_t i = 0; i < I; i++) g[i] *= wr;
        float* gy = dyp + r * d;
#pragma omp simd
        for (int64_t i = 0; i < d; i++) gy[i] *= wr;
    }
}

void moe_build_permutation(moe_state& st, const int32_t* sel, int64_t N, int E, int K) {
    build_permutation(st, sel, N, E, K);
}
void moe_gather_rows(float* rows, const float* x, const moe_state& st, int64_t d, int K) {
    gather_rows(rows, x, st, d, K);
}
void moe_combine_rows(float* y, const float* rows, const moe_state& st, int64_t N, int64_t d, int K) {
    combine_rows(y, rows, st, N, d, K);
}

// L = alpha/B · Σ_b Σ_i f_i P_i with f_i = E/(K·S)·count_i, P_i = mean_t s_i/Σ_j s_j (docs/model.md §4)
double balance_loss_forward(const float* s, const int32_t* sel, int64_t B, int64_t S, int E, int K, double alpha) {
    double total = 0.0;
    std::vector<double> f(E), P(E);
    for (int64_t b = 0; b < B; b++) {
        std::fill(f.begin(), f.end(), 0.0);
        std::fill(P.begin(), P.end(), 0.0);
        for (int64_t t = b * S; t < (b + 1) * S; t++) {
            for (int k = 0; k < K; k++) f[sel[t * K + k]] += 1.0;
            double sum = 0.0;
            for (int e = 0; e < E; e++) sum += s[t * E + e];
            for (int e = 0; e < E; e++) P[e] += s[t * E + e] / sum;
        }
        double lb = 0.0;
        for (int e = 0; e < E; e++) lb += (f[e] * E / ((double)K * S)) * (P[e] / S);
        total += lb;
    }
    return alpha * total / (double)B;
}

// ds[t,j] += alpha/(B·S·Σs)·(f_j − Σ_i f_i s'_i)
void balance_loss_backward(float* ds, const float* s, const int32_t* sel, int64_t B, int64_t S, int E, int K,
                           double alpha) {
    for (int64_t b = 0; b < B; b++) {
        std::vector<double> f(E, 0.0);
        for (int64_t t = b * S; t < (b + 1) * S; t++)
            for (int k = 0; k < K; k++) f[sel[t * K + k]] += (double)E / ((double)K * S);
#pragma omp parallel for schedule(static)
        for (int64_t t = b * S; t < (b + 1) * S; t++) {
            double sum = 0.0, fs = 0.0;
            for (int e = 0; e < E; e++) sum += s[t * E + e];
            for (int e = 0; e < E; e++) fs += f[e] * s[t * E + e] / sum;
            const double c = alpha / ((double)B * S * sum);
            for (int e = 0; e < E; e++) ds[t * E + e] += (float)(c * (f[e] - fs));
        }
    }
}

}  // namespace trex::cpu
