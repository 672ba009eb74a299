// Tensor parallelism inside one model replica (docs/distributed.md §5): the hook the attention and MoE sub-layers
// consult for their local slice and for the all-reduce points. With no tensor_parallel set on the model the
// single-process code runs unchanged.
//
// What is split over the tp ranks (rank r of T):
//   attention  column-parallel: heads [r·H/T, (r+1)·H/T) (wq_b rows, attn_sink, the attention core) and output
//              groups [r·g/T, (r+1)·g/T) (wo_a blocks); row-parallel: the columns of wo_b of the local groups
//              (partial [N,d] outputs, summed over TP);
//   vocabulary embed.weight and head.weight (shared by the MTP module) by rows: rank r holds the vocabulary ids
//              [r·V/T, (r+1)·V/T). A lookup gives this rank's rows and zeros for the other ids, summed over TP (one
//              non-zero term: the exact row); the head's logits are this rank's columns, the cross-entropy's row max,
//              target logit and Σ exp are reduced over TP (layers/vocab.hpp), and dL/dxn is summed over TP.
//   MoE        the intermediate dimension of the shared expert and (without expert parallelism) of every routed
//              expert: rows [r·I/T, (r+1)·I/T) of w1 and of w3, the same columns of w2 (partial [N,d] outputs,
//              summed over TP). With expert parallelism the routed experts stay whole (expert-TP size 1) and the TP
//              ranks dispatch disjoint parts of the tokens instead; the same all-reduce assembles the outputs.
// Everything else (norms, wq_a/q_norm, the shared KV head, compressor, indexer, router, mHC, hc_head) is
// replicated: every TP rank computes it on the same inputs and gets the same bits.
//
// A model built for a tp_layout (param_store's constructor, parallel::parallelize) holds only its slices of the split
// tensors, at their local shapes: the layers read their local weights directly and accumulate local gradients.
// Checkpoints stay layout-independent: tp_take_shard / tp_put_shard convert between a full tensor and the slices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
    // In place: x[i] = the largest x[i] over the TP ranks (exact: every rank gets the same bits).
    virtual void all_reduce_max(float* x, int64_t n) = 0;
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

// How a tensor is laid out over the TP ranks. rows: rank r holds rows [r·R/T, (r+1)·R/T) of its [R, ...] shape (a
// contiguous block; wq_b's heads, wo_a's output groups, w1/w3's intermediate rows, attn_sink's heads, the vocabulary
// rows of embed.weight and head.weight); cols: rank r holds columns [r·C/T, (r+1)·C/T) of its [R, C] shape (wo_b's
// group inputs, w2's intermediate columns).
enum class tp_split { none, rows, cols };

// This rank's place in the tensor-parallel group a model is built for. experts_split: the routed experts are split
// over TP like the shared expert (no expert parallelism); with expert parallelism they stay whole (the TP ranks
// dispatch disjoint tokens instead).
struct tp_layout {
    int rank = 0, size = 1;
    bool experts_split = true;
};

// The split of tensor s (full shape) under tensor parallelism (none for every replicated tensor).
tp_split tp_split_of(const tensor_spec& s, bool experts_split);
// The shape rank-local storage has: full with the split dimension divided by `size` (which must divide it).
std::vector<int64_t> tp_local_shape(const std::string& name, const std::vector<int64_t>& full, tp_split split,
                                    int size);
// The full-tensor element index of local element k (row-major in both).
int64_t tp_full_index(int64_t k, const std::vector<int64_t>& full, tp_split split, int rank, int size);
// local = rank's slice of full; full's slice of rank = local. full has shape `full`.
void tp_take_shard(float* local, const float* full, const std::vector<int64_t>& shape, tp_split split, int rank,
                   int size);
void tp_put_shard(float* full, const float* local, const std::vector<int64_t>& shape, tp_split split, int rank,
                  int size);

}  // namespace trex
