// Convex quadratic models: the convexity check, HiGHS through the Python helper, and the optimality gap that
// certifies HiGHS's point with Clp (contracts in solve.hpp).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "trex/base/error.hpp"
#include "trex/base/process.hpp"
#include "trex/base/timer.hpp"
#include "trex/optmodel/solvers/python_runner.hpp"
#include "trex/optmodel/solvers/solve.hpp"

namespace trex::optmodel {

namespace {

using json = nlohmann::json;

constexpr double kPsdTolerance = 1e-9;  // of the largest |entry|
constexpr double kFeasibilityTolerance = 1e-9;

// The Hessian of sum coef x_i x_j (times `sign`) on the variables the terms touch: [k, k] row-major.
std::vector<double> dense_hessian(const std::vector<quad_term>& q, double sign, int* k) {
    std::map<int, int> local;
    for (const quad_term& t : q) {
        local.emplace(t.i, 0);
        local.emplace(t.j, 0);
    }
    int n = 0;
    for (auto& [var, at] : local) at = n++;
    std::vector<double> h((size_t)n * n, 0.0);
    for (const quad_term& t : q) {
        const int a = local[t.i], b = local[t.j];
        if (a == b) {
            h[(size_t)a * n + a] += 2 * sign * t.coef;
        } else {
            h[(size_t)a * n + b] += sign * t.coef;
            h[(size_t)b * n + a] += sign * t.coef;
        }
    }
    *k = n;
    return h;
}

// Whether the symmetric [n, n] matrix h is positive semidefinite: LDL' with the largest remaining diagonal as pivot;
// a pivot below -tol fails, and once every remaining diagonal is within tol, so must every remaining entry be.
bool positive_semidefinite(std::vector<double> h, int n) {
    double scale = 0;
    for (double v : h) scale = std::max(scale, std::fabs(v));
    const double tol = kPsdTolerance * std::max(scale, 1e-300);
    std::vector<bool> done((size_t)n, false);
    for (int step = 0; step < n; step++) {
        int p = -1;
        for (int i = 0; i < n; i++)
            if (!done[i] && (p < 0 || h[(size_t)i * n + i] > h[(size_t)p * n + p])) p = i;
        const double d = h[(size_t)p * n + p];
        if (d < -tol) return false;
        if (d <= tol) {
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++)
                    if (!done[i] && !done[j] && std::fabs(h[(size_t)i * n + j]) > tol) return false;
            return true;
        }
        done[p] = true;
        for (int i = 0; i < n; i++) {
            if (done[i]) continue;
            const double f = h[(size_t)i * n + p] / d;
            for (int j = 0; j < n; j++)
                if (!done[j]) h[(size_t)i * n + j] -= f * h[(size_t)p * n + j];
        }
    }
    return true;
}

// The variables a set of quadratic terms touches.
int quadratic_vars(const std::vector<quad_term>& q) {
    std::vector<int> v;
    for (const quad_term& t : q) v.push_back(t.i), v.push_back(t.j);
    std::sort(v.begin(), v.end());
    return (int)(std::unique(v.begin(), v.end()) - v.begin());
}

// Whether sum coef x_i x_j times sign is a convex function.
bool convex(const std::vector<quad_term>& q, double sign) {
    int n = 0;
    const std::vector<double> h = dense_hessian(q, sign, &n);
    return positive_semidefinite(h, n);
}

double flip_of(const model& m) {
    return m.sense == obj_sense::maximize ? -1.0 : 1.0;
}

// A quadratic row as a convex `<=` row: the sign that turns it so (1 for <=, -1 for >=).
double row_sign(const constraint& c) {
    return c.sense == row_sense::ge ? -1.0 : 1.0;
}

// The gradient of sum coef x_i x_j at x, added to g times `scale`.
void add_quad_gradient(const std::vector<quad_term>& q, const std::vector<double>& x, double scale,
                       std::vector<double>* g) {
    for (const quad_term& t : q) {
        (*g)[t.i] += scale * t.coef * x[t.j];
        (*g)[t.j] += scale * t.coef * x[t.i];
    }
}

json bound(double v) {
    return std::isinf(v) ? json(nullptr) : json(v);
}

json linear_terms(const std::vector<term>& terms) {
    json a = json::array();
    for (const term& t : terms) a.push_back({t.var, t.coef});
    return a;
}

json quad_terms(const std::vector<quad_term>& q, double sign) {
    json a = json::array();
    for (const quad_term& t : q) a.push_back({t.i, t.j, sign * t.coef});
    return a;
}

// The helper's problem: m in minimisation form, quadratic rows turned into convex `<=` rows.
json helper_problem(const model& m, const solver_bounds& b, double time_limit) {
    const double flip = flip_of(m);
    json p;
    p["n"] = m.vars.size();
    json lo = json::array(), up = json::array(), c = json::array();
    for (size_t j = 0; j < m.vars.size(); j++) {
        lo.push_back(bound(b.col_lo[j]));
        up.push_back(bound(b.col_up[j]));
        c.push_back(flip * m.vars[j].obj);
    }
    p["col_lo"] = lo;
    p["col_up"] = up;
    p["c"] = c;
    p["obj_quad"] = quad_terms(m.obj_quad, flip);
    json rows = json::array(), qrows = json::array();
    for (size_t i = 0; i < m.cons.size(); i++) {
        const constraint& con = m.cons[i];
        if (con.quad.empty()) {
            rows.push_back({{"lo", bound(b.row_lo[i])}, {"up", bound(b.row_up[i])}, {"a", linear_terms(con.terms)}});
            continue;
        }
        const double s = row_sign(con);
        json a = json::array();
        for (const term& t : con.terms) a.push_back({t.var, s * t.coef});
        qrows.push_back({{"up", s * con.rhs}, {"a", a}, {"q", quad_terms(con.quad, s)}});
    }
    p["rows"] = rows;
    p["qrows"] = qrows;
    p["time_limit"] = time_limit;
    p["feasibility_tol"] = kFeasibilityTolerance;
    return p;
}

std::string env_or(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
}

solve_status status_named(const std::string& s) {
    if (s == "optimal") return solve_status::optimal;
    if (s == "infeasible") return solve_status::infeasible;
    if (s == "unbounded") return solve_status::unbounded;
    if (s == "time_limit") return solve_status::time_limit;
    return solve_status::error;
}

// Runs the helper on p; the reply, or an error reply saying why there is none.
json run_helper(const json& p, double time_limit) {
    const std::string python = env_or("TREX_QP_PYTHON", find_python_with_pulp());
    const std::string helper = env_or("TREX_QP_HELPER", std::string(TREX_SOURCE_DIR) + "/python/trex_eval/trex_qp.py");
    if (python.empty())
        return {{"status", "error"}, {"message", "no Python with highspy for quadratic models (scripts/setup.sh)"}};
    const process_output o = run_process({python, "-B", helper}, time_limit + 10, p.dump() + "\n");
    if (!o.error.empty()) return {{"status", "error"}, {"message", "cannot run the QP helper: " + o.error}};
    if (o.timed_out) return {{"status", "time_limit"}, {"message", "the QP helper ran past its limit"}};
    const size_t nl = o.out.find('\n');
    try {
        return json::parse(o.out.substr(0, nl));
    } catch (const std::exception&) {
        std::string err = o.err.substr(o.err.size() > 300 ? o.err.size() - 300 : 0);
        return {{"status", "error"},
                {"message", fmt::format("the QP helper gave no result (exit {}): {}", o.exit_code, err)}};
    }
}

// HiGHS's optimal point: x, objective, duals in the model's sense; then the checks of solve.hpp.
void take_optimum(const model& m, const json& rep, solve_result* r) {
    const double flip = flip_of(m);
    r->x = rep.at("x").get<std::vector<double>>();
    TREX_CHECK(r->x.size() == m.vars.size(), "the QP helper returned {} values for {} variables", r->x.size(),
               m.vars.size());
    r->objective = m.objective_at(r->x);
    r->activity.resize(m.cons.size());
    for (size_t i = 0; i < m.cons.size(); i++) r->activity[i] = m.activity((int)i, r->x);
    const auto row_dual = rep.value("row_dual", std::vector<double>{});
    const auto qrow_dual = rep.value("qrow_dual", std::vector<double>{});
    r->dual.assign(m.cons.size(), 0.0);
    size_t li = 0, qi = 0;
    for (size_t i = 0; i < m.cons.size(); i++) {
        if (m.cons[i].quad.empty())
            r->dual[i] = li < row_dual.size() ? flip * row_dual[li++] : 0.0;
        else
            r->dual[i] = qi < qrow_dual.size() ? flip * row_sign(m.cons[i]) * qrow_dual[qi++] : 0.0;
    }
    if (!solution_checks_out(m, r->x)) {
        r->status = solve_status::error;
        r->message = "HiGHS's point violates the model (quadratic rows included)";
        return;
    }
    const double gap = qp_optimality_gap(m, r->x, r->dual);
    const double allowed = kQpGapTolerance * std::max(1.0, std::fabs(r->objective));
    if (!(gap <= allowed)) {
        r->status = solve_status::error;
        r->message = fmt::format("HiGHS's point fails the optimality check: gap {:.3g} > {:.3g}", gap, allowed);
        return;
    }
    r->status = solve_status::optimal;
    r->message = fmt::format("optimality gap {:.2g} (Clp)", std::max(gap, 0.0));
}

}  // namespace

