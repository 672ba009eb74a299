#include "trex/plan/report.hpp"

#include <fmt/format.h>

#include <cmath>

namespace trex::plan {

using ojson = nlohmann::ordered_json;

namespace {

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : "+") + x;
    return s.empty() ? "none" : s;
}

std::string secs(double t) {
    if (t >= 1) return fmt::format("{:.3f} s", t);
    return fmt::format("{:.2f} ms", t * 1e3);
}

}  // namespace

std::string setup_str(const plan_setup& s) {
    return fmt::format(
        "seq {} x GBS {} (MBS {}), {} GEMMs, {}{}{}, moments {}, grads {}, recompute {}{}{}, EP dispatch {} ({}){}{}",
        s.seq_len, s.global_batch, s.micro_batch, s.precision, s.optimizer, s.zero1 ? " ZeRO-1" : "",
        s.optimizer_swap ? " + optimizer swap" : "", s.moment_dtype, s.grad_dtype, join(s.recompute),
        s.sequence_parallel ? ", SP" : "",
        std::string(s.flash_attention ? "" : ", no flash attention") + (s.dense_csa ? ", dense CSA" : ""),
        s.ep_dispatcher, s.dispatch_dtype,
        s.node_limited_routing > 0 ? fmt::format(", <= {} nodes/token", s.node_limited_routing) : "",
        s.ep_overlap ? ", EP overlap" : "");
}

ojson calibration_json(const calibration& c) {
    return ojson{{"file", c.path},
                 {"gemm_efficiency", c.gemm_efficiency},
                 {"fp8_gemm_efficiency", c.fp8_gemm_efficiency},
                 {"attention_efficiency", c.attention_efficiency},
                 {"gemm_half_size", c.gemm_half_size},
                 {"memory_passes", c.memory_passes},
                 {"memory_efficiency", c.memory_efficiency},
                 {"ep_overlap", c.ep_overlap},
                 {"tp_overlap", c.tp_overlap},
                 {"background_overlap", c.background_overlap},
                 {"reserve_fraction", c.reserve_fraction},
                 {"comm_buffer_gb", c.comm_buffer_GB}};
}

