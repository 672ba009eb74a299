#include "trex/model/counts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "trex/base/error.hpp"

namespace trex {

namespace {

bool contains(const std::string& s, const char* part) {
    return s.find(part) != std::string::npos;
}
bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
// Last dotted component of the block-relative name starts with "hc_" (hc_attn_fn, hc_head_base, ...).
bool is_mhc_name(const std::string& s) {
    return s.rfind("hc_", 0) == 0 || contains(s, ".hc_");
}

}  // namespace

const char* component_name(param_component c) {
    switch (c) {
        case param_component::embedding:
            return "embedding";
        case param_component::head:
            return "head";
        case param_component::attention:
            return "attention";
        case param_component::compressor:
            return "compressors";
        case param_component::indexer:
            return "indexers";
        case param_component::mhc:
            return "mhc";
        case param_component::norm:
            return "norms";
        case param_component::router:
            return "router";
        case param_component::routed_experts:
            return "routed_experts";
        case param_component::shared_experts:
            return "shared_experts";
        case param_component::mtp_proj:
            return "mtp_proj";
        case param_component::count_:
            break;
    }
    return "?";
}

param_component classify_tensor(const tensor_spec& t) {
    const std::string& n = t.name;
    if (t.is_embedding) return param_component::embedding;
    if (t.is_head) return param_component::head;
    if (contains(n, ".attn.indexer.")) return param_component::indexer;
    if (contains(n, ".attn.compressor.")) return param_component::compressor;
    if (contains(n, ".attn.")) return param_component::attention;
    if (is_mhc_name(n)) return param_component::mhc;
    if (contains(n, ".ffn.experts.")) return param_component::routed_experts;
    if (contains(n, ".ffn.shared_experts.")) return param_component::shared_experts;
    if (contains(n, ".ffn.gate.")) return param_component::router;
    if (contains(n, ".e_proj.") || contains(n, ".h_proj.")) return param_component::mtp_proj;
    if (ends_with(n, "norm.weight")) return param_component::norm;
    throw_error(fmt::format("internal error: tensor '{}' has no parameter component", n));
}

param_counts count_params(const model_config& cfg) {
    return count_params(cfg, build_inventory(cfg, true));
}

param_counts count_params(const model_config& cfg, const std::vector<tensor_spec>& inv) {
    param_counts pc;
    const int K = cfg.num_experts_per_tok;
    std::vector<tensor_spec> main_specs, mtp_specs;
    for (const auto& t : inv) {
        (t.is_mtp ? pc.mtp_tensors : pc.tensors) += 1;
        const int64_t n = t.numel();
        if (t.role == tensor_role::hash_table) {
            pc.hash_table_entries += n;
            continue;
        }
        const int c = (int)classify_tensor(t);
        // Active: a token runs K of the E routed experts of a layer; all experts have the same shape, so "the
        // experts with id < K" has exactly the active size.
        const int64_t active = t.expert < 0 || t.expert < K ? n : 0;
        if (t.is_mtp) {
            pc.mtp_by_component[c] += n;
            pc.mtp_active_by_component[c] += active;
            pc.mtp_total += n;
            pc.mtp_active += active;
        } else {
            pc.main_total[c] += n;
            pc.main_active[c] += active;
            pc.total += n;
            pc.active += active;
        }
    }
    for (const auto& t : inv) (t.is_mtp ? mtp_specs : main_specs).push_back(t);
    pc.release_tensors = release_tensor_count(main_specs);
    pc.release_mtp_tensors = release_tensor_count(mtp_specs);
    const int64_t emb = pc.main_total[(int)param_component::embedding];
    pc.total_excl_embedding = pc.total - emb;
    pc.total_with_mtp = pc.total + pc.mtp_total;
    pc.total_with_mtp_excl_embedding = pc.total_with_mtp - emb;
    pc.active_excl_embedding = pc.active - emb;
    pc.active_with_mtp = pc.active + pc.mtp_active;
    pc.active_with_mtp_excl_embedding = pc.active_with_mtp - emb;
    return pc;
}

namespace {

// Closed forms of the key counts summed over query positions p = 0..S−1 (so any S is O(1)); q = p + 1 = 1..S.
// sum_q floor(q/m) = m·Q(Q−1)/2 + Q·(r+1) with Q = floor(S/m), r = S mod m.
double sum_floor_div(int64_t S, int64_t m) {
    const double Q = (double)(S / m), r = (double)(S % m);
    return (double)m * Q * (Q - 1) / 2 + Q * (r + 1);
}
// sum_q min(q, w)
double sum_min_window(int64_t S, int64_t w) {
    if (S <= w) return (double)S * (double)(S + 1) / 2;
    return (double)w * (double)(w + 1) / 2 + (double)(S - w) * (double)w;
}
// sum_q min(k, floor(q/4)): floor(q/4) reaches k at q = 4k
double sum_min_topk(int64_t S, int64_t k) {
    if (S < 4 * k) return sum_floor_div(S, 4);
    return sum_floor_div(4 * k - 1, 4) + (double)(S - 4 * k + 1) * (double)k;
}

std::string gf(double flops) {
    return fmt::format("{:.4g} GF", flops / 1e9);
}

}  // namespace

flops_breakdown training_flops_per_token(const model_config& cfg, const flops_options& opt) {
    TREX_CHECK(opt.seq_len >= 1, "sequence length must be >= 1 (got {})", opt.seq_len);
    flops_breakdown fb;
    const auto inv = build_inventory(cfg, opt.include_mtp);
    const int K = cfg.num_experts_per_tok;
    const int64_t S = opt.seq_len;
    const int n_mtp = opt.include_mtp ? cfg.num_nextn_predict_layers : 0;

    const int n_attn_layers = cfg.n_layers() + n_mtp;
    // the indexer's inputs are detached: with its loss, forward (2) + weight gradients (2) per parameter and forward
    // (2) + the gradients of both score operands (4) per scored key; without it, the forward only
    const double idx_mm_per_param = opt.indexer_loss ? 4 : 2, idx_score_per_key = opt.indexer_loss ? 6 : 2;
    fb.layer_matmul.assign(n_attn_layers, 0.0);
    fb.layer_routed.assign(n_attn_layers, 0.0);
    fb.layer_attention.assign(n_attn_layers, 0.0);
    fb.layer_indexer.assign(n_attn_layers, 0.0);

    // --- matrices applied to each token ---
    double n_mm = 0, n_routed = 0, n_mhc = 0, n_idx = 0, n_head = 0;
    for (const auto& t : inv) {
        if (t.role != tensor_role::weight || t.shape.size() != 2) continue;
        if (t.is_embedding) continue;             // a lookup, no FLOPs
        if (ends_with(t.name, ".ape")) continue;  // a position bias, not a matrix
        const double n = (double)t.numel();
        const bool in_layer = t.layer >= 0 && t.layer < n_attn_layers;
        double mm = 0;
        if (t.is_head) {
            n_head += n;
        } else if (t.is_indexer) {
            n_idx += n;
            if (in_layer) fb.layer_indexer[t.layer] += idx_mm_per_param * n;
        } else if (t.expert >= 0) {
            if (t.expert < K) {  // K of E experts
                n_routed += n, mm = n;
                if (in_layer) fb.layer_routed[t.layer] += 6 * n;
            }
        } else if (contains(t.name, ".h_proj.")) {
            mm = n * cfg.hc_mult;  // applied to each of the n_hc streams
        } else {
            if (is_mhc_name(t.name)) n_mhc += n;
            mm = n;
        }
        n_mm += mm;
        if (in_layer)
            fb.layer_matmul[t.layer] += 6 * mm;
        else
            fb.top_matmul += 6 * mm;
    }
    fb.matmul = 6 * n_mm;
    fb.routed_share = 6 * n_routed;
    fb.mhc_share = 6 * n_mhc;
    fb.head = 6 * n_head * (1 + n_mtp);
    fb.indexer_mm = idx_mm_per_param * n_idx;

    // --- attention core and indexer scoring ---
    const int win = cfg.sliding_window;
    const double hc = (double)cfg.num_attention_heads * cfg.head_dim;
    const double Sd = (double)S;
    // causal: mean over positions of the exact key counts; non-causal: the key set of the last position for all
    const double window_keys = opt.causal ? sum_min_window(S, win) / Sd : (double)std::min<int64_t>(S, (int64_t)win);
    const double csa_visible = opt.causal ? sum_floor_div(S, 4) / Sd : (double)(S / 4);
    const double csa_selected = opt.dense_csa
                                    ? csa_visible
                                    : (opt.causal ? sum_min_topk(S, cfg.index_topk) / Sd
                                                  : (double)std::min<int64_t>(S / 4, (int64_t)cfg.index_topk));
    std::map<int, double> hca_keys;  // ratio -> mean floor((p+1)/m)
    int n_swa = 0, n_csa = 0;
    std::map<int, int> n_hca;
    double keys_total = 0;
    const double score_per_csa = idx_score_per_key * cfg.index_n_heads * cfg.index_head_dim * csa_visible;
    for (int l = 0; l < n_attn_layers; l++) {
        const int m = cfg.ratio(l);
        double keys = window_keys;
        if (m == 0) {
            n_swa++;
        } else if (m == 4) {
            n_csa++;
            keys += csa_selected;
            fb.layer_indexer[l] += score_per_csa;
        } else {
            if (!hca_keys.count(m)) hca_keys[m] = opt.causal ? sum_floor_div(S, m) / Sd : (double)(S / m);
            n_hca[m]++;
            keys += hca_keys[m];
        }
        keys_total += keys;
        fb.layer_attention[l] = 12 * hc * keys;
    }
    fb.attention = 12 * hc * keys_total;
    fb.indexer_score = score_per_csa * n_csa;
    fb.mean_window_keys = window_keys;
    fb.total = fb.matmul + fb.head + fb.attention + fb.indexer_mm + fb.indexer_score;

    // --- formula ---
    std::string layers = fmt::format("{} SWA", n_swa);
    for (const auto& [m, n] : n_hca) layers += fmt::format(" + {} HCA(m={})", n, m);
    layers += fmt::format(" + {} CSA", n_csa);
    std::string keys = fmt::format("window mean min(p+1,{}) = {:.2f}", win, window_keys);
    if (!opt.causal) keys = fmt::format("window min(S,{}) = {:.2f}", win, window_keys);
    for (const auto& [m, v] : hca_keys) keys += fmt::format("; HCA adds mean floor((p+1)/{}) = {:.2f}", m, v);
    if (n_csa > 0) {
        if (opt.dense_csa)
            keys += fmt::format("; CSA (dense) adds mean floor((p+1)/4) = {:.2f}", csa_visible);
        else
            keys +=
                fmt::format("; CSA (top-k) adds mean min({}, floor((p+1)/4)) = {:.2f}", cfg.index_topk, csa_selected);
    }
    fb.formula = fmt::format(
        "flops/token (S={}, fwd+bwd) = 6*N_mm [{}; N_mm = {:.6g} matrix params applied per token: routed experts "
        "{} of {} (= {}), mHC hc_*_fn (= {}){}; embedding, head and indexer excluded]"
        " + 6*V*d*(1+MTP) [head = {}]"
        " + sum over {} attention layers ({}) of 12*H*c*n_keys [attention = {}; H*c = {}; mean over p<S: {}]"
        " + {}*N_idx_mm [indexer projections with detached inputs{} = {}; N_idx_mm = {:.6g}]"
        " + {} CSA layers * {}*H_I*c_I*mean floor((p+1)/4) [indexer scoring = {}]"
        " = {}. Norms, biases and elementwise ops are not counted; {}.",
        S, gf(fb.matmul), n_mm, K, cfg.n_routed_experts, gf(fb.routed_share), gf(fb.mhc_share),
        n_mtp > 0 ? fmt::format(", MTP h_proj x{} streams", cfg.hc_mult) : std::string(), gf(fb.head), n_attn_layers,
        layers, gf(fb.attention), hc, keys, idx_mm_per_param, opt.indexer_loss ? "" : ", forward only: no indexer loss",
        gf(fb.indexer_mm), n_idx, n_csa, idx_score_per_key, gf(fb.indexer_score), gf(fb.total),
        opt.causal ? "attention is not causal-halved (key sets are exact)"
                   : "non-causal: every query sees the key set of position S-1");
    return fb;
}

}  // namespace trex
