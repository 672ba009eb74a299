#include "trex/optmodel/ir/latex.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>

#include "trex/base/error.hpp"
#include "trex/optmodel/ir/format.hpp"
#include "trex/optmodel/ir/writers.hpp"

namespace trex::optmodel {

namespace {

std::string escape_us(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '_')
            o += "\\_";
        else
            o += c;
    }
    return o;
}

std::string coef_term(double a, const std::string& v, bool first) {
    std::string o;
    if (first)
        o = a < 0 ? "-" : "";
    else
        o = a < 0 ? " - " : " + ";
    if (std::fabs(a) != 1.0) o += format_number(std::fabs(a)) + "\\,";
    return o + v;
}

std::string var_list(const std::vector<int>& js, const model& m) {
    std::string o;
    for (size_t k = 0; k < js.size(); k++) o += (k ? ", " : "") + latex_var(m.vars[js[k]].name);
    return o;
}

}  // namespace

std::string latex_var(const std::string& name) {
    // base letters then one or more "_<digits>" groups
    size_t p = 0;
    while (p < name.size() && std::isalpha((unsigned char)name[p])) p++;
    std::string base = name.substr(0, p), idx;
    bool ok = p > 0;
    size_t q = p;
    while (ok && q < name.size()) {
        if (name[q] != '_' || q + 1 >= name.size() || !std::isdigit((unsigned char)name[q + 1])) {
            ok = false;
            break;
        }
        q++;
        std::string d;
        while (q < name.size() && std::isdigit((unsigned char)name[q])) d += name[q++];
        idx += (idx.empty() ? "" : ",") + d;
    }
    if (ok && !idx.empty()) {
        std::string b = base.size() == 1 ? base : "\\mathit{" + base + "}";
        return b + "_{" + idx + "}";
    }
    if (name.size() == 1 && std::isalpha((unsigned char)name[0])) return name;
    return "\\mathit{" + escape_us(name) + "}";
}

std::string write_latex(const model& m) {
    require_linear(m, "the LaTeX writer");
    std::string out = "\\begin{align*}\n";
    out += m.sense == obj_sense::minimize ? "\\min\\quad & " : "\\max\\quad & ";
    bool first = true;
    for (const auto& v : m.vars) {
        if (v.obj == 0.0) continue;
        out += coef_term(v.obj, latex_var(v.name), first);
        first = false;
    }
    if (m.obj_constant != 0.0) {
        if (first)
            out += format_number(m.obj_constant);
        else
            out += (m.obj_constant < 0 ? " - " : " + ") + format_number(std::fabs(m.obj_constant));
        first = false;
    }
    if (first) out += "0";
    out += " \\\\\n";
    for (size_t i = 0; i < m.cons.size(); i++) {
        const constraint& c = m.cons[i];
        out += i == 0 ? "\\text{s.t.}\\quad & " : "& ";
        for (size_t k = 0; k < c.terms.size(); k++)
            out += coef_term(c.terms[k].coef, latex_var(m.vars[c.terms[k].var].name), k == 0);
        if (c.terms.empty()) out += "0";
        const char* rel = c.sense == row_sense::le ? "\\le" : c.sense == row_sense::ge ? "\\ge" : "=";
        out += fmt::format(" {} {} && \\text{{({})}} \\\\\n", rel, format_number(c.rhs), escape_us(c.name));
    }
    // bounds and domains, consecutive variables with equal (type, lb, ub) grouped
    std::vector<std::string> lines;
    for (size_t j = 0; j < m.vars.size();) {
        size_t e = j + 1;
        const variable& v = m.vars[j];
        while (e < m.vars.size() && m.vars[e].type == v.type && m.vars[e].lb == v.lb && m.vars[e].ub == v.ub) e++;
        std::vector<int> js;
        for (size_t k = j; k < e; k++) js.push_back((int)k);
        const std::string a = var_list(js, m);
        if (v.type == var_type::binary && v.lb == 0.0 && v.ub == 1.0) {
            lines.push_back(a + " \\in \\{0, 1\\}");
        } else {
            if (v.lb == v.ub)
                lines.push_back(a + " = " + format_number(v.lb));
            else if (v.lb == -inf && v.ub == inf)
                lines.push_back(a + " \\text{ free}");
            else if (v.ub == inf)
                lines.push_back(a + " \\ge " + format_number(v.lb));
            else if (v.lb == -inf)
                lines.push_back(a + " \\le " + format_number(v.ub));
            else
                lines.push_back(format_number(v.lb) + " \\le " + a + " \\le " + format_number(v.ub));
            if (v.type != var_type::continuous) lines.push_back(a + " \\in \\mathbb{Z}");
        }
        j = e;
    }
    for (size_t k = 0; k < lines.size(); k++) out += "& " + lines[k] + (k + 1 < lines.size() ? " \\\\\n" : "\n");
    out += "\\end{align*}\n";
    return out;
}

