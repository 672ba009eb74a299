// Workforce planning over periods: work to cover in each period (hours d_t),
// hours per worker H, an initial workforce W0; integer workforce w_t, hires h_t
// (at most U_t per period) and lay-offs f_t; wages, hiring and firing costs.
// MILP minimize total cost. Infeasible design: hiring limits too small to reach
// a later period's requirement.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace workforce_planning_impl {  // named, not anonymous: the families build
                                     // as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int T = std::vector<int>{3, 4, 6, 8, 12}[(size_t)d - 1];
    const strings P = g.names("period", T);
    const double hpw = 10 * g.r.int_in(14, 17);
    std::vector<double> dem(T), maxh(T);
    const int base = g.r.int_in(8, 20);
    for (int t = 0; t < T; t++) {
        const int workers = std::max(3, base + g.r.int_in(-5, 10));
        dem[t] = hpw * workers - 10 * g.r.int_in(0, (int)hpw / 10 - 1);
        maxh[t] = g.r.int_in(2, 6);
    }
    const double w0 = std::max(2.0, std::ceil(dem[0] / hpw) + g.r.int_in(-3, 2));
    // feasible: the largest workforce reachable by hiring at the limit covers
    // every period
    double reach = w0;
    for (int t = 0; t < T; t++) {
        const double need = std::ceil(dem[t] / hpw);
        if (reach + maxh[t] < need) maxh[t] = need - reach + g.r.int_in(0, 2);
        reach += maxh[t];
    }
    if (g.req.want == design::infeasible) {
        const int t = T - 1 - g.r.int_in(0, std::min(1, T - 2));
        double cap = w0;
        for (int s = 0; s <= t; s++) cap += maxh[s];
        dem[t] = hpw * cap + 10 * g.r.int_in(1, (int)hpw / 20);
    }
    const double wage = 100 * g.r.int_in(20, 35), hire = 100 * g.r.int_in(10, 40), fire = 100 * g.r.int_in(15, 50);
    ojson& data = g.inst.data;
    data["periods"] = list(P);
    data["work_hours"] = map1(P, dem);
    data["hours_per_worker"] = num(hpw);
    data["initial_workforce"] = num(w0);
    data["max_hires"] = map1(P, maxh);
    data["wage"] = num(wage);
    data["hiring_cost"] = num(hire);
    data["firing_cost"] = num(fire);
    model& m = g.inst.m;
    std::vector<int> w(T), h(T), f(T);
    for (int t = 0; t < T; t++) {
        w[t] = m.add_var(nm("w", t), var_type::integer, 0, inf, wage);
        h[t] = m.add_var(nm("h", t), var_type::integer, 0, maxh[t], hire);
        f[t] = m.add_var(nm("f", t), var_type::integer, 0, inf, fire);
    }
    for (int t = 0; t < T; t++) {
        std::vector<term> tm = {{w[t], 1}, {h[t], -1}, {f[t], 1}};
        if (t > 0) tm.push_back({w[t - 1], -1});
        m.add_con(nm("balance", t), tm, row_sense::eq, t == 0 ? w0 : 0);
        m.add_con(nm("cover", t), {{w[t], hpw}}, row_sense::ge, dem[t]);
    }
}

}  // namespace workforce_planning_impl

