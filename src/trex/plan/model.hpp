// The planner's view of a model: per layer, parameters (TP-sharded, replicated, per routed expert), training FLOPs per
// token by kind, saved activations per token by recompute group, and communication sizes. Built from either a
// DeepSeek-V4 config.json (through the engine's own inventory and FLOP counter, src/trex/model/counts.hpp) or a
// generic transformer description (configs/plan/*.json: GQA/MHA or MLA attention, dense or MoE FFN, MTP) used for
// the validation models (DeepSeek-V3, Llama 3 405B, Qwen3-235B, Pangu Ultra MoE, Megatron GPT).
#pragma once

#include <string>
#include <vector>

#include "trex/plan/json_reader.hpp"

namespace trex::plan {

// Recompute groups: which saved activations a recompute policy drops (docs/plan.md §4).
enum class act_group {
    base,         // kept unless full recompute
    norm,         // norm outputs (GEMM inputs): "layernorm"
    up_proj,      // MLA / V4 query-key-value up-projection outputs: "mla_up_proj"
    attn_scores,  // the s×s score, softmax and dropout tensors without flash attention; V4 sparse-attention gathers:
                  //   "core_attn" (= Korthikanti's "selective")
    mlp_fc1,      // dense MLP / shared expert first GEMM output: "mlp"
    mlp_act,      // dense MLP / shared expert activation output: "mlp", "moe_act"
    moe_fc1,      // routed experts' first GEMM output: "moe"
    moe_act,      // routed experts' activation output: "moe_act", "moe"
    mhc,          // V4 mHC widened residual branches: "mhc"
    count_,
};
constexpr int n_act_groups = (int)act_group::count_;

struct act_item {
    double bytes = 0;         // per token (the layer's tokens before TP/SP sharding)
    bool tp_sharded = false;  // divided by TP even without sequence parallelism
    act_group group = act_group::base;
    bool fp8_cache = false;  // a GEMM input: cached in FP8 (1 byte/element) when the GEMMs run in FP8
};

struct plan_layer {
    bool moe = false, mtp = false;
    std::string attn_kind;  // "gqa", "mla", "v4-swa", "v4-csa", "v4-hca"
    // parameters (elements)
    double p_tp = 0;      // matrices split by TP
    double p_rep = 0;     // replicated across TP (norms, router, low-rank down-projections, mHC)
    double p_expert = 0;  // one routed expert
    int n_experts = 0, topk = 0;
    // training FLOPs per token (forward + backward), as the time model counts the work
    double f_gemm = 0;        // matrices other than routed experts
    double f_router = 0;      //   of which the router (Megatron's formula omits it)
    double f_expert = 0;      // routed experts, top-k of E
    double f_core = 0;        // attention core, causal work (what the kernels do)
    double f_core_nc = 0;     // attention core, non-causal convention (full key sets)
    double f_indexer = 0;     // V4 lightning indexer (projections + scoring), causal
    double f_indexer_nc = 0;  // same, non-causal convention
    // forward FLOPs per token re-run by a recompute group
    double f_fwd_up_proj = 0, f_fwd_mlp = 0;
    std::vector<act_item> acts;
    double residual_bytes = 0;  // the layer input, kept under full recompute (h, or n_hc·h for mHC)
    int tp_collectives = 2;     // forward all-reduces (or AG+RS pairs) per layer with TP
    double dispatch_elems = 0;  // routed token-expert copies × hidden per token (top-k · h)
    double cp_kv_bytes = 0;     // K/V bytes per token a context-parallel rank exchanges per layer
    double muon_min_dim = 0;    // typical smaller dimension of the layer's dense matrices (Newton–Schulz cost)
    double expert_min_dim = 0;  // same for a routed expert's matrices
};

struct plan_model {
    std::string name, path, arch;  // arch: "transformer" or "deepseek_v4"
    int hidden = 0, vocab = 0, n_main_layers = 0, n_mtp = 0;
    int heads = 0, kv_heads = 0, n_experts = 0, topk = 0;
    int64_t seq_len = 0;
    bool flash_attention = true;
    double embed_params = 0, head_params = 0;  // vocabulary-parallel over TP
    double top_params = 0;                     // other parameters outside the blocks (final norm, V4 hc_head)
    double f_top = 0;                          // training FLOPs per token of `top_params` (V4 hc_head_fn)
    std::vector<plan_layer> layers;            // main layers, then the MTP block(s)
    double total_params = 0, active_params = 0;

    double head_flops_per_use() const { return 6.0 * vocab * hidden; }
};

// FLOPs-per-token conventions for MFU (docs/plan.md §3).
struct flops_convention {
    std::string name = "megatron";  // "megatron": MTP layers + (1+MTP) logits, no router; "deepseek": main model
                                    // only, 6·N_active (router and head once) + attention core
    bool causal = true;             // attention core over the causal mask (half the pairs) or the full square
};

struct model_flops {
    double total = 0;  // training FLOPs per token
    double gemm = 0, attention = 0, indexer = 0, head = 0, mtp = 0;
    std::string formula;
};

model_flops flops_per_token(const plan_model& m, const flops_convention& c);

// Loads a model: a DeepSeek-V4 config.json (has "compress_ratios"; a bare name also finds configs/<name>.json, e.g.
// v4-tiny), or a planner description (configs/plan/*.json,
// "arch": "transformer" | "deepseek_v4" with "config": <path of a V4 config.json, relative to the file>).
// `seq_len` fixes the attention terms; `flash_attention` false adds the s×s score tensors (Megatron before FA).
// `dense_csa` (V4): CSA attends to every visible compressed entry, as in V4's dense warm-up (trex info --dense-csa).
plan_model load_plan_model(const std::string& name_or_path, int64_t seq_len, bool flash_attention = true,
                           bool dense_csa = false);
plan_model plan_model_from_json(const json& j, const std::string& source, int64_t seq_len, bool flash_attention,
                                bool dense_csa = false);

}  // namespace trex::plan
