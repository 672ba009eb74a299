// Bench4Opt in the layouts the T-Rex repository's or_benchmark_eval/data ships (ORGEval: test.jsonl + lp_data/ +
// lp_code/; Feasible: test.jsonl + lp_final/ + lp_code/, reference LPs as Gurobi's model.write() writes them).
// The fixtures (tests/fixtures/eval/bench4opt*) are our own problems in those layouts. Shown here: every reference
// LP reads; the oracle answers pass — the reference LP as an LP answer, and the reference gurobipy code (which
// builds the model and calls model.write("model.lp") without solving) judged by the structure of the LP it
// writes, as the T-Rex harness judges ORGEval — while coefficient and structure mutants fail, and a program that
// writes no model or does not run fails with the reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "support/test_support.hpp"
#include "trex/base/files.hpp"
#include "trex/eval/backend.hpp"
#include "trex/eval/run.hpp"
#include "trex/optmodel/ir/glpk_io.hpp"

namespace fs = std::filesystem;
using namespace trex::eval;
using trex::test::source_path;

namespace {

std::string layout(const std::string& name) {
    return source_path("tests/fixtures/eval/" + name);
}

std::vector<ojson> records(const std::string& file) {
    std::vector<ojson> out;
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line))
        if (!line.empty()) out.push_back(ojson::parse(line));
    return out;
}

std::string fenced(const std::string& kind, const std::string& body) {
    return "<think>\nThe model.\n</think>\n```" + kind + "\n" + body + "\n```\n";
}

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
    const size_t p = s.find(from);
    EXPECT_NE(p, std::string::npos) << from;
    if (p != std::string::npos) s.replace(p, from.size(), to);
    return s;
}

// Runs the replayed completions {id -> completion} on one benchmark file; returns id -> results.jsonl record.
std::map<std::string, ojson> run(const std::string& bench, const std::map<std::string, std::string>& answers,
                                 const std::string& tag) {
    const std::string dir = trex::test::scratch_dir("eval_b4o_" + tag);
    std::string lines;
    for (const auto& [id, text] : answers) lines += ojson{{"id", id}, {"completion", text}}.dump() + "\n";
    trex::write_file_atomic(dir + "/completions.jsonl", lines);
    run_options o;
    o.benches.push_back({bench, ""});
    o.out_dir = dir + "/out";
    o.progress = false;
    o.quiet = true;
    o.workers = 2;
    o.exec = default_exec_config();
    o.exec.trex_bin = trex::test::trex_binary();
    auto b = make_replay_backend(dir + "/completions.jsonl");
    run_eval(o, *b);
    std::map<std::string, ojson> out;
    for (const ojson& r : records(o.out_dir + "/results.jsonl")) out[r["id"].get<std::string>()] = r;
    fs::remove_all(dir);
    return out;
}

bool can_run_python() {
    exec_config c = default_exec_config();
    return !c.python.empty() && sandbox_guarantees().isolated;
}

}  // namespace

TEST(EvalBench4Opt, TRexLayoutsLoadWithDataAndGurobiReferenceLps) {
    for (const char* l : {"bench4opt", "bench4opt_feasible"}) {
        load_report rep;
        const auto items = load_benchmark(layout(l) + "/test.jsonl", {}, &rep);
        ASSERT_EQ(items.size(), 3u) << l;
        for (const eval_item& it : items) {
            EXPECT_TRUE(fs::is_regular_file(it.data_path)) << it.id;
            EXPECT_TRUE(fs::is_regular_file(it.reference_lp_path)) << it.id;
            // the Gurobi-written reference reads (bracketed names, an empty row, binaries)
            const auto m = trex::optmodel::read_lp_file(it.reference_lp_path);
            EXPECT_GT(m.vars.size(), 0u) << it.reference_lp_path;
        }
        EXPECT_EQ(items[0].truth.kind, std::string(l) == "bench4opt" ? truth_kind::structure : truth_kind::objective);
    }
}

