// The optima of multiple_knapsack, dea, winner_determination, crew_scheduling, logical_selection,
// goal_programming and piecewise_convex against a computation from the instance's data.json alone (never the
// family's model): enumeration of every discrete decision for the MILPs, another formulation built and solved here
// or a provably optimal greedy for the LPs; and the designed statuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "trex/optmodel/families/common.hpp"
#include "trex/optmodel/solvers/solve.hpp"
#include "trex/optmodel/solvers/verify.hpp"

using namespace trex::optmodel;

// Every assignment of the items to a container or to none, from data.json alone.
TEST(FamilyKnownOptima, MultipleKnapsack) {
    for (uint64_t seed = 1; seed <= 4; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1;
        const instance in = generate(find_family("multiple_knapsack"), rq);
        const ojson& d = in.data;
        const auto& I = d["items"];
        const auto& K = d["containers"];
        const size_t n = I.size(), k = K.size();
        std::vector<int> choice(n, 0);  // 0: not placed, c: container c - 1
        double best = -1;
        for (;;) {
            std::vector<double> load(k, 0);
            double value = 0;
            bool ok = true;
            for (size_t i = 0; i < n; i++) {
                const std::string item = I[i].get<std::string>();
                const bool committed =
                    std::find(d["committed"].begin(), d["committed"].end(), I[i]) != d["committed"].end();
                if (choice[i] == 0) {
                    ok = ok && !committed;
                    continue;
                }
                load[(size_t)choice[i] - 1] += d["weight"][item].get<double>();
                value += d["value"][item].get<double>();
            }
            for (size_t c = 0; c < k; c++) ok = ok && load[c] <= d["capacity"][K[c].get<std::string>()].get<double>();
            if (ok) best = std::max(best, value);
            size_t p = 0;
            while (p < n && ++choice[p] > (int)k) choice[p++] = 0;
            if (p == n) break;
        }
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal) << seed;
        EXPECT_DOUBLE_EQ(v.objective, best) << seed;
    }
    gen_request bad;
    bad.seed = 3;
    bad.want = design::infeasible;
    EXPECT_EQ(verify(generate(find_family("multiple_knapsack"), bad).m).status, solve_status::infeasible);
}

// The efficiency by the envelopment form (the dual LP, built here from data.json and solved by GLPK): min theta with
// a combination of units using at most theta times the target's inputs and producing at least its outputs.
TEST(FamilyKnownOptima, Dea) {
    for (uint64_t seed = 1; seed <= 6; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1 + (int)seed % 3;
        const instance in = generate(find_family("dea"), rq);
        const ojson& d = in.data;
        const std::string o = d["target"].get<std::string>();
        model env;
        const int theta = env.add_var("theta", var_type::continuous, -inf, inf, 1);
        std::vector<int> lambda;
        for (size_t j = 0; j < d["units"].size(); j++)
            lambda.push_back(env.add_var("l_" + std::to_string(j + 1), var_type::continuous, 0, inf, 0));
        for (const auto& i : d["inputs"]) {
            std::vector<term> t = {{theta, -d["input"][o][i.get<std::string>()].get<double>()}};
            for (size_t j = 0; j < lambda.size(); j++)
                t.push_back(
                    {lambda[j], d["input"][d["units"][j].get<std::string>()][i.get<std::string>()].get<double>()});
            env.add_con("in_" + i.get<std::string>(), t, row_sense::le, 0);
        }
        for (const auto& r : d["outputs"]) {
            std::vector<term> t;
            for (size_t j = 0; j < lambda.size(); j++)
                t.push_back(
                    {lambda[j], d["output"][d["units"][j].get<std::string>()][r.get<std::string>()].get<double>()});
            env.add_con("out_" + r.get<std::string>(), t, row_sense::ge,
                        d["output"][o][r.get<std::string>()].get<double>());
        }
        const solve_result dual = solve_glpk(env);
        ASSERT_EQ(dual.status, solve_status::optimal);
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal);
        EXPECT_NEAR(v.objective, dual.objective, 1e-7) << seed;
        EXPECT_GT(v.objective, 0);
        EXPECT_LE(v.objective, 1 + 1e-9);
    }
}

