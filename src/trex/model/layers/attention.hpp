// The attention sub-layer of a block (docs/model.md §3.4): attn_norm, low-rank queries with per-head RMS and RoPE,
// one shared KV head over a sliding window, the KV compressor (ratio > 0: HCA, or CSA at ratio 4 with the lightning
// indexer choosing the top-k compressed entries), sparse attention with a sink, inverse RoPE and the grouped output
// projection. Training entry points: forward / backward over a batch (block_acts holds what forward saves for
// backward); decoding entry point: decode over the sequences' caches (attention_cache.hpp).
//
// Contract: forward reads A.y1 and assigns A.F1 [N,d], every attention tensor of A, and A.idx (the indexer KL loss,
// CSA only; its gradient w.r.t. the scores is left in A.iscores for backward). backward assigns dy [N,d] = dL/dy1
// from dF [N,d] = dL/dF1 and adds the parameter gradients into G. Under tensor parallelism (env.tp) this rank computes
// its heads and output groups (tensor_parallel.hpp) and the all-reduces give every rank the whole F1 and dy.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trex/model/activations.hpp"
#include "trex/model/layers/attention_cache.hpp"
#include "trex/model/layers/env.hpp"
#include "trex/model/layers/weights.hpp"

namespace trex {

// The release's QAT simulation (model_config::qat == "release", docs/model.md §3.4), shared by forward and decode.
// qat_kv: kv [rows, c] after RoPE, its first c − r dims fake-quantised to FP8 E4M3 in blocks of 64 (window and
// compressed KV). qat_index: x [rows, cI] (the indexer's queries per head, its compressed keys) after RoPE, rotated by
// the normalised Hadamard transform and fake-quantised to FP4 E2M1 in blocks of 32. Backward: straight through the
// quantisation, so the gradient of the rotated values is rotated back (the transform is its own backward).
void qat_kv(const kernel_table& k, float* kv, int64_t rows, const model_config& cfg);
void qat_index(const kernel_table& k, float* x, int64_t rows, int64_t cI);
// rows [N] = the compressed entries of each token's document, floor(len/m): the row the release's indexer ranks with
// torch.topk during a prefill (model_config::indexer_ties == "torch"). Returns rows.
int32_t* document_rows(int32_t* rows, const batch_geometry& geo, int m);

class attention_layer {
   public:
    attention_layer(const model_config& cfg, int layer) : layer_(layer), ratio_(cfg.ratio(layer)) {}
    int layer() const { return layer_; }
    int ratio() const { return ratio_; }  // 0: window only; 4: CSA (compressor + indexer); else HCA

    void forward(block_acts& A, const attention_weights& W, const layer_env& env) const;
    void backward(block_acts& A, float* dy, const float* dF, const attention_weights& W, const attention_weights& G,
                  const layer_env& env) const;

    // Cached decoding (docs/model.md §3.7): the N new tokens of len(caches) sequences, sequence b's tokens being
    // env.geo.docs[b] (positions env.geo.pos = caches[b]->len + j). Reads A.y1 and assigns A.F1 [N,d] (the same
    // values forward gives those tokens after their prefix), using A's projection tensors (a1 … kv_all [N,c], o, u)
    // as scratch; appends the tokens to every cache. Not under tensor parallelism.
    void decode(block_acts& A, std::span<attention_cache* const> caches, const attention_weights& W,
                const layer_env& env) const;

   private:
    void project(block_acts& A, const attention_weights& W, const layer_env& env) const;
    void compress(block_acts& A, const attention_weights& W, const layer_env& env) const;
    void indexer_forward(block_acts& A, const attention_weights& W, const layer_env& env) const;
    void build_keys(block_acts& A, const layer_env& env) const;
    void output_forward(block_acts& A, const attention_weights& W, const layer_env& env) const;
    void indexer_loss(block_acts& A, const layer_env& env) const;
    void output_backward(float* dO, const block_acts& A, const float* dF, const attention_weights& W,
                         const attention_weights& G, const layer_env& env) const;
    void query_backward(float* da, float* dkv, const block_acts& A, float* dq, const attention_weights& W,
                        const attention_weights& G, const layer_env& env) const;
    void window_kv_backward(float* da, float* dkv, const block_acts& A, const attention_weights& W,
                            const attention_weights& G, const layer_env& env) const;
    void compress_backward(float* da, float* dkvc, const block_acts& A, const attention_weights& W,
                           const attention_weights& G, const layer_env& env) const;
    void indexer_backward(block_acts& A, const attention_weights& W, const attention_weights& G,
                          const layer_env& env) const;
    // decode's parts (attention_decode.cpp)
    struct decode_keys;
    void compress_cached(std::span<attention_cache* const> caches, const block_acts& A, const attention_weights& W,
                         const layer_env& env) const;
    void index_cached(std::vector<decode_keys>& out, std::span<attention_cache* const> caches, const block_acts& A,
                      const attention_weights& W, const layer_env& env) const;
    struct decode_plan;
    void plan_keys(decode_plan& plan, std::span<attention_cache* const> caches, const std::vector<decode_keys>& chosen,
                   const layer_env& env) const;
    void gather_kv(float* kv, const decode_plan& plan, std::span<attention_cache* const> caches, const block_acts& A,
                   const layer_env& env) const;
    void advance_caches(std::span<attention_cache* const> caches, const block_acts& A, const layer_env& env) const;

    int layer_, ratio_;
};

}  // namespace trex
