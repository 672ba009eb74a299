// Executing extracted artefacts.
//   - LP / MPS / MathProg: read by GLPK (never by COIN: untrusted text), solved by Clp/Cbc (GLPK when COIN fails)
//     — our solvers, in a persistent `trex eval _worker` process that runs in the sandbox (a solver abort or a
//     MathProg `printf > "file"` cannot touch the harness), restarted when it dies or overruns.
//   - Python: a fresh sandbox per answer (sandbox.hpp) running python/trex_eval/trex_runner.py, which puts the
//     gurobipy shim first on sys.path, hooks PuLP's solve, runs answer.py (with data.json next to it) and reports
//     every solve (status, objective) on fd 3. The result is the program's last solve; programs that solve with
//     something else are read from their output (our "Status:/Optimal objective:" protocol, then the last number
//     on a line about the objective).
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "trex/eval/judge.hpp"
#include "trex/eval/sandbox.hpp"

namespace trex::eval {

// ---- worker side (inside the sandbox) ----
// {"op": "solve", "format": "lp"|"mps"|"mathprog", "text": ..., "time_limit": s}
//   -> {"status": "optimal"|"infeasible"|"unbounded"|"parse_error"|"runtime_error"|"timeout", "objective"?, "detail"}
// {"op": "structure", "format": ..., "text": ..., "reference": LP text, "budget": n}
//   -> {"status": "structure"|"parse_error"|"runtime_error", "equivalent": bool, "detail"}
ojson execute_model_request(const ojson& req);
// The worker loop: one JSON request per stdin line, one reply per stdout line. Returns the exit status.
int run_model_worker();
// `trex eval _solve FILE.lp`: the gurobipy shim's solver. JSON: status, objective, x {name: value}, pi {row: dual}
// (LPs), rc {name: reduced cost} (LPs).
ojson solve_lp_file_report(const std::string& path, double time_limit_s);

// ---- harness side ----
struct exec_config {
    std::string trex_bin;     // this binary (for the worker and the shim's solver)
    std::string python;       // Python with PuLP ("" = Python answers cannot run)
    std::string runner_dir;   // python/trex_eval (trex_runner.py, shim/)
    sandbox_limits limits;    // per answer
    double solve_time_limit_s = 30;  // model files
    bool allow_unisolated = false;
};

// Defaults: this executable, find_python_with_pulp(), <source>/python/trex_eval.
exec_config default_exec_config();

// One executor per judge thread: owns its model worker; Python answers get a fresh sandbox each.
class executor {
   public:
    executor(const exec_config& cfg, int slot);
    ~executor();
    executor(const executor&) = delete;
    executor& operator=(const executor&) = delete;

    // Runs a model file (kind lp/mps/mathprog) and reports status/objective.
    exec_outcome run_model(const std::string& kind, const std::string& text);
    // Compares a model file's structure with the reference LP text.
    exec_outcome compare_model(const std::string& kind, const std::string& text, const std::string& reference_lp);
    // Runs a Python answer; data_json: contents of data.json ("" = none).
    exec_outcome run_python(const std::string& code, const std::string& data_json);

   private:
    ojson call_worker(const ojson& req, double timeout_s);
    exec_config cfg_;
    int slot_;
    sandbox_process worker_;
    std::string buf_;
};

// Interpretation of a finished Python sandbox run (exposed for tests).
exec_outcome interpret_python_run(const sandbox_result& r);
// The result a program printed: our protocol, else the last number on a line about the objective / optimum, else
// the last number printed. Returns false when nothing usable was printed.
bool parse_printed_result(const std::string& out, std::string* status, double* objective, bool* has_objective);

}  // namespace trex::eval
