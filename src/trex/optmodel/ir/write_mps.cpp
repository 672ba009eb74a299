#include <fmt/format.h>

#include "trex/optmodel/ir/format.hpp"
#include "trex/optmodel/ir/writers.hpp"

namespace trex::optmodel {

// Free MPS. Conventions (CPLEX, Gurobi, COIN): the objective constant is minus the RHS of the objective row (GLPK
// reads the opposite sign; read_mps_file corrects it); OBJSENSE MAX for maximisation (read_mps_file handles it, GLPK
// does not);
// integer columns sit between INTORG/INTEND markers and always get explicit bounds (some readers default an
// unbounded integer column to [0, 1]); quadratic parts in QUADOBJ and QCMATRIX sections.
namespace {

// The quadratic parts (mps_quadratic.hpp): the objective's as QUADOBJ (one triangle of Q, ½·xᵀQx: a square's value
// doubled), each row's as QCMATRIX (all of Q, xᵀQx: a product's value halved on each side), as Gurobi and CPLEX read
// them.
std::string quadratic_sections(const model& m, const safe_names& names) {
    std::string out;
    if (!m.obj_quad.empty()) out += "QUADOBJ\n";
    for (const quad_term& t : merged_quad(m.obj_quad))
        out += fmt::format(" {} {} {}\n", names.vars[t.i], names.vars[t.j],
                           format_number(t.i == t.j ? 2.0 * t.coef : t.coef));
    for (size_t i = 0; i < m.cons.size(); i++) {
        if (m.cons[i].quad.empty()) continue;
        out += fmt::format("QCMATRIX {}\n", names.cons[i]);
        for (const quad_term& t : merged_quad(m.cons[i].quad)) {
            const std::string& a = names.vars[t.i];
            const std::string& b = names.vars[t.j];
            if (t.i == t.j) {
                out += fmt::format(" {} {} {}\n", a, a, format_number(t.coef));
                continue;
            }
            out += fmt::format(" {} {} {}\n {} {} {}\n", a, b, format_number(0.5 * t.coef), b, a,
                               format_number(0.5 * t.coef));
        }
    }
    return out;
}

}  // namespace

std::string write_mps(const model& m) {
    const safe_names names = make_safe_names(m);
    std::string out = fmt::format("* Problem: {}\nNAME model\n", m.name);
    if (m.sense == obj_sense::maximize) out += "OBJSENSE\n    MAX\n";
    out += "ROWS\n N obj\n";
    for (size_t i = 0; i < m.cons.size(); i++) {
        const char* t = m.cons[i].sense == row_sense::le ? "L" : m.cons[i].sense == row_sense::ge ? "G" : "E";
        out += fmt::format(" {} {}\n", t, names.cons[i]);
    }
    // column-wise coefficients
    std::vector<std::vector<std::pair<int, double>>> cols(m.vars.size());
    for (size_t i = 0; i < m.cons.size(); i++)
        for (const term& t : m.cons[i].terms) cols[t.var].push_back({(int)i, t.coef});
    out += "COLUMNS\n";
    bool in_int = false;
    int marker = 0;
    for (size_t j = 0; j < m.vars.size(); j++) {
        const bool is_int = m.vars[j].type != var_type::continuous;
        if (is_int != in_int) {
            out += fmt::format(" M{} 'MARKER' '{}'\n", marker++, is_int ? "INTORG" : "INTEND");
            in_int = is_int;
        }
        const std::string& n = names.vars[j];
        bool any = false;
        if (m.vars[j].obj != 0.0) {
            out += fmt::format(" {} obj {}\n", n, format_number(m.vars[j].obj));
            any = true;
        }
        for (auto [i, a] : cols[j]) {
            out += fmt::format(" {} {} {}\n", n, names.cons[i], format_number(a));
            any = true;
        }
        if (!any) out += fmt::format(" {} obj 0\n", n);  // a column must appear to exist
    }
    if (in_int) out += fmt::format(" M{} 'MARKER' 'INTEND'\n", marker++);
    out += "RHS\n";
    if (m.obj_constant != 0.0) out += fmt::format(" RHS obj {}\n", format_number(-m.obj_constant));
    for (size_t i = 0; i < m.cons.size(); i++)
        if (m.cons[i].rhs != 0.0) out += fmt::format(" RHS {} {}\n", names.cons[i], format_number(m.cons[i].rhs));
    out += "BOUNDS\n";
    for (size_t j = 0; j < m.vars.size(); j++) {
        const variable& v = m.vars[j];
        const std::string& n = names.vars[j];
        const bool is_int = v.type != var_type::continuous;
        if (v.type == var_type::binary && v.lb == 0.0 && v.ub == 1.0) {
            out += fmt::format(" BV BND {}\n", n);
            continue;
        }
        if (v.lb == v.ub) {
            out += fmt::format(" FX BND {} {}\n", n, format_number(v.lb));
            continue;
        }
        if (v.lb == -inf && v.ub == inf) {
            out += fmt::format(" FR BND {}\n", n);
            continue;
        }
        if (v.lb == -inf)
            out += fmt::format(" MI BND {}\n", n);
        else if (v.lb != 0.0 || is_int)
            out += fmt::format(" LO BND {} {}\n", n, format_number(v.lb));
        if (v.ub != inf)
            out += fmt::format(" UP BND {} {}\n", n, format_number(v.ub));
        else if (is_int)
            out += fmt::format(" PL BND {}\n", n);
    }
    out += quadratic_sections(m, names);
    out += "ENDATA\n";
    return out;
}

}  // namespace trex::optmodel
