// Known optima of the scheduling families (job_shop, flow_shop, vrptw, assembly_line_balancing, project_crashing,
// unit_commitment): each optimum verify() reports is compared with a computation from the instance's data.json alone
// (enumeration of the discrete decisions, a recursion, or another formulation solved here), and the designed infeasible
// / unbounded instances with their status.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "trex/optmodel/families/common.hpp"
#include "trex/optmodel/solvers/verify.hpp"

namespace trex::optmodel::families {
TREX_FAMILY(job_shop);
TREX_FAMILY(flow_shop);
TREX_FAMILY(vrptw);
TREX_FAMILY(assembly_line_balancing);
TREX_FAMILY(project_crashing);
TREX_FAMILY(unit_commitment);
}  // namespace trex::optmodel::families

using namespace trex::optmodel;

namespace {

double val(const ojson& v) {
    return v.get<double>();
}

std::vector<std::string> names_of(const ojson& a) {
    std::vector<std::string> out;
    for (const auto& x : a) out.push_back(x.get<std::string>());
    return out;
}

instance make(const family& f, uint64_t seed, int difficulty, design want = design::feasible) {
    gen_request rq;
    rq.seed = seed;
    rq.difficulty = difficulty;
    rq.want = want;
    return generate(f, rq);
}

}  // namespace

// Every job sequence on every machine (from data.json alone); the earliest schedule of each acyclic combination by
// relaxing the route and machine-sequence arcs; the smallest makespan, or infeasible above the deadline.
TEST(FamilyKnownOptima, JobShop) {
    for (uint64_t seed = 1; seed <= 5; seed++) {
        const instance in = make(families::job_shop(), seed, 1);
        const ojson& d = in.data;
        const auto J = names_of(d["jobs"]), M = names_of(d["machines"]);
        const size_t nj = J.size(), nm = M.size();
        std::vector<std::vector<int>> route(nj);
        for (size_t j = 0; j < nj; j++) {
            route[j].resize(nm);
            for (size_t k = 0; k < nm; k++) route[j][(size_t)val(d["order"][J[j]][M[k]]) - 1] = (int)k;
        }
        std::vector<std::vector<int>> seq(nm, std::vector<int>(nj));
        for (auto& s : seq) std::iota(s.begin(), s.end(), 0);
        double best = INFINITY;
        for (;;) {
            // earliest starts: longest paths, by relaxation (a cycle keeps growing past the bound)
            std::vector<std::vector<double>> st(nj, std::vector<double>(nm, 0));
            bool changed = true;
            int passes = 0;
            while (changed && passes < 100) {
                changed = false;
                passes++;
                auto push = [&](size_t j, size_t k, double t) {
                    if (t > st[j][k]) st[j][k] = t, changed = true;
                };
                for (size_t j = 0; j < nj; j++)
                    for (size_t r = 1; r < nm; r++) {
                        const int a = route[j][r - 1], b = route[j][r];
                        push(j, b, st[j][a] + val(d["time"][J[j]][M[a]]));
                    }
                for (size_t k = 0; k < nm; k++)
                    for (size_t r = 1; r < nj; r++) {
                        const int a = seq[k][r - 1], b = seq[k][r];
                        push(b, k, st[a][k] + val(d["time"][J[a]][M[k]]));
                    }
            }
            if (!changed) {
                double cmax = 0;
                for (size_t j = 0; j < nj; j++)
                    for (size_t k = 0; k < nm; k++) cmax = std::max(cmax, st[j][k] + val(d["time"][J[j]][M[k]]));
                best = std::min(best, cmax);
            }
            size_t k = 0;
            while (k < nm && !std::next_permutation(seq[k].begin(), seq[k].end())) k++;
            if (k == nm) break;
        }
        const verification v = verify(in.m);
        if (best > val(d["deadline"])) {
            EXPECT_EQ(v.status, solve_status::infeasible) << seed;
        } else {
            ASSERT_EQ(v.status, solve_status::optimal) << seed;
            EXPECT_NEAR(v.objective, best, 1e-6) << seed;
        }
    }
    EXPECT_EQ(verify(make(families::job_shop(), 3, 1, design::infeasible).m).status, solve_status::infeasible);
}

