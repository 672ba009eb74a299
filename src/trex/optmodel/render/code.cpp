#include "trex/optmodel/render/code.hpp"

#include "trex/base/error.hpp"
#include "trex/optmodel/ir/writers.hpp"

namespace trex::optmodel {

const char* dialect_name(dialect d) {
    return d == dialect::pulp ? "pulp" : "gurobipy";
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

}  // namespace

std::string expand_code_forms(const std::string& t, dialect d, obj_sense sense) {
    const bool pulp = d == dialect::pulp;
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
            out += pulp ? "None" : "GRB.INFINITY";
        } else if (form == "sum") {
            TREX_CHECK(a.size() == 1, "code template: @sum takes one argument");
            out += (pulp ? "pulp.lpSum(" : "gp.quicksum(") + a[0] + ")";
        } else if (form == "var") {
            TREX_CHECK(a.size() == 4, "code template: @var takes 4 arguments");
            const std::string& k = a[3];
            TREX_CHECK(k == "C" || k == "I" || k == "B", "code template: @var kind must be C, I or B");
            if (pulp) {
                const char* cat = k == "C" ? "pulp.LpContinuous" : k == "I" ? "pulp.LpInteger" : "pulp.LpBinary";
                if (k == "B")
                    out += fmt::format("pulp.LpVariable({}, cat={})", a[0], cat);
                else
                    out += fmt::format("pulp.LpVariable({}, lowBound={}, upBound={}, cat={})", a[0], a[1], a[2], cat);
            } else {
                const char* vt = k == "C" ? "GRB.CONTINUOUS" : k == "I" ? "GRB.INTEGER" : "GRB.BINARY";
                if (k == "B") {
                    out += fmt::format("m.addVar(vtype={}, name={})", vt, a[0]);
                } else {
                    const std::string lb = a[1] == "None" ? "-GRB.INFINITY" : a[1];
                    const std::string ub = a[2] == "None" ? "GRB.INFINITY" : a[2];
                    out += fmt::format("m.addVar(lb={}, ub={}, vtype={}, name={})", lb, ub, vt, a[0]);
                }
            }
        } else if (form == "add") {
            TREX_CHECK(a.size() == 2, "code template: @add takes 2 arguments");
            out +=
                pulp ? fmt::format("prob += {}, {}", a[0], a[1]) : fmt::format("m.addConstr({}, name={})", a[0], a[1]);
        } else if (form == "obj") {
            TREX_CHECK(a.size() == 1, "code template: @obj takes one argument");
            if (pulp)
                out += "prob += " + a[0];
            else
                out += fmt::format("m.setObjective({}, {})", a[0],
                                   sense == obj_sense::minimize ? "GRB.MINIMIZE" : "GRB.MAXIMIZE");
        } else {
            throw_error(fmt::format("code template: unknown form '@{}'", form));
        }
        i = end + 1;
    }
    return out;
}

std::string render_code(const family& f, const instance& inst, dialect d, bool data_from_file) {
    const bool pulp = d == dialect::pulp;
    const bool minimize = inst.m.sense == obj_sense::minimize;
    std::string out = "import json\n";
    out += pulp ? "import pulp\n\n" : "import gurobipy as gp\nfrom gurobipy import GRB\n\n";
    if (data_from_file) {
        out += "with open(\"data.json\") as f:\n    data = json.load(f)\n\n";
    } else {
        out += "data = {\n";  // one line per key
        for (auto it = inst.data.begin(); it != inst.data.end(); ++it)
            out += "    " + ojson(it.key()).dump() + ": " + it.value().dump() + ",\n";
        out += "}\n\n";
    }
    if (pulp) {
        out += fmt::format("prob = pulp.LpProblem(\"{}\", pulp.{})\n", f.name, minimize ? "LpMinimize" : "LpMaximize");
    } else {
        out += fmt::format("m = gp.Model(\"{}\")\nm.Params.OutputFlag = 0\n", f.name);
    }
    out += expand_code_forms(f.code, d, inst.m.sense);
    if (!out.empty() && out.back() != '\n') out += '\n';
    if (pulp) {
        out += pulp_epilogue(true);
    } else {
        out += "\nm.optimize()\n";
        out += "names = {GRB.OPTIMAL: \"Optimal\", GRB.INFEASIBLE: \"Infeasible\", GRB.UNBOUNDED: \"Unbounded\",\n";
        out += "         GRB.INF_OR_UNBD: \"Infeasible or unbounded\"}\n";
        out += "print(\"Status:\", names.get(m.Status, str(m.Status)))\n";
        out += "if m.Status == GRB.OPTIMAL:\n";
        out += "    print(\"Optimal objective:\", m.ObjVal)\n";
        out += "    for v in m.getVars():\n";
        out += "        if abs(v.X) > 1e-9:\n";
        out += "            print(v.VarName, \"=\", v.X)\n";
    }
    return out;
}

}  // namespace trex::optmodel
