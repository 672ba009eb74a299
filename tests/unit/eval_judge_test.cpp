// trex eval, pure parts: objective judges (tolerance edge cases, "no solution" truths, the failure taxonomy),
// answer labels, artefact extraction, pass@k and summaries, the ORGEval structural-equivalence judge, prompts and
// few-shot retrieval.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "support/test_support.hpp"
#include "trex/eval/execute.hpp"
#include "trex/eval/extract.hpp"
#include "trex/eval/judge.hpp"
#include "trex/eval/metrics.hpp"
#include "trex/eval/oracle.hpp"
#include "trex/eval/prompts.hpp"
#include "trex/eval/structure.hpp"
#include "trex/optmodel/ir/glpk_io.hpp"

namespace fs = std::filesystem;
using namespace trex::eval;
using trex::optmodel::model;

namespace {

objective_judge J(const char* kind, double tol = 0) {
    objective_judge j;
    EXPECT_TRUE(parse_objective_judge(kind, tol, &j));
    return j;
}

ground_truth objective_truth(double v) {
    ground_truth t;
    t.kind = truth_kind::objective;
    t.value = v;
    t.raw = std::to_string(v);
    return t;
}

ground_truth no_solution_truth() {
    ground_truth t;
    t.kind = truth_kind::no_solution;
    t.raw = "No Best Solution";
    return t;
}

exec_outcome optimal(double v) {
    exec_outcome o;
    o.artefact = "lp";
    o.status = "optimal";
    o.has_objective = true;
    o.objective = v;
    o.source = "solver";
    return o;
}

// A status as execution reports it: solver statuses come from a recorded solve.
exec_outcome status_only(const char* status, const char* artefact = "python") {
    exec_outcome o;
    o.artefact = artefact;
    o.status = status;
    const std::string s = status;
    if (s == "optimal" || s == "infeasible" || s == "unbounded" || s == "inf_or_unbd") o.source = "solver";
    return o;
}

}  // namespace

TEST(EvalJudge, AbsoluteToleranceIsInclusiveWithDecimalSlack) {
    const objective_judge j = J("abs");
    EXPECT_EQ(j.tol, 1e-6);
    EXPECT_TRUE(objective_matches(j, 5.0, 5.0));
    EXPECT_TRUE(objective_matches(j, 5.000001, 5.0));  // exactly 1e-6 away in decimal: inclusive
    EXPECT_TRUE(objective_matches(j, 4.999999, 5.0));
    EXPECT_FALSE(objective_matches(j, 5.0000011, 5.0));
    EXPECT_FALSE(objective_matches(j, 5.01, 5.0));
    EXPECT_TRUE(objective_matches(j, 1e-7, 0.0));
    EXPECT_FALSE(objective_matches(j, 11586.153848, 11586.153846153846));  // CBC's 8 printed digits fail abs
    EXPECT_FALSE(objective_matches(j, NAN, 5.0));
    EXPECT_FALSE(objective_matches(j, INFINITY, INFINITY));
    EXPECT_TRUE(objective_matches(J("abs", 0.5), 5.5, 5.0));
}

TEST(EvalJudge, RelativeToleranceScalesAndHandlesZeroTruth) {
    const objective_judge j = J("rel");
    EXPECT_EQ(j.tol, 1e-4);
    EXPECT_TRUE(objective_matches(j, 10001.0, 10000.0));  // 1e-4 relative, inclusive
    EXPECT_FALSE(objective_matches(j, 10001.5, 10000.0));
    EXPECT_TRUE(objective_matches(j, -10001.0, -10000.0));  // sign-symmetric
    EXPECT_FALSE(objective_matches(j, 10000.0, -10000.0));
    EXPECT_TRUE(objective_matches(j, 5e-5, 0.0));  // truth 0: |p| <= tol
    EXPECT_FALSE(objective_matches(j, 2e-4, 0.0));
    EXPECT_TRUE(objective_matches(j, 11586.153848, 11586.153846153846));
}

