// The optimization-model IR: variables (continuous / integer / binary, bounds, names), constraints (<=, =, >=,
// names) and an objective (min / max, constant). Every writer, reader and solver speaks its linear part. Quadratic
// terms (the objective's and the constraints', read from LP files that eval answers write) are carried by the IR, the
// LP reader and writer and the QP solver (solve.hpp); every other writer and solver refuses a quadratic model with a
// clear error (is_quadratic()).
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
    double lb = 0.0;   // -inf allowed
    double ub = inf;   // +inf allowed; binaries are [0, 1]
    double obj = 0.0;  // objective coefficient
};

struct term {
    int var = 0;  // index into model::vars
    double coef = 0.0;
};

// coef * x_i * x_j with i <= j (i == j: a square). Not halved: the objective's `[ 4 x ^ 2 ] / 2` of an LP file is
// {x, x, 2}.
struct quad_term {
    int i = 0, j = 0;  // indices into model::vars
    double coef = 0.0;
};

struct constraint {
    std::string name;
    std::vector<term> terms;  // at most one term per variable (validate() checks)
    row_sense sense = row_sense::le;
    double rhs = 0.0;
    std::vector<quad_term> quad;  // activity += sum coef x_i x_j; at most one term per pair (validate() checks)
};

struct model {
    std::string name = "model";
    obj_sense sense = obj_sense::minimize;
    double obj_constant = 0.0;
    std::vector<variable> vars;
    std::vector<constraint> cons;
    std::vector<quad_term> obj_quad;  // objective += sum coef x_i x_j; at most one term per pair

    // Adds a variable and returns its index.
    int add_var(std::string name, var_type type, double lb, double ub, double obj = 0.0);
    // Adds a constraint; terms with a zero coefficient are dropped, repeated variables summed.
    int add_con(std::string name, std::vector<term> terms, row_sense sense, double rhs);

    bool is_mip() const;        // any integer or binary variable
    bool is_quadratic() const;  // any quadratic term in the objective or a constraint
    long nonzeros() const;
    // Objective value of a point (constant and quadratic terms included).
    double objective_at(const std::vector<double>& x) const;
    // Activity (row value) of constraint i at x, quadratic terms included.
    double activity(int i, const std::vector<double>& x) const;
};

// q with every term ordered (i <= j), repeated pairs summed (first-appearance order) and zero terms dropped.
std::vector<quad_term> merged_quad(std::vector<quad_term> q);

// LP writers write the objective constant as a column fixed at 1 that appears in no row: ours (GLPK's reader takes no
// constant) "obj_constant", Gurobi's "Constant", Pyomo's "ONE_VAR_CONSTANT"; readers fold such a column back into
// obj_constant.
void fold_constant_column(model& m);

// Throws trex::error naming the model and the first offending variable / constraint: empty or duplicate names,
// NaN or infinite coefficients, lb > ub, binary bounds outside [0,1], a term pointing outside vars, repeated terms,
// a quadratic term with i > j.
void validate(const model& m);

// Throws trex::error "<what> does not support quadratic terms (model '<name>')" when m is quadratic: the guard of
// the writers and solvers that speak the linear part only.
void require_linear(const model& m, const char* what);

// Canonical 64-bit hash of the model's structure and numbers, invariant under renaming and reordering of variables
// and constraints (Weisfeiler-Lehman colour refinement on the variable-constraint graph, 3 rounds). Used to remove
// duplicate instances. Equal models hash equal; different models collide only by (unlikely) accident. Quadratic
// terms enter as colours of the variables they touch (squares) and of the rows and objective that hold them.
uint64_t canonical_hash(const model& m);

}  // namespace trex::optmodel
