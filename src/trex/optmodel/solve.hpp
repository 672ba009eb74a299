// Solving the IR: COIN (Clp for LPs, Cbc through CbcMain0/CbcMain1 for MILPs) and, independently, GLPK
// (glp_simplex / glp_intopt, presolve on). Solver logs are suppressed; every call has a time limit.
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

solve_result solve_coin(const model& m, const solve_options& opt = {});
solve_result solve_glpk(const model& m, const solve_options& opt = {});

}  // namespace trex::optmodel