TEST(EvalJudge, OrlmRoundsThenAllowsFivePercent) {
    const objective_judge j = J("orlm");
    EXPECT_EQ(j.tol, 0.05);
    EXPECT_TRUE(objective_matches(j, 104.6, 100.0));   // rounds to 105: 5% inclusive
    EXPECT_FALSE(objective_matches(j, 105.6, 100.0));  // rounds to 106
    EXPECT_TRUE(objective_matches(j, 2.5, 2.0));       // half to even: 2 == 2
    EXPECT_FALSE(objective_matches(j, 3.5, 3.0));      // 4 vs 3: 33%
    EXPECT_TRUE(objective_matches(j, 0.4, 0.0));       // both round to 0
    EXPECT_FALSE(objective_matches(j, 1.0, 0.2));      // 1 vs 0
    objective_judge bad;
    EXPECT_FALSE(parse_objective_judge("exact", 0, &bad));
}

TEST(EvalJudge, NoSolutionTruths) {
    const objective_judge j = J("abs");
    const ground_truth none = no_solution_truth();
    EXPECT_TRUE(judge_outcome(none, status_only("infeasible"), j).correct);
    EXPECT_TRUE(judge_outcome(none, status_only("unbounded"), j).correct);
    EXPECT_TRUE(judge_outcome(none, status_only("inf_or_unbd"), j).correct);
    const verdict v = judge_outcome(none, optimal(3.0), j);  // a value where no optimum exists
    EXPECT_FALSE(v.correct);
    EXPECT_EQ(v.why, failure::wrong_objective);
    EXPECT_EQ(judge_outcome(none, status_only("runtime_error"), j).why, failure::runtime_error);
    EXPECT_EQ(judge_outcome(none, status_only("no_artefact", ""), j).why, failure::no_artefact);
    // an objective truth answered with "infeasible"
    EXPECT_EQ(judge_outcome(objective_truth(4.0), status_only("infeasible"), j).why, failure::infeasible);
}

TEST(EvalJudge, FailureTaxonomy) {
    const objective_judge j = J("abs");
    const ground_truth t = objective_truth(10.0);
    EXPECT_TRUE(judge_outcome(t, optimal(10.0), j).correct);
    EXPECT_EQ(judge_outcome(t, optimal(10.5), j).why, failure::wrong_objective);
    EXPECT_EQ(judge_outcome(t, status_only("no_artefact", ""), j).why, failure::no_artefact);
    EXPECT_EQ(judge_outcome(t, status_only("parse_error"), j).why, failure::parse_error);
    EXPECT_EQ(judge_outcome(t, status_only("runtime_error"), j).why, failure::runtime_error);
    EXPECT_EQ(judge_outcome(t, status_only("timeout"), j).why, failure::timeout);
    EXPECT_EQ(judge_outcome(t, status_only("no_solve"), j).why, failure::no_solve);
    EXPECT_EQ(judge_outcome(t, status_only("solver_crash"), j).why, failure::runtime_error);
    // a status that no recorded solve produced is no solve (e.g. a result of an older run read from stdout)
    exec_outcome printed = status_only("infeasible");
    printed.source = "stdout";
    EXPECT_EQ(judge_outcome(no_solution_truth(), printed, j).why, failure::no_solve);
    EXPECT_EQ(judge_outcome(t, status_only("backend_error", ""), j).why, failure::backend_error);
    exec_outcome opt_no_value = status_only("optimal");
    EXPECT_EQ(judge_outcome(t, opt_no_value, j).why, failure::runtime_error);
    // structure truths
    ground_truth s;
    s.kind = truth_kind::structure;
    exec_outcome eq = status_only("structure", "lp");
    eq.equivalent = true;
    EXPECT_TRUE(judge_outcome(s, eq, j).correct);
    eq.equivalent = false;
    EXPECT_EQ(judge_outcome(s, eq, j).why, failure::structure_mismatch);
    EXPECT_EQ(judge_outcome(s, optimal(1.0), j).why, failure::runtime_error);
    for (int f = 0; f < failure_count; f++) EXPECT_STRNE(failure_name((failure)f), "?");
}

