// The story families (story_lp, story_ilp): a broad catalogue, statements that tell every number of their data and no
// other, and the formulation of shares, ratios and amounts checked against a real benchmark's known optimum.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "support/test_support.hpp"
#include "trex/optmodel/render/render.hpp"
#include "trex/optmodel/solvers/python_runner.hpp"

using namespace trex::optmodel;
using ojson = nlohmann::ordered_json;

TEST(StoryFamilies, CatalogueIsBroad) {
    std::set<std::string> domains;
    size_t stories = 0;
    for (const char* name : {"story_lp", "story_ilp"}) {
        const family& f = find_family(name);
        stories += f.scenarios.size();
        for (const auto& s : f.scenarios) domains.insert(s.domain);
    }
    EXPECT_GE(stories, 70u);
    EXPECT_GE(domains.size(), 15u);
}

// Every number of data.json is in the DP story and the story writes no other number; the story has no template
// placeholder left and ends with its goal.
TEST(StoryFamilies, EveryNumberIsToldAndNoneIsExtra) {
    int told = 0;
    for (const char* name : {"story_lp", "story_ilp"}) {
        const family& f = find_family(name);
        for (uint64_t seed = 1; seed <= 150; seed++) {
            gen_request rq;
            rq.seed = seed;
            rq.difficulty = 1 + (int)(seed % 3);
            rq.want = seed % 10 == 0 ? design::infeasible : design::feasible;
            const instance in = generate(f, rq);
            const std::string dp = render_problem(f, in, representation::dp, false, seed);
            const number_coverage c = check_numbers(dp, in.data);
            EXPECT_TRUE(c.missing.empty()) << name << " seed " << seed << ": not told " << c.missing[0] << "\n" << dp;
            EXPECT_TRUE(c.unused.empty()) << name << " seed " << seed << ": extra " << c.unused[0] << "\n" << dp;
            EXPECT_EQ(dp.find('{'), std::string::npos) << dp;
            told++;
        }
    }
    EXPECT_EQ(told, 300);
}

TEST(StoryFamilies, NumberCoverageFindsMissingAndExtraNumbers) {
    const ojson data = {{"a", 3}, {"b", {{"x", 2.5}, {"y", 40}}}};
    number_coverage c = check_numbers("Each costs $3 and 2.5 kg; at most 40% (CO2, x_1).", data);
    EXPECT_TRUE(c.missing.empty());
    EXPECT_TRUE(c.unused.empty());
    c = check_numbers("Each costs $3 and 2.5 kg; 7 more.", data);
    EXPECT_EQ(c.missing, std::vector<std::string>{"40"});
    EXPECT_EQ(c.unused, std::vector<std::string>{"7"});
}

// NL4OPT's duck-rescue problem in the family's data keys (boats carry 10 ducks a trip in 20 minutes, canoes 8 in 40;
// at most 12 boat trips; at least 60% of the trips by canoe; at least 300 ducks; minimise time): the family's program
// finds the benchmark's answer, 1160 minutes.
TEST(StoryFamilies, SharesAndAmountsReachABenchmarksKnownOptimum) {
    const std::string py = find_python_with_pulp();
    if (py.empty()) GTEST_SKIP() << "no python with pulp (run scripts/setup.sh)";
    const family& f = find_family("story_ilp");
    instance in;
    in.family = f.name;
    in.m.sense = obj_sense::minimize;
    in.data = ojson::parse(R"({"items": ["boat trip", "canoe trip"], "sense": "minimize", "objective_name": "time",
        "objective": {"boat trip": 20, "canoe trip": 40}, "requirements": ["ducks"],
        "provides": {"ducks": {"boat trip": 10, "canoe trip": 8}}, "required": {"ducks": 300},
        "max_amount": {"boat trip": 12}, "min_share_pct": {"canoe trip": 60}})");
    const std::string dir = trex::test::scratch_dir("story_duck");
    std::ofstream(dir + "/duck.py") << render_code(f, in, dialect::pulp, false);
    python_runner runner(py);
    const python_result r = runner.run(dir + "/duck.py");
    ASSERT_TRUE(r.ok) << r.error;
    std::string status;
    double obj = 0;
    bool has = false;
    ASSERT_TRUE(parse_program_output(r.output, &status, &obj, &has)) << r.output;
    EXPECT_EQ(status, "optimal");
    EXPECT_NEAR(obj, 1160.0, 1e-6) << r.output;
    std::filesystem::remove_all(dir);
}
