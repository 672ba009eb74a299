#include "trex/optmodel/ir/lp_dialect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

#include "trex/base/error.hpp"

namespace trex::optmodel {

namespace {

struct token {
    std::string text;
    int line = 0;
};

std::string lower(std::string s) {
    for (char& c : s) c = (char)std::tolower((unsigned char)c);
    return s;
}

// One whitespace-separated token, with a quadratic bracket written against its neighbour split off: a leading `[`
// (`[x^2`, `[-`: no name starts with `[`) and a trailing `]` the token does not open itself (`y^2]`, not `x[1]`).
void push_token(std::string t, int line, std::vector<token>* out) {
    while (t.size() > 1 && t[0] == '[') {
        out->push_back({"[", line});
        t.erase(0, 1);
    }
    const auto opens = std::count(t.begin(), t.end(), '['), closes = std::count(t.begin(), t.end(), ']');
    if (t.size() > 1 && t.back() == ']' && closes > opens) {
        out->push_back({t.substr(0, t.size() - 1), line});
        out->push_back({"]", line});
        return;
    }
    out->push_back({std::move(t), line});
}

// Whitespace-separated tokens; `\` starts a comment that runs to the end of the line.
std::vector<token> tokenize(const std::string& text) {
    std::vector<token> out;
    int line = 1;
    size_t i = 0;
    while (i < text.size()) {
        const char c = text[i];
        if (c == '\n') {
            line++;
            i++;
        } else if (c == '\\') {
            while (i < text.size() && text[i] != '\n') i++;
        } else if (std::isspace((unsigned char)c)) {
            i++;
        } else {
            const size_t b = i;
            while (i < text.size() && !std::isspace((unsigned char)text[i]) && text[i] != '\\') i++;
            push_token(text.substr(b, i - b), line, &out);
        }
    }
    return out;
}

// A plain decimal number (no inf / nan / hex); false for anything else.
bool parse_number(const std::string& s, double* v) {
    bool digit = false;
    for (char c : s) {
        if (std::isdigit((unsigned char)c))
            digit = true;
        else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-')
            return false;
    }
    if (!digit) return false;
    char* end = nullptr;
    *v = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size() && std::isfinite(*v);
}

bool is_sense(const std::string& s) {
    return s == "<=" || s == "=<" || s == "<" || s == ">=" || s == "=>" || s == ">" || s == "=";
}

row_sense sense_of(const std::string& s) {
    if (s == "=") return row_sense::eq;
    return s[0] == '<' || s == "=<" ? row_sense::le : row_sense::ge;
}

enum class section { none, objective_min, objective_max, rows, bounds, generals, binaries, end, unsupported };

class lp_parser {
   public:
    lp_parser(const std::string& text, std::string what) : toks_(tokenize(text)), what_(std::move(what)) {}

    model parse() {
        section s = at_section();
        if (s != section::objective_min && s != section::objective_max)
            fail("the file does not start with Minimize or Maximize");
        m_.sense = s == section::objective_max ? obj_sense::maximize : obj_sense::minimize;
        objective();
        while (pos_ < toks_.size()) {
            const int line = toks_[pos_].line;
            const std::string word = toks_[pos_].text;
            s = at_section();
            switch (s) {
                case section::rows:
                    rows();
                    break;
                case section::bounds:
                    bounds();
                    break;
                case section::generals:
                    type_list(var_type::integer);
                    break;
                case section::binaries:
                    type_list(var_type::binary);
                    break;
                case section::end:
                    return finish();
                case section::unsupported:
                    fail_at(line, fmt::format("the '{}' section is not supported", word));
                case section::objective_min:
                case section::objective_max:
                    fail_at(line, "a second objective section");
                case section::none:
                    fail_at(line, fmt::format("unexpected '{}'", word));
            }
        }
        return finish();
    }

   private:
    std::vector<token> toks_;
    std::string what_;
    size_t pos_ = 0;
    model m_;
    std::unordered_map<std::string, int> index_;
    int unnamed_rows_ = 0;
    int constant_var_ = -1;  // Gurobi's objective constant: the column "Constant" (fixed at 1 in Bounds)

    [[noreturn]] void fail_at(int line, const std::string& why) const {
        throw_error(fmt::format("{}:{}: {}", what_, line, why));
    }
    [[noreturn]] void fail(const std::string& why) const {
        fail_at(pos_ < toks_.size() ? toks_[pos_].line : (toks_.empty() ? 1 : toks_.back().line), why);
    }
    bool done() const { return pos_ >= toks_.size(); }
    const std::string& peek(size_t k = 0) const {
        static const std::string none;
        return pos_ + k < toks_.size() ? toks_[pos_ + k].text : none;
    }

