#include "trex/optmodel/solvers/glpk_env.hpp"

#include <fmt/format.h>

#include <cmath>

namespace trex::optmodel::detail {

namespace {

thread_local std::string t_log;
thread_local std::jmp_buf t_jump;
thread_local bool t_armed = false;

int term_hook(void*, const char* s) {
    if (t_log.size() < (1u << 20)) t_log += s;
    return 1;  // non-zero: GLPK does not print it
}

void error_hook(void*) {
    if (t_armed) {
        t_armed = false;
        glp_free_env();  // GLPK's documented recovery: the environment is unusable after a fatal error
        std::longjmp(t_jump, 1);
    }
    // not under a guard: GLPK will abort(); nothing sensible is left to do
}

// The hooks live in GLPK's environment, which error_hook frees: installed again before every guarded run, so a second
// run under the same glpk_quiet (read_mps_file's fixed-format attempt after a fatal free-format one) is still quiet
// and still guarded.
void install_hooks() {
    glp_term_hook(term_hook, nullptr);
    glp_error_hook(error_hook, nullptr);
}

}  // namespace

glpk_quiet::glpk_quiet() {
    t_log.clear();
    install_hooks();
}

glpk_quiet::~glpk_quiet() {
    glp_term_hook(nullptr, nullptr);
    glp_error_hook(nullptr, nullptr);
}

const std::string& glpk_quiet::log() const { return t_log; }

std::string glpk_quiet::last_message() const {
    size_t end = t_log.size();
    while (end > 0) {
        while (end > 0 && (t_log[end - 1] == '\n' || t_log[end - 1] == ' ')) end--;
        size_t b = t_log.rfind('\n', end == 0 ? 0 : end - 1);
        b = b == std::string::npos ? 0 : b + 1;
        std::string line = t_log.substr(b, end - b);
        if (!line.empty()) return line;
        end = b;
    }
    return "";
}

bool glpk_guarded(void (*fn)(void*), void* ctx) {
    install_hooks();
    if (setjmp(t_jump) != 0) {
        t_armed = false;
        return false;
    }
    t_armed = true;
    fn(ctx);
    t_armed = false;
    return true;
}

model from_glp(glp_prob* p, const std::string& name) {
    model m;
    m.name = name;
    m.sense = glp_get_obj_dir(p) == GLP_MAX ? obj_sense::maximize : obj_sense::minimize;
    m.obj_constant = glp_get_obj_coef(p, 0);
    const int n = glp_get_num_cols(p), k = glp_get_num_rows(p);
    for (int j = 1; j <= n; j++) {
        const char* cn = glp_get_col_name(p, j);
        var_type t = var_type::continuous;
        if (glp_get_col_kind(p, j) == GLP_IV) t = var_type::integer;
        if (glp_get_col_kind(p, j) == GLP_BV) t = var_type::binary;
        double lb = -inf, ub = inf;
        switch (glp_get_col_type(p, j)) {
            case GLP_FR: break;
            case GLP_LO: lb = glp_get_col_lb(p, j); break;
            case GLP_UP: ub = glp_get_col_ub(p, j); break;
            case GLP_DB:
            case GLP_FX:
                lb = glp_get_col_lb(p, j);
                ub = glp_get_col_ub(p, j);
                break;
        }
        if (t == var_type::integer && lb == 0.0 && ub == 1.0) t = var_type::binary;
        m.vars.push_back({cn ? cn : fmt::format("c{}", j), t, lb, ub, glp_get_obj_coef(p, j)});
    }
    std::vector<int> ind(n + 1);
    std::vector<double> val(n + 1);
    for (int i = 1; i <= k; i++) {
        const char* rn = glp_get_row_name(p, i);
        const std::string rname = rn ? rn : fmt::format("r{}", i);
        const int len = glp_get_mat_row(p, i, ind.data(), val.data());
        std::vector<term> terms;
        for (int q = 1; q <= len; q++) terms.push_back({ind[q] - 1, val[q]});
        const double lb = glp_get_row_lb(p, i), ub = glp_get_row_ub(p, i);
        switch (glp_get_row_type(p, i)) {
            case GLP_FR: break;  // free rows carry no constraint (e.g. extra objectives in MPS): dropped
            case GLP_LO: m.add_con(rname, terms, row_sense::ge, lb); break;
            case GLP_UP: m.add_con(rname, terms, row_sense::le, ub); break;
            case GLP_FX: m.add_con(rname, terms, row_sense::eq, lb); break;
            case GLP_DB:  // ranged row: two IR rows
                m.add_con(rname + "_lo", terms, row_sense::ge, lb);
                m.add_con(rname + "_up", terms, row_sense::le, ub);
                break;
        }
    }
    fold_constant_column(m);
    return m;
}

namespace {

// GLPK's bound type of [lo, up] (±inf where unbounded).
int glp_bound_type(double lo, double up) {
    if (lo == -inf && up == inf) return GLP_FR;
    if (up == inf) return GLP_LO;
    if (lo == -inf) return GLP_UP;
    if (lo == up) return GLP_FX;
    return GLP_DB;
}

double finite_or_zero(double v) { return std::isfinite(v) ? v : 0.0; }

}  // namespace

void to_glp(const model& m, const solver_bounds& b, glp_prob* p) {
    glp_set_obj_dir(p, m.sense == obj_sense::maximize ? GLP_MAX : GLP_MIN);
    glp_set_obj_coef(p, 0, m.obj_constant);
    const int n = (int)m.vars.size(), k = (int)m.cons.size();
    if (n > 0) glp_add_cols(p, n);
    if (k > 0) glp_add_rows(p, k);
    for (int j = 0; j < n; j++) {
        const variable& v = m.vars[j];
        glp_set_col_bnds(p, j + 1, glp_bound_type(b.col_lo[j], b.col_up[j]), finite_or_zero(b.col_lo[j]),
                         finite_or_zero(b.col_up[j]));
        glp_set_obj_coef(p, j + 1, v.obj);
        if (v.type != var_type::continuous) glp_set_col_kind(p, j + 1, GLP_IV);
    }
    std::vector<int> ind;
    std::vector<double> val;
    for (int i = 0; i < k; i++) {
        const constraint& c = m.cons[i];
        glp_set_row_bnds(p, i + 1, glp_bound_type(b.row_lo[i], b.row_up[i]), finite_or_zero(b.row_lo[i]),
                         finite_or_zero(b.row_up[i]));
        ind.assign(1, 0);
        val.assign(1, 0.0);
        for (const term& t : c.terms) {
            ind.push_back(t.var + 1);
            val.push_back(t.coef);
        }
        glp_set_mat_row(p, i + 1, (int)c.terms.size(), ind.data(), val.data());
    }
}

}  // namespace trex::optmodel::detail
