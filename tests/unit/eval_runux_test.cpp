// `trex eval run` as a user drives it: a run stopped by SIGINT writes results, summary and reports of what finished
// (exit 130) and the same command finishes it from the completion cache; execution outcomes are cached by artefact
// and harness version, so a rerun re-judges instead of executing again (--reexecute forces it); the HTML report
// lists every failed answer with its reason and extracted artefact.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "support/test_support.hpp"
#include "trex/base/files.hpp"
#include "trex/eval/backend.hpp"
#include "trex/eval/run.hpp"

namespace fs = std::filesystem;
using namespace trex::eval;

namespace {

constexpr int kItems = 8;

// Item i: maximise x subject to x <= i + 1 (answer i + 1).
std::string write_bench(const std::string& dir) {
    std::string lines;
    for (int i = 0; i < kItems; i++)
        lines += ojson{{"id", "q" + std::to_string(i)},
                       {"en_question", "Maximise x with x at most " + std::to_string(i + 1) + "."},
                       {"en_answer", i + 1}}
                     .dump() +
                 "\n";
    trex::write_file_atomic(dir + "/bench.jsonl", lines);
    return dir + "/bench.jsonl";
}

// Answers every item with an LP file (item q0 wrongly); asked for item `stop_at`, it raises the stop flag first.
class stopping_backend : public backend {
   public:
    stopping_backend(std::atomic<bool>* stop, int stop_at) : stop_(stop), stop_at_(stop_at) {}
    std::string identity() const override { return "test|stopping"; }
    gen_result generate(const gen_request& req) override {
        const int i = std::stoi(req.item_id.substr(1));
        std::this_thread::sleep_for(std::chrono::milliseconds(150));  // the judges keep up
        if (i == stop_at_) {
            stop_->store(true);
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
        }
        gen_result r;
        r.ok = true;
        const int cap = i == 0 ? 70 : i + 1;  // q0 wrong (and unlike every other answer)
        r.completions.push_back("```lp\nMaximize\n obj: x\nSubject To\n c: x <= " + std::to_string(cap) + "\nEnd\n```");
        r.finish_reasons.push_back("stop");
        calls++;
        return r;
    }
    std::atomic<int> calls{0};

   private:
    std::atomic<bool>* stop_;
    int stop_at_;
};

long lines_of(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    long n = 0;
    while (std::getline(in, line))
        if (!line.empty()) n++;
    return n;
}

run_options options(const std::string& bench, const std::string& out) {
    run_options o;
    o.benches.push_back({bench, "toy"});
    o.out_dir = out;
    o.progress = false;
    o.quiet = true;
    o.workers = 1;
    o.exec = default_exec_config();
    o.exec.trex_bin = trex::test::trex_binary();
    return o;
}

}  // namespace

TEST(EvalRunUx, InterruptWritesWhatFinishedAndTheRerunFinishesFromTheCaches) {
    const std::string dir = trex::test::scratch_dir("eval_runux_stop");
    const std::string bench = write_bench(dir);
    std::atomic<bool> stop{false};
    run_options o = options(bench, dir + "/out");
    o.stop = &stop;
    stopping_backend b(&stop, 6);
    const run_result r1 = run_eval(o, b);
    EXPECT_TRUE(r1.interrupted);
    const long judged = r1.summary.micro.samples;
    EXPECT_GE(judged, 1);
    EXPECT_LT(judged, kItems);
    EXPECT_EQ(lines_of(dir + "/out/results.jsonl"), judged);
    const ojson s1 = ojson::parse(trex::read_file(dir + "/out/summary.json"));
    EXPECT_NE(s1["run"]["interrupted"].get<std::string>().find(std::to_string(judged) + " of 8"), std::string::npos);
    EXPECT_TRUE(fs::exists(dir + "/out/report.html"));
    // the same run again, not stopped: cached completions are not asked for, cached executions are re-judged
    stop = false;
    stopping_backend b2(&stop, -1);
    o.stop = nullptr;
    const run_result r2 = run_eval(o, b2);
    EXPECT_FALSE(r2.interrupted);
    EXPECT_EQ(r2.summary.micro.samples, kItems);
    EXPECT_EQ(b2.calls.load(), kItems - (int)r2.cached);
    EXPECT_GE(r2.cached, judged);
    EXPECT_EQ(r2.exec_cached, judged);
    EXPECT_EQ(r2.summary.micro.correct, kItems - 1);
    // every outcome cached now; --reexecute runs them all again
    const run_result r3 = run_eval(o, b2);
    EXPECT_EQ(r3.exec_cached, kItems);
    EXPECT_EQ(r3.summary.micro.correct, kItems - 1);
    o.reexecute = true;
    const run_result r4 = run_eval(o, b2);
    EXPECT_EQ(r4.exec_cached, 0);
    EXPECT_EQ(r4.summary.micro.correct, kItems - 1);
    // the HTML report lists the failed answer with its reason and artefact
    const std::string html = trex::read_file(dir + "/out/report.html");
    EXPECT_NE(html.find("Failed answers (1)"), std::string::npos);
    EXPECT_NE(html.find("toy / q0"), std::string::npos);
    EXPECT_NE(html.find("wrong_objective"), std::string::npos);
    EXPECT_NE(html.find("c: x &lt;= 70"), std::string::npos);
    fs::remove_all(dir);
}