TEST(EvalAnswers, LabelsNumbersStringsSentinels) {
    load_options o;
    ground_truth t;
    std::string why;
    ASSERT_TRUE(parse_answer(ojson(105), o, &t, &why));
    EXPECT_EQ(t.kind, truth_kind::objective);
    EXPECT_EQ(t.value, 105.0);
    ASSERT_TRUE(parse_answer(ojson("1,234.5"), o, &t, &why));
    EXPECT_EQ(t.value, 1234.5);
    ASSERT_TRUE(parse_answer(ojson("$300"), o, &t, &why));
    EXPECT_EQ(t.value, 300.0);
    ASSERT_TRUE(parse_answer(ojson("4.2e3"), o, &t, &why));
    EXPECT_EQ(t.value, 4200.0);
    ASSERT_TRUE(parse_answer(ojson("12 units"), o, &t, &why));
    EXPECT_EQ(t.value, 12.0);
    ASSERT_TRUE(parse_answer(ojson("\xE2\x88\x92"
                                   "7"),
                             o, &t, &why));  // U+2212 minus
    EXPECT_EQ(t.value, -7.0);
    for (const char* s : {"No Best Solution", "infeasible", "Unbounded", "none", "No feasible solution"}) {
        ASSERT_TRUE(parse_answer(ojson(s), o, &t, &why)) << s;
        EXPECT_EQ(t.kind, truth_kind::no_solution) << s;
    }
    ASSERT_TRUE(parse_answer(ojson(-99999), o, &t, &why));  // IndustryOR sentinel
    EXPECT_EQ(t.kind, truth_kind::no_solution);
    ASSERT_TRUE(parse_answer(ojson("-99999"), o, &t, &why));
    EXPECT_EQ(t.kind, truth_kind::no_solution);
    o.sentinel = sentinel_policy::skip;
    EXPECT_FALSE(parse_answer(ojson(-99999), o, &t, &why));
    EXPECT_NE(why.find("sentinel"), std::string::npos);
    EXPECT_FALSE(parse_answer(ojson("about 3 or 4"), o, &t, &why));
    EXPECT_FALSE(parse_answer(ojson("unknown"), o, &t, &why));
    EXPECT_FALSE(parse_answer(ojson(nullptr), o, &t, &why));
    EXPECT_FALSE(parse_answer(ojson::array({1, 2}), o, &t, &why));
}

TEST(EvalExtract, PicksTheFinalArtefact) {
    // reasoning is ignored, even when it holds code
    artefact a = extract_artefact(
        "<think>```python\nprint(1)\n```</think>\n```lp\nMinimize\n obj: x\nSubject To\n c: x >= 1\nEnd\n```");
    EXPECT_EQ(a.kind, "lp");
    // only a closing </think>: everything before it is reasoning
    a = extract_artefact("I think ```python\nimport os\n``` then</think>\n<python>\nimport pulp\n</python>");
    EXPECT_EQ(a.kind, "python");
    EXPECT_EQ(a.text, "\nimport pulp\n");
    // unterminated reasoning: a complete block written inside it is the answer (models that never close <think>
    // still write their program); a block cut off, or prose alone, is none
    a = extract_artefact("<think>Let me model it.\n```python\nimport pulp\n```\nThat is the program.");
    EXPECT_EQ(a.kind, "python");
    EXPECT_EQ(a.text, "import pulp\n");
    EXPECT_EQ(extract_artefact("<think>```python\nimport pulp\nx = 1").kind, "");
    EXPECT_EQ(extract_artefact("<think>import pulp\nprint(1)\n").kind, "");
    // the last block wins; a preferred kind wins over later blocks of other kinds
    a = extract_artefact("```python\nimport a\n```\n```python\nimport b\n```");
    EXPECT_EQ(a.text, "import b\n");
    a = extract_artefact("```lp\nMaximize\n obj: x\nSubject To\n c: x <= 1\nEnd\n```\n```python\nimport b\n```", "lp");
    EXPECT_EQ(a.kind, "lp");
    // labels and sniffing
    EXPECT_EQ(extract_artefact("```gmpl\nvar x >= 0;\nmaximize z: x;\ns.t. c: x <= 1;\nend;\n```").kind, "mathprog");
    EXPECT_EQ(extract_artefact("```\nNAME t\nROWS\n N obj\nCOLUMNS\n x obj 1\nENDATA\n```").kind, "mps");
    EXPECT_EQ(extract_artefact("```\nMaximize\n obj: x\nSubject To\n c: x <= 1\nEnd\n```").kind, "lp");
    EXPECT_EQ(extract_artefact("<python>```python\nimport x\n```</python>").text, "import x\n");
    // a bare program
    EXPECT_EQ(extract_artefact("import pulp\nprint(1)\n").kind, "python");
    // nothing usable
    EXPECT_EQ(extract_artefact("The answer is 42.").kind, "");
    EXPECT_EQ(extract_artefact("").kind, "");
    EXPECT_EQ(extract_artefact("```python\n\n```").kind, "");
}

