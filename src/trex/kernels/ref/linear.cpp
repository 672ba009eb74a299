// Reference dense linear layer y = x W^T (W [out,in], PyTorch layout). Parameter grads +=, activation grads =.
#include "trex/kernels/ref/ops.hpp"

namespace trex::ref {

// y [N,out] = x [N,in] · W[out,in]^T
template <typename T>
void linear_forward(T* y, const T* x, const T* W, int64_t N, int64_t in, int64_t out) {
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < out; o++) {
            double acc = 0;
            for (int64_t i = 0; i < in; i++) acc += (double)x[n * in + i] * (double)W[o * in + i];
            y[n * out + o] = (T)acc;
        }
}

// dx [N,in] = dy [N,out] · W (assigned); dW [out,in] += dy^T x
template <typename T>
void linear_backward(T* dx, T* dW, const T* dy, const T* x, const T* W, int64_t N, int64_t in, int64_t out) {
    if (dx)
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < in; i++) {
                double acc = 0;
                for (int64_t o = 0; o < out; o++) acc += (double)dy[n * out + o] * (double)W[o * in + i];
                dx[n * in + i] = (T)acc;
            }
    if (dW)
        for (int64_t o = 0; o < out; o++)
            for (int64_t i = 0; i < in; i++) {
                double acc = 0;
                for (int64_t n = 0; n < N; n++) acc += (double)dy[n * out + o] * (double)x[n * in + i];
                dW[o * in + i] += (T)acc;
            }
}

template void linear_forward<float>(float*, const float*, const float*, int64_t, int64_t, int64_t);
template void linear_forward<double>(double*, const double*, const double*, int64_t, int64_t, int64_t);
template void linear_backward<float>(float*, float*, const float*, const float*, const float*, int64_t, int64_t,
                                     int64_t);
template void linear_backward<double>(double*, double*, const double*, const double*, const double*, int64_t, int64_t,
                                      int64_t);

}  // namespace trex::ref