    // The section a keyword at the cursor opens (consuming it), or none (consuming nothing).
    section at_section() {
        if (done()) return section::none;
        const std::string w = lower(peek()), next = lower(peek(1));
        auto take = [&](size_t n, section s) {
            pos_ += n;
            return s;
        };
        if (w == "minimize" || w == "minimise" || w == "minimum" || w == "min") return take(1, section::objective_min);
        if (w == "maximize" || w == "maximise" || w == "maximum" || w == "max") return take(1, section::objective_max);
        if ((w == "subject" && next == "to") || (w == "such" && next == "that")) return take(2, section::rows);
        if (w == "st" || w == "s.t." || w == "st.") return take(1, section::rows);
        if (w == "bounds" || w == "bound") return take(1, section::bounds);
        if ((w == "general" || w == "lazy" || w == "user") && (next == "constraints" || next == "cuts"))
            return section::unsupported;
        if (w == "generals" || w == "general" || w == "gen") return take(1, section::generals);
        if (w == "binaries" || w == "binary" || w == "bin") return take(1, section::binaries);
        if (w == "semi-continuous" || w == "semi-continuous:" || w == "semis" || w == "semi" || w == "sos" ||
            w == "pwlobj" || w == "sos1" || w == "sos2" || w == "declarations")
            return section::unsupported;
        if (w == "end") return take(1, section::end);
        return section::none;
    }
    bool keyword_at_cursor() {
        const size_t save = pos_;
        const bool kw = at_section() != section::none;
        pos_ = save;
        return kw;
    }

    // A token that names a variable: not a number, keyword, operator or label, and nothing the CPLEX grammar would
    // read differently.
    bool is_name(const std::string& s) const {
        if (s.empty() || s.back() == ':') return false;
        const char c0 = s[0];
        if (std::isdigit((unsigned char)c0) || c0 == '.') return false;
        for (char c : s)
            if (c == '+' || c == '-' || c == '*' || c == '^' || c == '<' || c == '>' || c == '=' || c == ':')
                return false;
        return true;
    }
    void check_token(const std::string& s) const {
        if (s == "]" || s == "^" || s == "*" || s.rfind("^", 0) == 0 || s.rfind("/", 0) == 0)
            fail(fmt::format("'{}' outside a quadratic bracket [ ... ]", s));
        if (s.size() > 1 && s[0] == '[') fail(fmt::format("'{}': write the quadratic bracket '[' apart", s));
        if (s == "->" || s == "<-") fail("indicator constraints (->) are not supported");
    }

    int var(const std::string& name) {
        auto it = index_.find(name);
        if (it != index_.end()) return it->second;
        const int j = m_.add_var(name, var_type::continuous, 0.0, inf);
        index_.emplace(name, j);
        return j;
    }

    // `name:` or `name :` at the cursor (consumed); "" when there is none.
    std::string label() {
        const std::string& t = peek();
        if (t.size() > 1 && t.back() == ':') {
            pos_++;
            return t.substr(0, t.size() - 1);
        }
        if (is_name(t) && peek(1) == ":") {
            pos_ += 2;
            return t;
        }
        return "";
    }

    // Signed terms up to a sense, a label, a keyword or the end. A number with no variable after it adds to
    // *constant; in the objective, so does a number times `Constant`. A quadratic bracket adds to *quad.
    std::vector<term> linear(double* constant, bool objective, std::vector<quad_term>* quad) {
        std::vector<term> terms;
        bool first = true;
        while (!done()) {
            const std::string& t = peek();
            if (t != "[") check_token(t);
            if (is_sense(t) || t.back() == ':' || peek(1) == ":" || keyword_at_cursor()) break;
            double sign = 1.0;
            bool signed_term = false;
            while (peek() == "+" || peek() == "-") {
                sign = peek() == "-" ? -sign : sign;
                signed_term = true;
                pos_++;
            }
            double v = 0.0;
            if (!signed_term && (peek()[0] == '+' || peek()[0] == '-') && parse_number(peek(), &v)) signed_term = true;
            if (!first && !signed_term) break;  // the next row starts
            if (done()) fail("the expression ends after a sign");
            if (peek() == "[") {
                quadratic_bracket(sign, objective, quad);
                first = false;
                continue;
            }
            check_token(peek());
            double coef = 1.0;
            bool has_number = false;
            if (parse_number(peek(), &v)) {
                coef = v;
                has_number = true;
                pos_++;
            }
            const std::string& n = peek();
            if (!done() && is_name(n) && !keyword_at_cursor() && peek(1) != ":") {
                terms.push_back({var(n), sign * coef});
                if (objective && n == "Constant") constant_var_ = terms.back().var;
                pos_++;
            } else if (has_number) {
                *constant += sign * coef;
            } else {
                fail(fmt::format("'{}' is not a term", done() ? std::string("end of file") : n));
            }
            first = false;
        }
        return terms;
    }

