// Layout search: enumerate TP × CP × PP × schedule (1F1B, interleaved VPP, DualPipe, DualPipeV) × EP × ETP ×
// micro-batch × recompute × optimizer swap for a device count, keep the layouts that are possible and fit in memory,
// rank them by predicted tokens/s.
#pragma once

#include <string>
#include <vector>

#include "trex/plan/cost.hpp"

namespace trex::plan {

struct search_options {
    int top = 10;
    int max_tp = 0;  // 0: up to the server (node_size)
    std::vector<int> micro_batches{1, 2, 4};
    std::vector<std::string> schedules{"1f1b", "interleaved", "dualpipe", "dualpipev"};
    std::vector<int> vpps{2, 4, 8};
    // recompute policies tried, each a list of modules ("none" / "selective" / "full" / modules)
    std::vector<std::vector<std::string>> recompute{{"none"}, {"layernorm", "moe_act", "core_attn"}, {"full"}};
    bool try_swap = true;  // also try optimizer swap (when the device has a host link)
    bool try_cp = true;    // context parallelism for sequences >= 8K
};

struct search_candidate {
    plan_layout layout;
    plan_setup setup;
    plan_result result;
};

struct search_report {
    int64_t evaluated = 0, impossible = 0, not_fitting = 0;
    std::vector<search_candidate> best;  // fitting, by tokens/s, best first (at most `top`)
    double seconds = 0;
};

search_report search_layouts(const plan_model& m, const hardware_profile& hw, const calibration& cal, int64_t devices,
                             const plan_setup& base, const search_options& o);

}  // namespace trex::plan
