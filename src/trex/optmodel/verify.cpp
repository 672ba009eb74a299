#include "trex/optmodel/verify.hpp"

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

verification verify(const model& m, const verify_options& opt) {
    verification v;
    solve_options so;
    so.time_limit_s = opt.time_limit_s;
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
    for (size_t i = 0; i < m.cons.size(); i++) {
        const double slack = v.coin.activity[i] - m.cons[i].rhs;
        if (std::fabs(slack) <= 1e-6 * std::max(1.0, std::fabs(m.cons[i].rhs))) v.binding++;
    }
    bool all_zero = true;
    for (double x : v.coin.x)
        if (std::fabs(x) > 1e-9) all_zero = false;
    if (all_zero || v.objective == 0.0) {
        v.verdict = gate::trivial;
        return v;
    }
    if (v.binding < std::min<int>(opt.min_binding, (int)m.cons.size())) {
        v.verdict = gate::few_binding;
        return v;
    }
    v.verdict = gate::kept;
    return v;
}

}  // namespace trex::optmodel
