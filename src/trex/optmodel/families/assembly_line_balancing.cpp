// Simple assembly line balancing, type 1 (SALBP-1): assign tasks (times t_i, precedence relation) to the stations of
// a paced line with cycle time C so that no station's work exceeds C and a task never sits at an earlier station
// than one of its predecessors; minimize the number of stations opened (y_k, opened in line order). MILP.
// Infeasible design: one task takes longer than the cycle time.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace assembly_line_balancing_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int n = d == 1 ? 5 + g.r.int_in(0, 1) : 5 + 2 * d - (d == 5 ? 1 : 0) + g.r.int_in(0, 1);
    const strings T = g.names("task", n);
    // tasks are drawn in a topological order (index order); names are shuffled by the pool
    std::vector<double> time(n);
    for (auto& t : time) t = g.r.int_in(2, 12);
    std::vector<std::vector<double>> prec(n, std::vector<double>(n, 0));
    for (int j = 1; j < n; j++) {
        const int k = g.r.chance(0.25) ? 0 : 1 + g.r.chance(0.35);
        for (int r = 0; r < k; r++) prec[(size_t)g.r.int_in(std::max(0, j - 4), j - 1)][(size_t)j] = 1;
    }
    const int target = 2 + (d >= 2) + (d >= 4) + (d >= 5);
    const double tmax = *std::max_element(time.begin(), time.end());
    const double C = std::max(tmax, std::ceil(sum(time) / target * g.r.real_in(1.0, 1.15, 2)));
    // greedy in index (topological) order: a feasible line, whose length bounds the stations offered
    int used = 1;
    double load = 0;
    for (int i = 0; i < n; i++) {
        if (load + time[i] > C) used++, load = 0;
        load += time[i];
    }
    const int K = used + g.r.int_in(0, 1);
    if (g.req.want == design::infeasible) time[(size_t)g.r.int_in(0, n - 1)] = C + g.r.int_in(1, 5);
    strings S;
    for (int k = 1; k <= K; k++) S.push_back(fmt::format("{} {}", capitalise(g.sc.words.at("station")), k));
    ojson& data = g.inst.data;
    data["tasks"] = list(T);
    data["time"] = map1(T, time);
    data["precedes"] = map2(T, T, prec);
    data["cycle_time"] = num(C);
    data["stations"] = list(S);
    model& m = g.inst.m;
    std::vector<std::vector<int>> x(n, std::vector<int>(K));
    std::vector<int> y(K);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < K; k++) x[i][k] = m.add_var(nm("x", i, k), var_type::binary, 0, 1, 0);
    for (int k = 0; k < K; k++) y[k] = m.add_var(nm("y", k), var_type::binary, 0, 1, 1);
    for (int i = 0; i < n; i++) {
        std::vector<term> t;
        for (int k = 0; k < K; k++) t.push_back({x[i][k], 1});
        m.add_con(nm("assign", i), t, row_sense::eq, 1);
    }
    for (int k = 0; k < K; k++) {
        std::vector<term> t;
        for (int i = 0; i < n; i++) t.push_back({x[i][k], time[i]});
        t.push_back({y[k], -C});
        m.add_con(nm("cycle", k), t, row_sense::le, 0);
    }
    for (int k = 1; k < K; k++) m.add_con(nm("open", k), {{y[k], 1}, {y[k - 1], -1}}, row_sense::le, 0);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (prec[i][j] == 0) continue;
            std::vector<term> t;
            for (int k = 0; k < K; k++) t.push_back({x[i][k], (double)(k + 1)});
            for (int k = 0; k < K; k++) t.push_back({x[j][k], -(double)(k + 1)});
            m.add_con(nm("prec", i, j), t, row_sense::le, 0);
        }
}

}  // namespace assembly_line_balancing_impl

