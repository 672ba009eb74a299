// Executing extracted artefacts. Every objective that counts comes from a solve that trex's own solvers ran and
// the harness recorded itself; printed text is never an objective.
//   - LP / MPS / MathProg: read by GLPK (never by COIN: untrusted text), solved by Clp/Cbc (GLPK when COIN fails)
//     in a persistent `trex eval _worker` process that runs in the sandbox (a solver abort or a MathProg
//     `printf > "file"` cannot touch the harness), restarted when it dies or overruns. A worker that dies by a
//     signal while solving is a `solver_crash` (the signal named) and the model is solved again with GLPK.
//   - Python: a fresh sandbox per answer (sandbox.hpp) running python/trex_eval/trex_runner.py, which puts the
//     gurobipy shim first on sys.path, routes PuLP's solve() through the same channel, and runs answer.py (with
//     data.json next to it). The shims send each model (as LP text) on the sandbox's solve channel; the harness
//     solves it in the worker, records the result in its own log and sends the solution back. The outcome is the
//     last solve of that log. A program that ran no solve is `no_solve`, whatever it printed (its printed
//     objective is kept as a diagnostic).
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "trex/eval/judge.hpp"
#include "trex/eval/sandbox.hpp"

namespace trex::eval {

// ---- worker side (inside the sandbox) ----
// {"op": "solve", "format": "lp"|"mps"|"mathprog", "text": ..., "time_limit": s, "solver"?: "glpk",
//  "solution"?: true}
//   -> {"status": "optimal"|"infeasible"|"unbounded"|"parse_error"|"runtime_error"|"timeout", "objective"?,
//       "solver", "detail"; with "solution": "x" {column: value}, and for LPs "pi" {row: dual}, "rc" {column: rc}}
// {"op": "structure", "format": ..., "text": ..., "reference": LP text, "budget": n}
//   -> {"status": "structure"|"parse_error"|"runtime_error", "equivalent": bool, "detail"}
ojson execute_model_request(const ojson& req);
// The worker loop: one JSON request per stdin line, one reply per stdout line. Returns the exit status.
int run_model_worker();

// ---- the solve channel (harness side) ----
// One request line of a Python answer's shim:
//   {"op": "solve", "api": "gurobipy"|"pulp", "model": LP text, "time_limit"?: s, "objective_constant"?: c}
//     -> the worker's reply with "solution" (the constant added to the objective)
//   {"op": "event", "event": "syntax_error"|"exception", "type"?, "error"}  -> no reply (a diagnostic)
//   {"op": "written", "api", "file", "model": LP text}  -> no reply: the LP a model's write("*.lp") wrote (the
//     ORGEval structure judge compares the last one with the reference; never an objective)
// Anything else gets {"status": "error", "detail"}. The log is the harness's own record.
struct recorded_solve {
    std::string api, status, solver, detail;
    bool has_objective = false;
    double objective = 0.0;
};
struct channel_log {
    std::vector<recorded_solve> solves;
    std::string syntax_error, exception;  // diagnostics the runner reported ("" = none)
    long writes = 0;                      // LP files the program's models wrote
    std::string last_written;             // the last one's text
    long rejected = 0;                    // requests refused (malformed, over the solve limit)
};

// ---- harness side ----
struct exec_config {
    std::string trex_bin;            // this binary (for the worker and the shim's solver)
    std::string python;              // Python with PuLP ("" = Python answers cannot run)
    std::string runner_dir;          // python/trex_eval (trex_runner.py, shim/)
    sandbox_limits limits;           // per answer
    double solve_time_limit_s = 30;  // model files
    bool allow_unisolated = false;
    std::string protocol;  // "trex": the runner solves the program's `model` object when it did not
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

    // Runs a model file (kind lp/mps/mathprog) and reports status/objective; `name` is what reader errors call the
    // file ("": answer.lp, answer.mps, answer.mod).
    exec_outcome run_model(const std::string& kind, const std::string& text, const std::string& name = "");
    // Compares a model file's structure with the reference LP text.
    exec_outcome compare_model(const std::string& kind, const std::string& text, const std::string& reference_lp);
    // Runs a Python answer; data_json: contents of data.json ("" = none).
    exec_outcome run_python(const std::string& code, const std::string& data_json);
    // Runs a Python answer that builds a model and writes it as an LP file (the T-Rex ORGEval protocol: the code
    // calls model.write("model.lp"), solving is not needed) and compares the last LP it wrote with the reference.
    exec_outcome compare_python(const std::string& code, const std::string& data_json, const std::string& reference_lp);

    static constexpr int kMaxSolves = 200;  // per answer; further requests are refused

   private:
    ojson call_worker(const ojson& req, double timeout_s);
    // A solve in the worker; a solver crash is retried once with GLPK.
    ojson solve_in_worker(ojson req);
    std::string on_channel_message(const std::string& line, channel_log* log);
    // The sandboxed run of a Python answer; false (and *o set) when no Python can run it.
    bool run_python_sandboxed(const std::string& code, const std::string& data_json, channel_log* log,
                              sandbox_result* r, exec_outcome* o);
    exec_config cfg_;
    int slot_;
    sandbox_process worker_;
    std::string buf_;
};

// An error that names a feature trex's shims, readers or solvers cannot carry out (nonconvex quadratic terms, MIQP,
// general constraints, SOS, indicators, semi-continuous variables): outcome "unsupported", not a modelling error of
// the answer.
bool unsupported_feature(const std::string& error);

// Interpretation of a finished Python sandbox run and the harness's log of its solves (exposed for tests).
exec_outcome interpret_python_run(const sandbox_result& r, const channel_log& log);
// A diagnostic only, never an objective that counts: the number a program printed as its objective — the value
// on the last line that names the objective ("objective", "optimal value") and holds exactly one number, on no
// line that reports a status, an error or infeasibility. False when there is none.
bool printed_objective(const std::string& out, double* value);

}  // namespace trex::eval
