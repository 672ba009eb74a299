#include "trex/model/layers/weights.hpp"

#include <fmt/format.h>

#include "trex/base/error.hpp"

namespace trex {

namespace {

// w1 and w3 are adjacent in the arena (inventory order w1, w3, w2; both views 64-byte padded, and I·d is a multiple
// of 16 when d is), so [w1; w3] is one [2I, d] matrix.
void check_adjacent(const float* w1, const float* w3, int64_t rows, int64_t d) {
    TREX_CHECK(w3 == w1 + rows * d,
               "internal layout: expert w1/w3 are not adjacent (hidden_size*moe_intermediate_size must be a "
               "multiple of 16)");
}

mhc_weights bind_mhc(param_store& ps, const std::string& p, bool grads) {
    auto T = [&](const char* name) { return grads ? ps.g(p + name) : ps.w(p + name); };
    return {T("fn"), T("base"), T("scale")};
}

attention_weights bind_attention(param_store& ps, const std::string& p, int ratio, bool grads) {
    auto T = [&](const char* name) { return grads ? ps.g(p + name) : ps.w(p + name); };
    attention_weights a;
    a.norm = T("attn_norm.weight");
    a.sink = T("attn.attn_sink");
    a.wq_a = T("attn.wq_a.weight");
    a.q_norm = T("attn.q_norm.weight");
    a.wq_b = T("attn.wq_b.weight");
    a.wkv = T("attn.wkv.weight");
    a.kv_norm = T("attn.kv_norm.weight");
    a.wo_a = T("attn.wo_a.weight");
    a.wo_b = T("attn.wo_b.weight");
    if (ratio > 0) {
        a.c_wkv = T("attn.compressor.wkv.weight");
        a.c_wgate = T("attn.compressor.wgate.weight");
        a.c_ape = T("attn.compressor.ape");
        a.c_norm = T("attn.compressor.norm.weight");
    }
    if (ratio == 4) {
        a.i_wq_b = T("attn.indexer.wq_b.weight");
        a.i_wp = T("attn.indexer.weights_proj.weight");
        a.i_wkv = T("attn.indexer.compressor.wkv.weight");
        a.i_wgate = T("attn.indexer.compressor.wgate.weight");
        a.i_ape = T("attn.indexer.compressor.ape");
        a.i_norm = T("attn.indexer.compressor.norm.weight");
    }
    return a;
}

moe_weights bind_moe(param_store& ps, const std::string& p, bool hash, bool grads) {
    const model_config& cfg = ps.cfg;
    auto T = [&](const std::string& name) { return grads ? ps.g(p + name) : ps.w(p + name); };
    moe_weights m;
    m.norm = T("ffn_norm.weight");
    m.gate = T("ffn.gate.weight");
    if (hash) {
        if (!grads) m.tid2eid = ps.table(p + "ffn.gate.tid2eid");
    } else {
        m.gate_bias = T("ffn.gate.bias");
    }
    const int64_t d = cfg.hidden_size;
    m.sh_w13 = T("ffn.shared_experts.w1.weight");
    m.sh_w2 = T("ffn.shared_experts.w2.weight");
    // rows held here: all, or this TP rank's slice
    auto rows = [&](const std::string& name) { return ps.specs[ps.index(p + name)].shape[0]; };
    check_adjacent(m.sh_w13, T("ffn.shared_experts.w3.weight"), rows("ffn.shared_experts.w1.weight"), d);
    for (int e = 0; e < cfg.n_routed_experts; e++) {
        const std::string w1_name = fmt::format("ffn.experts.{}.w1.weight", e);
        float* w1 = T(w1_name);
        check_adjacent(w1, T(fmt::format("ffn.experts.{}.w3.weight", e)), rows(w1_name), d);
        m.w13.push_back(w1);
        m.w2.push_back(T(fmt::format("ffn.experts.{}.w2.weight", e)));
    }
    return m;
}

}  // namespace

block_weights bind_block_weights(param_store& ps, int l, bool grads) {
    const model_config& cfg = ps.cfg;
    const std::string p = l < cfg.n_layers() ? fmt::format("layers.{}.", l) : std::string("mtp.0.");
    block_weights b;
    b.layer = l;
    b.ratio = cfg.ratio(l);
    b.hash = l < cfg.n_layers() && cfg.is_hash_layer(l);
    b.attn_hc = bind_mhc(ps, p + "hc_attn_", grads);
    b.ffn_hc = bind_mhc(ps, p + "hc_ffn_", grads);
    b.attn = bind_attention(ps, p, b.ratio, grads);
    b.ffn = bind_moe(ps, p, b.hash, grads);
    return b;
}

head_weights bind_head_weights(param_store& ps, const std::string& prefix, bool grads) {
    auto T = [&](const std::string& name) { return grads ? ps.g(name) : ps.w(name); };
    head_weights h;
    h.hc = bind_mhc(ps, prefix + "hc_head_", grads);
    h.norm = T(prefix + "norm.weight");
    h.head = T("head.weight");
    return h;
}

mtp_weights bind_mtp_weights(param_store& ps, bool grads) {
    auto T = [&](const std::string& name) { return grads ? ps.g(name) : ps.w(name); };
    const std::string p = "mtp.0.";
    mtp_weights m;
    m.in = {T(p + "enorm.weight"), T(p + "hnorm.weight"), T(p + "e_proj.weight"), T(p + "h_proj.weight"),
            T("embed.weight")};
    m.block = bind_block_weights(ps, ps.cfg.n_layers(), grads);
    m.head = bind_head_weights(ps, p, grads);
    return m;
}

}  // namespace trex
