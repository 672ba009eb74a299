// Fitting the calibration's time constants to published runs, and leave-one-out validation (docs/plan.md §7).
//
// The fit set is the validation points marked `tested`. `fit_calibration` chooses the fitted constants (the table
// `fitted_knobs`, each within published bounds) that minimise Σ log(predicted/reported)² over the points it is given,
// by coordinate descent with a golden-section search per constant, deterministic, starting from the given set; the
// other constants keep their values. `validate_holdout` fits once on every point of the fit set (the in-sample errors:
// the model can fit these runs) and once per point on all the others, then predicts the point left out (the held-out
// errors: what the planner predicts for a run it was not fitted on). Points outside the fit set are never fitted on;
// their in-sample and held-out predictions are both the all-points fit's.
#pragma once

#include <string>
#include <vector>

#include "trex/plan/validate.hpp"

namespace trex::plan {

struct fit_knob {
    std::string name;  // calibration field
    double lo = 0, hi = 1;
};

// The constants the fit may move, with their bounds.
const std::vector<fit_knob>& fitted_knobs();
double knob_value(const calibration& c, const std::string& name);
void set_knob(calibration& c, const std::string& name, double value);

// Least squares on log(predicted/reported) over `pts`, from `start`. Throws if `pts` is empty.
calibration fit_calibration(const std::vector<validation_point>& pts, const calibration& start);

struct holdout_row {
    validation_row shipped;  // under the shipped calibration (calibration.json), as `trex plan validate`
    bool in_fit = false;     // a tested point: in the fit set
    double insample_predicted = 0, insample_rel_error = 0;  // under the fit to every tested point
    double heldout_predicted = 0, heldout_rel_error = 0;    // under the fit to the other tested points
    calibration heldout_cal;                                // that fit
};

struct holdout_report {
    calibration fitted;  // fitted to every tested point
    std::vector<holdout_row> rows;
    int n_fit = 0;
    // means of |relative error| over the fit set
    double mean_abs_shipped = 0, mean_abs_insample = 0, mean_abs_heldout = 0;
    double max_abs_heldout = 0;
};

holdout_report validate_holdout(const std::vector<validation_point>& pts, const calibration& shipped);

}  // namespace trex::plan
