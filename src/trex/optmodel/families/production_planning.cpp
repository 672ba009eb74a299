// Multi-period production planning: products x periods, production x_pt and stock s_pt meet demand d_pt, a shared
// resource (hours) limited per period; production and holding costs. LP. Infeasible design: capacity too small.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace production_planning_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int np = 2 + (d >= 3) + g.r.int_in(0, 1), nt = 2 + (d + 1) / 2 + g.r.int_in(0, 1);
    const strings Pr = g.names("product", np), T = g.names("period", nt);
    std::vector<std::vector<double>> dem(np, std::vector<double>(nt));
    std::vector<double> hours(np), pcost(np), hcost(np), cap(nt);
    for (int p = 0; p < np; p++) {
        hours[p] = g.r.real_in(0.5, 3, 1);
        pcost[p] = g.r.int_in(5, 30);
        hcost[p] = g.r.int_in(1, 4);
        for (int t = 0; t < nt; t++) dem[p][t] = 10 * g.r.int_in(2, 12);
    }
    double need_total = 0;
    std::vector<double> need(nt, 0);
    for (int t = 0; t < nt; t++) {
        for (int p = 0; p < np; p++) need[t] += hours[p] * dem[p][t];
        need_total += need[t];
    }
    for (int t = 0; t < nt; t++) {
        const double f = g.req.want == design::infeasible ? 0.8 : g.r.real_in(0.8, 1.3, 2);
        cap[t] = 10 * std::round(need[t] * f / 10);
    }
    // cumulative feasibility for feasible designs: enough hours in the first periods to build ahead
    if (g.req.want != design::infeasible) {
        double cum_need = 0, cum_cap = 0;
        for (int t = 0; t < nt; t++) {
            cum_need += need[t];
            cum_cap += cap[t];
            if (cum_cap < cum_need * 1.02) {
                const double add = 10 * std::ceil((cum_need * 1.02 - cum_cap) / 10);
                cap[t] += add;
                cum_cap += add;
            }
        }
    }
    ojson& data = g.inst.data;
    data["products"] = list(Pr);
    data["periods"] = list(T);
    data["demand"] = map2(Pr, T, dem);
    data["hours_per_unit"] = map1(Pr, hours);
    data["hours_available"] = map1(T, cap);
    data["production_cost"] = map1(Pr, pcost);
    data["holding_cost"] = map1(Pr, hcost);
    model& m = g.inst.m;
    std::vector<std::vector<int>> x(np, std::vector<int>(nt)), s(np, std::vector<int>(nt));
    for (int p = 0; p < np; p++)
        for (int t = 0; t < nt; t++) {
            x[p][t] = m.add_var(nm("x", p, t), var_type::continuous, 0, inf, pcost[p]);
            s[p][t] = m.add_var(nm("s", p, t), var_type::continuous, 0, inf, hcost[p]);
        }
    for (int p = 0; p < np; p++)
        for (int t = 0; t < nt; t++) {
            std::vector<term> tm = {{x[p][t], 1}, {s[p][t], -1}};
            if (t > 0) tm.push_back({s[p][t - 1], 1});
            m.add_con(nm("balance", p, t), tm, row_sense::eq, dem[p][t]);
        }
    for (int t = 0; t < nt; t++) {
        std::vector<term> tm;
        for (int p = 0; p < np; p++) tm.push_back({x[p][t], hours[p]});
        m.add_con(nm("hours", t), tm, row_sense::le, cap[t]);
    }
}

}  // namespace production_planning_impl

