// Config parsing and validation (spec §1.1, §5). Every error is one line: "<source>: key '<key>': <what is wrong>".
//
// Choices:
//  * Keys the model needs are required; keys that are metadata or have an unambiguous default are optional
//    (architectures, model_type, transformers_version, use_cache, attention_bias (false), attention_dropout (0),
//    torch_dtype, expert_dtype, quantization_config, topk_method, num_key_value_heads (1), tie_word_embeddings (false),
//    norm_topk_prob (true), bos/eos_token_id (0/1), initializer_range (0.006), rope_scaling (none)).
//    Unknown keys are ignored.
//  * Integers must be JSON integers (4.0 is rejected); floats accept any JSON number.
//  * compress_ratios: 0 = sliding window only, 4 = CSA (overlapping compressor + indexer; the reference code
//    hard-wires both to ratio 4), any ratio > 4 = HCA. Ratios 1..3 are rejected: they would be an HCA that compresses
//    less than CSA, which the code never builds. The MTP entries must be 0 (the MTP block is SWA-only).
#include "trex/model/config.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "trex/base/error.hpp"
#include "trex/base/json_text.hpp"

namespace trex {

namespace {

using json = nlohmann::json;

// The release's QAT blocks fit the shapes: the KV's non-RoPE dims in blocks of 64; with CSA layers the indexer's
// vectors rotated (a power of two) and in blocks of 32.
bool kv_blocks_fit(const model_config& cfg) {
    return (cfg.head_dim - cfg.qk_rope_head_dim) % 64 == 0;
}
bool index_blocks_fit(const model_config& cfg) {
    const bool csa = std::find(cfg.compress_ratios.begin(), cfg.compress_ratios.end(), 4) != cfg.compress_ratios.end();
    const int cI = cfg.index_head_dim;
    return !csa || (cI >= 32 && (cI & (cI - 1)) == 0);
}

// The numerics a config has without its `qat` / `indexer_ties` keys: a release checkpoint (quantization_config) the
// release's (QAT where the shapes allow its blocks), anything else fp32 and stable ties.
std::string implied_qat(const model_config& cfg) {
    return cfg.has_fp8_quantization && kv_blocks_fit(cfg) && index_blocks_fit(cfg) ? "release" : "none";
}
std::string implied_ties(const model_config& cfg) {
    return cfg.has_fp8_quantization ? "torch" : "stable";
}

[[noreturn]] void key_error(const std::string& source, const std::string& key, const std::string& msg) {
    throw_error(fmt::format("{}: key '{}': {}", source, key, msg));
}

// Reads typed values out of one JSON object; `prefix` names nested objects ("rope_scaling.").
struct reader {
    const json& j;
    const std::string& source;
    std::string prefix;

    const json* find(const std::string& key, bool required) const {
        auto it = j.find(key);
        if (it == j.end()) {
            if (required) key_error(source, prefix + key, "missing required key");
            return nullptr;
        }
        if (it->is_null()) {
            if (required) key_error(source, prefix + key, "is null, a value is required");
            return nullptr;
        }
        return &*it;
    }

    int64_t to_int(const json& v, const std::string& key) const {
        if (!v.is_number_integer())
            key_error(source, key, fmt::format("expected an integer, got {} {}", json_type_name(v), json_show(v)));
        if (v.is_number_unsigned()) {
            uint64_t u = v.get<uint64_t>();
            if (u > (uint64_t)INT64_MAX) key_error(source, key, fmt::format("value {} is out of range", u));
            return (int64_t)u;
        }
        return v.get<int64_t>();
    }