TREX_FAMILY(assembly_line_balancing) {
    static const family f = [] {
        family f;
        f.name = "assembly_line_balancing";
        f.title = "Assembly line balancing (SALBP-1, minimum stations)";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = assembly_line_balancing_impl::generate;
        f.scenarios = {
            {"production",
             {{"org", "a bicycle assembly plant"},
              {"task", "task"},
              {"tasks", "tasks"},
              {"station", "workstation"},
              {"stations", "workstations"},
              {"unit", "minutes"},
              {"item", "bicycle"},
              {"task_pool", "nodes"}}},
            {"logistics",
             {{"org", "an order-fulfilment center"},
              {"task", "operation"},
              {"tasks", "operations"},
              {"station", "packing station"},
              {"stations", "packing stations"},
              {"unit", "seconds"},
              {"item", "order"},
              {"task_pool", "tasks"}}},
            {"healthcare",
             {{"org", "a mass vaccination clinic"},
              {"task", "step"},
              {"tasks", "steps"},
              {"station", "booth"},
              {"stations", "booths"},
              {"unit", "minutes"},
              {"item", "visitor"},
              {"task_pool", "nodes"}}},
            {"retail",
             {{"org", "a meal-kit company"},
              {"task", "packing task"},
              {"tasks", "packing tasks"},
              {"station", "line position"},
              {"stations", "line positions"},
              {"unit", "seconds"},
              {"item", "meal kit"},
              {"task_pool", "foods"}}},
        };
        f.intro =
            "[{Org} runs a paced line: every {item} [passes|moves through|travels past] the {stations} in order and "
            "each {station} has [at most|no more than] one cycle time to do its share of the {n_tasks} {tasks}.|{Org} "
            "[splits|divides|distributes] the {n_tasks} {tasks} [needed|required] per {item} among the {stations} of "
            "a paced line; the work at any {station} [must|has to] fit into the cycle time.|[Every|Each] {item} at "
            "{org} [requires|goes through] {n_tasks} {tasks}, which are [allocated|assigned] to the {stations} of a "
            "paced line; [no {station} may get more work than fits into the cycle time|the work given to any "
            "{station} [cannot|may not] exceed the cycle time].|A paced line [is run by|operates at] {org}: the "
            "{n_tasks} {tasks} [of|for] [every|each] {item} are [shared among|spread over] its {stations}, [and|while] "
            "[each|every] {station} [gets|has] [at most|no more than] one cycle time [of work|to finish its part].]";
        f.params = {
            {"tasks", {}, "{tasks}", "", true},
            {"time", {"tasks"}, "[duration|processing time|task time]", "{unit}"},
            {"precedes",
             {"tasks", "tasks"},
             "[precedence (1 if the row {task} must be done before the column {task})|precedence indicator (1 if "
             "the row {task} has to be done before the column {task})|precedence flag (1 when the row {task} must "
             "be completed before the column {task})]",
             "",
             false,
             "",
             "[The {task} {row} must be done before {cols}.|{Task} {row} precedes {cols}.|{Task} {row} [has to|must] "
             "be [completed|finished|done] before {cols}.|Before {cols}, {task} {row} [has to|must] be "
             "[completed|finished|done].]"},
            {"cycle_time", {}, "cycle time", "{unit}"},
            {"stations",
             {},
             "[{stations} that can be opened (in line order)|{stations} available to open (in line order)|candidate "
             "{stations} (listed in line order)]",
             "",
             true},
        };
        f.constraints = {
            "[Every {task} [is assigned to|must be assigned to|goes to] exactly one {station}.|Each {task} is "
            "[done|performed|carried out] at exactly one {station}.|No {task} may be [split between|shared by] "
            "{stations}: it is [assigned to|done at] exactly one {station}.|[It is required that|We require that] "
            "[every|each] {task} [be|is] [assigned|allocated] to exactly one {station}.]",
            "[The [total|combined] duration of the {tasks} at a {station} [may not exceed|must not exceed|cannot be "
            "more than] the cycle time, and only [opened|open] {stations} can [take|receive|be given] {tasks}.|A "
            "{station} [works|can be used] only if it is opened, and the [total|combined] duration of its {tasks} "
            "[must|has to] fit [into|within] the cycle time.|No {task} may be [assigned to|placed at] a {station} "
            "that is not open, and at [every|each] open {station} the [total|combined] duration of the assigned "
            "{tasks} [is at most|may not exceed|must not exceed] the cycle time.|If a {station} is [opened|open], "
            "the [total duration|combined duration|sum of the durations] of the {tasks} [assigned to it|placed "
            "there] [must|has to] [stay within|be at most] the cycle time; a closed {station} [gets|receives|takes] "
            "no {tasks}.]",
            "[{Stations} are opened in line order: a {station} can be opened only if the one before it is.|No "
            "{station} may be opened unless all earlier {stations} are open.|A {station} [may|can] be opened only "
            "if the {station} [just|immediately|directly] before it [is open too|is also open|is open as well].|If "
            "a {station} is [opened|open], [then] the one [immediately|directly|right] before it [must|has to] be "
            "open [too|as well].|The {stations} [must|have to] be opened in line order, so [no {station} is open "
            "while the one before it is closed|a closed {station} is never directly followed by an open one].]",
            "[A {task} may not be done at an earlier {station} than any of its predecessors (the same {station} "
            "is allowed).|Precedences must be respected: a {task} sits at the same {station} as [all of|each of] its "
            "predecessors or further down the line.|[Every|Each] {task} [must|has to] be [placed|assigned] at a "
            "{station} [no earlier in the line than|that does not come before] the {station} of [each|every one] of "
            "its predecessors.|No {task} may be [placed|done] at a {station} [earlier in the line|further up the "
            "line] than [any of its predecessors|a {task} that must precede it]; [sharing|using] the same {station} "
            "is [allowed|permitted|fine].|If one {task} must be done before another, the [latter|second] [must|has "
            "to] be [at|assigned to] the same {station} [as the former|as the first] or a [later|subsequent] one "
            "[along|in] the line.]"};
        f.objective =
            "[Minimize the number of {stations} opened.|Use as few {stations} as possible.|The [goal|aim|objective] "
            "is to [open|use] [as few {stations} as possible|the smallest number of {stations}|the minimum number of "
            "{stations}].|[Balance|Plan] the line so that [as few {stations} as possible are opened|the number of "
            "open {stations} is [minimal|as small as possible]].|Find [an assignment|a line balance] that "
            "[opens|needs] the [fewest|smallest number of] {stations}.]";
        f.integrality =
            "[Assignments and openings are yes/no decisions.|A {task} is either at a {station} or "
            "not, and a {station} is either open or not.|[Each|Every] decision of [whether|if] a {task} goes to a "
            "{station}, and of [whether|if] a {station} is opened, is [binary|a yes/no choice].|{Tasks} cannot be "
            "split [across|between] {stations}, and a {station} is [either fully open or closed|opened whole or not "
            "at all].]";
        f.decisions = "which {station} does each {task} (binary) and which {stations} are opened (binary)";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{k\\in K} y_k \\\\\n"
            "\\text{s.t.}\\;& \\sum_{k\\in K} x_{ik} = 1 && \\forall i\\in I \\quad\\text{(assign)} \\\\\n"
            "& \\sum_{i\\in I} t_i\\,x_{ik} \\le C\\,y_k && \\forall k\\in K \\quad\\text{(cycle)} \\\\\n"
            "& y_k \\le y_{k-1} && \\forall k \\ge 2 \\quad\\text{(open)} \\\\\n"
            "& \\sum_{k\\in K} k\\,x_{ik} \\le \\sum_{k\\in K} k\\,x_{jk} && \\forall (i,j):\\ a_{ij} = 1 "
            "\\quad\\text{(prec)} \\\\\n"
            "& x_{ik}, y_k \\in \\{0,1\\}\n"
            "\\end{aligned}";
        f.latex_symbols = {"$I$: {tasks}; $K = \\{1, \\dots, |K|\\}$: {stations} in line order",
                           "$t_i$: duration; $C$: cycle time; $a_{ij} = 1$ if $i$ must precede $j$",
                           "$x_{ik} = 1$ if {task} $i$ is done at {station} $k$; $y_k = 1$ if {station} $k$ is open"};
        f.code = R"(T = data["tasks"]
S = data["stations"]
cycle = data["cycle_time"]
pos = {k: b + 1 for b, k in enumerate(S)}
x = {(i, k): @var(f"x_{a + 1}_{b + 1}", 0, 1, B) for a, i in enumerate(T) for b, k in enumerate(S)}
y = {k: @var(f"y_{b + 1}", 0, 1, B) for b, k in enumerate(S)}
@obj(@sum(y[k] for k in S))
for a, i in enumerate(T):
    @add(@sum(x[i, k] for k in S) == 1, f"assign_{a + 1}")
for b, k in enumerate(S):
    @add(@sum(data["time"][i] * x[i, k] for i in T) - cycle * y[k] <= 0, f"cycle_{b + 1}")
for b in range(1, len(S)):
    @add(y[S[b]] - y[S[b - 1]] <= 0, f"open_{b + 1}")
for a, i in enumerate(T):
    for c, j in enumerate(T):
        if data["precedes"][i][j] == 1:
            @add(@sum(pos[k] * x[i, k] for k in S) - @sum(pos[k] * x[j, k] for k in S) <= 0, f"prec_{a + 1}_{c + 1}")
)";
        f.var_docs = {{"x", {"tasks", "stations"}, "{0} at {1}"}, {"y", {"stations"}, "{0} opened"}};
        f.con_docs = {{"assign", {"tasks"}, "assignment of {0}"},
                      {"cycle", {"stations"}, "cycle time at {0}"},
                      {"open", {"stations"}, "{0} opened only after the one before"},
                      {"prec", {"tasks", "tasks"}, "{0} before {1}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
