// Reference RMSNorm (docs/model.md §3.1). Parameter grads +=, activation grads =.
#include <cmath>

#include "trex/kernels/ref/ops.hpp"

namespace trex::ref {

// y [N,D] = w ⊙ x·rstd, rstd [N] = (mean(x²)+eps)^-1/2; w [D] or nullptr (unweighted)
template <typename T>
void rmsnorm_forward(T* y, T* rstd, const T* x, const T* w, int64_t N, int64_t D, double eps) {
    for (int64_t n = 0; n < N; n++) {
        const T* xr = x + n * D;
        double ss = 0;
        for (int64_t i = 0; i < D; i++) ss += (double)xr[i] * (double)xr[i];
        double r = 1.0 / std::sqrt(ss / (double)D + eps);
        rstd[n] = (T)r;
        for (int64_t i = 0; i < D; i++) y[n * D + i] = (T)((w ? (double)w[i] : 1.0) * (double)xr[i] * r);
    }
}

// With g = w ⊙ dy: dx = rstd·g − (rstd³/D)·x·(x·g) (assigned); dw += Σ_n dy ⊙ x·rstd
template <typename T>
void rmsnorm_backward(T* dx, T* dw, const T* dy, const T* x, const T* w, const T* rstd, int64_t N, int64_t D) {
    for (int64_t n = 0; n < N; n++) {
        const T* xr = x + n * D;
        const T* dyr = dy + n * D;
        double r = rstd[n];
        double xg = 0;
        for (int64_t i = 0; i < D; i++) xg += (double)xr[i] * (w ? (double)w[i] : 1.0) * (double)dyr[i];
        for (int64_t i = 0; i < D; i++) {
            double g = (w ? (double)w[i] : 1.0) * (double)dyr[i];
            dx[n * D + i] = (T)(r * g - r * r * r / (double)D * (double)xr[i] * xg);
        }
    }
    if (w && dw)
        for (int64_t i = 0; i < D; i++) {
            double acc = 0;
            for (int64_t n = 0; n < N; n++) acc += (double)dy[n * D + i] * (double)x[n * D + i] * (double)rstd[n];
            dw[i] += (T)acc;
        }
}

template void rmsnorm_forward<float>(float*, float*, const float*, const float*, int64_t, int64_t, double);
template void rmsnorm_forward<double>(double*, double*, const double*, const double*, int64_t, int64_t, double);
template void rmsnorm_backward<float>(float*, float*, const float*, const float*, const float*, const float*, int64_t,
                                      int64_t);
template void rmsnorm_backward<double>(double*, double*, const double*, const double*, const double*, const double*,
                                       int64_t, int64_t);

}  // namespace trex::ref
