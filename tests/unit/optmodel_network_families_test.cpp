// Known optima of the network families (p_median, multi_commodity_flow, fixed_charge_network, generalized_flow,
// max_covering, spanning_tree): each optimum verify() reports is compared with a computation from the instance's
// data.json alone (enumeration of the discrete decisions, a recursion, or another formulation solved here), and the
// designed infeasible / unbounded instances with their status.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "trex/optmodel/families/common.hpp"
#include "trex/optmodel/solvers/solve.hpp"
#include "trex/optmodel/solvers/verify.hpp"

namespace trex::optmodel::families {
TREX_FAMILY(p_median);
TREX_FAMILY(multi_commodity_flow);
TREX_FAMILY(fixed_charge_network);
TREX_FAMILY(generalized_flow);
TREX_FAMILY(max_covering);
TREX_FAMILY(spanning_tree);
}  // namespace trex::optmodel::families

using namespace trex::optmodel;

namespace {
std::vector<std::string> names_of(const ojson& a) {
    std::vector<std::string> v;
    for (const auto& x : a) v.push_back(x.get<std::string>());
    return v;
}
double val(const ojson& v) {
    return v.get<double>();
}
}  // namespace

// Every choice of exactly p sites; each customer goes to its nearest opened site (data.json only).
TEST(FamilyKnownOptima, PMedian) {
    for (uint64_t seed = 1; seed <= 4; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1 + (int)(seed % 2);
        const instance in = generate(families::p_median(), rq);
        const ojson& d = in.data;
        const auto S = names_of(d["sites"]), C = names_of(d["customers"]);
        const int p = (int)val(d["p"]);
        double best = 1e300;
        for (unsigned mask = 0; mask < (1u << S.size()); mask++) {
            if (__builtin_popcount(mask) != p) continue;
            double total = 0;
            for (const auto& c : C) {
                double nearest = 1e300;
                for (size_t i = 0; i < S.size(); i++)
                    if (mask >> i & 1) nearest = std::min(nearest, val(d["distance"][S[i]][c]));
                total += val(d["weight"][c]) * nearest;
            }
            best = std::min(best, total);
        }
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal) << seed;
        EXPECT_NEAR(v.objective, best, 1e-6) << seed;
    }
}

// Path formulation built from data.json: every simple origin-destination path of each commodity is a column (cost: sum
// of its arc costs), each commodity's path flows add up to its quantity, each arc's path flows stay within its
// capacity; solved by GLPK. The arc formulation's optimum must equal it.
TEST(FamilyKnownOptima, MultiCommodityFlow) {
    for (uint64_t seed = 1; seed <= 4; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1;
        const instance in = generate(families::multi_commodity_flow(), rq);
        const ojson& d = in.data;
        const auto A = names_of(d["arcs"]), K = names_of(d["commodities"]);
        model pm;
        std::vector<std::vector<term>> arc_terms(A.size());
        for (size_t k = 0; k < K.size(); k++) {
            const std::string o = d["origin"][K[k]].get<std::string>(), t = d["destination"][K[k]].get<std::string>();
            std::vector<term> demand;
            std::vector<size_t> path;
            std::vector<std::string> visited = {o};
            std::function<void(const std::string&)> dfs = [&](const std::string& at) {
                if (at == t) {
                    double c = 0;
                    for (size_t a : path) c += val(d["cost"][A[a]]);
                    const int v = pm.add_var("p" + std::to_string(pm.vars.size()), var_type::continuous, 0, inf, c);
                    demand.push_back({v, 1});
                    for (size_t a : path) arc_terms[a].push_back({v, 1});
                    return;
                }
                for (size_t a = 0; a < A.size(); a++) {
                    if (d["from"][A[a]].get<std::string>() != at) continue;
                    const std::string nx = d["to"][A[a]].get<std::string>();
                    if (std::find(visited.begin(), visited.end(), nx) != visited.end()) continue;
                    visited.push_back(nx);
                    path.push_back(a);
                    dfs(nx);
                    path.pop_back();
                    visited.pop_back();
                }
            };
            dfs(o);
            pm.add_con("q" + std::to_string(k), demand, row_sense::eq, val(d["quantity"][K[k]]));
        }
        for (size_t a = 0; a < A.size(); a++)
            if (!arc_terms[a].empty())
                pm.add_con("u" + std::to_string(a), arc_terms[a], row_sense::le, val(d["capacity"][A[a]]));
        const solve_result ref = solve_glpk(pm);
        ASSERT_EQ(ref.status, solve_status::optimal) << seed;
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal) << seed;
        EXPECT_NEAR(v.objective, ref.objective, 1e-6) << seed;
    }
    gen_request bad;
    bad.seed = 5;
    bad.want = design::infeasible;
    EXPECT_EQ(verify(generate(families::multi_commodity_flow(), bad).m).status, solve_status::infeasible);
}

