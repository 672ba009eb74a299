// Solving the IR: COIN (Clp for LPs, Cbc through CbcMain0/CbcMain1 for MILPs) and, independently, GLPK
// (glp_simplex / glp_intopt, presolve on). Solver logs are suppressed; every call has a time limit.
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
#pragma once

#include <string>
#include <vector>

#include "trex/optmodel/model.hpp"

namespace trex::optmodel {

enum class solve_status { optimal, infeasible, unbounded, time_limit, error };
const char* solve_status_name(solve_status s);  // "optimal", "infeasible", "unbounded", "time_limit", "error"

struct solve_options {
    double time_limit_s = 10.0;
};

struct solve_result {
    solve_status status = solve_status::error;
    double objective = 0.0;            // with the constant; meaningful when optimal
    std::vector<double> x;             // [vars] primal values (when optimal)
    std::vector<double> activity;      // [cons] row activities a_i x (when optimal)
    // LPs only (when optimal): dual[i] = d(optimal objective)/d(rhs_i) and reduced_cost[j] = d(objective)/d(x_j)
    // along the basis, both in the model's own sense (for a max problem a positive dual means "more rhs, more
    // objective").
    std::vector<double> dual;          // [cons]
    std::vector<double> reduced_cost;  // [vars]
    double seconds = 0.0;
    std::string solver;   // "clp", "cbc", "glpk-simplex", "glpk-intopt"
    std::string message;  // for error
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

solve_result solve_coin(const model& m, const solve_options& opt = {});
solve_result solve_glpk(const model& m, const solve_options& opt = {});

}  // namespace trex::optmodel