// The T-Rex harness's order: the longest ```python block after </think>, else in the whole completion; else the
// longest unlabelled block; else the text after </think>; else everything — always run as Python.
TEST(EvalExtract, TRexProtocolOrder) {
    artefact a = extract_trex_protocol(
        "<think>```python\nimport a\n```</think>\n```python\nimport b\nx = 1\n```\n```python\nimport c\n```");
    EXPECT_EQ(a.kind, "python");
    EXPECT_EQ(a.text, "import b\nx = 1\n");  // the longest, not the last
    // only inside the reasoning: the whole completion is searched next
    a = extract_trex_protocol("<think>```python\nimport inside\n```</think>\nDone.");
    EXPECT_EQ(a.text, "import inside\n");
    // no python fence: the longest unlabelled one, info string and all (their regex keeps it)
    a = extract_trex_protocol("```\nimport short\n```\n```lp\nMinimize\n obj: x\nEnd\n```");
    EXPECT_EQ(a.kind, "python");
    EXPECT_EQ(a.text, "lp\nMinimize\n obj: x\nEnd\n");
    // no fence at all: the text after </think>, else the whole completion
    EXPECT_EQ(extract_trex_protocol("<think>plan</think>\nimport gurobipy\n").text, "import gurobipy\n");
    EXPECT_EQ(extract_trex_protocol("import gurobipy as gp").text, "import gurobipy as gp");
    EXPECT_EQ(extract_trex_protocol("<redacted_reasoning>r</redacted_reasoning>```python\nimport z\n```").text,
              "import z\n");
    EXPECT_EQ(extract_trex_protocol("").kind, "");
}

TEST(EvalMetrics, PassAtKIsUnbiased) {
    EXPECT_DOUBLE_EQ(pass_at_k(5, 0, 1), 0.0);
    EXPECT_DOUBLE_EQ(pass_at_k(5, 5, 1), 1.0);
    EXPECT_DOUBLE_EQ(pass_at_k(5, 2, 1), 0.4);
    EXPECT_NEAR(pass_at_k(5, 2, 2), 1.0 - (3.0 * 2.0) / (5.0 * 4.0), 1e-12);  // 1 - C(3,2)/C(5,2)
    EXPECT_DOUBLE_EQ(pass_at_k(5, 1, 5), 1.0);
    EXPECT_DOUBLE_EQ(pass_at_k(4, 1, 4), 1.0);
    EXPECT_NEAR(pass_at_k(10, 3, 5), 1.0 - 21.0 / 252.0, 1e-12);  // C(7,5)=21, C(10,5)=252
}

TEST(EvalMetrics, SummaryPerBenchmarkCategoryAndFailures) {
    std::vector<sample_record> recs;
    auto add = [&](const char* bench, const char* id, const char* cat, int sample, bool ok, failure why) {
        sample_record r;
        r.id = id;
        r.benchmark = bench;
        r.category = cat;
        r.sample = sample;
        r.truth = objective_truth(1.0);
        r.v.correct = ok;
        r.v.why = ok ? failure::none : why;
        recs.push_back(r);
    };
    add("a", "1", "LP", 0, true, failure::none);
    add("a", "1", "LP", 1, false, failure::timeout);
    add("a", "2", "MIP", 0, false, failure::wrong_objective);
    add("a", "2", "MIP", 1, false, failure::no_artefact);
    add("b", "1", "", 0, true, failure::none);
    add("b", "1", "", 1, true, failure::none);
    const eval_summary s = summarize(recs, {1, 2});
    const group_stats& a = s.benchmark.at("a");
    EXPECT_EQ(a.items, 2);
    EXPECT_EQ(a.samples, 4);
    EXPECT_DOUBLE_EQ(a.pass1, 0.25);        // (1/2 + 0/2) / 2
    EXPECT_DOUBLE_EQ(a.pass_k.at(2), 0.5);  // item 1 passes at k=2, item 2 never
    EXPECT_EQ(a.outcomes[(size_t)failure::timeout], 1);
    EXPECT_EQ(a.outcomes[(size_t)failure::no_artefact], 1);
    EXPECT_DOUBLE_EQ(s.benchmark.at("b").pass1, 1.0);
    EXPECT_DOUBLE_EQ(s.macro_pass1, 0.625);
    EXPECT_DOUBLE_EQ(s.micro.pass1, (0.5 + 0.0 + 1.0) / 3.0);
    EXPECT_DOUBLE_EQ(s.category.at("a").at("LP").pass1, 0.5);
    EXPECT_DOUBLE_EQ(s.category.at("a").at("MIP").pass1, 0.0);
    // per-sample records round-trip through JSON, and the reports render
    for (const auto& r : recs) EXPECT_EQ(sample_to_json(sample_from_json(sample_to_json(r))), sample_to_json(r));
    const std::string md = report_markdown(s, ojson{{"backend", "test"}});
    EXPECT_NE(md.find("| a "), std::string::npos);
    EXPECT_NE(md.find("timeout"), std::string::npos);
    const std::string html = report_html(s, ojson{{"backend", "test"}});
    EXPECT_NE(html.find("<svg"), std::string::npos);
    EXPECT_EQ(html.find("<script"), std::string::npos);
}

