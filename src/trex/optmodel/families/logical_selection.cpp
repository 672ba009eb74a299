// Selection with logical conditions: choose options (value v_o, cost c_o) within a budget, where some options need
// others ("A only if B": x_A <= x_B), some pairs exclude each other (x_A + x_B <= 1), at most k of a group may be
// chosen and at least one of another group must be; maximum total value. MILP. Infeasible design: an option of the
// must-choose group that needs an option it excludes.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace logical_selection_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int n = 4 + 2 * d + g.r.int_in(0, 1);
    const strings O = g.names("option", n);
    std::vector<double> value(n), cost(n);
    for (int o = 0; o < n; o++) {
        cost[o] = 10 * g.r.int_in(2, 15);
        value[o] = std::round(cost[o] * g.r.real_in(0.8, 2.2, 2) + 10 * g.r.int_in(0, 4));
    }
    std::vector<std::vector<double>> req(n, std::vector<double>(n, 0)), exc(n, std::vector<double>(n, 0));
    const std::vector<int> p = g.r.permutation(n);
    // the must-choose group: options that need nothing (one of them is always affordable)
    const int ne = 2 + (d >= 3);
    strings essential;
    for (int k = 0; k < ne; k++) essential.push_back(O[p[k]]);
    // "A only if B" among the other options, "A and B not both", at most k of a group
    const int nreq = 1 + d / 2, nexc = 1 + (d + 1) / 2;
    for (int k = 0; k < nreq; k++) {
        const int a = p[ne + g.r.int_in(0, n - ne - 1)], b = p[g.r.int_in(0, n - 1)];
        if (a != b && req[b][a] == 0) req[a][b] = 1;
    }
    for (int k = 0; k < nexc; k++) {
        const int a = g.r.int_in(0, n - 1), b = g.r.int_in(0, n - 1);
        if (a != b && req[a][b] == 0 && req[b][a] == 0 && exc[b][a] == 0) exc[a][b] = 1;
    }
    if (g.req.want == design::infeasible) {  // every must-choose option needs one it cannot be chosen with
        for (int k = 0; k < ne; k++) {
            const int a = p[k], b = p[ne + k];
            req[a][b] = 1;
            exc[a][b] = 1;
        }
    }
    const int nl = std::min(n - ne, 3 + d / 2);
    strings limited;
    for (int k = 0; k < nl; k++) limited.push_back(O[p[n - 1 - k]]);
    const double limited_max = std::max(1, nl - 2);
    const double budget = std::round(sum(cost) * g.r.real_in(0.35, 0.55, 2) / 10) * 10;
    ojson& data = g.inst.data;
    data["options"] = list(O);
    data["value"] = map1(O, value);
    data["cost"] = map1(O, cost);
    data["budget"] = num(budget);
    data["requires"] = map2(O, O, req);
    data["excludes"] = map2(O, O, exc);
    data["limited"] = list(limited);
    data["limited_max"] = num(limited_max);
    data["essential"] = list(essential);
    model& m = g.inst.m;
    m.sense = obj_sense::maximize;
    std::vector<int> x(n);
    for (int o = 0; o < n; o++) x[o] = m.add_var(nm("x", o), var_type::binary, 0, 1, value[o]);
    std::vector<term> tb;
    for (int o = 0; o < n; o++) tb.push_back({x[o], cost[o]});
    m.add_con("budget", tb, row_sense::le, budget);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            if (req[a][b] > 0) m.add_con(nm("requires", a, b), {{x[a], 1}, {x[b], -1}}, row_sense::le, 0);
            if (exc[a][b] > 0) m.add_con(nm("excludes", a, b), {{x[a], 1}, {x[b], 1}}, row_sense::le, 1);
        }
    auto group = [&](const strings& s) {
        std::vector<term> t;
        for (int o = 0; o < n; o++)
            if (std::find(s.begin(), s.end(), O[o]) != s.end()) t.push_back({x[o], 1});
        return t;
    };
    m.add_con("limited", group(limited), row_sense::le, limited_max);
    m.add_con("essential", group(essential), row_sense::ge, 1);
}

}  // namespace logical_selection_impl