// Every subset of opened arcs (fixed costs summed from data.json), each with its min-cost flow LP over the opened
// arcs only (built from data.json, solved by GLPK); the cheapest total must equal the MILP's optimum.
TEST(FamilyKnownOptima, FixedChargeNetwork) {
    for (uint64_t seed = 1; seed <= 4; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1;
        const instance in = generate(families::fixed_charge_network(), rq);
        const ojson& d = in.data;
        const auto N = names_of(d["nodes"]), A = names_of(d["arcs"]);
        ASSERT_LE(A.size(), 12u);
        double best = 1e300;
        for (unsigned mask = 0; mask < (1u << A.size()); mask++) {
            double fixed = 0;
            for (size_t a = 0; a < A.size(); a++)
                if (mask >> a & 1) fixed += val(d["fixed_cost"][A[a]]);
            if (fixed >= best) continue;
            model lp;
            std::vector<int> x(A.size());
            for (size_t a = 0; a < A.size(); a++)
                x[a] = lp.add_var("x" + std::to_string(a), var_type::continuous, 0,
                                  (mask >> a & 1) ? val(d["capacity"][A[a]]) : 0, val(d["unit_cost"][A[a]]));
            for (const auto& n : N) {
                std::vector<term> t;
                for (size_t a = 0; a < A.size(); a++) {
                    if (d["from"][A[a]] == n) t.push_back({x[a], 1});
                    if (d["to"][A[a]] == n) t.push_back({x[a], -1});
                }
                const double b = (d["supply"].contains(n) ? val(d["supply"][n]) : 0) -
                                 (d["demand"].contains(n) ? val(d["demand"][n]) : 0);
                lp.add_con("b_" + n, t, row_sense::le, b);
            }
            const solve_result r = solve_glpk(lp);
            if (r.status == solve_status::optimal) best = std::min(best, fixed + r.objective);
        }
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal) << seed;
        EXPECT_NEAR(v.objective, best, 1e-6) << seed;
    }
    gen_request bad;
    bad.seed = 2;
    bad.want = design::infeasible;
    EXPECT_EQ(verify(generate(families::fixed_charge_network(), bad).m).status, solve_status::infeasible);
}

// Path formulation with gains, built from data.json: a column per simple source-to-sink path (units leaving the
// source); an arc on it carries the units times the product of the multipliers before it, the sink receives the
// units times the product of all of them. Supply rows, demand rows (what arrives), arc capacity rows; GLPK.
TEST(FamilyKnownOptima, GeneralizedFlow) {
    for (uint64_t seed = 1; seed <= 4; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1 + (int)(seed % 2);
        const instance in = generate(families::generalized_flow(), rq);
        const ojson& d = in.data;
        const auto A = names_of(d["arcs"]);
        model pm;
        std::vector<std::vector<term>> arc_terms(A.size());
        std::map<std::string, std::vector<term>> arrive;
        for (const auto& [src, sup] : d["supply"].items()) {
            std::vector<term> sent;
            std::vector<size_t> path;
            std::vector<std::string> visited = {src};
            std::function<void(const std::string&)> dfs = [&](const std::string& at) {
                if (d["demand"].contains(at) && !path.empty()) {
                    double c = 0, gain = 1;
                    std::vector<double> before;
                    for (size_t a : path) {
                        before.push_back(gain);
                        c += val(d["cost"][A[a]]) * gain;
                        gain *= val(d["multiplier"][A[a]]);
                    }
                    const int v = pm.add_var("p" + std::to_string(pm.vars.size()), var_type::continuous, 0, inf, c);
                    sent.push_back({v, 1});
                    arrive[at].push_back({v, gain});
                    for (size_t i = 0; i < path.size(); i++) arc_terms[path[i]].push_back({v, before[i]});
                }
                for (size_t a = 0; a < A.size(); a++) {
                    if (d["from"][A[a]].get<std::string>() != at) continue;
                    const std::string nx = d["to"][A[a]].get<std::string>();
                    if (std::find(visited.begin(), visited.end(), nx) != visited.end()) continue;
                    visited.push_back(nx);
                    path.push_back(a);
                    dfs(nx);
                    path.pop_back();
                    visited.pop_back();
                }
            };
            dfs(src);
            pm.add_con("s_" + src, sent, row_sense::le, val(sup));
        }
        for (const auto& [snk, dem] : d["demand"].items()) pm.add_con("d_" + snk, arrive[snk], row_sense::ge, val(dem));
        for (size_t a = 0; a < A.size(); a++)
            if (!arc_terms[a].empty())
                pm.add_con("u" + std::to_string(a), arc_terms[a], row_sense::le, val(d["capacity"][A[a]]));
        const solve_result ref = solve_glpk(pm);
        ASSERT_EQ(ref.status, solve_status::optimal) << seed;
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal) << seed;
        EXPECT_NEAR(v.objective, ref.objective, 1e-6 * std::max(1.0, std::fabs(ref.objective))) << seed;
    }
    gen_request bad;
    bad.seed = 3;
    bad.want = design::infeasible;
    EXPECT_EQ(verify(generate(families::generalized_flow(), bad).m).status, solve_status::infeasible);
}

