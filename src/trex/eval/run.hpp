// `trex eval run`: benchmarks -> prompts -> backend (with the on-disk completion cache) -> extraction ->
// execution -> judges -> results.jsonl, summary.json, report.md, report.html in the output directory.
//
// Generation runs on the backend's concurrency, judging on `workers` threads (each with its own sandboxed solve
// worker; Python answers get a fresh sandbox each); both overlap. Every completion is appended to
// <out>/completions.jsonl (flushed per line) as it arrives, keyed by a hash of the backend identity, the prompt
// messages, the decoding parameters and the sample index: a rerun of an interrupted (or finished) run only asks
// the backend for what is not there.
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "trex/eval/backend.hpp"
#include "trex/eval/benchmark.hpp"
#include "trex/eval/execute.hpp"
#include "trex/eval/metrics.hpp"

namespace trex::eval {

struct bench_spec {
    std::string path;
    std::string name;  // "" = file stem
};

struct run_options {
    std::vector<bench_spec> benches;
    load_options load;  // format, sentinel policy, structure_when_possible (name is per bench)
    std::string out_dir;
    // "" (the options as given), "trex" (the T-Rex harness point by point: its extraction, prompts of the same
    // structure — `trex` for objective items, `trex_orgeval` for ORGEval items — 360 s per answer, the objective of the
    // solved `model` object, absolute 1e-6, ORGEval by the LP the code writes)
    std::string protocol;
    std::string prompt = "trex";
    int shots = 0;
    std::string shots_from;
    gen_params gen;
    int samples = 1;
    std::vector<int> ks = {1};
    std::string judge = "abs";  // abs / rel / orlm (objective items; ORGEval items use the structure judge)
    double tol = 0;             // 0: the judge's default
    int workers = 0;            // judge threads (0: the number of cores)
    exec_config exec;
    long limit = 0;          // at most this many items per benchmark (0: all)
    bool fresh = false;      // ignore (and replace) the completion cache
    bool reexecute = false;  // run every answer again instead of re-judging cached execution outcomes
    // Set (by a SIGINT handler) to stop: no new request or answer is started, the answers being judged finish, and
    // results, summary and reports of what finished are written (run_result::interrupted).
    const std::atomic<bool>* stop = nullptr;
    bool progress = true;
    bool quiet = false;  // no summary table on stdout
};

struct run_result {
    eval_summary summary;
    long items = 0, samples = 0;
    long cached = 0, generated = 0, backend_errors = 0, skipped_records = 0;
    std::map<std::string, long> unscorable;  // benchmark -> records skipped as unscorable (listed in the report)
    long exec_cached = 0;                    // samples re-judged from the execution cache
    bool interrupted = false;                // stopped by run_options::stop: the outputs hold what finished
    bool generators_detached = false;        // a backend request still running at the stop: exit the process soon
    double seconds = 0, judge_seconds = 0;
    std::string out_dir;
};

// Throws trex::error on setup problems (unreadable benchmark, bad template, unwritable output).
run_result run_eval(const run_options& opt, backend& b);

// `trex eval run --suite trex DIR`: the paper's four benchmarks in a T-Rex `or_benchmark_eval/data` folder, each a
// sub-folder (names matched case-insensitively: *nl4opt*, *optibench*, bench4opt / *orgeval* for ORGEval,
// bench4opt*feasible* for Feasible) holding test.parquet, test.jsonl or test.json (or a single such file), named
// NL4OPT, OptiBench, B4O-Feasible and B4O-ORGEval. `missing` names those not found.
std::vector<bench_spec> trex_suite_benches(const std::string& dir, std::vector<std::string>* missing);

// `trex eval report DIR`: re-judges results.jsonl with another objective judge (no re-execution) and rewrites
// summary.json, report.md and report.html. judge "" keeps the run's judge.
run_result rescore_run(const std::string& out_dir, const std::string& judge, double tol);

// Cache key of one sample (exposed for tests).
std::string completion_key(const std::string& backend_identity, const std::vector<chat_message>& msgs,
                           const gen_params& p, int sample);

// The printed summary table.
std::string format_summary(const run_result& r);

}  // namespace trex::eval
