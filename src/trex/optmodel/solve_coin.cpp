// Clp (LP) and Cbc (MILP) on the IR. Cbc runs through CbcMain0/CbcMain1 so its default cuts and heuristics are on
// (a bare branchAndBound() was 60x slower on p0548). CbcMain keeps static state: call it from one thread per
// process (trex data parallelises over processes).
#include <coin/CbcModel.hpp>
#include <coin/CbcSolver.hpp>
#include <coin/ClpSimplex.hpp>
#include <coin/CoinError.hpp>
#include <coin/CoinPackedMatrix.hpp>
#include <coin/OsiClpSolverInterface.hpp>

#include <cmath>
#include <string>

#include "trex/base/error.hpp"
#include "trex/base/timer.hpp"
#include "trex/optmodel/solve.hpp"

namespace trex::optmodel {

namespace {

// Column-major arrays of the model, objective turned into a minimisation (c or -c).
struct coin_arrays {
    std::vector<CoinBigIndex> start;
    std::vector<int> index;
    std::vector<double> value, collb, colub, obj, rowlb, rowub;
};

double coin_number(double v) { return v == inf ? COIN_DBL_MAX : v == -inf ? -COIN_DBL_MAX : v; }

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

solve_result solve_cbc(const model& m, const solver_bounds& b, const solve_options& opt) {
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
    const std::string sec = std::to_string(std::max(0.01, opt.time_limit_s));
    const char* argv[] = {"trex", "-log", "0", "-sec", sec.c_str(), "-solve", "-quit"};
    CbcMain1(7, argv, cbc, [](CbcModel*, int) { return 0; }, data);
    const double* best = cbc.bestSolution();
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
    } else {
        r.status = solve_status::error;
        r.message = "cbc status " + std::to_string(cbc.status()) + "/" + std::to_string(cbc.secondaryStatus());
    }
    return r;
}

}  // namespace

const char* solve_status_name(solve_status s) {
    switch (s) {
        case solve_status::optimal: return "optimal";
        case solve_status::infeasible: return "infeasible";
        case solve_status::unbounded: return "unbounded";
        case solve_status::time_limit: return "time_limit";
        case solve_status::error: return "error";
    }
    return "?";
}

solve_result solve_coin(const model& m, const solve_options& opt) {
    const double t0 = now_seconds();
    solve_result r;
    r.solver = m.is_mip() ? "cbc" : "clp";
    try {
        const solver_bounds b = solver_bounds_of(m);  // the one gate of every COIN solve (solve.hpp)
        r = m.is_mip() ? solve_cbc(m, b, opt) : solve_clp(m, b, opt);
    } catch (const CoinError& e) {
        r.status = solve_status::error;
        r.message = e.message();
    } catch (const error& e) {
        r.status = solve_status::error;
        r.message = e.what();
    }
    r.seconds = now_seconds() - t0;
    return r;
}

}  // namespace trex::optmodel