TREX_FAMILY(logical_selection) {
    static const family f = [] {
        family f;
        f.name = "logical_selection";
        f.title = "Selection with logical conditions (if-then, either-or, at most k, at least one)";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = logical_selection_impl::generate;
        f.scenarios = {
            {"finance",
             {{"org", "an investment committee"},
              {"option", "project"},
              {"options", "projects"},
              {"value", "expected net present value"},
              {"vunit", "$ thousand"},
              {"cunit", "$ thousand"},
              {"option_pool", "sites"}}},
            {"education",
             {{"org", "a university"},
              {"option", "course"},
              {"options", "courses"},
              {"value", "student demand score"},
              {"vunit", "points"},
              {"cunit", "teaching hours"},
              {"option_pool", "courses"}}},
            {"production",
             {{"org", "a manufacturer"},
              {"option", "product feature"},
              {"options", "product features"},
              {"value", "added margin"},
              {"vunit", "$ thousand"},
              {"cunit", "engineering days"},
              {"option_pool", "products"}}},
            {"environment",
             {{"org", "a regional park authority"},
              {"option", "conservation measure"},
              {"options", "conservation measures"},
              {"value", "habitat score"},
              {"vunit", "points"},
              {"cunit", "$ thousand"},
              {"option_pool", "regions"}}},
        };
        f.intro =
            "[{Org} is choosing among {n_options} {options}, under a budget and a few rules about which go "
            "together.|{Org} must select a set of {options} from {n_options} candidates; some choices depend on "
            "others.|[From|Out of] {n_options} candidate {options}, {org} [has to|must|wants to] [pick|select|"
            "choose] [a set|a subset|some] within a budget, [following|respecting|obeying] a few rules about "
            "which {options} [go together|depend on or exclude each other].|There are {n_options} {options} "
            "[to choose from|on offer|under consideration]; {org} [is limited by|must keep to|faces] a budget "
            "and [some|a few] rules [linking|about] the choices.]";
        f.params = {
            {"options", {}, "{options}", "", true},
            {"value", {"options"}, "{value}", "{vunit}"},
            {"cost", {"options"}, "cost", "{cunit}"},
            {"budget", {}, "budget", "{cunit}"},
            {"requires",
             {"options", "options"},
             "[{options} needed|{options} required|prerequisite {options}]",
             "",
             false,
             "",
             "[{Row} can only be chosen together with {cols}.|Choosing {row} requires {cols}.|If {row} is "
             "[chosen|selected], {cols} must be [chosen|selected] [too|as well].|{Row} [may|can] be [chosen|"
             "selected] only [along with|together with|alongside] {cols}.]"},
            {"excludes",
             {"options", "options"},
             "[{options} excluded|{options} ruled out|incompatible {options}]",
             "",
             false,
             "",
             "[{Row} and {cols} cannot both be chosen.|{Row} rules out {cols}.|If {row} is [chosen|selected], "
             "{cols} [cannot|may not] be [chosen|selected].|{Row} is [incompatible|not compatible] with {cols}.]"},
            {"limited", {}, "[{options} of the limited group|{options} in the limited group|limited-group "
             "{options}]", "", true},
            {"limited_max", {},
             "[maximum number of {options} chosen from the limited group|largest number of {options} that may be "
             "chosen from the limited group|cap on how many {options} of the limited group are chosen]",
             ""},
            {"essential", {},
             "[{options} of which at least one must be chosen|{options} of the must-choose group (at least one "
             "must be chosen)|{options} among which at least one must be chosen]",
             "", true},
        };
        f.constraints = {"[The total cost may not exceed the budget.|Spending is limited by the budget.|The "
                         "[combined|total|summed] cost of the [chosen|selected] {options} [must stay within|must "
                         "not exceed|may not be more than] the budget.|[No|Not a single] selection [may|can] "
                         "[cost|come to] more than the budget [in total|all together|overall].|[If|When] the "
                         "costs of the [chosen|selected] {options} are [added up|summed], [the sum|the result] "
                         "[must not|may not|cannot] [exceed|go over] the budget.]",
                         "[Every dependency and every exclusion must be respected.|The rules about {options} "
                         "that need or exclude each other must hold.|[An|Any] {option} that [needs|requires] "
                         "another [may|can] be chosen only [if|when] that one is [chosen|selected] too, and two "
                         "{options} that exclude each other [cannot|may not] [both be chosen|be chosen "
                         "together].|[No|Not a single] {option} [may|can] be [chosen|selected] without the "
                         "{options} it [needs|requires], or together with [one|an {option}] it [excludes|rules "
                         "out].|It is [required|necessary] that [all|every one of the] [dependencies|"
                         "requirements] and [exclusions|incompatibilities] [hold|be respected|are met].]",
                         "[At most the stated number of {options} of the limited group can be chosen, and at least "
                         "one of the must-choose group.|Respect the cap on the limited group and choose at least one "
                         "of the must-choose group.|[No more|Not more] {options} than the stated maximum [may|"
                         "can] be [chosen|selected] from the limited group, and [at least one {option} "
                         "must|one or more {options} must] come from the must-choose group.|The [number|count] of "
                         "{options} [chosen|selected] from the limited group [must not|may not|cannot] exceed the "
                         "stated maximum, [while|and] [the must-choose group must supply at least one|at least one "
                         "{option} of the must-choose group must be chosen].|[From|Out of] the must-choose group, "
                         "[choose|select|pick] at least one {option}; [from|out of] the limited group, [choose|"
                         "select|pick] [at most|no more than] the stated number.]"};
        f.objective = "[Maximize the total {value}.|Find the selection with the largest total {value}.|The [goal|"
                      "aim|objective] is to make the [total|combined|overall] {value} of the [chosen|selected] "
                      "{options} as [large|high] as possible.|[Choose|Select|Pick] the {options} so that their "
                      "[total|combined|summed] {value} is [maximized|as large as possible|as high as "
                      "possible].|[Find|Determine] the [set|selection] of {options} [with|that gives] the "
                      "[largest|highest|greatest] [total|combined|overall] {value}.]";
        f.integrality = "[Each {option} is chosen or not.|{Options} cannot be chosen in part.|[No|Not a single] "
                        "{option} [may|can] be [chosen|selected] [in part|partially|only partly].|[Every|Each] "
                        "{option} is [a yes/no|an all-or-nothing] [choice|decision].|It is [not possible|not "
                        "allowed] to [choose|select] [a fraction of|part of|only part of] [an|any] {option}.]";
        f.decisions = "which {options} to choose (binary)";
        f.latex =
            "\\begin{aligned}\n"
            "\\max\\;& \\sum_{o\\in O} v_o\\,x_o \\\\\n"
            "\\text{s.t.}\\;& \\sum_{o} c_o\\,x_o \\le B \\quad\\text{(budget)} \\\\\n"
            "& x_a \\le x_b && \\forall (a,b): r_{ab} = 1 \\quad\\text{(requires)} \\\\\n"
            "& x_a + x_b \\le 1 && \\forall (a,b): e_{ab} = 1 \\quad\\text{(excludes)} \\\\\n"
            "& \\sum_{o\\in L} x_o \\le k \\quad\\text{(limited)},\\quad \\sum_{o\\in E} x_o \\ge 1 "
            "\\quad\\text{(essential)} \\\\\n"
            "& x_o \\in \\{0,1\\}\n"
            "\\end{aligned}";
        f.latex_symbols = {"$O$: {options}; $L$: the limited group; $E$: the must-choose group",
                           "$v_o, c_o$: {value} and cost; $B$: budget; $k$: cap of the limited group",
                           "$r_{ab} = 1$ if $a$ needs $b$; $e_{ab} = 1$ if $a$ and $b$ exclude each other",
                           "$x_o = 1$ if {option} $o$ is chosen"};
        f.code = R"(O = data["options"]
x = {o: @var(f"x_{a + 1}", 0, 1, B) for a, o in enumerate(O)}
@obj(@sum(data["value"][o] * x[o] for o in O))
@add(@sum(data["cost"][o] * x[o] for o in O) <= data["budget"], "budget")
for a, o in enumerate(O):
    for b, q in enumerate(O):
        if data["requires"][o][q] == 1:
            @add(x[o] - x[q] <= 0, f"requires_{a + 1}_{b + 1}")
        if data["excludes"][o][q] == 1:
            @add(x[o] + x[q] <= 1, f"excludes_{a + 1}_{b + 1}")
@add(@sum(x[o] for o in O if o in data["limited"]) <= data["limited_max"], "limited")
@add(@sum(x[o] for o in O if o in data["essential"]) >= 1, "essential")
)";
        f.var_docs = {{"x", {"options"}, "{0} chosen"}};
        f.con_docs = {{"budget", {}, "budget"},
                      {"requires", {"options", "options"}, "{0} only with {1}"},
                      {"excludes", {"options", "options"}, "{0} not with {1}"},
                      {"limited", {}, "cap of the limited group"},
                      {"essential", {}, "one of the must-choose group"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
