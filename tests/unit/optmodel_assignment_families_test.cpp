// Known optima of cutting_stock_patterns, generalized_assignment, graph_coloring and quantity_discount: each optimum
// verify() reports compared with an exhaustive search over data.json alone, and the designed infeasible instances
// with their status.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "trex/optmodel/families/common.hpp"
#include "trex/optmodel/solvers/solve.hpp"
#include "trex/optmodel/solvers/verify.hpp"

namespace trex::optmodel::families {
TREX_FAMILY(cutting_stock_patterns);
TREX_FAMILY(generalized_assignment);
TREX_FAMILY(graph_coloring);
TREX_FAMILY(quantity_discount);
}  // namespace trex::optmodel::families

using namespace trex::optmodel;

namespace {

double num_at(const ojson& d, const char* key, const std::string& member) {
    return d[key][member].get<double>();
}

}  // namespace

// The fewest rolls by a recursion over the demand still open (each step cuts one roll with any pattern that fits),
// from data.json alone; infeasible when that count exceeds the rolls available.
TEST(FamilyKnownOptima, CuttingStockPatterns) {
    for (uint64_t seed = 1; seed <= 6; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1;
        const instance in = generate(families::cutting_stock_patterns(), rq);
        const ojson& d = in.data;
        const size_t n = d["items"].size();
        const double W = d["stock_width"].get<double>();
        std::vector<double> w(n);
        std::vector<int> dem(n);
        for (size_t i = 0; i < n; i++) {
            const std::string it = d["items"][i].get<std::string>();
            w[i] = num_at(d, "width", it);
            dem[i] = (int)num_at(d, "demand", it);
        }
        std::map<std::vector<int>, int> memo;
        std::function<int(const std::vector<int>&)> rolls = [&](const std::vector<int>& rem) -> int {
            if (std::all_of(rem.begin(), rem.end(), [](int v) { return v == 0; })) return 0;
            auto found = memo.find(rem);
            if (found != memo.end()) return found->second;
            int best = 1 << 20;
            std::vector<int> a(n, 0);  // every pattern a <= rem that fits in W, a != 0
            for (;;) {
                size_t p = 0;
                while (p < n && a[p] == rem[p]) a[p++] = 0;
                if (p == n) break;
                a[p]++;
                double used = 0;
                for (size_t i = 0; i < n; i++) used += w[i] * a[i];
                if (used > W) continue;
                std::vector<int> next(n);
                for (size_t i = 0; i < n; i++) next[i] = rem[i] - a[i];
                best = std::min(best, 1 + rolls(next));
            }
            memo[rem] = best;
            return best;
        };
        const int best = rolls(dem);
        const verification v = verify(in.m);
        if (best > (int)d["rolls"].size()) {
            EXPECT_EQ(v.status, solve_status::infeasible) << seed;
            continue;
        }
        ASSERT_EQ(v.status, solve_status::optimal) << seed;
        EXPECT_DOUBLE_EQ(v.objective, best) << seed;
    }
    for (uint64_t seed = 1; seed <= 3; seed++) {
        gen_request bad;
        bad.seed = seed;
        bad.want = design::infeasible;
        EXPECT_EQ(verify(generate(families::cutting_stock_patterns(), bad).m).status, solve_status::infeasible);
    }
}

// Every assignment of the tasks to the agents (m^n of them), from data.json alone.
TEST(FamilyKnownOptima, GeneralizedAssignment) {
    for (int difficulty = 1; difficulty <= 2; difficulty++)
        for (uint64_t seed = 1; seed <= 4; seed++) {
            gen_request rq;
            rq.seed = seed;
            rq.difficulty = difficulty;
            const instance in = generate(families::generalized_assignment(), rq);
            const ojson& d = in.data;
            const auto& A = d["agents"];
            const auto& T = d["tasks"];
            const size_t m = A.size(), n = T.size();
            std::vector<size_t> who(n, 0);
            double best = -1;
            for (;;) {
                std::vector<double> load(m, 0);
                double cost = 0;
                for (size_t t = 0; t < n; t++) {
                    const std::string a = A[who[t]].get<std::string>(), task = T[t].get<std::string>();
                    load[who[t]] += d["use"][a][task].get<double>();
                    cost += d["cost"][a][task].get<double>();
                }
                bool ok = true;
                for (size_t a = 0; a < m; a++)
                    ok = ok && load[a] <= d["capacity"][A[a].get<std::string>()].get<double>();
                if (ok && (best < 0 || cost < best)) best = cost;
                size_t p = 0;
                while (p < n && ++who[p] == m) who[p++] = 0;
                if (p == n) break;
            }
            ASSERT_GE(best, 0) << seed;  // the generator plants a feasible assignment
            const verification v = verify(in.m);
            ASSERT_EQ(v.status, solve_status::optimal) << seed;
            EXPECT_DOUBLE_EQ(v.objective, best) << difficulty << " " << seed;
        }
    for (uint64_t seed = 1; seed <= 3; seed++) {
        gen_request bad;
        bad.seed = seed;
        bad.difficulty = (int)seed;
        bad.want = design::infeasible;
        EXPECT_EQ(verify(generate(families::generalized_assignment(), bad).m).status, solve_status::infeasible);
    }
}

