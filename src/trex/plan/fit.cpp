#include "trex/plan/fit.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "trex/base/error.hpp"

namespace trex::plan {

namespace {

// A point with its model and hardware loaded once (the fit evaluates each point thousands of times).
struct fit_case {
    validation_point point;
    plan_model model;
    hardware_profile hw;
};

fit_case load_case(const validation_point& p) {
    const plan_setup& s = p.run.setup;
    return {p, load_plan_model(p.run.model, s.seq_len, s.flash_attention, s.dense_csa), load_hardware(p.run.hardware)};
}

double predict_case(const fit_case& c, const calibration& cal) {
    const plan_run& r = c.point.run;
    return metric_value(evaluate(c.model, c.hw, cal, r.devices, r.setup, r.layout), c.point.metric);
}

// Σ log(predicted/reported)²; a prediction that is not a positive finite number costs as much as a factor e^10.
double fit_loss(const std::vector<fit_case>& cases, const calibration& cal) {
    double loss = 0;
    for (const auto& c : cases) {
        const double v = predict_case(c, cal);
        const double e = v > 0 && std::isfinite(v) ? std::log(v / c.point.reported) : 10.0;
        loss += e * e;
    }
    return loss;
}

// Golden-section search for the minimum of f on [lo, hi].
template <class F>
double golden_min(F f, double lo, double hi, int iterations) {
    const double g = (std::sqrt(5.0) - 1) / 2;
    double a = lo, b = hi, x1 = b - g * (b - a), x2 = a + g * (b - a);
    double f1 = f(x1), f2 = f(x2);
    for (int i = 0; i < iterations; i++) {
        if (f1 <= f2) {
            b = x2, x2 = x1, f2 = f1;
            x1 = b - g * (b - a), f1 = f(x1);
        } else {
            a = x1, x1 = x2, f1 = f2;
            x2 = a + g * (b - a), f2 = f(x2);
        }
    }
    return f1 <= f2 ? x1 : x2;
}

calibration fit_cases(const std::vector<fit_case>& cases, const calibration& start) {
    TREX_CHECK(!cases.empty(), "fitting the calibration needs at least one validation point");
    calibration best = start;
    double best_loss = fit_loss(cases, best);
    for (int sweep = 0; sweep < 6; sweep++) {
        const double sweep_start = best_loss;
        for (const fit_knob& k : fitted_knobs()) {
            calibration trial = best;
            auto f = [&](double x) {
                set_knob(trial, k.name, x);
                return fit_loss(cases, trial);
            };
            const double x = golden_min(f, k.lo, k.hi, 24);
            const double l = f(x);
            if (l < best_loss) {
                set_knob(best, k.name, x);
                best_loss = l;
            }
        }
        if (sweep_start - best_loss <= 1e-9 * std::max(1.0, sweep_start)) break;
    }
    best.path = start.path + " (fitted)";
    return best;
}

double mean_of(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / (double)v.size();
}

}  // namespace

// Bounds: efficiencies within what published kernels and planners use (planner_facts §1.3: Calculon 0.6–0.95,
// msmodeling 0.7, DeepGEMM's best FP8 shape 0.78 of peak), overlaps within [0, 1], memory passes and the half size
// within a factor of a few of the shipped values.
const std::vector<fit_knob>& fitted_knobs() {
    static const std::vector<fit_knob> knobs{{"gemm_efficiency", 0.4, 0.95},     {"fp8_gemm_efficiency", 0.2, 0.8},
                                             {"attention_efficiency", 0.1, 0.8}, {"gemm_half_size", 0, 256},
                                             {"memory_passes", 1, 12},           {"ep_overlap", 0, 1},
                                             {"background_overlap", 0, 1}};
    return knobs;
}

double knob_value(const calibration& c, const std::string& name) {
    if (name == "gemm_efficiency") return c.gemm_efficiency;
    if (name == "fp8_gemm_efficiency") return c.fp8_gemm_efficiency;
    if (name == "attention_efficiency") return c.attention_efficiency;
    if (name == "gemm_half_size") return c.gemm_half_size;
    if (name == "memory_passes") return c.memory_passes;
    if (name == "ep_overlap") return c.ep_overlap;
    if (name == "background_overlap") return c.background_overlap;
    throw_error(fmt::format("'{}' is not a fitted calibration constant", name));
}

void set_knob(calibration& c, const std::string& name, double v) {
    if (name == "gemm_efficiency")
        c.gemm_efficiency = v;
    else if (name == "fp8_gemm_efficiency")
        c.fp8_gemm_efficiency = v;
    else if (name == "attention_efficiency")
        c.attention_efficiency = v;
    else if (name == "gemm_half_size")
        c.gemm_half_size = v;
    else if (name == "memory_passes")
        c.memory_passes = v;
    else if (name == "ep_overlap")
        c.ep_overlap = v;
    else if (name == "background_overlap")
        c.background_overlap = v;
    else
        throw_error(fmt::format("'{}' is not a fitted calibration constant", name));
}

calibration fit_calibration(const std::vector<validation_point>& pts, const calibration& start) {
    std::vector<fit_case> cases;
    for (const auto& p : pts) cases.push_back(load_case(p));
    return fit_cases(cases, start);
}

holdout_report validate_holdout(const std::vector<validation_point>& pts, const calibration& shipped) {
    holdout_report rep;
    std::vector<fit_case> all, fit_set;
    for (const auto& p : pts) {
        all.push_back(load_case(p));
        if (p.tested) fit_set.push_back(all.back());
    }
    rep.n_fit = (int)fit_set.size();
    rep.fitted = fit_cases(fit_set, shipped);
    std::vector<double> abs_shipped, abs_in, abs_out;
    for (const auto& c : all) {
        holdout_row row;
        row.shipped = validate_point(c.point, shipped);
        row.in_fit = c.point.tested;
        row.insample_predicted = predict_case(c, rep.fitted);
        row.heldout_cal = rep.fitted;
        if (row.in_fit) {
            std::vector<fit_case> others;
            for (const auto& o : fit_set)
                if (o.point.id != c.point.id) others.push_back(o);
            row.heldout_cal = others.empty() ? shipped : fit_cases(others, shipped);
        }
        row.heldout_predicted = predict_case(c, row.heldout_cal);
        row.insample_rel_error = row.insample_predicted / c.point.reported - 1;
        row.heldout_rel_error = row.heldout_predicted / c.point.reported - 1;
        if (row.in_fit) {
            abs_shipped.push_back(std::fabs(row.shipped.rel_error));
            abs_in.push_back(std::fabs(row.insample_rel_error));
            abs_out.push_back(std::fabs(row.heldout_rel_error));
            rep.max_abs_heldout = std::max(rep.max_abs_heldout, abs_out.back());
        }
        rep.rows.push_back(std::move(row));
    }
    rep.mean_abs_shipped = mean_of(abs_shipped);
    rep.mean_abs_insample = mean_of(abs_in);
    rep.mean_abs_heldout = mean_of(abs_out);
    return rep;
}

}  // namespace trex::plan
