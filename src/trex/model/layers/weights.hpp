// Views of the layers' tensors into the parameter arenas (params.hpp): for every layer type a struct of pointers
// into the weights (or, for the gradient view, into the grads, same layout), bound once when the model is built.
// Shapes use the legend of model.hpp; names are the official checkpoint names (spec §4.4.1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trex/model/params.hpp"

namespace trex {

// One mHC unit (hc_attn_* or hc_ffn_*): fn [rows, n·d], base [rows], scale [3].
struct mhc_weights {
    float *fn = nullptr, *base = nullptr, *scale = nullptr;
};

// Attention: attn_norm, the low-rank queries, the shared KV head, the sink, the grouped output projection; the KV
// compressor (ratio > 0) and the lightning indexer (ratio 4).
struct attention_weights {
    float* norm = nullptr;  // attn_norm [d]
    float *sink = nullptr, *wq_a = nullptr, *q_norm = nullptr, *wq_b = nullptr, *wkv = nullptr, *kv_norm = nullptr;
    float *wo_a = nullptr, *wo_b = nullptr;
    float *c_wkv = nullptr, *c_wgate = nullptr, *c_ape = nullptr, *c_norm = nullptr;  // compressor (ratio > 0)
    float *i_wq_b = nullptr, *i_wp = nullptr;                                         // indexer (ratio 4)
    float *i_wkv = nullptr, *i_wgate = nullptr, *i_ape = nullptr, *i_norm = nullptr;
};

// MoE: ffn_norm, the router (score-routed: gate_bias; hash-routed: tid2eid, weights view only), the shared expert
// and the routed experts.
struct moe_weights {
    float* norm = nullptr;  // ffn_norm [d]
    float *gate = nullptr, *gate_bias = nullptr;
    const int32_t* tid2eid = nullptr;           // [V, K] (hash layers)
    float *sh_w13 = nullptr, *sh_w2 = nullptr;  // shared expert: w1 and w3 adjacent ([2·Is, d]), w2 [d, Is]
    std::vector<float*> w13, w2;                // routed experts: [2I, d] and [d, I] each
};

// One block: attention and MoE, each inside its mHC unit.
struct block_weights {
    int layer = 0, ratio = 0;
    bool hash = false;
    mhc_weights attn_hc, ffn_hc;
    attention_weights attn;
    moe_weights ffn;
};

// A vocabulary head: hc_head (the n streams mixed into one), the final norm, head.weight [V, d] (shared by the main
// head and MTP's).
struct head_weights {
    mhc_weights hc;
    float* norm = nullptr;
    float* head = nullptr;
};

// The MTP module's own input path: enorm, hnorm, e_proj, h_proj (the embedding table is the model's).
struct mtp_input_weights {
    float *enorm = nullptr, *hnorm = nullptr, *e_proj = nullptr, *h_proj = nullptr;
    float* embed = nullptr;  // embed.weight [V, d] (shared)
};

// The MTP module: its input path, its block (block L), its head (hc_head, norm; head.weight shared).
struct mtp_weights {
    mtp_input_weights in;
    block_weights block;
    head_weights head;
};

// Binding into params' weights (grads = false) or grads (true). Block `layer` in [0, L]; L is the MTP block.
block_weights bind_block_weights(param_store& params, int layer, bool grads);
// prefix "" (the main head) or "mtp.0." (the MTP head)
head_weights bind_head_weights(param_store& params, const std::string& prefix, bool grads);
mtp_weights bind_mtp_weights(param_store& params, bool grads);

}  // namespace trex
