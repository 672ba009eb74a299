// Capacitated single-item lot sizing: produce p_t (capacity P_t, setup cost f_t if p_t > 0, unit cost c_t), hold
// inventory s_t (cost h per unit per period), meet demand d_t; no initial stock. MILP. Infeasible design:
// cumulative capacity below cumulative demand.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace lot_sizing_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int T = 3 + g.req.difficulty + g.r.int_in(0, 1);
    const strings P = g.names("period", T);
    std::vector<double> dem(T), cap(T), setup(T), unit(T);
    for (int t = 0; t < T; t++) {
        dem[t] = 10 * g.r.int_in(2, 9);
        cap[t] = 10 * g.r.int_in(8, 15);
        setup[t] = 10 * g.r.int_in(10, 40);
        unit[t] = g.r.int_in(3, 8);
    }
    if (g.req.want == design::infeasible) {
        cap[0] = std::max(0.0, dem[0] - 10);
        for (int t = 1; t < T; t++) cap[t] = dem[t];
    }
    const double hold = g.r.int_in(1, 4);
    ojson& data = g.inst.data;
    data["periods"] = list(P);
    data["demand"] = map1(P, dem);
    data["capacity"] = map1(P, cap);
    data["setup_cost"] = map1(P, setup);
    data["unit_cost"] = map1(P, unit);
    data["holding_cost"] = num(hold);
    model& m = g.inst.m;
    std::vector<int> p(T), s(T), y(T);
    for (int t = 0; t < T; t++) {
        p[t] = m.add_var(nm("p", t), var_type::continuous, 0, inf, unit[t]);
        s[t] = m.add_var(nm("s", t), var_type::continuous, 0, inf, hold);
        y[t] = m.add_var(nm("y", t), var_type::binary, 0, 1, setup[t]);
    }
    for (int t = 0; t < T; t++) {
        std::vector<term> tm = {{p[t], 1}, {s[t], -1}};
        if (t > 0) tm.push_back({s[t - 1], 1});
        m.add_con(nm("balance", t), tm, row_sense::eq, dem[t]);
        m.add_con(nm("setup", t), {{p[t], 1}, {y[t], -cap[t]}}, row_sense::le, 0);
    }
}

}  // namespace lot_sizing_impl

