// Judges: what an executed answer is worth against the ground truth.
//
// Objective judges (selectable): abs (|p − t| ≤ tol, T-Rex: 1e-6), rel (|p − t| ≤ tol·|t|, |p| ≤ tol when t = 0;
// MAMO: 1e-4), orlm (ORLM's rule: both rounded half-to-even to integers, then rel with tol 5%, |p| ≤ tol when the
// rounded truth is 0). Bounds are inclusive, with a slack of a few ulps of the operands (5.000001 vs 5 passes abs
// 1e-6 although the binary difference is 1.0000000006e-6).
//
// A "no solution" truth is matched by an answer whose solver reports infeasible, unbounded or infeasible-or-
// unbounded; a value there is wrong. Any failure to produce a value is classified (failure taxonomy) for reports.
#pragma once

#include <string>

#include "trex/eval/benchmark.hpp"

namespace trex::eval {

enum class tolerance_kind { abs, rel, orlm };

struct objective_judge {
    tolerance_kind kind = tolerance_kind::abs;
    double tol = 1e-6;
    std::string describe() const;  // "abs 1e-06", "rel 0.0001", "orlm 0.05"
};
// "abs" / "rel" / "orlm" with the default tolerance of each (1e-6, 1e-4, 0.05) unless tol > 0.
bool parse_objective_judge(const std::string& kind, double tol, objective_judge* out);

// True when pred matches truth under the judge.
bool objective_matches(const objective_judge& j, double pred, double truth);

// What running an answer gave (filled by execution, stored per sample in results.jsonl, and re-judged by
// `trex eval report`).
struct exec_outcome {
    std::string artefact;  // "lp", "mps", "mathprog", "python", "" (none found)
    // "optimal", "infeasible", "unbounded", "inf_or_unbd" (from a solve trex ran), "no_solve" (the program ran no
    // solve), "no_artefact", "parse_error", "runtime_error", "solver_crash" (the solver died, GLPK's retry too),
    // "timeout", "structure" (structural comparison done), "backend_error" (no completion)
    std::string status;
    bool has_objective = false;
    double objective = 0.0;
    std::string source;       // where the objective came from: "solver" (a solve the harness ran and recorded)
    std::string solver;       // which one ("clp", "cbc", "glpk-simplex", "glpk-intopt")
    bool equivalent = false;  // status "structure": the model is structurally equivalent to the reference
    std::string detail;       // error text, limit hit, structural difference
    double seconds = 0.0;
    // diagnostics of Python answers: what the program printed as its objective (never judged), and whether its
    // stdout / stderr went beyond the sandbox's cap
    bool has_printed_objective = false;
    double printed_objective = 0.0;
    bool stdout_truncated = false, stderr_truncated = false;
};

// The failure taxonomy of reports. Correct answers are failure::none.
enum class failure {
    none,
    no_artefact,         // no LP / MPS / MathProg / Python block in the completion
    parse_error,         // the artefact did not parse (LP reader, MathProg translator, Python syntax)
    runtime_error,       // exception, killed by a limit (memory, file size, processes, output), solver error or crash
    no_solve,            // the program ran but no solve of trex's solvers produced its result (printing is not solving)
    timeout,             // wall-clock or CPU time limit
    infeasible,          // reported infeasible / unbounded although an optimum exists
    wrong_objective,     // a value outside the tolerance, or a value where no optimum exists
    structure_mismatch,  // ORGEval: not structurally equivalent to the reference LP
    backend_error,       // the model backend gave no completion
    unsupported,         // the answer needs what trex's solvers cannot do (quadratic terms, general constraints, SOS,
                         // indicators): not judged as a modelling error; counted apart
};
constexpr int failure_count = 11;
const char* failure_name(failure f);  // "correct" for none, else the enum spelling

struct verdict {
    bool correct = false;
    failure why = failure::none;
    std::string detail;
};

verdict judge_outcome(const ground_truth& truth, const exec_outcome& ex, const objective_judge& j);

}  // namespace trex::eval
