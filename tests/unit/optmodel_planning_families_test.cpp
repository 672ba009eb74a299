// Known optima of the planning families (capital_budgeting, workforce_planning, cash_flow, farm_planning,
// multi_stage_production, inventory_backorder): each optimum verify() reports is compared with a computation from the
// instance's data.json alone (enumeration of the discrete decisions, a recursion, or another formulation solved here),
// and the designed infeasible / unbounded instances with their status.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "trex/optmodel/families/common.hpp"
#include "trex/optmodel/solvers/solve.hpp"
#include "trex/optmodel/solvers/verify.hpp"

namespace trex::optmodel::families {
TREX_FAMILY(capital_budgeting);
TREX_FAMILY(workforce_planning);
TREX_FAMILY(cash_flow);
TREX_FAMILY(farm_planning);
TREX_FAMILY(multi_stage_production);
TREX_FAMILY(inventory_backorder);
}  // namespace trex::optmodel::families

using namespace trex::optmodel;

namespace {
double val(const ojson& v) {
    return v.get<double>();
}
std::string str(const ojson& v) {
    return v.get<std::string>();
}
}  // namespace

// Every subset of the projects, from data.json alone: budgets per period and
// the committed projects.
TEST(FamilyKnownOptima, CapitalBudgeting) {
    for (uint64_t seed = 1; seed <= 5; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1;
        const instance in = generate(families::capital_budgeting(), rq);
        const ojson& d = in.data;
        const auto& I = d["projects"];
        const auto& T = d["periods"];
        const size_t n = I.size();
        double best = -1;
        for (unsigned mask = 0; mask < (1u << n); mask++) {
            bool ok = true;
            for (const auto& r : d["required"])
                for (size_t i = 0; i < n; i++)
                    if (I[i] == r && !(mask >> i & 1)) ok = false;
            for (const auto& t : T) {
                double used = 0;
                for (size_t i = 0; i < n; i++)
                    if (mask >> i & 1) used += val(d["outlay"][str(I[i])][str(t)]);
                ok = ok && used <= val(d["budget"][str(t)]);
            }
            if (!ok) continue;
            double v = 0;
            for (size_t i = 0; i < n; i++)
                if (mask >> i & 1) v += val(d["npv"][str(I[i])]);
            best = std::max(best, v);
        }
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal) << seed;
        EXPECT_DOUBLE_EQ(v.objective, best) << seed;
    }
    gen_request bad;
    bad.seed = 3;
    bad.want = design::infeasible;
    EXPECT_EQ(verify(generate(families::capital_budgeting(), bad).m).status, solve_status::infeasible);
}

// Dynamic programming over the workforce level, from data.json alone: each
// period moves from the previous level by hires (at most the limit) or lay-offs
// and must cover the workload.
TEST(FamilyKnownOptima, WorkforcePlanning) {
    for (uint64_t seed = 1; seed <= 5; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1 + (int)(seed % 2);
        const instance in = generate(families::workforce_planning(), rq);
        const ojson& d = in.data;
        const int maxw = 200;
        const double big = 1e18;
        std::vector<double> cost(maxw + 1, big);
        cost[(size_t)val(d["initial_workforce"])] = 0;
        for (const auto& t : d["periods"]) {
            std::vector<double> next(maxw + 1, big);
            for (int a = 0; a <= maxw; a++) {
                if (cost[(size_t)a] >= big) continue;
                for (int b = 0; b <= maxw; b++) {
                    if (b - a > val(d["max_hires"][str(t)])) continue;
                    if (val(d["hours_per_worker"]) * b < val(d["work_hours"][str(t)])) continue;
                    const double c = cost[(size_t)a] + val(d["wage"]) * b +
                                     (b > a ? val(d["hiring_cost"]) * (b - a) : val(d["firing_cost"]) * (a - b));
                    next[(size_t)b] = std::min(next[(size_t)b], c);
                }
            }
            cost = next;
        }
        const double best = *std::min_element(cost.begin(), cost.end());
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal) << seed;
        EXPECT_DOUBLE_EQ(v.objective, best) << seed;
    }
    gen_request bad;
    bad.seed = 2;
    bad.want = design::infeasible;
    EXPECT_EQ(verify(generate(families::workforce_planning(), bad).m).status, solve_status::infeasible);
}