// Every job sequence (from data.json alone), its makespan by the flow-shop recursion; the smallest, or infeasible
// above the deadline.
TEST(FamilyKnownOptima, FlowShop) {
    for (uint64_t seed = 1; seed <= 5; seed++) {
        const instance in = make(families::flow_shop(), seed, 1 + (int)seed % 2);
        const ojson& d = in.data;
        const auto J = names_of(d["jobs"]), M = names_of(d["machines"]);
        std::vector<int> order(J.size());
        std::iota(order.begin(), order.end(), 0);
        double best = INFINITY;
        do {
            std::vector<double> done(M.size(), 0);
            for (int j : order)
                for (size_t i = 0; i < M.size(); i++)
                    done[i] = std::max(done[i], i > 0 ? done[i - 1] : 0.0) + val(d["time"][J[(size_t)j]][M[i]]);
            best = std::min(best, done.back());
        } while (std::next_permutation(order.begin(), order.end()));
        const verification v = verify(in.m);
        if (best > val(d["deadline"])) {
            EXPECT_EQ(v.status, solve_status::infeasible) << seed;
        } else {
            ASSERT_EQ(v.status, solve_status::optimal) << seed;
            EXPECT_NEAR(v.objective, best, 1e-6) << seed;
        }
    }
    EXPECT_EQ(verify(make(families::flow_shop(), 2, 1, design::infeasible).m).status, solve_status::infeasible);
}

// Every order of the customers cut into at most K consecutive routes (from data.json alone): capacity, earliest
// service starts inside the windows, total distance; the smallest, or infeasible when no plan fits.
TEST(FamilyKnownOptima, Vrptw) {
    for (uint64_t seed = 1; seed <= 6; seed++) {
        const instance in = make(families::vrptw(), seed, 1 + (int)seed % 2);
        const ojson& d = in.data;
        const std::string dep = d["depot"].get<std::string>();
        std::vector<std::string> C;
        for (const auto& l : names_of(d["locations"]))
            if (l != dep) C.push_back(l);
        const size_t n = C.size(), K = d["vehicles"].get<size_t>();
        std::vector<int> order(n);
        std::iota(order.begin(), order.end(), 0);
        double best = INFINITY;
        do {
            for (unsigned cuts = 0; cuts < (1u << (n - 1)); cuts++) {  // bit r: a new route after position r
                if ((size_t)__builtin_popcount(cuts) + 1 > K) continue;
                double total = 0, load = 0, time = 0;
                std::string at = dep;
                bool ok = true;
                for (size_t r = 0; r < n && ok; r++) {
                    const std::string& c = C[(size_t)order[r]];
                    const double svc = at == dep ? 0 : val(d["service_time"][at]);
                    time = std::max(val(d["window_open"][c]), time + svc + val(d["distance"][at][c]));
                    load += val(d["demand"][c]);
                    total += val(d["distance"][at][c]);
                    ok = time <= val(d["window_close"][c]) + 1e-9 && load <= val(d["capacity"]) + 1e-9;
                    at = c;
                    if (r + 1 == n || (cuts >> r & 1u)) {
                        total += val(d["distance"][at][dep]);
                        at = dep;
                        load = time = 0;
                    }
                }
                if (ok) best = std::min(best, total);
            }
        } while (std::next_permutation(order.begin(), order.end()));
        const verification v = verify(in.m);
        if (std::isinf(best)) {
            EXPECT_EQ(v.status, solve_status::infeasible) << seed;
        } else {
            ASSERT_EQ(v.status, solve_status::optimal) << seed;
            EXPECT_NEAR(v.objective, best, 1e-6) << seed;
        }
    }
    EXPECT_EQ(verify(make(families::vrptw(), 4, 2, design::infeasible).m).status, solve_status::infeasible);
}

// Every assignment of tasks to the offered stations (from data.json alone): cycle time, precedence by station
// order; the smallest last-used station index (stations open in line order), or infeasible when none fits.
TEST(FamilyKnownOptima, AssemblyLineBalancing) {
    auto solve = [](const ojson& d) {
        const auto T = names_of(d["tasks"]);
        const size_t n = T.size(), K = d["stations"].size();
        std::vector<size_t> at(n, 0);
        double best = INFINITY;
        for (;;) {
            std::vector<double> load(K, 0);
            bool ok = true;
            size_t last = 0;
            for (size_t i = 0; i < n; i++) {
                load[at[i]] += val(d["time"][T[i]]);
                last = std::max(last, at[i] + 1);
                for (size_t j = 0; j < n; j++)
                    if (val(d["precedes"][T[i]][T[j]]) == 1 && at[i] > at[j]) ok = false;
            }
            for (size_t k = 0; k < K; k++) ok = ok && load[k] <= val(d["cycle_time"]);
            if (ok) best = std::min(best, (double)last);
            size_t p = 0;
            while (p < n && ++at[p] == K) at[p++] = 0;
            if (p == n) break;
        }
        return best;
    };
    for (uint64_t seed = 1; seed <= 5; seed++) {
        const instance in = make(families::assembly_line_balancing(), seed, 1);
        const double best = solve(in.data);
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal) << seed;
        EXPECT_NEAR(v.objective, best, 1e-6) << seed;
    }
    const instance bad = make(families::assembly_line_balancing(), 2, 1, design::infeasible);
    EXPECT_TRUE(std::isinf(solve(bad.data)));
    EXPECT_EQ(verify(bad.m).status, solve_status::infeasible);
}