namespace {

model lp(const std::string& text) {
    return trex::optmodel::read_lp_text(text, "test.lp");
}

const char* kTransport = R"(Minimize
 cost: 2 x11 + 4 x12 + 3 x21 + x22
Subject To
 s1: x11 + x12 <= 20
 s2: x21 + x22 <= 30
 d1: x11 + x21 >= 25
 d2: x12 + x22 >= 25
End
)";

}  // namespace

TEST(EvalStructure, InvariantToRenamingReorderingAndRowSigns) {
    const model ref = lp(kTransport);
    // renamed, reordered, terms reversed, a >= row written as <= with negated coefficients, maximise -c
    const model same = lp(R"(Maximize
 z: - y22 - 3 y21 - 4 y12 - 2 y11
Subject To
 b: y22 + y12 >= 25
 a: - y21 - y11 <= -25
 q: y22 + y21 <= 30
 p: y12 + y11 <= 20
End
)");
    const structure_result r = compare_structure(same, ref);
    EXPECT_TRUE(r.equivalent) << r.detail;
    // the oracle's rename mutation too, on a MIP
    const model mip =
        lp("Maximize\n obj: 5 k + 4 p\nSubject To\n f: 6 k + 4 p <= 24\n o: k + 2 p <= 6\nGeneral\n k p\nEnd\n");
    model renamed;
    ASSERT_TRUE(mutate_model(mip, oracle_mutation::rename, 7, &renamed));
    EXPECT_NE(renamed.vars[0].name, "k");
    EXPECT_TRUE(compare_structure(renamed, mip).equivalent);
}

