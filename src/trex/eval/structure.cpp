#include "trex/eval/structure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

namespace trex::eval {

namespace {

using namespace trex::optmodel;

std::string num_key(double x) {
    if (x == 0.0) return "0";
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    return fmt::format("{:.12g}", x);
}

struct nrow {
    std::vector<std::pair<int, double>> terms;  // (var, coef), normal form
    char sense = 'L';                           // 'L' (<=) or 'E'
    double rhs = 0.0;
    bool sign_free = false;  // an equality equal to its own negation up to reordering (rhs 0)
};

struct ngraph {
    int nv = 0, nc = 0;
    std::vector<std::string> vlabel, clabel;
    std::vector<nrow> rows;
    double obj_constant = 0.0;
    long nnz = 0;
};

ngraph normalise(const model& m) {
    ngraph g;
    const double s = m.sense == obj_sense::maximize ? -1.0 : 1.0;
    g.obj_constant = s * m.obj_constant;
    g.nv = (int)m.vars.size();
    for (const variable& v : m.vars) {
        const bool integral = v.type != var_type::continuous;
        double lb = v.lb, ub = v.ub;
        if (v.type == var_type::binary) {
            lb = std::max(lb, 0.0);
            ub = std::min(ub, 1.0);
        }
        g.vlabel.push_back(
            fmt::format("v|{}|{}|{}|{}", integral ? "I" : "C", num_key(lb), num_key(ub), num_key(s * v.obj)));
    }
    for (const constraint& c : m.cons) {
        nrow r;
        for (const term& t : c.terms)
            if (t.coef != 0.0) r.terms.push_back({t.var, t.coef});
        if (r.terms.empty()) continue;
        r.rhs = c.rhs;
        r.sense = c.sense == row_sense::eq ? 'E' : 'L';
        double flip = c.sense == row_sense::ge ? -1.0 : 1.0;
        if (c.sense == row_sense::eq) {
            if (c.rhs < 0)
                flip = -1.0;
            else if (c.rhs == 0) {
                std::vector<double> a, b;
                for (auto& [j, x] : r.terms) {
                    a.push_back(x);
                    b.push_back(-x);
                }
                std::sort(a.begin(), a.end());
                std::sort(b.begin(), b.end());
                std::vector<std::string> ka, kb;
                for (double x : a) ka.push_back(num_key(x));
                for (double x : b) kb.push_back(num_key(x));
                if (ka == kb)
                    r.sign_free = true;
                else if (kb < ka)
                    flip = -1.0;
            }
        }
        for (auto& [j, x] : r.terms) x *= flip;
        r.rhs *= flip;
        if (r.rhs == 0.0) r.rhs = 0.0;  // no -0
        g.clabel.push_back(fmt::format("c|{}|{}|{}", r.sense, num_key(r.rhs), r.sign_free ? "s" : ""));
        g.nnz += (long)r.terms.size();
        g.rows.push_back(std::move(r));
    }
    g.nc = (int)g.rows.size();
    return g;
}

// The disjoint union of both graphs with shared label ids: nodes [A vars, A rows, B vars, B rows].
struct union_graph {
    int nA = 0, n = 0;
    std::vector<int> init;                              // initial colour (label id)
    std::vector<std::vector<std::pair<int, int>>> adj;  // (edge label id, neighbour)
};

union_graph build_union(const ngraph& a, const ngraph& b) {
    union_graph u;
    u.nA = a.nv + a.nc;
    u.n = u.nA + b.nv + b.nc;
    u.init.resize((size_t)u.n);
    u.adj.resize((size_t)u.n);
    std::map<std::string, int> labels, edges;
    auto lid = [&](std::map<std::string, int>& m, const std::string& k) {
        auto it = m.find(k);
        if (it != m.end()) return it->second;
        const int id = (int)m.size();
        m.emplace(k, id);
        return id;
    };
    // label ids in sorted-key order would be nicer for determinism, but ids only need to be consistent
    auto add = [&](const ngraph& g, int off) {
        for (int j = 0; j < g.nv; j++) u.init[(size_t)(off + j)] = lid(labels, g.vlabel[(size_t)j]);
        for (int i = 0; i < g.nc; i++) {
            const int node = off + g.nv + i;
            u.init[(size_t)node] = lid(labels, g.clabel[(size_t)i]);
            const nrow& r = g.rows[(size_t)i];
            for (auto& [j, x] : r.terms) {
                const int e = lid(edges, r.sign_free ? "±" + num_key(std::fabs(x)) : num_key(x));
                u.adj[(size_t)node].push_back({e, off + j});
                u.adj[(size_t)(off + j)].push_back({e, node});
            }
        }
    };
    add(a, 0);
    add(b, u.nA);
    return u;
}

struct matcher {
    const ngraph& a;
    const ngraph& b;
    const union_graph& u;
    long budget;
    bool exhausted = false;

