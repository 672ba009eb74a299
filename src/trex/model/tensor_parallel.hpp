// Tensor parallelism inside one model replica (docs/distributed.md §5): the hook the attention and MoE sub-layers
// consult for their local slice and for the all-reduce points. With no tensor_parallel set on the model the
// single-process code runs unchanged.
//
// What is split over the tp ranks (rank r of T):
//   attention  column-parallel: heads [r·H/T, (r+1)·H/T) (wq_b rows, attn_sink, the attention core) and output
//              groups [r·g/T, (r+1)·g/T) (wo_a blocks); row-parallel: the columns of wo_b of the local groups
//              (partial [N,d] outputs, summed over TP);
//   MoE        the intermediate dimension of the shared expert and (without expert parallelism) of every routed
//              expert: rows [r·I/T, (r+1)·I/T) of w1 and of w3, the same columns of w2 (partial [N,d] outputs,
//              summed over TP). With expert parallelism the routed experts stay whole (expert-TP size 1) and the TP
//              ranks dispatch disjoint parts of the tokens instead; the same all-reduce assembles the outputs.
// Everything else (norms, wq_a/q_norm, the shared KV head, compressor, indexer, router, mHC, embedding, head) is
// replicated: every TP rank computes it on the same inputs and gets the same bits.
#pragma once

#include <cstdint>

#include "trex/model/inventory.hpp"

namespace trex {

class tensor_parallel {
   public:
    virtual ~tensor_parallel() = default;
    virtual int size() const = 0;
    virtual int rank() const = 0;
    // In place: x[i] = Σ over the TP ranks of x[i], added in rank order, so every rank gets the same bits.
    virtual void all_reduce_sum(float* x, int64_t n) = 0;
    virtual void all_reduce_sum(double* x, int64_t n) = 0;
};

// The local part [first, first + count) of a dimension of size n split evenly over the TP ranks (tp = nullptr: all).
struct tp_slice {
    int64_t first = 0, count = 0;
};
inline tp_slice tp_local(const tensor_parallel* tp, int64_t n) {
    if (!tp) return {0, n};
    const int64_t per = n / tp->size();
    return {tp->rank() * per, per};
}

// Is this tensor split over the TP ranks? (Its gradient is then non-zero only in this rank's slice: summing the
// ranks' gradients assembles it exactly.) Routed experts count as split: they are, without expert parallelism.
bool is_tp_sharded(const tensor_spec& s);

namespace tp_copy {
// dst [R, n] = columns [c0, c0 + n) of src [R, C].
void cols(float* dst, const float* src, int64_t R, int64_t C, int64_t c0, int64_t n);
// dst[:, c0 : c0 + n] += src [R, n]; dst [R, C].
void add_cols(float* dst, const float* src, int64_t R, int64_t C, int64_t c0, int64_t n);
// A fused w1|w3 matrix [2I, d]: dst [2n, d] = rows [i0, i0 + n) of w1 then the same rows of w3.
void w13(float* dst, const float* src, int64_t I, int64_t d, int64_t i0, int64_t n);
// The inverse accumulation: rows of dst [2I, d] += src [2n, d].
void add_w13(float* dst, const float* src, int64_t I, int64_t d, int64_t i0, int64_t n);
}  // namespace tp_copy

}  // namespace trex
