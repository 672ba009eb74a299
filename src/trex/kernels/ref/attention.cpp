// Reference sparse attention with a per-head sink and a single shared K=V head (docs/model.md §3.4, spec §2.5).
// Parameter grads += (dsink), activation grads = (dq, dkv over all Nk rows).
//
// Query t attends to rows key_idx[key_offset[t] .. key_offset[t+1]) of kv [Nk,c] (nk(t) keys, all valid).
// Per head h: s_j = scale·q[t,h]·kv[j], p_j = exp(s_j)/(Σ_j' exp(s_j') + exp(sink[h])), o[t,h] = Σ_j p_j kv[j].
// P [Σ_t nk(t)·H]: the p_j of query t, head h, key slot j at P[key_offset[t]·H + h·nk(t) + j].
#include <algorithm>
#include <cmath>
#include <vector>

#include "trex/kernels/ref/ops.hpp"

namespace trex::ref {

// o [N,H,c], P as above; q [N,H,c], sink [H]. The max for the softmax is taken over {s_j} ∪ {sink_h}.
template <typename T>
void attention_forward(T* o, T* P, const T* q, const T* kv, const T* sink, const int64_t* key_offset,
                       const int32_t* key_idx, int64_t N, int H, int64_t c, double scale) {
    std::vector<double> s, acc(c);
    for (int64_t t = 0; t < N; t++) {
        const int64_t k0 = key_offset[t], nk = key_offset[t + 1] - k0;
        s.assign(nk, 0.0);
        for (int h = 0; h < H; h++) {
            const T* qh = q + (t * H + h) * c;
            double mx = sink[h];
            for (int64_t j = 0; j < nk; j++) {
                const T* kj = kv + (int64_t)key_idx[k0 + j] * c;
                double dot = 0;
                for (int64_t e = 0; e < c; e++) dot += (double)qh[e] * (double)kj[e];
                s[j] = scale * dot;
                mx = std::max(mx, s[j]);
            }
            double Z = std::exp((double)sink[h] - mx);
            for (int64_t j = 0; j < nk; j++) Z += std::exp(s[j] - mx);
            std::fill(acc.begin(), acc.end(), 0.0);
            for (int64_t j = 0; j < nk; j++) {
                const double p = std::exp(s[j] - mx) / Z;
                P[k0 * H + h * nk + j] = (T)p;
                const T* kj = kv + (int64_t)key_idx[k0 + j] * c;
                for (int64_t e = 0; e < c; e++) acc[e] += p * (double)kj[e];
            }
            for (int64_t e = 0; e < c; e++) o[(t * H + h) * c + e] = (T)acc[e];
        }
    }
}

// Per query t, head h (do = dout[t,h]): D = do·o; dp_j = do·kv_j; ds_j = p_j (dp_j − D);
//   dsink_h += −p_sink·D with p_sink = 1 − Σ_j p_j;  dq = scale·Σ_j ds_j kv_j;
//   dkv_j += scale·ds_j·q + p_j·do  (K and V are the same rows: both roles accumulate).
// dkv is zeroed over all Nk rows first, then accumulated over queries ascending (deterministic).
template <typename T>
void attention_backward(T* dq, T* dkv, T* dsink, const T* dout, const T* q, const T* kv, const T* sink, const T* o,
                        const T* P, const int64_t* key_offset, const int32_t* key_idx, int64_t N, int64_t Nk, int H,
                        int64_t c, double scale) {
    std::vector<double> dkv_acc((size_t)(Nk * c), 0.0), dqh(c), dsink_acc(H, 0.0);
    for (int64_t t = 0; t < N; t++) {
        const int64_t k0 = key_offset[t], nk = key_offset[t + 1] - k0;
        for (int h = 0; h < H; h++) {
            const T* qh = q + (t * H + h) * c;
            const T* doh = dout + (t * H + h) * c;
            const T* oh = o + (t * H + h) * c;
            double D = 0;
            for (int64_t e = 0; e < c; e++) D += (double)doh[e] * (double)oh[e];
            double psum = 0;
            std::fill(dqh.begin(), dqh.end(), 0.0);
            for (int64_t j = 0; j < nk; j++) {
                const double p = P[k0 * H + h * nk + j];
                psum += p;
                const int64_t row = key_idx[k0 + j];
                const T* kj = kv + row * c;
                double dp = 0;
                for (int64_t e = 0; e < c; e++) dp += (double)doh[e] * (double)kj[e];
                const double ds = p * (dp - D);
                for (int64_t e = 0; e < c; e++) {
                    dqh[e] += scale * ds * (double)kj[e];
                    dkv_acc[row * c + e] += scale * ds * (double)qh[e] + p * (double)doh[e];
                }
            }
            dsink_acc[h] += -(1.0 - psum) * D;
            for (int64_t e = 0; e < c; e++) dq[(t * H + h) * c + e] = (T)dqh[e];
        }
    }
    for (int64_t i = 0; i < Nk * c; i++) dkv[i] = (T)dkv_acc[i];
    for (int h = 0; h < H; h++) dsink[h] += (T)dsink_acc[h];
}

#define TREX_ATTENTION_INSTANTIATE(T)                                                                                 \
    template void attention_forward<T>(T*, T*, const T*, const T*, const T*, const int64_t*, const int32_t*, int64_t, \
                                       int, int64_t, double);                                                         \
    template void attention_backward<T>(T*, T*, T*, const T*, const T*, const T*, const T*, const T*, const T*,       \
                                        const int64_t*, const int32_t*, int64_t, int64_t, int, int64_t, double);
TREX_ATTENTION_INSTANTIATE(float)
TREX_ATTENTION_INSTANTIATE(double)

}  // namespace trex::ref
