// The device mesh of a run (docs/distributed.md §2). The dense part (attention, shared experts, embedding, head)
// uses TP × PP × DP; the routed experts use EP × expert-DP folded over the same ranks of each pipeline stage
// (Megatron's "parallel folding"). Rank order: TP fastest, then DP, then PP: rank = (pp·dp + dp)·tp + tp, and inside a
// stage the tp·dp ranks are split as local = edp·ep + ep.
#pragma once

#include <string>

#include "trex/model/config.hpp"

namespace trex::parallel {

struct mesh_spec {
    int tp = 1, pp = 1, ep = 1;  // --tp --pp --ep; DP is what the world size leaves
};

struct device_mesh {
    int world = 1, rank = 0;
    int tp = 1, pp = 1, dp = 1;  // dense layout
    int ep = 1, edp = 1;         // expert layout inside a stage: ep × edp = tp × dp
    int tp_rank = 0, pp_rank = 0, dp_rank = 0;
    int ep_rank = 0, edp_rank = 0;

    // The world rank with these coordinates.
    int rank_of(int tp_r, int pp_r, int dp_r) const { return (pp_r * dp + dp_r) * tp + tp_r; }
    // The routed experts this rank holds: [first, first + count).
    int expert_first(const model_config& cfg) const { return ep_rank * (cfg.n_routed_experts / ep); }
    int expert_count(const model_config& cfg) const { return cfg.n_routed_experts / ep; }
    // "tp 1 x pp 1 x dp 2, experts ep 2 x edp 1", one line.
    std::string layout() const;
    // The layout line and one line per rank with its coordinates.
    std::string describe(const model_config& cfg) const;
};

// Builds and validates the mesh; a bad combination is a trex::error naming the flag (--tp, --pp, --ep).
device_mesh make_mesh(const mesh_spec& spec, int world, int rank, const model_config& cfg);

}  // namespace trex::parallel
