// Solving the IR: COIN (Clp for LPs, Cbc through CbcMain0/CbcMain1 for MILPs) and, independently, GLPK
// (glp_simplex / glp_intopt, presolve on); convex quadratic models by HiGHS (solve_qp). Solver logs are suppressed;
// every call has a time limit.
//
// Numbers: both solvers get the model's numbers through solver_bounds_of, so they see the same model and none of
// them is handed a number that makes it abort (Clp asserts |objective coefficient| < 1e25 and kills the process) or
// answer garbage (coefficients of 1e100: Clp "status 4", Cbc "infeasible", GLPK "optimal 1e-100"):
//   * a bound or right-hand side of magnitude >= kSolverInfinity (1e30, COIN's infinity) on the side where it means
//     "no bound" is infinite: ub >= 1e30, lb <= -1e30, the rhs of a <= row >= 1e30 or of a >= row <= -1e30 (that
//     row then bounds nothing);
//   * refused — status error, a one-line message naming the model, the variable or constraint and the number, and
//     no solver called — are NaN anywhere, ±inf or magnitudes >= 1e30 on the other side (lb >= 1e30, ub <= -1e30, a
//     <= row at <= -1e30, a >= row at >= 1e30, an equality at |rhs| >= 1e30), constraint coefficients with
//     |a| >= kMaxMatrixCoefficient (1e30), objective coefficients with |c| >= kMaxObjectiveCoefficient (1e25) and a
//     non-finite objective constant.
//
// Time: limits are wall-clock for every solver (Cbc runs with -timeMode elapsed, as GLPK's tm_lim is). A small MILP
// (is_small_mip: at most kSmallMipMaxIntegerVars integer/binary variables and kSmallMipMaxRows constraints) that Cbc
// does not finish gets a second solver (solve_options::glpk_retry, on by default): Cbc runs for
// kSmallMipCbcShare of the limit, and when it stops at that limit without proving optimality, GLPK runs for the rest
// (at least a tenth of the limit). GLPK's answer replaces Cbc's only when it is an optimum whose solution checks out
// (every bound and row within 1e-6 + 1e-9·Σ|a_ij x_j|, and no worse than a solution Cbc found): GLPK's MIP presolve
// was seen calling a feasible equality knapsack infeasible, and accepting a solution one unit off a row of 1.4e8.
// The result then says solver "glpk-intopt", fallback_from "cbc". Otherwise Cbc's time_limit stands, with what GLPK
// answered in its message. So small awkward models (equality knapsacks with large near-parallel coefficients, which
// Cbc needs seconds to minutes for and GLPK solves in a fraction of a second: docs/or_data.md) are solved within the
// one limit; a solve with a retry takes at most about 1.1x its limit.
#pragma once

#include <string>
#include <vector>

#include "trex/optmodel/ir/model.hpp"

