#include "trex/plan/validate.hpp"

#include <fmt/format.h>

#include <cmath>

#include "trex/base/error.hpp"

namespace trex::plan {

std::vector<validation_point> load_validation(const std::string& name) {
    const std::string path = resolve_data_file(name, "configs/plan", "validation file");
    const json j = read_json_file(path);
    jreader r(j, path);
    r.check_keys({"points"});
    std::vector<validation_point> out;
    for (const jreader& p : r.object_list("points")) {
        p.check_keys({"id", "title", "assumptions", "model", "hardware", "devices", "setup", "layout", "reported",
                      "tested", "tolerance", "close"});
        validation_point v;
        v.id = p.str_req("id");
        v.title = p.str("title", v.id);
        v.assumptions = p.str("assumptions", "");
        if (p.raw().contains("source") && p.raw()["source"].is_string()) v.source = p.raw()["source"];
        v.run.model = p.str_req("model");
        v.run.hardware = p.str_req("hardware");
        v.run.devices = p.integer_req("devices", 1, (int64_t)1 << 30);
        v.run.setup = setup_from_json(p.object("setup", true));
        v.run.layout = layout_from_json(p.object("layout", true));
        const jreader rep = p.object("reported");
        rep.check_keys({"metric", "value"});
        v.metric = rep.choice("metric", "mfu", {"mfu", "tflops_per_device", "tokens_per_s_per_device", "step_time_s"});
        v.reported = rep.num_req("value", 1e-12, 1e12);
        v.tested = p.boolean("tested", false);
        v.tolerance = p.num("tolerance", 0.15, 0, 10);
        v.close = p.choice("close", "", {"", "gemm_efficiency", "memory_passes", "ep_overlap"});
        out.push_back(v);
    }
    return out;
}

double metric_value(const plan_result& r, const std::string& metric) {
    if (metric == "mfu") return r.mfu;
    if (metric == "tflops_per_device") return r.tflops_per_device;
    if (metric == "tokens_per_s_per_device") return r.tokens_per_s_per_device;
    if (metric == "step_time_s") return r.t_step;
    throw_error(fmt::format("unknown metric '{}'", metric));
}

namespace {

double* knob(calibration& c, const std::string& name) {
    if (name == "gemm_efficiency") return &c.gemm_efficiency;
    if (name == "memory_passes") return &c.memory_passes;
    if (name == "ep_overlap") return &c.ep_overlap;
    return nullptr;
}

}  // namespace

validation_row validate_point(const validation_point& p, const calibration& cal) {
    validation_row row;
    row.point = p;
    const plan_model m =
        load_plan_model(p.run.model, p.run.setup.seq_len, p.run.setup.flash_attention, p.run.setup.dense_csa);
    const hardware_profile hw = load_hardware(p.run.hardware);
    row.result = evaluate(m, hw, cal, p.run.devices, p.run.setup, p.run.layout);
    row.predicted = metric_value(row.result, p.metric);
    row.rel_error = (row.predicted - p.reported) / p.reported;
    row.within = std::fabs(row.rel_error) <= p.tolerance;
    if (p.metric == "mfu" && row.result.tokens_per_s_per_device > 0) {
        row.implied_flops_per_token = p.reported * hw.mfu_peak_tflops() * 1e12 / row.result.tokens_per_s_per_device;
        row.implied_peak_tflops = row.result.tflops_per_device / p.reported;
    }
    if (!p.close.empty()) {
        // bisection on the constant: every metric but step time grows with efficiency / overlap, shrinks with passes
        calibration c = cal;
        double* k = knob(c, p.close);
        double lo = p.close == "memory_passes" ? 0.0 : 0.01, hi = p.close == "memory_passes" ? 100.0 : 1.0;
        auto f = [&](double x) {
            *k = x;
            if (p.close == "gemm_efficiency") c.fp8_gemm_efficiency = cal.fp8_gemm_efficiency * x / cal.gemm_efficiency;
            const double v = metric_value(evaluate(m, hw, c, p.run.devices, p.run.setup, p.run.layout), p.metric);
            return p.metric == "step_time_s" ? p.reported - v : v - p.reported;
        };
        double flo = f(lo), fhi = f(hi);
        const bool increasing = fhi > flo;
        if ((flo > 0) == (fhi > 0)) {
            row.close_note = fmt::format("no value of {} in [{}, {}] closes it ({} ranges {:.4g} .. {:.4g})", p.close,
                                         lo, hi, p.metric, flo + p.reported, fhi + p.reported);
        } else {
            for (int it = 0; it < 60; it++) {
                const double mid = 0.5 * (lo + hi);
                const double fm = f(mid);
                if ((fm > 0) == increasing)
                    hi = mid;
                else
                    lo = mid;
            }
            row.close_value = 0.5 * (lo + hi);
            calibration shared = cal;
            row.close_note = fmt::format("closes with {} = {:.3f} (shared value {:.3f})", p.close, row.close_value,
                                         *knob(shared, p.close));
        }
    }
    return row;
}

std::vector<validation_row> validate_all(const std::vector<validation_point>& pts, const calibration& cal) {
    std::vector<validation_row> rows;
    for (const auto& p : pts) rows.push_back(validate_point(p, cal));
    return rows;
}

}  // namespace trex::plan
