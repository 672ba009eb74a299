#include "trex/plan/compare.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "trex/base/error.hpp"

namespace trex::plan {

measured_dist measured_dist_from_json(const json& j, const std::string& source) {
    const jreader r(j, source);
    r.check_keys({"bench", "world", "config", "batch", "seq", "steps", "rounds", "optimizer", "omp_threads", "rows"});
    if (r.str("bench", "") != "trex bench dist") r.fail("bench", "not the output of `trex bench dist --json`");
    measured_dist m;
    m.source = source;
    m.world = (int)r.integer_req("world", 1, 1 << 20);
    m.config = r.str_req("config");
    m.batch = r.integer_req("batch", 1, 1 << 20);
    m.seq = r.integer_req("seq", 1, 1 << 24);
    m.optimizer = r.choice("optimizer", "muon", {"muon", "adamw"});
    for (const jreader& x : r.object_list("rows")) {
        x.check_keys({"layout", "tp", "pp", "dp", "ep", "ep_overlap", "step_s", "compute_s", "exposed_s",
                      "ep_exposed_s", "tp_exposed_s", "sync_exposed_s", "weights_grads_mib", "optimizer_mib"});
        measured_layout l;
        l.layout = x.str_req("layout");
        l.tp = (int)x.integer("tp", 1, 1, 1 << 16);
        l.pp = (int)x.integer("pp", 1, 1, 1 << 16);
        l.dp = (int)x.integer_req("dp", 1, 1 << 20);
        l.ep = (int)x.integer("ep", 1, 1, 1 << 20);
        l.ep_overlap = x.boolean("ep_overlap", false);
        l.step = x.num_req("step_s", 0, 1e6);
        l.compute = x.num_req("compute_s", -1e6, 1e6);
        l.exposed = x.num_req("exposed_s", 0, 1e6);
        l.ep_exposed = x.num("ep_exposed_s", 0, 0, 1e6);
        l.sync_exposed = x.num("sync_exposed_s", 0, 0, 1e6);
        // the per-rank memory columns are checked, not compared (the plan compares times)
        x.num("weights_grads_mib", 0, 0, 1e12);
        x.num("optimizer_mib", 0, 0, 1e12);
        if ((int64_t)l.tp * l.pp * l.dp != m.world)
            x.fail("dp", fmt::format("tp {} x pp {} x dp {} is not the world size {}", l.tp, l.pp, l.dp, m.world));
        m.rows.push_back(l);
    }
    if (m.rows.empty()) r.fail("rows", "no measured layouts");
    return m;
}

namespace {

// The setup and layout of our engine's run of one measured row: fp32 everywhere, ZeRO-1, gradient reduction after
// the backward (not overlapped), EP all-to-all with one copy per destination expert, the bench's EP overlap.
void setup_of(const measured_dist& m, const measured_layout& x, plan_setup& s, plan_layout& l) {
    s.seq_len = m.seq;
    s.micro_batch = (int)m.batch;
    s.global_batch = m.batch * x.dp;
    s.precision = "fp32";
    s.optimizer = m.optimizer;
    s.zero1 = true;
    s.recompute = {"none"};
    s.sequence_parallel = false;
    s.ep_dispatcher = "alltoall";
    s.ep_overlap = x.ep_overlap;
    s.dp_overlap = false;
    l.tp = x.tp;
    l.pp = x.pp;
    l.ep = x.ep;
}

double rel_err(double pred, double meas) {
    return meas > 0 ? pred / meas - 1 : 0.0;
}

}  // namespace

compare_result compare_with_measured(const measured_dist& m, const plan_model& model, const hardware_profile& hw,
                                     const calibration& cal) {
    compare_result c;
    for (const measured_layout& x : m.rows) {
        compare_row row;
        row.measured = x;
        setup_of(m, x, row.setup, row.layout);
        check_layout(model, hw, m.world, row.setup, row.layout);
        row.predicted = evaluate(model, hw, cal, m.world, row.setup, row.layout);
        const plan_result& p = row.predicted;
        double comm_mb = 0;  // communication per micro-batch on the slowest stage
        for (const stage_cost& st : p.stages)
            if (st.t_mb >= p.t_mb_max) comm_mb = st.t_tp + st.t_ep + st.t_pp + st.t_cp;
        row.pred_comm = (double)p.micro_batches * comm_mb + p.t_dp_exposed;
        row.pred_compute = p.t_step - row.pred_comm;
        c.rows.push_back(row);
    }
    const compare_row& first = c.rows.front();
    c.compute_scale = first.pred_compute > 0 ? first.measured.compute / first.pred_compute : 1.0;
    for (compare_row& row : c.rows) row.pred_step_scaled = row.pred_comm + row.pred_compute * c.compute_scale;
    return c;
}

std::string format_compare(const compare_result& c, const measured_dist& m, const hardware_profile& hw) {
    std::string s =
        fmt::format("trex plan compare: {} ({} ranks, {} x {} tokens per rank, {}) against the planner on {} ({})\n\n",
                    m.source, m.world, m.batch, m.seq, m.optimizer, hw.name, hw.path);
    s += "| layout | EP overlap | measured step ms | predicted ms | error | measured compute ms | predicted compute "
         "ms | measured exposed comm ms | predicted comm ms | error | predicted step, compute scaled ms | error |\n";
    s += "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const compare_row& r : c.rows) {
        const measured_layout& x = r.measured;
        s += fmt::format(
            "| {} | {} | {:.1f} | {:.1f} | {:+.0f}% | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:+.0f}% | {:.1f} | {:+.0f}% "
            "|\n",
            x.layout, x.ep > 1 ? (x.ep_overlap ? "on" : "off") : "-", x.step * 1e3, r.predicted.t_step * 1e3,
            100 * rel_err(r.predicted.t_step, x.step), x.compute * 1e3, r.pred_compute * 1e3, x.exposed * 1e3,
            r.pred_comm * 1e3, 100 * rel_err(r.pred_comm, x.exposed), r.pred_step_scaled * 1e3,
            100 * rel_err(r.pred_step_scaled, x.step));
    }
    s += fmt::format(
        "\ncompute scale {:.2f}: measured / predicted compute of the first row (the planner counts GEMM FLOPs at the "
        "measured sgemm rate; the CPU step also spends time in the attention core, mHC, norms, routing and the "
        "optimizer's small matrices). The scaled column applies it to every row, so its error is that of the "
        "communication model.\n",
        c.compute_scale);
    return s;
}

std::string compare_json(const compare_result& c, const measured_dist& m, const hardware_profile& hw) {
    nlohmann::ordered_json j;
    j["measured"] = m.source;
    j["hardware"] = hw.path;
    j["compute_scale"] = c.compute_scale;
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const compare_row& r : c.rows) {
        const measured_layout& x = r.measured;
        a.push_back({{"layout", x.layout},
                     {"tp", x.tp},
                     {"pp", x.pp},
                     {"dp", x.dp},
                     {"ep", x.ep},
                     {"ep_overlap", x.ep_overlap},
                     {"measured_step_s", x.step},
                     {"predicted_step_s", r.predicted.t_step},
                     {"measured_compute_s", x.compute},
                     {"predicted_compute_s", r.pred_compute},
                     {"measured_exposed_comm_s", x.exposed},
                     {"predicted_comm_s", r.pred_comm},
                     {"predicted_step_compute_scaled_s", r.pred_step_scaled}});
    }
    j["rows"] = a;
    return j.dump(2) + "\n";
}

}  // namespace trex::plan