// The greedy plan is optimal when borrowing costs more than investing earns
// (one-period instruments only): every period invest the whole surplus above
// the minimum balance and borrow exactly the shortfall. Computed from data.json
// alone; infeasible when a shortfall exceeds the credit limit.
TEST(FamilyKnownOptima, CashFlow) {
    for (uint64_t seed = 1; seed <= 8; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1 + (int)(seed % 3);
        const instance in = generate(families::cash_flow(), rq);
        const ojson& d = in.data;
        const double rb = val(d["credit_rate"]), ri = val(d["invest_rate"]), minc = val(d["min_cash"]);
        ASSERT_GE(rb, ri);
        double s = val(d["opening_cash"]), b = 0, i = 0;
        bool feasible = true;
        for (const auto& t : d["periods"]) {
            const double avail = s + val(d["net_flow"][str(t)]) - (1 + rb) * b + (1 + ri) * i;
            b = std::max(0.0, minc - avail);
            i = std::max(0.0, avail - minc);
            s = minc;
            feasible = feasible && b <= val(d["credit_limit"]) + 1e-9;
        }
        const verification v = verify(in.m);
        ASSERT_TRUE(feasible) << seed;
        ASSERT_EQ(v.status, solve_status::optimal) << seed;
        EXPECT_NEAR(v.objective, s + (1 + ri) * i - (1 + rb) * b, 1e-6) << seed;
    }
    gen_request bad;
    bad.seed = 4;
    bad.want = design::infeasible;
    EXPECT_EQ(verify(generate(families::cash_flow(), bad).m).status, solve_status::infeasible);
}

// Two crops at difficulty 1: the LP over the hectares (x1, x2) is solved by
// enumerating the vertices (intersections of every pair of constraint lines,
// axes included) from data.json alone; profit per hectare = yield * price -
// cost.
TEST(FamilyKnownOptima, FarmPlanning) {
    for (uint64_t seed = 1; seed <= 6; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1;
        const instance in = generate(families::farm_planning(), rq);
        const ojson& d = in.data;
        const auto& C = d["crops"];
        ASSERT_EQ(C.size(), 2u) << d.dump();
        struct line {
            double a, b, c;  // a x1 + b x2 <= c
        };
        std::vector<line> L = {{-1, 0, 0}, {0, -1, 0}, {1, 1, val(d["land"])}};
        const std::string c1 = str(C[0]), c2 = str(C[1]);
        for (const auto& t : d["seasons"])
            L.push_back(
                {val(d["labour"][c1][str(t)]), val(d["labour"][c2][str(t)]), val(d["labour_available"][str(t)])});
        L.push_back({val(d["water"][c1]), val(d["water"][c2]), val(d["water_available"])});
        for (const auto& [c, mo] : d["min_output"].items())
            L.push_back({c == c1 ? -val(d["yield"][c]) : 0, c == c2 ? -val(d["yield"][c]) : 0, -val(mo)});
        const double p1 = val(d["yield"][c1]) * val(d["price"][c1]) - val(d["cost"][c1]);
        const double p2 = val(d["yield"][c2]) * val(d["price"][c2]) - val(d["cost"][c2]);
        double best = -1e18;
        for (size_t i = 0; i < L.size(); i++)
            for (size_t j = i + 1; j < L.size(); j++) {
                const double det = L[i].a * L[j].b - L[i].b * L[j].a;
                if (std::abs(det) < 1e-12) continue;
                const double x1 = (L[i].c * L[j].b - L[i].b * L[j].c) / det;
                const double x2 = (L[i].a * L[j].c - L[i].c * L[j].a) / det;
                bool ok = true;
                for (const line& l : L) ok = ok && l.a * x1 + l.b * x2 <= l.c + 1e-7;
                if (ok) best = std::max(best, p1 * x1 + p2 * x2);
            }
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal) << seed;
        EXPECT_NEAR(v.objective, best, 1e-6 * std::max(1.0, std::abs(best))) << seed;
    }
    gen_request bad;
    bad.seed = 5;
    bad.want = design::infeasible;
    EXPECT_EQ(verify(generate(families::farm_planning(), bad).m).status, solve_status::infeasible);
}

