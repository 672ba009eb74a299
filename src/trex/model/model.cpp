// The model: its layers and their weight views, the whole step (one stage), the profile's timer.
#include "trex/model/model.hpp"

#include <memory>

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

dsv4_model::dsv4_model(const model_config& cfg, const kernel_table& kernels)
    : params_(cfg, true, true, {}, {}, kernels.memory),
      head_(params_.cfg),
      kernels_(kernels),
      decode_kernels_(decoding_kernels(kernels)),
      ws_(kernels.memory) {
    for (int l = 0; l < cfg.n_layers(); l++) blocks_.emplace_back(params_.cfg, l);
    if (cfg.has_mtp()) mtp_ = std::make_unique<mtp_block>(params_.cfg);
    bind_weights();
}

// The layers' weight and gradient views into the parameter arenas.
void dsv4_model::bind_weights() {
    wblocks_.clear();
    gblocks_.clear();
    for (int l = 0; l < config().n_layers(); l++) {
        wblocks_.push_back(bind_block_weights(params_, l, false));
        gblocks_.push_back(bind_block_weights(params_, l, true));
    }
    whead_ = bind_head_weights(params_, "", false);
    ghead_ = bind_head_weights(params_, "", true);
    if (mtp_) {
        wmtp_ = bind_mtp_weights(params_, false);
        gmtp_ = bind_mtp_weights(params_, true);
    }
}

void dsv4_model::set_tensor_parallel(tensor_parallel* tp, bool experts_split) {
    tp_ = tp && tp->size() > 1 ? tp : nullptr;
    const tp_layout layout = tp_ ? tp_layout{tp_->rank(), tp_->size(), experts_split} : tp_layout{};
    if (layout.size == params_.tp.size && layout.rank == params_.tp.rank &&
        layout.experts_split == params_.tp.experts_split)
        return;
    lay_out(layout);
}

void dsv4_model::hold_only(param_store::holds_fn holds) {
    holds_ = std::move(holds);
    lay_out(params_.tp);
}

// The parameters again (zeroed) for this TP layout and holds_, and the layers' views of them.
void dsv4_model::lay_out(const tp_layout& layout) {
    const model_config cfg = params_.cfg;
    params_ = param_store(cfg, true, true, layout, holds_, kernels_.memory);
    bind_weights();
}

layer_env dsv4_model::env(const batch_view& batch, const step_options& opts) {
    TREX_CHECK(!tp_ || params_.tp.experts_split == (dispatcher_ == nullptr),
               "tensor parallelism: the model was laid out with the routed experts {} but {} expert dispatcher is set",
               params_.tp.experts_split ? "split" : "whole", dispatcher_ ? "an" : "no");
    return layer_env{config(), kernels_, ws_, geo_, batch, opts, prof_, tp_, dispatcher_};
}

int dsv4_model::update_expert_biases(const step_result& result, double gamma) {
    const size_t L = wblocks_.size();
    int updated = 0;
    for (size_t l = 0; l < result.expert_load.size() && l < L + (mtp_ ? 1 : 0); l++) {
        const moe_weights& W = l < L ? wblocks_[l].ffn : wmtp_.block.ffn;
        const auto& load = result.expert_load[l];
        if (!W.gate_bias || load.empty()) continue;  // hash-routed layers have no bias
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
