// Timetabling as graph colouring: exams (or jobs, maintenance tasks, surgeries) that conflict (share students,
// tooling, a crew) must be held in different time slots; at most S slots are available. x_ec = 1 when exam e is in
// slot c, y_c = 1 when slot c is used; every exam gets one slot, two conflicting exams never share a used slot
// (x_ec + x_fc <= y_c), slots are used in their listed order (y_c >= y_{c+1}, symmetry breaking); minimum number of
// slots used (the chromatic number of the conflict graph). MILP. The generator plants a clique of conflicts and adds
// random ones; S is the chromatic number (computed exactly) plus one. Infeasible design: the planted clique has
// more exams than there are slots.
#include <functional>

#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace graph_coloring_impl {  // named, not anonymous: the families build as one unity translation unit

// Whether the graph (adjacency matrix) can be coloured with k colours (backtracking in the given order).
bool colourable(const std::vector<std::vector<int>>& adj, int k) {
    const int n = (int)adj.size();
    std::vector<int> colour(n, -1);
    std::function<bool(int)> place = [&](int v) -> bool {
        if (v == n) return true;
        int used = 0;  // colours used so far (a new vertex may open at most one new colour)
        for (int u = 0; u < v; u++) used = std::max(used, colour[u] + 1);
        for (int c = 0; c < std::min(k, used + 1); c++) {
            bool ok = true;
            for (int u = 0; u < v && ok; u++) ok = !(adj[v][u] && colour[u] == c);
            if (!ok) continue;
            colour[v] = c;
            if (place(v + 1)) return true;
        }
        colour[v] = -1;
        return false;
    };
    return place(0);
}

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    static const int exams_at[] = {5, 7, 9, 12, 14};
    const int n = exams_at[d - 1];
    strings E = g.names("exam", n);
    if (g.sc.words.count("exam_prefix"))
        for (auto& e : E) e = g.sc.words.at("exam_prefix") + " " + e;
    std::vector<std::vector<int>> adj(n, std::vector<int>(n, 0));
    // a planted clique of k exams (all pairwise in conflict), then random conflicts
    const int k = std::min(n - 1, 3 + (d >= 3) + (d >= 5 ? g.r.int_in(0, 1) : 0));
    const std::vector<int> p = g.r.permutation(n);
    for (int a = 0; a < k; a++)
        for (int b = a + 1; b < k; b++) adj[p[a]][p[b]] = adj[p[b]][p[a]] = 1;
    const double density = d <= 2 ? 0.3 : 0.25;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (g.r.chance(density)) adj[a][b] = adj[b][a] = 1;
    for (int a = 0; a < n; a++) {  // every exam conflicts with one other at least
        int deg = 0;
        for (int b = 0; b < n; b++) deg += adj[a][b];
        if (deg > 0) continue;
        int b = g.r.int_in(0, n - 2);
        if (b >= a) b++;
        adj[a][b] = adj[b][a] = 1;
    }
    int chromatic = k;
    while (!colourable(adj, chromatic)) chromatic++;
    int S = chromatic + 1;
    if (g.req.want == design::infeasible) S = k - 1;  // the k exams of the clique need k different slots
    strings C;
    for (int c = 0; c < S; c++) C.push_back(fmt::format("{} {}", g.sc.words.at("slot_name"), c + 1));
    std::vector<std::vector<double>> conflict(n, std::vector<double>(n, 0));  // each pair once: a before b
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) conflict[a][b] = adj[a][b];
    ojson& data = g.inst.data;
    data["exams"] = list(E);
    data["slots"] = list(C);
    data["conflicts"] = map2(E, E, conflict);
    model& m = g.inst.m;
    std::vector<int> y(S);
    std::vector<std::vector<int>> x(n, std::vector<int>(S));
    for (int c = 0; c < S; c++) y[c] = m.add_var(nm("y", c), var_type::binary, 0, 1, 1);
    for (int e = 0; e < n; e++)
        for (int c = 0; c < S; c++) x[e][c] = m.add_var(nm("x", e, c), var_type::binary, 0, 1, 0);
    for (int e = 0; e < n; e++) {
        std::vector<term> t;
        for (int c = 0; c < S; c++) t.push_back({x[e][c], 1});
        m.add_con(nm("assign", e), t, row_sense::eq, 1);
    }
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (conflict[a][b] > 0)
                for (int c = 0; c < S; c++)
                    m.add_con(fmt::format("conflict_{}_{}_{}", a + 1, b + 1, c + 1),
                              {{x[a][c], 1}, {x[b][c], 1}, {y[c], -1}}, row_sense::le, 0);
    for (int c = 0; c + 1 < S; c++) m.add_con(nm("order", c), {{y[c], 1}, {y[c + 1], -1}}, row_sense::ge, 0);
}

}  // namespace graph_coloring_impl

