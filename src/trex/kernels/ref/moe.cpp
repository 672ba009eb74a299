// Reference DeepSeekMoE pieces (docs/model.md §3.5, §4; spec §2.8, §2.11): router, clamped SwiGLU, routed experts,
// sequence-wise balance loss. Parameter grads +=, activation grads = (kernels/types.hpp).
#include <algorithm>
#include <cmath>
#include <vector>

#include "trex/kernels/ref/detail.hpp"
#include "trex/kernels/ref/ops.hpp"

namespace trex::ref {

using detail::sigmoid;
using detail::silu;
using detail::silu_grad;
using detail::softplus;

// s [N,E] = sqrt(softplus(logits)); sel [N,K]: top-K of s + bias, slot order = descending s + bias, ties to the lower
// expert id (or the rows of hash_sel); weight [N,K] = route_scale·s[sel_k]/Σ_k' s[sel_k'].
template <typename T>
void router_forward(int32_t* sel, T* weight, T* s, const T* logits, const T* bias, const int32_t* hash_sel, int64_t N,
                    int E, int K, double route_scale) {
    std::vector<double> sd(E), key(E);
    std::vector<bool> taken(E);
    for (int64_t t = 0; t < N; t++) {
        for (int e = 0; e < E; e++) {
            sd[e] = std::sqrt(softplus((double)logits[t * E + e]));
            s[t * E + e] = (T)sd[e];
            key[e] = (double)(T)sd[e] + (bias ? (double)bias[e] : 0.0);
        }
        int32_t* st = sel + t * K;
        if (hash_sel) {
            for (int k = 0; k < K; k++) st[k] = hash_sel[t * K + k];
        } else {
            std::fill(taken.begin(), taken.end(), false);
            for (int k = 0; k < K; k++) {
                int best = -1;
                for (int e = 0; e < E; e++)
                    if (!taken[e] && (best < 0 || key[e] > key[best])) best = e;
                taken[best] = true;
                st[k] = best;
            }
        }
        double sum = 0;
        for (int k = 0; k < K; k++) sum += sd[st[k]];
        for (int k = 0; k < K; k++) weight[t * K + k] = (T)(route_scale * sd[st[k]] / sum);
    }
}

// With S = Σ_k s[sel_k], weight_k = rs·s[sel_k]/S:
//   ds[sel_k] += rs·dweight_k/S − (Σ_k' dweight_k'·weight_k')/S;  ds += ds_extra;
//   dlogits = ds·σ(logits)/(2s)   (d sqrt(softplus(u))/du; 0 where s == 0). dlogits assigned.
template <typename T>
void router_backward(T* dlogits, const T* dweight, const T* ds_extra, const T* logits, const T* s, const int32_t* sel,
                     const T* weight, int64_t N, int E, int K, double route_scale) {
    std::vector<double> ds(E);
    for (int64_t t = 0; t < N; t++) {
        for (int e = 0; e < E; e++) ds[e] = ds_extra ? (double)ds_extra[t * E + e] : 0.0;
        double S = 0, dot = 0;
        for (int k = 0; k < K; k++) {
            S += (double)s[t * E + sel[t * K + k]];
            dot += (double)dweight[t * K + k] * (double)weight[t * K + k];
        }
        for (int k = 0; k < K; k++) ds[sel[t * K + k]] += (route_scale * (double)dweight[t * K + k] - dot) / S;
        for (int e = 0; e < E; e++) {
            const double se = s[t * E + e];
            dlogits[t * E + e] = (T)(se > 0 ? ds[e] * sigmoid((double)logits[t * E + e]) / (2.0 * se) : 0.0);
        }
    }
}

// h [n,I] = silu(min(a1, L)) ⊙ clamp(a3, −L, L) with a13 [n,2I] = [a1 | a3]; L <= 0: no clamp.
template <typename T>
void swiglu_forward(T* h, const T* a13, int64_t n, int64_t I, double limit) {
    for (int64_t t = 0; t < n; t++)
        for (int64_t i = 0; i < I; i++) {
            double a1 = a13[t * 2 * I + i], a3 = a13[t * 2 * I + I + i];
            if (limit > 0) {
                a1 = std::min(a1, limit);
                a3 = std::clamp(a3, -limit, limit);
            }
            h[t * I + i] = (T)(silu(a1) * a3);
        }
}

// da1 = dh·a3c·silu'(a1c)·1[a1 ≤ L], da3 = dh·silu(a1c)·1[|a3| ≤ L] (a1c, a3c clamped; PyTorch clamp convention:
// the gradient passes at the boundary). da13 [n,2I] assigned.
template <typename T>
void swiglu_backward(T* da13, const T* dh, const T* a13, int64_t n, int64_t I, double limit) {
    for (int64_t t = 0; t < n; t++)
        for (int64_t i = 0; i < I; i++) {
            const double a1 = a13[t * 2 * I + i], a3 = a13[t * 2 * I + I + i];
            double a1c = a1, a3c = a3, pass1 = 1, pass3 = 1;
            if (limit > 0) {
                a1c = std::min(a1, limit);
                a3c = std::clamp(a3, -limit, limit);
                pass1 = a1 <= limit ? 1.0 : 0.0;
                pass3 = (a3 >= -limit && a3 <= limit) ? 1.0 : 0.0;
            }
            const double g = dh[t * I + i];
            da13[t * 2 * I + i] = (T)(g * a3c * silu_grad(a1c) * pass1);
            da13[t * 2 * I + I + i] = (T)(g * silu(a1c) * pass3);
        }
}

// y [N,d] = Σ_k weight[t,k]·w2_e·swiglu(w13_e·x[t]), e = sel[t,k], k ascending; w13[e] [2I,d], w2[e] [d,I].
template <typename T>
void moe_experts_forward(T* y, const T* x, const int32_t* sel, const T* weight, const T* const* w13, const T* const* w2,
                         int64_t N, int64_t d, int K, int64_t I, double limit) {
    std::vector<T> a13(2 * I), h(I);
    std::vector<double> acc(d);
    for (int64_t t = 0; t < N; t++) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int k = 0; k < K; k++) {
            const int e = sel[t * K + k];
            for (int64_t r = 0; r < 2 * I; r++) {
                double a = 0;
                for (int64_t i = 0; i < d; i++) a += (double)w13[e][r * d + i] * (double)x[t * d + i];
                a13[r] = (T)a;
            }
            swiglu_forward(h.data(), a13.data(), 1, I, limit);
            const double wk = weight[t * K + k];
            for (int64_t o = 0; o < d; o++) {
                double v = 0;
                for (int64_t i = 0; i < I; i++) v += (double)w2[e][o * I + i] * (double)h[i];
                acc[o] += wk * v;
            }
        }
        for (int64_t o = 0; o < d; o++) y[t * d + o] = (T)acc[o];
    }
}