// Every subset of the bids, from data.json alone.
TEST(FamilyKnownOptima, WinnerDetermination) {
    for (uint64_t seed = 1; seed <= 4; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1;
        const instance in = generate(find_family("winner_determination"), rq);
        const ojson& d = in.data;
        const auto& bids = d["bids"];
        const size_t nb = bids.size();
        ASSERT_LE(nb, 16u);
        double best = 0;
        for (uint32_t set = 0; set < (1u << nb); set++) {
            std::map<std::string, int> sold, won;
            double revenue = 0;
            for (size_t b = 0; b < nb; b++) {
                if (!(set >> b & 1)) continue;
                const std::string bid = bids[b].get<std::string>();
                revenue += d["price"][bid].get<double>();
                for (const auto& i : d["items"])
                    sold[i.get<std::string>()] += d["bundle"][bid][i.get<std::string>()].get<int>();
                for (const auto& k : d["bidders"])
                    won[k.get<std::string>()] += d["placed"][k.get<std::string>()][bid].get<int>();
            }
            bool ok = true;
            for (const auto& [i, n] : sold) ok = ok && n <= 1;
            for (const auto& [k, n] : won) ok = ok && n <= 1;
            if (ok) best = std::max(best, revenue);
        }
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal);
        EXPECT_DOUBLE_EQ(v.objective, best) << seed;
    }
}

// Every subset of the duties that covers each trip exactly once, from data.json alone.
TEST(FamilyKnownOptima, CrewScheduling) {
    for (uint64_t seed = 1; seed <= 3; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1;
        const instance in = generate(find_family("crew_scheduling"), rq);
        const ojson& d = in.data;
        const size_t nd = d["duties"].size(), nt = d["trips"].size();
        ASSERT_LE(nd, 20u);
        std::vector<uint32_t> mask(nd, 0);
        for (size_t k = 0; k < nd; k++)
            for (size_t t = 0; t < nt; t++)
                if (d["covers"][d["duties"][k].get<std::string>()][d["trips"][t].get<std::string>()].get<int>() == 1)
                    mask[k] |= 1u << t;
        double best = -1;
        for (uint32_t set = 0; set < (1u << nd); set++) {
            uint32_t covered = 0;
            bool ok = true;
            double cost = 0;
            for (size_t k = 0; k < nd && ok; k++) {
                if (!(set >> k & 1)) continue;
                ok = (covered & mask[k]) == 0;
                covered |= mask[k];
                cost += d["cost"][d["duties"][k].get<std::string>()].get<double>();
            }
            if (ok && covered == (1u << nt) - 1 && (best < 0 || cost < best)) best = cost;
        }
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal);
        EXPECT_DOUBLE_EQ(v.objective, best) << seed;
    }
    gen_request bad;
    bad.seed = 2;
    bad.want = design::infeasible;
    EXPECT_EQ(verify(generate(find_family("crew_scheduling"), bad).m).status, solve_status::infeasible);
}

// Every subset of the options against the budget and every rule, from data.json alone.
TEST(FamilyKnownOptima, LogicalSelection) {
    for (uint64_t seed = 1; seed <= 5; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1 + (int)seed % 3;
        const instance in = generate(find_family("logical_selection"), rq);
        const ojson& d = in.data;
        std::vector<std::string> O;
        for (const auto& o : d["options"]) O.push_back(o.get<std::string>());
        auto in_list = [&](const char* key, const std::string& o) {
            for (const auto& x : d[key])
                if (x.get<std::string>() == o) return true;
            return false;
        };
        double best = -1;
        for (uint32_t set = 0; set < (1u << O.size()); set++) {
            auto chosen = [&](size_t k) { return (set >> k & 1) != 0; };
            double cost = 0, value = 0;
            int limited = 0, essential = 0;
            bool ok = true;
            for (size_t a = 0; a < O.size(); a++) {
                if (!chosen(a)) continue;
                cost += d["cost"][O[a]].get<double>();
                value += d["value"][O[a]].get<double>();
                limited += in_list("limited", O[a]);
                essential += in_list("essential", O[a]);
                for (size_t b = 0; b < O.size(); b++) {
                    if (d["requires"][O[a]][O[b]].get<int>() == 1 && !chosen(b)) ok = false;
                    if (d["excludes"][O[a]][O[b]].get<int>() == 1 && chosen(b)) ok = false;
                }
            }
            ok = ok && cost <= d["budget"].get<double>() && limited <= d["limited_max"].get<int>() && essential >= 1;
            if (ok) best = std::max(best, value);
        }
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal) << seed;
        EXPECT_DOUBLE_EQ(v.objective, best) << seed;
    }
    gen_request bad;
    bad.seed = 4;
    bad.want = design::infeasible;
    EXPECT_EQ(verify(generate(find_family("logical_selection"), bad).m).status, solve_status::infeasible);
}

