// Assignment: every task to exactly one worker, each worker at most one task, minimum total cost. Binary
// (the LP relaxation is integral). Infeasible design: more tasks than workers.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace assignment_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int nt = 2 + d + g.r.int_in(0, 1);
    const int nw = g.req.want == design::infeasible ? nt - 1 : nt + g.r.int_in(0, 2);
    const strings W = g.names("worker", nw);
    const strings T = g.names("task", nt);
    std::vector<std::vector<double>> cost(nw, std::vector<double>(nt));
    for (auto& row : cost)
        for (auto& c : row) c = g.r.int_in(5, 60);
    ojson& data = g.inst.data;
    data["workers"] = list(W);
    data["tasks"] = list(T);
    data["cost"] = map2(W, T, cost);
    model& m = g.inst.m;
    std::vector<std::vector<int>> x(nw, std::vector<int>(nt));
    for (int i = 0; i < nw; i++)
        for (int j = 0; j < nt; j++) x[i][j] = m.add_var(nm("x", i, j), var_type::binary, 0, 1, cost[i][j]);
    for (int j = 0; j < nt; j++) {
        std::vector<term> t;
        for (int i = 0; i < nw; i++) t.push_back({x[i][j], 1});
        m.add_con(nm("task", j), t, row_sense::eq, 1);
    }
    for (int i = 0; i < nw; i++) {
        std::vector<term> t;
        for (int j = 0; j < nt; j++) t.push_back({x[i][j], 1});
        m.add_con(nm("worker", i), t, row_sense::le, 1);
    }
}

}  // namespace assignment_impl

TREX_FAMILY(assignment) {
    static const family f = [] {
        family f;
        f.name = "assignment";
        f.title = "Assignment problem";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = assignment_impl::generate;
        f.scenarios = {
            {"production", {{"org", "a workshop"}, {"worker", "technician"}, {"workers", "technicians"},
                            {"task", "job"}, {"tasks", "jobs"}, {"cost", "completion time"}, {"unit", "minutes"},
                            {"worker_pool", "workers"}, {"task_pool", "tasks"}}},
            {"healthcare", {{"org", "a hospital"}, {"worker", "nurse"}, {"workers", "nurses"}, {"task", "ward"},
                            {"tasks", "wards"}, {"cost", "[staffing cost|assignment cost]"}, {"unit", "$"},
                            {"worker_pool", "workers"}, {"task_pool", "regions"}}},
            {"education", {{"org", "a university department"}, {"worker", "lecturer"}, {"workers", "lecturers"},
                           {"task", "course"}, {"tasks", "courses"}, {"cost", "preparation time"},
                           {"unit", "hours"}, {"worker_pool", "workers"}, {"task_pool", "courses"}}},
            {"logistics", {{"org", "a delivery firm"}, {"worker", "truck"}, {"workers", "trucks"},
                           {"task", "route"}, {"tasks", "routes"}, {"cost", "operating cost"}, {"unit", "$"},
                           {"worker_pool", "vehicles"}, {"task_pool", "cities"}}},
        };
        f.intro = "[{Org} [must|has to|needs to] assign {n_tasks} {tasks} to its {n_workers} {workers}.|{Org} has "
                  "{n_workers} {workers} available and {n_tasks} {tasks} to cover.|There are {n_tasks} {tasks} at "
                  "{org}, and {n_workers} {workers} [can be|are available to be] assigned to them.|[With|Using] its "
                  "{n_workers} {workers}, {org} [wants|needs] to cover {n_tasks} {tasks}.]";
        f.params = {
            {"workers", {}, "{workers}", "", true},
            {"tasks", {}, "{tasks}", "", true},
            {"cost", {"workers", "tasks"}, "{cost}", "{unit}"},
        };
        f.constraints = {
            "[Every {task} must be assigned to exactly one {worker}.|Each {task} is handled by exactly one "
            "{worker}.|[Exactly one|One and only one] {worker} [must|has to] be [assigned to|given] [each|every] "
            "{task}.|No {task} may be left [uncovered|unassigned] or [shared by|split between] {workers}: [each|every] "
            "{task} [gets|receives] exactly one {worker}.]",
            "[A {worker} can take at most one {task}.|No {worker} may be given more than one {task}.|[Each|Every] "
            "{worker} is assigned [at most|no more than|not more than] one {task}.|It is [not allowed|forbidden] to "
            "give [any|a single] {worker} two or more {tasks}; [a {worker} may also stay idle|a {worker} may also "
            "get no {task}].]",
        };
        f.objective = "[Minimize the total {cost}.|Find the assignment with the smallest total {cost}.|The "
                      "[goal|aim|objective] is to make the [total|overall|combined] {cost} [of the assignment] as "
                      "[small|low] as possible.|Assign the {workers} so that the [sum of the|total] {cost} "
                      "[over all assigned pairs|of the chosen pairs] is [minimized|as small as possible].]";
        f.integrality = "[Assignments are all-or-nothing.|A {task} cannot be split between {workers}.|[Each|Every] "
                        "{worker}-{task} [pairing|assignment] is a yes/no decision.|[Fractional|Partial] assignments "
                        "are [not allowed|not permitted|ruled out].]";
        f.decisions = "whether each {worker} is assigned to each {task} (binary)";
        f.latex = "\\begin{aligned}\n"
                  "\\min\\;& \\sum_{i\\in W}\\sum_{j\\in T} c_{ij}\\,x_{ij} \\\\\n"
                  "\\text{s.t.}\\;& \\sum_{i\\in W} x_{ij} = 1 && \\forall j\\in T \\quad\\text{(task)} \\\\\n"
                  "& \\sum_{j\\in T} x_{ij} \\le 1 && \\forall i\\in W \\quad\\text{(worker)} \\\\\n"
                  "& x_{ij} \\in \\{0,1\\}\n"
                  "\\end{aligned}";
        f.latex_symbols = {"$W$: {workers}; $T$: {tasks}", "$c_{ij}$: {cost} of {worker} $i$ on {task} $j$",
                           "$x_{ij} = 1$ if {worker} $i$ takes {task} $j$"};
        f.code = R"(W = data["workers"]
T = data["tasks"]
x = {(i, j): @var(f"x_{a + 1}_{b + 1}", 0, 1, B) for a, i in enumerate(W) for b, j in enumerate(T)}
@obj(@sum(data["cost"][i][j] * x[i, j] for i in W for j in T))
for b, j in enumerate(T):
    @add(@sum(x[i, j] for i in W) == 1, f"task_{b + 1}")
for a, i in enumerate(W):
    @add(@sum(x[i, j] for j in T) <= 1, f"worker_{a + 1}")
)";
        f.var_docs = {{"x", {"workers", "tasks"}, "{0} assigned to {1}"}};
        f.con_docs = {{"task", {"tasks"}, "coverage of {0}"}, {"worker", {"workers"}, "one {task} for {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
