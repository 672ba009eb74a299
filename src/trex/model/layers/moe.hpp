// The MoE sub-layer of a block (docs/model.md §3.5): ffn_norm, the router (score-routed with a selection bias, or
// hash-routed by the token id through tid2eid), the routed experts (here, or through an expert_dispatcher: expert
// parallelism), the shared expert, and the sequence-wise balance loss. Entry points forward / backward; the MoE keeps
// no state between tokens, so cached decoding runs forward over the new tokens (env.opts.alpha_bal = 0).
//
// Contract: forward reads A.y2 and assigns A.F2 [N,d], the MoE tensors of A, A.bal (score-routed layers) and A.load
// (tokens per expert). backward assigns dy [N,d] = dL/dy2 from dF [N,d] = dL/dF2 and adds the parameter gradients
// into G. Under tensor parallelism (env.tp) this rank computes its slice of every expert's intermediate dimension
// (with expert parallelism: its part of the tokens; tensor_parallel.hpp), and the all-reduces give every rank the
// whole F2 and dy.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "trex/model/activations.hpp"
#include "trex/model/layers/env.hpp"
#include "trex/model/layers/weights.hpp"

namespace trex {

class moe_layer {
   public:
    moe_layer(const model_config& cfg, int layer)
        : layer_(layer), hash_(layer < cfg.n_layers() && cfg.is_hash_layer(layer)) {}
    int layer() const { return layer_; }
    bool hash_routed() const { return hash_; }

    void forward(block_acts& A, const moe_weights& W, const layer_env& env) const;
    void backward(block_acts& A, float* dy, const float* dF, const moe_weights& W, const moe_weights& G,
                  const layer_env& env) const;

    // [first, first + count) of the step's tokens this rank dispatches: all N, except under TP with expert
    // parallelism, where the TP ranks dispatch disjoint parts (tensor_parallel.hpp).
    static std::pair<int64_t, int64_t> token_range(int64_t N, const tensor_parallel* tp,
                                                   const expert_dispatcher* dispatcher);

   private:
    void route(block_acts& A, const moe_weights& W, const layer_env& env) const;
    void balance_and_load(block_acts& A, const layer_env& env) const;
    void router_backward(float* da, const block_acts& A, const float* dw, const moe_weights& W, const moe_weights& G,
                         const layer_env& env) const;

    int layer_;
    bool hash_;
};

}  // namespace trex
