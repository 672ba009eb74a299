// Multi-item production planning with backorders: items x periods with known demand, a shared machine-hour capacity
// per period (hours per unit by item); production x_it, end stock s_it and backorders b_it (demand not yet met,
// served later). Demand unmet in a period is backordered at a cost per unit per period; every backorder must be
// cleared by the end of the horizon (b_iT = 0). Minimize production, holding and backorder costs. LP. Infeasible
// design: the machine hours of the whole horizon fall short of the hours the total demand needs.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace inventory_backorder_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    static const int item_counts[5] = {2, 3, 4, 6, 8};
    static const int period_counts[5] = {3, 4, 6, 8, 12};
    const int n = item_counts[d - 1], T = period_counts[d - 1];
    const strings I = g.names("item", n), P = g.names("period", T);
    std::vector<double> hours(n), pcost(n), hcost(n), bcost(n), cap(T);
    std::vector<std::vector<double>> dem(n, std::vector<double>(T));
    for (int i = 0; i < n; i++) {
        hours[i] = g.r.int_in(1, 6);
        pcost[i] = g.r.int_in(5, 40);
        hcost[i] = g.r.int_in(1, 4);
        bcost[i] = hcost[i] + g.r.int_in(1, 6);
        for (int t = 0; t < T; t++) dem[i][t] = 10 * g.r.int_in(1, 12);
    }
    // capacity fluctuates around the hours demand needs (peaks force building ahead or backordering)
    double total_need = 0;
    std::vector<double> need(T, 0);
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < n; i++) need[t] += hours[i] * dem[i][t];
        total_need += need[t];
    }
    const double avg = total_need / T;
    double total_cap = 0;
    for (int t = 0; t < T; t++) {
        cap[t] = 10 * std::round(avg * g.r.real_in(0.7, 1.25, 2) / 10);
        total_cap += cap[t];
    }
    const double target = g.req.want == design::infeasible ? total_need * g.r.real_in(0.85, 0.95, 2)
                                                           : total_need * g.r.real_in(1.02, 1.1, 2);
    const double step = 10 * std::ceil((target - total_cap) / T / 10);  // shift every period by the same amount
    for (int t = 0; t < T; t++) cap[t] = std::max(10.0, cap[t] + step);
    total_cap = sum(cap);
    if (g.req.want == design::infeasible) {
        for (int t = 0; t < T && total_cap >= total_need; t++) {
            const double cut = std::min(cap[t] - 10, 10 * std::ceil((total_cap - total_need + 1) / 10));
            cap[t] -= cut;
            total_cap -= cut;
        }
    } else {
        for (int t = T - 1; t >= 0 && total_cap < total_need; t--) {
            const double add = 10 * std::ceil((total_need - total_cap) / 10);
            cap[t] += add;
            total_cap += add;
        }
    }
    ojson& data = g.inst.data;
    data["items"] = list(I);
    data["periods"] = list(P);
    data["demand"] = map2(I, P, dem);
    data["hours_per_unit"] = map1(I, hours);
    data["hours_available"] = map1(P, cap);
    data["production_cost"] = map1(I, pcost);
    data["holding_cost"] = map1(I, hcost);
    data["backorder_cost"] = map1(I, bcost);
    model& m = g.inst.m;
    std::vector<std::vector<int>> x(n, std::vector<int>(T)), s(n, std::vector<int>(T)), b(n, std::vector<int>(T));
    for (int i = 0; i < n; i++)
        for (int t = 0; t < T; t++) {
            x[i][t] = m.add_var(nm("x", i, t), var_type::continuous, 0, inf, pcost[i]);
            s[i][t] = m.add_var(nm("s", i, t), var_type::continuous, 0, inf, hcost[i]);
            b[i][t] = m.add_var(nm("b", i, t), var_type::continuous, 0, t == T - 1 ? 0 : inf, bcost[i]);
        }
    for (int i = 0; i < n; i++)
        for (int t = 0; t < T; t++) {
            std::vector<term> tm = {{x[i][t], 1}, {s[i][t], -1}, {b[i][t], 1}};
            if (t > 0) {
                tm.push_back({s[i][t - 1], 1});
                tm.push_back({b[i][t - 1], -1});
            }
            m.add_con(nm("balance", i, t), tm, row_sense::eq, dem[i][t]);
        }
    for (int t = 0; t < T; t++) {
        std::vector<term> tm;
        for (int i = 0; i < n; i++) tm.push_back({x[i][t], hours[i]});
        m.add_con(nm("hours", t), tm, row_sense::le, cap[t]);
    }
}

}  // namespace inventory_backorder_impl