TREX_FAMILY(graph_coloring) {
    static const family f = [] {
        family f;
        f.name = "graph_coloring";
        f.title = "Timetabling as graph colouring (fewest time slots)";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = graph_coloring_impl::generate;
        f.scenarios = {
            {"education",
             {{"org", "a university's examinations office"},
              {"exam", "exam"},
              {"exams", "exams"},
              {"exam_set", "exams"},
              {"slot", "exam slot"},
              {"slots", "exam slots"},
              {"slot_name", "Slot"},
              {"conflict_verb", "shares students with"},
              {"conflict_reason", "they share students"},
              {"exam_pool", "courses"}}},
            {"production",
             {{"org", "a tool-and-die shop"},
              {"exam", "job"},
              {"exams", "jobs"},
              {"exam_set", "jobs"},
              {"slot", "shift"},
              {"slots", "shifts"},
              {"slot_name", "Shift"},
              {"conflict_verb", "needs the same special fixture as"},
              {"conflict_reason", "they need the same special fixture"},
              {"exam_pool", "jobs"}}},
            {"energy",
             {{"org", "a grid operator"},
              {"exam", "substation outage"},
              {"exams", "substation outages"},
              {"exam_set", "substations due for maintenance"},
              {"slot", "maintenance week"},
              {"slots", "maintenance weeks"},
              {"slot_name", "Week"},
              {"exam_prefix", "Substation"},
              {"conflict_verb", "is directly connected to"},
              {"conflict_reason", "taking both out at once would cut off supply"},
              {"exam_pool", "nodes"}}},
            {"healthcare",
             {{"org", "a hospital's surgical department"},
              {"exam", "surgery"},
              {"exams", "surgeries"},
              {"exam_set", "surgeries (named after the patients)"},
              {"slot", "operating session"},
              {"slots", "operating sessions"},
              {"slot_name", "Session"},
              {"conflict_verb", "needs the same specialist team as"},
              {"conflict_reason", "they need the same specialist team"},
              {"exam_pool", "workers"}}},
        };
        f.intro =
            "[{Org} must place {n_exams} {exams} into {slots}, and {exams} that conflict cannot share a {slot}.|{Org} "
            "is planning {n_exams} {exams} over at most {n_slots} {slots}; two {exams} in conflict must go to "
            "different {slots}.|There are {n_exams} {exams} [to schedule|to place|to plan] and [up to|at most|no "
            "more than] {n_slots} {slots} [to put them in|available]; {org} [must|has to] keep [conflicting "
            "{exams}|{exams} that conflict] in [different|separate] {slots}.|[Any|Each] two {exams} that "
            "[conflict|are in conflict] [must not|may not|cannot] [share a {slot}|be placed in the same {slot}], and "
            "{org} [has|needs] to [fit|place|schedule] {n_exams} {exams} into [at most|up to|no more than] "
            "{n_slots} {slots}.]";
        f.params = {
            {"exams", {}, "{exam_set}", "", true},
            {"slots", {}, "[{slots} available (in order)|{slots} available, in order|{slots} that can be used (in "
             "order)]", "", true},
            {"conflicts",
             {"exams", "exams"},
             "[conflict indicator (1 if the two {exams} cannot share a {slot})|conflict flag (1 when the two "
             "{exams} may not share a {slot})|conflict marker (1 if the two {exams} must not be in the same "
             "{slot})]",
             "",
             false,
             "",
             "[{row} {conflict_verb} {cols}.|{row} cannot share a {slot} with {cols}, because {conflict_reason}.|"
             "{row} [conflicts|is in conflict] with {cols}[, so they cannot share a {slot}|; they [may not|"
             "cannot] be in the same {slot}].|{row} [must not|may not] [go in|be placed in] the same {slot} as "
             "{cols}[, since|, as] {conflict_reason}.]"},
        };
        f.constraints = {
            "[Every {exam} is held in exactly one {slot}.|Each {exam} is given one {slot}.|[No|Not a single] "
            "{exam} [may|can] be left [without a {slot}|unplaced] or [placed in|split over] [more than one "
            "{slot}|two or more {slots}].|[Each|Every] {exam} [must|has to] be [placed in|assigned to|given] "
            "[exactly one|"
            "one and only one|a single] {slot}.|[Place|Put|Assign] [each|every] {exam} in [exactly one|one and "
            "only one|a single] {slot}.]",
            "[Two {exams} in conflict cannot be in the same {slot}, and only a {slot} that is used can hold "
            "{exams}.|Conflicting {exams} must be in different {slots}; a {slot} holding any {exam} counts as "
            "used.|[If|When] two {exams} [conflict|are in conflict], they [must|have to] [go to|be placed in] "
            "[different|separate] {slots}, and [a {slot} that holds any of them|any {slot} holding one of them] "
            "[counts as|is] used.|[No|Not a single] {slot} [may|can] [hold|contain] two conflicting {exams}, "
            "and [{exams} can only be placed in a {slot} that is used|only a used {slot} can hold {exams}].|It "
            "is [required|necessary] that conflicting {exams} [are kept apart|are in different {slots}], "
            "[with every {slot} that holds an {exam} counted as used|and that every {slot} holding an {exam} "
            "counts as used].]",
            "[{Slots} are used in the order listed: a {slot} may only be used if the one before it is.|To rule out "
            "equivalent timetables, a {slot} is used only if the previous {slot} is used as well.|[A|Any] {slot} "
            "[may|can] be used only [when|if] the {slot} [listed before it|just before it|preceding it] is used "
            "[too|as well].|[No|Not a single] {slot} [may|can] be used [while|if] the {slot} [before it|preceding "
            "it|listed just before it] is [left unused|not used].|[Use|Open] the {slots} in [the listed order|"
            "the order given|list order]: [no|not a single] {slot} [is|may be] used unless the [previous|"
            "preceding] one is [too|as well|also].]"};
        f.objective =
            "[Minimize the number of {slots} used.|Use as few {slots} as possible.|The [goal|aim|objective] is "
            "to [keep|make] the number of {slots} used as [small|low] as possible.|[Choose|Find|Decide] a "
            "[timetable|plan|schedule] that [needs|uses|takes up] the [fewest|smallest number of] {slots}.|Find "
            "the [smallest|least|lowest] number of {slots} [that must be used|needed] [for all the {exams}|to "
            "hold every {exam}].]";
        f.integrality =
            "[Each {exam} is either in a {slot} or not, and a {slot} is either used or not.|All "
            "decisions are yes/no.|[Every|Each] decision is [yes/no|all-or-nothing|binary]: [an {exam} is either "
            "in a given {slot} or not|an {exam} cannot be split across {slots}], and a {slot} is [either used or "
            "not|used or unused].|No {exam} [may|can] be [split|divided] [across|between] {slots}, and [each|"
            "every] {slot} is either [used|in use] or [not|unused].|Whether an {exam} goes in a {slot}, and "
            "whether a {slot} is used, are [yes/no|all-or-nothing|binary] [decisions|choices].]";
        f.decisions = "which {slot} each {exam} is held in and which {slots} are used (binary)";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{c\\in C} y_c \\\\\n"
            "\\text{s.t.}\\;& \\sum_{c\\in C} x_{ec} = 1 && \\forall e\\in E \\quad\\text{(assign)} \\\\\n"
            "& x_{ec} + x_{fc} \\le y_c && \\forall (e,f)\\in F,\\ c\\in C \\quad\\text{(conflict)} \\\\\n"
            "& y_c \\ge y_{c+1} && c = 1,\\dots,|C|-1 \\quad\\text{(order)} \\\\\n"
            "& x_{ec},\\, y_c \\in \\{0,1\\}\n"
            "\\end{aligned}";
        f.latex_symbols = {"$E$: {exams}; $C$: {slots} (in order)", "$F$: pairs of {exams} in conflict",
                           "$x_{ec} = 1$ if {exam} $e$ is in {slot} $c$", "$y_c = 1$ if {slot} $c$ is used"};
        f.code = R"(E = data["exams"]
C = data["slots"]
y = {c: @var(f"y_{k + 1}", 0, 1, B) for k, c in enumerate(C)}
x = {(e, c): @var(f"x_{a + 1}_{k + 1}", 0, 1, B) for a, e in enumerate(E) for k, c in enumerate(C)}
@obj(@sum(y[c] for c in C))
for a, e in enumerate(E):
    @add(@sum(x[e, c] for c in C) == 1, f"assign_{a + 1}")
for a, e in enumerate(E):
    for b, f in enumerate(E):
        if data["conflicts"][e][f] == 1:
            for k, c in enumerate(C):
                @add(x[e, c] + x[f, c] - y[c] <= 0, f"conflict_{a + 1}_{b + 1}_{k + 1}")
for k in range(len(C) - 1):
    @add(y[C[k]] - y[C[k + 1]] >= 0, f"order_{k + 1}")
)";
        f.var_docs = {{"y", {"slots"}, "{0} used"}, {"x", {"exams", "slots"}, "{0} in {1}"}};
        f.con_docs = {{"assign", {"exams"}, "{0} given one {slot}"},
                      {"conflict", {"exams", "exams", "slots"}, "{0} and {1} not both in {2}"},
                      {"order", {"slots"}, "{0} used before the next one"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
