// Weighted goal programming: a production plan (products x_p, resource use a_rp, hard capacities) is judged against
// goals that conflict: a profit target (shortfall penalised), a labour target (shortfall and overtime penalised) and
// a cap on an emission-like measure (excess penalised); deviation variables per goal; minimum weighted deviation.
// LP. Infeasible design: a hard minimum output above what the capacities allow.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace goal_programming_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int n = 2 + d + g.r.int_in(0, 1);
    const strings P = g.names("product", n);
    std::vector<double> profit(n), labour(n), emission(n), machine(n), minimum(n, 0);
    for (int p = 0; p < n; p++) {
        profit[p] = g.r.int_in(8, 40);
        labour[p] = g.r.int_in(1, 6);
        emission[p] = g.r.int_in(1, 9);
        machine[p] = g.r.int_in(2, 8);
    }
    const double machine_cap = 10 * g.r.int_in(15, 40);
    // targets between what the machine hours allow and beyond: the goals cannot all be met
    double best_profit = 0, max_labour = 0;
    for (int p = 0; p < n; p++) {
        best_profit = std::max(best_profit, profit[p] / machine[p] * machine_cap);
        max_labour = std::max(max_labour, labour[p] / machine[p] * machine_cap);
    }
    const double profit_goal = 10 * std::round(best_profit * g.r.real_in(0.75, 1.1, 2) / 10);
    const double labour_goal = 10 * std::round(max_labour * g.r.real_in(0.3, 0.6, 2) / 10);
    const double emission_cap = 10 * std::round(sum(emission) / n * machine_cap / 5 * g.r.real_in(0.3, 0.6, 2) / 10);
    const int mp = g.r.int_in(0, n - 1);
    minimum[mp] = g.req.want == design::infeasible ? std::floor(machine_cap / machine[mp]) + g.r.int_in(1, 10)
                                                   : std::max(1.0, std::floor(machine_cap / machine[mp] * 0.1));
    std::vector<double> w = {(double)g.r.int_in(1, 5), (double)g.r.int_in(1, 5), (double)g.r.int_in(1, 5),
                             (double)g.r.int_in(1, 5)};
    ojson& data = g.inst.data;
    data["products"] = list(P);
    data["profit"] = map1(P, profit);
    data["labour"] = map1(P, labour);
    data["emission"] = map1(P, emission);
    data["machine_hours"] = map1(P, machine);
    data["minimum_output"] = map1(P, minimum);
    data["machine_capacity"] = num(machine_cap);
    data["profit_goal"] = num(profit_goal);
    data["labour_goal"] = num(labour_goal);
    data["emission_cap"] = num(emission_cap);
    data["penalty_profit_short"] = num(w[0]);
    data["penalty_labour_short"] = num(w[1]);
    data["penalty_labour_over"] = num(w[2]);
    data["penalty_emission_over"] = num(w[3]);
    model& m = g.inst.m;
    std::vector<int> x(n);
    for (int p = 0; p < n; p++) x[p] = m.add_var(nm("x", p), var_type::continuous, minimum[p], inf, 0);
    const int ps = m.add_var("profit_short", var_type::continuous, 0, inf, w[0]);
    const int po = m.add_var("profit_over", var_type::continuous, 0, inf, 0);
    const int ls = m.add_var("labour_short", var_type::continuous, 0, inf, w[1]);
    const int lo = m.add_var("labour_over", var_type::continuous, 0, inf, w[2]);
    const int eu = m.add_var("emission_under", var_type::continuous, 0, inf, 0);
    const int eo = m.add_var("emission_over", var_type::continuous, 0, inf, w[3]);
    std::vector<term> tp, tl, te, tm;
    for (int p = 0; p < n; p++) {
        tp.push_back({x[p], profit[p]});
        tl.push_back({x[p], labour[p]});
        te.push_back({x[p], emission[p]});
        tm.push_back({x[p], machine[p]});
    }
    tp.push_back({ps, 1});
    tp.push_back({po, -1});
    tl.push_back({ls, 1});
    tl.push_back({lo, -1});
    te.push_back({eu, 1});
    te.push_back({eo, -1});
    m.add_con("machine", tm, row_sense::le, machine_cap);
    m.add_con("profit_goal", tp, row_sense::eq, profit_goal);
    m.add_con("labour_goal", tl, row_sense::eq, labour_goal);
    m.add_con("emission_goal", te, row_sense::eq, emission_cap);
}

}  // namespace goal_programming_impl

