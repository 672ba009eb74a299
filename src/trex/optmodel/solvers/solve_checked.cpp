// solve_checked: a MILP's optimum confirmed by a second solver (contract in solve.hpp).
#include <algorithm>
#include <cmath>
#include <exception>
#include <string>

#include <fmt/format.h>

#include "trex/optmodel/solvers/solve.hpp"

namespace trex::optmodel {

namespace {

constexpr double kCheckMinSeconds = 5.0;

// Whether objective a is better than b in m's sense by more than 1e-7 relative (solver noise is below that).
bool strictly_better(const model& m, double a, double b) {
    const double tol = 1e-7 * std::max(1.0, std::fabs(b));
    return m.sense == obj_sense::minimize ? a < b - tol : a > b + tol;
}

// A solver's optimum whose point meets the model.
bool checked_optimum(const model& m, const solve_result& r) {
    return r.status == solve_status::optimal && solution_checks_out(m, r.x);
}

solve_result coin_or_error(const model& m, const solve_options& opt) {
    try {
        return solve_coin(m, opt);
    } catch (const std::exception& e) {
        solve_result r;
        r.status = solve_status::error;
        r.message = e.what();
        return r;
    }
}

// `taken` replaces `refuted`; the message says what `refuted` claimed.
solve_result refute(solve_result taken, const solve_result& refuted) {
    const std::string claim = refuted.status == solve_status::optimal
                                  ? fmt::format("its optimum {}", refuted.objective)
                                  : fmt::format("'{}'", solve_status_name(refuted.status));
    taken.message = fmt::format("{} reported {}; {} found the feasible point of objective {}", refuted.solver, claim,
                                taken.solver, taken.objective);
    taken.fallback_from = refuted.solver;
    return taken;
}

}  // namespace

solve_result solve_checked(const model& m, const solve_options& opt) {
    if (m.is_quadratic()) return solve_qp(m, opt);  // certified by its own optimality check
    solve_result c = coin_or_error(m, opt);
    if (!m.is_mip()) {
        if (c.status != solve_status::error) return c;
        solve_result g = solve_glpk(m, opt);
        return g.status == solve_status::error ? c : g;
    }
    // GLPK checks; it is not the main path: at most 10x Cbc's time (at least kCheckMinSeconds), the whole limit when
    // Cbc failed outright.
    solve_options go = opt;
    if (c.status != solve_status::error)
        go.time_limit_s = std::min(opt.time_limit_s, std::max(kCheckMinSeconds, 10 * c.seconds));
    solve_result g = solve_glpk(m, go);
    const bool c_ok = checked_optimum(m, c), g_ok = checked_optimum(m, g);
    if (c_ok && g_ok) return strictly_better(m, g.objective, c.objective) ? refute(g, c) : c;
    if (c_ok) return c;
    // Unboundedness is not refuted by a finite point; GLPK's optimum then stands against nothing.
    if (g_ok && c.status != solve_status::unbounded) return refute(g, c);
    if (c.status == solve_status::error && g.status != solve_status::error) return g;
    return c;
}

}  // namespace trex::optmodel