ojson result_json(const plan_context& c, const plan_result& r) {
    ojson j;
    j["model"] = {{"name", c.model.name},
                  {"file", c.model.path},
                  {"total_params", c.model.total_params},
                  {"active_params", c.model.active_params}};
    j["hardware"] = {{"name", c.hw.name},
                     {"file", c.hw.path},
                     {"mfu_peak", c.hw.mfu_peak},
                     {"mfu_peak_tflops", c.hw.mfu_peak_tflops()},
                     {"hbm_gb", c.hw.hbm_GB}};
    j["devices"] = c.devices;
    const auto& l = c.layout;
    j["layout"] = {
        {"tp", l.tp}, {"pp", l.pp},   {"vpp", l.vpp},           {"ep", l.ep},    {"etp", l.etp}, {"cp", l.cp},
        {"dp", r.dp}, {"edp", r.edp}, {"schedule", l.schedule}, {"str", l.str()}};
    const auto& s = c.setup;
    j["setup"] = {{"seq_len", s.seq_len},
                  {"global_batch", s.global_batch},
                  {"micro_batch", s.micro_batch},
                  {"micro_batches", r.micro_batches},
                  {"precision", s.precision},
                  {"optimizer", s.optimizer},
                  {"zero1", s.zero1},
                  {"optimizer_swap", s.optimizer_swap},
                  {"recompute", s.recompute},
                  {"str", setup_str(s)}};
    j["flops_per_token"] = {{"convention", s.convention.name},
                            {"causal", s.convention.causal},
                            {"total", r.flops.total},
                            {"gemm", r.flops.gemm},
                            {"attention", r.flops.attention},
                            {"indexer", r.flops.indexer},
                            {"mtp", r.flops.mtp},
                            {"head", r.flops.head},
                            {"hardware_incl_recompute", r.hardware_flops_per_token},
                            {"formula", r.flops.formula}};
    ojson st = ojson::array();
    for (const auto& x : r.stages) {
        st.push_back({{"device", x.device},
                      {"chunks", x.chunks},
                      {"layers", x.layers},
                      {"embedding", x.embedding},
                      {"head", x.head},
                      {"params", x.params},
                      {"weights_gb", x.weights_GB},
                      {"grads_gb", x.grads_GB},
                      {"optimizer_gb", x.optimizer_GB},
                      {"activations_gb", x.activations_GB},
                      {"buffers_gb", x.buffers_GB},
                      {"total_gb", x.total_GB},
                      {"in_flight", x.in_flight},
                      {"microbatch_s",
                       {{"gemm", x.t_gemm},
                        {"attention", x.t_attention},
                        {"memory", x.t_memory},
                        {"tp", x.t_tp},
                        {"ep", x.t_ep},
                        {"pp", x.t_pp},
                        {"cp", x.t_cp},
                        {"total", x.t_mb}}}});
    }
    j["stages"] = st;
    j["memory"] = {
        {"peak_gb", r.peak_GB}, {"usable_gb", r.usable_GB}, {"headroom_gb", r.headroom_GB}, {"fits", r.fits}};
    j["time"] = {{"step_s", r.t_step},
                 {"pipeline_s", r.t_pipeline},
                 {"bubble_s", r.t_bubble},
                 {"microbatch_max_s", r.t_mb_max},
                 {"dp_s", r.t_dp},
                 {"dp_exposed_s", r.t_dp_exposed},
                 {"optimizer_s", r.t_optimizer},
                 {"swap_s", r.t_swap}};
    j["throughput"] = {{"tokens_per_s", r.tokens_per_s},
                       {"tokens_per_s_per_device", r.tokens_per_s_per_device},
                       {"tflops_per_device", r.tflops_per_device},
                       {"mfu", r.mfu}};
    j["calibration"] = calibration_json(c.cal);
    j["notes"] = r.notes;
    return j;
}

std::string format_result(const plan_context& c, const plan_result& r) {
    std::string o;
    const auto& l = c.layout;
    o += fmt::format("model     {} ({:.4g} B params, {:.4g} B active)  [{}]\n", c.model.name,
                     c.model.total_params / 1e9, c.model.active_params / 1e9, c.model.path);
    o += fmt::format("hardware  {} x {} {}, {:.0f} GB HBM, MFU peak {} {:.1f} TF  [{}]\n", c.devices, c.hw.name,
                     c.hw.unit, c.hw.hbm_GB, c.hw.mfu_peak, c.hw.mfu_peak_tflops(), c.hw.path);
    o += fmt::format("layout    {}  (DP {}, EDP {}, {} micro-batches per step)\n", l.str(), r.dp, r.edp,
                     r.micro_batches);
    o += fmt::format("setup     {}\n\n", setup_str(c.setup));
    o += fmt::format("FLOPs/token: {:.2f} GF ({}, {}); with recompute (HFU basis) {:.2f} GF\n  formula: {}\n\n",
                     r.flops.total / 1e9, c.setup.convention.name, c.setup.convention.causal ? "causal" : "non-causal",
                     r.hardware_flops_per_token / 1e9, r.flops.formula);
    o += "memory per device by pipeline stage (GB):\n";
    o += fmt::format("  {:>5} {:>7} {:>6} {:>8} {:>8} {:>8} {:>9} {:>8} {:>8} {:>8}\n", "stage", "layers", "edge",
                     "weights", "grads", "optim", "activ.", "(x mb)", "buffers", "total");
    for (const auto& s : r.stages) {
        const std::string edge = std::string(s.embedding ? "E" : "") + (s.head ? "H" : "");
        o += fmt::format("  {:>5} {:>7} {:>6} {:>8.2f} {:>8.2f} {:>8.2f} {:>9.2f} {:>8.2f} {:>8.2f} {:>8.2f}\n",
                         s.device, s.layers, edge.empty() ? "-" : edge, s.weights_GB, s.grads_GB, s.optimizer_GB,
                         s.activations_GB, s.in_flight, s.buffers_GB, s.total_GB);
    }
    o += fmt::format("  peak {:.2f} GB of {:.2f} usable ({:.0f} GB HBM): {} (headroom {:+.2f} GB)\n\n", r.peak_GB,
                     r.usable_GB, c.hw.hbm_GB, r.fits ? "FITS" : "DOES NOT FIT", r.headroom_GB);
    o += "time per micro-batch (forward + backward + recompute), per stage:\n";
    o += fmt::format("  {:>5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "stage", "gemm", "attention",
                     "memory", "tp", "ep", "pp", "cp", "total");
    for (const auto& s : r.stages)
        o += fmt::format("  {:>5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", s.device, secs(s.t_gemm),
                         secs(s.t_attention), secs(s.t_memory), secs(s.t_tp), secs(s.t_ep), secs(s.t_pp), secs(s.t_cp),
                         secs(s.t_mb));
    o += fmt::format(
        "step: {} = pipeline {} ({} micro-batches x {} + bubble {}) + DP exposed {} (of {}) + optimizer {}{}\n",
        secs(r.t_step), secs(r.t_pipeline), r.micro_batches, secs(r.t_mb_max), secs(r.t_bubble), secs(r.t_dp_exposed),
        secs(r.t_dp), secs(r.t_optimizer), r.t_swap > 0 ? " + optimizer swap " + secs(r.t_swap) : "");
    o += fmt::format(
        "throughput: {:.0f} tokens/s, {:.1f} tokens/s/device, {:.1f} TFLOPS/device, MFU {:.2f}% of {} "
        "{:.1f} TF\n",
        r.tokens_per_s, r.tokens_per_s_per_device, r.tflops_per_device, 100 * r.mfu, c.hw.mfu_peak,
        c.hw.mfu_peak_tflops());
    for (const auto& n : r.notes) o += "note: " + n + "\n";
    return o;
}