TREX_FAMILY(inventory_backorder) {
    static const family f = [] {
        family f;
        f.name = "inventory_backorder";
        f.title = "Multi-item production planning with backorders";
        f.can_infeasible = true;
        f.generate = inventory_backorder_impl::generate;
        f.scenarios = {
            {"production",
             {{"org", "a furniture workshop"},
              {"item", "product"},
              {"items", "products"},
              {"unit", "pieces"},
              {"res", "machine hours"},
              {"item_pool", "furniture"},
              {"period_pool", "periods"}}},
            {"retail",
             {{"org", "a private-label food packer for a supermarket chain"},
              {"item", "product"},
              {"items", "products"},
              {"unit", "cases"},
              {"res", "packing-line hours"},
              {"item_pool", "foods"},
              {"period_pool", "periods"}}},
            {"healthcare",
             {{"org", "a medical-device maker"},
              {"item", "device model"},
              {"items", "device models"},
              {"unit", "units"},
              {"res", "assembly hours"},
              {"item_pool", "products"},
              {"period_pool", "periods"}}},
            {"education",
             {{"org", "a university press"},
              {"item", "textbook"},
              {"items", "textbooks"},
              {"unit", "copies"},
              {"res", "press hours"},
              {"item_pool", "courses"},
              {"period_pool", "periods"}}},
        };
        f.intro =
            "[{Org} plans production of {n_items} {items} over the next {n_periods} periods.|{Org} must "
            "schedule the production of {n_items} {items} over {n_periods} periods and may fall behind on "
            "orders for a while.|[Over|For] the [next|coming] {n_periods} periods, {org} [has to|must|needs to] "
            "[plan|decide] how much of [each of its|each of] {n_items} {items} to [produce|make], and it [may|"
            "is allowed to] [backorder|fall behind on] demand [for a while|temporarily].|[A production plan|A "
            "plan] for {n_items} {items} [over|covering|spanning] {n_periods} periods is [needed|required] by "
            "{org}, which [may|can] [leave|let] some demand [unmet for a time|wait] as backorders.]";
        f.params = {
            {"items", {}, "{items}", "", true},
            {"periods", {}, "periods", "", true},
            {"demand", {"items", "periods"}, "demand", "{unit}"},
            {"hours_per_unit", {"items"}, "[{res} needed|{res} required|{res} used]", "hours per {unit}"},
            {"hours_available", {"periods"}, "capacity", "{res}"},
            {"production_cost", {"items"}, "[production cost|cost of production|unit production cost]",
             "$ per {unit}"},
            {"holding_cost", {"items"}, "[holding cost|stock-holding cost|inventory holding cost]",
             "$ per {unit} carried to the next period"},
            {"backorder_cost", {"items"}, "[backorder cost|backlog cost|cost of backordering]",
             "$ per {unit} backordered per period"},
        };
        f.constraints = {
            "[There is no stock and no backlog at the start. In each period, the stock carried in plus production "
            "must cover the backlog carried in and the period's demand; what is left is stock, and what is missing "
            "becomes a backorder served later.|Each period starts with the previous period's stock or backlog "
            "(none before the first period); demand not met from stock and production is backordered, and stock "
            "left over is carried to the next period.|[Starting from|With] [no stock and no backlog|zero stock "
            "and zero backlog] [at the start|before the first period], [for each {item} in each period|in every "
            "period, for each {item},] the stock carried in [minus|less] the backlog carried in plus production "
            "[equals|is equal to] the period's demand plus the stock carried out minus the backlog carried "
            "out.|[For every|For each] {item} [and|in each] period, [production plus the incoming stock|the "
            "incoming stock plus production] [first clears|must first cover] the [incoming backlog|backlog "
            "carried in] and then the period's demand; [any surplus|whatever is left] is [carried forward|kept] "
            "as stock, and [any shortfall|whatever is short] [becomes|is added to] the backlog (both start at "
            "zero).]",
            "[The {res} used in a period may not exceed the hours available.|Production in each period is limited by "
            "the {res} available.|[In each|In every] period, the [total|combined|overall] {res} [used by|needed "
            "for] [all|the] {items} [produced|made] [must stay within|must not exceed|may not exceed|has to stay "
            "within] the capacity.|[No|Not a single] period [may|can] [use|need] more {res} [than the capacity "
            "allows|than its capacity|than that period's capacity].|[Keep|Hold] the {res} [used|needed] [in each "
            "period|per period] [within|at or below] that period's capacity.]",
            "[All backorders must be cleared by the end of the last period.|No demand may still be backordered at "
            "the end of the horizon.|[By|At] the end of the last period, [every|each] backorder [must|has to] "
            "[have been|be] [cleared|filled|served].|[Nothing|No demand] [may|can] [remain|be left] [backordered|"
            "on backorder] [after|at the end of] the [last|final] period.|It is [required|necessary] that [the "
            "backlog of every {item}|every {item}'s backlog] [be|is] [zero|cleared] at the end of the [last|"
            "final] period.]"};
        f.objective =
            "[Minimize the total production, holding and backorder cost.|Find the plan with the lowest "
            "total cost of production, inventory and backorders.|The [goal|aim|objective] is to [keep|make] the "
            "[sum|total] of production, holding and backorder costs as [small|low] as possible.|[Choose|Plan|"
            "Decide] [production, stock and backorders|how much to make, hold and backorder] so that the "
            "[total|overall|combined] cost of [producing, holding stock and backordering|production, holding and "
            "backorders] is [minimized|as low as possible].|[Find|Determine] the [production plan|schedule] [that "
            "minimizes the|with the smallest|with the least] [total|overall] [production, holding and backorder "
            "cost|cost of making, storing and backordering].]";
        f.decisions = "production, end-of-period stock and backorders of each {item} in each period";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{i\\in I}\\sum_{t\\in T} (c_i\\,x_{it} + h_i\\,s_{it} + p_i\\,b_{it}) \\\\\n"
            "\\text{s.t.}\\;& s_{i,t-1} - b_{i,t-1} + x_{it} - s_{it} + b_{it} = d_{it} && \\forall i, t,\\ "
            "s_{i0} = b_{i0} = 0 \\quad\\text{(balance)} \\\\\n"
            "& \\sum_{i\\in I} a_i\\,x_{it} \\le H_t && \\forall t\\in T \\quad\\text{(hours)} \\\\\n"
            "& b_{i|T|} = 0 && \\forall i\\in I \\\\\n"
            "& x, s, b \\ge 0\n"
            "\\end{aligned}";
        f.latex_symbols = {"$I$: {items}; $T$: periods",
                           "$d_{it}$: demand; $a_i$: hours per {unit}; $H_t$: hours "
                           "available",
                           "$c_i$, $h_i$, $p_i$: production, holding and backorder costs",
                           "$x_{it}$: production; $s_{it}$: end stock; $b_{it}$: backorders at the end of $t$"};
        f.code = R"(I = data["items"]
T = data["periods"]
x = {(i, t): @var(f"x_{a + 1}_{b + 1}", 0, None, C) for a, i in enumerate(I) for b, t in enumerate(T)}
s = {(i, t): @var(f"s_{a + 1}_{b + 1}", 0, None, C) for a, i in enumerate(I) for b, t in enumerate(T)}
bo = {(i, t): @var(f"b_{a + 1}_{b + 1}", 0, 0 if b == len(T) - 1 else @inf(), C) for a, i in enumerate(I) for b, t in enumerate(T)}
@obj(@sum(data["production_cost"][i] * x[i, t] + data["holding_cost"][i] * s[i, t] + data["backorder_cost"][i] * bo[i, t] for i in I for t in T))
for a, i in enumerate(I):
    for b, t in enumerate(T):
        prev = s[i, T[b - 1]] - bo[i, T[b - 1]] if b > 0 else 0
        @add(prev + x[i, t] - s[i, t] + bo[i, t] == data["demand"][i][t], f"balance_{a + 1}_{b + 1}")
for b, t in enumerate(T):
    @add(@sum(data["hours_per_unit"][i] * x[i, t] for i in I) <= data["hours_available"][t], f"hours_{b + 1}")
)";
        f.var_docs = {{"x", {"items", "periods"}, "production of {0} in {1}"},
                      {"s", {"items", "periods"}, "stock of {0} at the end of {1}"},
                      {"b", {"items", "periods"}, "backorders of {0} at the end of {1}"}};
        f.con_docs = {{"balance", {"items", "periods"}, "stock/backorder balance of {0} in {1}"},
                      {"hours", {"periods"}, "hours in {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
