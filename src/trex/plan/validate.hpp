// Validation points (configs/plan/validation.json): published runs, the planner's prediction of each, the relative
// error, and for the runs that do not close from public numbers the value of one named constant that would close
// them.
#pragma once

#include <string>
#include <vector>

#include "trex/plan/cost.hpp"

namespace trex::plan {

struct validation_point {
    std::string id, title, source, assumptions;
    plan_run run;
    std::string metric;  // mfu, tflops_per_device, tokens_per_s_per_device, step_time_s
    double reported = 0;
    bool tested = false;
    double tolerance = 0.15;
    std::string close;  // optional: a calibration constant to solve for (gemm_efficiency, ...)
};

struct validation_row {
    validation_point point;
    plan_result result;
    double predicted = 0, rel_error = 0;  // (predicted − reported) / reported
    bool within = false;
    double close_value = 0;  // the value of point.close that makes the prediction equal the report (0: none)
    std::string close_note;
    // MFU points: the FLOPs per token the reported MFU implies at the predicted tokens/s/device (the FLOP-basis
    // assumption that would close the gap with every time constant as calibrated), and the peak it implies at our count
    double implied_flops_per_token = 0, implied_peak_tflops = 0;
};

std::vector<validation_point> load_validation(const std::string& path = "configs/plan/validation.json");
double metric_value(const plan_result& r, const std::string& metric);
validation_row validate_point(const validation_point& p, const calibration& cal);
std::vector<validation_row> validate_all(const std::vector<validation_point>& pts, const calibration& cal);

}  // namespace trex::plan