TREX_FAMILY(lot_sizing) {
    static const family f = [] {
        family f;
        f.name = "lot_sizing";
        f.title = "Capacitated lot sizing (inventory)";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = lot_sizing_impl::generate;
        f.scenarios = {
            {"production",
             {{"org", "a bottling plant"}, {"good", "batches of juice"}, {"unit", "cases"}, {"period_pool", "weeks"}}},
            {"retail",
             {{"org", "a bakery supplier"}, {"good", "frozen dough"}, {"unit", "trays"}, {"period_pool", "weeks"}}},
            {"healthcare",
             {{"org", "a compounding pharmacy"}, {"good", "IV bags"}, {"unit", "bags"}, {"period_pool", "periods"}}},
            {"energy",
             {{"org", "a biofuel refinery"},
              {"good", "biodiesel"},
              {"unit", "thousand liters"},
              {"period_pool", "periods"}}},
        };
        f.intro =
            "[{Org} plans production of {good} over the next {n_periods} periods.|{Org} must decide when to "
            "produce {good} and how much to keep in stock over {n_periods} periods.|[Over|For] the [next|coming] "
            "{n_periods} periods, {org} [has to|must|needs to] [plan|decide] [when and how much|in which periods "
            "and in what amounts] to [produce|make] {good}, [and what to hold in stock|keeping stock between "
            "periods where useful].|A [production|production and stock] plan for {good} [over|covering|spanning] "
            "{n_periods} periods is [needed|required] by {org}: [when to produce, how much, and what to keep in "
            "stock|in which periods to produce, how much to make and how much to carry forward].]";
        f.params = {
            {"periods", {}, "periods", "", true},
            {"demand", {"periods"}, "demand", "{unit}"},
            {"capacity", {"periods"}, "[production capacity|capacity for production|maximum production]", "{unit}"},
            {"setup_cost", {"periods"},
             "[setup cost if anything is produced|setup cost paid whenever anything is produced|setup cost "
             "incurred if there is any production]",
             "$"},
            {"unit_cost", {"periods"}, "[production cost|unit production cost|cost of production]", "$ per {unit}"},
            {"holding_cost", {},
             "[holding cost per {unit} carried to the next period|cost of holding each {unit} carried to the next "
             "period|holding cost for every {unit} carried into the next period]",
             "$"},
        };
        f.constraints = {
            "[Stock at the start is zero; demand of each period must be met from production and "
            "stock, with no backlogging.|There is no stock before the first period; demand must be met on time "
            "from stock or current production.|[Starting from|With] [an empty warehouse|zero opening stock], "
            "[each|every] period's demand [has to|must] be [covered|met] [in that period|on time] by [its own "
            "production and the stock carried in|stock on hand plus what is produced]; [late delivery|"
            "backlogging] is not [allowed|possible].|[No demand may be|Demand cannot be] [delivered late|"
            "backlogged]: [in every period|period by period], stock carried in plus production [must cover|"
            "covers] [the demand|what is demanded], [and|with] the [first period|plan] [starting from|opening "
            "with] [zero stock|no stock].]",
            "[Producing in a period requires paying its setup cost, and production cannot exceed "
            "capacity.|A setup is needed in every period with production, which is limited by the "
            "capacity.|[Any|Each] period [with|that has] [production|output] [incurs|pays] its setup cost, "
            "and [its output|production] [stays within|may not exceed] [the period's|its] capacity.|[Nothing|No "
            "{good}] can be [produced|made] in a period [without paying its setup cost|unless its setup cost is paid], "
            "and [never|not] more than [its|the period's] capacity.]"};
        f.objective =
            "[Minimize total setup, production and holding costs.|Find the cheapest production and "
            "inventory plan.|[Keep|Make] the [sum|total] of setup, production and holding costs as [low|small] "
            "as possible.|[Plan|Schedule] production [at the least|for the lowest] [total|overall] cost, "
            "[counting|including] setups, production and [stock holding|holding].]";
        f.integrality = "[A setup either happens in a period or not.|Setups are yes/no decisions.|[Whether|If] "
            "a period has a setup is a yes/no [choice|decision].|Setups cannot be [partial|fractional].]";
        f.decisions = "production, end-of-period stock and setups (binary) in each period";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{t\\in T} (f_t\\,y_t + c_t\\,p_t + h\\,s_t) \\\\\n"
            "\\text{s.t.}\\;& s_{t-1} + p_t - s_t = d_t && \\forall t\\in T,\\ s_0 = 0 \\quad\\text{(balance)} "
            "\\\\\n"
            "& p_t \\le P_t\\,y_t && \\forall t\\in T \\quad\\text{(setup)} \\\\\n"
            "& p_t, s_t \\ge 0,\\ y_t \\in \\{0,1\\}\n"
            "\\end{aligned}";
        f.latex_symbols = {"$T$: periods", "$d_t$, $P_t$: demand and capacity",
                           "$f_t$, $c_t$, $h$: setup, unit "
                           "and holding costs",
                           "$p_t$: production; $s_t$: end stock; $y_t = 1$ if set up"};
        f.code = R"(P = data["periods"]
p = {t: @var(f"p_{a + 1}", 0, None, C) for a, t in enumerate(P)}
s = {t: @var(f"s_{a + 1}", 0, None, C) for a, t in enumerate(P)}
y = {t: @var(f"y_{a + 1}", 0, 1, B) for a, t in enumerate(P)}
h = data["holding_cost"]
@obj(@sum(data["setup_cost"][t] * y[t] + data["unit_cost"][t] * p[t] + h * s[t] for t in P))
for a, t in enumerate(P):
    prev = s[P[a - 1]] if a > 0 else 0
    @add(prev + p[t] - s[t] == data["demand"][t], f"balance_{a + 1}")
    @add(p[t] - data["capacity"][t] * y[t] <= 0, f"setup_{a + 1}")
)";
        f.var_docs = {{"p", {"periods"}, "production in {0}"},
                      {"s", {"periods"}, "stock at the end of {0}"},
                      {"y", {"periods"}, "setup in {0}"}};
        f.con_docs = {{"balance", {"periods"}, "inventory balance of {0}"},
                      {"setup", {"periods"}, "setup/capacity in {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
