#include "trex/optmodel/ir/mps_quadratic.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

#include "trex/base/error.hpp"

namespace trex::optmodel {

namespace {

std::vector<std::string> words_of(const std::string& line) {
    std::vector<std::string> w;
    std::istringstream in(line);
    std::string s;
    while (in >> s) w.push_back(s);
    return w;
}

// An indicator (section) line: it starts in the first column and is not a comment.
bool is_indicator(const std::string& line) {
    return !line.empty() && !std::isspace((unsigned char)line[0]) && line[0] != '*';
}

double number_at(const std::string& s, const std::string& path, int line) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    TREX_CHECK(end && *end == '\0' && !s.empty() && errno != ERANGE && std::isfinite(v),
               "{}:{}: '{}' is not a finite number (quadratic section)", path, line, s);
    return v;
}

// The section being read and how its entries become IR coefficients.
struct quad_section {
    std::string kind;  // "" when the current section is not quadratic
    std::string row;   // "" = the objective
    bool one_triangle = false, halved = false;
    bool ignored = false;  // the terms of a free row other than the objective (GLPK drops such rows: no constraint)
};

// The IR coefficient of x_a·x_b for a listed value v: with one triangle listed an off-diagonal value stands for
// Q_ab and Q_ba; then ½ when the section is ½·xᵀQx.
double ir_coef(const quad_section& s, const std::string& a, const std::string& b, double v) {
    double c = v;
    if (s.one_triangle && a != b) c *= 2.0;
    if (s.halved) c *= 0.5;
    return c;
}

// N rows: the first is the objective, the others carry no constraint.
quad_section open_section(const std::vector<std::string>& w, const std::vector<std::string>& free_rows,
                          const std::string& path, int line) {
    quad_section s;
    s.kind = w[0];
    if (s.kind == "QUADOBJ" || s.kind == "QMATRIX") {
        s.one_triangle = s.kind == "QUADOBJ";
        s.halved = true;
        return s;
    }
    TREX_CHECK(w.size() == 2, "{}:{}: {} needs the name of its row", path, line, s.kind);
    const auto free = std::find(free_rows.begin(), free_rows.end(), w[1]);
    s.row = free == free_rows.begin() ? "" : w[1];
    s.ignored = free != free_rows.end() && free != free_rows.begin();
    s.one_triangle = s.halved = s.kind == "QSECTION";
    return s;
}

}  // namespace

mps_quadratic strip_mps_quadratic(std::string& text, const std::string& path) {
    mps_quadratic q;
    std::vector<std::string> free_rows;  // the N rows, in file order
    std::string section;
    quad_section quad;
    std::string out;
    size_t b = 0;
    for (int line = 1; b < text.size(); line++) {
        size_t e = text.find('\n', b);
        if (e == std::string::npos) e = text.size();
        const std::string s = text.substr(b, e - b);
        const std::vector<std::string> w = words_of(s);
        bool blank_it = false;
        if (is_indicator(s)) {
            section = w[0];
            quad = {};
            if (section == "QUADOBJ" || section == "QMATRIX" || section == "QSECTION" || section == "QCMATRIX") {
                quad = open_section(w, free_rows, path, line);
                blank_it = true;
            }
        } else if (!w.empty() && w[0][0] != '*') {
            if (section == "ROWS" && w.size() >= 2 && w[0] == "N") free_rows.push_back(w[1]);
            if (!quad.kind.empty()) {
                TREX_CHECK(w.size() == 3 || (w.size() == 5 && quad.kind == "QSECTION"),
                           "{}:{}: a {} line is 'name name value'{} ({} fields here)", path, line, quad.kind,
                           quad.kind == "QSECTION" ? " [name value]" : "", w.size());
                for (size_t k = 1; k < w.size(); k += 2) {
                    const double v = number_at(w[k + 1], path, line);
                    if (!quad.ignored) q.entries.push_back({quad.row, w[0], w[k], ir_coef(quad, w[0], w[k], v), line});
                }
                blank_it = true;
            }
        }
        out += blank_it ? "*" : s;
        if (e < text.size()) out += '\n';
        b = e + 1;
    }
    text = std::move(out);
    return q;
}

void attach_mps_quadratic(model& m, const mps_quadratic& q, const std::string& path) {
    std::map<std::string, int> var_of, row_of;
    for (size_t j = 0; j < m.vars.size(); j++) var_of.emplace(m.vars[j].name, (int)j);
    for (size_t i = 0; i < m.cons.size(); i++) row_of.emplace(m.cons[i].name, (int)i);
    auto var = [&](const std::string& name, int line) {
        const auto it = var_of.find(name);
        TREX_CHECK(it != var_of.end(), "{}:{}: quadratic term of '{}', which the COLUMNS section does not have", path,
                   line, name);
        return it->second;
    };
    // the model rows a named MPS row became (a ranged row: its two halves)
    auto rows = [&](const std::string& name, int line) {
        std::vector<int> r;
        if (const auto it = row_of.find(name); it != row_of.end())
            r.push_back(it->second);
        else
            for (const char* half : {"_lo", "_hi"})
                if (const auto it = row_of.find(name + half); it != row_of.end()) r.push_back(it->second);
        TREX_CHECK(!r.empty(), "{}:{}: quadratic terms for row '{}', which the ROWS section does not have", path, line,
                   name);
        return r;
    };
    for (const mps_quadratic::entry& e : q.entries) {
        const quad_term t{var(e.a, e.line), var(e.b, e.line), e.coef};
        if (e.row.empty()) {
            m.obj_quad.push_back(t);
            continue;
        }
        for (const int i : rows(e.row, e.line)) m.cons[(size_t)i].quad.push_back(t);
    }
    m.obj_quad = merged_quad(std::move(m.obj_quad));
    for (constraint& c : m.cons)
        if (!c.quad.empty()) c.quad = merged_quad(std::move(c.quad));
}

}  // namespace trex::optmodel
