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

stage_plan dsv4_model::plan_stage(const stage_range& r, bool mtp, const layer_env& env) const {
    const model_config& cfg = config();
    const int L = cfg.n_layers();
    const bool last = r.last == L;
    const int64_t N = N_, nd = (int64_t)cfg.hc_mult * cfg.hidden_size;
    stage_plan p;
    p.states = (int64_t)(r.last - r.first + 2) * N * nd;  // H(first) .. H(last), then the MTP output H(L + 1)
    p.mtp_in = mtp && last ? N * nd : 0;
    p.head = {N, cfg.hidden_size, cfg.hc_mult, last, mtp};
    for (int l = r.first; l < r.last; l++) p.blocks.push_back(blocks_[l].act_shape(env));
    if (mtp && last) p.blocks.push_back(mtp_->block().act_shape(env));
    p.recompute = env.opts.recompute;
    return p;
}

size_t dsv4_model::activation_bytes() const {
    return acts_.bytes();
}

size_t dsv4_model::workspace_bytes() const {
    return ws_.capacity_bytes();
}

std::string describe_activation_memory(double bytes, int64_t tokens, bool recompute) {
    return fmt::format("activations kept for backward {:.1f} MiB ({:.1f} KiB/token{})", bytes / (1024.0 * 1024.0),
                       bytes / 1024.0 / (double)std::max<int64_t>(tokens, 1),
                       recompute ? ", recompute: one block's" : "");
}

}  // namespace trex
