// Multi-period capital budgeting: projects i, each with a net present value v_i
// and a cash outlay a_it in each period t; a capital budget B_t per period;
// some projects are required. Select projects (x_i binary) to maximize total
// NPV subject to the per-period budgets. MILP. Infeasible design: a required
// project whose outlay in one period exceeds that period's budget.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace capital_budgeting_impl {  // named, not anonymous: the families build
                                    // as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int n = std::vector<int>{4, 7, 12, 20, 30}[(size_t)d - 1] + (d > 1 ? g.r.int_in(0, 2) : 0);
    const int T = std::vector<int>{2, 3, 3, 4, 5}[(size_t)d - 1];
    const strings I = g.names("project", n), P = g.names("period", T);
    std::vector<double> npv(n);
    std::vector<std::vector<double>> out(n, std::vector<double>(T));
    std::vector<double> budget(T, 0);
    for (int i = 0; i < n; i++) {
        double total = 0;
        for (int t = 0; t < T; t++) {
            out[i][t] = g.r.chance(0.15) ? 0 : g.r.int_in(5, 40);
            total += out[i][t];
        }
        if (total == 0) out[i][0] = g.r.int_in(5, 40), total = out[i][0];
        npv[i] = std::round(total * g.r.real_in(0.8, 2.5, 2) / T) + g.r.int_in(1, 10);
    }
    for (int t = 0; t < T; t++) {
        double s = 0;
        for (int i = 0; i < n; i++) s += out[i][t];
        budget[t] = std::round(s * g.r.real_in(0.4, 0.6, 2));
    }
    // one required project (already committed to): the one with the smallest
    // outlay in the feasible design
    int req = 0;
    double req_out = 1e18;
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int t = 0; t < T; t++) s += out[i][t];
        if (s < req_out) req_out = s, req = i;
    }
    for (int t = 0; t < T; t++) budget[t] = std::max(budget[t], out[req][t] + g.r.int_in(5, 15));
    if (g.req.want == design::infeasible) {
        req = g.r.int_in(0, n - 1);
        const int t = g.r.int_in(0, T - 1);
        out[req][t] = budget[t] + g.r.int_in(1, 10);
    }
    ojson& data = g.inst.data;
    data["projects"] = list(I);
    data["periods"] = list(P);
    data["npv"] = map1(I, npv);
    data["outlay"] = map2(I, P, out);
    data["budget"] = map1(P, budget);
    data["required"] = list({I[(size_t)req]});
    model& m = g.inst.m;
    m.sense = obj_sense::maximize;
    std::vector<int> x(n);
    for (int i = 0; i < n; i++) x[i] = m.add_var(nm("x", i), var_type::binary, 0, 1, npv[i]);
    for (int t = 0; t < T; t++) {
        std::vector<term> tm;
        for (int i = 0; i < n; i++)
            if (out[i][t] != 0) tm.push_back({x[i], out[i][t]});
        m.add_con(nm("budget", t), tm, row_sense::le, budget[t]);
    }
    m.add_con(nm("required", 0), {{x[req], 1}}, row_sense::ge, 1);
}

}  // namespace capital_budgeting_impl

