#include "trex/dist/tensor_parallel.hpp"

#include <cstring>

namespace trex::dist {

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

void tp_group::all_reduce_sum(float* x, int64_t n) { sum(x, n, dtype::f32, fbuf_); }
void tp_group::all_reduce_sum(double* x, int64_t n) { sum(x, n, dtype::f64, dbuf_); }

void tp_group::combine_gradients(param_store& p) {
    // one packed all-reduce over every TP-split tensor
    std::vector<int> split;
    int64_t total = 0;
    for (size_t i = 0; i < p.specs.size(); i++)
        if (is_tp_sharded(p.specs[i])) {
            split.push_back((int)i);
            total += p.specs[i].numel();
        }
    pack_.resize(total);
    int64_t pos = 0;
    for (int i : split) {
        std::memcpy(pack_.data() + pos, p.g(i), sizeof(float) * p.specs[i].numel());
        pos += p.specs[i].numel();
    }
    all_reduce_sum(pack_.data(), total);
    pos = 0;
    for (int i : split) {
        std::memcpy(p.g(i), pack_.data() + pos, sizeof(float) * p.specs[i].numel());
        pos += p.specs[i].numel();
    }
}

}  // namespace trex::dist