    // An int in [lo, INT_MAX].
    void get_int(const std::string& key, int& out, int lo, bool required = true) const {
        const json* v = find(key, required);
        if (!v) return;
        int64_t x = to_int(*v, prefix + key);
        if (x < lo) key_error(source, prefix + key, fmt::format("must be >= {} (got {})", lo, x));
        if (x > INT_MAX) key_error(source, prefix + key, fmt::format("value {} is out of range", x));
        out = (int)x;
    }
    void get_int64(const std::string& key, int64_t& out, int64_t lo, bool required = true) const {
        const json* v = find(key, required);
        if (!v) return;
        int64_t x = to_int(*v, prefix + key);
        if (x < lo) key_error(source, prefix + key, fmt::format("must be >= {} (got {})", lo, x));
        out = x;
    }
    // A number; `positive` requires > 0, otherwise >= 0 when `nonneg`.
    void get_double(const std::string& key, double& out, bool required = true, bool positive = false,
                    bool nonneg = false) const {
        const json* v = find(key, required);
        if (!v) return;
        if (!v->is_number())
            key_error(source, prefix + key,
                      fmt::format("expected a number, got {} {}", json_type_name(*v), json_show(*v)));
        double x = v->get<double>();
        if (!std::isfinite(x)) key_error(source, prefix + key, "must be finite");
        if (positive && !(x > 0)) key_error(source, prefix + key, fmt::format("must be > 0 (got {})", x));
        if (nonneg && x < 0) key_error(source, prefix + key, fmt::format("must be >= 0 (got {})", x));
        out = x;
    }
    void get_bool(const std::string& key, bool& out, bool required = true) const {
        const json* v = find(key, required);
        if (!v) return;
        if (!v->is_boolean())
            key_error(source, prefix + key,
                      fmt::format("expected a boolean, got {} {}", json_type_name(*v), json_show(*v)));
        out = v->get<bool>();
    }
    void get_string(const std::string& key, std::string& out, bool required = true) const {
        const json* v = find(key, required);
        if (!v) return;
        if (!v->is_string())
            key_error(source, prefix + key,
                      fmt::format("expected a string, got {} {}", json_type_name(*v), json_show(*v)));
        out = v->get<std::string>();
    }
    void get_int_array(const std::string& key, std::vector<int>& out, bool required = true) const {
        const json* v = find(key, required);
        if (!v) return;
        if (!v->is_array())
            key_error(source, prefix + key,
                      fmt::format("expected an array, got {} {}", json_type_name(*v), json_show(*v)));
        out.clear();
        for (size_t i = 0; i < v->size(); i++) {
            const json& e = (*v)[i];
            if (!e.is_number_integer())
                key_error(source, prefix + key,
                          fmt::format("entry {} must be an integer, got {} {}", i, json_type_name(e), json_show(e)));
            int64_t x = to_int(e, prefix + key);
            if (x < 0) key_error(source, prefix + key, fmt::format("entry {} must be >= 0 (got {})", i, x));
            if (x > INT_MAX) key_error(source, prefix + key, fmt::format("entry {} is out of range ({})", i, x));
            out.push_back((int)x);
        }
    }
};

}  // namespace

model_config config_from_json(const json& j, const std::string& source) {
    if (!j.is_object())
        throw_error(fmt::format("{}: the config must be a JSON object, got {}", source, json_type_name(j)));
    model_config cfg;
    reader r{j, source, ""};

    // optional metadata
    std::string model_type;
    r.get_string("model_type", model_type, false);
    if (!model_type.empty() && model_type != "deepseek_v4")
        key_error(source, "model_type",
                  fmt::format("unsupported model type '{}' (expected 'deepseek_v4')", model_type));

    // optional keys of the release config that the model does not implement: accepted only at their V4 values
    bool attention_bias = false;
    r.get_bool("attention_bias", attention_bias, false);
    if (attention_bias) key_error(source, "attention_bias", "true is unsupported (DeepSeek-V4 has no attention bias)");
    double attention_dropout = 0.0;
    r.get_double("attention_dropout", attention_dropout, false);
    if (attention_dropout != 0.0)
        key_error(source, "attention_dropout", fmt::format("{} is unsupported (only 0)", attention_dropout));

    // sizes
    r.get_int("vocab_size", cfg.vocab_size, 1);
    r.get_int("hidden_size", cfg.hidden_size, 1);
    r.get_int("num_hidden_layers", cfg.num_hidden_layers, 1);
    r.get_int("num_attention_heads", cfg.num_attention_heads, 1);
    r.get_int("num_key_value_heads", cfg.num_key_value_heads, 1, false);
    r.get_int("head_dim", cfg.head_dim, 1);
    r.get_int("qk_rope_head_dim", cfg.qk_rope_head_dim, 0);
    r.get_int("q_lora_rank", cfg.q_lora_rank, 1);
    r.get_int("o_groups", cfg.o_groups, 1);
    r.get_int("o_lora_rank", cfg.o_lora_rank, 1);
    r.get_int("sliding_window", cfg.sliding_window, 1);
    r.get_int_array("compress_ratios", cfg.compress_ratios);
    r.get_double("rope_theta", cfg.rope_theta, true, true);
    r.get_double("compress_rope_theta", cfg.compress_rope_theta, true, true);

    if (const json* rs = r.find("rope_scaling", false)) {
        if (!rs->is_object())
            key_error(source, "rope_scaling",
                      fmt::format("expected an object, got {} {}", json_type_name(*rs), json_show(*rs)));
        reader rr{*rs, source, "rope_scaling."};
        std::string type;
        rr.get_string("type", type, false);
        std::string rope_type;
        rr.get_string("rope_type", rope_type, false);
        if (type.empty()) type = rope_type;
        if (type.empty()) key_error(source, "rope_scaling.type", "missing required key (or 'rope_type')");
        if (!rope_type.empty() && rope_type != type)
            key_error(source, "rope_scaling.rope_type",
                      fmt::format("'{}' contradicts rope_scaling.type '{}'", rope_type, type));
        if (type != "yarn")
            key_error(source, "rope_scaling.type", fmt::format("unsupported rope scaling '{}' (only 'yarn')", type));
        cfg.rope_scaling.type = type;
        rr.get_double("factor", cfg.rope_scaling.factor, true, true);
        rr.get_int64("original_max_position_embeddings", cfg.rope_scaling.original_max_position_embeddings, 1);
        rr.get_double("beta_fast", cfg.rope_scaling.beta_fast, false, true);
        rr.get_double("beta_slow", cfg.rope_scaling.beta_slow, false, true);
    }

    // lightning indexer
    r.get_int("index_n_heads", cfg.index_n_heads, 0);
    r.get_int("index_head_dim", cfg.index_head_dim, 0);
    r.get_int("index_topk", cfg.index_topk, 0);

    // MoE
    r.get_int("n_routed_experts", cfg.n_routed_experts, 1);
    r.get_int("num_experts_per_tok", cfg.num_experts_per_tok, 1);
    r.get_int("n_shared_experts", cfg.n_shared_experts, 1);
    r.get_int("moe_intermediate_size", cfg.moe_intermediate_size, 1);
    r.get_int("num_hash_layers", cfg.num_hash_layers, 0);
    r.get_string("scoring_func", cfg.scoring_func);
    r.get_double("routed_scaling_factor", cfg.routed_scaling_factor, true, true);
    r.get_bool("norm_topk_prob", cfg.norm_topk_prob, false);
    r.get_string("topk_method", cfg.topk_method, false);
    r.get_double("swiglu_limit", cfg.swiglu_limit, true, false, true);
    r.get_string("hidden_act", cfg.hidden_act);

    // mHC, norms
    r.get_int("hc_mult", cfg.hc_mult, 1);
    r.get_int("hc_sinkhorn_iters", cfg.hc_sinkhorn_iters, 1);
    r.get_double("hc_eps", cfg.hc_eps, true, true);
    r.get_double("rms_norm_eps", cfg.rms_norm_eps, true, true);

    // misc
    r.get_int("num_nextn_predict_layers", cfg.num_nextn_predict_layers, 0);
    r.get_int64("max_position_embeddings", cfg.max_position_embeddings, 1);
    r.get_bool("tie_word_embeddings", cfg.tie_word_embeddings, false);
    r.get_int("bos_token_id", cfg.bos_token_id, 0, false);
    r.get_int("eos_token_id", cfg.eos_token_id, 0, false);
    r.get_double("initializer_range", cfg.initializer_range, false, true);
    r.get_string("torch_dtype", cfg.torch_dtype, false);
    r.get_string("expert_dtype", cfg.expert_dtype, false);
    if (const json* q = r.find("quantization_config", false)) {
        if (!q->is_object())
            key_error(source, "quantization_config",
                      fmt::format("expected an object, got {} {}", json_type_name(*q), json_show(*q)));
        cfg.has_fp8_quantization = true;
    }
    cfg.qat = implied_qat(cfg);
    cfg.indexer_ties = implied_ties(cfg);
    r.get_string("qat", cfg.qat, false);
    r.get_string("indexer_ties", cfg.indexer_ties, false);

    validate_config(cfg, source);
    return cfg;
}

void validate_config(const model_config& cfg, const std::string& source) {
    auto fail = [&](const char* key, const std::string& msg) { key_error(source, key, msg); };
    auto positive = [&](const char* key, int64_t v) {
        if (v < 1) fail(key, fmt::format("must be >= 1 (got {})", v));
    };
    positive("vocab_size", cfg.vocab_size);
    positive("hidden_size", cfg.hidden_size);
    positive("num_hidden_layers", cfg.num_hidden_layers);
    positive("num_attention_heads", cfg.num_attention_heads);
    positive("head_dim", cfg.head_dim);
    positive("q_lora_rank", cfg.q_lora_rank);
    positive("o_groups", cfg.o_groups);
    positive("o_lora_rank", cfg.o_lora_rank);
    positive("sliding_window", cfg.sliding_window);
    positive("n_routed_experts", cfg.n_routed_experts);
    positive("num_experts_per_tok", cfg.num_experts_per_tok);
    positive("n_shared_experts", cfg.n_shared_experts);
    positive("moe_intermediate_size", cfg.moe_intermediate_size);
    positive("max_position_embeddings", cfg.max_position_embeddings);

    if (cfg.num_key_value_heads != 1)
        fail("num_key_value_heads",
             fmt::format("must be 1 (DeepSeek-V4 uses one shared K=V head), got {}", cfg.num_key_value_heads));
    const int r = cfg.qk_rope_head_dim;
    if (r < 0 || r % 2 != 0) fail("qk_rope_head_dim", fmt::format("must be even and >= 0 (got {})", r));
    if (r > cfg.head_dim) fail("qk_rope_head_dim", fmt::format("{} exceeds head_dim ({})", r, cfg.head_dim));
    const int64_t hc = (int64_t)cfg.num_attention_heads * cfg.head_dim;
    if (hc % cfg.o_groups != 0)
        fail("o_groups",
             fmt::format("num_attention_heads*head_dim ({}) is not divisible by o_groups ({})", hc, cfg.o_groups));

    // compression schedule
    if (cfg.num_nextn_predict_layers < 0 || cfg.num_nextn_predict_layers > 1)
        fail("num_nextn_predict_layers",
             fmt::format("MTP depth {} is unsupported (must be 0 or 1)", cfg.num_nextn_predict_layers));
    const size_t want = (size_t)cfg.num_hidden_layers + (size_t)cfg.num_nextn_predict_layers;
    if (cfg.compress_ratios.size() != want)
        fail("compress_ratios",
             fmt::format("has {} entries, expected num_hidden_layers + num_nextn_predict_layers = {}",
                         cfg.compress_ratios.size(), want));
    bool any_csa = false;
    for (size_t l = 0; l < cfg.compress_ratios.size(); l++) {
        const int m = cfg.compress_ratios[l];
        if (m < 0) fail("compress_ratios", fmt::format("entry {} must be >= 0 (got {})", l, m));
        if (m >= 1 && m <= 3)
            fail("compress_ratios",
                 fmt::format("entry {} is {}: a ratio must be 0 (sliding window only), 4 (CSA: the overlapping "
                             "compressor and indexer are hard-wired to ratio 4) or > 4 (HCA)",
                             l, m));
        if ((int)l >= cfg.num_hidden_layers && m != 0)
            fail("compress_ratios", fmt::format("entry {} (the MTP block) must be 0, got {}", l, m));
        if (m == 4) any_csa = true;
    }

    // lightning indexer
    if (cfg.index_n_heads < 0) fail("index_n_heads", fmt::format("must be >= 0 (got {})", cfg.index_n_heads));
    if (cfg.index_head_dim < 0) fail("index_head_dim", fmt::format("must be >= 0 (got {})", cfg.index_head_dim));
    if (cfg.index_topk < 0) fail("index_topk", fmt::format("must be >= 0 (got {})", cfg.index_topk));
    if (any_csa) {
        if (cfg.index_n_heads < 1)
            fail("index_n_heads", fmt::format("must be >= 1 when a layer uses CSA (got {})", cfg.index_n_heads));
        if (cfg.index_head_dim < 1)
            fail("index_head_dim", fmt::format("must be >= 1 when a layer uses CSA (got {})", cfg.index_head_dim));
        if (cfg.index_topk < 1)
            fail("index_topk", fmt::format("must be >= 1 when a layer uses CSA (got {})", cfg.index_topk));
        if (r > cfg.index_head_dim)
            fail("qk_rope_head_dim", fmt::format("{} exceeds index_head_dim ({})", r, cfg.index_head_dim));
    }

    // MoE
    if (cfg.num_experts_per_tok > cfg.n_routed_experts)
        fail("num_experts_per_tok",
             fmt::format("{} exceeds n_routed_experts ({})", cfg.num_experts_per_tok, cfg.n_routed_experts));
    if (cfg.num_hash_layers < 0 || cfg.num_hash_layers > cfg.num_hidden_layers)
        fail("num_hash_layers",
             fmt::format("{} is not in [0, num_hidden_layers = {}]", cfg.num_hash_layers, cfg.num_hidden_layers));
    if (cfg.scoring_func != "sqrtsoftplus")
        fail("scoring_func", fmt::format("unsupported scoring function '{}' (only 'sqrtsoftplus')", cfg.scoring_func));
    if (cfg.hidden_act != "silu")
        fail("hidden_act", fmt::format("unsupported activation '{}' (only 'silu')", cfg.hidden_act));
    if (cfg.topk_method != "noaux_tc")
        fail("topk_method", fmt::format("unsupported top-k method '{}' (only 'noaux_tc')", cfg.topk_method));
    if (!cfg.norm_topk_prob)
        fail("norm_topk_prob", "false is unsupported (DeepSeek-V4 always normalises the selected scores)");
    if (!(cfg.routed_scaling_factor > 0))
        fail("routed_scaling_factor", fmt::format("must be > 0 (got {})", cfg.routed_scaling_factor));
    if (!(cfg.swiglu_limit >= 0)) fail("swiglu_limit", fmt::format("must be >= 0 (got {})", cfg.swiglu_limit));

    // mHC, norms, rope
    if (cfg.hc_mult < 1) fail("hc_mult", fmt::format("must be >= 1 (got {})", cfg.hc_mult));
    if (cfg.hc_sinkhorn_iters < 1)
        fail("hc_sinkhorn_iters", fmt::format("must be >= 1 (got {})", cfg.hc_sinkhorn_iters));
    if (!(cfg.hc_eps > 0)) fail("hc_eps", fmt::format("must be > 0 (got {})", cfg.hc_eps));
    if (!(cfg.rms_norm_eps > 0)) fail("rms_norm_eps", fmt::format("must be > 0 (got {})", cfg.rms_norm_eps));
    if (!(cfg.rope_theta > 0)) fail("rope_theta", fmt::format("must be > 0 (got {})", cfg.rope_theta));
    if (!(cfg.compress_rope_theta > 0))
        fail("compress_rope_theta", fmt::format("must be > 0 (got {})", cfg.compress_rope_theta));
    const auto& rs = cfg.rope_scaling;
    if (rs.type != "none" && rs.type != "yarn")
        fail("rope_scaling.type", fmt::format("unsupported rope scaling '{}' (only 'yarn')", rs.type));
    if (rs.type == "yarn") {
        if (!(rs.factor > 0)) fail("rope_scaling.factor", fmt::format("must be > 0 (got {})", rs.factor));
        if (rs.original_max_position_embeddings < 1)
            fail("rope_scaling.original_max_position_embeddings",
                 fmt::format("must be >= 1 (got {})", rs.original_max_position_embeddings));
        if (!(rs.beta_fast > 0)) fail("rope_scaling.beta_fast", fmt::format("must be > 0 (got {})", rs.beta_fast));
        if (!(rs.beta_slow > 0)) fail("rope_scaling.beta_slow", fmt::format("must be > 0 (got {})", rs.beta_slow));
    }

    // misc
    if (cfg.tie_word_embeddings)
        fail("tie_word_embeddings", "true is unsupported (DeepSeek-V4 has a separate head.weight)");
    if (cfg.bos_token_id < 0 || cfg.bos_token_id >= cfg.vocab_size)
        fail("bos_token_id", fmt::format("{} is not in [0, vocab_size = {})", cfg.bos_token_id, cfg.vocab_size));
    if (cfg.eos_token_id < 0 || cfg.eos_token_id >= cfg.vocab_size)
        fail("eos_token_id", fmt::format("{} is not in [0, vocab_size = {})", cfg.eos_token_id, cfg.vocab_size));
    if (!(cfg.initializer_range > 0))
        fail("initializer_range", fmt::format("must be > 0 (got {})", cfg.initializer_range));
    if (!cfg.expert_dtype.empty() && cfg.expert_dtype != "fp4" && cfg.expert_dtype != "fp8")
        fail("expert_dtype", fmt::format("unsupported expert dtype '{}' (only 'fp4' or 'fp8')", cfg.expert_dtype));

    // numerics
    if (cfg.indexer_ties != "stable" && cfg.indexer_ties != "torch")
        fail("indexer_ties", fmt::format("'{}' is not 'stable' or 'torch'", cfg.indexer_ties));
    if (cfg.qat != "none" && cfg.qat != "release") fail("qat", fmt::format("'{}' is not 'none' or 'release'", cfg.qat));
    if (cfg.qat_release()) {  // the release's blocks: KV non-RoPE dims in 64s, indexer vectors rotated, in 32s
        if (!kv_blocks_fit(cfg))
            fail("qat", fmt::format("'release' quantises head_dim − qk_rope_head_dim = {} in blocks of 64; not a "
                                    "multiple of 64",
                                    cfg.head_dim - cfg.qk_rope_head_dim));
        if (!index_blocks_fit(cfg))
            fail("qat", fmt::format("'release' rotates index_head_dim = {} by a Hadamard transform and quantises it "
                                    "in blocks of 32; it must be a power of two >= 32",
                                    cfg.index_head_dim));
    }
}

model_config load_config(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::string file = path;
    if (fs::is_directory(path, ec)) {
        file = (fs::path(path) / "config.json").string();
        if (!fs::exists(file, ec)) throw_error(fmt::format("{}: directory has no config.json", path));
    }
    std::ifstream in(file, std::ios::binary);
    if (!in) throw_error(fmt::format("{}: cannot read config: {}", file, std::strerror(errno)));
    std::stringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw_error(fmt::format("{}: cannot read config: {}", file, std::strerror(errno)));
    json j;
    try {
        j = json::parse(ss.str());
    } catch (const json::parse_error& e) {
        // e.what(): "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ..."
        std::string msg = e.what();
        auto pos = msg.find("] ");
        if (pos != std::string::npos) msg = msg.substr(pos + 2);
        for (char& ch : msg)
            if (ch == '\n' || ch == '\r') ch = ' ';
        throw_error(fmt::format("{}: malformed JSON (byte {}): {}", file, e.byte, msg));
    } catch (const json::out_of_range& e) {  // 406: a number beyond double's range (1e999), thrown while parsing
        const std::string msg = e.what();    // "[json.exception.out_of_range.406] number overflow parsing '1e999'"
        const auto pos = msg.find("] ");
        throw_error(fmt::format("{}: malformed JSON: {}", file, pos == std::string::npos ? msg : msg.substr(pos + 2)));
    }
    return config_from_json(j, file);
}

json config_to_json(const model_config& cfg) {
    json j;
    j["architectures"] = json::array({"DeepseekV4ForCausalLM"});
    j["model_type"] = "deepseek_v4";
    j["vocab_size"] = cfg.vocab_size;
    j["hidden_size"] = cfg.hidden_size;
    j["num_hidden_layers"] = cfg.num_hidden_layers;
    j["num_attention_heads"] = cfg.num_attention_heads;
    j["num_key_value_heads"] = cfg.num_key_value_heads;
    j["head_dim"] = cfg.head_dim;
    j["qk_rope_head_dim"] = cfg.qk_rope_head_dim;
    j["q_lora_rank"] = cfg.q_lora_rank;
    j["o_groups"] = cfg.o_groups;
    j["o_lora_rank"] = cfg.o_lora_rank;
    j["sliding_window"] = cfg.sliding_window;
    j["compress_ratios"] = cfg.compress_ratios;
    j["rope_theta"] = cfg.rope_theta;
    j["compress_rope_theta"] = cfg.compress_rope_theta;
    if (cfg.rope_scaling.type != "none") {
        j["rope_scaling"] = {{"type", cfg.rope_scaling.type},
                             {"factor", cfg.rope_scaling.factor},
                             {"original_max_position_embeddings", cfg.rope_scaling.original_max_position_embeddings},
                             {"beta_fast", cfg.rope_scaling.beta_fast},
                             {"beta_slow", cfg.rope_scaling.beta_slow}};
    }
    j["index_n_heads"] = cfg.index_n_heads;
    j["index_head_dim"] = cfg.index_head_dim;
    j["index_topk"] = cfg.index_topk;
    j["n_routed_experts"] = cfg.n_routed_experts;
    j["num_experts_per_tok"] = cfg.num_experts_per_tok;
    j["n_shared_experts"] = cfg.n_shared_experts;
    j["moe_intermediate_size"] = cfg.moe_intermediate_size;
    j["num_hash_layers"] = cfg.num_hash_layers;
    j["scoring_func"] = cfg.scoring_func;
    j["routed_scaling_factor"] = cfg.routed_scaling_factor;
    j["norm_topk_prob"] = cfg.norm_topk_prob;
    j["topk_method"] = cfg.topk_method;
    j["swiglu_limit"] = cfg.swiglu_limit;
    j["hidden_act"] = cfg.hidden_act;
    j["hc_mult"] = cfg.hc_mult;
    j["hc_sinkhorn_iters"] = cfg.hc_sinkhorn_iters;
    j["hc_eps"] = cfg.hc_eps;
    j["rms_norm_eps"] = cfg.rms_norm_eps;
    j["num_nextn_predict_layers"] = cfg.num_nextn_predict_layers;
    j["max_position_embeddings"] = cfg.max_position_embeddings;
    j["tie_word_embeddings"] = cfg.tie_word_embeddings;
    j["bos_token_id"] = cfg.bos_token_id;
    j["eos_token_id"] = cfg.eos_token_id;
    j["initializer_range"] = cfg.initializer_range;
    j["torch_dtype"] = cfg.torch_dtype;
    if (!cfg.expert_dtype.empty()) j["expert_dtype"] = cfg.expert_dtype;
    if (cfg.has_fp8_quantization) {
        // The release block (spec §1.1); we only keep its presence.
        j["quantization_config"] = {{"activation_scheme", "dynamic"},
                                    {"fmt", "e4m3"},
                                    {"quant_method", "fp8"},
                                    {"scale_fmt", "ue8m0"},
                                    {"weight_block_size", {128, 128}}};
    }
    // the numerics keys when they differ from what the config implies without them
    if (cfg.qat != implied_qat(cfg)) j["qat"] = cfg.qat;
    if (cfg.indexer_ties != implied_ties(cfg)) j["indexer_ties"] = cfg.indexer_ties;
    return j;
}

}  // namespace trex
