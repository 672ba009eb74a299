// Reference grouped (block-diagonal) output projection wo_a (docs/model.md §3.4). Parameter grads +=, activation =.
#include "trex/kernels/ref/ops.hpp"

namespace trex::ref {

// u [N,g,dg]: u[t,k,:] = Wa_k x[t,k,:], x [N,g,in_g], Wa [g·dg, in_g] (Wa_k = rows k·dg .. (k+1)·dg−1)
template <typename T>
void grouped_linear_forward(T* u, const T* x, const T* Wa, int64_t N, int g, int64_t in_g, int64_t dg) {
    for (int64_t t = 0; t < N; t++)
        for (int k = 0; k < g; k++) {
            const T* xk = x + (t * g + k) * in_g;
            for (int64_t o = 0; o < dg; o++) {
                const T* wr = Wa + ((int64_t)k * dg + o) * in_g;
                double acc = 0;
                for (int64_t i = 0; i < in_g; i++) acc += (double)wr[i] * (double)xk[i];
                u[(t * g + k) * dg + o] = (T)acc;
            }
        }
}

// dx[t,k,:] = Wa_k^T du[t,k,:] (assigned); dWa_k += Σ_t du[t,k,:] ⊗ x[t,k,:]
template <typename T>
void grouped_linear_backward(T* dx, T* dWa, const T* du, const T* x, const T* Wa, int64_t N, int g, int64_t in_g,
                             int64_t dg) {
    for (int64_t t = 0; t < N; t++)
        for (int k = 0; k < g; k++) {
            const T* duk = du + (t * g + k) * dg;
            for (int64_t i = 0; i < in_g; i++) {
                double acc = 0;
                for (int64_t o = 0; o < dg; o++) acc += (double)duk[o] * (double)Wa[((int64_t)k * dg + o) * in_g + i];
                dx[(t * g + k) * in_g + i] = (T)acc;
            }
        }
    for (int k = 0; k < g; k++)
        for (int64_t o = 0; o < dg; o++)
            for (int64_t i = 0; i < in_g; i++) {
                double acc = 0;
                for (int64_t t = 0; t < N; t++)
                    acc += (double)du[(t * g + k) * dg + o] * (double)x[(t * g + k) * in_g + i];
                dWa[((int64_t)k * dg + o) * in_g + i] += (T)acc;
            }
}

template void grouped_linear_forward<float>(float*, const float*, const float*, int64_t, int, int64_t, int64_t);
template void grouped_linear_forward<double>(double*, const double*, const double*, int64_t, int, int64_t, int64_t);
template void grouped_linear_backward<float>(float*, float*, const float*, const float*, const float*, int64_t, int,
                                             int64_t, int64_t);
template void grouped_linear_backward<double>(double*, double*, const double*, const double*, const double*, int64_t,
                                              int, int64_t, int64_t);

}  // namespace trex::ref
