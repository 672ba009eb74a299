// Parameter counts, tensor counts and training FLOPs per token of a DeepSeek-V4 config, computed from the tensor
// inventory (never allocating weights). Conventions follow spec §1.5 (parameter counts) and training_anchors §2.4
// (FLOPs): see the comments on each field.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "trex/model/config.hpp"
#include "trex/model/inventory.hpp"

namespace trex {

// What a tensor belongs to, for the per-component breakdown.
enum class param_component {
    embedding,       // embed.weight
    head,            // head.weight
    attention,       // attn.{wq_a,q_norm,wq_b,wkv,kv_norm,wo_a,wo_b,attn_sink}
    compressor,      // attn.compressor.*
    indexer,         // attn.indexer.* (incl. its compressor)
    mhc,             // hc_{attn,ffn,head}_{fn,base,scale}
    norm,            // attn_norm, ffn_norm, final norm, MTP enorm/hnorm/norm
    router,          // ffn.gate.weight, ffn.gate.bias (tid2eid is not a parameter: not counted)
    routed_experts,  // ffn.experts.*
    shared_experts,  // ffn.shared_experts.*
    mtp_proj,        // mtp.*.e_proj, mtp.*.h_proj
    count_,
};
constexpr int n_param_components = (int)param_component::count_;
const char* component_name(param_component c);
param_component classify_tensor(const tensor_spec& t);

using component_counts = std::array<int64_t, n_param_components>;

struct param_counts {
    // Parameters = every tensor of role weight or bias_buffer (gate.bias counts, ffn.gate.tid2eid does not).
    int64_t total = 0;                 // main model (no MTP), incl. embedding and head
    int64_t total_excl_embedding = 0;  // total − embed.weight
    int64_t mtp_total = 0;             // the MTP block(s): everything under mtp.* (embedding/head are shared)
    int64_t total_with_mtp = 0;        // total + mtp_total
    int64_t total_with_mtp_excl_embedding = 0;
    // Active per token: routed experts count K of E per layer, everything else in full.
    int64_t active = 0;                 // main model, incl. input embedding (spec §1.5 reports excl. it)
    int64_t active_excl_embedding = 0;  // spec §1.5 "active/token excl. input embedding" (head included)
    int64_t mtp_active = 0;
    int64_t active_with_mtp = 0;
    int64_t active_with_mtp_excl_embedding = 0;
    int64_t hash_table_entries = 0;  // tid2eid entries (all layers); not parameters
    // Breakdown by component: main model and MTP separately, total and active.
    component_counts main_total{}, main_active{}, mtp_by_component{}, mtp_active_by_component{};
    // Tensor counts: our inventory and the HF release layout (each FP8/FP4 tensor also has a `.scale`).
    int64_t tensors = 0, mtp_tensors = 0;
    int64_t release_tensors = 0, release_mtp_tensors = 0;
};

param_counts count_params(const model_config& cfg);
param_counts count_params(const model_config& cfg, const std::vector<tensor_spec>& inventory_with_mtp);

struct flops_options {
    int64_t seq_len = 4096;   // S: one document filling the row; positions 0..S−1
    bool dense_csa = false;   // CSA attends to every visible compressed entry (dense warm-up) instead of top-k
    bool include_mtp = true;  // count the MTP block and its second use of the head
    // true: the indexer KL loss is trained (λ_idx ≠ 0), so its projections and scoring have a backward (weight
    // gradients only: 4·N and 6·H_I·c_I per key); false: they run forward only for the top-k (2·N and 2·H_I·c_I)
    bool indexer_loss = true;
    // true (the default): position p attends to its causal key set (the exact counts below). false: the non-causal
    // convention (every query sees the key set of the last position: window min(S, n_win), HCA floor(S/m), CSA
    // min(k_I, floor(S/4)) or floor(S/4) dense, indexer scoring floor(S/4)), as DeepSeek's "non-causal MFU".
    bool causal = true;
};

// Training FLOPs (forward + backward) per token. All fields are per token; total = sum of the non-"share" fields.
struct flops_breakdown {
    double matmul = 0;         // 6·N_mm: every non-indexer matrix applied to the token (routed experts K of E),
                               //   excluding the head; includes the mHC projections (see mhc_share)
    double routed_share = 0;   //   of which routed experts
    double mhc_share = 0;      //   of which mHC hc_*_fn (incl. hc_head_fn)
    double head = 0;           // 6·V·d·(1 + MTP): the LM head once per use
    double attention = 0;      // 12·H·c·n̄_keys summed over attention layers (QKᵀ + PV, K=V, fwd + 2 bwd)
    double indexer_mm = 0;     // 4·N_indexer_mm: detached inputs, so backward has weight gradients only
    double indexer_score = 0;  // 6·H_I·c_I·mean floor((p+1)/4) per CSA layer
    double total = 0;
    // For reference: mean number of keys per query by ratio class (window, HCA, CSA selected, CSA visible).
    double mean_window_keys = 0;
    std::string formula;  // names every term with its value
    // Per layer (index l = 0..L−1, then the MTP block(s)), training FLOPs per token, for placing layers on pipeline
    // stages (trex plan). Their sums plus `top_matmul` and `head` give `total`.
    std::vector<double> layer_matmul;     // 6·N_mm of the layer's matrices (routed experts K of E)
    std::vector<double> layer_routed;     //   of which routed experts
    std::vector<double> layer_attention;  // 12·H·c·n̄_keys
    std::vector<double> layer_indexer;    // indexer projections (4·N) + scoring
    double top_matmul = 0;                // matrices outside the blocks (hc_head_fn): 6·N
};

flops_breakdown training_flops_per_token(const model_config& cfg, const flops_options& opt = {});

}  // namespace trex