// Every subset of at most p sites; the covered population is summed from data.json's coverage relation.
TEST(FamilyKnownOptima, MaxCovering) {
    for (uint64_t seed = 1; seed <= 4; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1 + (int)(seed % 2);
        const instance in = generate(families::max_covering(), rq);
        const ojson& d = in.data;
        const auto S = names_of(d["sites"]), P = names_of(d["points"]);
        const int p = (int)val(d["p"]);
        double best = -1;
        for (unsigned mask = 0; mask < (1u << S.size()); mask++) {
            if (__builtin_popcount(mask) > p) continue;
            double covered = 0;
            for (const auto& j : P) {
                bool c = false;
                for (size_t s = 0; s < S.size(); s++) c = c || ((mask >> s & 1) && val(d["covers"][S[s]][j]) == 1);
                if (c) covered += val(d["population"][j]);
            }
            best = std::max(best, covered);
        }
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal) << seed;
        EXPECT_NEAR(v.objective, best, 1e-6) << seed;
    }
}

// Every choice of |N| - 1 edges that forms no cycle (union-find over data.json's edge ends) is a spanning tree; the
// cheapest one's cost must equal the MILP's optimum.
TEST(FamilyKnownOptima, SpanningTree) {
    for (uint64_t seed = 1; seed <= 4; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1 + (int)(seed % 2);
        const instance in = generate(families::spanning_tree(), rq);
        const ojson& d = in.data;
        const auto N = names_of(d["nodes"]), E = names_of(d["edges"]);
        ASSERT_LE(E.size(), 16u);
        auto index = [&](const ojson& name) {
            return (size_t)(std::find(N.begin(), N.end(), name.get<std::string>()) - N.begin());
        };
        double best = 1e300;
        for (unsigned mask = 0; mask < (1u << E.size()); mask++) {
            if (__builtin_popcount(mask) != (int)N.size() - 1) continue;
            std::vector<size_t> parent(N.size());
            for (size_t i = 0; i < N.size(); i++) parent[i] = i;
            std::function<size_t(size_t)> root = [&](size_t i) {
                return parent[i] == i ? i : parent[i] = root(parent[i]);
            };
            bool acyclic = true;
            double cost = 0;
            for (size_t e = 0; e < E.size() && acyclic; e++) {
                if (!(mask >> e & 1)) continue;
                const size_t a = root(index(d["end1"][E[e]])), b = root(index(d["end2"][E[e]]));
                acyclic = a != b;
                parent[a] = b;
                cost += val(d["cost"][E[e]]);
            }
            if (acyclic) best = std::min(best, cost);
        }
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal) << seed;
        EXPECT_NEAR(v.objective, best, 1e-6) << seed;
    }
    gen_request bad;
    bad.seed = 4;
    bad.want = design::infeasible;
    EXPECT_EQ(verify(generate(families::spanning_tree(), bad).m).status, solve_status::infeasible);
}
