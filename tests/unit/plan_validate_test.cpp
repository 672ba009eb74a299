// trex plan against published runs (configs/plan/validation.json with the one calibration set), the memory facts the
// issue names, the layout search, and the CLI.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <string>

#include "support/test_support.hpp"
#include "trex/plan/cost.hpp"
#include "trex/plan/search.hpp"
#include "trex/plan/validate.hpp"

using namespace trex::plan;
using trex::test::run_command;
using trex::test::trex_binary;

// Every point marked tested is within its tolerance (±15%) under the shared calibration.
TEST(PlanValidate, PublishedRunsWithinTolerance) {
    const calibration cal = load_calibration();
    const auto points = load_validation();
    int tested = 0;
    for (const auto& p : points) {
        if (!p.tested) continue;
        tested++;
        const validation_row r = validate_point(p, cal);
        EXPECT_TRUE(r.within) << p.id << ": reported " << p.reported << ", predicted " << r.predicted << " ("
                              << 100 * r.rel_error << "%)";
        EXPECT_LE(p.tolerance, 0.15) << p.id;
        EXPECT_TRUE(r.result.fits) << p.id << " does not fit: " << r.result.peak_GB << " GB";
    }
    EXPECT_GE(tested, 14);
}

// The memory facts: the T-Rex V4-Pro template (TP2 PP8 EP64 on 512 A3 dies) does not fit in 64 GB without
// optimizer swap and fits with it; DeepSeek-V3's layout (PP16 EP64, 2,048 H800) fits.
TEST(PlanValidate, MemoryFacts) {
    const calibration cal = load_calibration();
    const plan_model pro = load_plan_model("v4-pro", 4096);
    const hardware_profile die = load_hardware("ascend910c_die");
    plan_setup s;
    s.seq_len = 4096;
    s.global_batch = 1024;
    s.recompute = {"full"};
    plan_layout l;
    l.tp = 2, l.pp = 8, l.ep = 64;
    const plan_result no_swap = evaluate(pro, die, cal, 512, s, l);
    EXPECT_FALSE(no_swap.fits);
    // weights + grads + optimizer alone are about 70 GB (planner_facts §3.3)
    const auto& st = no_swap.stages[1];
    EXPECT_GT(st.weights_GB + st.grads_GB + st.optimizer_GB, 64);
    s.optimizer_swap = true;
    const plan_result swap = evaluate(pro, die, cal, 512, s, l);
    EXPECT_TRUE(swap.fits);
    EXPECT_NEAR(swap.stages[1].weights_GB + swap.stages[1].grads_GB, 29, 2);  // "≈ 32 GB" incl. the dense optimizer

    for (const auto& p : load_validation()) {
        if (p.id != "dsv3-h800-2048") continue;
        const validation_row r = validate_point(p, cal);
        EXPECT_TRUE(r.result.fits);
        EXPECT_LE(r.result.peak_GB, 80);
    }
}

// The runs that do not close from public numbers print what would close them.
TEST(PlanValidate, OpenRowsPrintTheirClosingAssumption) {
    const calibration cal = load_calibration();
    int open = 0;
    for (const auto& p : load_validation()) {
        if (p.id != "trex-v4-pro" && p.id != "pangu-ultra-moe-6k") continue;
        open++;
        EXPECT_FALSE(p.tested);
        const validation_row r = validate_point(p, cal);
        EXPECT_FALSE(r.close_note.empty()) << p.id;
        // implied FLOPs per token at the predicted throughput reproduce the reported MFU
        EXPECT_NEAR(r.implied_flops_per_token * r.result.tokens_per_s_per_device /
                        (load_hardware(p.run.hardware).mfu_peak_tflops() * 1e12),
                    p.reported, 1e-9);
        EXPECT_FALSE(p.assumptions.empty());
    }
    EXPECT_EQ(open, 2);
}

// The search over all layouts of V4-Pro on 1,024 A3 dies ranks the fitting ones (its time, against the 10 s
// bound, is a benchmark: docs/benchmarks.md, not a timed test).
TEST(PlanSearch, V4ProOn1024DiesRanksFittingLayouts) {
    const plan_model m = load_plan_model("v4-pro", 4096);
    const hardware_profile hw = load_hardware("ascend910c_die");
    plan_setup s;
    s.seq_len = 4096;
    s.global_batch = 1024;
    search_options o;
    o.top = 10;
    const search_report rep = search_layouts(m, hw, load_calibration(), 1024, s, o);
    EXPECT_GT(rep.evaluated, 1000);
    EXPECT_GT(rep.impossible, 0);
    EXPECT_GT(rep.not_fitting, 0);
    ASSERT_EQ(rep.best.size(), 10u);
    for (size_t i = 0; i < rep.best.size(); i++) {
        EXPECT_TRUE(rep.best[i].result.fits);
        EXPECT_GE(rep.best[i].result.headroom_GB, 0);
        if (i > 0) {
            EXPECT_GE(rep.best[i - 1].result.tokens_per_s, rep.best[i].result.tokens_per_s);
        }
        // the ranked prediction is the one `trex plan` gives for that layout
        const plan_result again = evaluate(m, hw, load_calibration(), 1024, rep.best[i].setup, rep.best[i].layout);
        EXPECT_DOUBLE_EQ(again.tokens_per_s, rep.best[i].result.tokens_per_s);
    }
}

