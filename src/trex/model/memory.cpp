// The activation plan of a stage (activations.hpp) and the memory a step holds (what `trex bench step` reports and
// tests/unit/model_step_test.cpp checks: recompute keeps one block's activations, the rest grows linearly with the
// tokens).
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "trex/model/model.hpp"

namespace trex {

// Element counts of block `layer`'s saved tensors over the current geometry (activations.hpp states what they are).
block_act_shape dsv4_model::act_shape(int layer, const step_options& opts) const {
    const model_config& cfg = config();
    block_act_shape s;
    s.ratio = cfg.ratio(layer);
    s.N = N_;
    s.d = cfg.hidden_size;
    s.n = cfg.hc_mult;
    s.rows = mhc_dims_of(cfg).rows();
    s.dc = cfg.q_lora_rank;
    s.H = tp_local(tp_, cfg.num_attention_heads).count;
    s.c = cfg.head_dim;
    s.groups = tp_local(tp_, cfg.o_groups).count;
    s.dg = cfg.o_lora_rank;
    const compressed_layout* cl = s.ratio > 0 ? &geo_.comp.at(s.ratio) : nullptr;
    s.Nc = cl ? cl->n_entries : 0;
    if (s.ratio == 4) {
        s.HI = cfg.index_n_heads;
        s.cI = cfg.index_head_dim;
        s.ld = std::max<int64_t>(cl->max_entries, 1);
        s.kw = opts.dense_csa ? s.ld : std::max<int64_t>(std::min<int64_t>(cfg.index_topk, cl->max_entries), 1);
    }
    // keys of query t: its window, then the compressed entries it sees (HCA) or the indexer keeps (CSA, top-kw)
    for (int64_t t = 0; t < s.N; t++) {
        const int64_t p = geo_.pos[t], visible = s.ratio > 0 ? (p + 1) / s.ratio : 0;
        s.keys += std::min<int64_t>(p + 1, cfg.sliding_window);
        s.keys += s.ratio == 4 && !opts.dense_csa ? std::min(s.kw, visible) : visible;
    }
    s.E = cfg.n_routed_experts;
    s.K = cfg.num_experts_per_tok;
    const int64_t I = cfg.moe_intermediate_size;
    s.Is = tp_local(tp_, (int64_t)cfg.n_shared_experts * I).count;
    s.routed = (dispatcher_ ? tp_token_range().second : s.N) * s.K;
    // the routed experts' pre-activations: kept here when computed here (TP without EP: this rank's slice of I)
    if (!dispatcher_)
        s.a13_width = 2 * tp_local(tp_, I).count;
    else if (dispatcher_->keeps_routing_activations())
        s.a13_width = 2 * I;
    return s;
}

stage_plan dsv4_model::plan_stage(const stage_range& r, bool mtp, const step_options& opts) const {
    const model_config& cfg = config();
    const int L = cfg.n_layers();
    const bool last = r.last == L;
    const int64_t N = N_, nd = (int64_t)cfg.hc_mult * cfg.hidden_size;
    stage_plan p;
    p.states = (int64_t)(r.last - r.first + 2) * N * nd;  // H(first) .. H(last), then the MTP output H(L + 1)
    p.mtp_in = mtp && last ? N * nd : 0;
    p.head = {N, cfg.hidden_size, cfg.hc_mult, last, mtp};
    for (int l = r.first; l < r.last; l++) p.blocks.push_back(act_shape(l, opts));
    if (mtp && last) p.blocks.push_back(act_shape(L, opts));
    p.recompute = opts.recompute;
    return p;
}

size_t dsv4_model::activation_bytes() const {
    return acts_.bytes();
}

size_t dsv4_model::workspace_bytes() const {
    return de_mtp_.capacity() * sizeof(float) + hash_sel_.capacity() * sizeof(int32_t) + ws_.capacity_bytes();
}

std::string describe_activation_memory(double bytes, int64_t tokens, bool recompute) {
    return fmt::format("activations kept for backward {:.1f} MiB ({:.1f} KiB/token{})", bytes / (1024.0 * 1024.0),
                       bytes / 1024.0 / (double)std::max<int64_t>(tokens, 1),
                       recompute ? ", recompute: one block's" : "");
}

}  // namespace trex
