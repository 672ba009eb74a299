// Calibration against ourselves (docs/plan.md §9): `trex plan compare` maps a `trex bench dist` measurement to the
// planner's setup and layout of our engine (fp32 payloads, ZeRO-1, gradient reduction not overlapped, the bench's EP
// overlap) and puts predictions next to the measured times.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <string>

#include <unistd.h>

#include "support/test_support.hpp"
#include "trex/plan/compare.hpp"

using namespace trex::plan;
using trex::test::run_command;
using trex::test::trex_binary;

namespace {

hardware_profile this_machine(double link_gbps) {
    const std::string h = R"({"name": "test-cpu", "unit": "CPU rank", "peak_tflops": {"fp32": 0.1}, "mfu_peak": "fp32",
        "hbm_gb": 12, "hbm_bw_gbps": 8, "node_size": 2,
        "tiers": [{"name": "intra", "size": 2, "bw_gbps": )" +
                          std::to_string(link_gbps) +
                          R"(, "latency_us": 1, "efficiency": 1.0},
                  {"name": "inter", "size": 0, "bw_gbps": 1, "latency_us": 10, "efficiency": 1.0}],
        "efficiency": {"gemm": 0.8, "memory": 1.0}})";
    return hardware_from_json(nlohmann::json::parse(h), "<test>");
}

nlohmann::json measured_json() {
    return nlohmann::json::parse(R"({"bench": "trex bench dist", "world": 2, "config": "<embedded v4-tiny>",
        "batch": 2, "seq": 64, "steps": 2, "rounds": 1, "optimizer": "muon", "omp_threads": 1, "rows": [
        {"layout": "dp2", "tp": 1, "pp": 1, "dp": 2, "ep": 1, "ep_overlap": false, "step_s": 1.0, "compute_s": 0.9,
         "exposed_s": 0.1, "ep_exposed_s": 0, "sync_exposed_s": 0.1},
        {"layout": "ep2 off", "tp": 1, "pp": 1, "dp": 2, "ep": 2, "ep_overlap": false, "step_s": 1.1,
         "compute_s": 0.9, "exposed_s": 0.2, "ep_exposed_s": 0.12, "sync_exposed_s": 0.08},
        {"layout": "ep2 on", "tp": 1, "pp": 1, "dp": 2, "ep": 2, "ep_overlap": true, "step_s": 1.05,
         "compute_s": 0.9, "exposed_s": 0.15, "ep_exposed_s": 0.07, "sync_exposed_s": 0.08}]})");
}

double ep_time(const compare_row& r) {
    double t = 0;
    for (const stage_cost& s : r.predicted.stages) t = std::max(t, s.t_ep);
    return t;
}

}  // namespace

TEST(PlanCompare, MapsTheBenchToOurEngineAndPredicts) {
    const measured_dist m = measured_dist_from_json(measured_json(), "<m>");
    const plan_model model = load_plan_model("v4-tiny", m.seq);
    const calibration cal = load_calibration();
    const compare_result c = compare_with_measured(m, model, this_machine(2.0), cal);
    ASSERT_EQ(c.rows.size(), 3u);
    for (const compare_row& r : c.rows) {
        EXPECT_EQ(r.setup.precision, "fp32");
        EXPECT_EQ(r.setup.global_batch, 4);  // 2 rows per rank x dp 2
        EXPECT_EQ(r.setup.micro_batch, 2);
        EXPECT_EQ(r.predicted.micro_batches, 1);
        // our engine reduces gradients after the backward: nothing of the DP traffic is hidden
        EXPECT_DOUBLE_EQ(r.predicted.t_dp_exposed, r.predicted.t_dp);
        EXPECT_GT(r.pred_compute, 0);
        EXPECT_NEAR(r.pred_compute + r.pred_comm, r.predicted.t_step, 1e-12);
    }
    // DP rows move no tokens; EP rows do, and the overlap hides the calibration's fraction of it
    EXPECT_EQ(ep_time(c.rows[0]), 0.0);
    EXPECT_GT(ep_time(c.rows[1]), 0.0);
    EXPECT_NEAR(ep_time(c.rows[2]), (1 - cal.ep_overlap) * ep_time(c.rows[1]), 1e-15);
    // ZeRO-1 over 2 ranks in fp32: each rank sends half of every gradient (4 B) and receives half of the updated
    // weights (4 B): 4 B x parameters over the link, plus one latency per ring step of the two groups
    const compare_row& dp = c.rows[0];
    EXPECT_NEAR(dp.predicted.t_dp, 4.0 * model.total_params / 2e9 + 2e-6, 1e-9 * dp.predicted.t_dp);
    // the compute scale matches the first row's measured compute exactly
    EXPECT_NEAR(c.compute_scale, 0.9 / dp.pred_compute, 1e-12);
    EXPECT_NEAR(dp.pred_step_scaled, dp.pred_comm + 0.9, 1e-12);
    // twice the link bandwidth: the DP time halves (up to the latency term), compute is unchanged
    const compare_result fast = compare_with_measured(m, model, this_machine(4.0), cal);
    EXPECT_NEAR(fast.rows[0].predicted.t_dp - 2e-6, 0.5 * (dp.predicted.t_dp - 2e-6), 1e-12);
    EXPECT_NEAR(fast.rows[0].pred_compute, dp.pred_compute, 1e-12);
    // the report names every layout and the scale
    const std::string table = format_compare(c, m, this_machine(2.0));
    EXPECT_NE(table.find("| ep2 on | on |"), std::string::npos) << table;
    EXPECT_NE(table.find("compute scale"), std::string::npos);
}