namespace {

std::string metric_str(const std::string& metric, double v) {
    if (metric == "mfu") return fmt::format("{:.2f}% MFU", 100 * v);
    if (metric == "tflops_per_device") return fmt::format("{:.0f} TF/dev", v);
    if (metric == "tokens_per_s_per_device") return fmt::format("{:.0f} tok/s/dev", v);
    return fmt::format("{:.2f} s/step", v);
}

}  // namespace

ojson validation_json(const std::vector<validation_row>& rows, const calibration& cal) {
    ojson j;
    j["calibration"] = calibration_json(cal);
    ojson a = ojson::array();
    for (const auto& r : rows) {
        ojson x{{"id", r.point.id},
                {"title", r.point.title},
                {"source", r.point.source},
                {"layout", r.point.run.layout.str()},
                {"devices", r.point.run.devices},
                {"metric", r.point.metric},
                {"reported", r.point.reported},
                {"predicted", r.predicted},
                {"rel_error", r.rel_error},
                {"tested", r.point.tested},
                {"tolerance", r.point.tolerance},
                {"within", r.within},
                {"fits", r.result.fits},
                {"peak_gb", r.result.peak_GB},
                {"mfu", r.result.mfu},
                {"tflops_per_device", r.result.tflops_per_device},
                {"tokens_per_s_per_device", r.result.tokens_per_s_per_device},
                {"step_s", r.result.t_step},
                {"flops_per_token", r.result.flops.total},
                {"assumptions", r.point.assumptions}};
        if (!r.point.close.empty()) {
            x["close"] = r.point.close;
            x["close_value"] = r.close_value;
            x["close_note"] = r.close_note;
        }
        if (r.implied_flops_per_token > 0) {
            x["implied_flops_per_token"] = r.implied_flops_per_token;
            x["implied_peak_tflops"] = r.implied_peak_tflops;
        }
        a.push_back(x);
    }
    j["points"] = a;
    return j;
}

