// The numbers the solvers get (solve.hpp): huge bounds and right-hand sides made infinite, everything no solver can
// take refused.
#include <cmath>

#include "trex/base/error.hpp"
#include "trex/optmodel/solvers/solve.hpp"

namespace trex::optmodel {

namespace {

// v as a lower bound: -inf when it bounds nothing, NaN when it is NaN or no finite value meets it.
double as_lower(double v) {
    if (std::isnan(v) || v >= kSolverInfinity) return std::nan("");
    return v <= -kSolverInfinity ? -inf : v;
}

// v as an upper bound, likewise.
double as_upper(double v) {
    return -as_lower(-v);
}

// Throws "model 'm': <culprit> <v> (why)".
[[noreturn]] void refuse_bound(const model& m, const std::string& culprit, double v) {
    throw_error(fmt::format("model '{}': {} {} ({})", m.name, culprit, v,
                            std::isnan(v) ? "not a number" : "no finite value can meet it"));
}

void check_objective(const model& m) {
    TREX_CHECK(std::isfinite(m.obj_constant), "model '{}': objective constant {} is not a finite number", m.name,
               m.obj_constant);
    for (const variable& v : m.vars)
        TREX_CHECK(std::isfinite(v.obj) && std::fabs(v.obj) < kMaxObjectiveCoefficient,
                   "model '{}': variable '{}' has objective coefficient {} (solvers take |c| < {:g})", m.name, v.name,
                   v.obj, kMaxObjectiveCoefficient);
}

void check_matrix(const model& m) {
    for (const constraint& c : m.cons)
        for (const term& t : c.terms) {
            TREX_CHECK(t.var >= 0 && t.var < (int)m.vars.size(),
                       "model '{}': constraint '{}' refers to variable {} (the model has {})", m.name, c.name, t.var,
                       m.vars.size());
            TREX_CHECK(std::isfinite(t.coef) && std::fabs(t.coef) < kMaxMatrixCoefficient,
                       "model '{}': constraint '{}' has coefficient {} on variable '{}' (solvers take |a| < {:g})",
                       m.name, c.name, t.coef, m.vars[t.var].name, kMaxMatrixCoefficient);
        }
    auto check_quad = [&](const std::vector<quad_term>& q, const std::string& where) {
        for (const quad_term& t : q) {
            TREX_CHECK(t.i >= 0 && t.j >= 0 && t.i < (int)m.vars.size() && t.j < (int)m.vars.size(),
                       "model '{}': a quadratic term of {} refers to a variable outside the model", m.name, where);
            TREX_CHECK(std::isfinite(t.coef) && std::fabs(t.coef) < kMaxMatrixCoefficient,
                       "model '{}': {} has quadratic coefficient {} (solvers take |q| < {:g})", m.name, where, t.coef,
                       kMaxMatrixCoefficient);
        }
    };
    check_quad(m.obj_quad, "the objective");
    for (const constraint& c : m.cons) check_quad(c.quad, "constraint '" + c.name + "'");
}

}  // namespace

solver_bounds solver_bounds_of(const model& m) {
    check_objective(m);
    check_matrix(m);
    solver_bounds b;
    for (const variable& v : m.vars) {
        b.col_lo.push_back(as_lower(v.lb));
        b.col_up.push_back(as_upper(v.ub));
        if (std::isnan(b.col_lo.back())) refuse_bound(m, "variable '" + v.name + "' has lower bound", v.lb);
        if (std::isnan(b.col_up.back())) refuse_bound(m, "variable '" + v.name + "' has upper bound", v.ub);
    }
    for (const constraint& c : m.cons) {
        b.row_lo.push_back(c.sense == row_sense::le ? -inf : as_lower(c.rhs));
        b.row_up.push_back(c.sense == row_sense::ge ? inf : as_upper(c.rhs));
        if (std::isnan(b.row_lo.back()) || std::isnan(b.row_up.back()))
            refuse_bound(m, "constraint '" + c.name + "' has right-hand side", c.rhs);
    }
    return b;
}

}  // namespace trex::optmodel
