// Reference embedding lookup. Parameter grads +=, activation grads = (kernels/types.hpp).
#include "trex/kernels/ref/ops.hpp"

namespace trex::ref {

// out [N,d] = table[ids[n]] with table [V,d]; 0 where ids[n] < 0
template <typename T>
void embedding_forward(T* out, const int32_t* ids, const T* table, int64_t N, int64_t d) {
    for (int64_t n = 0; n < N; n++) {
        if (ids[n] < 0) {
            for (int64_t i = 0; i < d; i++) out[n * d + i] = 0;
            continue;
        }
        const T* row = table + (int64_t)ids[n] * d;
        for (int64_t i = 0; i < d; i++) out[n * d + i] = row[i];
    }
}

// dtable [V,d] += dout [N,d] scattered by ids, tokens in ascending order (deterministic); ids < 0 skipped
template <typename T>
void embedding_backward(T* dtable, const T* dout, const int32_t* ids, int64_t N, int64_t d) {
    for (int64_t n = 0; n < N; n++) {
        if (ids[n] < 0) continue;
        T* row = dtable + (int64_t)ids[n] * d;
        for (int64_t i = 0; i < d; i++) row[i] += dout[n * d + i];
    }
}

template void embedding_forward<float>(float*, const int32_t*, const float*, int64_t, int64_t);
template void embedding_forward<double>(double*, const int32_t*, const double*, int64_t, int64_t);
template void embedding_backward<float>(float*, const float*, const int32_t*, int64_t, int64_t);
template void embedding_backward<double>(double*, const double*, const int32_t*, int64_t, int64_t);

}  // namespace trex::ref
