// Generalized assignment problem (GAP): every task goes to exactly one agent; task t costs c_at and uses r_at of the
// agent's capacity b_a when agent a does it (both depend on the agent); minimum total cost. MILP. Capacities are
// tight (about 80 % of an even share of the use), never below the load of a planted assignment, so every feasible
// instance has a solution. Infeasible design: capacities whose total is below the sum over the tasks of their
// smallest use.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace generalized_assignment_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    static const int agents_at[] = {2, 3, 4, 5, 6};
    static const int tasks_at[] = {5, 8, 12, 17, 23};
    const int m = agents_at[d - 1], n = tasks_at[d - 1] + g.r.int_in(0, 1);
    const strings A = g.names("agent", m);
    strings T;
    if (g.sc.words.count("task_name"))
        for (int t = 0; t < n; t++) T.push_back(fmt::format("{} {}", g.sc.words.at("task_name"), t + 1));
    else
        T = g.names("task", n);
    std::vector<std::vector<double>> cost(m, std::vector<double>(n)), use(m, std::vector<double>(n));
    for (int a = 0; a < m; a++)
        for (int t = 0; t < n; t++) {
            use[a][t] = g.r.int_in(5, 25);
            cost[a][t] = g.r.int_in(10, 50);
        }
    std::vector<double> capacity(m, 0), planted(m, 0);
    for (int t = 0; t < n; t++) {
        const int a = g.r.int_in(0, m - 1);
        planted[a] += use[a][t];
    }
    for (int a = 0; a < m; a++) {
        double total = 0;
        for (int t = 0; t < n; t++) total += use[a][t];
        capacity[a] = std::max(planted[a], std::round(total / m * g.r.real_in(0.75, 0.85, 2)));
    }
    if (g.req.want == design::infeasible) {  // sum_a b_a < sum_t min_a r_at: no assignment fits
        double least = 0;
        for (int t = 0; t < n; t++) {
            double lo = use[0][t];
            for (int a = 1; a < m; a++) lo = std::min(lo, use[a][t]);
            least += lo;
        }
        for (int a = 0; a < m; a++) capacity[a] = std::floor(least * g.r.real_in(0.8, 0.95, 2) / m);
    }
    ojson& data = g.inst.data;
    data["agents"] = list(A);
    data["tasks"] = list(T);
    data["cost"] = map2(A, T, cost);
    data["use"] = map2(A, T, use);
    data["capacity"] = map1(A, capacity);
    model& md = g.inst.m;
    std::vector<std::vector<int>> x(m, std::vector<int>(n));
    for (int a = 0; a < m; a++)
        for (int t = 0; t < n; t++) x[a][t] = md.add_var(nm("x", a, t), var_type::binary, 0, 1, cost[a][t]);
    for (int t = 0; t < n; t++) {
        std::vector<term> row;
        for (int a = 0; a < m; a++) row.push_back({x[a][t], 1});
        md.add_con(nm("assign", t), row, row_sense::eq, 1);
    }
    for (int a = 0; a < m; a++) {
        std::vector<term> row;
        for (int t = 0; t < n; t++) row.push_back({x[a][t], use[a][t]});
        md.add_con(nm("capacity", a), row, row_sense::le, capacity[a]);
    }
}

}  // namespace generalized_assignment_impl

