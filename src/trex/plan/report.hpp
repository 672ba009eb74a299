// Text and JSON renderings of the planner's results (trex plan, trex plan search, trex plan validate).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "trex/plan/cost.hpp"
#include "trex/plan/fit.hpp"
#include "trex/plan/search.hpp"
#include "trex/plan/validate.hpp"

namespace trex::plan {

struct plan_context {
    const plan_model& model;
    const hardware_profile& hw;
    const calibration& cal;
    int64_t devices;
    const plan_setup& setup;
    const plan_layout& layout;
};

std::string setup_str(const plan_setup& s);
nlohmann::ordered_json result_json(const plan_context& c, const plan_result& r);
std::string format_result(const plan_context& c, const plan_result& r);

nlohmann::ordered_json validation_json(const std::vector<validation_row>& rows, const calibration& cal);
std::string format_validation(const std::vector<validation_row>& rows, const calibration& cal);
// `trex plan validate --holdout`: the shipped, in-sample and held-out error of every point (fit.hpp).
nlohmann::ordered_json holdout_json(const holdout_report& rep, const calibration& shipped);
std::string format_holdout(const holdout_report& rep, const calibration& shipped);

nlohmann::ordered_json search_json(const plan_model& m, const hardware_profile& hw, int64_t devices,
                                   const search_report& rep);
std::string format_search(const plan_model& m, const hardware_profile& hw, int64_t devices, const search_report& rep);

nlohmann::ordered_json calibration_json(const calibration& c);

}  // namespace trex::plan