    // Refines colours to a stable partition; returns the number of colours.
    int refine(std::vector<int>& col) const {
        int classes = 0;
        {
            std::vector<int> s(col);
            std::sort(s.begin(), s.end());
            classes = (int)(std::unique(s.begin(), s.end()) - s.begin());
        }
        std::vector<std::pair<int, int>> sig;
        while (true) {
            std::map<std::pair<int, std::vector<std::pair<int, int>>>, int> ids;
            std::vector<int> next((size_t)u.n);
            for (int v = 0; v < u.n; v++) {
                sig.clear();
                for (auto& [e, w] : u.adj[(size_t)v]) sig.push_back({e, col[(size_t)w]});
                std::sort(sig.begin(), sig.end());
                auto key = std::make_pair(col[(size_t)v], sig);
                auto it = ids.find(key);
                if (it == ids.end()) it = ids.emplace(std::move(key), (int)ids.size()).first;
                next[(size_t)v] = it->second;
            }
            // canonical renumbering: ids were assigned in node order, which is not symmetric between A and B;
            // renumber by the sorted signature order instead (map order), so equal signatures get equal ids.
            std::vector<int> rank(ids.size());
            int r = 0;
            for (auto& [k, id] : ids) rank[(size_t)id] = r++;
            for (int v = 0; v < u.n; v++) next[(size_t)v] = rank[(size_t)next[(size_t)v]];
            const int nclasses = (int)ids.size();
            col.swap(next);
            if (nclasses == classes) return nclasses;
            classes = nclasses;
        }
    }

    // Per colour: count on the A side minus count on the B side all zero?
    bool balanced(const std::vector<int>& col, int* bad_node) const {
        std::unordered_map<int, int> d;
        for (int v = 0; v < u.n; v++) d[col[(size_t)v]] += v < u.nA ? 1 : -1;
        for (int v = 0; v < u.n; v++)
            if (d[col[(size_t)v]] != 0) {
                if (bad_node) *bad_node = v;
                return false;
            }
        return true;
    }

    bool verify(const std::vector<int>& col) const {
        // colour -> B node, then the bijection
        std::unordered_map<int, int> at_b;
        for (int v = u.nA; v < u.n; v++) at_b[col[(size_t)v]] = v - u.nA;
        std::vector<int> pv((size_t)a.nv), pc((size_t)a.nc);
        for (int j = 0; j < a.nv; j++) {
            const int w = at_b.at(col[(size_t)j]);
            if (w >= b.nv) return false;
            pv[(size_t)j] = w;
            if (a.vlabel[(size_t)j] != b.vlabel[(size_t)w]) return false;
        }
        for (int i = 0; i < a.nc; i++) {
            const int w = at_b.at(col[(size_t)(a.nv + i)]) - b.nv;
            if (w < 0) return false;
            pc[(size_t)i] = w;
            const nrow& ra = a.rows[(size_t)i];
            const nrow& rb = b.rows[(size_t)w];
            if (a.clabel[(size_t)i] != b.clabel[(size_t)w] || ra.terms.size() != rb.terms.size()) return false;
            std::unordered_map<int, std::string> bt;
            for (auto& [j, x] : rb.terms) bt[j] = num_key(x);
            bool same = true, negated = true;
            for (auto& [j, x] : ra.terms) {
                auto it = bt.find(pv[(size_t)j]);
                if (it == bt.end()) return false;
                if (it->second != num_key(x)) same = false;
                if (it->second != num_key(-x)) negated = false;
            }
            if (!same && !(ra.sign_free && negated)) return false;
        }
        return true;
    }