TREX_FAMILY(generalized_assignment) {
    static const family f = [] {
        family f;
        f.name = "generalized_assignment";
        f.title = "Generalized assignment problem";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = generalized_assignment_impl::generate;
        f.scenarios = {
            {"production",
             {{"org", "a machine shop"},
              {"agent", "machine"},
              {"agents", "machines"},
              {"task", "job"},
              {"tasks", "jobs"},
              {"task_set", "jobs"},
              {"task_name", "Job"},
              {"cost_word", "processing cost"},
              {"cunit", "$"},
              {"use_word", "machine time"},
              {"uunit", "hours"},
              {"agent_pool", "machines"}}},
            {"healthcare",
             {{"org", "a regional health board"},
              {"agent", "hospital"},
              {"agents", "hospitals"},
              {"task", "community clinic"},
              {"tasks", "community clinics"},
              {"task_set", "community clinics (named after their towns)"},
              {"cost_word", "yearly service cost"},
              {"cunit", "thousand dollars"},
              {"use_word", "specialist time"},
              {"uunit", "hours per week"},
              {"agent_pool", "hospitals"},
              {"task_pool", "cities"}}},
            {"education",
             {{"org", "a college department"},
              {"agent", "lecturer"},
              {"agents", "lecturers"},
              {"task", "course"},
              {"tasks", "courses"},
              {"task_set", "courses"},
              {"cost_word", "staffing cost (extra pay and cover)"},
              {"cunit", "hundred dollars"},
              {"use_word", "teaching and preparation time"},
              {"uunit", "hours per term"},
              {"agent_pool", "workers"},
              {"task_pool", "courses"}}},
            {"logistics",
             {{"org", "a parcel carrier"},
              {"agent", "depot"},
              {"agents", "depots"},
              {"task", "delivery area"},
              {"tasks", "delivery areas"},
              {"task_set", "delivery areas (named after their towns)"},
              {"cost_word", "daily delivery cost"},
              {"cunit", "$"},
              {"use_word", "van time"},
              {"uunit", "van hours per day"},
              {"agent_pool", "warehouses"},
              {"task_pool", "cities"}}},
        };
        f.intro =
            "[{Org} must give each of {n_tasks} {tasks} to exactly one of {n_agents} {agents}.|{Org} is assigning "
            "{n_tasks} {tasks} to {n_agents} {agents}; each {task} is handled by a single {agent}.|There are "
            "{n_tasks} {tasks} and {n_agents} {agents}, and {org} [has to|must|needs to] [hand|give|assign] every "
            "{task} to [exactly one|a single|one and only one] {agent}.|[Each|Every] one of {n_tasks} {tasks} "
            "[is to be|must be|has to be] [handled by|assigned to|given to] exactly one of the {n_agents} {agents} "
            "of {org}.] [Both the {cost_word} and the {use_word} a {task} needs depend on the {agent} it goes "
            "to.|A {task} costs a different amount and takes a different share of {use_word} depending on which "
            "{agent} handles it.|[How much|The amount of] {use_word} a {task} [takes|uses|needs], and its "
            "{cost_word}, [depend|both depend] on [which|the] {agent} [it is given to|handles it|it goes to].|The "
            "{cost_word} of a {task} and the {use_word} it [uses|takes|needs] [vary|differ|change] [from {agent} "
            "to {agent}|with the {agent} that handles it|with the {agent} it is assigned to].]";
        f.params = {
            {"agents", {}, "{agents}", "", true},
            {"tasks", {}, "{task_set}", "", true},
            {"cost", {"agents", "tasks"}, "{cost_word}", "{cunit}"},
            {"use", {"agents", "tasks"}, "[{use_word} needed|{use_word} required|{use_word} used]", "{uunit}"},
            {"capacity", {"agents"}, "[{use_word} available|available {use_word}|{use_word} on hand]", "{uunit}"},
        };
        f.constraints = {
            "[Every {task} must be assigned to exactly one {agent}.|Each {task} goes to one {agent}, no more and "
            "no fewer.|[No|Not a single] {task} [may|can] be left [unassigned|out] or [given to|split across|"
            "shared by] [two or more|several|more than one] {agents}: [each|every] {task} [goes to|is handled by] "
            "exactly one {agent}.|It is [required|necessary] that [every|each] {task} [be|is] [handled by|"
            "assigned to|given to] [exactly one|one and only one|a single] {agent}.|[Assign|Give] [every|each] "
            "{task} to [exactly one|one and only one|a single] {agent}[, no more and no fewer|].]",
            "[The {use_word} of the {tasks} given to an {agent} may not exceed what that {agent} has "
            "available.|No {agent} may be loaded beyond its {use_word} available.|For [each|every] {agent}, the "
            "[total|combined|summed] {use_word} [needed by|required by|of] the {tasks} [assigned to|given to|"
            "handled by] it [must stay within|has to stay within|must not exceed|may not exceed] its "
            "{use_word} available.|[The "
            "{use_word} available to an {agent}|What an {agent} has available in {use_word}] [caps|limits|bounds] "
            "the [total|combined|summed] {use_word} of the {tasks} [it handles|assigned to it|it is given].|If "
            "[several|some] {tasks} [go to|are given to|are assigned to] the same {agent}, their [total|combined|"
            "summed] {use_word} [must not|may not|cannot] [exceed|go beyond|be more than] [that {agent}'s|its] "
            "{use_word} available.]"};
        f.objective =
            "[Minimize the total {cost_word}.|Find the assignment with the lowest total {cost_word}.|The [goal|"
            "aim|objective] is to [make|keep] the [total|overall|combined] {cost_word} [as low as possible|as "
            "small as possible|minimal].|[Choose|Decide|Determine] which {agent} [handles|takes|gets] each {task} "
            "so that the [total|overall|combined] {cost_word} is [minimized|as low as possible|smallest].|[What "
            "assignment|Which assignment of {tasks} to {agents}] [gives|yields|achieves] the [lowest|smallest|"
            "least] [total|overall|combined] {cost_word}?]";
        f.integrality =
            "[A {task} cannot be split between {agents}.|Assignments are yes/no decisions.|[Each|Every] {task} "
            "[goes|is assigned] [entirely|as a whole|whole] to [a single|one] {agent}; [it cannot|no {task} may] "
            "be [split|divided|shared] [between|among] {agents}.|[Splitting|Dividing|Sharing] a {task} [between|"
            "among] [two or more|several] {agents} is [not allowed|not permitted|ruled out].|Whether an {agent} "
            "[handles|takes] a {task} is a [yes/no|all-or-nothing] [decision|choice].]";
        f.decisions = "which {agent} handles each {task} (binary)";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{a\\in A}\\sum_{t\\in T} c_{at}\\,x_{at} \\\\\n"
            "\\text{s.t.}\\;& \\sum_{a\\in A} x_{at} = 1 && \\forall t\\in T \\quad\\text{(assign)} \\\\\n"
            "& \\sum_{t\\in T} r_{at}\\,x_{at} \\le b_a && \\forall a\\in A \\quad\\text{(capacity)} \\\\\n"
            "& x_{at} \\in \\{0,1\\}\n"
            "\\end{aligned}";
        f.latex_symbols = {"$A$: {agents}; $T$: {tasks}", "$c_{at}$: {cost_word} of $t$ at $a$",
                           "$r_{at}$: {use_word} $t$ needs at $a$; $b_a$: {use_word} available at $a$",
                           "$x_{at} = 1$ if {agent} $a$ handles {task} $t$"};
        f.code = R"(A = data["agents"]
T = data["tasks"]
x = {(a, t): @var(f"x_{i + 1}_{j + 1}", 0, 1, B) for i, a in enumerate(A) for j, t in enumerate(T)}
@obj(@sum(data["cost"][a][t] * x[a, t] for a in A for t in T))
for j, t in enumerate(T):
    @add(@sum(x[a, t] for a in A) == 1, f"assign_{j + 1}")
for i, a in enumerate(A):
    @add(@sum(data["use"][a][t] * x[a, t] for t in T) <= data["capacity"][a], f"capacity_{i + 1}")
)";
        f.var_docs = {{"x", {"agents", "tasks"}, "{0} handles {1}"}};
        f.con_docs = {{"assign", {"tasks"}, "{0} assigned once"}, {"capacity", {"agents"}, "{use_word} of {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
