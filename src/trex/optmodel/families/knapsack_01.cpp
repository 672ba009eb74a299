// 0-1 knapsack: choose items of value v_i and weight w_i within capacity W, maximum value. MILP.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace knapsack_01_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int n = 4 + 2 * g.req.difficulty + g.r.int_in(0, 2);
    const strings I = g.names("item", n);
    std::vector<double> value(n), weight(n);
    for (int i = 0; i < n; i++) {
        weight[i] = g.r.int_in(3, 30);
        value[i] = std::max(1.0, std::round(weight[i] * g.r.real_in(0.6, 2.0, 2) + g.r.int_in(0, 10)));
    }
    const double cap = std::round(sum(weight) * g.r.real_in(0.3, 0.6, 2));
    ojson& data = g.inst.data;
    data["items"] = list(I);
    data["value"] = map1(I, value);
    data["weight"] = map1(I, weight);
    data["capacity"] = num(cap);
    model& m = g.inst.m;
    m.sense = obj_sense::maximize;
    std::vector<term> t;
    for (int i = 0; i < n; i++) t.push_back({m.add_var(nm("x", i), var_type::binary, 0, 1, value[i]), weight[i]});
    m.add_con("capacity", t, row_sense::le, cap);
}

}  // namespace knapsack_01_impl

TREX_FAMILY(knapsack_01) {
    static const family f = [] {
        family f;
        f.name = "knapsack_01";
        f.title = "0-1 knapsack problem";
        f.milp = true;
        f.generate = knapsack_01_impl::generate;
        f.scenarios = {
            {"logistics",
             {{"org", "an expedition team"},
              {"item", "piece of equipment"},
              {"items", "items"},
              {"value", "usefulness score"},
              {"vunit", "points"},
              {"wunit", "kg"},
              {"cap", "weight the team can carry"},
              {"item_pool", "items"}}},
            {"finance",
             {{"org", "an investment committee"},
              {"item", "project"},
              {"items", "projects"},
              {"value", "expected net present value"},
              {"vunit", "k$"},
              {"wunit", "k$ of capital"},
              {"cap", "capital budget"},
              {"item_pool", "products"}}},
            {"energy",
             {{"org", "a grid operator"},
              {"item", "upgrade"},
              {"items", "candidate upgrades"},
              {"value", "reliability gain"},
              {"vunit", "points"},
              {"wunit", "crew-days"},
              {"cap", "number of crew-days available"},
              {"item_pool", "sites"}}},
            {"environment",
             {{"org", "a conservation trust"},
              {"item", "parcel"},
              {"items", "land parcels"},
              {"value", "habitat score"},
              {"vunit", "points"},
              {"wunit", "k$"},
              {"cap", "acquisition budget"},
              {"item_pool", "regions"}}},
        };
        f.intro =
            "[{Org} can choose among {n_items} {items}.|{Org} is deciding which of {n_items} {items} to "
            "take on.|There are {n_items} {items} [to choose from|on the table|under consideration], and {org} "
            "[must|has to|needs to] decide which [ones|of them] to [take|select|pick].|[Which|Exactly which] of "
            "{n_items} {items} [to take on|to select|to pick] is [the question|what] {org} [must "
            "decide|has to settle].]";
        f.params = {
            {"items", {}, "{items}", "", true},
            {"value", {"items"}, "{value}", "{vunit}"},
            {"weight", {"items"}, "[cost|size|requirement]", "{wunit}"},
            {"capacity", {}, "{cap}", "{wunit}"},
        };
        f.constraints = {
            "[The chosen {items} together may not exceed the {cap}.|The total requirement of the selection must "
            "stay within the {cap}.|[Taken together|Summed up|Added up], the [requirements|amounts needed] of the "
            "[chosen|selected] {items} [must not|may not|cannot] [exceed|go beyond|be more than] the "
            "{cap}.|[No|Not a single] selection [may|can] [need|require|use] more than the {cap}, [counting|"
            "summing|adding up] the [requirement|amount needed] of [each|every] chosen {item}.|The {cap} "
            "[limits|caps|bounds] the [total|combined|overall] [requirement|amount needed] of the {items} [that "
            "are chosen|selected|taken].]"};
        f.objective =
            "[Maximize the total {value} of the selection.|Which {items} should be chosen to get the largest "
            "total {value}?|The [goal|aim|objective] is to [make|get] the [total|combined|overall] {value} of the "
            "[chosen|selected] {items} as [large|high] as possible.|[Choose|Select|Pick] the {items} so that "
            "their [total|combined|summed] {value} is [maximized|as large as possible|as high as "
            "possible].|[Find|Determine] the selection [with|that gives] the [largest|highest|greatest] "
            "[total|combined|overall] {value}.]";
        f.integrality =
            "[Each {item} is either taken completely or not at all.|{Items} cannot be split.|[No|Not a single] "
            "{item} [may|can] be [taken|chosen] [in part|partially|only partly].|[Every|Each] {item} is "
            "[a yes/no|an all-or-nothing] [choice|decision]: [taken|chosen] [in full|whole|completely] or not "
            "[at all|taken].|It is [not possible|not allowed] to [take|choose] [a fraction of|part of|only part "
            "of] [an|any] {item}.]";
        f.decisions = "whether each {item} is selected (binary)";
        f.latex =
            "\\begin{aligned}\n"
            "\\max\\;& \\sum_{i\\in I} v_i\\,x_i \\\\\n"
            "\\text{s.t.}\\;& \\sum_{i\\in I} w_i\\,x_i \\le W \\quad\\text{(capacity)} \\\\\n"
            "& x_i \\in \\{0,1\\} && \\forall i\\in I\n"
            "\\end{aligned}";
        f.latex_symbols = {"$I$: {items}", "$v_i$: {value} of $i$; $w_i$: its requirement ({wunit})", "$W$: capacity",
                           "$x_i = 1$ if $i$ is selected"};
        f.code = R"(I = data["items"]
x = {i: @var(f"x_{a + 1}", 0, 1, B) for a, i in enumerate(I)}
@obj(@sum(data["value"][i] * x[i] for i in I))
@add(@sum(data["weight"][i] * x[i] for i in I) <= data["capacity"], "capacity")
)";
        f.var_docs = {{"x", {"items"}, "{0} selected"}};
        f.con_docs = {{"capacity", {}, "capacity"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
