#include "trex/optmodel/solvers/verify.hpp"

#include <algorithm>
#include <cmath>

namespace trex::optmodel {

const char* gate_name(gate g) {
    switch (g) {
        case gate::kept: return "kept";
        case gate::solver_error: return "solver_error";
        case gate::time_limit: return "time_limit";
        case gate::status_disagree: return "status_disagree";
        case gate::objective_disagree: return "objective_disagree";
        case gate::trivial: return "trivial";
        case gate::few_binding: return "few_binding";
        case gate::design_status: return "design_status";
        case gate::duplicate: return "duplicate";
        case gate::reexec_failed: return "reexec_failed";
    }
    return "?";
}

bool objectives_agree(double a, double b, double rel_tol) {
    return std::fabs(a - b) <= rel_tol * std::max({1.0, std::fabs(a), std::fabs(b)});
}

bool is_binding(const model& m, int i, const std::vector<double>& x, double activity) {
    const constraint& c = m.cons[i];
    const double tol = 1e-6 * std::max(1.0, std::fabs(c.rhs));
    if (c.sense == row_sense::eq) return true;
    const double slack = c.sense == row_sense::le ? c.rhs - activity : activity - c.rhs;  // >= 0 when feasible
    if (slack <= tol) return true;
    // integer rows: binding when no unit move of an integer variable that uses up slack still fits
    double min_step = inf;
    for (const term& t : c.terms) {
        const variable& v = m.vars[t.var];
        if (v.type == var_type::continuous) return false;
        // direction of x_j that consumes slack: sign(a) for <=, -sign(a) for >=
        const double dir = (c.sense == row_sense::le ? 1.0 : -1.0) * (t.coef > 0 ? 1.0 : -1.0);
        const bool can_move = dir > 0 ? x[t.var] + 1 <= v.ub + 1e-9 : x[t.var] - 1 >= v.lb - 1e-9;
        if (can_move) min_step = std::min(min_step, std::fabs(t.coef));
    }
    return min_step != inf && min_step > slack + tol;
}

verification verify(const model& m, const verify_options& opt) {
    verification v;
    solve_options so;
    so.time_limit_s = opt.time_limit_s;
    so.glpk_retry = false;  // the cross-check needs COIN's own answer
    v.coin = solve_coin(m, so);
    v.glpk = solve_glpk(m, so);
    const solve_status a = v.coin.status, b = v.glpk.status;
    if (a == solve_status::time_limit || b == solve_status::time_limit) {
        v.verdict = gate::time_limit;
        return v;
    }
    if (a == solve_status::error || b == solve_status::error) {
        v.verdict = gate::solver_error;
        return v;
    }
    if (a != b) {
        v.verdict = gate::status_disagree;
        return v;
    }
    v.status = a;
    if (a != solve_status::optimal) {
        v.verdict = gate::kept;
        return v;
    }
    v.objective = v.coin.objective;
    if (!objectives_agree(v.coin.objective, v.glpk.objective, opt.rel_tol)) {
        v.verdict = gate::objective_disagree;
        return v;
    }
    for (size_t i = 0; i < m.cons.size(); i++)
        if (is_binding(m, (int)i, v.coin.x, v.coin.activity[i])) v.binding++;
    bool all_zero = true;
    for (double x : v.coin.x)
        if (std::fabs(x) > 1e-9) all_zero = false;
    if (all_zero || v.objective == 0.0) {
        v.verdict = gate::trivial;
        return v;
    }
    if (v.binding < std::min<int>(opt.min_binding, std::max<int>(1, (int)m.cons.size() / 2))) {
        v.verdict = gate::few_binding;
        return v;
    }
    v.verdict = gate::kept;
    return v;
}

}  // namespace trex::optmodel