// Every whole-number crashing plan (from data.json alone): the critical path by relaxing the precedences, the
// cheapest plan that meets the deadline. Whole numbers suffice: with e_i = s_i - y_i every row is a difference
// constraint, a network matrix, so the LP has an integral optimum for integral data.
TEST(FamilyKnownOptima, ProjectCrashing) {
    auto solve = [](const ojson& d) {
        const auto A = names_of(d["activities"]);
        const size_t n = A.size();
        std::vector<int> y(n, 0);
        double best = INFINITY;
        for (;;) {
            std::vector<double> start(n, 0);
            for (size_t pass = 0; pass < n; pass++)
                for (size_t i = 0; i < n; i++)
                    for (size_t j = 0; j < n; j++)
                        if (val(d["precedes"][A[i]][A[j]]) == 1)
                            start[j] = std::max(start[j], start[i] + val(d["normal_duration"][A[i]]) - y[i]);
            double end = 0, cost = 0;
            for (size_t i = 0; i < n; i++) {
                end = std::max(end, start[i] + val(d["normal_duration"][A[i]]) - y[i]);
                cost += y[i] * val(d["crash_cost"][A[i]]);
            }
            if (end <= val(d["deadline"])) best = std::min(best, cost);
            size_t p = 0;
            while (p < n && ++y[p] > val(d["normal_duration"][A[p]]) - val(d["crash_duration"][A[p]])) y[p++] = 0;
            if (p == n) break;
        }
        return best;
    };
    for (uint64_t seed = 1; seed <= 6; seed++) {
        const instance in = make(families::project_crashing(), seed, 1);
        const double best = solve(in.data);
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal) << seed;
        EXPECT_NEAR(v.objective, best, 1e-6) << seed;
    }
    const instance bad = make(families::project_crashing(), 5, 1, design::infeasible);
    EXPECT_TRUE(std::isinf(solve(bad.data)));
    EXPECT_EQ(verify(bad.m).status, solve_status::infeasible);
}

// Every on/off schedule (from data.json alone): per period the committed units must span the demand and cover demand
// plus reserve; the dispatch cost of a committed set is the merit order above the minimum outputs (optimal for one
// bus with linear costs); fixed and start-up costs (all units off before the first period) are added.
TEST(FamilyKnownOptima, UnitCommitment) {
    auto solve = [](const ojson& d) {
        const auto G = names_of(d["units"]), T = names_of(d["periods"]);
        const size_t ng = G.size(), nt = T.size();
        std::vector<size_t> merit(ng);
        std::iota(merit.begin(), merit.end(), 0);
        std::sort(merit.begin(), merit.end(),
                  [&](size_t a, size_t b) { return val(d["marginal_cost"][G[a]]) < val(d["marginal_cost"][G[b]]); });
        double best = INFINITY;
        for (unsigned long s = 0; s < (1ul << (ng * nt)); s++) {
            auto on = [&](size_t g, size_t t) { return (s >> (g * nt + t) & 1ul) != 0; };
            double cost = 0;
            bool ok = true;
            for (size_t t = 0; t < nt && ok; t++) {
                double lo = 0, hi = 0;
                for (size_t g = 0; g < ng; g++)
                    if (on(g, t)) {
                        lo += val(d["min_output"][G[g]]);
                        hi += val(d["max_output"][G[g]]);
                        cost += val(d["fixed_cost"][G[g]]) + val(d["min_output"][G[g]]) * val(d["marginal_cost"][G[g]]);
                        if (t == 0 || !on(g, t - 1)) cost += val(d["startup_cost"][G[g]]);
                    }
                const double dem = val(d["demand"][T[t]]);
                ok = lo <= dem && dem <= hi && hi >= dem + val(d["reserve"][T[t]]);
                double rest = dem - lo;
                for (size_t g : merit)
                    if (on(g, t) && rest > 0) {
                        const double q = std::min(rest, val(d["max_output"][G[g]]) - val(d["min_output"][G[g]]));
                        cost += q * val(d["marginal_cost"][G[g]]);
                        rest -= q;
                    }
            }
            if (ok) best = std::min(best, cost);
        }
        return best;
    };
    for (uint64_t seed = 1; seed <= 12; seed++) {
        const instance in = make(families::unit_commitment(), seed, 1);
        const double best = solve(in.data);
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal) << seed;
        EXPECT_NEAR(v.objective, best, 1e-6 * std::max(1.0, best)) << seed;
    }
    const instance bad = make(families::unit_commitment(), 6, 1, design::infeasible);
    EXPECT_TRUE(std::isinf(solve(bad.data)));
    EXPECT_EQ(verify(bad.m).status, solve_status::infeasible);
}
