// The vocabulary-parallel pieces of the embedding and the head (docs/distributed.md §5). Under tensor parallelism TP
// rank r holds the vocabulary rows [r·V/T, (r+1)·V/T) of embed.weight and head.weight (tensor_parallel.hpp); with
// env.tp == nullptr each function is the single-process kernel call it wraps.
//
// Every result is the same bits on every TP rank: a lookup has one non-zero term per element, the head's reductions
// are a max and sums in rank order (tensor_parallel::all_reduce_*).
#pragma once

#include <cstdint>
#include <vector>

#include "trex/model/layers/env.hpp"

namespace trex {

// This rank's vocabulary rows: [first, first + count) of the config's vocab_size.
tp_slice vocab_rows(const layer_env& env);

// out [N,d] = embed rows of ids (table: this rank's rows [Vr,d]), summed over TP.
void vocab_embedding_forward(float* out, const int32_t* ids, const float* table, const layer_env& env);
// dtable [Vr,d] += dout [N,d] scattered by ids, for the ids this rank holds.
void vocab_embedding_backward(float* dtable, const float* dout, const int32_t* ids, const layer_env& env);

// The cross-entropy of ct rows of this rank's logits lg [ct,Vr] against full-vocabulary labels: Σ_valid CE
// (returned) and its count *n_valid; lg is overwritten by scale·(softmax − onehot) on this rank's columns
// (cross_entropy_fused over the whole row when there is no TP).
double vocab_cross_entropy(float* lg, int64_t* n_valid, const int32_t* labels, int64_t ct, double scale,
                           const layer_env& env);

// dst [ct,V] = the full logits of ct rows from this rank's columns lg [ct,Vr] (gathered over TP).
void vocab_gather_logits(float* dst, const float* lg, int64_t ct, const layer_env& env);

}  // namespace trex
