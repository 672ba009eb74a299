// Layout search: enumerate TP × CP × PP × schedule (1F1B, interleaved VPP, DualPipe, DualPipeV) × EP × ETP ×
// micro-batch × recompute × optimizer swap for a device count, keep the layouts that are possible and fit in memory,
// rank them by predicted tokens/s. With a reference layout (a published run's, `trex plan search --run FILE`), also
// where it ranks among them: 1 + the fitting layouts predicted faster than it, under its own setup and under the best
// searched setup of the same layout.
#pragma once

#include <optional>
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

// A reference layout's place in the ranking: `rank` = 1 + fitting layouts with more tokens/s (0: it does not fit).
struct ranked_candidate {
    search_candidate candidate;
    int64_t rank = 0;
};

struct search_report {
    int64_t evaluated = 0, impossible = 0, not_fitting = 0;
    std::vector<search_candidate> best;  // fitting, by tokens/s, best first (at most `top`)
    double seconds = 0;
    std::optional<ranked_candidate> reference;       // the reference layout under its own setup
    std::optional<ranked_candidate> reference_best;  // the same layout under the best of the searched micro-batches,
                                                     // recompute policies and swap (if one fits)
    int64_t fitting() const { return evaluated - impossible - not_fitting; }
};

search_report search_layouts(const plan_model& m, const hardware_profile& hw, const calibration& cal, int64_t devices,
                             const plan_setup& base, const search_options& o);
// The same search, with `reference` (layout and setup; evaluated as given, incl. layers_per_chunk) ranked among the
// searched layouts. Throws if the reference layout is impossible for the model or the device count.
search_report search_layouts(const plan_model& m, const hardware_profile& hw, const calibration& cal, int64_t devices,
                             const plan_setup& base, const search_options& o, const plan_layout& reference,
                             const plan_setup& reference_setup);

}  // namespace trex::plan