std::string format_validation(const std::vector<validation_row>& rows, const calibration& cal) {
    std::string o = fmt::format(
        "calibration ({}): gemm {:.2f}, fp8 gemm {:.2f}, attention {:.2f}, half-size {:.0f}, memory passes {:.1f} at "
        "{:.2f} of HBM, EP overlap {:.2f}, TP overlap {:.2f}, DP/PP overlap {:.2f}\n\n",
        cal.path, cal.gemm_efficiency, cal.fp8_gemm_efficiency, cal.attention_efficiency, cal.gemm_half_size,
        cal.memory_passes, cal.memory_efficiency, cal.ep_overlap, cal.tp_overlap, cal.background_overlap);
    o += fmt::format("{:<28} {:>6} {:<36} {:>16} {:>16} {:>8} {:>6}  {}\n", "point", "dev", "layout", "reported",
                     "predicted", "error", "fits", "status");
    for (const auto& r : rows) {
        std::string status = r.point.tested ? (r.within ? "ok" : "OUT OF TOLERANCE") : "not tested";
        o += fmt::format("{:<28} {:>6} {:<36} {:>16} {:>16} {:>+7.1f}% {:>6}  {}\n", r.point.id, r.point.run.devices,
                         r.point.run.layout.str(), metric_str(r.point.metric, r.point.reported),
                         metric_str(r.point.metric, r.predicted), 100 * r.rel_error, r.result.fits ? "yes" : "NO",
                         status);
    }
    o += "\n";
    for (const auto& r : rows) {
        o += fmt::format(
            "{}: {}\n  predicted {:.2f}% MFU, {:.0f} TF/dev, {:.0f} tok/s/dev, step {:.3f} s, {:.1f} "
            "GF/token ({}), peak memory {:.1f} GB\n  assumptions: {}\n",
            r.point.id, r.point.title, 100 * r.result.mfu, r.result.tflops_per_device, r.result.tokens_per_s_per_device,
            r.result.t_step, r.result.flops.total / 1e9, r.point.run.setup.convention.name, r.result.peak_GB,
            r.point.assumptions);
        if (!r.close_note.empty()) o += "  to close: " + r.close_note + "\n";
        if (!r.point.tested && r.implied_flops_per_token > 0)
            o += fmt::format(
                "  to close at the predicted {:.0f} tok/s/dev: the FLOP count would have to be {:.1f} "
                "GF/token (counted: {:.1f}), or the MFU peak {:.1f} TF (used: {:.1f})\n",
                r.result.tokens_per_s_per_device, r.implied_flops_per_token / 1e9, r.result.flops.total / 1e9,
                r.implied_peak_tflops, r.predicted > 0 ? r.result.tflops_per_device / r.predicted : 0.0);
    }
    return o;
}

namespace {

// The fitted constants of `c`, one line.
std::string knobs_str(const calibration& c) {
    std::string s;
    for (const auto& k : fitted_knobs())
        s += fmt::format("{}{} {:.3g}", s.empty() ? "" : ", ", k.name, knob_value(c, k.name));
    return s;
}

}  // namespace

ojson holdout_json(const holdout_report& rep, const calibration& shipped) {
    std::vector<validation_row> rows;
    for (const auto& r : rep.rows) rows.push_back(r.shipped);
    ojson j = validation_json(rows, shipped);
    for (size_t i = 0; i < rep.rows.size(); i++) {
        const holdout_row& r = rep.rows[i];
        ojson& x = j["points"][i];
        x["in_fit"] = r.in_fit;
        x["insample_predicted"] = r.insample_predicted;
        x["insample_rel_error"] = r.insample_rel_error;
        x["heldout_predicted"] = r.heldout_predicted;
        x["heldout_rel_error"] = r.heldout_rel_error;
        ojson fold;
        for (const auto& k : fitted_knobs()) fold[k.name] = knob_value(r.heldout_cal, k.name);
        x["heldout_calibration"] = fold;
    }
    ojson fitted;
    for (const auto& k : fitted_knobs()) fitted[k.name] = knob_value(rep.fitted, k.name);
    j["holdout"] = {{"fit_points", rep.n_fit},
                    {"objective", "sum of log(predicted/reported)^2 over the tested points"},
                    {"fitted_calibration", fitted},
                    {"mean_abs_rel_error_shipped", rep.mean_abs_shipped},
                    {"mean_abs_rel_error_insample", rep.mean_abs_insample},
                    {"mean_abs_rel_error_heldout", rep.mean_abs_heldout},
                    {"max_abs_rel_error_heldout", rep.max_abs_heldout}};
    return j;
}