TEST(EvalStructure, SensitiveToStructure) {
    const model ref = lp(kTransport);
    const char* variants[] = {
        // a coefficient changed
        "Minimize\n cost: 2 x11 + 4 x12 + 3 x21 + x22\nSubject To\n s1: x11 + 2 x12 <= 20\n s2: x21 + x22 <= 30\n"
        " d1: x11 + x21 >= 25\n d2: x12 + x22 >= 25\nEnd\n",
        // a right-hand side changed
        "Minimize\n cost: 2 x11 + 4 x12 + 3 x21 + x22\nSubject To\n s1: x11 + x12 <= 21\n s2: x21 + x22 <= 30\n"
        " d1: x11 + x21 >= 25\n d2: x12 + x22 >= 25\nEnd\n",
        // a sense changed
        "Minimize\n cost: 2 x11 + 4 x12 + 3 x21 + x22\nSubject To\n s1: x11 + x12 = 20\n s2: x21 + x22 <= 30\n"
        " d1: x11 + x21 >= 25\n d2: x12 + x22 >= 25\nEnd\n",
        // a row dropped
        "Minimize\n cost: 2 x11 + 4 x12 + 3 x21 + x22\nSubject To\n s1: x11 + x12 <= 20\n s2: x21 + x22 <= 30\n"
        " d1: x11 + x21 >= 25\nEnd\n",
        // an edge moved (x12 in d1 instead of x21): same degrees and labels per row, different graph
        "Minimize\n cost: 2 x11 + 4 x12 + 3 x21 + x22\nSubject To\n s1: x11 + x12 <= 20\n s2: x21 + x22 <= 30\n"
        " d1: x11 + x12 >= 25\n d2: x21 + x22 >= 25\nEnd\n",
        // an integer variable
        "Minimize\n cost: 2 x11 + 4 x12 + 3 x21 + x22\nSubject To\n s1: x11 + x12 <= 20\n s2: x21 + x22 <= 30\n"
        " d1: x11 + x21 >= 25\n d2: x12 + x22 >= 25\nGeneral\n x11\nEnd\n",
        // the sense of the objective
        "Maximize\n cost: 2 x11 + 4 x12 + 3 x21 + x22\nSubject To\n s1: x11 + x12 <= 20\n s2: x21 + x22 <= 30\n"
        " d1: x11 + x21 >= 25\n d2: x12 + x22 >= 25\nEnd\n",
    };
    for (const char* v : variants) {
        const structure_result r = compare_structure(lp(v), ref);
        EXPECT_FALSE(r.equivalent) << v;
        EXPECT_FALSE(r.detail.empty());
    }
    model dropped;
    ASSERT_TRUE(mutate_model(ref, oracle_mutation::structure, 1, &dropped));
    EXPECT_FALSE(compare_structure(dropped, ref).equivalent);
}

TEST(EvalStructure, SymmetricModelsMatchWithoutExhaustiveSearch) {
    // an assignment problem with identical costs: every permutation is an automorphism
    std::string a = "Minimize\n obj:", b;
    const int n = 8;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) a += " + x" + std::to_string(i) + "_" + std::to_string(j);
    a += "\nSubject To\n";
    for (int i = 0; i < n; i++) {
        a += " r" + std::to_string(i) + ":";
        for (int j = 0; j < n; j++) a += " + x" + std::to_string(i) + "_" + std::to_string(j);
        a += " = 1\n";
    }
    for (int j = 0; j < n; j++) {
        a += " c" + std::to_string(j) + ":";
        for (int i = 0; i < n; i++) a += " + x" + std::to_string(i) + "_" + std::to_string(j);
        a += " = 1\n";
    }
    a += "End\n";
    const model ref = lp(a);
    model ren;
    ASSERT_TRUE(mutate_model(ref, oracle_mutation::rename, 3, &ren));
    structure_options so;
    so.search_budget = 2000;
    EXPECT_TRUE(compare_structure(ren, ref, so).equivalent);
}

namespace {

std::string temp_dir(const std::string& name) {
    return trex::test::scratch_dir("eval_" + name);
}

}  // namespace