// Per (t, k), e = sel[t,k], v = w2_e h:  dweight[t,k] = dy·v;  dh = weight·w2_eᵀ dy;  dw2_e += weight·dy ⊗ h;
// da13 = swiglu_backward(dh);  dw13_e += da13 ⊗ x;  dx += w13_eᵀ da13.  dx, dweight assigned; dw13, dw2 +=.
template <typename T>
void moe_experts_backward(T* dx, T* dweight, T* const* dw13, T* const* dw2, const T* dy, const T* x, const int32_t* sel,
                          const T* weight, const T* const* w13, const T* const* w2, int64_t N, int64_t d, int K,
                          int64_t I, double limit) {
    std::vector<T> a13(2 * I), h(I), dh(I), da13(2 * I);
    std::vector<double> dxa(d);
    for (int64_t t = 0; t < N; t++) {
        const T* g = dy + t * d;
        std::fill(dxa.begin(), dxa.end(), 0.0);
        for (int k = 0; k < K; k++) {
            const int e = sel[t * K + k];
            const double wk = weight[t * K + k];
            for (int64_t r = 0; r < 2 * I; r++) {
                double a = 0;
                for (int64_t i = 0; i < d; i++) a += (double)w13[e][r * d + i] * (double)x[t * d + i];
                a13[r] = (T)a;
            }
            swiglu_forward(h.data(), a13.data(), 1, I, limit);
            double dwk = 0;
            for (int64_t o = 0; o < d; o++) {
                double v = 0;
                for (int64_t i = 0; i < I; i++) v += (double)w2[e][o * I + i] * (double)h[i];
                dwk += (double)g[o] * v;
            }
            dweight[t * K + k] = (T)dwk;
            for (int64_t i = 0; i < I; i++) {
                double a = 0;
                for (int64_t o = 0; o < d; o++) a += (double)w2[e][o * I + i] * (double)g[o];
                dh[i] = (T)(wk * a);
            }
            for (int64_t o = 0; o < d; o++)
                for (int64_t i = 0; i < I; i++) dw2[e][o * I + i] += (T)(wk * (double)g[o] * (double)h[i]);
            swiglu_backward(da13.data(), dh.data(), a13.data(), 1, I, limit);
            for (int64_t r = 0; r < 2 * I; r++)
                for (int64_t i = 0; i < d; i++) {
                    dw13[e][r * d + i] += (T)((double)da13[r] * (double)x[t * d + i]);
                    dxa[i] += (double)da13[r] * (double)w13[e][r * d + i];
                }
        }
        for (int64_t i = 0; i < d; i++) dx[t * d + i] = (T)dxa[i];
    }
}

