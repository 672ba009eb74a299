// Capacity expansion planning: initial capacity K0; in each period buy whole capacity modules (size M, cost c_t,
// bought capacity stays); demand beyond capacity is outsourced at unit cost o_t. Minimum total cost. MILP.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace capacity_planning_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int T = 3 + g.req.difficulty + g.r.int_in(0, 1);
    const strings P = g.names("period", T);
    const double K0 = 10 * g.r.int_in(8, 15), M = 10 * g.r.int_in(2, 6);
    std::vector<double> dem(T), mod(T), out(T);
    double level = K0 * g.r.real_in(0.8, 1.0, 2);
    for (int t = 0; t < T; t++) {
        level *= g.r.real_in(1.05, 1.3, 2);
        dem[t] = 10 * std::round(level / 10);
        mod[t] = 100 * g.r.int_in(8, 30);
        out[t] = g.r.int_in(15, 60);
    }
    ojson& data = g.inst.data;
    data["periods"] = list(P);
    data["demand"] = map1(P, dem);
    data["initial_capacity"] = num(K0);
    data["module_size"] = num(M);
    data["module_cost"] = map1(P, mod);
    data["outsourcing_cost"] = map1(P, out);
    model& m = g.inst.m;
    std::vector<int> z(T), y(T);
    for (int t = 0; t < T; t++) {
        z[t] = m.add_var(nm("z", t), var_type::integer, 0, inf, mod[t]);
        y[t] = m.add_var(nm("y", t), var_type::continuous, 0, inf, out[t]);
    }
    // K0 + M sum_{s<=t} z_s + y_t >= d_t
    for (int t = 0; t < T; t++) {
        std::vector<term> tm;
        for (int s = 0; s <= t; s++) tm.push_back({z[s], M});
        tm.push_back({y[t], 1});
        m.add_con(nm("cover", t), tm, row_sense::ge, dem[t] - K0);
    }
}

}  // namespace capacity_planning_impl

