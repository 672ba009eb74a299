// Solver verification and quality gates. An instance is kept only if Cbc/Clp and GLPK agree on the status and (when
// optimal) on the objective within rel_tol * max(1, |a|, |b|), neither timed out, the solution is not trivial, and
// enough constraints are binding. Duplicate removal (by canonical_hash) is done by the caller over a whole build.
#pragma once

#include <string>

#include "trex/optmodel/ir/model.hpp"
#include "trex/optmodel/solvers/solve.hpp"

namespace trex::optmodel {

enum class gate {
    kept,
    solver_error,        // a solver failed (error status)
    time_limit,          // a solver hit the per-instance time limit
    status_disagree,     // COIN and GLPK report different statuses
    objective_disagree,  // both optimal, objectives differ beyond the tolerance
    trivial,             // optimal solution all zero, or objective exactly zero
    few_binding,         // fewer binding constraints than min_binding
    design_status,       // status differs from what the generator designed (e.g. meant infeasible, came optimal)
    duplicate,           // same canonical hash as an earlier instance (set by the build)
    reexec_failed,       // an answer did not re-execute to the label (set by the build)
};
constexpr int gate_count = 10;
const char* gate_name(gate g);  // "kept", "solver_error", ...

struct verify_options {
    double time_limit_s = 10.0;
    double rel_tol = 1e-6;
    int min_binding = 2;  // at least min(min_binding, max(1, rows / 2)) binding rows (is_binding)
};

struct verification {
    gate verdict = gate::solver_error;
    solve_status status = solve_status::error;  // the agreed status
    double objective = 0.0;                      // COIN's objective when optimal
    int binding = 0;                             // binding rows (is_binding)
    solve_result coin, glpk;
};

// True when a and b agree within rel_tol * max(1, |a|, |b|).
bool objectives_agree(double a, double b, double rel_tol = 1e-6);

// Row i is binding at x: an equality; zero slack (|a_i x - b_i| <= 1e-6 max(1, |b_i|)); or, for a row of integer
// variables only, a slack smaller than every unit move of a variable that would use it up (e.g. a knapsack whose
// remaining capacity fits no further item).
bool is_binding(const model& m, int i, const std::vector<double>& x, double activity);

verification verify(const model& m, const verify_options& opt = {});

}  // namespace trex::optmodel