TREX_FAMILY(goal_programming) {
    static const family f = [] {
        family f;
        f.name = "goal_programming";
        f.title = "Weighted goal programming";
        f.can_infeasible = true;
        f.generate = goal_programming_impl::generate;
        f.scenarios = {
            {"production",
             {{"org", "a furniture workshop"},
              {"product", "product"},
              {"products", "products"},
              {"unit", "units"},
              {"emission", "waste"},
              {"eunit", "kg"},
              {"product_pool", "furniture"}}},
            {"environment",
             {{"org", "a chemical plant"},
              {"product", "product"},
              {"products", "products"},
              {"unit", "tons"},
              {"emission", "CO2 emission"},
              {"eunit", "kg"},
              {"product_pool", "products"}}},
            {"retail",
             {{"org", "a bakery"},
              {"product", "bread type"},
              {"products", "bread types"},
              {"unit", "batches"},
              {"emission", "energy use"},
              {"eunit", "kWh"},
              {"product_pool", "foods"}}},
            {"healthcare",
             {{"org", "a hospital laboratory"},
              {"product", "test type"},
              {"products", "test types"},
              {"unit", "batches"},
              {"emission", "hazardous waste"},
              {"eunit", "liters"},
              {"product_pool", "tasks"}}},
        };
        f.intro =
            "[{Org} plans its output of {n_products} {products} and has several goals that cannot all be "
            "met.|{Org} wants a production plan for {n_products} {products} that comes as close as possible "
            "to its goals.|[In planning|When planning] [its output|how much to make] of {n_products} {products}, "
            "{org} [has|pursues|sets] several goals [that conflict|which cannot all be met at once].|[Several|A "
            "few] goals [guide|shape] the [output|production] plan [of|at] {org} for {n_products} {products}, "
            "but [they cannot all be met|not all of them can be reached], so the plan [should|must] come as "
            "close to them as [it can|possible].]";
        f.params = {
            {"products", {}, "{products}", "", true},
            {"profit", {"products"}, "[profit per unit|unit profit|profit on each unit]", "$"},
            {"labour", {"products"}, "[labour hours per unit|labour hours for each unit|labour needed per unit]",
             "hours"},
            {"emission", {"products"}, "[{emission} per unit|{emission} for each unit|{emission} per unit produced]",
             "{eunit}"},
            {"machine_hours", {"products"},
             "[machine hours per unit|machine hours for each unit|machine time per unit]", "hours"},
            {"minimum_output", {"products"}, "[minimum output|least output required|output floor]", "{unit}"},
            {"machine_capacity", {}, "[machine hours available|available machine hours|machine-hour capacity]",
             "hours"},
            {"profit_goal", {}, "[profit goal|profit target|target profit]", "$"},
            {"labour_goal", {},
             "[labour goal (hours to keep the staff busy)|labour goal (the hours that keep the staff busy)|labour "
             "goal (the hours needed to keep the staff busy)]",
             "hours"},
            {"emission_cap", {}, "[{emission} goal (at most)|{emission} goal (an upper target)|{emission} target "
             "(not to be exceeded if possible)]", "{eunit}"},
            {"penalty_profit_short", {},
             "[penalty per $ of profit below its goal|penalty for each $ of profit short of its goal|penalty per $ "
             "by which profit falls below its goal]",
             ""},
            {"penalty_labour_short", {},
             "[penalty per labour hour below its goal|penalty for each labour hour short of its goal|penalty per "
             "labour hour under its goal]",
             ""},
            {"penalty_labour_over", {},
             "[penalty per labour hour above its goal (overtime)|penalty for each labour hour over its goal "
             "(overtime)|penalty per overtime hour above the labour goal]",
             ""},
            {"penalty_emission_over", {},
             "[penalty per {eunit} of {emission} above its goal|penalty for each {eunit} of {emission} over its "
             "goal|penalty per {eunit} by which {emission} exceeds its goal]",
             ""},
        };
        f.constraints = {
            "[Machine hours are a hard limit, and each minimum output must be produced.|The plan may "
            "not use more machine hours than available and must meet every minimum output.|[The machine hours "
            "available|Available machine hours] [cannot|may not] be [exceeded|overrun], and [every|each] minimum "
            "output [has to|must] be [reached|met]; these [are hard|two are strict].|[Two|These] requirements are "
            "[firm|strict]: [stay within|do not exceed] the machine hours, and [produce at least|make no less than] "
            "each minimum output.]",
            "[The goals are soft: profit may fall short of its goal, labour may miss its goal either "
            "way, and {emission} may exceed its goal, each deviation at its penalty.|Deviations from "
            "the goals are allowed but penalised: profit below target, labour hours below or above "
            "target, {emission} above its limit.|The goals [may be missed|can be violated] at a [penalty|"
            "cost]: [profit below|a shortfall of profit under] its goal, labour hours [above or below|off] "
            "[their|the labour] goal [in either direction|either way], and {emission} [above|over] its goal, "
            "[each|every] deviation [charged|penalised] at its [own penalty|weight].]"};
        f.objective =
            "[Minimize the total weighted deviation from the goals.|Find the plan with the smallest sum "
            "of penalties.|[Keep|Make] the [weighted sum of the deviations from the goals|penalty-weighted "
            "deviations] as [small|low] as possible.|[Choose|Find] [the output plan|how much to make] [that "
            "minimizes|with the "
            "least] [total|overall] [weighted deviation|penalty].]";
        f.decisions = "the output of each {product} and the deviation from each goal";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& w_1 d^-_P + w_2 d^-_L + w_3 d^+_L + w_4 d^+_E \\\\\n"
            "\\text{s.t.}\\;& \\sum_p h_p x_p \\le H \\quad\\text{(machine)} \\\\\n"
            "& \\sum_p \\pi_p x_p + d^-_P - d^+_P = G_P \\quad\\text{(profit goal)} \\\\\n"
            "& \\sum_p l_p x_p + d^-_L - d^+_L = G_L \\quad\\text{(labour goal)} \\\\\n"
            "& \\sum_p e_p x_p + d^-_E - d^+_E = G_E \\quad\\text{(emission goal)} \\\\\n"
            "& x_p \\ge m_p,\\ d \\ge 0\n"
            "\\end{aligned}";
        f.latex_symbols = {"$\\pi_p, l_p, e_p, h_p$: profit, labour, {emission}, machine hours per unit",
                           "$G_P, G_L, G_E$: goals; $H$: machine hours; $m_p$: minimum output",
                           "$d^-, d^+$: shortfall and excess of each goal; $w$: penalties",
                           "$x_p$: output of {product} $p$"};
        f.code = R"(P = data["products"]
x = {p: @var(f"x_{a + 1}", data["minimum_output"][p], @inf(), C) for a, p in enumerate(P)}
profit_short = @var("profit_short", 0, @inf(), C)
profit_over = @var("profit_over", 0, @inf(), C)
labour_short = @var("labour_short", 0, @inf(), C)
labour_over = @var("labour_over", 0, @inf(), C)
emission_under = @var("emission_under", 0, @inf(), C)
emission_over = @var("emission_over", 0, @inf(), C)
@obj(data["penalty_profit_short"] * profit_short + data["penalty_labour_short"] * labour_short + data["penalty_labour_over"] * labour_over + data["penalty_emission_over"] * emission_over)
@add(@sum(data["machine_hours"][p] * x[p] for p in P) <= data["machine_capacity"], "machine")
@add(@sum(data["profit"][p] * x[p] for p in P) + profit_short - profit_over == data["profit_goal"], "profit_goal")
@add(@sum(data["labour"][p] * x[p] for p in P) + labour_short - labour_over == data["labour_goal"], "labour_goal")
@add(@sum(data["emission"][p] * x[p] for p in P) + emission_under - emission_over == data["emission_cap"], "emission_goal")
)";
        f.var_docs = {{"x", {"products"}, "output of {0}"},
                      {"profit_short", {}, "profit below its goal"},
                      {"profit_over", {}, "profit above its goal"},
                      {"labour_short", {}, "labour hours below their goal"},
                      {"labour_over", {}, "labour hours above their goal"},
                      {"emission_under", {}, "{emission} below its goal"},
                      {"emission_over", {}, "{emission} above its goal"}};
        f.con_docs = {{"machine", {}, "machine hours"},
                      {"profit_goal", {}, "profit goal"},
                      {"labour_goal", {}, "labour goal"},
                      {"emission_goal", {}, "{emission} goal"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
