// DeepSeek-V4 model configuration: the keys of a Hugging Face `config.json` (spec §1.1, §5), validated.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace trex {

// `rope_scaling` of the HF config. type "yarn" (used by compressed layers) or "none" when absent.
struct rope_scaling_config {
    std::string type = "none";
    double factor = 1.0;
    int64_t original_max_position_embeddings = 0;
    double beta_fast = 32.0;
    double beta_slow = 1.0;
};

struct model_config {
    // sizes
    int vocab_size = 0;
    int hidden_size = 0;          // d
    int num_hidden_layers = 0;    // L (the MTP block is layer L)
    int num_attention_heads = 0;  // H
    int num_key_value_heads = 1;  // must be 1 (shared K=V head)
    int head_dim = 0;             // c
    int qk_rope_head_dim = 0;     // r
    int q_lora_rank = 0;          // d_c
    int o_groups = 0;             // g
    int o_lora_rank = 0;          // d_g
    int sliding_window = 0;       // n_win
    // compression: one entry per layer plus one per MTP layer; 0 = SWA only, 4 = CSA, other = HCA
    std::vector<int> compress_ratios;
    double rope_theta = 10000.0;
    double compress_rope_theta = 160000.0;
    rope_scaling_config rope_scaling;
    // lightning indexer
    int index_n_heads = 0;   // H_I
    int index_head_dim = 0;  // c_I
    int index_topk = 0;      // k_I
    // MoE
    int n_routed_experts = 0;     // E
    int num_experts_per_tok = 0;  // K
    int n_shared_experts = 1;
    int moe_intermediate_size = 0;  // I
    int num_hash_layers = 0;
    std::string scoring_func = "sqrtsoftplus";
    double routed_scaling_factor = 1.0;
    bool norm_topk_prob = true;
    std::string topk_method = "noaux_tc";
    double swiglu_limit = 0.0;  // 0 = no clamp
    std::string hidden_act = "silu";
    // mHC
    int hc_mult = 4;
    int hc_sinkhorn_iters = 20;
    double hc_eps = 1e-6;
    double rms_norm_eps = 1e-6;
    // misc
    int num_nextn_predict_layers = 1;
    int64_t max_position_embeddings = 0;
    bool tie_word_embeddings = false;
    int bos_token_id = 0;
    int eos_token_id = 1;
    double initializer_range = 0.006;
    std::string torch_dtype = "bfloat16";
    std::string expert_dtype;           // "" or "fp4" (release checkpoints)
    bool has_fp8_quantization = false;  // quantization_config present (release checkpoints)
    // T-Rex's numerics keys (docs/model.md §3.4); absent, a release checkpoint (quantization_config) gets the
    // release's: "release" and "torch", any other config "none" and "stable".
    //  qat: "release" fake-quantises what the release's QAT does (window and compressed KV to FP8 E4M3 in 1×64
    //       blocks, the indexer's queries and keys Hadamard-rotated and FP4 E2M1 in 1×32 blocks; straight-through
    //       gradients); "none" computes them in fp32.
    //  indexer_ties: "stable" (equal scores: the lower entry first) or "torch" (torch.topk's choice, the release's).
    std::string qat = "none";
    std::string indexer_ties = "stable";

    // --- derived ---
    int n_layers() const { return num_hidden_layers; }
    bool has_mtp() const { return num_nextn_predict_layers > 0; }
    // ratio of layer `l` (l == n_layers() is the MTP block)
    int ratio(int l) const { return compress_ratios[l]; }
    bool is_hash_layer(int l) const { return l < num_hash_layers; }
    int hc_dim() const { return (2 + hc_mult) * hc_mult; }  // rows of hc_*_fn (24)
    bool qat_release() const { return qat == "release"; }
    bool torch_ties() const { return indexer_ties == "torch"; }
};

// Parses and validates a config. `source` names the file in error messages. Errors are one line naming the key.
model_config config_from_json(const nlohmann::json& j, const std::string& source);
// Reads `path` (a config.json, or a directory holding one).
model_config load_config(const std::string& path);
// Writes the HF-style JSON (the keys config_from_json reads).
nlohmann::json config_to_json(const model_config& cfg);
// Throws trex::error naming the offending key when dimensions are inconsistent.
void validate_config(const model_config& cfg, const std::string& source);

}  // namespace trex