TEST(EvalPrompts, ShippedTemplatesRenderAndFewShotNeverShowsTheItem) {
    const auto names = list_prompts();
    for (const char* n : {"trex", "trex_orgeval", "orlm", "lp", "pulp", "mathprog"})
        EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
    eval_item it;
    it.id = "q1";
    it.question = "Maximise x + y subject to x <= 2 and y <= 3.";
    it.data_path = "/nonexistent/data.json";
    for (const auto& n : names) {
        const prompt_template t = load_prompt(n);
        const auto msgs = render_prompt(t, it, "{\"cap\": 2}", {});
        ASSERT_FALSE(msgs.empty()) << n;
        EXPECT_EQ(msgs.back().role, "user");
        EXPECT_NE(msgs.back().content.find(it.question), std::string::npos) << n;
        EXPECT_EQ(msgs.back().content.find("{{"), std::string::npos) << n;  // every placeholder filled
    }
    // the data section appears only for items with a data file
    EXPECT_NE(render_prompt(load_prompt("trex"), it, "{\"cap\": 2}", {}).back().content.find("data.json"),
              std::string::npos);
    EXPECT_EQ(render_prompt(load_prompt("trex"), it, "", {}).back().content.find("data.json"), std::string::npos);
    EXPECT_EQ(load_prompt("trex").artefact, "python");
    EXPECT_EQ(load_prompt("lp").artefact, "lp");
    // a user template with an unknown section is a one-line error naming the file
    const std::string dir = temp_dir("prompts");
    std::ofstream(dir + "/bad.txt") << "=== user ===\n{{question}}\n=== nonsense ===\nx\n";
    try {
        load_prompt(dir + "/bad.txt");
        ADD_FAILURE() << "no error";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("bad.txt"), std::string::npos) << e.what();
    }
    // few-shot pool: the item itself (same id, or the same question under another id) is never retrieved
    std::ofstream(dir + "/pool.jsonl")
        << R"({"id": "q1", "question": "Maximise x + y subject to x <= 2 and y <= 3.", "answer": "A1"})"
           "\n"
        << R"({"id": "copy", "question": "maximise x + y subject to x <= 2 and y <= 3", "answer": "A2"})"
           "\n"
        << R"({"id": "near", "question": "Maximise 2x + y subject to x <= 4 and y <= 1.", "answer": "A3"})"
           "\n"
        << R"({"id": "far", "question": "Schedule nurses over a week to cover shifts.", "answer": "A4"})"
           "\n"
        << R"({"messages": [{"role": "user", "content": "Minimise cost of a diet with x and y."}, {"role": "assistant", "content": "A5"}]})"
           "\n";
    fewshot_pool pool(dir + "/pool.jsonl");
    EXPECT_EQ(pool.size(), 5u);
    const auto shots = pool.retrieve(it.question, it.id, 2);
    ASSERT_EQ(shots.size(), 2u);
    EXPECT_EQ(shots[0]->id, "near");
    for (const auto* s : shots) {
        EXPECT_NE(s->id, "q1");
        EXPECT_NE(s->id, "copy");
    }
    const auto msgs = render_prompt(load_prompt("trex"), it, "", shots);
    EXPECT_NE(msgs.back().content.find("A3"), std::string::npos) << msgs.back().content;
    fs::remove_all(dir);
}

// What trex's readers, shims and solvers cannot carry out is its own outcome, not a modelling error of the answer: an
// indicator row the reader refuses, a nonconvex quadratic objective the QP path refuses (a convex one is solved:
// min x + x^2 s.t. x >= 1 at x = 1, objective 2).
TEST(EvalJudge, UnsupportedFeaturesAreTheirOwnOutcome) {
    auto solve = [](const std::string& text) {
        return execute_model_request({{"op", "solve"}, {"format", "lp"}, {"text", text}, {"time_limit", 5.0}});
    };
    ojson rep = solve("Minimize\n obj: x\nSubject To\n c: b = 1 -> x >= 2\nBinaries\n b\nEnd\n");
    EXPECT_EQ(rep["status"], "unsupported") << rep.dump();
    EXPECT_NE(rep.value("detail", "").find("indicator constraints"), std::string::npos) << rep.dump();
    rep = solve("Minimize\n obj: x + [ 2 x * y ] / 2\nSubject To\n c: x + y >= 1\nBounds\n x <= 5\n y <= 5\nEnd\n");
    EXPECT_EQ(rep["status"], "unsupported") << rep.dump();
    EXPECT_NE(rep.value("detail", "").find("nonconvex quadratic objectives"), std::string::npos) << rep.dump();
    rep = solve("Minimize\n obj: x + [ 2 x ^ 2 ] / 2\nSubject To\n c: x >= 1\nEnd\n");
    EXPECT_EQ(rep["status"], "optimal") << rep.dump();  // HiGHS from the project venv (scripts/setup.sh)
    EXPECT_NEAR(rep.value("objective", 0.0), 2.0, 1e-9) << rep.dump();
    ground_truth t;
    t.kind = truth_kind::objective;
    t.value = 1;
    exec_outcome ex;
    ex.artefact = "python";
    ex.status = "unsupported";
    ex.detail = "GurobiError: general constraints are not supported by the trex gurobipy shim";
    objective_judge j;
    ASSERT_TRUE(parse_objective_judge("abs", 0, &j));
    const verdict v = judge_outcome(t, ex, j);
    EXPECT_FALSE(v.correct);
    EXPECT_EQ(v.why, failure::unsupported);
    EXPECT_STREQ(failure_name(failure::unsupported), "unsupported");
    EXPECT_TRUE(unsupported_feature(ex.detail));
    EXPECT_FALSE(unsupported_feature("ZeroDivisionError: division by zero"));
}

