// Small plain types shared by the reference (kernels/ref) and fast (kernels/cpu) kernels.
//
// Conventions of every kernel (both sets):
//  * outputs first, then inputs, then weights, then sizes; gradients carry a `d` prefix;
//  * parameter gradients ACCUMULATE (+=), activation gradients are ASSIGNED (=), unless a comment says otherwise;
//  * all tensors are dense row-major; the token axis is the flattened batch N = B*S;
//  * Linear weights are [out, in] (PyTorch / checkpoint layout): y = x W^T.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace trex {

// A document inside the flattened token axis: tokens [start, start + len). Positions restart at 0 in every
// document; windows, compression and the indexer never cross documents (docs/model.md §2).
struct doc_span {
    int64_t start;
    int64_t len;
};

// Rotary-embedding angles: cos/sin[pos * half + i] for pair i = 0..half-1 of a position (half = r/2).
template <typename T>
struct rope_table_t {
    const T* cos = nullptr;
    const T* sin = nullptr;
    int half = 0;       // r/2
    int64_t n_pos = 0;  // positions 0..n_pos-1 are tabulated
};

// mHC sizes.
struct mhc_dims {
    int n = 4;                                // hc_mult, streams
    int d = 0;                                // hidden size
    int iters = 20;                           // Sinkhorn iterations t_max
    double hc_eps = 1e-6;                     // eps of pre and of the Sinkhorn normalisations
    double norm_eps = 1e-6;                   // eps of the unweighted RMS of the flattened streams
    int rows() const { return (2 + n) * n; }  // rows of hc_fn (24 for n = 4)
};

// The routing of one MoE layer's N·K slots (token t's k-th expert is slot t·K+k), sorted by expert, and what the
// routed experts keep from forward to backward. Filled by the experts' forward (the kernel table's
// moe_experts_forward, or expert parallelism), read by their backward. Views into memory the caller sized (the
// model's activation plan, or a moe_routing_storage): the kernels never resize them, and check their sizes.
struct moe_routing {
    std::span<int64_t> expert_offset;  // [E+1]: rows of expert e are [expert_offset[e], expert_offset[e+1])
    std::span<int32_t> row_slot;       // [N·K]: row r of the permuted layout holds slot t·K+k
    std::span<int32_t> slot_row;       // [N·K]: inverse
    std::span<float> a13;              // [N·K, 2I]: expert pre-activations (w1 | w3), permuted rows
    // swiglu(a13) is not kept: the backward recomputes it from a13 (one elementwise pass, [N·K, I] floats less)
};

// Memory for a moe_routing outside the model (kernel tests, standalone callers).
struct moe_routing_storage {
    std::vector<int64_t> expert_offset;
    std::vector<int32_t> row_slot, slot_row;
    std::vector<float> a13;

    // Sizes the buffers for N tokens, E experts, K per token, intermediate size I; the view into them.
    moe_routing view(int64_t N, int E, int K, int64_t I) {
        expert_offset.resize((size_t)E + 1);
        row_slot.resize((size_t)(N * K));
        slot_row.resize((size_t)(N * K));
        a13.resize((size_t)(N * K * 2 * I));
        return {expert_offset, row_slot, slot_row, a13};
    }
};

}  // namespace trex