// A reduced formulation built from data.json alone and solved by GLPK: purchases and intermediates are eliminated
// (no stock of either), so a final product made in period t costs its assembly cost plus the bill of intermediates
// at their processing cost plus the recipe of materials at period t's prices; the plant hours become hours per final
// unit. Same optimum as the full model.
TEST(FamilyKnownOptima, MultiStageProduction) {
    for (uint64_t seed = 1; seed <= 6; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1 + (int)(seed % 3);
        const instance in = generate(families::multi_stage_production(), rq);
        const ojson& d = in.data;
        model red;
        red.sense = obj_sense::maximize;
        const auto &F = d["products"], &M = d["intermediates"], &R = d["materials"], &T = d["periods"];
        std::map<std::string, std::vector<int>> z, sl, v;
        for (const auto& fj : F) {
            const std::string f = str(fj);
            for (const auto& tj : T) {
                const std::string t = str(tj);
                double unit = val(d["assembly_cost"][f]);
                for (const auto& mj : M) {
                    const std::string m = str(mj);
                    double cm = val(d["processing_cost"][m]);
                    for (const auto& rj : R) cm += val(d["recipe"][m][str(rj)]) * val(d["material_cost"][str(rj)][t]);
                    unit += val(d["bill"][f][m]) * cm;
                }
                const double ub = d["market_limit"].contains(f) ? val(d["market_limit"][f]) : inf;
                z[f].push_back(red.add_var("z_" + f + t, var_type::continuous, 0, inf, -unit));
                sl[f].push_back(red.add_var("s_" + f + t, var_type::continuous, 0, ub, val(d["price"][f])));
                v[f].push_back(red.add_var("v_" + f + t, var_type::continuous, 0, inf, -val(d["holding_cost"][f])));
            }
        }
        for (size_t t = 0; t < T.size(); t++) {
            const std::string tn = str(T[t]);
            std::vector<term> h1, h2;
            for (const auto& fj : F) {
                const std::string f = str(fj);
                std::vector<term> bal = {{z[f][t], 1}, {sl[f][t], -1}, {v[f][t], -1}};
                if (t > 0) bal.push_back({v[f][t - 1], 1});
                red.add_con("bal_" + f + tn, bal, row_sense::eq, 0);
                double hm = 0;
                for (const auto& mj : M) hm += val(d["bill"][f][str(mj)]) * val(d["processing_hours"][str(mj)]);
                if (hm != 0) h1.push_back({z[f][t], hm});
                h2.push_back({z[f][t], val(d["assembly_hours"][f])});
            }
            if (d["processing_capacity"].contains(tn))
                red.add_con("h1_" + tn, h1, row_sense::le, val(d["processing_capacity"][tn]));
            if (d["assembly_capacity"].contains(tn))
                red.add_con("h2_" + tn, h2, row_sense::le, val(d["assembly_capacity"][tn]));
        }
        for (const auto& [f, o] : d["committed"].items())
            red.add_con("order_" + f, {{sl[f][0], 1}}, row_sense::ge, val(o));
        const solve_result ref = solve_glpk(red);
        const verification v2 = verify(in.m);
        ASSERT_EQ(ref.status, solve_status::optimal) << seed;
        ASSERT_EQ(v2.status, solve_status::optimal) << seed;
        EXPECT_NEAR(v2.objective, ref.objective, 1e-6 * std::max(1.0, std::abs(ref.objective))) << seed;
    }
    gen_request bad;
    bad.seed = 2;
    bad.want = design::infeasible;
    EXPECT_EQ(verify(generate(families::multi_stage_production(), bad).m).status, solve_status::infeasible);
    bad.want = design::unbounded;
    EXPECT_EQ(verify(generate(families::multi_stage_production(), bad).m).status, solve_status::unbounded);
}

