// trex plan search with a reference layout (a published run's): its rank among the searched layouts, its prediction
// and memory headroom, and the best searched setup for the same layout (src/trex/plan/search.*).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/plan/search.hpp"

using namespace trex::plan;
using trex::test::error_of;
using trex::test::run_command;
using trex::test::trex_binary;

// The T-Rex V4-Flash CPT launcher (TP1 PP4 EP32, 128 A3 dies, GBS 128): its rank is 1 + the fitting layouts the
// full search predicts faster, its prediction is `trex plan --run`'s, and the best searched setup for the same layout
// is at least as fast as its own setup (which is one of the searched setups).
TEST(PlanSearch, RanksTheReferenceLayoutAmongAllFittingOnes) {
    const plan_run run = load_run("v4-flash-a3-cpt");
    const plan_model m = load_plan_model(run.model, run.setup.seq_len);
    const hardware_profile hw = load_hardware(run.hardware);
    const calibration cal = load_calibration();
    search_options o;
    o.top = 1 << 30;  // every fitting layout
    const search_report all = search_layouts(m, hw, cal, run.devices, run.setup, o);
    o.top = 5;
    const search_report rep = search_layouts(m, hw, cal, run.devices, run.setup, o, run.layout, run.setup);
    EXPECT_EQ(rep.evaluated, all.evaluated);
    EXPECT_EQ(rep.fitting(), (int64_t)all.best.size());
    ASSERT_EQ(rep.best.size(), 5u);
    EXPECT_DOUBLE_EQ(rep.best.front().result.tokens_per_s, all.best.front().result.tokens_per_s);

    ASSERT_TRUE(rep.reference.has_value());
    const plan_result direct = evaluate(m, hw, cal, run.devices, run.setup, run.layout);
    EXPECT_DOUBLE_EQ(rep.reference->candidate.result.tokens_per_s, direct.tokens_per_s);
    EXPECT_DOUBLE_EQ(rep.reference->candidate.result.headroom_GB, direct.headroom_GB);
    ASSERT_TRUE(direct.fits);
    int64_t faster = 0;
    for (const auto& c : all.best) faster += c.result.tokens_per_s > direct.tokens_per_s;
    EXPECT_EQ(rep.reference->rank, 1 + faster);

    ASSERT_TRUE(rep.reference_best.has_value());
    const search_candidate& b = rep.reference_best->candidate;
    EXPECT_EQ(b.layout.tp, 1);
    EXPECT_EQ(b.layout.pp, 4);
    EXPECT_EQ(b.layout.ep, 32);
    EXPECT_TRUE(b.result.fits);
    EXPECT_GE(b.result.tokens_per_s, direct.tokens_per_s);
    EXPECT_LE(rep.reference_best->rank, rep.reference->rank);
}

// A reference layout that does not fit is reported with rank 0; an impossible one is a one-line error.
TEST(PlanSearch, ReferenceThatDoesNotFitOrIsImpossible) {
    plan_run run = load_run("v4-pro-a3-template");
    const plan_model m = load_plan_model(run.model, run.setup.seq_len);
    const hardware_profile hw = load_hardware(run.hardware);
    search_options o;
    o.top = 3;
    o.recompute = {{"full"}};
    o.micro_batches = {1};
    run.setup.optimizer_swap = false;  // 78 GB on a 64 GB die (test PlanValidate.MemoryFacts)
    const search_report rep =
        search_layouts(m, hw, load_calibration(), run.devices, run.setup, o, run.layout, run.setup);
    ASSERT_TRUE(rep.reference.has_value());
    EXPECT_FALSE(rep.reference->candidate.result.fits);
    EXPECT_EQ(rep.reference->rank, 0);
    // the same layout with optimizer swap (a searched setup) fits
    ASSERT_TRUE(rep.reference_best.has_value());
    EXPECT_TRUE(rep.reference_best->candidate.setup.optimizer_swap);
    EXPECT_GT(rep.reference_best->rank, 0);

    plan_layout bad = run.layout;
    bad.tp = 3;
    bad.layers_per_chunk.clear();
    EXPECT_NE(error_of([&] {
                  search_layouts(m, hw, load_calibration(), run.devices, run.setup, o, bad, run.setup);
              }).find("TP 3 does not divide"),
              std::string::npos);
}

TEST(PlanCli, SearchRanksARunFilesLayout) {
    auto r = run_command(trex_binary() + " plan search --run v4-flash-a3-cpt --top 3 --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["best"].size(), 3u);
    ASSERT_TRUE(j.contains("reference"));
    const auto& ref = j["reference"];
    EXPECT_EQ(ref["layout"].get<std::string>(), "TP1 PP4 EP32 1f1b");
    EXPECT_GE(ref["rank"].get<int64_t>(), 1);
    EXPECT_LE(ref["rank"].get<int64_t>(), ref["of_fitting"].get<int64_t>());
    EXPECT_GT(ref["tokens_per_s_per_device"].get<double>(), 0);
    EXPECT_TRUE(ref.contains("headroom_gb"));
    EXPECT_TRUE(j.contains("reference_best_setup"));

    // layout flags name the reference too; the text says where it ranks
    r = run_command(trex_binary() +
                    " plan search --model v4-flash --hardware cloudmatrix384 --devices 128 --gbs 128 --tp 1 --pp 4 "
                    "--ep 32 --top 2");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("the given layout with its own setup"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("fitting layouts"), std::string::npos) << r.out;
}