TREX_FAMILY(workforce_planning) {
    static const family f = [] {
        family f;
        f.name = "workforce_planning";
        f.title = "Workforce planning with hiring and lay-offs";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = workforce_planning_impl::generate;
        f.scenarios = {
            {"production",
             {{"org", "a machining plant"},
              {"staff", "machine operators"},
              {"worker", "operator"},
              {"work", "production work"},
              {"period_pool", "periods"}}},
            {"healthcare",
             {{"org", "a hospital nursing department"},
              {"staff", "nurses"},
              {"worker", "nurse"},
              {"work", "nursing care"},
              {"period_pool", "periods"}}},
            {"retail",
             {{"org", "a garden centre"},
              {"staff", "sales assistants"},
              {"worker", "sales assistant"},
              {"work", "store work"},
              {"period_pool", "weeks"}}},
            {"logistics",
             {{"org", "a parcel sorting hub"},
              {"staff", "sorters"},
              {"worker", "sorter"},
              {"work", "sorting work"},
              {"period_pool", "weeks"}}},
            {"education",
             {{"org", "a language school"},
              {"staff", "teachers"},
              {"worker", "teacher"},
              {"work", "teaching"},
              {"period_pool", "periods"}}},
        };
        f.intro =
            "[{Org} plans its number of {staff} for the next {n_periods} periods.|{Org} must decide how many {staff} "
            "to hire or lay off in each of the coming {n_periods} periods.|[Over|For] the next {n_periods} periods, "
            "{org} [has to|must|needs to] [plan|set] [the size of its workforce|how many {staff} it employs], "
            "[hiring|taking on] and laying off {staff} as needed.|[Looking ahead|Planning ahead] {n_periods} periods, "
            "{org} [wants|needs] to [decide|determine] [its head count of {staff}|how many {staff} to employ] and [the "
            "hires and lay-offs|how many to hire and lay off] in each period.]";
        f.params = {
            {"periods", {}, "periods", "", true},
            {"work_hours", {"periods"}, "[{work} requirement|required hours of {work}|hours of {work} needed]",
             "hours"},
            {"hours_per_worker", {},
             "[hours one {worker} works per period|working hours of one {worker} per period|hours each {worker} "
             "works in a period]",
             "hours"},
            {"initial_workforce", {},
             "[{staff} employed before the first period|{staff} on the payroll before the first period|workforce "
             "in place before the first period]",
             "{staff}"},
            {"max_hires", {"periods"}, "[most {staff} that can be hired|hiring limit|largest number of {staff} "
             "that can be hired]", "{staff}"},
            {"wage", {}, "[wage paid to one {worker} for a period|wage per {worker} per period|pay of one {worker} "
             "for one period]", "$"},
            {"hiring_cost", {}, "[cost of hiring one {worker}|hiring cost per {worker}|cost to hire a {worker}]",
             "$"},
            {"firing_cost", {},
             "[cost of laying off one {worker}|lay-off cost per {worker}|cost to lay off a {worker}]", "$"},
        };
        f.constraints = {
            "[The workforce of a period is the previous workforce plus hires minus lay-offs (hires and lay-offs take "
            "effect at the start of the period).|Each period starts from the previous workforce, adjusted by the hires "
            "and lay-offs made at its start.|[In each|In every] period, the number of {staff} [employed|on the "
            "payroll] [equals|is exactly] the number [employed|on the payroll] in the [previous|preceding] period (the "
            "initial workforce [for|before] the first period) plus that period's hires minus its lay-offs.|[Hires and "
            "lay-offs|New hires and lay-offs] take effect at the start of [each|a] period, so [the period's "
            "workforce|the workforce of the period] [is|equals] the [previous|preceding] workforce plus the hires "
            "[less|minus] the lay-offs[, starting from the initial workforce|; the first period starts from the "
            "initial workforce].|[No|Not a single] {worker} [appears|is added] or [leaves|is removed] [except "
            "through|other than by] hiring or lay-offs: [each|every] period's workforce is the [last|previous] "
            "period's [plus hires minus lay-offs|minus lay-offs plus hires], [beginning|starting] with the initial "
            "workforce.]",
            "[The {staff} employed in a period must be able to cover that period's hours of {work}.|Enough {staff} "
            "must be on staff in every period to do the required hours.|[In each|In every] period, the number of "
            "{staff} [times|multiplied by] the hours one {worker} works [must|has to] be at least the [required "
            "hours|{work} requirement] of that period.|[No|Not a single] period [may|can] have [fewer|too few] {staff} "
            "to [cover|do] its hours of {work}: [their hours|the hours they work] [must|have to] [reach|be at least] "
            "the requirement.|[For each|For every] period, [employ|keep] enough {staff} [that|so that] their "
            "[total|combined] working hours [cover|are no less than] the {work} [required|needed].]",
            "[Hiring in a period cannot exceed its limit.|No more {staff} than the limit can be hired in a period.|[In "
            "each|In every] period, the number of {staff} hired [must not|may not|cannot] [exceed|be more than] [that "
            "period's|the] hiring limit.|[Hires|The hires] [in any|in each] period [are capped at|must stay within|may "
            "not go above] [its|the period's] limit.|[At most|No more than] the [given|stated] maximum number of "
            "{staff} [may|can] be hired in [each|any] period.]"};
        f.objective =
            "[Minimize the total cost of wages, hiring and lay-offs.|Find the staffing plan with the lowest total "
            "wage, hiring and lay-off cost.|The [goal|aim|objective] is to [reach|achieve] the [lowest|smallest|least] "
            "[total|overall|combined] cost [of|for] wages, hiring and lay-offs over all periods.|[Plan|Decide|Choose] "
            "the workforce, hires and lay-offs so that [total|overall|combined] wages plus hiring and lay-off costs "
            "are [as low as possible|minimized].|Which [staffing plan|workforce plan] [covers the required "
            "{work}|meets every period's requirement] at the [lowest|least|smallest] [total|overall] cost of wages, "
            "hires and lay-offs?]";
        f.integrality =
            "[{Staff}, hires and lay-offs are whole numbers.|Only whole {staff} can be employed, hired or laid "
            "off.|[The numbers|The counts] of {staff} employed, hired and laid off [must|have to] be [whole "
            "numbers|integers].|[No|Not a] fraction of a {worker} [may|can] be [employed, hired or laid off|hired, "
            "laid off or employed].|[Workforce sizes|Head counts], hires and lay-offs [are|must be] [integers|whole "
            "numbers] in [every|each] period.]";
        f.decisions = "the workforce, hires and lay-offs in each period (integers)";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{t\\in T} (c^w\\,w_t + c^h\\,h_t + c^f\\,f_t) \\\\\n"
            "\\text{s.t.}\\;& w_t - w_{t-1} - h_t + f_t = 0 && \\forall t\\in T,\\ "
            "w_0 = W_0 \\quad\\text{(balance)} "
            "\\\\\n"
            "& H\\,w_t \\ge d_t && \\forall t\\in T \\quad\\text{(cover)} \\\\\n"
            "& 0 \\le h_t \\le U_t,\\ w_t, f_t \\ge 0 && \\text{integer}\n"
            "\\end{aligned}";
        f.latex_symbols = {
            "$T$: periods; $d_t$: hours to cover; $H$: hours per {worker}; $W_0$: "
            "initial workforce",
            "$U_t$: hiring limit; $c^w$, $c^h$, $c^f$: wage, hiring and lay-off "
            "costs",
            "$w_t$: {staff} employed; $h_t$: hires; $f_t$: lay-offs"};
        f.code = R"(T = data["periods"]
w = {t: @var(f"w_{a + 1}", 0, None, I) for a, t in enumerate(T)}
h = {t: @var(f"h_{a + 1}", 0, data["max_hires"][t], I) for a, t in enumerate(T)}
f = {t: @var(f"f_{a + 1}", 0, None, I) for a, t in enumerate(T)}
@obj(@sum(data["wage"] * w[t] + data["hiring_cost"] * h[t] + data["firing_cost"] * f[t] for t in T))
for a, t in enumerate(T):
    prev = w[T[a - 1]] if a > 0 else 0
    rhs = data["initial_workforce"] if a == 0 else 0
    @add(w[t] - prev - h[t] + f[t] == rhs, f"balance_{a + 1}")
    @add(data["hours_per_worker"] * w[t] >= data["work_hours"][t], f"cover_{a + 1}")
)";
        f.var_docs = {{"w", {"periods"}, "{staff} employed in {0}"},
                      {"h", {"periods"}, "{staff} hired at the start of {0}"},
                      {"f", {"periods"}, "{staff} laid off at the start of {0}"}};
        f.con_docs = {{"balance", {"periods"}, "workforce balance of {0}"},
                      {"cover", {"periods"}, "hours covered in {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
