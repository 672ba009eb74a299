// Clp (LP) and Cbc (MILP) on the IR. Cbc runs through CbcMain0/CbcMain1 so its default cuts and heuristics are on
// (a bare branchAndBound() was 60x slower on p0548). CbcMain keeps static state: call it from one thread per
// process (trex data parallelises over processes).
#include <coin/CbcModel.hpp>
#include <coin/CbcSolver.hpp>
#include <coin/ClpSimplex.hpp>
#include <coin/CoinError.hpp>
#include <coin/CoinPackedMatrix.hpp>
#include <coin/OsiClpSolverInterface.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "trex/base/error.hpp"
#include "trex/base/timer.hpp"
#include "trex/optmodel/solvers/solve.hpp"

namespace trex::optmodel {

namespace {

// Column-major arrays of the model, objective turned into a minimisation (c or -c).
struct coin_arrays {
    std::vector<CoinBigIndex> start;
    std::vector<int> index;
    std::vector<double> value, collb, colub, obj, rowlb, rowub;
};

double coin_number(double v) {
    return v == inf ? COIN_DBL_MAX : v == -inf ? -COIN_DBL_MAX : v;
}

coin_arrays arrays(const model& m, const solver_bounds& b) {
    coin_arrays a;
    const int n = (int)m.vars.size();
    std::vector<std::vector<std::pair<int, double>>> cols(n);
    for (size_t i = 0; i < m.cons.size(); i++)
        for (const term& t : m.cons[i].terms) cols[t.var].push_back({(int)i, t.coef});
    a.start.push_back(0);
    const double flip = m.sense == obj_sense::maximize ? -1.0 : 1.0;
    for (int j = 0; j < n; j++) {
        for (auto [i, v] : cols[j]) {
            a.index.push_back(i);
            a.value.push_back(v);
        }
        a.start.push_back((CoinBigIndex)a.index.size());
        a.collb.push_back(coin_number(b.col_lo[j]));
        a.colub.push_back(coin_number(b.col_up[j]));
        a.obj.push_back(flip * m.vars[j].obj);
    }
    for (size_t i = 0; i < m.cons.size(); i++) {
        a.rowlb.push_back(coin_number(b.row_lo[i]));
        a.rowub.push_back(coin_number(b.row_up[i]));
    }
    return a;
}

void fill_activity(const model& m, solve_result& r) {
    r.activity.resize(m.cons.size());
    for (size_t i = 0; i < m.cons.size(); i++) r.activity[i] = m.activity((int)i, r.x);
}

solve_result solve_clp(const model& m, const solver_bounds& b, const solve_options& opt) {
    solve_result r;
    r.solver = "clp";
    const coin_arrays a = arrays(m, b);
    auto load = [&](ClpSimplex& clp) {
        clp.setLogLevel(0);
        clp.messageHandler()->setLogLevel(0);
        clp.loadProblem((int)m.vars.size(), (int)m.cons.size(), a.start.data(), a.index.data(), a.value.data(),
                        a.collb.data(), a.colub.data(), a.obj.data(), a.rowlb.data(), a.rowub.data());
        clp.setMaximumSeconds(opt.time_limit_s);
    };
    ClpSimplex clp;
    load(clp);
    clp.initialSolve();
    if (!clp.isProvenOptimal() && clp.status() != 3) {
        // initialSolve (dual simplex) can call an unbounded problem infeasible (seen with an empty column of
        // infinite upper bound): classify on a fresh copy with the primal simplex
        ClpSimplex again;
        load(again);
        again.primal();
        if (again.status() != 3) clp = again;
    }
    if (clp.isProvenOptimal()) {
        const double flip = m.sense == obj_sense::maximize ? -1.0 : 1.0;
        r.status = solve_status::optimal;
        r.x.assign(clp.primalColumnSolution(), clp.primalColumnSolution() + m.vars.size());
        r.objective = m.objective_at(r.x);
        r.dual.resize(m.cons.size());
        r.reduced_cost.resize(m.vars.size());
        for (size_t i = 0; i < m.cons.size(); i++) r.dual[i] = flip * clp.dualRowSolution()[i];
        for (size_t j = 0; j < m.vars.size(); j++) r.reduced_cost[j] = flip * clp.dualColumnSolution()[j];
        fill_activity(m, r);
    } else if (clp.isProvenPrimalInfeasible()) {
        r.status = solve_status::infeasible;
    } else if (clp.isProvenDualInfeasible()) {
        r.status = solve_status::unbounded;
    } else if (clp.status() == 3 || clp.hitMaximumIterations()) {
        r.status = solve_status::time_limit;
    } else {
        r.status = solve_status::error;
        r.message = "clp status " + std::to_string(clp.status());
    }
    return r;
}

// Cbc for `seconds` of wall-clock time. *incumbent: the objective of the best solution found when Cbc stops at its
// limit with one, else NaN.
solve_result solve_cbc(const model& m, const solver_bounds& b, double seconds, double* incumbent) {
    solve_result r;
    r.solver = "cbc";
    const coin_arrays a = arrays(m, b);
    OsiClpSolverInterface osi;
    osi.messageHandler()->setLogLevel(0);
    osi.getModelPtr()->setLogLevel(0);
    CoinPackedMatrix mat(true, (int)m.cons.size(), (int)m.vars.size(), (CoinBigIndex)a.index.size(), a.value.data(),
                         a.index.data(), a.start.data(), nullptr);
    osi.loadProblem(mat, a.collb.data(), a.colub.data(), a.obj.data(), a.rowlb.data(), a.rowub.data());
    for (size_t j = 0; j < m.vars.size(); j++)
        if (m.vars[j].type != var_type::continuous) osi.setInteger((int)j);
    CbcModel cbc(osi);
    cbc.setLogLevel(0);
    cbc.messageHandler()->setLogLevel(0);
    CbcSolverUsefulData data;
    data.noPrinting_ = true;
    CbcMain0(cbc, data);
    cbc.setLogLevel(0);
    const std::string sec = std::to_string(std::max(0.01, seconds));
    // relative gap 0: a MIP is solved to proven optimality (the T-Rex harness runs Gurobi with MIPGap 0)
    const char* argv[] = {"trex",      "-log",      "0", "-timeMode", "elapsed", "-sec",
                          sec.c_str(), "-ratioGap", "0", "-solve",    "-quit"};
    CbcMain1(
        11, argv, cbc, [](CbcModel*, int) { return 0; }, data);
    const double* best = cbc.bestSolution();
    *incumbent = std::nan("");
    if (cbc.isProvenOptimal() && best) {
        r.status = solve_status::optimal;
        r.x.assign(best, best + m.vars.size());
        // integral values exactly integral (Cbc returns e.g. 0.9999999999)
        for (size_t j = 0; j < m.vars.size(); j++)
            if (m.vars[j].type != var_type::continuous) r.x[j] = std::round(r.x[j]);
        r.objective = m.objective_at(r.x);
        fill_activity(m, r);
    } else if (cbc.isContinuousUnbounded() || cbc.secondaryStatus() == 7) {
        r.status = solve_status::unbounded;
    } else if (cbc.isProvenInfeasible() || cbc.secondaryStatus() == 1) {
        r.status = solve_status::infeasible;
    } else if (cbc.isSecondsLimitReached() || cbc.status() == 1) {
        r.status = solve_status::time_limit;
        if (best) *incumbent = m.objective_at(std::vector<double>(best, best + m.vars.size()));
    } else {
        r.status = solve_status::error;
        r.message = "cbc status " + std::to_string(cbc.status()) + "/" + std::to_string(cbc.secondaryStatus());
    }
    return r;
}

}  // namespace

bool solution_checks_out(const model& m, const std::vector<double>& x) {
    if (x.size() != m.vars.size()) return false;
    for (size_t j = 0; j < m.vars.size(); j++) {
        const double tol = 1e-6 + 1e-9 * std::fabs(x[j]);
        if (!(x[j] >= m.vars[j].lb - tol && x[j] <= m.vars[j].ub + tol)) return false;
    }
    for (const constraint& c : m.cons) {
        double activity = 0, scale = 0;
        for (const term& t : c.terms) {
            activity += t.coef * x[t.var];
            scale += std::fabs(t.coef * x[t.var]);
        }
        for (const quad_term& q : c.quad) {
            activity += q.coef * x[q.i] * x[q.j];
            scale += std::fabs(q.coef * x[q.i] * x[q.j]);
        }
        const double tol = 1e-6 + 1e-9 * scale;
        if (c.sense != row_sense::ge && !(activity <= c.rhs + tol)) return false;
        if (c.sense != row_sense::le && !(activity >= c.rhs - tol)) return false;
    }
    return true;
}

namespace {

// Whether objective a is at least as good as b in m's sense (within 1e-9 relative).
bool no_worse(const model& m, double a, double b) {
    const double tol = 1e-9 * std::max(1.0, std::fabs(b));
    return m.sense == obj_sense::minimize ? a <= b + tol : a >= b - tol;
}

// After Cbc stopped at its share of the limit on a small MILP: GLPK for `seconds`, its result taken when it is an
// optimum that checks out and is no worse than Cbc's incumbent (NaN: none); otherwise Cbc's, saying what GLPK did.
solve_result retry_with_glpk(const model& m, solve_result cbc, double incumbent, double seconds) {
    solve_options go;
    go.time_limit_s = seconds;
    solve_result g = solve_glpk(m, go);
    std::string refused;
    if (g.status != solve_status::optimal)
        refused = fmt::format("GLPK retry ended '{}' after {:.2f} s", solve_status_name(g.status), g.seconds);
    else if (!solution_checks_out(m, g.x))
        refused = fmt::format("GLPK retry's optimum {} violates the model; not taken", g.objective);
    else if (!std::isnan(incumbent) && !no_worse(m, g.objective, incumbent))
        refused =
            fmt::format("GLPK retry's optimum {} is worse than Cbc's solution {}; not taken", g.objective, incumbent);
    if (refused.empty()) {
        g.fallback_from = "cbc";
        return g;
    }
    cbc.message = refused;
    return cbc;
}

}  // namespace

bool is_small_mip(const model& m) {
    int integers = 0;
    for (const variable& v : m.vars) integers += v.type != var_type::continuous;
    return integers > 0 && integers <= kSmallMipMaxIntegerVars && (int)m.cons.size() <= kSmallMipMaxRows;
}

const char* solve_status_name(solve_status s) {
    switch (s) {
        case solve_status::optimal:
            return "optimal";
        case solve_status::infeasible:
            return "infeasible";
        case solve_status::unbounded:
            return "unbounded";
        case solve_status::time_limit:
            return "time_limit";
        case solve_status::error:
            return "error";
    }
    return "?";
}

solve_result solve_coin(const model& m, const solve_options& opt) {
    if (m.is_quadratic()) return solve_qp(m, opt);
    const double t0 = now_seconds();
    solve_result r;
    r.solver = m.is_mip() ? "cbc" : "clp";
    const bool retry = opt.glpk_retry && is_small_mip(m);
    double incumbent = std::nan("");
    try {
        const solver_bounds b = solver_bounds_of(m);  // the one gate of every COIN solve (solve.hpp)
        const double cbc_seconds = retry ? kSmallMipCbcShare * opt.time_limit_s : opt.time_limit_s;
        r = m.is_mip() ? solve_cbc(m, b, cbc_seconds, &incumbent) : solve_clp(m, b, opt);
    } catch (const CoinError& e) {
        r.status = solve_status::error;
        r.message = e.message();
    } catch (const error& e) {
        r.status = solve_status::error;
        r.message = e.what();
    }
    if (retry && r.status == solve_status::time_limit) {
        const double left = opt.time_limit_s - (now_seconds() - t0);
        r = retry_with_glpk(m, r, incumbent, std::max(left, 0.1 * opt.time_limit_s));
    }
    r.seconds = now_seconds() - t0;
    return r;
}

}  // namespace trex::optmodel
