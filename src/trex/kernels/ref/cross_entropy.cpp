// Reference cross-entropy over the vocabulary. Activation grads = (kernels/types.hpp).
#include <algorithm>
#include <cmath>

#include "trex/kernels/ref/ops.hpp"

namespace trex::ref {

// Σ over rows with labels[n] ≥ 0 of logsumexp(logits[n]) − logits[n, labels[n]]; logits [N,V]
template <typename T>
double cross_entropy_forward(int64_t* n_valid, const T* logits, const int32_t* labels, int64_t N, int64_t V) {
    double total = 0;
    int64_t count = 0;
    for (int64_t n = 0; n < N; n++) {
        if (labels[n] < 0) continue;
        const T* z = logits + n * V;
        double mx = z[0];
        for (int64_t v = 1; v < V; v++) mx = std::max(mx, (double)z[v]);
        double se = 0;
        for (int64_t v = 0; v < V; v++) se += std::exp((double)z[v] - mx);
        total += mx + std::log(se) - (double)z[labels[n]];
        count++;
    }
    *n_valid = count;
    return total;
}

// dlogits [N,V] = scale·(softmax(logits) − onehot(label)) on valid rows, 0 elsewhere
template <typename T>
void cross_entropy_backward(T* dlogits, const T* logits, const int32_t* labels, int64_t N, int64_t V, double scale) {
    for (int64_t n = 0; n < N; n++) {
        T* dz = dlogits + n * V;
        if (labels[n] < 0) {
            for (int64_t v = 0; v < V; v++) dz[v] = 0;
            continue;
        }
        const T* z = logits + n * V;
        double mx = z[0];
        for (int64_t v = 1; v < V; v++) mx = std::max(mx, (double)z[v]);
        double se = 0;
        for (int64_t v = 0; v < V; v++) se += std::exp((double)z[v] - mx);
        for (int64_t v = 0; v < V; v++) {
            double p = std::exp((double)z[v] - mx) / se;
            dz[v] = (T)(scale * (p - (v == labels[n] ? 1.0 : 0.0)));
        }
    }
}

template double cross_entropy_forward<float>(int64_t*, const float*, const int32_t*, int64_t, int64_t);
template double cross_entropy_forward<double>(int64_t*, const double*, const int32_t*, int64_t, int64_t);
template void cross_entropy_backward<float>(float*, const float*, const int32_t*, int64_t, int64_t, double);
template void cross_entropy_backward<double>(double*, const double*, const int32_t*, int64_t, int64_t, double);

}  // namespace trex::ref
