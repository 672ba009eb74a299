// The multi-token-prediction module (docs/model.md §3.7): from the main model's last state h_L and the embedding of
// the next token it builds a block input, runs one more block (block L), and predicts the token after next through
// its own hc_head and norm and the shared head.
//   z = h_proj(hnorm(h_L)) + e_proj(enorm(embed[mtp_input_ids]))   (per stream; the embedding term broadcast)
//   h_mtp = block_L(z);   loss = CE(head(norm(hc_head(h_mtp))), mtp_labels)
// Contract: forward assigns z and h_mtp [N,n,d], the module's saved tensors (its block's A, its input and head
// tensors in K) and returns Σ CE with its count; backward (after the main head's, which it follows in the
// single-process order) adds dL/dh_L to dh [N,n,d], assigns de_mtp [N,d] (the gradient of the embedding lookup, which
// the first stage adds to embed.weight's) and adds the module's parameter gradients into G. Under recompute
// (env.opts.recompute) backward recomputes the block's tensors first.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trex/model/activations.hpp"
#include "trex/model/layers/block.hpp"
#include "trex/model/layers/env.hpp"
#include "trex/model/layers/head.hpp"
#include "trex/model/layers/weights.hpp"

namespace trex {

class mtp_block {
   public:
    explicit mtp_block(const model_config& cfg) : block_(cfg, cfg.n_layers()), head_(cfg) {}
    const transformer_block& block() const { return block_; }

    double forward(block_acts& A, head_acts& K, std::span<float> z, float* h_mtp, const float* h_last, int64_t* n_valid,
                   double scale, std::vector<float>* logits_out, head_grad& hg, const mtp_weights& W,
                   const layer_env& env) const;
    void backward(float* dh, float* de_mtp, block_acts& A, head_acts& K, std::span<const float> z, float* h_mtp,
                  const float* h_last, const mtp_weights& W, const mtp_weights& G, const layer_env& env) const;
    // Cached decoding (dsv4_model::decode_mtp): z from h_last [N,n,d] and the embeddings of env.batch.mtp_input_ids
    // (each position's next token), then h_mtp [N,n,d] = the block over its caches.
    void decode(block_acts& A, head_acts& K, std::span<float> z, float* h_mtp, const float* h_last,
                std::span<attention_cache* const> caches, const mtp_weights& W, const layer_env& env) const;
    // logits [env.N(), V] of states h [env.N(), n, d] through the module's head (its hc_head, norm, the shared head).
    void head(head_acts& K, const float* h, std::vector<float>& logits, const mtp_weights& W,
              const layer_env& env) const;

   private:
    void input_forward(head_acts& K, std::span<float> z, const float* h_last, const mtp_input_weights& W,
                       const layer_env& env) const;
    void input_backward(float* dh, float* de_mtp, const head_acts& K, const float* dz, const float* h_last,
                        const mtp_input_weights& W, const mtp_input_weights& G, const layer_env& env) const;

    transformer_block block_;
    lm_head head_;
};

}  // namespace trex
