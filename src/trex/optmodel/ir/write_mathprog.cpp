#include <fmt/format.h>

#include <cmath>

#include "trex/optmodel/ir/format.hpp"
#include "trex/optmodel/ir/writers.hpp"

namespace trex::optmodel {

namespace {

std::string linear(const std::vector<std::pair<double, std::string>>& terms) {
    std::string out;
    size_t line = 0;
    for (size_t k = 0; k < terms.size(); k++) {
        auto [a, n] = terms[k];
        if (out.size() - line > 200) {
            out += "\n    ";
            line = out.size();
        }
        if (k == 0) {
            if (a < 0) out += "-";
        } else {
            out += a < 0 ? " - " : " + ";
        }
        if (std::fabs(a) != 1.0) out += format_number(std::fabs(a)) + " * ";
        out += n;
    }
    return out.empty() ? "0" : out;
}

}  // namespace

std::string write_mathprog(const model& m) {
    require_linear(m, "the MathProg writer");
    const safe_names names = make_safe_names(m);
    std::string out = fmt::format("/* Problem: {} */\n\n", m.name);
    for (size_t j = 0; j < m.vars.size(); j++) {
        const variable& v = m.vars[j];
        out += "var " + names.vars[j];
        if (v.type == var_type::binary && v.lb == 0.0 && v.ub == 1.0) {
            out += ", binary;\n";
            continue;
        }
        if (v.type != var_type::continuous) out += ", integer";
        if (v.lb == v.ub) {
            out += ", = " + format_number(v.lb) + ";\n";
            continue;
        }
        if (v.lb != -inf) out += ", >= " + format_number(v.lb);
        if (v.ub != inf) out += ", <= " + format_number(v.ub);
        out += ";\n";
    }
    std::vector<std::pair<double, std::string>> obj;
    for (size_t j = 0; j < m.vars.size(); j++)
        if (m.vars[j].obj != 0.0) obj.push_back({m.vars[j].obj, names.vars[j]});
    std::string objtext = linear(obj);
    if (m.obj_constant != 0.0) {
        if (obj.empty())
            objtext = format_number(m.obj_constant);
        else
            objtext += (m.obj_constant < 0 ? " - " : " + ") + format_number(std::fabs(m.obj_constant));
    }
    out += fmt::format("\n{} obj: {};\n\n", m.sense == obj_sense::minimize ? "minimize" : "maximize", objtext);
    for (size_t i = 0; i < m.cons.size(); i++) {
        const constraint& c = m.cons[i];
        std::vector<std::pair<double, std::string>> t;
        for (const term& x : c.terms) t.push_back({x.coef, names.vars[x.var]});
        // MathProg's "=" is "=", "<=" and ">=" as usual; an empty row still needs a variable-free expression
        out += fmt::format("s.t. {}: {} {} {};\n", names.cons[i], linear(t), row_sense_name(c.sense),
                           format_number(c.rhs));
    }
    out += "\nend;\n";
    return out;
}

}  // namespace trex::optmodel