TEST(PlanCompare, BadMeasurementsAreOneLineErrorsNamingTheKey) {
    auto fails = [](nlohmann::json j, const std::string& needle) {
        try {
            measured_dist_from_json(j, "m.json");
        } catch (const std::exception& e) {
            const std::string w = e.what();
            EXPECT_NE(w.find(needle), std::string::npos) << w;
            EXPECT_EQ(w.find('\n'), std::string::npos) << w;
            return;
        }
        ADD_FAILURE() << "accepted: " << needle;
    };
    nlohmann::json j = measured_json();
    j["bench"] = "trex bench step";
    fails(j, "bench");
    j = measured_json();
    j["rows"][1]["dp"] = 3;
    fails(j, "is not the world size 2");
    j = measured_json();
    j["rows"][0].erase("step_s");
    fails(j, "step_s");
    j = measured_json();
    j["rows"] = nlohmann::json::array();
    fails(j, "rows");
    j = measured_json();
    j["rows"][0]["stepp_s"] = 1;
    fails(j, "stepp_s");
}

// The whole chain through the binary: calibrate from bench files, then compare (JSON out).
TEST(PlanCli, CompareRunsOnBenchDistOutput) {
    const std::string dir = trex::test::scratch_dir("plan_compare");
    const std::string bench = dir + "/bench.json", bw = dir + "/bw.json", hw = dir + "/hw.json",
                      dist = dir + "/dist.json";
    std::ofstream(bench) << R"({"peak_gflops": 100, "sgemm_gflops": 80})";
    std::ofstream(bw) << R"({"intra_gbps": 2, "inter_gbps": 2, "node_size": 2, "hbm_gbps": 8, "memory_gb": 12,
                             "latency_us": 1, "measured": {"ranks": 2}})";
    std::ofstream(dist) << measured_json().dump();
    auto r = run_command(trex_binary() + " plan calibrate --bench '" + bench + "' --bandwidth '" + bw + "' --out '" +
                         hw + "'");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    r = run_command(trex_binary() + " plan compare --measured '" + dist + "' --hardware '" + hw + "' --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["rows"].size(), 3u);
    for (const auto& row : j["rows"]) {
        EXPECT_GT(row["predicted_step_s"].get<double>(), 0);
        EXPECT_GT(row["measured_step_s"].get<double>(), 0);
    }
    EXPECT_GT(j["rows"][1]["predicted_comm_s"].get<double>(), j["rows"][2]["predicted_comm_s"].get<double>());
    // a bench file from one rank has no link numbers: calibrate names the missing key
    std::ofstream(bw) << R"({"node_size": 1, "hbm_gbps": 8, "memory_gb": 12})";
    r = run_command(trex_binary() + " plan calibrate --bench '" + bench + "' --bandwidth '" + bw + "' --out '" + hw +
                    "'");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.out.find("intra_gbps"), std::string::npos) << r.out;
}