namespace {
// f_i of row b: E/(K·S)·#{(t,k): sel[t,k] == i} over the S tokens of the row.
template <typename T>
std::vector<double> balance_f(const int32_t* sel, int64_t b, int64_t S, int E, int K) {
    std::vector<double> f(E, 0.0);
    for (int64_t t = b * S; t < (b + 1) * S; t++)
        for (int k = 0; k < K; k++) f[sel[t * K + k]] += 1.0;
    for (int e = 0; e < E; e++) f[e] *= (double)E / ((double)K * (double)S);
    return f;
}
}  // namespace

// alpha·(1/B)·Σ_b Σ_i f_i P_i, P_i = (1/S)·Σ_t s[t,i]/Σ_j s[t,j]; s [B·S,E], sel [B·S,K].
template <typename T>
double balance_loss_forward(const T* s, const int32_t* sel, int64_t B, int64_t S, int E, int K, double alpha) {
    double total = 0;
    for (int64_t b = 0; b < B; b++) {
        std::vector<double> f = balance_f<T>(sel, b, S, E, K);
        for (int64_t t = b * S; t < (b + 1) * S; t++) {
            double Z = 0, fs = 0;
            for (int e = 0; e < E; e++) Z += (double)s[t * E + e];
            for (int e = 0; e < E; e++) fs += f[e] * (double)s[t * E + e];
            total += fs / Z / (double)S;
        }
    }
    return alpha * total / (double)B;
}

// f constant: ds[t,i] += alpha/(B·S)·(f_i − Σ_j f_j s'_j)/Z_t, Z_t = Σ_j s[t,j], s'_j = s[t,j]/Z_t.
template <typename T>
void balance_loss_backward(T* ds, const T* s, const int32_t* sel, int64_t B, int64_t S, int E, int K, double alpha) {
    for (int64_t b = 0; b < B; b++) {
        std::vector<double> f = balance_f<T>(sel, b, S, E, K);
        for (int64_t t = b * S; t < (b + 1) * S; t++) {
            double Z = 0, fs = 0;
            for (int e = 0; e < E; e++) Z += (double)s[t * E + e];
            for (int e = 0; e < E; e++) fs += f[e] * (double)s[t * E + e];
            const double c = alpha / ((double)B * (double)S);
            for (int e = 0; e < E; e++) ds[t * E + e] += (T)(c * (f[e] - fs / Z) / Z);
        }
    }
}

#define TREX_MOE_INSTANTIATE(T)                                                                                       \
    template void router_forward<T>(int32_t*, T*, T*, const T*, const T*, const int32_t*, int64_t, int, int, double); \
    template void router_backward<T>(T*, const T*, const T*, const T*, const T*, const int32_t*, const T*, int64_t,   \
                                     int, int, double);                                                               \
    template void swiglu_forward<T>(T*, const T*, int64_t, int64_t, double);                                          \
    template void swiglu_backward<T>(T*, const T*, const T*, int64_t, int64_t, double);                               \
    template void moe_experts_forward<T>(T*, const T*, const int32_t*, const T*, const T* const*, const T* const*,    \
                                         int64_t, int64_t, int, int64_t, double);                                     \
    template void moe_experts_backward<T>(T*, T*, T* const*, T* const*, const T*, const T*, const int32_t*, const T*, \
                                          const T* const*, const T* const*, int64_t, int64_t, int, int64_t, double);  \
    template double balance_loss_forward<T>(const T*, const int32_t*, int64_t, int64_t, int, int, double);            \
    template void balance_loss_backward<T>(T*, const T*, const int32_t*, int64_t, int64_t, int, int, double);
TREX_MOE_INSTANTIATE(float)
TREX_MOE_INSTANTIATE(double)

}  // namespace trex::ref