std::string quadratic_refusal(const model& m) {
    if (!m.is_quadratic()) return "";
    if (m.is_mip()) return "quadratic terms with integer or binary variables (MIQP) are not supported";
    // the convexity check factorises a dense Hessian: its time grows with the cube of the variables it touches
    int widest = quadratic_vars(m.obj_quad);
    for (const constraint& c : m.cons) widest = std::max(widest, quadratic_vars(c.quad));
    if (widest > kQpMaxHessianVars)
        return fmt::format(
            "quadratic terms over more than {} variables in one objective or row ({}) are not "
            "supported",
            kQpMaxHessianVars, widest);
    if (!m.obj_quad.empty() && !convex(m.obj_quad, flip_of(m)))
        return m.sense == obj_sense::maximize ? "nonconvex quadratic objectives (maximised, its Hessian not negative "
                                                "semidefinite) are not supported"
                                              : "nonconvex quadratic objectives (minimised, its Hessian not positive "
                                                "semidefinite) are not supported";
    for (const constraint& c : m.cons) {
        if (c.quad.empty()) continue;
        if (c.sense == row_sense::eq)
            return fmt::format("quadratic equality constraints (nonconvex: '{}') are not supported", c.name);
        if (!convex(c.quad, row_sign(c)))
            return fmt::format(
                "nonconvex quadratic constraints ('{}' is {} with a Hessian not {} semidefinite) are not "
                "supported",
                c.name, row_sense_name(c.sense), c.sense == row_sense::le ? "positive" : "negative");
    }
    return "";
}

