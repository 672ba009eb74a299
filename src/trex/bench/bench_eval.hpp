// `trex bench eval`: judging throughput on replayed answers. Builds a synthetic benchmark from the problem
// families (truth from Clp/Cbc), with oracle completions — LP files for the in-process path, PuLP and gurobipy
// (shim) programs reading data.json for the sandboxed-Python path — and runs `trex eval run --backend replay` on
// each, timing the whole run (reading, extraction, execution, judging, writing results).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace trex::bench {

struct bench_eval_options {
    int lp = 300;            // LP answers
    int python = 40;         // Python answers (half PuLP, half gurobipy via the shim)
    int workers = 0;         // judge threads (0: cores)
    std::string trex_bin;    // this executable (the solve worker and the shim's solver)
    std::string python_exe;  // "" = default (.venv / TREX_PYTHON)
    std::string dir;         // work directory ("" = a temporary one, removed)
};

struct bench_eval_result {
    int lp = 0, python = 0, python_pulp = 0, python_gurobipy = 0, workers = 0;
    double lp_seconds = 0, python_seconds = 0;
    double lp_cpu_seconds = 0, python_cpu_seconds = 0;  // this process + its children (sandboxes, workers)
    long lp_correct = 0, python_correct = 0;
    double load_before = 0, load_after = 0;
    std::string sandbox, python_exe;
};

bench_eval_result run_bench_eval(const bench_eval_options& opt);
std::string format_bench_eval(const bench_eval_result& r);
nlohmann::json bench_eval_json(const bench_eval_result& r);

}  // namespace trex::bench
