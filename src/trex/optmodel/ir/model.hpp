// The optimization-model IR: variables (continuous / integer / binary, bounds, names), linear constraints
// (<=, =, >=, names) and a linear objective (min / max, constant). Every writer, reader and solver speaks it.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace trex::optmodel {

constexpr double inf = std::numeric_limits<double>::infinity();

enum class var_type { continuous, integer, binary };
enum class row_sense { le, eq, ge };
enum class obj_sense { minimize, maximize };

const char* var_type_name(var_type t);
const char* row_sense_name(row_sense s);  // "<=", "=", ">="

struct variable {
    std::string name;
    var_type type = var_type::continuous;
    double lb = 0.0;  // -inf allowed
    double ub = inf;  // +inf allowed; binaries are [0, 1]
    double obj = 0.0; // objective coefficient
};

struct term {
    int var = 0;  // index into model::vars
    double coef = 0.0;
};

struct constraint {
    std::string name;
    std::vector<term> terms;  // at most one term per variable (validate() checks)
    row_sense sense = row_sense::le;
    double rhs = 0.0;
};

struct model {
    std::string name = "model";
    obj_sense sense = obj_sense::minimize;
    double obj_constant = 0.0;
    std::vector<variable> vars;
    std::vector<constraint> cons;

    // Adds a variable and returns its index.
    int add_var(std::string name, var_type type, double lb, double ub, double obj = 0.0);
    // Adds a constraint; terms with a zero coefficient are dropped, repeated variables summed.
    int add_con(std::string name, std::vector<term> terms, row_sense sense, double rhs);

    bool is_mip() const;  // any integer or binary variable
    long nonzeros() const;
    // Objective value of a point (constant included).
    double objective_at(const std::vector<double>& x) const;
    // Activity (row value) of constraint i at x.
    double activity(int i, const std::vector<double>& x) const;
};

// LP writers write the objective constant as a column fixed at 1 that appears in no row: ours (GLPK's reader takes no
// constant) "obj_constant", Gurobi's "Constant", Pyomo's "ONE_VAR_CONSTANT"; readers fold such a column back into
// obj_constant.
void fold_constant_column(model& m);

// Throws trex::error naming the model and the first offending variable / constraint: empty or duplicate names,
// NaN or infinite coefficients, lb > ub, binary bounds outside [0,1], a term pointing outside vars, repeated terms.
void validate(const model& m);

// Canonical 64-bit hash of the model's structure and numbers, invariant under renaming and reordering of variables
// and constraints (Weisfeiler-Lehman colour refinement on the variable-constraint graph, 3 rounds). Used to remove
// duplicate instances. Equal models hash equal; different models collide only by (unlikely) accident.
uint64_t canonical_hash(const model& m);

}  // namespace trex::optmodel