double qp_optimality_gap(const model& m, const std::vector<double>& x, const std::vector<double>& dual) {
    const double flip = flip_of(m);
    const size_t n = m.vars.size();
    if (x.size() != n) return inf;
    // gradient of the Lagrangian L = f + sum lambda_k (s_k g_k - s_k rhs_k) at x, and L(x) - f(x)
    std::vector<double> g(n);
    for (size_t j = 0; j < n; j++) g[j] = flip * m.vars[j].obj;
    add_quad_gradient(m.obj_quad, x, flip, &g);
    double dualised = 0.0;
    model lp;
    lp.name = m.name + " (optimality check)";
    for (size_t i = 0; i < m.cons.size(); i++) {
        const constraint& c = m.cons[i];
        if (c.quad.empty()) {
            lp.cons.push_back({c.name, c.terms, c.sense, c.rhs, {}});
            continue;
        }
        // the convex row s*(a'x + x'Qx) <= s*rhs: its multiplier, then its tangent at x as a cut
        const double s = row_sign(c);
        const double lambda = i < dual.size() ? std::max(0.0, -flip * s * dual[i]) : 0.0;
        std::vector<double> grad(n, 0.0);
        for (const term& t : c.terms) grad[t.var] += s * t.coef;
        add_quad_gradient(c.quad, x, s, &grad);
        const double at_x = s * m.activity((int)i, x);
        double grad_x = 0.0;
        std::vector<term> cut;
        for (size_t j = 0; j < n; j++) {
            grad_x += grad[j] * x[j];
            g[j] += lambda * grad[j];
            if (grad[j] != 0.0) cut.push_back({(int)j, grad[j]});
        }
        dualised += lambda * (at_x - s * c.rhs);
        lp.cons.push_back({c.name, std::move(cut), row_sense::le, s * c.rhs - at_x + grad_x, {}});
    }
    for (size_t j = 0; j < n; j++)
        lp.vars.push_back({m.vars[j].name, var_type::continuous, m.vars[j].lb, m.vars[j].ub, g[j]});
    solve_options so;
    so.time_limit_s = 30;
    const solve_result r = solve_coin(lp, so);
    if (r.status != solve_status::optimal) return inf;
    double gx = 0.0;
    for (size_t j = 0; j < n; j++) gx += g[j] * x[j];
    // f* >= min L >= L(x) + LP - g'x = f(x) + dualised + LP - g'x
    return gx - r.objective - dualised;
}

solve_result solve_qp(const model& m, const solve_options& opt) {
    const double t0 = now_seconds();
    solve_result r;
    r.solver = "highs-qp";
    try {
        const std::string refusal = quadratic_refusal(m);
        if (!refusal.empty()) {
            r.message = refusal;
        } else {
            const solver_bounds b = solver_bounds_of(m);
            const json rep = run_helper(helper_problem(m, b, opt.time_limit_s), opt.time_limit_s);
            r.status = status_named(rep.value("status", "error"));
            if (r.status == solve_status::optimal) take_optimum(m, rep, &r);
            if (r.status == solve_status::error && r.message.empty())
                r.message = rep.value("message", std::string("the QP helper failed"));
        }
    } catch (const std::exception& e) {
        r.status = solve_status::error;
        r.message = e.what();
    }
    r.seconds = now_seconds() - t0;
    return r;
}

}  // namespace trex::optmodel
