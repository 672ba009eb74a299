#include <fmt/format.h>

#include <cmath>

#include "trex/optmodel/ir/format.hpp"
#include "trex/optmodel/ir/writers.hpp"

namespace trex::optmodel {

namespace {

// Appends " + 3 x" / " - x" (or "3 x" first); wraps long rows (LP readers cap line length).
void append_term(std::string& out, size_t& line_start, double coef, const std::string& name, bool first) {
    if (out.size() - line_start > 200) {
        out += "\n   ";
        line_start = out.size() - 3;
    }
    const double a = std::fabs(coef);
    if (first) {
        if (coef < 0) out += "- ";
    } else {
        out += coef < 0 ? " - " : " + ";
    }
    if (a != 1.0) out += format_number(a) + " ";
    out += name;
}

// Appends " + [ 4 x ^ 2 - 2 x * y ]" (times `scale`: 2 in the objective, whose bracket is halved by "/ 2").
void append_quad(std::string& out, size_t& line_start, const std::vector<quad_term>& q, double scale,
                 const safe_names& names, bool first) {
    if (q.empty()) return;
    out += first ? "[ " : " + [ ";
    for (size_t k = 0; k < q.size(); k++) {
        const std::string& a = names.vars[q[k].i];
        const std::string factor = q[k].i == q[k].j ? a + " ^ 2" : a + " * " + names.vars[q[k].j];
        if (out.size() - line_start > 200) {
            out += "\n   ";
            line_start = out.size() - 3;
        }
        const double c = scale * q[k].coef;
        out += k == 0 ? (c < 0 ? "- " : "") : (c < 0 ? " - " : " + ");
        out += format_number(std::fabs(c)) + " " + factor;
    }
    out += " ]";
}

}  // namespace

std::string write_lp(const model& m) {
    const safe_names names = make_safe_names(m);
    std::string out = fmt::format("\\ Problem: {}\n", m.name);
    out += m.sense == obj_sense::minimize ? "Minimize\n" : "Maximize\n";
    size_t line_start = out.size();
    out += " obj: ";
    bool first = true;
    for (size_t j = 0; j < m.vars.size(); j++) {
        if (m.vars[j].obj == 0.0) continue;
        append_term(out, line_start, m.vars[j].obj, names.vars[j], first);
        first = false;
    }
    // GLPK's LP reader takes no constant in the objective: it becomes a column fixed at 1 (folded back by readers)
    const std::string const_name = "obj_constant";
    if (m.obj_constant != 0.0) {
        append_term(out, line_start, m.obj_constant, const_name, first);
        first = false;
    }
    append_quad(out, line_start, m.obj_quad, 2.0, names, first);
    if (!m.obj_quad.empty()) out += " / 2";
    first = first && m.obj_quad.empty();
    if (first) out += m.vars.empty() ? "0" : "0 " + names.vars[0];
    out += "\nSubject To\n";
    for (size_t i = 0; i < m.cons.size(); i++) {
        const constraint& c = m.cons[i];
        line_start = out.size();
        out += " " + names.cons[i] + ": ";
        if (c.terms.empty() && c.quad.empty()) {
            out += "0 " + names.vars[0];
        } else {
            for (size_t k = 0; k < c.terms.size(); k++)
                append_term(out, line_start, c.terms[k].coef, names.vars[c.terms[k].var], k == 0);
            append_quad(out, line_start, c.quad, 1.0, names, c.terms.empty());
        }
        out += fmt::format(" {} {}\n", row_sense_name(c.sense), format_number(c.rhs));
    }
    out += "Bounds\n";
    for (size_t j = 0; j < m.vars.size(); j++) {
        const variable& v = m.vars[j];
        const std::string& n = names.vars[j];
        if (v.type == var_type::binary && v.lb == 0.0 && v.ub == 1.0) continue;
        if (v.lb == -inf && v.ub == inf) {
            out += " " + n + " free\n";
        } else if (v.lb == v.ub) {
            out += fmt::format(" {} = {}\n", n, format_number(v.lb));
        } else if (v.lb == -inf) {
            out += fmt::format(" -inf <= {} <= {}\n", n, format_number(v.ub));
        } else if (v.ub == inf) {
            if (v.lb != 0.0) out += fmt::format(" {} >= {}\n", n, format_number(v.lb));
        } else {
            out += fmt::format(" {} <= {} <= {}\n", format_number(v.lb), n, format_number(v.ub));
        }
    }
    if (m.obj_constant != 0.0) out += " " + const_name + " = 1\n";
    std::string gen, bin;
    for (size_t j = 0; j < m.vars.size(); j++) {
        if (m.vars[j].type == var_type::integer) gen += " " + names.vars[j] + "\n";
        if (m.vars[j].type == var_type::binary) bin += " " + names.vars[j] + "\n";
    }
    if (!gen.empty()) out += "General\n" + gen;
    if (!bin.empty()) out += "Binary\n" + bin;
    out += "End\n";
    return out;
}

}  // namespace trex::optmodel