    // `name ^ 2`, `name ^2`, `name^2` (a square) or `name * name` (a product) at the cursor, consumed: the pair.
    std::pair<int, int> quadratic_factor() {
        std::string n = peek();
        if (n == "]" || n == "[" || n == "]/2") fail(fmt::format("'{}' where a quadratic term was expected", n));
        const size_t star = n.find('*');
        if (star != std::string::npos && star > 0 && is_name(n.substr(0, star)) && is_name(n.substr(star + 1))) {
            const int a = var(n.substr(0, star)), b = var(n.substr(star + 1));  // `x*y`
            pos_++;
            return {std::min(a, b), std::max(a, b)};
        }
        const size_t caret = n.find('^');
        if (caret != std::string::npos && caret > 0 && n.substr(caret) == "^2") {
            n = n.substr(0, caret);
            if (!is_name(n)) fail(fmt::format("'{}' is not a variable name", n));
            pos_++;
            const int j = var(n);
            return {j, j};
        }
        if (!is_name(n)) fail(fmt::format("'{}' is not a variable name in a quadratic term", n));
        const int a = var(n);
        pos_++;
        if (peek() == "^2" || (peek() == "^" && peek(1) == "2")) {
            pos_ += peek() == "^2" ? 1 : 2;
            return {a, a};
        }
        if (peek() == "^") fail(fmt::format("'{} ^ {}': only squares are quadratic", n, peek(1)));
        if (peek() != "*") fail(fmt::format("'{}' in a quadratic bracket is neither a square nor a product", n));
        pos_++;
        if (!is_name(peek())) fail(fmt::format("'{}' is not a variable name in a quadratic term", peek()));
        const int b = var(peek());
        pos_++;
        return {std::min(a, b), std::max(a, b)};
    }

    // `[ terms ]` (rows) or `[ terms ] / 2` (the objective: the bracket holds twice its quadratic coefficients) at the
    // cursor; each term sign * number * factor is added to *quad, halved in the objective.
    void quadratic_bracket(double outer_sign, bool objective, std::vector<quad_term>* quad) {
        const int line = toks_[pos_].line;
        pos_++;  // [
        bool first = true;
        while (!done() && peek() != "]" && peek() != "]/2") {
            double sign = outer_sign;
            bool signed_term = false;
            while (peek() == "+" || peek() == "-") {
                sign = peek() == "-" ? -sign : sign;
                signed_term = true;
                pos_++;
            }
            if (!first && !signed_term && !(peek()[0] == '+' || peek()[0] == '-'))
                fail(fmt::format("'{}': quadratic terms are separated by + or -", peek()));
            double coef = 1.0;
            if (parse_number(peek(), &coef)) {
                pos_++;
            } else if (peek().size() > 1 && (peek()[0] == '-' || peek()[0] == '+') && is_name(peek().substr(1))) {
                sign = peek()[0] == '-' ? -sign : sign;  // `-y` (the sign against the name)
                toks_[pos_].text.erase(0, 1);
            }
            if (done()) break;
            const auto [i, j] = quadratic_factor();
            quad->push_back({i, j, sign * coef * (objective ? 0.5 : 1.0)});
            first = false;
        }
        if (done()) fail_at(line, "a quadratic bracket '[' without ']'");
        bool halved = peek() == "]/2";
        pos_++;  // ] or ]/2
        if (!halved && peek() == "/2") {
            halved = true;
            pos_++;
        } else if (!halved && peek() == "/" && peek(1) == "2") {
            halved = true;
            pos_ += 2;
        }
        if (objective && !halved) fail_at(line, "the objective's quadratic bracket must end with '] / 2'");
        if (!objective && halved) fail_at(line, "a constraint's quadratic bracket takes no '/ 2'");
    }

    void objective() {
        label();
        double constant = 0.0;
        for (const term& t : linear(&constant, true, &m_.obj_quad)) m_.vars[t.var].obj += t.coef;
        m_.obj_constant += constant;
    }