TREX_FAMILY(capital_budgeting) {
    static const family f = [] {
        family f;
        f.name = "capital_budgeting";
        f.title = "Multi-period capital budgeting";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = capital_budgeting_impl::generate;
        f.scenarios = {
            {"finance",
             {{"org", "an investment committee"},
              {"projects", "candidate investments"},
              {"project", "investment"},
              {"money", "thousand dollars"},
              {"project_pool", "assets"},
              {"period_pool", "periods"}}},
            {"production",
             {{"org", "a manufacturing group"},
              {"projects", "plant modernisation projects"},
              {"project", "project"},
              {"money", "thousand dollars"},
              {"project_pool", "plants"},
              {"period_pool", "periods"}}},
            {"healthcare",
             {{"org", "a regional health authority"},
              {"projects", "hospital renovation projects"},
              {"project", "renovation"},
              {"money", "thousand euros"},
              {"project_pool", "hospitals"},
              {"period_pool", "periods"}}},
            {"education",
             {{"org", "a school district"},
              {"projects", "school building projects"},
              {"project", "project"},
              {"money", "thousand dollars"},
              {"project_pool", "schools"},
              {"period_pool", "weeks"}}},
            {"energy",
             {{"org", "a power utility"},
              {"projects", "plant retrofit projects"},
              {"project", "retrofit"},
              {"money", "million dollars"},
              {"project_pool", "generators"},
              {"period_pool", "periods"}}},
        };
        f.intro =
            "[{Org} is [choosing|selecting] among {n_projects} {projects}, each of which needs cash in some of the "
            "next {n_periods} periods.|{Org} must decide which of {n_projects} {projects} to fund; every selected "
            "{project} draws cash over the next {n_periods} periods.|There are {n_projects} {projects} [on the "
            "table|under consideration] at {org}, and [each|every] one [requires|draws] cash in some of the "
            "[next|coming] {n_periods} periods.|[Over|For] the [next|coming] {n_periods} periods, {org} [has "
            "to|must] [decide|choose] which of {n_projects} {projects} to [fund|finance]; [a funded one|each funded "
            "{project}] [needs|draws] cash in some of those periods.]";
        f.params = {
            {"projects", {}, "{projects}", "", true},
            {"periods", {}, "periods", "", true},
            {"npv", {"projects"}, "[net present value|NPV|net present value (NPV)]", "{money}"},
            {"outlay", {"projects", "periods"}, "[cash outlay if selected|cash needed if funded|outlay when "
             "selected]", "{money}"},
            {"budget", {"periods"}, "[capital budget|budget available|capital available]", "{money}"},
            {"required",
             {},
             "[{projects} that must be funded (already committed)|already committed {projects} (must be "
             "funded)|{projects} committed in advance (must be funded)]",
             "",
             true},
        };
        f.constraints = {
            "[In every period the [total] outlays of the selected {projects} [may not|must not|cannot] exceed that "
            "period's budget.|The cash spent on selected {projects} in each period must stay within the budget of "
            "that period.|No period may [see|have] [total|combined] outlays on the [chosen|selected] {projects} "
            "[above|beyond|exceeding] its [budget|capital budget].|[Period by period|For each period], the "
            "[combined|total] [outlay|cash outlay] of the [chosen|selected] {projects} [is at most|may not be more "
            "than] [that period's budget|the budget for that period].]",
            "[Every committed {project} must be selected.|The committed {projects} have to be part of the "
            "selection.|[Already committed|Committed] {projects} [must be funded in any case|cannot be dropped from "
            "the selection].|[The selection|Any plan] [must include|has to contain] [every|each] committed "
            "{project}.]"};
        f.objective =
            "[Maximize the total net present value of the selected {projects}.|Choose the {projects} that give the "
            "largest total net present value.|[Pick|Select] the {projects} [so as to|to] [make|get] the "
            "[combined|overall|total] net present value [of the selection] as [large|high] as possible.|The "
            "[aim|goal] is the [highest|largest] [total|combined] net present value [of the chosen {projects}|from "
            "the {projects} funded].]";
        f.integrality =
            "[Each {project} is either funded completely or not at all.|A {project} cannot be funded "
            "partially.|[Partial funding of a {project}|Funding part of a {project}] is [not possible|ruled "
            "out].|[Every|Each] {project} is [all or nothing|taken whole or not at all]: it is [either] selected "
            "[in full|completely] or [rejected|not at all].]";
        f.decisions = "which {projects} to fund (binary)";
        f.latex =
            "\\begin{aligned}\n"
            "\\max\\;& \\sum_{i\\in I} v_i\\,x_i \\\\\n"
            "\\text{s.t.}\\;& \\sum_{i\\in I} a_{it}\\,x_i \\le B_t && "
            "\\forall t\\in T \\quad\\text{(budget)} \\\\\n"
            "& x_i \\ge 1 && \\forall i\\in R \\quad\\text{(required)} \\\\\n"
            "& x_i \\in \\{0,1\\}\n"
            "\\end{aligned}";
        f.latex_symbols = {"$I$: {projects}; $T$: periods; $R \\subseteq I$: committed {projects}",
                           "$v_i$: net present value; $a_{it}$: outlay in period $t$; $B_t$: "
                           "budget",
                           "$x_i = 1$ if {project} $i$ is funded"};
        f.code = R"(I = data["projects"]
T = data["periods"]
x = {i: @var(f"x_{a + 1}", 0, 1, B) for a, i in enumerate(I)}
@obj(@sum(data["npv"][i] * x[i] for i in I))
for b, t in enumerate(T):
    @add(@sum(data["outlay"][i][t] * x[i] for i in I if data["outlay"][i][t] != 0) <= data["budget"][t], f"budget_{b + 1}")
for k, i in enumerate(data["required"]):
    @add(x[i] >= 1, f"required_{k + 1}")
)";
        f.var_docs = {{"x", {"projects"}, "whether {0} is funded"}};
        f.con_docs = {{"budget", {"periods"}, "budget of {0}"}, {"required", {"required"}, "{0} must be funded"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
