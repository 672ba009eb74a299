#include "trex/plan/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "trex/base/error.hpp"
#include "trex/model/config.hpp"
#include "trex/model/counts.hpp"
#include "trex/model/inventory.hpp"
#include "trex/plan/hardware.hpp"

namespace trex::plan {

namespace {

bool contains(const std::string& s, const char* part) {
    return s.find(part) != std::string::npos;
}

void add(plan_layer& L, double bytes, bool tp, act_group g, bool fp8 = false) {
    L.acts.push_back(act_item{bytes, tp, g, fp8});
}

// ---------------------------------------------------------------------------------------------------------------
// DeepSeek-V4: parameters from the engine's tensor inventory, FLOPs from its counter (per layer), activations from
// the layer's shapes (they follow the saved-tensor anatomy measured for V4-Pro, planner_facts §3.2).
plan_model build_v4(const model_config& cfg, const std::string& name, const std::string& path, int64_t S,
                    bool dense_csa) {
    plan_model m;
    m.name = name;
    m.path = path;
    m.arch = "deepseek_v4";
    m.hidden = cfg.hidden_size;
    m.vocab = cfg.vocab_size;
    m.n_main_layers = cfg.n_layers();
    m.n_mtp = cfg.num_nextn_predict_layers;
    m.heads = cfg.num_attention_heads;
    m.kv_heads = 1;
    m.n_experts = cfg.n_routed_experts;
    m.topk = cfg.num_experts_per_tok;
    m.seq_len = S;
    const int NL = m.n_main_layers + m.n_mtp;
    m.layers.resize(NL);

    const auto inv = build_inventory(cfg, true);
    for (const auto& t : inv) {
        if (t.role == tensor_role::hash_table) continue;
        const double n = (double)t.numel();
        if (t.layer < 0 || t.layer >= NL) {
            if (t.is_embedding)
                m.embed_params += n;
            else if (t.is_head)
                m.head_params += n;
            else
                m.top_params += n;
            continue;
        }
        plan_layer& L = m.layers[t.layer];
        const std::string& nm = t.name;
        if (t.expert >= 0) {
            if (t.expert == 0) L.p_expert += n;
            continue;
        }
        const bool tp = contains(nm, ".attn.wq_b.") || contains(nm, ".attn.wo_a.") || contains(nm, ".attn.wo_b.") ||
                        contains(nm, ".attn.attn_sink") ||
                        contains(nm, ".shared_experts.") || contains(nm, ".indexer.wq_b.") ||
                        contains(nm, ".indexer.weights_proj.");
        (tp ? L.p_tp : L.p_rep) += n;
        if (contains(nm, ".attn.wq_b.")) L.f_fwd_up_proj += 2 * n;
        if (contains(nm, ".shared_experts.")) L.f_fwd_mlp += 2 * n;
        if (contains(nm, ".ffn.gate.weight")) L.f_router += 6 * n;
    }
    flops_options fo;
    fo.seq_len = S;
    fo.include_mtp = true;
    fo.dense_csa = dense_csa;
    const flops_breakdown fc = training_flops_per_token(cfg, fo);
    fo.causal = false;
    const flops_breakdown fn = training_flops_per_token(cfg, fo);
    m.f_top = fc.top_matmul;

    const double d = cfg.hidden_size, hc = (double)cfg.hc_mult * d, Hc = (double)cfg.num_attention_heads * cfg.head_dim;
    const double dc = cfg.q_lora_rank, c = cfg.head_dim, gdg = (double)cfg.o_groups * cfg.o_lora_rank;
    const double I = cfg.moe_intermediate_size, ns = cfg.n_shared_experts, K = cfg.num_experts_per_tok;
    for (int l = 0; l < NL; l++) {
        plan_layer& L = m.layers[l];
        const int ratio = cfg.ratio(l);
        L.mtp = l >= m.n_main_layers;
        L.moe = true;
        L.attn_kind = ratio == 0 ? "v4-swa" : ratio == 4 ? "v4-csa" : "v4-hca";
        L.n_experts = cfg.n_routed_experts;
        L.topk = cfg.num_experts_per_tok;
        L.f_gemm = fc.layer_matmul[l] - fc.layer_routed[l];
        L.f_expert = fc.layer_routed[l];
        L.f_core = fc.layer_attention[l];
        L.f_core_nc = fn.layer_attention[l];
        L.f_indexer = fc.layer_indexer[l];
        L.f_indexer_nc = fn.layer_indexer[l];
        L.residual_bytes = 2 * hc;
        L.dispatch_elems = K * d;
        L.cp_kv_bytes = 2 * c;
        L.muon_min_dim = std::min(d, dc);
        L.expert_min_dim = I;
        // attention sublayer
        add(L, 2 * hc * 2, false, act_group::mhc);         // mHC branch inputs of both sublayers (4d each)
        add(L, 2 * d, false, act_group::base);             // attn_norm input
        add(L, 2 * d, false, act_group::norm, true);       // attn_norm output = wq_a / wkv input
        add(L, 2 * dc, false, act_group::base);            // wq_a output
        add(L, 2 * dc, false, act_group::norm, true);      // q_norm output = wq_b input
        add(L, 2 * c * 2, false, act_group::base);         // kv and kv_norm output
        add(L, 2 * Hc, true, act_group::up_proj);          // wq_b output (the wide projection)
        add(L, 2 * 2 * Hc, true, act_group::attn_scores);  // sparse-attention query/key gathers
        add(L, 2 * Hc, true, act_group::base, true);       // attention output = wo_a input
        add(L, 2 * gdg, true, act_group::base, true);      // wo_a output = wo_b input
        if (ratio == 4)
            add(L, 2.0 * cfg.index_n_heads * cfg.index_head_dim + 4.0 * cfg.index_n_heads, true,
                act_group::base);  // indexer queries and weights
        // FFN sublayer
        add(L, 2 * d, false, act_group::base);                       // ffn_norm input
        add(L, 2 * d, false, act_group::norm, true);                 // ffn_norm output = gate / expert input
        add(L, 4.0 * cfg.n_routed_experts, false, act_group::base);  // router scores (fp32)
        add(L, 2 * K * d, true, act_group::base, true);              // dispatched token copies
        add(L, 2 * K * 2 * I, true, act_group::moe_fc1);
        add(L, 2 * K * I, true, act_group::moe_act, true);
        add(L, 2 * ns * 2 * I, true, act_group::mlp_fc1);
        add(L, 2 * ns * I, true, act_group::mlp_act, true);
    }
    return m;
}

// ---------------------------------------------------------------------------------------------------------------
// Generic transformer (configs/plan/*.json).
struct generic_spec {
    int h = 0, V = 0, L = 0, mtp = 0;
    bool tied = false, layernorm = false, dropout = false;
    std::string attn = "gqa";
    int H = 0, G = 0, dh = 0;                     // gqa
    int ql = 0, kvl = 0, dn = 0, dr = 0, dv = 0;  // mla
    bool gated = true;
    int F = 0;
    bool has_moe = false;
    int first_dense = 0, freq = 1, E = 0, K = 0, Fm = 0, ns = 0, Fs = 0;
};

generic_spec parse_generic(const jreader& r) {
    r.check_keys({"name", "arch", "hidden_size", "vocab_size", "num_layers", "tie_word_embeddings", "norm", "dropout",
                  "attention", "ffn", "moe", "mtp_layers"});
    generic_spec g;
    g.h = (int)r.integer_req("hidden_size", 1, 1 << 20);
    g.V = (int)r.integer_req("vocab_size", 1, 1 << 24);
    g.L = (int)r.integer_req("num_layers", 1, 100000);
    g.mtp = (int)r.integer("mtp_layers", 0, 0, 8);
    g.tied = r.boolean("tie_word_embeddings", false);
    g.layernorm = r.choice("norm", "rmsnorm", {"rmsnorm", "layernorm"}) == "layernorm";
    g.dropout = r.boolean("dropout", false);
    const jreader a = r.object("attention");
    g.attn = a.choice("type", "gqa", {"gqa", "mla"});
    g.H = (int)a.integer_req("heads", 1, 1 << 16);
    if (g.attn == "gqa") {
        a.check_keys({"type", "heads", "kv_heads", "head_dim"});
        g.G = (int)a.integer("kv_heads", g.H, 1, g.H);
        g.dh = (int)a.integer("head_dim", g.h / g.H, 1, 1 << 16);
        if (g.H % g.G != 0) a.fail("kv_heads", fmt::format("{} does not divide heads ({})", g.G, g.H));
    } else {
        a.check_keys(
            {"type", "heads", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
        g.ql = (int)a.integer("q_lora_rank", 0, 0, 1 << 20);
        g.kvl = (int)a.integer_req("kv_lora_rank", 1, 1 << 20);
        g.dn = (int)a.integer_req("qk_nope_head_dim", 1, 1 << 16);
        g.dr = (int)a.integer_req("qk_rope_head_dim", 0, 1 << 16);
        g.dv = (int)a.integer_req("v_head_dim", 1, 1 << 16);
        g.G = g.H;
    }
    const jreader f = r.object("ffn");
    f.check_keys({"activation", "intermediate_size"});
    g.gated = f.choice("activation", "swiglu", {"swiglu", "gelu"}) == "swiglu";
    g.F = (int)f.integer("intermediate_size", 0, 0, 1 << 24);
    if (r.has("moe")) {
        const jreader e = r.object("moe");
        e.check_keys({"first_k_dense", "layer_freq", "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
                      "n_shared_experts", "shared_intermediate_size"});
        g.has_moe = true;
        g.first_dense = (int)e.integer("first_k_dense", 0, 0, g.L);
        g.freq = (int)e.integer("layer_freq", 1, 1, g.L);
        g.E = (int)e.integer_req("n_routed_experts", 1, 1 << 20);
        g.K = (int)e.integer_req("num_experts_per_tok", 1, g.E);
        g.Fm = (int)e.integer_req("moe_intermediate_size", 1, 1 << 24);
        g.ns = (int)e.integer("n_shared_experts", 0, 0, 64);
        g.Fs = (int)e.integer("shared_intermediate_size", (int64_t)g.ns * g.Fm, 0, 1 << 24);
    }
    const bool any_dense = !g.has_moe || g.first_dense > 0 || g.freq > 1;
    if (any_dense && g.F == 0) r.fail("ffn.intermediate_size", "needed by the dense FFN layers (missing or 0)");
    return g;
}

plan_layer generic_layer(const generic_spec& g, bool moe, bool mtp, int64_t S, bool flash) {
    plan_layer L;
    L.moe = moe;
    L.mtp = mtp;
    const double h = g.h;
    const double norm = g.layernorm ? 2 * h : h;
    // attention
    double core_per_key = 0;  // training FLOPs per token per key: 3 passes × 2 (FMA) × H × (d_qk + d_v)
    if (g.attn == "gqa") {
        L.attn_kind = "gqa";
        const double q = (double)g.H * g.dh, kv = (double)g.G * g.dh;
        L.p_tp += h * q + 2 * h * kv + q * h;
        core_per_key = 6.0 * g.H * (2.0 * g.dh);
        add(L, 2 * h, false, act_group::base);
        add(L, 2 * h, false, act_group::norm, true);
        add(L, 2 * (q + 2 * kv), true, act_group::base);
        add(L, 2 * q, true, act_group::base, true);
        L.cp_kv_bytes = 2 * 2 * kv;
    } else {
        L.attn_kind = "mla";
        const double H = g.H, qk = g.dn + g.dr;
        double p_up = 0;
        if (g.ql > 0) {
            L.p_rep += h * g.ql + g.ql;  // q down-projection and its norm
            p_up += (double)g.ql * H * qk;
        } else {
            L.p_tp += h * H * qk;
        }
        L.p_rep += h * (g.kvl + g.dr) + g.kvl;  // kv down-projection (+ shared rope key) and its norm
        p_up += (double)g.kvl * H * (g.dn + g.dv);
        L.p_tp += p_up + H * g.dv * h;
        L.f_fwd_up_proj = 2 * p_up;
        core_per_key = 6.0 * H * (qk + g.dv);
        add(L, 2 * h, false, act_group::base);
        add(L, 2 * h, false, act_group::norm, true);
        if (g.ql > 0) {
            add(L, 2.0 * g.ql, false, act_group::base);
            add(L, 2.0 * g.ql, false, act_group::norm, true);
        }
        add(L, 2.0 * (g.kvl + g.dr), false, act_group::base);
        add(L, 2.0 * g.kvl, false, act_group::norm, true);
        add(L, 2 * H * (2 * qk + g.dv), true, act_group::up_proj);  // q, k, v
        add(L, 2 * H * g.dv, true, act_group::base, true);          // core output
        L.cp_kv_bytes = 2 * H * (qk + g.dv);
    }
    if (g.dropout) add(L, h, false, act_group::base);                         // attention dropout mask (1 byte)
    if (!flash) add(L, 5.0 * g.H * (double)S, true, act_group::attn_scores);  // Korthikanti's 5·a·s per token
    L.p_rep += norm;
    L.f_core = core_per_key * (double)S / 2;  // causal: the mean query sees S/2 keys (Megatron's r = 1/2)
    L.f_core_nc = core_per_key * (double)S;
    // FFN
    const double gm = g.gated ? 3 : 2;
    add(L, 2 * h, false, act_group::base);
    add(L, 2 * h, false, act_group::norm, true);
    L.p_rep += norm;
    if (!moe) {
        L.p_tp += gm * h * g.F;
        L.f_fwd_mlp = 2 * gm * h * g.F;
        add(L, 2.0 * (g.gated ? 2 : 1) * g.F, true, act_group::mlp_fc1);
        add(L, 2.0 * g.F, true, act_group::mlp_act, true);
    } else {
        L.n_experts = g.E;
        L.topk = g.K;
        L.p_rep += (double)g.E * h;  // router
        L.f_router = 6.0 * g.E * h;
        L.p_expert = 3 * h * g.Fm;
        L.f_expert = 6.0 * g.K * L.p_expert;
        L.dispatch_elems = (double)g.K * h;
        add(L, 4.0 * g.E, false, act_group::base);
        add(L, 2.0 * g.K * h, true, act_group::base, true);
        add(L, 2.0 * g.K * 2 * g.Fm, true, act_group::moe_fc1);
        add(L, 2.0 * g.K * g.Fm, true, act_group::moe_act, true);
        if (g.Fs > 0) {
            L.p_tp += 3 * h * g.Fs;
            L.f_fwd_mlp = 2 * 3 * h * g.Fs;
            add(L, 2.0 * 2 * g.Fs, true, act_group::mlp_fc1);
            add(L, 2.0 * g.Fs, true, act_group::mlp_act, true);
        }
    }
    if (g.dropout) add(L, h, false, act_group::base);  // MLP dropout mask
    if (mtp) {
        L.p_tp += 2 * h * h;  // eh_proj on [norm(embedding); norm(hidden)]
        L.p_rep += 2 * h;     // enorm, hnorm
        add(L, 2 * 2 * h, false, act_group::base);
    }
    L.f_gemm = 6.0 * (L.p_tp + L.p_rep - (g.layernorm ? 4 * h : 2 * h) - (mtp ? 2 * h : 0));  // matrices only
    if (g.attn == "mla") L.f_gemm -= 6.0 * ((g.ql > 0 ? g.ql : 0) + g.kvl);                   // MLA norms
    L.residual_bytes = 2 * h;
    L.muon_min_dim = h;
    L.expert_min_dim = std::min(h, (double)g.Fm);
    return L;
}

plan_model build_generic(const jreader& r, const std::string& name, const std::string& path, int64_t S, bool flash) {
    const generic_spec g = parse_generic(r);
    plan_model m;
    m.name = name;
    m.path = path;
    m.arch = "transformer";
    m.hidden = g.h;
    m.vocab = g.V;
    m.n_main_layers = g.L;
    m.n_mtp = g.mtp;
    m.heads = g.H;
    m.kv_heads = g.G;
    m.n_experts = g.has_moe ? g.E : 0;
    m.topk = g.has_moe ? g.K : 0;
    m.seq_len = S;
    m.flash_attention = flash;
    m.embed_params = (double)g.V * g.h;
    m.head_params = g.tied ? 0 : (double)g.V * g.h;
    m.top_params = g.layernorm ? 2.0 * g.h : g.h;
    bool last_moe = false;
    for (int l = 0; l < g.L; l++) {
        const bool moe = g.has_moe && l >= g.first_dense && (l - g.first_dense) % g.freq == 0;
        m.layers.push_back(generic_layer(g, moe, false, S, flash));
        last_moe = moe;
    }
    for (int k = 0; k < g.mtp; k++) m.layers.push_back(generic_layer(g, last_moe, true, S, flash));
    return m;
}

void finish(plan_model& m) {
    m.total_params = m.embed_params + m.head_params + m.top_params;
    m.active_params = m.head_params + m.top_params;  // excl. the input embedding
    for (const auto& L : m.layers) {
        m.total_params += L.p_tp + L.p_rep + L.n_experts * L.p_expert;
        if (!L.mtp) m.active_params += L.p_tp + L.p_rep + L.topk * L.p_expert;
    }
}

}  // namespace

plan_model plan_model_from_json(const json& j, const std::string& source, int64_t S, bool flash, bool dense_csa) {
    TREX_CHECK(S >= 1, "sequence length must be >= 1 (got {})", S);
    plan_model m;
    if (j.is_object() && j.contains("compress_ratios")) {  // a DeepSeek-V4 config.json
        const model_config cfg = config_from_json(j, source);
        m = build_v4(cfg, std::filesystem::path(source).stem().string(), source, S, dense_csa);
    } else {
        const jreader r(j, source);
        const std::string arch = r.choice("arch", "transformer", {"transformer", "deepseek_v4"});
        const std::string name = r.str("name", std::filesystem::path(source).stem().string());
        if (arch == "deepseek_v4") {
            r.check_keys({"name", "arch", "config"});
            std::string cfg_path = r.str_req("config");
            const auto rel = std::filesystem::path(source).parent_path() / cfg_path;
            if (!std::filesystem::exists(cfg_path) && std::filesystem::exists(rel)) cfg_path = rel.string();
            cfg_path = resolve_data_file(cfg_path, "configs", "DeepSeek-V4 config");
            m = build_v4(load_config(cfg_path), name, source, S, dense_csa);
        } else {
            m = build_generic(r, name, source, S, flash);
        }
    }
    finish(m);
    return m;
}

plan_model load_plan_model(const std::string& name_or_path, int64_t S, bool flash, bool dense_csa) {
    // a planner description (configs/plan/<name>.json), else one of the engine's V4 configs (configs/<name>.json)
    std::string path;
    for (const char* dir : {"configs/plan", "configs"}) {
        try {
            path = resolve_data_file(name_or_path, dir, "model");
            break;
        } catch (const trex::error&) {
        }
    }
    TREX_CHECK(!path.empty(), "model '{}' not found (a file, configs/plan/<name>.json or configs/<name>.json)",
               name_or_path);
    return plan_model_from_json(read_json_file(path), path, S, flash, dense_csa);
}

model_flops flops_per_token(const plan_model& m, const flops_convention& c) {
    TREX_CHECK(c.name == "megatron" || c.name == "deepseek", "unknown FLOPs convention '{}' (megatron, deepseek)",
               c.name);
    const bool meg = c.name == "megatron";
    model_flops f;
    int n_used = 0;
    for (const auto& L : m.layers) {
        if (L.mtp && !meg) continue;
        double gemm = L.f_gemm + L.f_expert;
        if (meg && m.arch == "transformer") gemm -= L.f_router;
        const double att = c.causal ? L.f_core : L.f_core_nc;
        const double idx = c.causal ? L.f_indexer : L.f_indexer_nc;
        if (L.mtp)
            f.mtp += gemm + att + idx;
        else
            f.gemm += gemm, f.attention += att, f.indexer += idx;
        n_used++;
    }
    const int head_uses = 1 + (meg ? m.n_mtp : 0);
    f.head = m.head_flops_per_use() * head_uses;
    f.gemm += m.f_top;
    f.total = f.gemm + f.attention + f.indexer + f.head + f.mtp;
    const std::string core =
        m.arch == "deepseek_v4"
            ? (c.causal ? "12*H*c*n_keys with exact causal key sets (SWA/CSA/HCA)"
                        : "12*H*c*n_keys with every query seeing the last position's key set")
            : fmt::format("6*H*(d_qk+d_v)*{} per layer", c.causal ? "S/2 (causal)" : "S (non-causal)");
    f.formula = fmt::format(
        "{} convention, S={}: sum over {} layers{} of 6*N_matrices_applied (routed experts top-{} of {}{}) = {:.4g} GF"
        " + attention core {} = {:.4g} GF{} + {}MTP = {:.4g} GF + head 6*V*d*{} = {:.4g} GF; total {:.4g} GF/token"
        " (embedding, norms and elementwise ops not counted)",
        c.name, m.seq_len, n_used, meg ? " (incl. MTP)" : " (main model, no MTP)", m.topk, m.n_experts,
        meg && m.arch == "transformer" ? ", router excluded" : ", router included", f.gemm / 1e9, core,
        f.attention / 1e9,
        m.arch == "deepseek_v4" ? fmt::format(" + indexer (4*N_idx + 6*H_I*c_I*keys) = {:.4g} GF", f.indexer / 1e9)
                                : std::string(),
        meg ? "" : "no ", f.mtp / 1e9, head_uses, f.head / 1e9, f.total / 1e9);
    return f;
}

}  // namespace trex::plan
