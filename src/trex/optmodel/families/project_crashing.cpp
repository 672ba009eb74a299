// Project crashing (time-cost trade-off): activities with precedences (a DAG), a normal duration, a crash (minimum)
// duration and a crash cost per time unit saved; start times s_i and crash amounts y_i in [0, D_i - d_i]; every
// successor starts after its predecessor finishes (duration D_i - y_i) and everything ends by the deadline; minimum
// crashing cost. LP (the constraint matrix is the dual of a network, so integer data give integer optima).
// Infeasible design: the deadline is below the critical path length with every activity fully crashed.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace project_crashing_impl {  // named, not anonymous: the families build as one unity translation unit

// Length of the longest path with the given durations (activities in index order are topologically sorted).
double critical_path(const std::vector<std::vector<double>>& prec, const std::vector<double>& dur) {
    const size_t n = dur.size();
    std::vector<double> start(n, 0);
    double end = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++)
            if (prec[i][j] > 0) start[j] = std::max(start[j], start[i] + dur[i]);
        end = std::max(end, start[i] + dur[i]);
    }
    return end;
}

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int sizes[] = {5, 8, 12, 18, 28};
    const int n = sizes[d - 1] + g.r.int_in(0, d == 1 ? 1 : 3);
    const strings A = g.names("act", n);
    std::vector<double> normal(n), crash(n), cost(n);
    for (int i = 0; i < n; i++) {
        normal[i] = g.r.int_in(4, 14);
        crash[i] = normal[i] - g.r.int_in(1, std::min(d == 1 ? 3 : 6, (int)normal[i] - 2));
        cost[i] = 10 * g.r.int_in(5, 60);
    }
    std::vector<std::vector<double>> prec(n, std::vector<double>(n, 0));
    for (int j = 1; j < n; j++) {
        const int k = g.r.chance(0.15) ? 0 : 1 + g.r.chance(0.4);
        for (int r = 0; r < k; r++) prec[(size_t)g.r.int_in(std::max(0, j - 5), j - 1)][(size_t)j] = 1;
    }
    const double slow = critical_path(prec, normal), fast = critical_path(prec, crash);
    double deadline = std::min(slow - 1, fast + std::round((slow - fast) * g.r.real_in(0.3, 0.8, 2)));
    if (g.req.want == design::infeasible) deadline = std::max(1.0, fast - g.r.int_in(1, 3));
    ojson& data = g.inst.data;
    data["activities"] = list(A);
    data["normal_duration"] = map1(A, normal);
    data["crash_duration"] = map1(A, crash);
    data["crash_cost"] = map1(A, cost);
    data["precedes"] = map2(A, A, prec);
    data["deadline"] = num(deadline);
    model& m = g.inst.m;
    std::vector<int> s(n), y(n);
    for (int i = 0; i < n; i++) s[i] = m.add_var(nm("s", i), var_type::continuous, 0, inf, 0);
    for (int i = 0; i < n; i++) y[i] = m.add_var(nm("y", i), var_type::continuous, 0, normal[i] - crash[i], cost[i]);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            if (prec[i][j] > 0)
                m.add_con(nm("prec", i, j), {{s[j], 1}, {s[i], -1}, {y[i], 1}}, row_sense::ge, normal[i]);
        m.add_con(nm("finish", i), {{s[i], 1}, {y[i], -1}}, row_sense::le, deadline - normal[i]);
    }
}

}  // namespace project_crashing_impl