// A right answer is not failed by one solver's wrong optimum: on this capital budgeting model (8 binaries, drawn by
// trex data build) Debian's Cbc 2.10 reports 161 as proven optimal — its knapsack-cover and Gomory cuts after
// preprocessing cut off the optimum — where enumeration of the 128 subsets with project 3 gives 164.
TEST(EvalJudge, MipAnswerIsNotJudgedByOneSolversWrongOptimum) {
    const std::string lp =
        "Maximize\n obj: 22 x_1 + 45 x_2 + 7 x_3 + 72 x_4 + 39 x_5 + 81 x_6 + 27 x_7 + 37 x_8\nSubject To\n"
        " budget_1: 29 x_1 + 7 x_2 + 10 x_3 + 39 x_4 + 28 x_5 + 39 x_6 + 29 x_7 + 15 x_8 <= 94\n"
        " budget_2: 13 x_1 + 24 x_2 + 16 x_4 + 14 x_5 + 40 x_6 + 10 x_7 + 17 x_8 <= 71\n"
        " budget_3: 14 x_2 + 36 x_4 + 12 x_5 + 39 x_6 + 20 x_7 + 8 x_8 <= 59\n required_1: x_3 >= 1\n"
        "Binary\n x_1 x_2 x_3 x_4 x_5 x_6 x_7 x_8\nEnd\n";
    const double value[] = {22, 45, 7, 72, 39, 81, 27, 37};
    const double use[3][8] = {
        {29, 7, 10, 39, 28, 39, 29, 15}, {13, 24, 0, 16, 14, 40, 10, 17}, {0, 14, 0, 36, 12, 39, 20, 8}};
    const double cap[] = {94, 71, 59};
    double best = -1;
    for (int s = 0; s < 256; s++) {
        if (!(s & 4)) continue;
        bool fits = true;
        double v = 0;
        for (int i = 0; i < 3; i++) {
            double used = 0;
            for (int j = 0; j < 8; j++) used += (s >> j & 1) * use[i][j];
            fits = fits && used <= cap[i];
        }
        for (int j = 0; j < 8; j++) v += (s >> j & 1) * value[j];
        if (fits) best = std::max(best, v);
    }
    ASSERT_EQ(best, 164);
    const ojson rep = execute_model_request({{"op", "solve"}, {"format", "lp"}, {"text", lp}, {"time_limit", 10.0}});
    ASSERT_EQ(rep["status"], "optimal") << rep.dump();
    EXPECT_DOUBLE_EQ(rep["objective"].get<double>(), best) << rep.dump();
}

// A reference without an optimum (infeasible, as many real Bench4Opt-ORGEval references are) still gets a coefficient
// mutant, which the structure judge must reject.
TEST(EvalOracle, CoefMutantOfAModelWithoutOptimum) {
    const trex::optmodel::model m = trex::optmodel::read_lp_text(
        "Minimize\n obj: x + y\nSubject To\n a: x + y >= 5\n b: x <= 1\n c: y <= 1\nEnd\n", "infeasible.lp");
    trex::optmodel::model mutated;
    ASSERT_TRUE(mutate_model(m, oracle_mutation::coef, 1, &mutated));
    EXPECT_NE(trex::optmodel::canonical_hash(mutated), trex::optmodel::canonical_hash(m));
    EXPECT_FALSE(compare_structure(mutated, m).equivalent);
}

// ORLM's extraction: the first ```python block, whatever follows; without a closing fence, all but the last character.
TEST(EvalExtract, OrlmProtocolTakesTheFirstPythonBlock) {
    artefact a =
        extract_orlm_protocol("Model...\n```python\nimport coptpy\nA = 1\n```\nbetter:\n```python\nB = 2\n```");
    EXPECT_EQ(a.kind, "python");
    EXPECT_EQ(a.text, "\nimport coptpy\nA = 1\n");
    EXPECT_EQ(extract_orlm_protocol("```python\nx = 1\nprint(x)\n").text, "\nx = 1\nprint(x)");
    EXPECT_EQ(extract_orlm_protocol("```py\nx = 1\n```").kind, "");
    EXPECT_EQ(extract_orlm_protocol("```python\n\n```").kind, "");
    EXPECT_EQ(extract_orlm_protocol("").kind, "");
}