TREX_FAMILY(production_planning) {
    static const family f = [] {
        family f;
        f.name = "production_planning";
        f.title = "Multi-period production planning";
        f.can_infeasible = true;
        f.generate = production_planning_impl::generate;
        f.scenarios = {
            {"production", {{"org", "a furniture factory"}, {"products", "product lines"}, {"res", "assembly hours"},
                            {"product_pool", "furniture"}, {"period_pool", "periods"}}},
            {"production", {{"org", "an electronics plant"}, {"products", "device models"}, {"res", "line hours"},
                            {"product_pool", "products"}, {"period_pool", "weeks"}}},
            {"retail", {{"org", "a private-label food maker"}, {"products", "products"}, {"res", "kitchen hours"},
                        {"product_pool", "foods"}, {"period_pool", "weeks"}}},
            {"energy", {{"org", "a battery manufacturer"}, {"products", "battery types"}, {"res", "cell-line hours"},
                        {"product_pool", "products"}, {"period_pool", "periods"}}},
        };
        f.intro =
            "[{Org} plans production of {n_products} {products} over {n_periods} periods.|{Org} must meet known demand "
            "for {n_products} {products} in each of the next {n_periods} periods.|[Over|For] the next {n_periods} "
            "periods, {org} [has to|must|needs to] [plan|schedule] how much of [each of its|its] {n_products} "
            "{products} to [make|produce] [in each period|period by period].|Demand for {n_products} {products} is "
            "known for each of the coming {n_periods} periods, and {org} [must|has to] [cover|meet] it [through "
            "production and stock|from production and inventory].]";
        f.params = {
            {"products", {}, "{products}", "", true},
            {"periods", {}, "periods", "", true},
            {"demand", {"products", "periods"}, "demand", "units"},
            {"hours_per_unit", {"products"}, "[{res} per unit|{res} needed per unit|{res} used per unit]", "hours"},
            {"hours_available", {"periods"}, "[{res} available|available {res}|{res} on hand]", "hours"},
            {"production_cost", {"products"}, "[production cost|cost of production|unit production cost]",
             "$ per unit"},
            {"holding_cost", {"products"},
             "[holding cost per unit carried to the next period|cost of holding a unit over to the next "
             "period|holding cost for each unit carried into the next period]",
             "$"},
        };
        f.constraints = {
            "[There is no initial stock; demand must be met in each period from production and stock carried "
            "over.|Each period's demand is covered by that period's production plus inventory from earlier "
            "periods.|[Starting|Beginning] with [no stock|empty inventory], for each product [in every period|in each "
            "period] the stock [carried in|brought in from the previous period] plus [that period's|the period's] "
            "production [must|has to] [equal|be exactly] the demand plus the stock carried [on to|into] the next "
            "period.|[No|Not a single] product's demand in any period [may|can] go unmet: it is [served|covered] from "
            "[that period's|the same period's] production and [stock carried over|inventory held over] from earlier "
            "periods, with [no stock at the start|zero starting stock], and [whatever is left|any surplus] is carried "
            "forward.|[For each|For every] product and period, [production plus the incoming stock|incoming stock plus "
            "production] [equals|must equal] demand plus [outgoing stock|the stock left at the end]; [initial stock is "
            "zero|there is no stock at the start].]",
            "[Production in a period may not use more {res} than available.|The {res} used in each period are "
            "limited.|[In each|In every] period, the [total|combined] {res} [used|needed] by all {products} [must "
            "not|may not|cannot] [exceed|be more than] the {res} available [in|for] that period.|[No|Not a single] "
            "period [may|can] [use|consume] more {res} than [are available|it has available], [counting|summing over] "
            "all {products} [together|combined].|[If|When] the {res} [per unit|needed per unit] [times|multiplied by] "
            "the [amount|quantity] produced are summed over all {products} in a period, the [total|result] [must|has "
            "to] stay [within|at or below] the {res} available in that period.]"};
        f.objective =
            "[Minimize total production plus holding cost.|Find the cheapest production plan.|The [goal|aim|objective] "
            "is to [achieve|reach] the [lowest|smallest|least] [total|overall|combined] cost of production plus "
            "[holding|inventory holding] [costs|cost].|[Decide|Choose|Determine] production and [stock|inventory] "
            "levels so that the [total|sum] of production and holding costs is [as low as possible|minimized].|Which "
            "plan [meets|covers] [all demand|the demand] at the [lowest|smallest|least] [total|overall] [production "
            "and holding|production-plus-holding] cost?]";
        f.decisions = "production and end-of-period inventory of each product in each period";
        f.latex = "\\begin{aligned}\n"
                  "\\min\\;& \\sum_{p\\in P}\\sum_{t\\in T} (c_p\\,x_{pt} + h_p\\,s_{pt}) \\\\\n"
                  "\\text{s.t.}\\;& s_{p,t-1} + x_{pt} - s_{pt} = d_{pt} && \\forall p, t,\\ s_{p0} = 0 "
                  "\\quad\\text{(balance)} \\\\\n"
                  "& \\sum_{p\\in P} a_p\\,x_{pt} \\le H_t && \\forall t\\in T \\quad\\text{(hours)} \\\\\n"
                  "& x, s \\ge 0\n"
                  "\\end{aligned}";
        f.latex_symbols = {"$P$: {products}; $T$: periods", "$d_{pt}$: demand; $a_p$: hours per unit; $H_t$: "
                           "hours available", "$c_p$, $h_p$: production and holding costs",
                           "$x_{pt}$: production; $s_{pt}$: end stock"};
        f.code = R"(P = data["products"]
T = data["periods"]
x = {(p, t): @var(f"x_{a + 1}_{b + 1}", 0, None, C) for a, p in enumerate(P) for b, t in enumerate(T)}
s = {(p, t): @var(f"s_{a + 1}_{b + 1}", 0, None, C) for a, p in enumerate(P) for b, t in enumerate(T)}
@obj(@sum(data["production_cost"][p] * x[p, t] + data["holding_cost"][p] * s[p, t] for p in P for t in T))
for a, p in enumerate(P):
    for b, t in enumerate(T):
        prev = s[p, T[b - 1]] if b > 0 else 0
        @add(prev + x[p, t] - s[p, t] == data["demand"][p][t], f"balance_{a + 1}_{b + 1}")
for b, t in enumerate(T):
    @add(@sum(data["hours_per_unit"][p] * x[p, t] for p in P) <= data["hours_available"][t], f"hours_{b + 1}")
)";
        f.var_docs = {{"x", {"products", "periods"}, "production of {0} in {1}"},
                      {"s", {"products", "periods"}, "stock of {0} after {1}"}};
        f.con_docs = {{"balance", {"products", "periods"}, "inventory balance of {0} in {1}"},
                      {"hours", {"periods"}, "hours in {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
