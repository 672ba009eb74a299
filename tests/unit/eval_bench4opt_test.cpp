// Bench4Opt in the layouts the T-Rex repository's or_benchmark_eval/data ships (ORGEval: test.jsonl + lp_data/ +
// lp_code/; Feasible: test.jsonl + lp_final/ + lp_code/, reference LPs as Gurobi's model.write() writes them).
// The fixtures (tests/fixtures/eval/trex_suite/bench4opt*) are our own problems in those layouts. Shown here: every
// reference LP reads; the oracle answers pass — the reference LP as an LP answer, and the reference gurobipy code
// (which builds the model and calls model.write("model.lp") without solving) judged by the structure of the LP it
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
    return source_path("tests/fixtures/eval/trex_suite/" + name);
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

// `trex eval run --suite trex DIR` on a folder laid out like the T-Rex repository's or_benchmark_eval/data: the four
// benchmarks found and named as the paper names them, run under --protocol trex (its extraction; a program that built
// `model` without solving it gets it solved, as the harness reads the solved model object; ORGEval from the written
// LP), the per-benchmark table and the average. Feasible and ORGEval share item ids: replayed answers name their
// benchmark.
TEST(EvalBench4Opt, SuiteTrexRunsThePapersFourBenchmarks) {
    if (!can_run_python()) GTEST_SKIP() << "no python with pulp or no sandbox isolation here";
    const std::string suite = layout("");
    std::vector<std::string> missing;
    const auto benches = trex_suite_benches(suite, &missing);
    ASSERT_EQ(benches.size(), 4u);
    EXPECT_TRUE(missing.empty());
    EXPECT_EQ(benches[0].name, "NL4OPT");
    EXPECT_EQ(benches[3].name, "B4O-ORGEval");
    auto gurobi = [](const std::string& body, bool solve) {
        return "<think>Model it.</think>\n```python\nimport gurobipy as gp\nfrom gurobipy import GRB\nmodel = "
               "gp.Model('m')\n" +
               body + (solve ? "model.optimize()\nprint('optimal_value =', model.ObjVal)\n" : "") + "```\n";
    };
    std::string lines;
    auto add = [&](const std::string& bench, const std::string& id, const std::string& text) {
        lines += ojson{{"benchmark", bench}, {"id", id}, {"completion", text}}.dump() + "\n";
    };
    // NL4OPT: built but not solved (the runner solves `model`), and solved by the program
    add("NL4OPT", "0",
        gurobi(
            "m = model.addVar(ub=60, name='muffins')\ns = model.addVar(name='scones')\nmodel.addConstr(2 * m + 3 * s "
            "<= 240)\nmodel.setObjective(1.5 * m + 2 * s, GRB.MAXIMIZE)\n",
            false));
    add("NL4OPT", "1",
        gurobi("w = model.addVar()\nc = model.addVar()\nmodel.addConstr(w + c <= 50)\nmodel.addConstr(3 * w + 2 * c <= "
               "120)\nmodel.setObjective(40 * w + 30 * c, GRB.MAXIMIZE)\n",
               true));
    // OptiBench (ReSocratic records): one right, one with a wrong price
    add("OptiBench", "OptiBench-1",
        gurobi("d = model.addVar()\nc = model.addVar(lb=10)\nmodel.addConstr(4 * d + c <= 60)\nmodel.setObjective(90 "
               "* d + 20 * c, GRB.MAXIMIZE)\n",
               true));
    add("OptiBench", "OptiBench-2",
        gurobi("a = model.addVar()\nb = model.addVar(lb=4)\nmodel.addConstr(a + b == 10)\nmodel.setObjective(5 * a + "
               "5 * b, GRB.MINIMIZE)\n",
               true));
    // Bench4Opt: the reference gurobipy code of every item (it writes model.lp and solves nothing)
    for (const char* l : {"bench4opt_feasible", "bench4opt"})
        for (const ojson& r : records(layout(l) + "/test.jsonl"))
            add(std::string(l) == "bench4opt" ? "B4O-ORGEval" : "B4O-Feasible", r["id"].get<std::string>(),
                "```python\n" + r["reference_code"].get<std::string>() + "\n```\n");
    const std::string dir = trex::test::scratch_dir("eval_b4o_suite");
    trex::write_file_atomic(dir + "/c.jsonl", lines);
    run_options o;
    o.benches = benches;
    o.protocol = "trex";
    o.out_dir = dir + "/out";
    o.progress = false;
    o.quiet = true;
    o.workers = 2;
    o.exec = default_exec_config();
    o.exec.trex_bin = trex::test::trex_binary();
    auto b = make_replay_backend(dir + "/c.jsonl");
    const run_result r = run_eval(o, *b);
    const auto& bm = r.summary.benchmark;
    EXPECT_DOUBLE_EQ(bm.at("NL4OPT").pass1, 1.0) << format_summary(r);
    EXPECT_DOUBLE_EQ(bm.at("OptiBench").pass1, 0.5) << format_summary(r);
    EXPECT_EQ(bm.at("OptiBench").outcomes[(size_t)failure::wrong_objective], 1);
    EXPECT_DOUBLE_EQ(bm.at("B4O-Feasible").pass1, 1.0) << format_summary(r);
    EXPECT_DOUBLE_EQ(bm.at("B4O-ORGEval").pass1, 1.0) << format_summary(r);
    EXPECT_DOUBLE_EQ(r.summary.macro_pass1, 0.875);
    EXPECT_EQ(r.unscorable.at("NL4OPT"), 1);
    EXPECT_EQ(r.unscorable.at("OptiBench"), 1);
    // without the protocol the Feasible reference code solves nothing: no objective to judge
    run_options plain = o;
    plain.protocol.clear();
    plain.benches = {benches[2]};
    plain.out_dir = dir + "/plain";
    auto b2 = make_replay_backend(dir + "/c.jsonl");
    const run_result rp = run_eval(plain, *b2);
    EXPECT_EQ(rp.summary.benchmark.at("B4O-Feasible").outcomes[(size_t)failure::no_solve], 3) << format_summary(rp);
    // the CLI: the same table with the average over the four
    const auto cli = trex::test::run_command(trex::test::trex_binary() + " eval run --suite trex " + suite +
                                             " --backend replay --completions " + dir + "/c.jsonl --out " + dir +
                                             "/cli --no-progress 2>&1");
    EXPECT_EQ(cli.exit_code, 0) << cli.out;
    EXPECT_NE(cli.out.find("average over benchmarks"), std::string::npos) << cli.out;
    EXPECT_NE(cli.out.find("87.50"), std::string::npos) << cli.out;
    fs::remove_all(dir);
}
