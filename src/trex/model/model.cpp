// The whole model step (docs/model.md §3–4): embedding, blocks, hc_head + norm + head, MTP, losses, backward.
#include "trex/model/model.hpp"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "trex/base/error.hpp"
#include "trex/base/timer.hpp"

namespace trex {

section_timer::section_timer(step_profile* p, const kernel_table& k, const char* name) : p_(p), k_(k), name_(name) {
    if (!p_) return;
    t0_ = now_seconds();
    k_.gemm_stats_section(name);  // (bench step attributes the GEMMs it counts to the open section)
}

section_timer::~section_timer() {
    next(nullptr);
}

void section_timer::next(const char* name) {
    if (!p_) return;
    const double t = now_seconds();
    if (name_) {
        p_->seconds[name_] += t - t0_;
        p_->calls[name_]++;
    }
    name_ = name;
    t0_ = t;
    k_.gemm_stats_section(name);
}

dsv4_model::dsv4_model(const model_config& cfg, const kernel_table& kernels) : params_(cfg), kernels_(kernels) {
    const int nb = cfg.n_layers() + (cfg.has_mtp() ? 1 : 0);
    for (int l = 0; l < nb; l++) {
        wblocks_.push_back(bind_block(l, false));
        gblocks_.push_back(bind_block(l, true));
    }
}

block_weights dsv4_model::bind_block(int l, bool grads) {
    const model_config& cfg = config();
    const std::string p = l < cfg.n_layers() ? fmt::format("layers.{}.", l) : std::string("mtp.0.");
    auto T = [&](const std::string& name) { return grads ? params_.g(p + name) : params_.w(p + name); };
    block_weights b;
    b.layer = l;
    b.ratio = cfg.ratio(l);
    b.hash = l < cfg.n_layers() && cfg.is_hash_layer(l);
    b.attn_norm = T("attn_norm.weight");
    b.ffn_norm = T("ffn_norm.weight");
    b.hc_attn_fn = T("hc_attn_fn");
    b.hc_attn_base = T("hc_attn_base");
    b.hc_attn_scale = T("hc_attn_scale");
    b.hc_ffn_fn = T("hc_ffn_fn");
    b.hc_ffn_base = T("hc_ffn_base");
    b.hc_ffn_scale = T("hc_ffn_scale");
    b.sink = T("attn.attn_sink");
    b.wq_a = T("attn.wq_a.weight");
    b.q_norm = T("attn.q_norm.weight");
    b.wq_b = T("attn.wq_b.weight");
    b.wkv = T("attn.wkv.weight");
    b.kv_norm = T("attn.kv_norm.weight");
    b.wo_a = T("attn.wo_a.weight");
    b.wo_b = T("attn.wo_b.weight");
    if (b.ratio > 0) {
        b.c_wkv = T("attn.compressor.wkv.weight");
        b.c_wgate = T("attn.compressor.wgate.weight");
        b.c_ape = T("attn.compressor.ape");
        b.c_norm = T("attn.compressor.norm.weight");
    }
    if (b.ratio == 4) {
        b.i_wq_b = T("attn.indexer.wq_b.weight");
        b.i_wp = T("attn.indexer.weights_proj.weight");
        b.i_wkv = T("attn.indexer.compressor.wkv.weight");
        b.i_wgate = T("attn.indexer.compressor.wgate.weight");
        b.i_ape = T("attn.indexer.compressor.ape");
        b.i_norm = T("attn.indexer.compressor.norm.weight");
    }
    b.gate = T("ffn.gate.weight");
    if (b.hash) {
        if (!grads) b.tid2eid = params_.table(p + "ffn.gate.tid2eid");
    } else {
        b.gate_bias = T("ffn.gate.bias");
    }
    // w1 and w3 are adjacent in the arena (inventory order w1, w3, w2; both views 64-byte padded, and I·d is a
    // multiple of 16 when d is), so [w1; w3] is one [2I, d] matrix.
    b.sh_w13 = T("ffn.shared_experts.w1.weight");
    b.sh_w2 = T("ffn.shared_experts.w2.weight");
    TREX_CHECK(T("ffn.shared_experts.w3.weight") ==
                   b.sh_w13 + (int64_t)cfg.n_shared_experts * cfg.moe_intermediate_size * cfg.hidden_size,
               "internal layout: shared expert w1/w3 are not adjacent (hidden_size*moe_intermediate_size must be a "
               "multiple of 16)");
    for (int e = 0; e < cfg.n_routed_experts; e++) {
        float* w1 = T(fmt::format("ffn.experts.{}.w1.weight", e));
        TREX_CHECK(
            T(fmt::format("ffn.experts.{}.w3.weight", e)) == w1 + (int64_t)cfg.moe_intermediate_size * cfg.hidden_size,
            "internal layout: expert w1/w3 are not adjacent (hidden_size*moe_intermediate_size must be a "
            "multiple of 16)");
        b.w13.push_back(w1);
        b.w2.push_back(T(fmt::format("ffn.experts.{}.w2.weight", e)));
    }
    return b;
}

int dsv4_model::update_expert_biases(const step_result& result, double gamma) {
    int updated = 0;
    for (size_t l = 0; l < result.expert_load.size() && l < wblocks_.size(); l++) {
        const block_weights& W = wblocks_[l];
        const auto& load = result.expert_load[l];
        if (W.hash || !W.gate_bias || load.empty()) continue;
        double mean = 0.0;
        for (int64_t v : load) mean += (double)v;
        mean /= (double)load.size();
        for (size_t e = 0; e < load.size(); e++) {
            const double diff = mean - (double)load[e];
            W.gate_bias[e] += (float)(gamma * (diff > 0 ? 1.0 : (diff < 0 ? -1.0 : 0.0)));
        }
        updated++;
    }
    return updated;
}

const float* dsv4_model::block_output(int l) const {
    const model_config& cfg = config();
    const int64_t sz = N_ * cfg.hc_mult * cfg.hidden_size;
    return acts_.states.data() + (int64_t)(l + 1) * sz;
}

std::span<const int32_t> dsv4_model::csa_selection(int layer, int64_t* kw) const {
    const block_acts& A = acts_.bound(layer);
    *kw = A.kw;
    return A.sel;
}

step_result dsv4_model::step(const batch_view& batch, const step_options& opts) {
    const stage_range all{0, config().n_layers()};
    step_result res = stage_forward(all, batch, opts, nullptr, nullptr);
    finish_step_result(res, opts, config().n_layers());
    if (opts.backward) stage_backward(all, batch, opts, nullptr, nullptr, nullptr);
    if (opts.profile) res.profile = std::move(profile_);
    prof_ = nullptr;
    return res;
}

}  // namespace trex