// ---------------------------------------------------------------------------------------------------------------
// reader

namespace {

struct parser {
    const std::string& what;
    int line_no = 0;
    std::string line;

    [[noreturn]] void fail(const std::string& msg) const {
        throw_error(fmt::format("{}: LaTeX model line {}: {} ('{}')", what, line_no, msg,
                                line.size() > 60 ? line.substr(0, 57) + "..." : line));
    }
};

struct cursor {
    const std::string& s;
    size_t p = 0;
    void ws() {
        while (p < s.size() && (s[p] == ' ' || s[p] == '\t')) p++;
    }
    bool eat(const std::string& t) {
        ws();
        if (s.compare(p, t.size(), t) == 0) {
            p += t.size();
            return true;
        }
        return false;
    }
    bool done() {
        ws();
        return p >= s.size();
    }
};

bool read_number(cursor& c, double* out) {
    c.ws();
    const char* b = c.s.c_str() + c.p;
    char* e = nullptr;
    if (c.p >= c.s.size() || !(std::isdigit((unsigned char)*b) || *b == '-' || *b == '+' || *b == '.')) return false;
    double v = std::strtod(b, &e);
    if (e == b) return false;
    c.p += (size_t)(e - b);
    *out = v;
    return true;
}

// One variable token -> IR name, or "" when none starts here.
std::string read_var(cursor& c) {
    c.ws();
    std::string base;
    if (c.eat("\\mathit{")) {
        while (c.p < c.s.size() && c.s[c.p] != '}') {
            if (c.s.compare(c.p, 2, "\\_") == 0) {
                base += '_';
                c.p += 2;
            } else {
                base += c.s[c.p++];
            }
        }
        if (c.p >= c.s.size()) return "";
        c.p++;
    } else if (c.p < c.s.size() && std::isalpha((unsigned char)c.s[c.p])) {
        base = std::string(1, c.s[c.p++]);
    } else {
        return "";
    }
    if (c.s.compare(c.p, 2, "_{") == 0) {
        c.p += 2;
        std::string idx;
        while (c.p < c.s.size() && c.s[c.p] != '}') idx += c.s[c.p++];
        if (c.p >= c.s.size()) return "";
        c.p++;
        for (char& ch : idx)
            if (ch == ',') ch = '_';
        base += "_" + idx;
    }
    return base;
}

// The name in a constraint row's tag "&& \text{(name)}" (tag: where it starts), with "\_" read as '_'.
std::string constraint_tag_name(const std::string& ln, size_t tag) {
    std::string name;
    size_t q = tag + 10;
    while (q < ln.size() && ln.compare(q, 2, ")}") != 0) {
        if (ln.compare(q, 2, "\\_") == 0) {
            name += '_';
            q += 2;
        } else {
            name += ln[q++];
        }
    }
    return name;
}

// The model read line by line from an align* block: the objective line first, then constraint rows and bound or
// domain lines. Variables are created as they first appear (continuous, [0, inf)).
struct latex_reader {
    parser ps;
    model m;
    std::map<std::string, int> index;
    std::map<int, bool> bounded;  // vars that got a bound line
    bool have_obj = false;

    int var_id(const std::string& n) {
        auto it = index.find(n);
        if (it != index.end()) return it->second;
        int j = m.add_var(n, var_type::continuous, 0.0, inf);
        index[n] = j;
        return j;
    }

    // [+-] [number\,] var ... terms, or a number alone as a constant term
    void parse_expr(cursor& c, std::vector<term>& terms, double& constant) {
        bool first = true;
        while (true) {
            double sign = 1.0;
            c.ws();
            if (c.eat("-"))
                sign = -1.0;
            else if (c.eat("+"))
                sign = 1.0;
            else if (!first)
                break;
            double coef = 1.0;
            const size_t save = c.p;
            double num;
            if (read_number(c, &num)) {
                if (c.eat("\\,")) {
                    coef = num;
                } else {  // a constant term
                    constant += sign * num;
                    first = false;
                    continue;
                }
            } else {
                c.p = save;
            }
            std::string v = read_var(c);
            if (v.empty()) ps.fail("expected a variable");
            terms.push_back({var_id(v), sign * coef});
            first = false;
        }
    }

    // One non-blank line (its trailing "\\" stripped).
    void read_line(const std::string& ln) {
        cursor c{ln};
        if (!have_obj) {
            read_objective(c);
            return;
        }
        c.eat("\\text{s.t.}\\quad");
        if (!c.eat("&")) ps.fail("expected '&'");
        const size_t tag = ln.find("&& \\text{(");
        if (tag != std::string::npos)  // a constraint row
            read_constraint(ln, c, tag);
        else  // bounds / domain line
            read_bounds(c);
    }

