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
                  "{n_periods} periods as demand grows.]";
        f.params = {
            {"periods", {}, "periods", "", true},
            {"demand", {"periods"}, "demand", "{unit}"},
            {"initial_capacity", {}, "current capacity", "{unit}"},
            {"module_size", {}, "capacity added by one {module}", "{unit}"},
            {"module_cost", {"periods"}, "cost of a {module} bought in the period", "$"},
            {"outsourcing_cost", {"periods"}, "cost of covering a shortfall by {out}", "$ per {unit}"},
        };
        f.constraints = {"[Capacity bought in a period remains available in all later periods.|Added {module}s are "
                         "permanent.]",
                         "[In each period, capacity plus outsourced amount must cover demand.|Any demand above "
                         "capacity has to be outsourced.]"};
        f.objective = "[Minimize the total cost of {module}s and outsourcing.|Find the cheapest expansion plan.]";
        f.integrality = "[{Module}s are bought in whole numbers.|Only whole {module}s can be bought.]";
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
