#include "trex/optmodel/render/code.hpp"

#include "trex/base/error.hpp"
#include "trex/optmodel/ir/writers.hpp"

namespace trex::optmodel {

const char* dialect_name(dialect d) {
    switch (d) {
        case dialect::pulp:
            return "pulp";
        case dialect::gurobipy:
            return "gurobipy";
        case dialect::coptpy:
            return "coptpy";
        case dialect::pyomo:
            return "pyomo";
    }
    return "?";
}

bool parse_dialect(const std::string& s, dialect* d) {
    for (dialect x : {dialect::pulp, dialect::gurobipy, dialect::coptpy, dialect::pyomo})
        if (s == dialect_name(x)) {
            *d = x;
            return true;
        }
    return false;
}

namespace {

// Arguments of the call whose '(' is at s[open]; *end receives the index of the matching ')'.
std::vector<std::string> call_args(const std::string& s, size_t open, size_t* end) {
    std::vector<std::string> args(1);
    int depth = 0;
    char quote = 0;
    for (size_t i = open; i < s.size(); i++) {
        const char c = s[i];
        if (quote) {
            args.back() += c;
            if (c == quote) quote = 0;
            continue;
        }
        if (c == '"' || c == '\'') {
            quote = c;
            args.back() += c;
            continue;
        }
        if (c == '(' || c == '[' || c == '{') {
            if (depth++ == 0 && c == '(') continue;
        } else if (c == ')' || c == ']' || c == '}') {
            if (--depth == 0 && c == ')') {
                *end = i;
                for (auto& a : args) {
                    while (!a.empty() && a.front() == ' ') a.erase(0, 1);
                    while (!a.empty() && a.back() == ' ') a.pop_back();
                }
                return args;
            }
        } else if (c == ',' && depth == 1) {
            args.emplace_back();
            continue;
        }
        args.back() += c;
    }
    throw_error("code template: unbalanced parentheses in a @form");
}

// The forms in each dialect. Bounds arrive as Python expressions, "None" for none.
std::string inf_text(dialect d) {
    return d == dialect::gurobipy ? "GRB.INFINITY" : d == dialect::coptpy ? "COPT.INFINITY" : "None";
}

std::string sum_text(dialect d, const std::string& gen) {
    const char* fn = d == dialect::pulp       ? "pulp.lpSum"
                     : d == dialect::gurobipy ? "gp.quicksum"
                     : d == dialect::coptpy   ? "cp.quicksum"
                                              : "pyo.quicksum";
    return fmt::format("{}({})", fn, gen);
}

std::string var_text(dialect d, const std::string& name, const std::string& lb, const std::string& ub, char kind) {
    switch (d) {
        case dialect::pulp: {
            const char* cat = kind == 'C' ? "pulp.LpContinuous" : kind == 'I' ? "pulp.LpInteger" : "pulp.LpBinary";
            if (kind == 'B') return fmt::format("pulp.LpVariable({}, cat={})", name, cat);
            return fmt::format("pulp.LpVariable({}, lowBound={}, upBound={}, cat={})", name, lb, ub, cat);
        }
        case dialect::gurobipy:
        case dialect::coptpy: {
            const bool grb = d == dialect::gurobipy;
            const std::string lib = grb ? "GRB" : "COPT";
            const char* vt = kind == 'C' ? "CONTINUOUS" : kind == 'I' ? "INTEGER" : "BINARY";
            if (kind == 'B') return fmt::format("m.addVar(vtype={}.{}, name={})", lib, vt, name);
            return fmt::format("m.addVar(lb={}, ub={}, vtype={}.{}, name={})",
                               lb == "None" ? "-" + lib + ".INFINITY" : lb, ub == "None" ? lib + ".INFINITY" : ub, lib,
                               vt, name);
        }
        case dialect::pyomo: {
            const char* dom = kind == 'C' ? "pyo.Reals" : kind == 'I' ? "pyo.Integers" : "pyo.Binary";
            if (kind == 'B') return fmt::format("new_var({}, None, None, {})", name, dom);
            return fmt::format("new_var({}, {}, {}, {})", name, lb, ub, dom);
        }
    }
    return "";
}

std::string add_text(dialect d, const std::string& expr, const std::string& name) {
    switch (d) {
        case dialect::pulp:
            return fmt::format("prob += {}, {}", expr, name);
        case dialect::gurobipy:
        case dialect::coptpy:
            return fmt::format("m.addConstr({}, name={})", expr, name);
        case dialect::pyomo:
            return fmt::format("add_con({}, {})", name, expr);
    }
    return "";
}

std::string obj_text(dialect d, const std::string& expr, bool minimize) {
    switch (d) {
        case dialect::pulp:
            return "prob += " + expr;
        case dialect::gurobipy:
            return fmt::format("m.setObjective({}, GRB.{})", expr, minimize ? "MINIMIZE" : "MAXIMIZE");
        case dialect::coptpy:
            return fmt::format("m.setObjective({}, COPT.{})", expr, minimize ? "MINIMIZE" : "MAXIMIZE");
        case dialect::pyomo:
            return fmt::format("m.obj = pyo.Objective(expr={}, sense=pyo.{})", expr,
                               minimize ? "minimize" : "maximize");
    }
    return "";
}

}  // namespace

std::string expand_code_forms(const std::string& t, dialect d, obj_sense sense) {
    std::string out;
    size_t i = 0;
    while (i < t.size()) {
        if (t[i] != '@') {
            out += t[i++];
            continue;
        }
        size_t open = t.find('(', i);
        TREX_CHECK(open != std::string::npos, "code template: '@' without a form");
        const std::string form = t.substr(i + 1, open - i - 1);
        size_t end = 0;
        std::vector<std::string> a = call_args(t, open, &end);
        for (auto& arg : a) arg = expand_code_forms(arg, d, sense);
        if (form == "inf") {
            out += inf_text(d);
        } else if (form == "sum") {
            TREX_CHECK(a.size() == 1, "code template: @sum takes one argument");
            out += sum_text(d, a[0]);
        } else if (form == "var") {
            TREX_CHECK(a.size() == 4, "code template: @var takes 4 arguments");
            TREX_CHECK(a[3] == "C" || a[3] == "I" || a[3] == "B", "code template: @var kind must be C, I or B");
            out += var_text(d, a[0], a[1], a[2], a[3][0]);
        } else if (form == "add") {
            TREX_CHECK(a.size() == 2, "code template: @add takes 2 arguments");
            out += add_text(d, a[0], a[1]);
        } else if (form == "obj") {
            TREX_CHECK(a.size() == 1, "code template: @obj takes one argument");
            out += obj_text(d, a[0], sense == obj_sense::minimize);
        } else {
            throw_error(fmt::format("code template: unknown form '@{}'", form));
        }
        i = end + 1;
    }
    return out;
}

namespace {

std::string prologue(const family& f, dialect d, bool minimize) {
    switch (d) {
        case dialect::pulp:
            return fmt::format("prob = pulp.LpProblem(\"{}\", pulp.{})\n", f.name,
                               minimize ? "LpMinimize" : "LpMaximize");
        case dialect::gurobipy:
            return fmt::format("m = gp.Model(\"{}\")\nm.Params.OutputFlag = 0\n", f.name);
        case dialect::coptpy:
            return fmt::format("env = cp.Envr()\nm = env.createModel(\"{}\")\nm.setParam(COPT.Param.Logging, 0)\n",
                               f.name);
        case dialect::pyomo:
            return "m = pyo.ConcreteModel()\n"
                   "m.rows = pyo.Block()  # constraints apart: Pyomo names are one namespace per block\n\n\n"
                   "def new_var(name, lb, ub, domain):\n"
                   "    v = pyo.Var(domain=domain, bounds=(lb, ub))\n"
                   "    m.add_component(name, v)\n"
                   "    return v\n\n\n"
                   "def add_con(name, expr):\n"
                   "    # a row without terms (an empty sum) is a plain True or False in Pyomo\n"
                   "    if isinstance(expr, bool):\n"
                   "        expr = pyo.Constraint.Feasible if expr else pyo.Constraint.Infeasible\n"
                   "    m.rows.add_component(name, pyo.Constraint(expr=expr))\n\n\n";
    }
    return "";
}

// Solve and print "Status: ..." and "Optimal objective: ..." (the writers' protocol) with the nonzero variables.
std::string epilogue(dialect d) {
    switch (d) {
        case dialect::pulp:
            return pulp_epilogue(true);
        case dialect::gurobipy:
            return "\nm.optimize()\n"
                   "names = {GRB.OPTIMAL: \"Optimal\", GRB.INFEASIBLE: \"Infeasible\", GRB.UNBOUNDED: \"Unbounded\",\n"
                   "         GRB.INF_OR_UNBD: \"Infeasible or unbounded\"}\n"
                   "print(\"Status:\", names.get(m.Status, str(m.Status)))\n"
                   "if m.Status == GRB.OPTIMAL:\n"
                   "    print(\"Optimal objective:\", m.ObjVal)\n"
                   "    for v in m.getVars():\n"
                   "        if abs(v.X) > 1e-9:\n"
                   "            print(v.VarName, \"=\", v.X)\n";
        case dialect::coptpy:
            return "\nm.solve()\n"
                   "names = {COPT.OPTIMAL: \"Optimal\", COPT.INFEASIBLE: \"Infeasible\", COPT.UNBOUNDED: "
                   "\"Unbounded\",\n"
                   "         COPT.INF_OR_UNB: \"Infeasible or unbounded\"}\n"
                   "print(\"Status:\", names.get(m.status, str(m.status)))\n"
                   "if m.status == COPT.OPTIMAL:\n"
                   "    print(\"Optimal objective:\", m.objval)\n"
                   "    for v in m.getVars():\n"
                   "        if abs(v.x) > 1e-9:\n"
                   "            print(v.name, \"=\", v.x)\n";
        case dialect::pyomo:
            return "\nsolver = pyo.SolverFactory(\"glpk\")\n"
                   "result = solver.solve(m)\n"
                   "if result.solver.termination_condition == pyo.TerminationCondition.optimal:\n"
                   "    print(\"Status: Optimal\")\n"
                   "    print(\"Optimal objective:\", pyo.value(m.obj))\n"
                   "    for v in m.component_data_objects(pyo.Var):\n"
                   "        if v.value is not None and abs(v.value) > 1e-9:\n"
                   "            print(v.name, \"=\", v.value)\n"
                   "else:\n"
                   "    # some solvers report an unbounded model as infeasible or undecided: a copy without the\n"
                   "    # objective tells the two apart\n"
                   "    m.obj.deactivate()\n"
                   "    m.feasibility = pyo.Objective(expr=0)\n"
                   "    again = solver.solve(m)\n"
                   "    feasible = again.solver.termination_condition == pyo.TerminationCondition.optimal\n"
                   "    print(\"Status:\", \"Unbounded\" if feasible else \"Infeasible\")\n";
    }
    return "";
}

const char* imports(dialect d) {
    switch (d) {
        case dialect::pulp:
            return "import pulp\n\n";
        case dialect::gurobipy:
            return "import gurobipy as gp\nfrom gurobipy import GRB\n\n";
        case dialect::coptpy:
            return "import coptpy as cp\nfrom coptpy import COPT\n\n";
        case dialect::pyomo:
            return "import pyomo.environ as pyo\n\n";
    }
    return "";
}

}  // namespace

std::string render_code(const family& f, const instance& inst, dialect d, bool data_from_file) {
    std::string out = std::string("import json\n") + imports(d);
    if (data_from_file) {
        out += "with open(\"data.json\") as f:\n    data = json.load(f)\n\n";
    } else {
        out += "data = {\n";  // one line per key
        for (auto it = inst.data.begin(); it != inst.data.end(); ++it)
            out += "    " + ojson(it.key()).dump() + ": " + it.value().dump() + ",\n";
        out += "}\n\n";
    }
    out += prologue(f, d, inst.m.sense == obj_sense::minimize);
    out += expand_code_forms(f.code, d, inst.m.sense);
    if (!out.empty() && out.back() != '\n') out += '\n';
    return out + epilogue(d);
}

}  // namespace trex::optmodel
