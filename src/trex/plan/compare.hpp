// Calibration against ourselves (docs/plan.md §9): the planner's predictions for the layouts `trex bench dist`
// measured on this machine (same model, tokens per rank, optimizer, EP overlap), with a hardware profile written by
// `trex plan calibrate` from this machine's measured GEMM rate and MPI/memory bandwidths.
#pragma once

#include <string>
#include <vector>

#include "trex/plan/cost.hpp"

namespace trex::plan {

// One row of `trex bench dist --json`: a layout and its measured times (seconds, slowest rank, medians).
struct measured_layout {
    std::string layout;
    int tp = 1, pp = 1, dp = 1, ep = 1;
    bool ep_overlap = false;
    double step = 0, compute = 0, exposed = 0, ep_exposed = 0, sync_exposed = 0;
};

struct measured_dist {
    std::string source, config, optimizer = "muon";
    int world = 1;
    int64_t batch = 1, seq = 1;  // rows per rank and step, tokens per row
    std::vector<measured_layout> rows;
};

// Reads and validates `trex bench dist --json` output; errors name the file and the key.
measured_dist measured_dist_from_json(const json& j, const std::string& source);

struct compare_row {
    measured_layout measured;
    plan_layout layout;
    plan_setup setup;
    plan_result predicted;
    double pred_comm = 0;         // exposed communication: EP (after its overlap) + TP + PP + DP (not overlapped)
    double pred_compute = 0;      // t_step − pred_comm
    double pred_step_scaled = 0;  // pred_comm + pred_compute × compute_scale
};

struct compare_result {
    std::vector<compare_row> rows;
    // measured / predicted compute of the first row: how much slower the whole CPU step is than its GEMM FLOPs at
    // the measured sgemm rate (attention core, mHC, norms, routing, the optimizer's small matrices); applied to the
    // other rows' compute so that their communication predictions can be judged on their own
    double compute_scale = 1;
};

// `model` is the bench's config (a path or the embedded v4-tiny).
compare_result compare_with_measured(const measured_dist& m, const plan_model& model, const hardware_profile& hw,
                                     const calibration& cal);
std::string format_compare(const compare_result& c, const measured_dist& m, const hardware_profile& hw);
std::string compare_json(const compare_result& c, const measured_dist& m, const hardware_profile& hw);

}  // namespace trex::plan
