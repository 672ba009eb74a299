#include "trex/optmodel/ir/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "trex/base/error.hpp"
#include "trex/base/rng.hpp"

namespace trex::optmodel {

const char* var_type_name(var_type t) {
    switch (t) {
        case var_type::continuous:
            return "continuous";
        case var_type::integer:
            return "integer";
        case var_type::binary:
            return "binary";
    }
    return "?";
}

const char* row_sense_name(row_sense s) {
    switch (s) {
        case row_sense::le:
            return "<=";
        case row_sense::eq:
            return "=";
        case row_sense::ge:
            return ">=";
    }
    return "?";
}

int model::add_var(std::string vname, var_type type, double lb, double ub, double obj_coef) {
    if (type == var_type::binary) {
        lb = std::max(lb, 0.0);
        ub = std::min(ub, 1.0);
    }
    vars.push_back({std::move(vname), type, lb, ub, obj_coef});
    return (int)vars.size() - 1;
}

int model::add_con(std::string cname, std::vector<term> terms, row_sense s, double rhs) {
    // sum repeated variables, keep first-appearance order, drop zeros
    std::vector<term> out;
    std::unordered_map<int, size_t> where;
    for (const term& t : terms) {
        auto it = where.find(t.var);
        if (it == where.end()) {
            where[t.var] = out.size();
            out.push_back(t);
        } else {
            out[it->second].coef += t.coef;
        }
    }
    out.erase(std::remove_if(out.begin(), out.end(), [](const term& t) { return t.coef == 0.0; }), out.end());
    cons.push_back({std::move(cname), std::move(out), s, rhs, {}});
    return (int)cons.size() - 1;
}

bool model::is_mip() const {
    for (const auto& v : vars)
        if (v.type != var_type::continuous) return true;
    return false;
}

bool model::is_quadratic() const {
    if (!obj_quad.empty()) return true;
    for (const auto& c : cons)
        if (!c.quad.empty()) return true;
    return false;
}

std::vector<quad_term> merged_quad(std::vector<quad_term> q) {
    std::vector<quad_term> out;
    std::map<std::pair<int, int>, size_t> where;
    for (quad_term t : q) {
        if (t.i > t.j) std::swap(t.i, t.j);
        auto [it, fresh] = where.emplace(std::make_pair(t.i, t.j), out.size());
        if (fresh)
            out.push_back(t);
        else
            out[it->second].coef += t.coef;
    }
    out.erase(std::remove_if(out.begin(), out.end(), [](const quad_term& t) { return t.coef == 0.0; }), out.end());
    return out;
}

void require_linear(const model& m, const char* what) {
    TREX_CHECK(!m.is_quadratic(), "{} does not support quadratic terms (model '{}')", what, m.name);
}

namespace {

double quad_value(const std::vector<quad_term>& q, const std::vector<double>& x) {
    double s = 0;
    for (const quad_term& t : q) s += t.coef * x[t.i] * x[t.j];
    return s;
}

}  // namespace

long model::nonzeros() const {
    long n = 0;
    for (const auto& c : cons) n += (long)c.terms.size();
    return n;
}

double model::objective_at(const std::vector<double>& x) const {
    double s = obj_constant;
    for (size_t j = 0; j < vars.size() && j < x.size(); j++) s += vars[j].obj * x[j];
    if (!obj_quad.empty() && x.size() >= vars.size()) s += quad_value(obj_quad, x);
    return s;
}

double model::activity(int i, const std::vector<double>& x) const {
    double s = 0;
    for (const term& t : cons[i].terms) s += t.coef * x[t.var];
    return s + quad_value(cons[i].quad, x);
}

namespace {

void validate_quad(const model& m, const std::vector<quad_term>& q, const std::string& where) {
    std::set<std::pair<int, int>> seen;
    const int n = (int)m.vars.size();
    for (const quad_term& t : q) {
        TREX_CHECK(t.i >= 0 && t.j >= 0 && t.i < n && t.j < n,
                   "model '{}': a quadratic term of {} refers to variable {} (model has {})", m.name, where,
                   std::max(t.i, t.j), n);
        TREX_CHECK(t.i <= t.j, "model '{}': a quadratic term of {} is not ordered (i {} > j {})", m.name, where, t.i,
                   t.j);
        TREX_CHECK(std::isfinite(t.coef), "model '{}': {} has a non-finite quadratic coefficient", m.name, where);
        TREX_CHECK(seen.insert({t.i, t.j}).second, "model '{}': {} repeats the quadratic term {} * {}", m.name, where,
                   m.vars[t.i].name, m.vars[t.j].name);
    }
}

}  // namespace

void validate(const model& m) {
    TREX_CHECK(!m.name.empty(), "model has an empty name");
    std::unordered_set<std::string> names;
    for (size_t j = 0; j < m.vars.size(); j++) {
        const variable& v = m.vars[j];
        TREX_CHECK(!v.name.empty(), "model '{}': variable {} has an empty name", m.name, j);
        TREX_CHECK(names.insert(v.name).second, "model '{}': duplicate variable name '{}'", m.name, v.name);
        TREX_CHECK(std::isfinite(v.obj), "model '{}': variable '{}' has a non-finite objective coefficient", m.name,
                   v.name);
        TREX_CHECK(!std::isnan(v.lb) && !std::isnan(v.ub) && v.lb != inf && v.ub != -inf,
                   "model '{}': variable '{}' has invalid bounds", m.name, v.name);
        TREX_CHECK(v.lb <= v.ub, "model '{}': variable '{}' has lb {} > ub {}", m.name, v.name, v.lb, v.ub);
        if (v.type == var_type::binary)
            TREX_CHECK(v.lb >= 0 && v.ub <= 1, "model '{}': binary variable '{}' has bounds outside [0, 1]", m.name,
                       v.name);
    }
    TREX_CHECK(std::isfinite(m.obj_constant), "model '{}': non-finite objective constant", m.name);
    std::unordered_set<std::string> cnames;
    for (size_t i = 0; i < m.cons.size(); i++) {
        const constraint& c = m.cons[i];
        TREX_CHECK(!c.name.empty(), "model '{}': constraint {} has an empty name", m.name, i);
        TREX_CHECK(cnames.insert(c.name).second, "model '{}': duplicate constraint name '{}'", m.name, c.name);
        TREX_CHECK(std::isfinite(c.rhs), "model '{}': constraint '{}' has a non-finite right-hand side", m.name,
                   c.name);
        std::unordered_set<int> seen;
        for (const term& t : c.terms) {
            TREX_CHECK(t.var >= 0 && t.var < (int)m.vars.size(),
                       "model '{}': constraint '{}' refers to variable {} (model has {})", m.name, c.name, t.var,
                       m.vars.size());
            TREX_CHECK(std::isfinite(t.coef), "model '{}': constraint '{}' has a non-finite coefficient", m.name,
                       c.name);
            TREX_CHECK(seen.insert(t.var).second, "model '{}': constraint '{}' repeats variable '{}'", m.name, c.name,
                       m.vars[t.var].name);
        }
        validate_quad(m, c.quad, "constraint '" + c.name + "'");
    }
    validate_quad(m, m.obj_quad, "the objective");
}

namespace {

uint64_t hash_double(double d) {
    if (d == 0.0) d = 0.0;  // -0 == +0
    uint64_t u;
    std::memcpy(&u, &d, 8);
    return mix64(u);
}

uint64_t combine(uint64_t h, uint64_t v) {
    return mix64(h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)));
}