// (written by the second helper on this brief, b/tests_b.cpp)
// The transportation form, built here from data.json and solved by GLPK: y_ist units of item i made in period s for
// the demand of period t, costing c_i + h_i (t - s) when made early and c_i + p_i (s - t) when made late (backordered);
// every demand is met and every period's hours hold. Same optimum as the stock/backorder balance model.
TEST(FamilyKnownOptima, InventoryBackorder) {
    for (uint64_t seed = 1; seed <= 6; seed++) {
        gen_request rq;
        rq.seed = seed;
        rq.difficulty = 1 + (int)seed % 3;
        const instance in = generate(families::inventory_backorder(), rq);
        const ojson& d = in.data;
        const auto& I = d["items"];
        const auto& P = d["periods"];
        const int T = (int)P.size();
        model tr;
        std::vector<std::vector<term>> hours((size_t)T);
        for (const auto& ij : I) {
            const std::string i = ij.get<std::string>();
            const double c = val(d["production_cost"][i]), h = val(d["holding_cost"][i]),
                         p = val(d["backorder_cost"][i]);
            std::vector<std::vector<term>> meet((size_t)T);
            for (int s = 0; s < T; s++)
                for (int t = 0; t < T; t++) {
                    const double cost = s <= t ? c + h * (t - s) : c + p * (s - t);
                    const int y = tr.add_var(fmt::format("y_{}_{}_{}", i, s, t), var_type::continuous, 0, inf, cost);
                    meet[(size_t)t].push_back({y, 1});
                    hours[(size_t)s].push_back({y, val(d["hours_per_unit"][i])});
                }
            for (int t = 0; t < T; t++)
                tr.add_con(fmt::format("meet_{}_{}", i, t), meet[(size_t)t], row_sense::eq,
                           val(d["demand"][i][P[(size_t)t].get<std::string>()]));
        }
        for (int s = 0; s < T; s++)
            tr.add_con(fmt::format("hours_{}", s), hours[(size_t)s], row_sense::le,
                       val(d["hours_available"][P[(size_t)s].get<std::string>()]));
        const solve_result r = solve_glpk(tr);
        ASSERT_EQ(r.status, solve_status::optimal) << seed;
        const verification v = verify(in.m);
        ASSERT_EQ(v.status, solve_status::optimal) << seed;
        EXPECT_NEAR(v.objective, r.objective, 1e-6 * std::max(1.0, std::fabs(r.objective))) << seed;
    }
    // designed infeasible: the hours of the horizon fall short of the hours the demand needs
    for (uint64_t seed = 1; seed <= 3; seed++) {
        gen_request bad;
        bad.seed = seed;
        bad.difficulty = (int)seed;
        bad.want = design::infeasible;
        const instance in = generate(families::inventory_backorder(), bad);
        const ojson& d = in.data;
        double need = 0, have = 0;
        for (const auto& ij : d["items"])
            for (const auto& [t, q] : d["demand"][ij.get<std::string>()].items())
                need += val(q) * val(d["hours_per_unit"][ij.get<std::string>()]);
        for (const auto& [t, hv] : d["hours_available"].items()) have += val(hv);
        EXPECT_LT(have, need) << seed;
        EXPECT_EQ(verify(in.m).status, solve_status::infeasible) << seed;
    }
}