// The penalties as epigraph variables (t >= goal - achieved, t >= 0, ...: inequalities, no deviation pairs), built
// from data.json and solved by GLPK.
TEST(FamilyKnownOptima, GoalProgramming) {
    for (uint64_t seed = 1; seed <= 6; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1 + (int)seed % 3;
        const instance in = generate(find_family("goal_programming"), rq);
        const ojson& d = in.data;
        model e;
        std::vector<int> x;
        for (const auto& p : d["products"])
            x.push_back(e.add_var("x_" + std::to_string(x.size() + 1), var_type::continuous,
                                  d["minimum_output"][p.get<std::string>()].get<double>(), inf, 0));
        auto row = [&](const char* key) {
            std::vector<term> t;
            for (size_t k = 0; k < x.size(); k++)
                t.push_back({x[k], d[key][d["products"][k].get<std::string>()].get<double>()});
            return t;
        };
        e.add_con("machine", row("machine_hours"), row_sense::le, d["machine_capacity"].get<double>());
        struct pen {
            const char* key;
            const char* goal;
            const char* weight;
            double sign;  // +1: penalise achieved above the goal, -1: below
        } pens[] = {{"profit", "profit_goal", "penalty_profit_short", -1},
                    {"labour", "labour_goal", "penalty_labour_short", -1},
                    {"labour", "labour_goal", "penalty_labour_over", 1},
                    {"emission", "emission_cap", "penalty_emission_over", 1}};
        int k = 0;
        for (const auto& p : pens) {
            const int t =
                e.add_var("t_" + std::to_string(++k), var_type::continuous, 0, inf, d[p.weight].get<double>());
            std::vector<term> r = row(p.key);  // sign * (achieved - goal) <= t
            for (auto& tm : r) tm.coef *= p.sign;
            r.push_back({t, -1});
            e.add_con("pen_" + std::to_string(k), r, row_sense::le, p.sign * d[p.goal].get<double>());
        }
        const solve_result ref = solve_glpk(e);
        ASSERT_EQ(ref.status, solve_status::optimal);
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal);
        EXPECT_NEAR(v.objective, ref.objective, 1e-6 * std::max(1.0, std::fabs(ref.objective))) << seed;
        EXPECT_GT(v.objective, 0) << seed;  // the goals conflict
    }
    gen_request bad;
    bad.seed = 2;
    bad.want = design::infeasible;
    EXPECT_EQ(verify(generate(find_family("goal_programming"), bad).m).status, solve_status::infeasible);
}

// One product (difficulty 1): the cheapest units first over every supplier's tiers (tier 3 holds the rest of the
// capacity), from data.json alone; optimal because each supplier's prices rise by tier.
TEST(FamilyKnownOptima, PiecewiseConvex) {
    for (uint64_t seed = 1; seed <= 6; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1;
        const instance in = generate(find_family("piecewise_convex"), rq);
        const ojson& d = in.data;
        ASSERT_EQ(d["products"].size(), 1u);
        const std::string p = d["products"][0].get<std::string>();
        std::vector<std::pair<double, double>> segments;  // price, units
        for (const auto& sj : d["suppliers"]) {
            const std::string s = sj.get<std::string>();
            const double q1 = d["tier1_units"][s].get<double>(), q2 = d["tier2_units"][s].get<double>();
            segments.push_back({d["price_tier1"][s][p].get<double>(), q1});
            segments.push_back({d["price_tier2"][s][p].get<double>(), q2});
            segments.push_back({d["price_tier3"][s][p].get<double>(), d["capacity"][s].get<double>() - q1 - q2});
        }
        std::sort(segments.begin(), segments.end());
        double need = d["demand"][p].get<double>(), cost = 0;
        for (const auto& [price, units] : segments) {
            const double take = std::min(need, units);
            cost += take * price;
            need -= take;
        }
        ASSERT_EQ(need, 0) << seed;
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal);
        EXPECT_NEAR(v.objective, cost, 1e-6 * cost) << seed;
    }
    gen_request bad;
    bad.seed = 5;
    bad.want = design::infeasible;
    EXPECT_EQ(verify(generate(find_family("piecewise_convex"), bad).m).status, solve_status::infeasible);
}