TREX_FAMILY(project_crashing) {
    static const family f = [] {
        family f;
        f.name = "project_crashing";
        f.title = "Project crashing (time-cost trade-off)";
        f.milp = false;
        f.can_infeasible = true;
        f.generate = project_crashing_impl::generate;
        f.scenarios = {
            {"production",
             {{"org", "a manufacturer retooling a production line"},
              {"act", "activity"},
              {"acts", "activities"},
              {"unit", "days"},
              {"act_pool", "tasks"}}},
            {"education",
             {{"org", "a school district renovating a campus over the summer"},
              {"act", "work package"},
              {"acts", "work packages"},
              {"unit", "days"},
              {"act_pool", "nodes"}}},
            {"healthcare",
             {{"org", "a hospital rolling out a new patient-record system"},
              {"act", "activity"},
              {"acts", "activities"},
              {"unit", "weeks"},
              {"act_pool", "nodes"}}},
            {"energy",
             {{"org", "a developer building a solar park"},
              {"act", "construction activity"},
              {"acts", "construction activities"},
              {"unit", "days"},
              {"act_pool", "nodes"}}},
        };
        f.intro =
            "[{Org} plans a project of {n_activities} {acts}. Each {act} can be shortened (crashed) down to a minimum "
            "duration at a cost per {unit} saved.|For a project of {n_activities} {acts}, {org} can buy time: every "
            "{act} may be crashed from its normal duration down to its crash duration, paying a fixed cost per {unit} "
            "saved.|{Org} [is running|manages|is planning] a project [made up of|consisting of|with] {n_activities} "
            "{acts}; [any|each] {act} [can|may] be [sped up|shortened|crashed] below its normal duration, [though not "
            "below|but never under] its crash duration, [at a cost for|paying for] each {unit} saved.|[The|A] project "
            "of {org} [has|consists of] {n_activities} {acts}, and [shortening|crashing] an {act} [costs|is charged] a "
            "[fixed|set] amount per {unit} [saved|cut from its normal duration], down to [a minimum|its crash] "
            "duration.]";
        f.params = {
            {"activities", {}, "{acts}", "", true},
            {"normal_duration", {"activities"}, "[normal duration|regular duration|uncrashed duration]", "{unit}"},
            {"crash_duration", {"activities"}, "[crash duration|shortest possible duration|fully crashed duration]",
             "{unit}"},
            {"crash_cost", {"activities"}, "[crash cost|crashing cost|cost of crashing]", "$ per {unit} saved"},
            {"precedes",
             {"activities", "activities"},
             "[precedence (1 if the row {act} must finish before the column {act} starts)|precedence relation (1 "
             "when the row {act} has to be finished before the column {act} can start)|precedence indicator (1 if "
             "the column {act} may start only after the row {act} finishes)]",
             "",
             false,
             "",
             "[{row} must be finished before {cols} can start.|{row} is an immediate predecessor of {cols}.|{cols} "
             "[may|can] not "
             "[start|begin] [until|before] {row} [is finished|has finished].|[Work on|The start of] {cols} [has "
             "to|must] [wait until {row} is complete|wait for {row} to finish].]"},
            {"deadline", {}, "[project deadline|deadline of the project|deadline for the project]", "{unit}"},
        };
        f.constraints = {
            "[An {act} can start only when all its predecessors have finished.|Every {act} waits for all of its "
            "predecessors to finish.|No {act} may [begin|start] before [every one of|all of] its [immediate "
            "predecessors|predecessors] [is complete|has ended].|[Each|Every] {act} [starts|begins] [no earlier "
            "than|only after] the [finish|completion] of [each|every] {act} [listed before it|that must precede it], "
            "[taking into account|using] the [crashed|shortened] durations.|[If|When] one {act} [must precede|has to "
            "come before] another, the [later|second] one [can|may] [start|begin] only [once|after] the first [has "
            "finished|is complete].]",
            "[The duration of an {act} lies between its crash duration and its normal duration; fractional amounts of "
            "crashing are allowed.|An {act} may be shortened by any amount, but not below its crash "
            "duration.|[Crashing|Shortening] is [continuous|allowed in fractions]: [each|every] {act} [takes|lasts] "
            "[anything|any time] from its crash duration up to its normal duration.|[However much|How far] an {act} is "
            "[crashed|shortened], its duration [stays|remains] [within|inside] [the range from its crash duration to "
            "its normal duration|the span between its crash duration and its normal duration]; partial crashing is "
            "[fine|allowed].|[No|Not a single] {act} [may|can] [last longer than|exceed] its normal duration or [be "
            "shorter than|go below] its crash duration, [but|while] any [amount|fraction] in between is "
            "[allowed|permitted].]",
            "[The project starts at time 0 and every {act} must be finished by the deadline.|All {acts} must be "
            "completed by the deadline, counted from the project start at time 0.|[Starting|Counting] from time 0, "
            "[the whole project|every {act}] [has to|must] [end|be done] [no later than|by] the deadline.|The deadline "
            "[binds|applies to] [every|each] {act}: [none|no {act}] may [finish|end] after it, the project "
            "[beginning|starting] at time 0.|[With the project starting|Since the project starts] at time 0, "
            "[each|every] {act} [has to|must] [finish|be completed] [on or before|no later than] the deadline.]"};
        f.objective =
            "[Minimize the total crashing cost.|Meet the deadline at the lowest possible crashing cost.|[Spend|Pay] as "
            "little as possible on crashing [while meeting|and still meet] the deadline.|What [crashing plan|schedule] "
            "[meets|keeps] the deadline [for the least|at minimum] [total|overall] crashing cost?|The "
            "[goal|aim|objective] is to minimize the [total|overall|combined] crash cost [summed over|of] all {acts}[, "
            "each {unit} saved costing the {act}'s crash cost|].]";
        f.decisions = "the start time of each {act} and by how much it is crashed";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{i\\in A} c_i\\,y_i \\\\\n"
            "\\text{s.t.}\\;& s_j - s_i + y_i \\ge D_i && \\forall (i,j):\\ a_{ij} = 1 "
            "\\quad\\text{(prec)} \\\\\n"
            "& s_i - y_i \\le T - D_i && \\forall i\\in A \\quad\\text{(finish)} \\\\\n"
            "& s_i \\ge 0,\\ 0 \\le y_i \\le D_i - d_i\n"
            "\\end{aligned}";
        f.latex_symbols = {"$A$: {acts}; $a_{ij} = 1$ if $i$ must finish before $j$ starts",
                           "$D_i$, $d_i$: normal and crash durations; $c_i$: crash cost per {unit}; $T$: deadline",
                           "$s_i$: start time; $y_i$: {unit} crashed (duration $D_i - y_i$)"};
        f.code = R"(A = data["activities"]
D = data["normal_duration"]
d = data["crash_duration"]
c = data["crash_cost"]
s = {i: @var(f"s_{a + 1}", 0, None, C) for a, i in enumerate(A)}
y = {i: @var(f"y_{a + 1}", 0, D[i] - d[i], C) for a, i in enumerate(A)}
@obj(@sum(c[i] * y[i] for i in A))
for a, i in enumerate(A):
    for b, j in enumerate(A):
        if data["precedes"][i][j] == 1:
            @add(s[j] - s[i] + y[i] >= D[i], f"prec_{a + 1}_{b + 1}")
    @add(s[i] - y[i] <= data["deadline"] - D[i], f"finish_{a + 1}")
)";
        f.var_docs = {{"s", {"activities"}, "start of {0}"}, {"y", {"activities"}, "crashing of {0}"}};
        f.con_docs = {{"prec", {"activities", "activities"}, "{1} starts after {0} ends"},
                      {"finish", {"activities"}, "{0} ends by the deadline"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