TEST(PlanCli, BreakdownSearchValidateJson) {
    const std::string t = trex_binary();
    auto r = run_command(t +
                         " plan --model v4-pro --hardware ascend910c_die --devices 512 --tp 2 --pp 8 --ep 64 "
                         "--gbs 1024 --recompute full --swap --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j["memory"]["fits"].get<bool>());
    EXPECT_EQ(j["stages"].size(), 8u);
    EXPECT_GT(j["throughput"]["mfu"].get<double>(), 0);
    EXPECT_NE(j["flops_per_token"]["formula"].get<std::string>().find("megatron convention"), std::string::npos);

    r = run_command(t +
                    " plan --model v4-pro --hardware ascend910c_die --devices 512 --tp 2 --pp 8 --ep 64 "
                    "--gbs 1024 --recompute full");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("DOES NOT FIT"), std::string::npos);
    EXPECT_NE(r.out.find("FLOPs/token"), std::string::npos);

    // a run file, and a command-line override of it
    r = run_command(t + " plan --run configs/plan/runs/v4-pro-a3-template.json --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j["memory"]["fits"].get<bool>());
    EXPECT_EQ(j["layout"]["vpp"].get<int>(), 2);
    r = run_command(t + " plan --run configs/plan/runs/v4-pro-a3-template.json --no-swap --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_FALSE(nlohmann::json::parse(r.out)["memory"]["fits"].get<bool>());

    r = run_command(t +
                    " plan search --model v4-flash --hardware ascend910c_die --devices 128 --gbs 1024 --top 3 "
                    "--json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["best"].size(), 3u);
    EXPECT_GE(j["best"][0]["headroom_gb"].get<double>(), 0);

    r = run_command(t + " plan validate --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    j = nlohmann::json::parse(r.out);
    EXPECT_GE(j["points"].size(), 17u);
    EXPECT_EQ(j["calibration"]["file"].get<std::string>().find("calibration.json") != std::string::npos, true);
}

TEST(PlanCli, BadInputIsOneLine) {
    const std::string t = trex_binary();
    for (const auto& [args, want] : std::vector<std::pair<std::string, std::string>>{
             {"--model v4-pro --hardware ascend910c_die --devices 528 --tp 3 --pp 8 --ep 64",
              "TP 3 does not divide the 128 attention heads"},
             {"--model v4-pro --hardware nope --devices 512", "hardware profile 'nope' not found"},
             {"--model v4-pro --hardware ascend910c_die --devices 512 --precision fp8", "has no fp8 peak"},
             {"--model v4-pro --hardware ascend910c_die --devices 512 --recompute attn",
              "unknown recompute module 'attn'"},
             {"--hardware ascend910c_die --devices 512", "--model (or --run) is required"}}) {
        const auto r = run_command(t + " plan " + args);
        EXPECT_NE(r.exit_code, 0) << args;
        EXPECT_NE(r.out.find(want), std::string::npos) << args << ": " << r.out;
        std::string out = r.out;
        while (!out.empty() && out.back() == '\n') out.pop_back();
        EXPECT_EQ(out.find('\n'), std::string::npos) << args << ": " << r.out;
    }
}

// `trex plan calibrate` writes a profile of this machine from `trex bench step --json` numbers and a bandwidth
// file; the profile loads and pins the measured GEMM efficiency (sgemm / FMA peak).
TEST(PlanCli, CalibrateWritesALoadableProfile) {
    const std::string dir = trex::test::scratch_dir("plan_calibrate");
    const std::string bench = dir + "/bench.json", bw = dir + "/bw.json", out = dir + "/measured.json";
    ASSERT_EQ(
        run_command("echo '{\"peak_gflops\": 200, \"sgemm_gflops\": 150, \"gflops\": 90}' > '" + bench + "'").exit_code,
        0);
    ASSERT_EQ(run_command("echo '{\"intra_gbps\": 8, \"inter_gbps\": 1.5, \"node_size\": 2, \"hbm_gbps\": 30, "
                          "\"memory_gb\": 16}' > '" +
                          bw + "'")
                  .exit_code,
              0);
    auto r = run_command(trex_binary() + " plan calibrate --bench '" + bench + "' --bandwidth '" + bw + "' --out '" +
                         out + "'");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const hardware_profile hw = load_hardware(out);
    EXPECT_DOUBLE_EQ(hw.tflops_fp32, 0.2);
    EXPECT_EQ(hw.mfu_peak, "fp32");
    EXPECT_DOUBLE_EQ(hw.gemm_efficiency, 0.75);
    EXPECT_EQ(hw.node_size, 2);
    ASSERT_EQ(hw.tiers.size(), 2u);
    EXPECT_DOUBLE_EQ(hw.tiers[0].bw_GBps, 8);
    EXPECT_DOUBLE_EQ(hw.tiers[1].bw_GBps, 1.5);
    // and the planner predicts with it (FP32 GEMMs on this machine)
    r = run_command(trex_binary() + " plan --model v4-tiny --hardware '" + out +
                    "' --devices 2 --precision fp32 --gbs 2 --seq 256 --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_GT(j["time"]["step_s"].get<double>(), 0);
    // a bandwidth file with a typo is a one-line error naming the key
    ASSERT_EQ(run_command("echo '{\"intra_gbps\": 8, \"inter_gbp\": 1}' > '" + bw + "'").exit_code, 0);
    r = run_command(trex_binary() + " plan calibrate --bench '" + bench + "' --bandwidth '" + bw + "' --out '" + out +
                    "'");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.out.find("key 'inter_gbp': unknown key"), std::string::npos) << r.out;
}
