// One DeepSeek-V4 block (docs/model.md §3): attention inside its mHC unit, then the MoE inside its own.
//   h_mid = hc_post_attn(attention(hc_pre_attn(h_in)), h_in)
//   h_out = hc_post_ffn(moe(hc_pre_ffn(h_mid)), h_mid)
// Contract: forward fills A (the block's saved tensors, sized by the activation plan) and h_out [N,n,d] from h_in
// [N,n,d]; backward assigns dh_in [N,n,d] from dh_out and A (as forward left it, or recomputed) and adds the
// parameter gradients into G.
#pragma once

#include <span>

#include "trex/model/activations.hpp"
#include "trex/model/layers/attention.hpp"
#include "trex/model/layers/env.hpp"
#include "trex/model/layers/mhc.hpp"
#include "trex/model/layers/moe.hpp"
#include "trex/model/layers/weights.hpp"

namespace trex {

class transformer_block {
   public:
    // layer in [0, L]; L is the MTP module's block
    transformer_block(const model_config& cfg, int layer) : hc_(cfg), attn_(cfg, layer), moe_(cfg, layer) {}
    const attention_layer& attention() const { return attn_; }
    const moe_layer& moe() const { return moe_; }

    // The element counts of the block's saved tensors for the running step (activations.hpp states what they are):
    // the activation plan is built from them.
    block_act_shape act_shape(const layer_env& env) const;

    void forward(block_acts& A, float* h_out, const float* h_in, const block_weights& W, const layer_env& env) const;
    void backward(block_acts& A, float* dh_in, const float* dh_out, const float* h_in, const block_weights& W,
                  const block_weights& G, const layer_env& env) const;
    // Cached decoding of the new tokens of several sequences (attention_layer::decode): h_out [N,n,d] from h_in, A as
    // scratch (its mHC, projection and MoE tensors for N tokens), every cache advanced by its sequence's tokens.
    void decode(block_acts& A, std::span<attention_cache* const> caches, float* h_out, const float* h_in,
                const block_weights& W, const layer_env& env) const;

   private:
    mhc_unit hc_;
    attention_layer attn_;
    moe_layer moe_;
};

}  // namespace trex