TEST(EvalBench4Opt, OrgEvalOracleAnswersPassAndMutantsFail) {
    if (!can_run_python()) GTEST_SKIP() << "no python with pulp or no sandbox isolation here";
    const std::string bench = layout("bench4opt") + "/test.jsonl";
    std::map<std::string, std::string> answers;
    std::map<std::string, std::string> expected;
    for (const ojson& r : records(bench)) {
        const std::string id = r["id"].get<std::string>();
        const std::string code = r["reference_code"].get<std::string>();
        const std::string lp = trex::read_file(layout("bench4opt") + "/" + r["reference_lp_path"].get<std::string>());
        answers[id + "/lp"] = fenced("lp", lp);
        answers[id + "/code"] = fenced("python", code);
        expected[id + "/lp"] = expected[id + "/code"] = "correct";
    }
    // mutants of the reference code: a coefficient, a sense, a dropped constraint family
    const ojson r0 = records(bench)[0], r1 = records(bench)[1];
    const std::string c0 = r0["reference_code"].get<std::string>(), c1 = r1["reference_code"].get<std::string>();
    answers["BENCH4OPT_0/coef"] = fenced("python", replace_once(c0, "costs[i] * x[i]", "1.01 * costs[i] * x[i]"));
    answers["BENCH4OPT_0/sense"] = fenced("python", replace_once(c0, ">= min_dosage[j]", "<= min_dosage[j]"));
    answers["BENCH4OPT_1/drop"] =
        fenced("python", replace_once(c1, "model.addConstr(quicksum(x[p, t] for t in range(T)) <= 1",
                                      "pass  # model.addConstr(quicksum(x[p, t] for t in range(T)) <= 1"));
    answers["BENCH4OPT_1/type"] = fenced("python", replace_once(c1, "vtype=GRB.BINARY", "vtype=GRB.CONTINUOUS, ub=1"));
    for (const char* m : {"BENCH4OPT_0/coef", "BENCH4OPT_0/sense", "BENCH4OPT_1/drop", "BENCH4OPT_1/type"})
        expected[m] = "structure_mismatch";
    // a renaming and reordering of the same model is equivalent
    answers["BENCH4OPT_2/renamed"] =
        fenced("python", replace_once(replace_once(records(bench)[2]["reference_code"].get<std::string>(),
                                                   "name=\"flow\"", "name=\"pipe\""),
                                      "name=f\"balance_{j}\"", "name=f\"node_{len(nodes) - j}\""));
    expected["BENCH4OPT_2/renamed"] = "correct";
    // a program that builds but writes nothing, and one that does not run
    answers["BENCH4OPT_2/nowrite"] =
        fenced("python",
               replace_once(records(bench)[2]["reference_code"].get<std::string>(), "model.write('model.lp')", "pass"));
    expected["BENCH4OPT_2/nowrite"] = "runtime_error";
    answers["BENCH4OPT_0/syntax"] = fenced("python", "import json\nmodel = (\n");
    expected["BENCH4OPT_0/syntax"] = "parse_error";

    // the replay backend keys answers by item id: one run per answer variant
    std::map<std::string, std::map<std::string, std::string>> by_variant;
    for (const auto& [key, text] : answers) {
        const std::string id = key.substr(0, key.find('/')), variant = key.substr(key.find('/') + 1);
        by_variant[variant][id] = text;
    }
    for (const auto& [variant, set] : by_variant) {
        const auto results = run(bench, set, variant);
        for (const auto& [id, text] : set) {
            ASSERT_TRUE(results.count(id)) << variant << " " << id;
            const ojson& r = results.at(id);
            const std::string got = r["correct"].get<bool>() ? "correct" : r["outcome"].get<std::string>();
            EXPECT_EQ(got, expected.at(id + "/" + variant)) << variant << " " << id << ": " << r["exec"].dump();
            EXPECT_EQ(r["exec"]["artefact"].get<std::string>(), variant == "lp" ? "lp" : "python") << variant << id;
        }
    }
}

TEST(EvalBench4Opt, FeasibleReferenceLpAnswersSolveToTheRecordedOptimum) {
    if (!can_run_python()) GTEST_SKIP() << "no python with pulp or no sandbox isolation here";
    const std::string bench = layout("bench4opt_feasible") + "/test.jsonl";
    std::map<std::string, std::string> answers;
    for (const ojson& r : records(bench))
        answers[r["id"].get<std::string>()] = fenced(
            "lp", trex::read_file(layout("bench4opt_feasible") + "/" + r["reference_lp_path"].get<std::string>()));
    const auto results = run(bench, answers, "feasible");
    ASSERT_EQ(results.size(), 3u);
    for (const auto& [id, r] : results) EXPECT_TRUE(r["correct"].get<bool>()) << id << ": " << r.dump();
}