TREX_FAMILY(capacity_planning) {
    static const family f = [] {
        family f;
        f.name = "capacity_planning";
        f.title = "Capacity expansion planning";
        f.milp = true;
        f.generate = capacity_planning_impl::generate;
        f.scenarios = {
            {"energy", {{"org", "a utility"}, {"module", "generator unit"}, {"unit", "MW"},
                        {"out", "buying power on the spot market"}, {"period_pool", "periods"}}},
            {"generic", {{"org", "a cloud provider"}, {"module", "server rack"}, {"unit", "TB"},
                         {"out", "renting capacity from a partner"}, {"period_pool", "periods"}}},
            {"healthcare", {{"org", "a hospital group"}, {"module", "ward module"}, {"unit", "beds"},
                            {"out", "referring patients to partner hospitals"}, {"period_pool", "periods"}}},
            {"education", {{"org", "a growing school district"}, {"module", "portable classroom"},
                           {"unit", "seats"}, {"out", "renting space"}, {"period_pool", "periods"}}},
            {"production", {{"org", "a contract manufacturer"}, {"module", "production line"}, {"unit", "units"},
                            {"out", "subcontracting"}, {"period_pool", "periods"}}},
        };
        f.intro = "[{Org} faces growing demand over {n_periods} periods.|{Org} must plan capacity for the next "
                  "{n_periods} periods as demand grows.|Demand at {org} [is growing|keeps growing|rises], and "
                  "capacity [has to|must] be planned for the [next|coming] {n_periods} periods.|[Over|For] the "
                  "[next|coming] {n_periods} periods, {org} [expects|faces] [growing|rising] demand and [must|has "
                  "to] plan its capacity [accordingly|for it].]";
        f.params = {
            {"periods", {}, "periods", "", true},
            {"demand", {"periods"}, "demand", "{unit}"},
            {"initial_capacity", {}, "[current capacity|capacity available today|existing capacity]", "{unit}"},
            {"module_size", {}, "[capacity added by one {module}|capacity of one {module}|capacity each {module} "
             "adds]", "{unit}"},
            {"module_cost", {"periods"}, "[cost of a {module} bought in the period|price of one {module} bought in "
             "the period|cost per {module} purchased in the period]", "$"},
            {"outsourcing_cost", {"periods"}, "[cost of covering a shortfall by {out}|cost of meeting a shortfall "
             "by {out}|shortfall cost when {out}]", "$ per {unit}"},
        };
        f.constraints = {"[Capacity bought in a period remains available in all later periods.|Added {module}s are "
                         "permanent: [they stay|each one stays] in service from the period [of purchase|it is "
                         "bought] onward.|[Once|After] a {module} is bought, its capacity [stays available|remains "
                         "usable] in that period and [every|each|all] later [one|period|periods].|No {module} is "
                         "[ever|later] [removed|retired]: [capacity added|capacity bought] in a period [counts|is "
                         "available] in that period and in all [later|following|subsequent] ones.]",
                         "[In each period, [capacity|the current capacity plus all {module}s bought so far] plus the "
                         "outsourced amount must cover demand.|Any demand above capacity has to be outsourced: in "
                         "[each|every] period, capacity plus the outsourced amount [is at least|may not be less "
                         "than] the demand.|[For each|In every] period, the demand [must|has to] be [at most|no more "
                         "than|not more than] the [available|installed] capacity plus [the amount outsourced|what is "
                         "outsourced].|No period's demand may [go|be left] uncovered: the [installed|available] "
                         "capacity [that period|in that period], together with the outsourced amount, [has to|must] "
                         "[reach|be at least] it.]"};
        f.objective = "[Minimize the total cost of {module}s and outsourcing.|Find the cheapest expansion plan, "
                      "counting {module}s and outsourcing.|The [goal|aim|objective] is to [keep|make] the "
                      "[total|combined|overall] cost of [buying {module}s|{module} purchases] and [outsourcing|{out}] "
                      "as [low|small] as possible.|[Plan|Choose] the purchases and [the outsourcing|outsourced "
                      "amounts] so that the [total|overall] cost of {module}s [plus|and] outsourcing is "
                      "[minimized|minimal].]";
        f.integrality = "[{Module}s are bought in whole numbers.|Only whole {module}s can be bought.|The number of "
                        "{module}s [bought|purchased] in [a|each] period [must|has to] be a whole number.|[Buying "
                        "part of a {module} is|Fractional purchases of {module}s are] not [possible|allowed].]";
        f.decisions = "how many {module}s to buy in each period (integer) and how much to outsource";
        f.latex = "\\begin{aligned}\n"
                  "\\min\\;& \\sum_{t\\in T} (c_t\\,z_t + o_t\\,y_t) \\\\\n"
                  "\\text{s.t.}\\;& K_0 + M\\sum_{s\\le t} z_s + y_t \\ge d_t && \\forall t\\in T "
                  "\\quad\\text{(cover)} \\\\\n"
                  "& z_t \\in \\mathbb{Z}_{\\ge 0},\\ y_t \\ge 0\n"
                  "\\end{aligned}";
        f.latex_symbols = {"$T$: periods", "$d_t$: demand; $K_0$: current capacity; $M$: module size",
                           "$c_t$, $o_t$: module and outsourcing costs", "$z_t$: modules bought; $y_t$: outsourced"};
        f.code = R"(P = data["periods"]
M = data["module_size"]
z = {t: @var(f"z_{a + 1}", 0, None, I) for a, t in enumerate(P)}
y = {t: @var(f"y_{a + 1}", 0, None, C) for a, t in enumerate(P)}
@obj(@sum(data["module_cost"][t] * z[t] + data["outsourcing_cost"][t] * y[t] for t in P))
for a, t in enumerate(P):
    @add(@sum(M * z[s] for s in P[:a + 1]) + y[t] >= data["demand"][t] - data["initial_capacity"], f"cover_{a + 1}")
)";
        f.var_docs = {{"z", {"periods"}, "{module}s bought in {0}"}, {"y", {"periods"}, "outsourced in {0}"}};
        f.con_docs = {{"cover", {"periods"}, "demand cover in {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
