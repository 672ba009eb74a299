// Embedding lookup and its backward (scatter-add by token id, deterministic).
#include <cstring>
#include <vector>

#include "trex/kernels/cpu/ops.hpp"

namespace trex::cpu {

// out [N,d] = table[ids] ; table [V,d]; ids < 0: zero rows
void embedding_forward(float* out, const int32_t* ids, const float* table, int64_t N, int64_t d) {
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < N; n++) {
        if (ids[n] < 0)
            std::memset(out + n * d, 0, d * sizeof(float));
        else
            std::memcpy(out + n * d, table + (int64_t)ids[n] * d, d * sizeof(float));
    }
}

// dtable [V,d] += rows of dout [N,d] grouped by id (ids < 0 skipped). Tokens are bucketed by id (counting sort,
// stable), then each table row sums its tokens in ascending order: the result does not depend on the thread count.
void embedding_backward(float* dtable, const float* dout, const int32_t* ids, int64_t N, int64_t d, int64_t V) {
    std::vector<int64_t> start(V + 1, 0);
    for (int64_t n = 0; n < N; n++)
        if (ids[n] >= 0) start[ids[n] + 1]++;
    for (int64_t v = 0; v < V; v++) start[v + 1] += start[v];
    std::vector<int64_t> order(N), fill(start.begin(), start.end() - 1);
    for (int64_t n = 0; n < N; n++)
        if (ids[n] >= 0) order[fill[ids[n]]++] = n;
    // rows with at least one token
    std::vector<int64_t> used;
    for (int64_t v = 0; v < V; v++)
        if (start[v + 1] > start[v]) used.push_back(v);
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t u = 0; u < (int64_t)used.size(); u++) {
        int64_t v = used[u];
        float* row = dtable + v * d;
        for (int64_t i = start[v]; i < start[v + 1]; i++) {
            const float* g = dout + order[i] * d;
#pragma omp simd
            for (int64_t j = 0; j < d; j++) row[j] += g[j];
        }
    }
}

}  // namespace trex::cpu
