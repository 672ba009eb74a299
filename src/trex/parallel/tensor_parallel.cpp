#include "trex/parallel/tensor_parallel.hpp"

#include <algorithm>
#include <cstring>

namespace trex::parallel {

template <class T>
void tp_group::sum(T* x, int64_t n, dtype t, std::vector<T>& buf) {
    const int R = comm_.size();
    if (R == 1 || n == 0) return;
    buf.resize((size_t)n * R);
    comm_.all_gather(x, buf.data(), std::vector<int64_t>(R, n), t);
    std::memcpy(x, buf.data(), sizeof(T) * n);
    for (int r = 1; r < R; r++) {
        const T* b = buf.data() + (int64_t)r * n;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) x[i] += b[i];
    }
}

void tp_group::all_reduce_sum(float* x, int64_t n) {
    sum(x, n, dtype::f32, fbuf_);
}
void tp_group::all_reduce_sum(double* x, int64_t n) {
    sum(x, n, dtype::f64, dbuf_);
}

void tp_group::all_reduce_max(float* x, int64_t n) {
    const int R = comm_.size();
    if (R == 1 || n == 0) return;
    fbuf_.resize((size_t)n * R);
    comm_.all_gather(x, fbuf_.data(), std::vector<int64_t>(R, n), dtype::f32);
    for (int r = 0; r < R; r++) {
        const float* b = fbuf_.data() + (int64_t)r * n;
        for (int64_t i = 0; i < n; i++) x[i] = r == 0 ? b[i] : std::max(x[i], b[i]);
    }
}

void tp_group::drop_replicated_gradients(param_store& p) const {
    if (comm_.rank() == 0) return;
    for (size_t i = 0; i < p.specs.size(); i++)
        if (p.specs[i].role == tensor_role::weight && p.specs[i].expert < 0 && !p.sharded((int)i))
            std::memset(p.g((int)i), 0, sizeof(float) * p.specs[i].numel());
}

}  // namespace trex::parallel
