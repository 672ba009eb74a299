// Reading the LP files that Gurobi writes (`model.write("model.lp")`, the Bench4Opt reference models) into the IR.
//
// Gurobi's dialect of the CPLEX LP format separates every token by whitespace, so names may hold characters the
// CPLEX grammar reserves: `x[0,1]`, `flow(a,b)`, `y.2`. GLPK's CPLEX reader stops at the `[`. What this reader
// takes (keywords case-insensitive):
//   - `Minimize|Minimise|Minimum|Min|Maximize|...|Max`, an optional `name:`, a linear objective; a number without
//     a variable is the objective constant, and so is `c Constant` (Gurobi writes the constant as a column
//     `Constant` fixed at 1 in Bounds; it is folded back, fixed at 1 also when no bound line names it);
//   - `Subject To|Such That|st|s.t.`: rows `[name:] terms (<=|=<|<|>=|=>|>|=) [-]number`; a row with no variable
//     left (`R3: 0 >= -2`, `R4: >= 5`: an empty linear expression) is kept as an empty row; constants on the left
//     move to the right; unnamed rows are named R1, R2, ... in order;
//   - `Bounds`: `lo <= x <= hi`, `x <= hi`, `x >= lo`, `lo <= x`, `x = v`, `x free`, with `inf`/`infinity` (any
//     sign) infinite; numbers are kept as written (the solvers' rules for |v| >= 1e30 apply, solve.hpp);
//   - `Generals|General|Gen`, `Binaries|Binary|Bin` (binaries get [0, 1]); `End`;
//   - quadratic terms in a bracket, in the objective `+ [ 4 x ^ 2 - 2 x * y ] / 2` (the bracket holds twice the
//     coefficients: model::obj_quad gets {x,x,2}, {x,y,-1}), in a row `r: x + [ x ^ 2 + y ^ 2 ] <= 4` (not halved),
//     as Gurobi, CPLEX, COPT and Pyomo write them: `x ^ 2`, `x ^2`, `x^2`, `x * y`, `x*y`, signs and numbers apart or
//     against the term (`+2 x ^ 2`, `-y ^ 2`), the bracket apart or against its neighbours (`[x^2`, `y^2]`, `]/2`),
//     anywhere in the expression. A missing `/ 2` in the objective, a `/ 2` in a row, a power other than 2 and a
//     `^` or `*` outside a bracket are errors.
// Refused with a trex::error naming `what` and the line: indicator rows (`->`),
// semi-continuous / SOS / general-constraint / lazy sections, and any token this grammar cannot read unambiguously
// — a name that starts with a digit, `.`, or holds one of `+ - * ^ < > = :` (in the CPLEX grammar `x+y` is a sum,
// in Gurobi's one name), which read_lp_file then hands to GLPK's CPLEX reader.
#pragma once

#include <string>

#include "trex/optmodel/ir/model.hpp"

namespace trex::optmodel {

model read_lp_dialect(const std::string& text, const std::string& what);

}  // namespace trex::optmodel
