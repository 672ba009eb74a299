// GLPK on the IR: glp_simplex (LP) and glp_intopt (MILP), presolve on, time limit, output captured.
#include <cmath>

#include "trex/base/error.hpp"
#include "trex/base/timer.hpp"
#include "trex/optmodel/solvers/glpk_env.hpp"
#include "trex/optmodel/solvers/solve.hpp"

namespace trex::optmodel {

namespace {

// Classifies a problem whose presolved solve found no solution: simplex without presolve on the LP relaxation.
solve_status classify(glp_prob* p, int tm_lim) {
    glp_smcp sm;
    glp_init_smcp(&sm);
    sm.msg_lev = GLP_MSG_OFF;
    sm.presolve = GLP_OFF;
    sm.tm_lim = tm_lim;
    const int rc = glp_simplex(p, &sm);
    if (rc == GLP_ETMLIM) return solve_status::time_limit;
    if (rc != 0) return solve_status::error;
    switch (glp_get_status(p)) {
        case GLP_NOFEAS:
            return solve_status::infeasible;
        case GLP_UNBND:
            return solve_status::unbounded;
        case GLP_OPT:
            return solve_status::infeasible;  // relaxation fine: the integer problem is infeasible
        default:
            return solve_status::error;
    }
}

}  // namespace

solve_result solve_glpk(const model& m, const solve_options& opt) {
    const double t0 = now_seconds();
    solve_result r;
    const bool mip = m.is_mip();
    r.solver = mip ? "glpk-intopt" : "glpk-simplex";
    solver_bounds b;
    try {
        require_linear(m, "GLPK");
        b = solver_bounds_of(m);  // the same numbers COIN gets (solve.hpp)
    } catch (const error& e) {
        r.status = solve_status::error;
        r.message = e.what();
        r.seconds = now_seconds() - t0;
        return r;
    }
    detail::glpk_quiet q;
    const int tm_lim = (int)std::min(2e9, std::max(1.0, opt.time_limit_s * 1000.0));
    glp_prob* p = nullptr;
    bool fatal = false;
    solve_status st = solve_status::error;
    // GLPK's MIP presolver can stop on a fatal error in its own bound bookkeeping (api/prob1.c) on small, valid
    // models; the MIP is then solved again without it: the LP relaxation by the simplex method, then branch and cut.
    auto run = [&](bool presolve) {
        return detail::glpk_run([&] {
            p = glp_create_prob();
            detail::to_glp(m, b, p);
            if (!mip) {
                glp_smcp sm;
                glp_init_smcp(&sm);
                sm.msg_lev = GLP_MSG_OFF;
                sm.presolve = GLP_ON;
                sm.tm_lim = tm_lim;
                const int rc = glp_simplex(p, &sm);
                if (rc == 0 && glp_get_status(p) == GLP_OPT)
                    st = solve_status::optimal;
                else if (rc == GLP_ETMLIM)
                    st = solve_status::time_limit;
                else if (rc == 0 && glp_get_status(p) == GLP_NOFEAS)
                    st = solve_status::infeasible;
                else if (rc == 0 && glp_get_status(p) == GLP_UNBND)
                    st = solve_status::unbounded;
                else if (rc == GLP_ENOPFS || rc == GLP_ENODFS || rc == 0)
                    st = classify(p, tm_lim);
                else
                    st = solve_status::error;
            } else {
                glp_iocp io;
                glp_init_iocp(&io);
                io.msg_lev = GLP_MSG_OFF;
                io.presolve = presolve ? GLP_ON : GLP_OFF;
                if (!presolve) {
                    glp_smcp sm;
                    glp_init_smcp(&sm);
                    sm.msg_lev = GLP_MSG_OFF;
                    sm.tm_lim = tm_lim;
                    glp_simplex(p, &sm);
                }
                io.tm_lim = tm_lim;
                io.mir_cuts = GLP_ON;
                io.cov_cuts = GLP_ON;
                io.clq_cuts = GLP_ON;
                const int rc = glp_intopt(p, &io);
                const int ms = glp_mip_status(p);
                if (rc == 0 && ms == GLP_OPT)
                    st = solve_status::optimal;
                else if (rc == GLP_ETMLIM)
                    st = solve_status::time_limit;
                else if (rc == GLP_ENOPFS || (rc == 0 && ms == GLP_NOFEAS))
                    st = solve_status::infeasible;
                else if (rc == GLP_ENODFS)
                    st = classify(p, tm_lim);
                else
                    st = solve_status::error;
            }
            if (st == solve_status::optimal) {
                const int n = (int)m.vars.size(), k = (int)m.cons.size();
                r.x.resize(n);
                for (int j = 0; j < n; j++) r.x[j] = mip ? glp_mip_col_val(p, j + 1) : glp_get_col_prim(p, j + 1);
                if (!mip) {
                    r.dual.resize(k);
                    r.reduced_cost.resize(n);
                    for (int i = 0; i < k; i++) r.dual[i] = glp_get_row_dual(p, i + 1);
                    for (int j = 0; j < n; j++) r.reduced_cost[j] = glp_get_col_dual(p, j + 1);
                }
            }
            glp_delete_prob(p);
        });
    };
    fatal = !run(true);
    if (fatal && mip) {
        st = solve_status::error;
        r.x.clear();
        fatal = !run(false);
    }
    r.status = fatal ? solve_status::error : st;
    if (fatal) r.message = "GLPK fatal error: " + q.last_message();
    if (r.status == solve_status::optimal) {
        for (size_t j = 0; j < m.vars.size(); j++)
            if (m.vars[j].type != var_type::continuous) r.x[j] = std::round(r.x[j]);
        r.objective = m.objective_at(r.x);
        r.activity.resize(m.cons.size());
        for (size_t i = 0; i < m.cons.size(); i++) r.activity[i] = m.activity((int)i, r.x);
    } else {
        r.x.clear();
        r.dual.clear();
        r.reduced_cost.clear();
    }
    r.seconds = now_seconds() - t0;
    return r;
}

}  // namespace trex::optmodel