std::string format_holdout(const holdout_report& rep, const calibration& shipped) {
    std::string o = fmt::format(
        "leave-one-out over the {} tested points: the constants ({}) fitted by least squares on log(predicted/"
        "reported), once on every tested point (in-sample) and once per point on the others (held-out: that point "
        "predicted by a calibration that never saw it)\n",
        rep.n_fit, [] {
            std::string s;
            for (const auto& k : fitted_knobs()) s += (s.empty() ? "" : ", ") + k.name;
            return s;
        }());
    o += "shipped:  " + knobs_str(shipped) + "  (" + shipped.path + ")\n";
    o += "fit, all: " + knobs_str(rep.fitted) + "\n\n";
    o += fmt::format("{:<28} {:>6} {:>16} {:>9} {:>10} {:>9} {:>16}  {}\n", "point", "dev", "reported", "shipped",
                     "in-sample", "held-out", "held-out pred.", "");
    for (const auto& r : rep.rows) {
        const validation_point& p = r.shipped.point;
        o += fmt::format("{:<28} {:>6} {:>16} {:>+8.1f}% {:>+9.1f}% {:>+8.1f}% {:>16}  {}\n", p.id, p.run.devices,
                         metric_str(p.metric, p.reported), 100 * r.shipped.rel_error, 100 * r.insample_rel_error,
                         100 * r.heldout_rel_error, metric_str(p.metric, r.heldout_predicted),
                         r.in_fit ? "" : "(not fitted on: out of sample in every column)");
    }
    o += fmt::format(
        "\nmean |error| over the {} tested points: shipped {:.1f}%, in-sample {:.1f}%, held-out {:.1f}% (worst "
        "held-out {:.1f}%)\n",
        rep.n_fit, 100 * rep.mean_abs_shipped, 100 * rep.mean_abs_insample, 100 * rep.mean_abs_heldout,
        100 * rep.max_abs_heldout);
    return o;
}

namespace {

ojson candidate_json(const search_candidate& c) {
    return {{"layout", c.layout.str()},
            {"tp", c.layout.tp},
            {"pp", c.layout.pp},
            {"vpp", c.layout.vpp},
            {"ep", c.layout.ep},
            {"etp", c.layout.etp},
            {"cp", c.layout.cp},
            {"dp", c.result.dp},
            {"schedule", c.layout.schedule},
            {"micro_batch", c.setup.micro_batch},
            {"recompute", c.setup.recompute},
            {"optimizer_swap", c.setup.optimizer_swap},
            {"fits", c.result.fits},
            {"tokens_per_s_per_device", c.result.tokens_per_s_per_device},
            {"tflops_per_device", c.result.tflops_per_device},
            {"mfu", c.result.mfu},
            {"step_s", c.result.t_step},
            {"peak_gb", c.result.peak_GB},
            {"headroom_gb", c.result.headroom_GB}};
}

ojson ranked_json(const ranked_candidate& r, const search_report& rep) {
    ojson j = candidate_json(r.candidate);
    j["rank"] = r.rank;
    j["of_fitting"] = rep.fitting();
    if (!rep.best.empty())
        j["tokens_per_s_vs_best"] = r.candidate.result.tokens_per_s / rep.best.front().result.tokens_per_s;
    return j;
}

std::string search_row(const std::string& rank, const search_candidate& c) {
    const std::string l = c.layout.str() + fmt::format(" DP{}", c.result.dp);
    return fmt::format("{:>4} {:<40} {:>4} {:<28} {:>5} {:>10.1f} {:>8.1f} {:>6.2f}% {:>8.2f}s {:>9.1f} {:>+9.1f}\n",
                       rank, l, c.setup.micro_batch, join(c.setup.recompute), c.setup.optimizer_swap ? "yes" : "no",
                       c.result.tokens_per_s_per_device, c.result.tflops_per_device, 100 * c.result.mfu,
                       c.result.t_step, c.result.peak_GB, c.result.headroom_GB);
}

std::string ranked_line(const std::string& what, const ranked_candidate& r, const search_report& rep) {
    if (r.rank == 0)
        return fmt::format("{}: does not fit (peak {:.1f} GB, headroom {:+.1f} GB)\n", what, r.candidate.result.peak_GB,
                           r.candidate.result.headroom_GB);
    const double best = rep.best.empty() ? 0 : rep.best.front().result.tokens_per_s;
    return fmt::format("{}: rank {} of {} fitting layouts, {:.0f}% of the best's tokens/s\n", what, r.rank,
                       rep.fitting(), best > 0 ? 100 * r.candidate.result.tokens_per_s / best : 0.0);
}

}  // namespace

