// The selection torch.topk(k, largest=True) makes on CPU, ties included: which of several equal scores it keeps
// depends on its algorithm, not on a rule, so matching it (the release's indexer calls torch.topk) means running the
// same algorithm on the same array. This replicates ATen's CPU top-k loop (aten/src/ATen/native/TopKImpl.h, PyTorch
// 2.x): pairs (value, index) compared by value only (NaN first); std::partial_sort of the first k when k·64 ≤ n,
// else std::nth_element at k−1. The standard library's heap and nth_element are the ones PyTorch's
// wheels are built with (libstdc++), which this build uses too. Checked against torch.topk on rows full of ties by
// tests/unit/kernels_topk_torch_test.cpp (cases recorded from torch 2.15).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace trex {

// out[0..k) = the indices torch.topk(values[0..n), k) returns, as a set (the order is not torch's sorted order);
// 1 ≤ k ≤ n. `queue` is scratch.
inline void torch_topk_indices(int32_t* out, const float* values, int64_t n, int64_t k,
                               std::vector<std::pair<float, int64_t>>& queue) {
    using elem = std::pair<float, int64_t>;
    const auto greater = [](const elem& a, const elem& b) {
        return (std::isnan(a.first) && !std::isnan(b.first)) || a.first > b.first;
    };
    queue.resize((size_t)n);
    for (int64_t j = 0; j < n; j++) queue[(size_t)j] = {values[j], j};
    if (k * 64 <= n)
        std::partial_sort(queue.begin(), queue.begin() + k, queue.end(), greater);
    else
        std::nth_element(queue.begin(), queue.begin() + (k - 1), queue.end(), greater);
    for (int64_t j = 0; j < k; j++) out[j] = (int32_t)queue[(size_t)j].second;
}

}  // namespace trex