// Every way to give each exam one of the slots (S^n of them): the fewest distinct slots among the ones where no
// conflicting pair shares a slot, from data.json alone (the conflict relation read in both directions).
TEST(FamilyKnownOptima, GraphColoring) {
    for (int difficulty = 1; difficulty <= 2; difficulty++)
        for (uint64_t seed = 1; seed <= 4; seed++) {
            gen_request rq;
            rq.seed = seed;
            rq.difficulty = difficulty;
            const instance in = generate(families::graph_coloring(), rq);
            const ojson& d = in.data;
            const auto& E = d["exams"];
            const size_t n = E.size(), S = d["slots"].size();
            std::vector<std::vector<bool>> clash(n, std::vector<bool>(n, false));
            for (size_t a = 0; a < n; a++)
                for (size_t b = 0; b < n; b++)
                    if (d["conflicts"][E[a].get<std::string>()][E[b].get<std::string>()].get<double>() == 1)
                        clash[a][b] = clash[b][a] = true;
            std::vector<size_t> slot(n, 0);
            size_t best = S + 1;
            for (;;) {
                bool ok = true;
                for (size_t a = 0; a < n && ok; a++)
                    for (size_t b = a + 1; b < n && ok; b++) ok = !(clash[a][b] && slot[a] == slot[b]);
                if (ok) {
                    std::vector<bool> used(S, false);
                    for (size_t a = 0; a < n; a++) used[slot[a]] = true;
                    best = std::min(best, (size_t)std::count(used.begin(), used.end(), true));
                }
                size_t p = 0;
                while (p < n && ++slot[p] == S) slot[p++] = 0;
                if (p == n) break;
            }
            ASSERT_LE(best, S) << seed;
            const verification v = verify(in.m);
            ASSERT_EQ(v.status, solve_status::optimal) << seed;
            EXPECT_DOUBLE_EQ(v.objective, (double)best) << difficulty << " " << seed;
            EXPECT_LT(best, S) << "one slot is spare by construction";
        }
    for (uint64_t seed = 1; seed <= 3; seed++) {
        gen_request bad;
        bad.seed = seed;
        bad.difficulty = (int)seed;
        bad.want = design::infeasible;
        EXPECT_EQ(verify(generate(families::graph_coloring(), bad).m).status, solve_status::infeasible);
    }
}

// Every choice of tier (or no order) per supplier, from data.json alone; for a fixed choice each order lies between
// its tier's start and the next tier's start (the capacity for the last tier), and the cheapest way to reach the
// requirement is to order every tier's start and then fill the rest at the lowest prices first.
TEST(FamilyKnownOptima, QuantityDiscount) {
    for (int difficulty = 1; difficulty <= 2; difficulty++)
        for (uint64_t seed = 1; seed <= 4; seed++) {
            gen_request rq;
            rq.seed = seed;
            rq.difficulty = difficulty;
            const instance in = generate(families::quantity_discount(), rq);
            const ojson& d = in.data;
            const auto& S = d["suppliers"];
            const auto& T = d["tiers"];
            const size_t n = S.size(), nt = T.size();
            const double D = d["demand"].get<double>();
            std::vector<size_t> tier(n, 0);  // 0: no order, t: tier t - 1
            double best = -1;
            for (;;) {
                double cost = 0, bought = 0;
                std::vector<std::pair<double, double>> room;  // (price, extra units possible)
                for (size_t s = 0; s < n; s++) {
                    if (tier[s] == 0) continue;
                    const std::string sup = S[s].get<std::string>();
                    const size_t t = tier[s] - 1;
                    const double lo = d["tier_start"][sup][T[t].get<std::string>()].get<double>();
                    const double hi = t + 1 < nt ? d["tier_start"][sup][T[t + 1].get<std::string>()].get<double>()
                                                 : d["capacity"][sup].get<double>();
                    const double p = d["price"][sup][T[t].get<std::string>()].get<double>();
                    cost += p * lo;
                    bought += lo;
                    room.push_back({p, hi - lo});
                }
                std::sort(room.begin(), room.end());
                for (const auto& [p, extra] : room) {
                    const double take = std::min(extra, std::max(0.0, D - bought));
                    cost += p * take;
                    bought += take;
                }
                if (bought >= D - 1e-9 && (best < 0 || cost < best)) best = cost;
                size_t p = 0;
                while (p < n && ++tier[p] == nt + 1) tier[p++] = 0;
                if (p == n) break;
            }
            ASSERT_GE(best, 0) << seed;
            const verification v = verify(in.m);
            ASSERT_EQ(v.status, solve_status::optimal) << seed;
            EXPECT_NEAR(v.objective, best, 1e-6) << difficulty << " " << seed;
        }
    for (uint64_t seed = 1; seed <= 3; seed++) {
        gen_request bad;
        bad.seed = seed;
        bad.difficulty = (int)seed;
        bad.want = design::infeasible;
        EXPECT_EQ(verify(generate(families::quantity_discount(), bad).m).status, solve_status::infeasible);
    }
}
