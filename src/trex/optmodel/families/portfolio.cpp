// Portfolio selection, LP form (mean absolute deviation): invest budget B over assets with scenario returns r_ta
// (%), expected return mu_a = mean_t r_ta must reach a target, at most a share per asset; minimise the mean absolute
// deviation of the portfolio return. LP. Infeasible design: target above every asset's mean.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace portfolio_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    // 4, 5, 8 or 10 periods: the objective weight 1 / (100 T) is a short decimal
    const int na = 3 + (d + 1) / 2 + g.r.int_in(0, 1),
              nt = std::vector<int>{4, 5, 5, 8, 10}[(size_t)std::clamp(d, 1, 5) - 1];
    const strings A = g.names("asset", na), T = g.names("period", nt);
    std::vector<std::vector<double>> ret(nt, std::vector<double>(na));
    std::vector<double> mu(na, 0);
    for (int a = 0; a < na; a++) {  // returns in tenths of a percent whose mean is a whole tenth too
        const double base = g.r.real_in(1, 9, 1), vol = g.r.real_in(0.5, 8, 1);
        long tenths = 0;
        std::vector<long> r10(nt);
        for (int t = 0; t < nt; t++) {
            r10[t] = std::lround((base + vol * (2 * g.r.uniform() - 1)) * 10);
            tenths += r10[t];
        }
        const long excess = ((tenths % nt) + nt) % nt;
        r10[nt - 1] -= excess;
        tenths -= excess;
        for (int t = 0; t < nt; t++) ret[t][a] = (double)r10[t] / 10;
        mu[a] = (double)(tenths / nt) / 10;
    }
    const double B = 1000 * g.r.int_in(10, 100), share = g.r.real_in(0.35, 0.6, 2);
    double best = 0, avg = 0;
    for (double v : mu) {
        best = std::max(best, v);
        avg += v / na;
    }
    const double target = g.req.want == design::infeasible
                              ? std::ceil(best + 1)
                              : std::round((avg + (best - avg) * g.r.real_in(0.2, 0.6, 2)) * 10) / 10;
    ojson& data = g.inst.data;
    data["assets"] = list(A);
    data["periods"] = list(T);
    data["returns"] = map2(T, A, ret);
    data["budget"] = num(B);
    data["max_share"] = num(share);
    data["target_return"] = num(target);
    model& m = g.inst.m;
    std::vector<int> w(na), dev(nt);
    const double cap = std::round(share * B * 100) / 100;  // the exact cents of share x budget
    for (int a = 0; a < na; a++) w[a] = m.add_var(nm("w", a), var_type::continuous, 0, cap, 0);
    for (int t = 0; t < nt; t++) dev[t] = m.add_var(nm("dev", t), var_type::continuous, 0, inf, 1.0 / (100.0 * nt));
    std::vector<term> bud, tgt;
    for (int a = 0; a < na; a++) {
        bud.push_back({w[a], 1});
        tgt.push_back({w[a], mu[a]});
    }
    m.add_con("budget", bud, row_sense::eq, B);
    m.add_con("target", tgt, row_sense::ge, std::round(target * B * 100) / 100);
    for (int t = 0; t < nt; t++) {
        std::vector<term> up = {{dev[t], 1}}, dn = {{dev[t], 1}};
        for (int a = 0; a < na; a++) {
            const double dev_ta = std::round((ret[t][a] - mu[a]) * 10) / 10;  // exact tenths, no binary noise
            up.push_back({w[a], -dev_ta});
            dn.push_back({w[a], dev_ta});
        }
        m.add_con(nm("devup", t), up, row_sense::ge, 0);
        m.add_con(nm("devdn", t), dn, row_sense::ge, 0);
    }
}

}  // namespace portfolio_impl

