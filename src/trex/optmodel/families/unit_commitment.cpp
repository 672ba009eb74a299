// Unit commitment (single bus, no network, no ramping): generators with minimum / maximum output, a fixed cost per
// period committed, a marginal cost and a start-up cost (all units off before the first period); every period's
// demand is met exactly and the committed capacity covers demand plus a spinning reserve. Binaries u_gt (on),
// outputs p_gt, start-ups v_gt in [0, 1] (integral at an optimum); minimum total cost. MILP. Infeasible design: one
// period's demand exceeds the total capacity of all units.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace unit_commitment_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int ng = d == 1 ? 3 : d == 2 ? 3 + g.r.int_in(0, 1) : d + 1, nt = d == 1 ? 3 : d == 5 ? 12 : 2 * d;
    const strings G = g.names("unit", ng);
    strings P;
    for (int t = 1; t <= nt; t++) P.push_back(fmt::format("{} {}", capitalise(g.sc.words.at("period")), t));
    std::vector<double> pmin(ng), pmax(ng), fixed(ng), marg(ng), start(ng);
    for (int i = 0; i < ng; i++) {
        pmax[i] = 10 * g.r.int_in(2, 10);
        pmin[i] = std::round(pmax[i] * g.r.real_in(0.2, 0.5, 2));
        marg[i] = g.r.int_in(10, 60);
        fixed[i] = 10 * g.r.int_in(5, 30);
        start[i] = 50 * g.r.int_in(2, 12);
    }
    const double cap = sum(pmax);
    std::vector<double> dem(nt), res(nt);
    for (int t = 0; t < nt; t++) {
        dem[t] = std::round(cap * g.r.real_in(0.3, 0.65, 2));
        res[t] = std::round(dem[t] * g.r.real_in(0.15, 0.35, 2));
        bool ok = false;  // some set of units can serve demand and reserve (all units always can from sum pmin up)
        for (int s = 1; s < (1 << ng) && !ok; s++) {
            double lo = 0, hi = 0;
            for (int i = 0; i < ng; i++)
                if (s >> i & 1) lo += pmin[i], hi += pmax[i];
            ok = lo <= dem[t] && dem[t] + res[t] <= hi;
        }
        if (!ok) {
            dem[t] = sum(pmin);
            res[t] = std::round(dem[t] * 0.1);
        }
    }
    if (g.req.want == design::infeasible) dem[(size_t)g.r.int_in(0, nt - 1)] = cap + g.r.int_in(5, 30);
    ojson& data = g.inst.data;
    data["units"] = list(G);
    data["min_output"] = map1(G, pmin);
    data["max_output"] = map1(G, pmax);
    data["fixed_cost"] = map1(G, fixed);
    data["marginal_cost"] = map1(G, marg);
    data["startup_cost"] = map1(G, start);
    data["periods"] = list(P);
    data["demand"] = map1(P, dem);
    data["reserve"] = map1(P, res);
    model& m = g.inst.m;
    std::vector<std::vector<int>> u(ng, std::vector<int>(nt)), p(ng, std::vector<int>(nt)), v(ng, std::vector<int>(nt));
    for (int i = 0; i < ng; i++)
        for (int t = 0; t < nt; t++) {
            u[i][t] = m.add_var(nm("u", i, t), var_type::binary, 0, 1, fixed[i]);
            p[i][t] = m.add_var(nm("p", i, t), var_type::continuous, 0, inf, marg[i]);
            v[i][t] = m.add_var(nm("v", i, t), var_type::continuous, 0, 1, start[i]);
        }
    for (int t = 0; t < nt; t++) {
        std::vector<term> bal, rsv;
        for (int i = 0; i < ng; i++) {
            bal.push_back({p[i][t], 1});
            rsv.push_back({u[i][t], pmax[i]});
        }
        m.add_con(nm("balance", t), bal, row_sense::eq, dem[t]);
        m.add_con(nm("reserve", t), rsv, row_sense::ge, dem[t] + res[t]);
    }
    for (int i = 0; i < ng; i++)
        for (int t = 0; t < nt; t++) {
            m.add_con(nm("min", i, t), {{p[i][t], 1}, {u[i][t], -pmin[i]}}, row_sense::ge, 0);
            m.add_con(nm("max", i, t), {{p[i][t], 1}, {u[i][t], -pmax[i]}}, row_sense::le, 0);
            std::vector<term> st = {{v[i][t], 1}, {u[i][t], -1}};
            if (t > 0) st.push_back({u[i][t - 1], 1});
            m.add_con(nm("startup", i, t), st, row_sense::ge, 0);
        }
}

}  // namespace unit_commitment_impl