// Order-independent hash of a multiset.
uint64_t multiset_hash(std::vector<uint64_t> v) {
    std::sort(v.begin(), v.end());
    uint64_t h = 0x12345;
    for (uint64_t x : v) h = combine(h, x);
    return h;
}

}  // namespace

uint64_t canonical_hash(const model& m) {
    const size_t n = m.vars.size(), k = m.cons.size();
    std::vector<uint64_t> vc(n), cc(k);
    for (size_t j = 0; j < n; j++) {
        const variable& v = m.vars[j];
        uint64_t h = combine((uint64_t)v.type + 1, hash_double(v.lb));
        h = combine(h, hash_double(v.ub));
        vc[j] = combine(h, hash_double(v.obj));
    }
    for (size_t i = 0; i < k; i++) cc[i] = combine((uint64_t)m.cons[i].sense + 7, hash_double(m.cons[i].rhs));
    // quadratic terms: a square colours its variable; a row's or the objective's terms colour the holder (a product's
    // colour is refined with its two variables below)
    for (const quad_term& t : m.obj_quad)
        if (t.i == t.j) vc[t.i] = combine(vc[t.i], combine(0x51, hash_double(t.coef)));
    for (size_t i = 0; i < k; i++)
        for (const quad_term& t : m.cons[i].quad) {
            cc[i] = combine(cc[i], combine(0x52, hash_double(t.coef)));
            if (t.i == t.j) vc[t.i] = combine(vc[t.i], combine(0x53, hash_double(t.coef)));
        }
    // column lists for the variable side of the refinement
    std::vector<std::vector<std::pair<int, double>>> cols(n);
    for (size_t i = 0; i < k; i++)
        for (const term& t : m.cons[i].terms) cols[t.var].push_back({(int)i, t.coef});
    for (int round = 0; round < 3; round++) {
        std::vector<uint64_t> ncc(k), nvc(n);
        for (size_t i = 0; i < k; i++) {
            std::vector<uint64_t> nb;
            for (const term& t : m.cons[i].terms) nb.push_back(combine(vc[t.var], hash_double(t.coef)));
            ncc[i] = combine(cc[i], multiset_hash(std::move(nb)));
        }
        for (size_t j = 0; j < n; j++) {
            std::vector<uint64_t> nb;
            for (auto [i, coef] : cols[j]) nb.push_back(combine(cc[i], hash_double(coef)));
            nvc[j] = combine(vc[j], multiset_hash(std::move(nb)));
        }
        cc.swap(ncc);
        vc.swap(nvc);
    }
    uint64_t h = combine((uint64_t)m.sense + 3, hash_double(m.obj_constant));
    std::vector<uint64_t> products;
    for (const quad_term& t : m.obj_quad)
        products.push_back(
            combine(hash_double(t.coef), vc[t.i] < vc[t.j] ? combine(vc[t.i], vc[t.j]) : combine(vc[t.j], vc[t.i])));
    h = combine(h, multiset_hash(std::move(products)));
    h = combine(h, multiset_hash(vc));
    return combine(h, multiset_hash(cc));
}

void fold_constant_column(model& m) {
    for (size_t j = 0; j < m.vars.size(); j++) {
        const variable& v = m.vars[j];
        const bool constant_name = v.name == "obj_constant" || v.name == "Constant" || v.name == "ONE_VAR_CONSTANT";
        if (!constant_name || v.lb != 1.0 || v.ub != 1.0) continue;
        bool in_row = false;
        auto in_quad = [&](const std::vector<quad_term>& q) {
            for (const quad_term& t : q) in_row = in_row || t.i == (int)j || t.j == (int)j;
        };
        for (const auto& c : m.cons) {
            for (const term& t : c.terms) in_row = in_row || t.var == (int)j;
            in_quad(c.quad);
        }
        in_quad(m.obj_quad);
        if (in_row) return;
        m.obj_constant += v.obj;
        m.vars.erase(m.vars.begin() + (long)j);
        auto shift = [&](int& v) { v -= v > (int)j; };
        for (auto& c : m.cons) {
            for (term& t : c.terms) shift(t.var);
            for (quad_term& q : c.quad) shift(q.i), shift(q.j);
        }
        for (quad_term& q : m.obj_quad) shift(q.i), shift(q.j);
        return;
    }
}

}  // namespace trex::optmodel