namespace trex::optmodel {

enum class solve_status { optimal, infeasible, unbounded, time_limit, error };
const char* solve_status_name(solve_status s);  // "optimal", "infeasible", "unbounded", "time_limit", "error"

struct solve_options {
    double time_limit_s = 10.0;
    bool glpk_retry = true;  // solve_coin on a small MILP: GLPK after a Cbc time limit (off for cross-checks)
};

constexpr int kSmallMipMaxIntegerVars = 50;
constexpr int kSmallMipMaxRows = 100;
constexpr double kSmallMipCbcShare = 0.5;
bool is_small_mip(const model& m);  // a MILP within both limits above

struct solve_result {
    solve_status status = solve_status::error;
    double objective = 0.0;        // with the constant; meaningful when optimal
    std::vector<double> x;         // [vars] primal values (when optimal)
    std::vector<double> activity;  // [cons] row activities a_i x (when optimal)
    // LPs only (when optimal): dual[i] = d(optimal objective)/d(rhs_i) and reduced_cost[j] = d(objective)/d(x_j)
    // along the basis, both in the model's own sense (for a max problem a positive dual means "more rhs, more
    // objective").
    std::vector<double> dual;          // [cons]
    std::vector<double> reduced_cost;  // [vars]
    double seconds = 0.0;
    std::string solver;         // "clp", "cbc", "glpk-simplex", "glpk-intopt": the solver that produced the result
    std::string fallback_from;  // "cbc" when GLPK's retry produced it after Cbc's time limit, else empty
    std::string message;        // for error; for a time_limit after a GLPK retry that was not taken, what GLPK said
};

constexpr double kSolverInfinity = 1e30;
constexpr double kMaxMatrixCoefficient = 1e30;
constexpr double kMaxObjectiveCoefficient = 1e25;

// Column and row bounds as a solver gets them: [lo, up] per variable and per constraint, ±inf where unbounded.
struct solver_bounds {
    std::vector<double> col_lo, col_up;
    std::vector<double> row_lo, row_up;
};
// The bounds of m under the rules above; throws trex::error naming what is refused.
solver_bounds solver_bounds_of(const model& m);

solve_result solve_coin(const model& m, const solve_options& opt = {});  // a quadratic model: solve_qp
solve_result solve_glpk(const model& m, const solve_options& opt = {});  // a quadratic model: error

// Quadratic models (model::is_quadratic), solved as convex problems only — what is refused, and why:
//   * integer or binary variables (MIQP / MIQCP);
//   * an objective that is not convex in its sense (minimised with a Hessian that is not positive semidefinite,
//     maximised with one that is not negative semidefinite), a quadratic <= row whose Hessian is not positive
//     semidefinite, a quadratic >= row whose Hessian is not negative semidefinite, a quadratic equality row.
//   * quadratic terms over more than kQpMaxHessianVars variables in one objective or row.
// The Hessians are checked by a dense pivoted LDL' factorisation (pivots down to -1e-9 of the largest entry count as
// zero). quadratic_refusal gives the reason, "" when m is a convex (QC)QP; every reason ends in "are not supported".
constexpr int kQpMaxHessianVars = 2000;
std::string quadratic_refusal(const model& m);

// A convex QP or QCQP by HiGHS (the `highspy` package of the Python that find_python_with_pulp() names, or
// TREX_QP_PYTHON; the helper script python/trex_eval/trex_qp.py, or TREX_QP_HELPER): the objective and linear rows
// as HiGHS's QP; one quadratic row through its multiplier (bisection on the Lagrangian's, one QP per step), several
// by outer approximation (tangent cuts, feasibility 1e-9 relative). HiGHS's point is
// taken as optimal only when it checks out (solution_checks_out, quadratic rows included) and its optimality gap
// (qp_optimality_gap, by Clp) is at most kQpGapTolerance * max(1, |objective|); the message then gives the gap.
// Duals: of every row (a quadratic row's is the sum of its tangent cuts'), in the model's sense as for LPs; no
// reduced costs. A refused model (quadratic_refusal) or a missing highspy is status error with the reason.
constexpr double kQpGapTolerance = 1e-7;
solve_result solve_qp(const model& m, const solve_options& opt = {});

// An upper bound on how far x is from optimal for a convex model m (possibly quadratic), in objective units, by weak
// duality: in minimisation form, with lambda_k >= 0 the multipliers of the quadratic rows taken from `dual` (the
// rows' duals as solve_result gives them; absent or of the wrong sign: 0) and L = f + sum lambda_k (g_k - rhs_k) in
// the rows' convex orientation, every feasible y has f(y) >= L(y) >= L(x) + grad L(x)'(y - x). The LP min grad L(x)'y
// over m's bounds, linear rows and the tangent cuts of the quadratic rows at x (a relaxation: every row is convex)
// is solved by Clp, so f* >= f(x) - gap with gap = grad L(x)'x - LP - sum lambda_k (g_k(x) - rhs_k). Returns gap
// (about 0 for an optimal x with its multipliers; any lambda >= 0 gives a valid bound), +inf when the LP is unbounded
// or fails (x is then not optimal, or not precise enough to be certified).
double qp_optimality_gap(const model& m, const std::vector<double>& x, const std::vector<double>& dual = {});

// Whether x meets every bound and row of m within 1e-6 + 1e-9·(the row's Σ|a_ij x_j|) (the bound's |x_j|).
bool solution_checks_out(const model& m, const std::vector<double>& x);

// A solve whose optimum is not one solver's word (the eval judge's): an LP by solve_coin (GLPK when COIN fails); a
// MILP by Cbc and GLPK both, because Cbc has called a wrong point "proven optimal" — its knapsack-cover and Gomory
// cuts after preprocessing cut off the true optimum (coin-or/Cgl#32, coin-or/Cbc#82; here an 8-binary capital
// budgeting model: Cbc 161, enumeration and GLPK 164). A solver's point that checks out (solution_checks_out) and is
// better than the other's claimed optimum refutes that claim, and is the answer; a checked optimum also refutes
// the other solver's "infeasible" or stands in for its time limit or error. The result then names the solver that
// found it, fallback_from the one refuted, and message says what was refuted. Cbc gets the whole limit, GLPK at most
// ten times Cbc's time (at least 5 s; the whole limit when Cbc failed), so the check costs little beside Cbc.
solve_result solve_checked(const model& m, const solve_options& opt = {});

}  // namespace trex::optmodel