TREX_FAMILY(unit_commitment) {
    static const family f = [] {
        family f;
        f.name = "unit_commitment";
        f.title = "Unit commitment with spinning reserve";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = unit_commitment_impl::generate;
        f.scenarios = {
            {"energy",
             {{"org", "a regional utility"},
              {"unit", "generating unit"},
              {"units", "generating units"},
              {"period", "hour"},
              {"periods", "hours"},
              {"eunit", "MW"},
              {"unit_pool", "generators"}}},
            {"healthcare",
             {{"org", "a hospital campus with its own microgrid"},
              {"unit", "generator"},
              {"units", "generators"},
              {"period", "block"},
              {"periods", "four-hour blocks"},
              {"eunit", "kW"},
              {"unit_pool", "generators"}}},
            {"education",
             {{"org", "a university power plant"},
              {"unit", "unit"},
              {"units", "units"},
              {"period", "period"},
              {"periods", "periods"},
              {"eunit", "MW"},
              {"unit_pool", "generators"}}},
            {"production",
             {{"org", "a steel mill's captive power station"},
              {"unit", "generator set"},
              {"units", "generator sets"},
              {"period", "shift"},
              {"periods", "shifts"},
              {"eunit", "MW"},
              {"unit_pool", "generators"}}},
        };
        f.intro =
            "[{Org} must decide which of its {n_units} {units} to run in each of {n_periods} {periods} and how much "
            "each one produces.|{Org} schedules {n_units} {units} over {n_periods} {periods}: which are switched on "
            "and what they produce.|[For each of|Over] {n_periods} {periods}, {org} [has to|must|needs to] "
            "[choose|decide] which of its {n_units} {units} [to switch on|to run] and [how much power each one should "
            "produce|what output each running {unit} delivers].|[There are|{Org} operates] {n_units} {units}, and for "
            "[every|each] one of {n_periods} {periods} [the operator|{org}] [must|has to] [settle|fix] [which are "
            "on|their on/off status] and [their output|how much they produce].] [Each value below is an average power "
            "level held for the whole {period}.|Outputs and demands are power levels held for a whole "
            "{period}.|[All|The] [outputs, demands and limits|power figures] [below|given below] are [power "
            "levels|average power levels] [held|kept] [throughout|over] a whole {period}.]";
        f.params = {
            {"units", {}, "{units}", "", true},
            {"min_output", {"units"}, "[minimum output when on|lowest output while running|minimum output while "
             "switched on]", "{eunit}"},
            {"max_output", {"units"}, "[maximum output|output limit|largest possible output]", "{eunit}"},
            {"fixed_cost", {"units"}, "[fixed cost per {period} on|fixed cost for each {period} it is on|fixed "
             "running cost per {period} on]", "$"},
            {"marginal_cost", {"units"}, "[marginal cost|cost per {eunit} of output|marginal production cost]",
             "$ per {eunit} per {period}"},
            {"startup_cost", {"units"}, "[start-up cost|cost of a start-up|cost per start-up]", "$"},
            {"periods", {}, "{periods}", "", true},
            {"demand", {"periods"}, "demand", "{eunit}"},
            {"reserve", {"periods"}, "[spinning reserve requirement|required spinning reserve|spinning reserve "
             "needed]", "{eunit}"},
        };
        f.constraints = {
            "[In every {period} the total output must equal the demand.|Production must match demand exactly in each "
            "{period}.|[For each|For every] {period}, the [combined|summed] output of all {units} [has to|must] [be "
            "exactly|equal] the demand[, no more and no less|].|[No|Not a single] {period} [may|can] have [total "
            "output|output in total] [above or below|different from] its demand.|[The|Total] output [across|of] all "
            "{units} [must|has to] [match|meet] the demand [exactly|precisely] in [every|each] {period}.]",
            "[A {unit} that is on produces between its minimum and maximum output; a {unit} that is off produces "
            "nothing.|Output is zero when a {unit} is off and within its minimum and maximum when it is on.|[If|When] "
            "a {unit} is [switched on|running] in a {period}, its output [must|has to] [lie|be] between its minimum "
            "output and its maximum output; [if|when] it is off, [the output|its output] is zero.|[No|Not a single] "
            "{unit} [may|can] produce [anything|any output] while off, [and|whereas] a {unit} that is on [must|has to] "
            "produce [at least its minimum output and at most its maximum output|no less than its minimum and no more "
            "than its maximum].|[Each|Every] {unit}'s output in a {period} is [zero|nothing] [if it is off|unless it "
            "is on]; [once|when] on, it [must stay|has to stay] [within|between] its minimum and maximum "
            "[output|outputs].]",
            "[The maximum outputs of the {units} that are on must cover the demand plus the spinning reserve "
            "requirement in every {period}.|Spinning reserve: in each {period}, the committed capacity must be at "
            "least the demand plus the reserve requirement.|[For each|For every] {period}, the [sum|total] of the "
            "maximum outputs of the {units} [switched on|running] [must|has to] be at least the demand plus the "
            "spinning reserve requirement.|[No|Not a single] {period} [may|can] have [committed capacity|a total "
            "maximum output of the {units} that are on] [below|less than] its demand plus [its|the] spinning reserve "
            "requirement.|[If the|When the] maximum outputs of [all running|all committed] {units} are [added "
            "up|summed] in a {period}, [the total|the result] [must|has to] [cover|reach] the demand plus the "
            "[spinning reserve|reserve requirement].]",
            "[All {units} are off before the first {period}; switching a {unit} on incurs its start-up cost.|Every "
            "{unit} starts off, and each start-up costs the start-up cost.|[Before|Ahead of] the first {period} "
            "[every|each] {unit} is off, and [each time|whenever] a {unit} [is switched on|goes from off to on] [its "
            "start-up cost is paid|the start-up cost is incurred].|[Each|Every] {unit} [begins|starts] [switched "
            "off|in the off state]; [it is charged|it pays] its start-up cost [in every|in each] {period} in which it "
            "is on [after being|having been] off in the {period} before.|A start-up [happens|occurs] [whenever|when] a "
            "{unit} is on in a {period} but was off in the previous one ([with all {units} off|all {units} being off] "
            "before the first {period}), and [each|every] start-up [costs|is charged] the {unit}'s start-up cost.]"};
        f.objective =
            "[Minimize the total fixed, production and start-up cost.|Find the cheapest schedule, counting fixed, "
            "marginal and start-up costs.|The [goal|aim|objective] is to [reach|achieve] the [lowest|smallest|least] "
            "[total|overall|combined] cost, [made up of|consisting of] fixed costs, marginal [production|output] costs "
            "and start-up costs.|[Schedule|Plan] the {units} so that the sum of fixed, marginal and start-up costs is "
            "[as low as possible|minimized].|Which [schedule|commitment plan] [meets|satisfies] [the demand and "
            "reserve|all requirements] in every {period} at the [lowest|least|smallest] [total|overall] [cost|cost of "
            "fixed, production and start-up charges]?]";
        f.integrality =
            "[Each {unit} is either on or off in a {period}.|On/off decisions are binary.|A {unit} [cannot|may not] be "
            "[partly|partially] on in a {period}.|[Every|Each] {unit} [must|has to] be [fully on or fully off|either "
            "on or off] in [each|every] {period}, [nothing in between|with no intermediate state].|Whether a {unit} "
            "runs in a {period} is [a yes/no|an on/off|an all-or-nothing] [decision|choice].]";
        f.decisions = "which {units} are on in each {period} (binary), their outputs and their start-ups";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{g\\in G}\\sum_{t\\in T} (f_g\\,u_{gt} + c_g\\,p_{gt} + S_g\\,v_{gt}) \\\\\n"
            "\\text{s.t.}\\;& \\sum_{g} p_{gt} = D_t && \\forall t \\quad\\text{(balance)} \\\\\n"
            "& \\sum_{g} \\overline{P}_g\\,u_{gt} \\ge D_t + R_t && \\forall t \\quad\\text{(reserve)} \\\\\n"
            "& \\underline{P}_g\\,u_{gt} \\le p_{gt} \\le \\overline{P}_g\\,u_{gt} && \\forall g, t "
            "\\quad\\text{(min, max)} \\\\\n"
            "& v_{gt} \\ge u_{gt} - u_{g,t-1},\\ u_{g0} = 0 && \\forall g, t \\quad\\text{(startup)} \\\\\n"
            "& u_{gt} \\in \\{0,1\\},\\ p_{gt} \\ge 0,\\ 0 \\le v_{gt} \\le 1\n"
            "\\end{aligned}";
        f.latex_symbols = {"$G$: {units}; $T$: {periods} in order",
                           "$\\underline{P}_g, \\overline{P}_g$: minimum and maximum output",
                           "$f_g, c_g, S_g$: fixed, marginal and start-up costs; $D_t, R_t$: demand and reserve",
                           "$u_{gt} = 1$ if $g$ is on in $t$; $p_{gt}$: output; $v_{gt}$: start-up"};
        f.code = R"(G = data["units"]
T = data["periods"]
u = {(g, t): @var(f"u_{a + 1}_{b + 1}", 0, 1, B) for a, g in enumerate(G) for b, t in enumerate(T)}
p = {(g, t): @var(f"p_{a + 1}_{b + 1}", 0, None, C) for a, g in enumerate(G) for b, t in enumerate(T)}
v = {(g, t): @var(f"v_{a + 1}_{b + 1}", 0, 1, C) for a, g in enumerate(G) for b, t in enumerate(T)}
@obj(@sum(data["fixed_cost"][g] * u[g, t] + data["marginal_cost"][g] * p[g, t] + data["startup_cost"][g] * v[g, t]
          for g in G for t in T))
for b, t in enumerate(T):
    @add(@sum(p[g, t] for g in G) == data["demand"][t], f"balance_{b + 1}")
    @add(@sum(data["max_output"][g] * u[g, t] for g in G) >= data["demand"][t] + data["reserve"][t], f"reserve_{b + 1}")
for a, g in enumerate(G):
    for b, t in enumerate(T):
        @add(p[g, t] - data["min_output"][g] * u[g, t] >= 0, f"min_{a + 1}_{b + 1}")
        @add(p[g, t] - data["max_output"][g] * u[g, t] <= 0, f"max_{a + 1}_{b + 1}")
        prev = u[g, T[b - 1]] if b > 0 else 0
        @add(v[g, t] - u[g, t] + prev >= 0, f"startup_{a + 1}_{b + 1}")
)";
        f.var_docs = {{"u", {"units", "periods"}, "{0} on in {1}"},
                      {"p", {"units", "periods"}, "output of {0} in {1}"},
                      {"v", {"units", "periods"}, "start-up of {0} in {1}"}};
        f.con_docs = {{"balance", {"periods"}, "demand balance in {0}"},
                      {"reserve", {"periods"}, "spinning reserve in {0}"},
                      {"min", {"units", "periods"}, "minimum output of {0} in {1}"},
                      {"max", {"units", "periods"}, "maximum output of {0} in {1}"},
                      {"startup", {"units", "periods"}, "start-up of {0} in {1}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