    void read_objective(cursor& c) {
        if (c.eat("\\min\\quad"))
            m.sense = obj_sense::minimize;
        else if (c.eat("\\max\\quad"))
            m.sense = obj_sense::maximize;
        else
            ps.fail("expected \\min\\quad or \\max\\quad");
        if (!c.eat("&")) ps.fail("expected '&'");
        std::vector<term> t;
        double constant = 0;
        parse_expr(c, t, constant);
        if (!c.done()) ps.fail("trailing text after the objective");
        for (const term& x : t) m.vars[x.var].obj += x.coef;
        m.obj_constant = constant;
        have_obj = true;
    }

    // "expr \le|\ge|= number && \text{(name)}"
    void read_constraint(const std::string& ln, const cursor& c, size_t tag) {
        std::string name = constraint_tag_name(ln, tag);
        std::string row = ln.substr(c.p, tag - c.p);
        cursor r{row};
        std::vector<term> t;
        double constant = 0;
        parse_expr(r, t, constant);
        row_sense s;
        if (r.eat("\\le"))
            s = row_sense::le;
        else if (r.eat("\\ge"))
            s = row_sense::ge;
        else if (r.eat("="))
            s = row_sense::eq;
        else
            ps.fail("expected \\le, \\ge or =");
        double rhs;
        if (!read_number(r, &rhs) || !r.done()) ps.fail("expected a number after the relation");
        m.add_con(name, t, s, rhs - constant);
    }

    // "[lo \le] x, y, ..." then a bound ("\le hi" after lo, "\ge", "\le", "=", free) or a domain ({0, 1}, Z)
    void read_bounds(cursor& c) {
        double lo = 0;
        const size_t save = c.p;
        bool lead = false;
        if (read_number(c, &lo) && c.eat("\\le"))
            lead = true;
        else
            c.p = save;
        std::vector<int> js;
        while (true) {
            std::string v = read_var(c);
            if (v.empty()) ps.fail("expected a variable list");
            js.push_back(var_id(v));
            if (!c.eat(",")) break;
        }
        double x;
        if (lead) {
            if (!c.eat("\\le") || !read_number(c, &x)) ps.fail("expected '\\le <number>'");
            set_bounds(js, lo, x);
        } else if (c.eat("\\in \\{0, 1\\}")) {
            for (int j : js) m.vars[j].type = var_type::binary;
            set_bounds(js, 0, 1);
        } else if (c.eat("\\in \\mathbb{Z}")) {
            for (int j : js) m.vars[j].type = var_type::integer;
        } else if (c.eat("\\text{ free}")) {
            set_bounds(js, -inf, inf);
        } else if (c.eat("\\ge")) {
            if (!read_number(c, &x)) ps.fail("expected a number");
            set_bounds(js, x, inf);
        } else if (c.eat("\\le")) {
            if (!read_number(c, &x)) ps.fail("expected a number");
            set_bounds(js, -inf, x);
        } else if (c.eat("=")) {
            if (!read_number(c, &x)) ps.fail("expected a number");
            set_bounds(js, x, x);
        } else {
            ps.fail("unrecognised bound line");
        }
        if (!c.done()) ps.fail("trailing text");
    }

    void set_bounds(const std::vector<int>& js, double l, double u) {
        for (int j : js) {
            m.vars[j].lb = l;
            m.vars[j].ub = u;
            bounded[j] = true;
        }
    }
};

}  // namespace

model parse_latex(const std::string& text, const std::string& what) {
    latex_reader rd{{what, 0, ""}, {}, {}, {}, false};
    const size_t b = text.find("\\begin{align*}");
    const size_t e = text.find("\\end{align*}");
    if (b == std::string::npos || e == std::string::npos || e < b)
        throw_error(fmt::format("{}: no \\begin{{align*}} ... \\end{{align*}} block", what));
    std::string body = text.substr(b + 14, e - b - 14);
    rd.m.name = "latex";
    parser& ps = rd.ps;
    size_t pos = 0;
    int base_line = 1;
    for (size_t k = 0; k < b; k++)
        if (text[k] == '\n') base_line++;
    ps.line_no = base_line;
    while (pos <= body.size()) {
        size_t nl = body.find('\n', pos);
        if (nl == std::string::npos) nl = body.size();
        std::string ln = body.substr(pos, nl - pos);
        pos = nl + 1;
        ps.line = ln;
        // strip trailing "\\"
        while (!ln.empty() && std::isspace((unsigned char)ln.back())) ln.pop_back();
        if (ln.size() >= 2 && ln.compare(ln.size() - 2, 2, "\\\\") == 0) ln.resize(ln.size() - 2);
        if (ln.find_first_not_of(" \t") != std::string::npos) rd.read_line(ln);  // blank lines are skipped
        ps.line_no++;
        if (nl == body.size()) break;
    }
    if (!rd.have_obj) throw_error(fmt::format("{}: LaTeX model has no objective line", what));
    return std::move(rd.m);
}

}  // namespace trex::optmodel
