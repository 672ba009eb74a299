// Writers from the IR to text formats. Every writer emits the full instance (explicit rows), with names made safe
// by make_safe_names and numbers by format_number, so a reader gets back exactly the same numbers.
#pragma once

#include <string>

#include "trex/optmodel/ir/model.hpp"

namespace trex::optmodel {

std::string write_lp(const model& m);        // CPLEX LP format (read by GLPK, COIN, CPLEX, Gurobi)
std::string write_mps(const model& m);       // free MPS with OBJSENSE and explicit integer bounds
std::string write_mathprog(const model& m);  // GLPK MathProg (GMPL), scalar variables and constraints
std::string write_latex(const model& m);     // LaTeX align* block; read back by parse_latex (latex.hpp)
std::string write_pulp(const model& m);      // Python script: PuLP (bundled CBC), prints status and objective
std::string write_gurobipy(const model& m);  // Python script: gurobipy, prints status and objective

// The end of a PuLP script whose problem is `prob`: solve with CBC and print the status and objective (and the
// nonzero values when `values`). CBC can report an unbounded LP as infeasible (a product no constraint limits,
// others bounded): an "Infeasible" answer is checked by solving a zero-objective copy, feasible means unbounded.
std::string pulp_epilogue(bool values);

// What the Python scripts print (one line each), parsed by the re-execution check:
//   "Status: Optimal" | "Status: Infeasible" | "Status: Unbounded" | "Status: <other>"
//   "Optimal objective: <value>"            (only when optimal)

}  // namespace trex::optmodel
