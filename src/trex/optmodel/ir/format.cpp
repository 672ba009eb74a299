#include "trex/optmodel/ir/format.hpp"

#include <array>
#include <charconv>
#include <cctype>
#include <cmath>
#include <unordered_set>

#include "trex/base/error.hpp"

namespace trex::optmodel {

std::string format_number(double x) {
    TREX_ASSERT(std::isfinite(x));
    if (x == 0.0) return "0";
    if (x == std::floor(x) && std::fabs(x) < 1e15) return fmt::format("{:.0f}", x);
    std::array<char, 64> buf;
    auto res = std::to_chars(buf.data(), buf.data() + buf.size(), x);
    TREX_ASSERT(res.ec == std::errc());
    return std::string(buf.data(), res.ptr);
}

std::string format_value(double x, int digits) {
    if (!std::isfinite(x)) return x > 0 ? "inf" : (x < 0 ? "-inf" : "nan");
    if (std::fabs(x) < 1e-12) return "0";
    const double r = std::round(x);
    if (std::fabs(x - r) <= 1e-9 * std::max(1.0, std::fabs(x)) && std::fabs(r) < 1e15) return fmt::format("{:.0f}", r);
    std::string s = fmt::format("{:.{}g}", x, digits);
    if (s.find('e') == std::string::npos && s.find('.') != std::string::npos) {
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
    }
    return s;
}

namespace {

bool reserved(const std::string& s) {
    static const std::unordered_set<std::string> words = {
        // CPLEX LP sections and keywords
        "min", "max", "minimize", "maximize", "minimum", "maximum", "st", "s.t.", "subject", "such", "bounds",
        "bound", "general", "generals", "gen", "integer", "integers", "binary", "binaries", "bin", "end", "free",
        "inf", "infinity", "semi", "semis", "sos", "obj", "rhs", "bnd", "marker",
        // MathProg reserved words
        "and", "by", "cross", "diff", "div", "else", "if", "in", "inter", "less", "mod", "not", "or", "symdiff",
        "then", "union", "within"};
    std::string low;
    for (char c : s) low += (char)std::tolower((unsigned char)c);
    return words.count(low) > 0;
}

std::string sanitize(const std::string& raw) {
    std::string s;
    for (char c : raw) s += (std::isalnum((unsigned char)c) || c == '_') ? c : '_';
    if (s.empty()) s = "n";
    // 'e'/'E' followed by a digit or nothing reads as an exponent in some LP readers
    const bool exp_like = (s[0] == 'e' || s[0] == 'E') && (s.size() == 1 || std::isdigit((unsigned char)s[1]));
    if (std::isdigit((unsigned char)s[0]) || exp_like || reserved(s)) s = "n_" + s;
    if (s.size() > 200) s.resize(200);
    return s;
}

std::vector<std::string> unique_names(const std::vector<std::string>& raw, std::unordered_set<std::string>& used) {
    std::vector<std::string> out;
    out.reserve(raw.size());
    for (const auto& r : raw) {
        std::string s = sanitize(r);
        if (used.count(s)) {
            for (int k = 2;; k++) {
                std::string t = fmt::format("{}_{}", s, k);
                if (!used.count(t)) {
                    s = t;
                    break;
                }
            }
        }
        used.insert(s);
        out.push_back(s);
    }
    return out;
}

}  // namespace

safe_names make_safe_names(const model& m) {
    std::vector<std::string> vr, cr;
    for (const auto& v : m.vars) vr.push_back(v.name);
    for (const auto& c : m.cons) cr.push_back(c.name);
    // one namespace for all names: MathProg needs variables and constraints distinct; "obj" is reserved above
    std::unordered_set<std::string> used = {"obj", "OBJ", "obj_constant"};
    safe_names n;
    n.vars = unique_names(vr, used);
    n.cons = unique_names(cr, used);
    return n;
}

}  // namespace trex::optmodel
