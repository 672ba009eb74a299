// Solver code from a family's code template. Templates are Python that reads the dict `data` (the instance's
// data.json) and uses six dialect-neutral forms, expanded here into idiomatic PuLP, gurobipy, coptpy or Pyomo:
//   @var(NAME, LB, UB, KIND)   KIND: C continuous, I integer, B binary; LB/UB Python expressions or None
//   @add(EXPR, NAME)           add the constraint EXPR (a comparison) named NAME
//   @sum(GEN)                  sum of a generator (pulp.lpSum / gp.quicksum / cp.quicksum / pyo.quicksum)
//   @obj(EXPR)                 set the objective (sense from the instance)
//   @inf()                     no bound (None / GRB.INFINITY / COPT.INFINITY / None)
// The program prints "Status: <status>" and, when optimal, "Optimal objective: <value>" (see writers.hpp).
#pragma once

#include <string>

#include "trex/optmodel/families/family.hpp"

namespace trex::optmodel {

// The modelling libraries answers are written in (and judged in: the T-Rex harness runs gurobipy, ORLM and SIRL
// outputs use coptpy, OptMATH and Mamo use Pyomo and PuLP). Pyomo programs solve with SolverFactory("glpk").
enum class dialect { pulp, gurobipy, coptpy, pyomo };
const char* dialect_name(dialect d);  // "pulp", "gurobipy", "coptpy", "pyomo"
bool parse_dialect(const std::string& s, dialect* d);

// A complete program. data_from_file: read data.json (DPS); otherwise the data is written inline as a literal.
std::string render_code(const family& f, const instance& inst, dialect d, bool data_from_file);

// Expands only the dialect forms of a template (exposed for tests). Throws trex::error on a malformed form.
std::string expand_code_forms(const std::string& tmpl, dialect d, obj_sense sense);

}  // namespace trex::optmodel