TREX_FAMILY(portfolio) {
    static const family f = [] {
        family f;
        f.name = "portfolio";
        f.title = "Portfolio selection (mean absolute deviation LP)";
        f.can_infeasible = true;
        f.generate = portfolio_impl::generate;
        f.scenarios = {
            {"finance",
             {{"org", "a pension fund"},
              {"assets", "asset classes"},
              {"asset_pool", "assets"},
              {"period_pool", "periods"}}},
            {"finance",
             {{"org", "a family office"}, {"assets", "funds"}, {"asset_pool", "assets"}, {"period_pool", "weeks"}}},
            {"education",
             {{"org", "a university endowment"},
              {"assets", "asset classes"},
              {"asset_pool", "assets"},
              {"period_pool", "periods"}}},
            {"energy",
             {{"org", "a utility's treasury"},
              {"assets", "investment options"},
              {"asset_pool", "assets"},
              {"period_pool", "periods"}}},
        };
        f.intro =
            "[{Org} invests its budget across {n_assets} {assets}; historical returns over {n_periods} periods serve "
            "as equally likely scenarios.|{Org} wants a low-risk allocation over {n_assets} {assets}, judged on "
            "{n_periods} past periods of returns.|[There are|{Org} can choose among] {n_assets} {assets} [for "
            "investing its budget|to invest its budget in]; the returns [observed|recorded] in {n_periods} past "
            "periods [are treated as|serve as|count as] equally likely scenarios.|Using the returns of {n_periods} "
            "past periods as equally likely scenarios, {org} [must decide|has to decide|wants to decide] how to "
            "[split|divide|spread] its budget over {n_assets} {assets} [with as little risk as possible|at the lowest "
            "possible risk].]";
        f.params = {
            {"assets", {}, "{assets}", "", true},
            {"periods", {}, "[scenario periods|periods used as scenarios|historical scenario periods]", "", true},
            {"returns", {"periods", "assets"}, "return", "%"},
            {"budget", {}, "[budget to invest|budget available for investment|amount to invest]", "$"},
            {"max_share", {},
             "[maximum fraction of the budget in any one asset|largest fraction of the budget allowed in a single "
             "asset|upper limit on the fraction of the budget put in any one asset]",
             ""},
            {"target_return", {}, "[minimum expected return|smallest acceptable expected return|required minimum "
             "expected return]", "%"},
        };
        f.constraints = {
            "[The whole budget is invested, with no short positions and at most the maximum fraction in any asset.|All "
            "money is invested; each asset gets at most the maximum share.|[Every dollar|The entire budget|All of the "
            "budget] [must|has to] be invested; [no amount may be negative|negative amounts are not allowed] [(no "
            "short positions)|(no short selling)], and [no single asset|no asset] [may receive|can get] more than the "
            "maximum fraction of the budget.|[The amounts|The amounts invested] [must|have to] [add up|sum] [exactly "
            "|]to the budget, [each one|each of them] [between zero and|at least zero and at most] the maximum "
            "fraction [times|multiplied by] the budget.|[Invest|Put] [the full budget|all of the budget], "
            "[short-selling is not allowed|with no short selling], and [keep|hold] each asset's amount [at or "
            "below|within] the maximum fraction of the budget.]",
            "[The expected return (the average over the periods, weighted by the amounts) must reach the target.|The "
            "portfolio's expected return must be at least the target.|The portfolio's expected return, [that "
            "is|namely] [each asset's|every asset's] average return [over|across] the periods weighted by the amount "
            "invested in it [as a percentage of|relative to] the budget, [must|has to] be at least the minimum "
            "expected return.|[If|When] each asset's return is [averaged over|taken as its average across] the periods "
            "and weighted by the amount invested, the [resulting|combined] expected return of the portfolio [must "
            "not|may not|cannot] fall below the [target|minimum expected return].|[It is required that|It must hold "
            "that] the expected return of the portfolio (the [period-average|average per-period] return of "
            "[each|every] asset, weighted by the amounts [invested|placed]) is [no lower than|at least|not below] the "
            "target.]"};
        f.objective =
            "[Risk is the mean absolute deviation of the portfolio's dollar return from its expectation across the "
            "periods; minimize it.|Minimize the mean absolute deviation (in dollars) of the portfolio return.|The "
            "[goal|aim|objective] is to [minimize|reduce as far as possible] the risk, measured as the [average|mean] "
            "[over|across] the periods of the absolute [difference|gap] between the portfolio's [dollar return|return "
            "in dollars] in [that|the] period and its expected [dollar return|return in "
            "dollars].|[Choose|Decide|Determine] the amounts so that the [mean|average] absolute deviation, in "
            "dollars, of the portfolio's [return|period return] from its expected return [over|across] the periods is "
            "[as small as possible|minimized].|Which allocation [gives|has|achieves] the [lowest|smallest|least] mean "
            "absolute deviation [of the dollar return|in dollars] [from|around] its expectation [over|across] the "
            "{n_periods} periods?]";
        f.decisions = "the dollar amount in each asset and, per period, the absolute deviation of the return";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\frac{1}{|T|}\\sum_{t\\in T} \\frac{e_t}{100} \\\\\n"
            "\\text{s.t.}\\;& \\sum_{a} w_a = B \\quad\\text{(budget)},\\qquad \\sum_{a} \\mu_a w_a \\ge \\rho B "
            "\\quad\\text{(target)} \\\\\n"
            "& e_t \\ge \\pm \\sum_{a} (r_{ta} - \\mu_a) w_a && \\forall t \\quad\\text{(devup, devdn)} \\\\\n"
            "& 0 \\le w_a \\le s B,\\ e_t \\ge 0, \\quad \\mu_a = \\tfrac{1}{|T|}\\sum_t r_{ta}\n"
            "\\end{aligned}";
        f.latex_symbols = {"$A$: {assets}; $T$: periods", "$r_{ta}$: return (%); $\\mu_a$: mean return",
                           "$B$: budget; $s$: max share; $\\rho$: target (%)",
                           "$w_a$: amount in $a$; $e_t$: absolute deviation in period $t$ (in %·$)"};
        f.code = R"(A = data["assets"]
T = data["periods"]
B = data["budget"]
r = data["returns"]
mu = {a: sum(r[t][a] for t in T) / len(T) for a in A}
w = {a: @var(f"w_{k + 1}", 0, data["max_share"] * B, C) for k, a in enumerate(A)}
e = {t: @var(f"dev_{k + 1}", 0, None, C) for k, t in enumerate(T)}
@obj(@sum(e[t] for t in T) * (1.0 / len(T) / 100))
@add(@sum(w[a] for a in A) == B, "budget")
@add(@sum(mu[a] * w[a] for a in A) >= data["target_return"] * B, "target")
for k, t in enumerate(T):
    @add(e[t] - @sum((r[t][a] - mu[a]) * w[a] for a in A) >= 0, f"devup_{k + 1}")
    @add(e[t] + @sum((r[t][a] - mu[a]) * w[a] for a in A) >= 0, f"devdn_{k + 1}")
)";
        f.var_docs = {{"w", {"assets"}, "amount in {0}"}, {"dev", {"periods"}, "deviation in {0}"}};
        f.con_docs = {{"budget", {}, "budget"},
                      {"target", {}, "return target"},
                      {"devup", {"periods"}, "deviation bound (up) in {0}"},
                      {"devdn", {"periods"}, "deviation bound (down) in {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