// The CLI under a real SIGINT: slow Python answers, the signal after ~2 s, exit status 130, what finished written.
TEST(EvalRunUx, SigintEndsTheRunWith130AndItsOutputs) {
    exec_config ec = default_exec_config();
    if (ec.python.empty()) GTEST_SKIP() << "no python with pulp (scripts/setup.sh)";
    if (!sandbox_guarantees().isolated) GTEST_SKIP() << "no sandbox isolation here";
    const std::string dir = trex::test::scratch_dir("eval_runux_sigint");
    const std::string bench = write_bench(dir);
    std::string lines;
    for (int i = 0; i < kItems; i++)
        lines += ojson{{"id", "q" + std::to_string(i)},
                       {"completion",
                        "```python\nimport time\nimport pulp\ntime.sleep(0.8)\np = "
                        "pulp.LpProblem('t', pulp.LpMaximize)\nx = pulp.LpVariable('x', 0, " +
                            std::to_string(i + 1) + ")\np += x\np.solve()\n```"}}
                     .dump() +
                 "\n";
    trex::write_file_atomic(dir + "/c.jsonl", lines);
    const auto r = trex::test::run_command("timeout --preserve-status -s INT 2.5 " + trex::test::trex_binary() +
                                           " eval run --bench " + bench + " --backend replay --completions " + dir +
                                           "/c.jsonl --out " + dir + "/out --workers 1 --no-progress 2>&1");
    EXPECT_EQ(r.exit_code, 130) << r.out;
    EXPECT_NE(r.out.find("trex eval: interrupted"), std::string::npos) << r.out;
    const long n = lines_of(dir + "/out/results.jsonl");
    EXPECT_GE(n, 1) << r.out;
    EXPECT_LT(n, kItems) << r.out;
    EXPECT_TRUE(fs::exists(dir + "/out/report.md"));
    // the rerun finishes: executions of the judged answers come from the cache
    const auto r2 = trex::test::run_command(trex::test::trex_binary() + " eval run --bench " + bench +
                                            " --backend replay --completions " + dir + "/c.jsonl --out " + dir +
                                            "/out --workers 2 --no-progress --json 2>&1");
    EXPECT_EQ(r2.exit_code, 0) << r2.out;
    EXPECT_EQ(lines_of(dir + "/out/results.jsonl"), kItems);
    const ojson s = ojson::parse(trex::read_file(dir + "/out/summary.json"));
    EXPECT_EQ(s["run"]["executions"].get<std::string>().rfind(std::to_string(n) + " re-judged", 0), 0u)
        << s["run"].dump();
    fs::remove_all(dir);
}

// --protocol orlm: ORLM's prompt, the first python block (a better second block is ignored), its rounded 5 % judge
// (1.02 rounds to the label 1).
TEST(EvalRunUx, OrlmProtocolJudgesAsOrlmDoes) {
    exec_config ec = default_exec_config();
    if (ec.python.empty()) GTEST_SKIP() << "no python with pulp (scripts/setup.sh)";
    if (!sandbox_guarantees().isolated) GTEST_SKIP() << "no sandbox isolation here";
    const std::string dir = trex::test::scratch_dir("eval_runux_orlm");
    const std::string bench = write_bench(dir);
    auto copt = [](double cap) {
        return "```python\nimport coptpy as cp\nfrom coptpy import COPT\nenv = cp.Envr()\nmodel = "
               "env.createModel('m')\nx = model.addVar(lb=0, ub=" +
               std::to_string(cap) + ", name='x')\nmodel.setObjective(x, sense=COPT.MAXIMIZE)\nmodel.solve()\n```\n";
    };
    std::string lines;
    lines += ojson{{"id", "q0"}, {"completion", "## Model\nmax x\n" + copt(1.02)}}.dump() + "\n";
    lines += ojson{{"id", "q1"}, {"completion", copt(5.0) + "Corrected:\n" + copt(2.0)}}.dump() + "\n";
    trex::write_file_atomic(dir + "/c.jsonl", lines);
    run_options o = options(bench, dir + "/out");
    o.protocol = "orlm";
    o.limit = 2;
    o.exec.trex_bin = trex::test::trex_binary();
    auto b = make_replay_backend(dir + "/c.jsonl");
    const run_result r = run_eval(o, *b);
    EXPECT_EQ(r.summary.micro.correct, 1) << format_summary(r);
    std::map<std::string, ojson> res;
    std::ifstream in(dir + "/out/results.jsonl");
    std::string line;
    while (std::getline(in, line)) {
        const ojson j = ojson::parse(line);
        res[j["id"].get<std::string>()] = j;
    }
    EXPECT_TRUE(res.at("q0")["correct"].get<bool>()) << res.at("q0").dump();
    EXPECT_EQ(res.at("q1")["outcome"], "wrong_objective") << res.at("q1").dump();
    EXPECT_NEAR(res.at("q1")["exec"]["objective"].get<double>(), 5.0, 1e-9);
    const ojson s = ojson::parse(trex::read_file(dir + "/out/summary.json"));
    EXPECT_NE(s["run"]["prompt"].get<std::string>().find("orlm"), std::string::npos);
    fs::remove_all(dir);
}