    // A right-hand side: [sign] number | [sign] inf.
    double value(bool allow_infinite) {
        double sign = 1.0;
        while (peek() == "+" || peek() == "-") {
            sign = peek() == "-" ? -sign : sign;
            pos_++;
        }
        if (done()) fail("a number is missing at the end of the file");
        std::string t = peek();
        if (t.size() > 1 && (t[0] == '+' || t[0] == '-') && std::isalpha((unsigned char)t[1])) {
            sign = t[0] == '-' ? -sign : sign;
            t = t.substr(1);
        }
        const std::string l = lower(t);
        double v = 0.0;
        if (l == "inf" || l == "infinity") {
            if (!allow_infinite) fail("an infinite right-hand side");
            v = inf;
        } else if (!parse_number(t, &v)) {
            fail(fmt::format("'{}' is not a number", t));
        }
        pos_++;
        return v * sign;
    }

    void rows() {
        while (!done() && !keyword_at_cursor()) {
            const int line = toks_[pos_].line;
            std::string name = label();
            double constant = 0.0;
            std::vector<quad_term> quad;
            std::vector<term> terms = linear(&constant, false, &quad);
            if (done() || !is_sense(peek())) fail_at(line, "a row without <=, >= or =");
            const row_sense s = sense_of(peek());
            pos_++;
            const double rhs = value(false) - constant;
            if (!done()) check_token(peek());
            if (name.empty()) name = fmt::format("R{}", ++unnamed_rows_);
            m_.add_con(name, std::move(terms), s, rhs);
            m_.cons.back().quad = merged_quad(std::move(quad));
        }
    }

    void bound_on(int j, const std::string& op, double v, bool value_on_left) {
        variable& x = m_.vars[j];
        row_sense s = sense_of(op);
        if (value_on_left && s != row_sense::eq) s = s == row_sense::le ? row_sense::ge : row_sense::le;
        if (s == row_sense::eq) {
            x.lb = x.ub = v;
        } else if (s == row_sense::le) {
            x.ub = v;
        } else {
            x.lb = v;
        }
    }

    void bounds() {
        while (!done() && !keyword_at_cursor()) {
            const int line = toks_[pos_].line;
            if (is_name(peek())) {
                const int j = var(peek());
                pos_++;
                if (lower(peek()) == "free") {
                    m_.vars[j].lb = -inf;
                    m_.vars[j].ub = inf;
                    pos_++;
                    continue;
                }
                if (!is_sense(peek())) fail_at(line, "a bound without <=, >=, = or free");
                const std::string op = peek();
                pos_++;
                bound_on(j, op, value(true), false);
                continue;
            }
            const double lo = value(true);
            if (!is_sense(peek())) fail_at(line, "a bound without <=, >= or =");
            const std::string op1 = peek();
            pos_++;
            if (!is_name(peek())) fail_at(line, "a bound without a variable");
            const int j = var(peek());
            pos_++;
            bound_on(j, op1, lo, true);
            if (is_sense(peek())) {
                const std::string op2 = peek();
                pos_++;
                bound_on(j, op2, value(true), false);
            }
        }
    }

    void type_list(var_type t) {
        while (!done() && !keyword_at_cursor()) {
            if (!is_name(peek())) fail(fmt::format("'{}' is not a variable name", peek()));
            variable& x = m_.vars[var(peek())];
            x.type = t;
            if (t == var_type::binary) {
                x.lb = std::max(x.lb, 0.0);
                x.ub = std::min(x.ub, 1.0);
            }
            pos_++;
        }
    }

    // `+ c Constant` with no bound line for Constant: Gurobi's constant all the same (fixed at 1), when no row uses it.
    void fix_gurobi_constant() {
        if (constant_var_ < 0) return;
        variable& v = m_.vars[(size_t)constant_var_];
        for (const constraint& c : m_.cons)
            for (const term& t : c.terms)
                if (t.var == constant_var_) return;
        if (v.lb == 0.0 && v.ub == inf && v.type == var_type::continuous) v.lb = v.ub = 1.0;
    }

    // Gurobi writes repeated row names as they are; the IR wants them unique: the second `c` becomes `c#2`.
    model finish() {
        std::unordered_map<std::string, int> seen;
        for (constraint& c : m_.cons) {
            int& k = seen[c.name];
            if (++k > 1) {
                std::string renamed = fmt::format("{}#{}", c.name, k);
                while (seen.count(renamed)) renamed += "'";
                seen[renamed] = 1;
                c.name = renamed;
            }
        }
        m_.obj_quad = merged_quad(std::move(m_.obj_quad));
        fix_gurobi_constant();
        fold_constant_column(m_);
        return std::move(m_);
    }
};

}  // namespace

model read_lp_dialect(const std::string& text, const std::string& what) {
    return lp_parser(text, what).parse();
}

}  // namespace trex::optmodel
