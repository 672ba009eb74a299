// Explicit (one line per variable and constraint) PuLP and gurobipy scripts written from the IR.
#include <fmt/format.h>

#include <cmath>

#include "trex/optmodel/ir/format.hpp"
#include "trex/optmodel/ir/writers.hpp"

namespace trex::optmodel {

namespace {

std::string py_number(double x) {
    return format_number(x);
}

// "3 * v['x_1'] - v['x_2']" over (coef, var index) pairs.
std::string py_linear(const std::vector<std::pair<double, int>>& terms, const std::vector<std::string>& names,
                      const char* sum_fn) {
    if (terms.empty()) return "0";
    std::string out;
    for (size_t k = 0; k < terms.size(); k++) {
        auto [a, j] = terms[k];
        if (k == 0)
            out += a < 0 ? "-" : "";
        else
            out += a < 0 ? " - " : " + ";
        if (k > 0 && k % 8 == 0) out += "\n    ";
        if (std::fabs(a) != 1.0) out += py_number(std::fabs(a)) + " * ";
        out += fmt::format("v[\"{}\"]", names[j]);
    }
    return out.find('\n') == std::string::npos ? out : "(" + out + ")";
}

}  // namespace

std::string write_pulp(const model& m) {
    require_linear(m, "the PuLP writer");
    const safe_names names = make_safe_names(m);
    std::string out = "import pulp\n\n";
    out += fmt::format("prob = pulp.LpProblem(\"{}\", pulp.{})\n", names.vars.empty() ? "model" : "model",
                       m.sense == obj_sense::minimize ? "LpMinimize" : "LpMaximize");
    out += "v = {}\n";
    for (size_t j = 0; j < m.vars.size(); j++) {
        const variable& v = m.vars[j];
        const char* cat = v.type == var_type::binary    ? "pulp.LpBinary"
                          : v.type == var_type::integer ? "pulp.LpInteger"
                                                        : "pulp.LpContinuous";
        std::string lb = v.lb == -inf ? "None" : py_number(v.lb);
        std::string ub = v.ub == inf ? "None" : py_number(v.ub);
        out += fmt::format("v[\"{0}\"] = pulp.LpVariable(\"{0}\", lowBound={1}, upBound={2}, cat={3})\n", names.vars[j],
                           lb, ub, cat);
    }
    std::vector<std::pair<double, int>> obj;
    for (size_t j = 0; j < m.vars.size(); j++)
        if (m.vars[j].obj != 0.0) obj.push_back({m.vars[j].obj, (int)j});
    out += "prob += " + py_linear(obj, names.vars, "pulp.lpSum");
    if (m.obj_constant != 0.0) out += (m.obj_constant < 0 ? " - " : " + ") + py_number(std::fabs(m.obj_constant));
    out += ", \"obj\"\n";
    for (size_t i = 0; i < m.cons.size(); i++) {
        const constraint& c = m.cons[i];
        std::vector<std::pair<double, int>> t;
        for (const term& x : c.terms) t.push_back({x.coef, x.var});
        const char* rel = c.sense == row_sense::le ? "<=" : c.sense == row_sense::ge ? ">=" : "==";
        out += fmt::format("prob += {} {} {}, \"{}\"\n", py_linear(t, names.vars, "pulp.lpSum"), rel, py_number(c.rhs),
                           names.cons[i]);
    }
    return out + pulp_epilogue(false);
}

std::string pulp_epilogue(bool values) {
    std::string out = "\nprob.solve(pulp.PULP_CBC_CMD(msg=False))\n";
    out += "status = pulp.LpStatus[prob.status]\n";
    out +=
        "if status == \"Infeasible\":  # CBC may call an unbounded problem infeasible: are the constraints alone "
        "met?\n";
    out += "    feas = prob.deepcopy()\n";
    out += "    feas.setObjective(pulp.LpAffineExpression())\n";
    out += "    if feas.solve(pulp.PULP_CBC_CMD(msg=False)) == pulp.LpStatusOptimal:\n";
    out += "        status = \"Unbounded\"\n";
    out += "print(\"Status:\", status)\n";
    out += "if prob.status == pulp.LpStatusOptimal:\n";
    out += "    print(\"Optimal objective:\", pulp.value(prob.objective))\n";
    if (values) {
        out += "    for v in prob.variables():\n";
        out += "        if v.varValue is not None and abs(v.varValue) > 1e-9:\n";
        out += "            print(v.name, \"=\", v.varValue)\n";
    }
    return out;
}

std::string write_gurobipy(const model& m) {
    require_linear(m, "the gurobipy writer");
    const safe_names names = make_safe_names(m);
    std::string out = "import gurobipy as gp\nfrom gurobipy import GRB\n\n";
    out += "m = gp.Model(\"model\")\nm.Params.OutputFlag = 0\nv = {}\n";
    for (size_t j = 0; j < m.vars.size(); j++) {
        const variable& v = m.vars[j];
        const char* vt = v.type == var_type::binary    ? "GRB.BINARY"
                         : v.type == var_type::integer ? "GRB.INTEGER"
                                                       : "GRB.CONTINUOUS";
        std::string lb = v.lb == -inf ? "-GRB.INFINITY" : py_number(v.lb);
        std::string ub = v.ub == inf ? "GRB.INFINITY" : py_number(v.ub);
        out +=
            fmt::format("v[\"{0}\"] = m.addVar(lb={1}, ub={2}, vtype={3}, name=\"{0}\")\n", names.vars[j], lb, ub, vt);
    }
    std::vector<std::pair<double, int>> obj;
    for (size_t j = 0; j < m.vars.size(); j++)
        if (m.vars[j].obj != 0.0) obj.push_back({m.vars[j].obj, (int)j});
    std::string objtext = py_linear(obj, names.vars, "gp.quicksum");
    if (m.obj_constant != 0.0) objtext += (m.obj_constant < 0 ? " - " : " + ") + py_number(std::fabs(m.obj_constant));
    out += fmt::format("m.setObjective({}, {})\n", objtext,
                       m.sense == obj_sense::minimize ? "GRB.MINIMIZE" : "GRB.MAXIMIZE");
    for (size_t i = 0; i < m.cons.size(); i++) {
        const constraint& c = m.cons[i];
        std::vector<std::pair<double, int>> t;
        for (const term& x : c.terms) t.push_back({x.coef, x.var});
        const char* rel = c.sense == row_sense::le ? "<=" : c.sense == row_sense::ge ? ">=" : "==";
        out += fmt::format("m.addConstr({} {} {}, name=\"{}\")\n", py_linear(t, names.vars, "gp.quicksum"), rel,
                           py_number(c.rhs), names.cons[i]);
    }
    out += "\nm.optimize()\n";
    out += "status = {GRB.OPTIMAL: \"Optimal\", GRB.INFEASIBLE: \"Infeasible\", GRB.UNBOUNDED: \"Unbounded\",\n";
    out += "          GRB.INF_OR_UNBD: \"Infeasible or unbounded\"}.get(m.Status, str(m.Status))\n";
    out += "print(\"Status:\", status)\n";
    out += "if m.Status == GRB.OPTIMAL:\n";
    out += "    print(\"Optimal objective:\", m.ObjVal)\n";
    return out;
}

}  // namespace trex::optmodel