    bool search(std::vector<int> col) {
        if (--budget < 0) {
            exhausted = true;
            return false;
        }
        refine(col);
        if (!balanced(col, nullptr)) return false;
        // the smallest colour class with more than one node per side
        std::unordered_map<int, int> count;
        for (int v = 0; v < u.nA; v++) count[col[(size_t)v]]++;
        int best = -1, best_n = 0;
        for (int v = 0; v < u.nA; v++) {
            const int c = col[(size_t)v], k = count[c];
            if (k > 1 && (best < 0 || k < best_n || (k == best_n && c < best))) {
                best = c;
                best_n = k;
            }
        }
        if (best < 0) return verify(col);
        int pick = -1;
        for (int v = 0; v < u.nA && pick < 0; v++)
            if (col[(size_t)v] == best) pick = v;
        const int fresh = *std::max_element(col.begin(), col.end()) + 1;
        for (int w = u.nA; w < u.n; w++) {
            if (col[(size_t)w] != best) continue;
            std::vector<int> c2 = col;
            c2[(size_t)pick] = fresh;
            c2[(size_t)w] = fresh;
            if (search(std::move(c2))) return true;
            if (exhausted) return false;
        }
        return false;
    }
};

std::string describe_node(const ngraph& g, int v) {
    if (v < g.nv) {
        std::string l = g.vlabel[(size_t)v];  // v|type|lb|ub|obj
        std::vector<std::string> p;
        size_t b = 0;
        while (true) {
            size_t e = l.find('|', b);
            p.push_back(l.substr(b, e == std::string::npos ? std::string::npos : e - b));
            if (e == std::string::npos) break;
            b = e + 1;
        }
        return fmt::format("a {} variable in [{}, {}] with objective coefficient {}",
                           p[1] == "I" ? "integer" : "continuous", p[2], p[3], p[4]);
    }
    const nrow& r = g.rows[(size_t)(v - g.nv)];
    return fmt::format("a constraint ({} {} terms, rhs {})", r.sense == 'E' ? "= with" : "<= with", r.terms.size(),
                       num_key(r.rhs));
}

}  // namespace

structure_result compare_structure(const model& answer, const model& reference, const structure_options& opt) {
    structure_result res;
    if (answer.is_quadratic() || reference.is_quadratic()) {
        // the graph holds the linear part only: a quadratic model is never called equivalent
        res.detail = fmt::format("quadratic terms in the {} (the structure judge compares linear models)",
                                 answer.is_quadratic() ? "answer" : "reference");
        return res;
    }
    const ngraph a = normalise(answer), b = normalise(reference);
    if (num_key(a.obj_constant) != num_key(b.obj_constant)) {
        res.detail =
            fmt::format("objective constant {} vs reference {}", num_key(a.obj_constant), num_key(b.obj_constant));
        return res;
    }
    if (a.nv != b.nv || a.nc != b.nc || a.nnz != b.nnz) {
        res.detail = fmt::format("size: {} variables, {} constraints, {} nonzeros vs reference {}, {}, {}", a.nv, a.nc,
                                 a.nnz, b.nv, b.nc, b.nnz);
        return res;
    }
    const union_graph u = build_union(a, b);
    matcher m{a, b, u, opt.search_budget};
    std::vector<int> col = u.init;
    m.refine(col);
    int bad = -1;
    if (!m.balanced(col, &bad)) {
        res.detail =
            "colour refinement separates the models: " +
            (bad < u.nA ? "the answer has " + describe_node(a, bad) + " without a counterpart in the reference"
                        : "the reference has " + describe_node(b, bad - u.nA) + " without a counterpart in the answer");
        return res;
    }
    if (m.search(col)) {
        res.equivalent = true;
        return res;
    }
    res.detail = m.exhausted ? "no matching found within the search budget (highly symmetric model)"
                             : "colour refinement agrees but no exact matching of variables and constraints exists";
    return res;
}

}  // namespace trex::eval
