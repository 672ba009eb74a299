#include "trex/model/layers/block.hpp"

#include <algorithm>

namespace trex {

block_act_shape transformer_block::act_shape(const layer_env& env) const {
    const model_config& cfg = env.cfg;
    const batch_geometry& geo = env.geo;
    const step_options& opts = env.opts;
    const tensor_parallel* tp = env.tp;
    block_act_shape s;
    s.ratio = attn_.ratio();
    s.N = env.N();
    s.d = cfg.hidden_size;
    s.n = cfg.hc_mult;
    s.rows = mhc_dims_of(cfg).rows();
    s.dc = cfg.q_lora_rank;
    s.H = tp_local(tp, cfg.num_attention_heads).count;
    s.c = cfg.head_dim;
    s.groups = tp_local(tp, cfg.o_groups).count;
    s.dg = cfg.o_lora_rank;
    const compressed_layout* cl = s.ratio > 0 ? &geo.comp.at(s.ratio) : nullptr;
    s.Nc = cl ? cl->n_entries : 0;
    if (s.ratio == 4) {
        s.HI = cfg.index_n_heads;
        s.cI = cfg.index_head_dim;
        s.ld = std::max<int64_t>(cl->max_entries, 1);
        s.kw = opts.dense_csa ? s.ld : std::max<int64_t>(std::min<int64_t>(cfg.index_topk, cl->max_entries), 1);
    }
    // keys of query t: its window, then the compressed entries it sees (HCA) or the indexer keeps (CSA, top-kw)
    for (int64_t t = 0; t < s.N; t++) {
        const int64_t p = geo.pos[t], visible = s.ratio > 0 ? (p + 1) / s.ratio : 0;
        s.keys += std::min<int64_t>(p + 1, cfg.sliding_window);
        s.keys += s.ratio == 4 && !opts.dense_csa ? std::min(s.kw, visible) : visible;
    }
    s.E = cfg.n_routed_experts;
    s.K = cfg.num_experts_per_tok;
    const int64_t I = cfg.moe_intermediate_size;
    s.Is = tp_local(tp, (int64_t)cfg.n_shared_experts * I).count;
    s.routed = moe_layer::token_range(s.N, tp, env.dispatcher).second * s.K;
    // the routed experts' pre-activations: kept here when computed here (TP without EP: this rank's slice of I)
    if (!env.dispatcher)
        s.a13_width = 2 * tp_local(tp, I).count;
    else if (env.dispatcher->keeps_routing_activations())
        s.a13_width = 2 * I;
    return s;
}

void transformer_block::forward(block_acts& A, float* h_out, const float* h_in, const block_weights& W,
                                const layer_env& env) const {
    const mhc_saved S1 = attn_unit_saved(A), S2 = ffn_unit_saved(A);
    section_timer timer(env.prof, env.k, "fwd.mhc");
    hc_.pre_forward(S1, h_in, W.attn_hc, env);
    timer.next(nullptr);  // the sub-layers time their own sections
    attn_.forward(A, W.attn, env);
    timer.next("fwd.mhc");
    hc_.post_forward(A.h_mid.data(), A.F1.data(), h_in, S1, env);
    hc_.pre_forward(S2, A.h_mid.data(), W.ffn_hc, env);
    timer.next(nullptr);
    moe_.forward(A, W.ffn, env);
    timer.next("fwd.mhc");
    hc_.post_forward(h_out, A.F2.data(), A.h_mid.data(), S2, env);
}

void transformer_block::decode(block_acts& A, std::span<attention_cache* const> caches, float* h_out, const float* h_in,
                               const block_weights& W, const layer_env& env) const {
    const mhc_saved S1 = attn_unit_saved(A), S2 = ffn_unit_saved(A);
    section_timer timer(env.prof, env.k, "fwd.mhc");
    hc_.pre_forward(S1, h_in, W.attn_hc, env);
    timer.next(nullptr);  // attention and MoE time their own sections
    attn_.decode(A, caches, W.attn, env);
    timer.next("fwd.mhc");
    hc_.post_forward(A.h_mid.data(), A.F1.data(), h_in, S1, env);
    hc_.pre_forward(S2, A.h_mid.data(), W.ffn_hc, env);
    timer.next(nullptr);
    moe_.forward(A, W.ffn, env);
    timer.next("fwd.mhc");
    hc_.post_forward(h_out, A.F2.data(), A.h_mid.data(), S2, env);
}

void transformer_block::backward(block_acts& A, float* dh_in, const float* dh_out, const float* h_in,
                                 const block_weights& W, const block_weights& G, const layer_env& env) const {
    workspace::scope ws(env.ws);
    const int64_t N = env.N(), d = env.cfg.hidden_size, n = env.cfg.hc_mult;
    const mhc_saved S1 = attn_unit_saved(A), S2 = ffn_unit_saved(A);
    float* dF = ws.floats(N * d);
    float* dy = ws.floats(N * d);
    float* dpost = ws.floats(N * n);
    float* dcomb = ws.floats(N * n * n);
    float* dh_mid = ws.floats(N * n * d);

    // ffn unit
    section_timer timer(env.prof, env.k, "bwd.mhc");
    hc_.post_backward(dF, dpost, dcomb, dh_out, A.F2.data(), A.h_mid.data(), S2, env);
    timer.next(nullptr);
    moe_.backward(A, dy, dF, W.ffn, G.ffn, env);
    timer.next("bwd.mhc");
    hc_.pre_backward(dh_mid, G.ffn_hc, dy, dpost, dcomb, A.h_mid.data(), W.ffn_hc, S2, dh_out, env);
    // attention unit
    hc_.post_backward(dF, dpost, dcomb, dh_mid, A.F1.data(), h_in, S1, env);
    timer.next(nullptr);
    attn_.backward(A, dy, dF, W.attn, G.attn, env);
    timer.next("bwd.mhc");
    hc_.pre_backward(dh_in, G.attn_hc, dy, dpost, dcomb, h_in, W.attn_hc, S1, dh_mid, env);
}

}  // namespace trex