ojson search_json(const plan_model& m, const hardware_profile& hw, int64_t devices, const search_report& rep) {
    ojson j;
    j["model"] = m.name;
    j["hardware"] = hw.name;
    j["devices"] = devices;
    j["evaluated"] = rep.evaluated;
    j["impossible"] = rep.impossible;
    j["not_fitting"] = rep.not_fitting;
    j["seconds"] = rep.seconds;
    ojson a = ojson::array();
    int rank = 1;
    for (const auto& c : rep.best) {
        ojson x = candidate_json(c);
        x["rank"] = rank++;
        a.push_back(x);
    }
    j["best"] = a;
    if (rep.reference) j["reference"] = ranked_json(*rep.reference, rep);
    if (rep.reference_best) j["reference_best_setup"] = ranked_json(*rep.reference_best, rep);
    return j;
}

std::string format_search(const plan_model& m, const hardware_profile& hw, int64_t devices, const search_report& rep) {
    std::string o = fmt::format(
        "{} on {} x {}: {} layouts evaluated in {:.2f} s ({} impossible, {} do not fit, {} fit)\n\n", m.name, devices,
        hw.name, rep.evaluated, rep.seconds, rep.impossible, rep.not_fitting, rep.fitting());
    o += fmt::format("{:>4} {:<40} {:>4} {:<28} {:>5} {:>10} {:>8} {:>7} {:>9} {:>9} {:>9}\n", "rank", "layout", "MBS",
                     "recompute", "swap", "tok/s/dev", "TF/dev", "MFU", "step", "peak GB", "headroom");
    int rank = 1;
    for (const auto& c : rep.best) o += search_row(std::to_string(rank++), c);
    if (rep.best.empty()) o += "no layout fits\n";
    if (rep.reference) {
        const auto rank_str = [](const ranked_candidate& r) { return r.rank > 0 ? std::to_string(r.rank) : "-"; };
        const ranked_candidate& own = *rep.reference;
        const plan_setup& s = own.candidate.setup;
        const bool own_is_best = rep.reference_best &&
                                 rep.reference_best->candidate.setup.micro_batch == s.micro_batch &&
                                 rep.reference_best->candidate.setup.recompute == s.recompute &&
                                 rep.reference_best->candidate.setup.optimizer_swap == s.optimizer_swap;
        o += "\nthe given layout with its own setup";
        if (rep.reference_best && !own_is_best) o += ", then with the best of the searched setups for it";
        o += ":\n";
        o += search_row(rank_str(own), own.candidate);
        if (rep.reference_best && !own_is_best)
            o += search_row(rank_str(*rep.reference_best), rep.reference_best->candidate);
        o += ranked_line("  own setup", own, rep);
        if (!rep.reference_best)
            o += "  no searched setup of this layout fits\n";
        else if (own_is_best)
            o += "  (its own setup is the fastest of the searched setups for this layout)\n";
        else
            o += ranked_line("  best setup", *rep.reference_best, rep);
    }
    return o;
}

}  // namespace trex::plan
