// Bounded (multi-copy) knapsack with two capacities (weight and volume): integer copies 0..u_i of each item.
// MILP.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace knapsack_bounded_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int n = 3 + g.req.difficulty + g.r.int_in(0, 2);
    const strings I = g.names("item", n);
    std::vector<double> value(n), weight(n), volume(n), avail(n);
    for (int i = 0; i < n; i++) {
        weight[i] = g.r.int_in(2, 20);
        volume[i] = g.r.int_in(1, 12);
        avail[i] = g.r.int_in(2, 8);
        value[i] = std::round(weight[i] * g.r.real_in(0.8, 2.5, 2) + volume[i] * g.r.real_in(0.5, 1.5, 2));
    }
    double wt = 0, vt = 0;
    for (int i = 0; i < n; i++) {
        wt += weight[i] * avail[i];
        vt += volume[i] * avail[i];
    }
    const double wcap = std::round(wt * g.r.real_in(0.25, 0.5, 2)), vcap = std::round(vt * g.r.real_in(0.25, 0.5, 2));
    ojson& data = g.inst.data;
    data["items"] = list(I);
    data["value"] = map1(I, value);
    data["weight"] = map1(I, weight);
    data["volume"] = map1(I, volume);
    data["available"] = map1(I, avail);
    data["weight_capacity"] = num(wcap);
    data["volume_capacity"] = num(vcap);
    model& m = g.inst.m;
    m.sense = obj_sense::maximize;
    std::vector<term> tw, tv;
    for (int i = 0; i < n; i++) {
        int x = m.add_var(nm("x", i), var_type::integer, 0, avail[i], value[i]);
        tw.push_back({x, weight[i]});
        tv.push_back({x, volume[i]});
    }
    m.add_con("weight", tw, row_sense::le, wcap);
    m.add_con("volume", tv, row_sense::le, vcap);
}

}  // namespace knapsack_bounded_impl

TREX_FAMILY(knapsack_bounded) {
    static const family f = [] {
        family f;
        f.name = "knapsack_bounded";
        f.title = "Bounded knapsack problem (weight and volume)";
        f.milp = true;
        f.generate = knapsack_bounded_impl::generate;
        f.scenarios = {
            {"logistics", {{"org", "a cargo airline"}, {"item", "shipment type"}, {"items", "shipment types"},
                           {"copy", "shipment"}, {"value", "revenue"}, {"vunit", "$"}, {"wunit", "tons"},
                           {"vounit", "cubic meters"}, {"item_pool", "products"}}},
            {"retail", {{"org", "a pop-up store"}, {"item", "product"}, {"items", "products"}, {"copy", "unit"},
                        {"value", "profit"}, {"vunit", "$"}, {"wunit", "kg"}, {"vounit", "shelf units"},
                        {"item_pool", "furniture"}}},
            {"healthcare", {{"org", "a relief mission"}, {"item", "kit type"}, {"items", "kit types"},
                            {"copy", "kit"}, {"value", "priority score"}, {"vunit", "points"}, {"wunit", "kg"},
                            {"vounit", "crates"}, {"item_pool", "items"}}},
        };
        f.intro = "[{Org} is loading a vehicle with {items}; several copies of each are available.|{Org} must "
                  "decide how many of each of {n_items} {items} to load.|A vehicle [is being loaded|has to be "
                  "loaded] by {org} with {n_items} {items}, [each available in several copies|of which several "
                  "copies each are on hand].|[How many|What number] of each of {n_items} {items} to [load|put] "
                  "[onto|on] [a|the] vehicle is [up to|for] {org} to decide; [several|multiple] copies of "
                  "[each|every] {item} are available.]";
        f.params = {
            {"items", {}, "{items}", "", true},
            {"value", {"items"}, "[{value} per {copy}|{value} of each {copy}|{value} per {copy} loaded]",
             "{vunit}"},
            {"weight", {"items"}, "[weight per {copy}|weight of each {copy}|weight of one {copy}]", "{wunit}"},
            {"volume", {"items"}, "[volume per {copy}|volume of each {copy}|volume of one {copy}]", "{vounit}"},
            {"available", {"items"}, "[number available|number of copies available|available number]", ""},
            {"weight_capacity", {}, "[weight capacity|weight limit|capacity by weight]", "{wunit}"},
            {"volume_capacity", {}, "[volume capacity|volume limit|capacity by volume]", "{vounit}"},
        };
        f.constraints = {"[The total weight loaded may not exceed the weight capacity.|Weight is limited by the "
                         "weight capacity.|[No|Not a single] load [may|can] [weigh|come to] more than the weight "
                         "capacity [in total|all together|overall].|The [combined|total|overall] weight of "
                         "[everything|all the {copy}s] loaded [must|has to] [stay within|be no more than|be at "
                         "most] the weight capacity.|[If|When] the weights of all loaded {copy}s are [added up|"
                         "summed], [the result|the sum] [must not|may not|cannot] [exceed|be more than] the "
                         "weight capacity.]",
                         "[The total volume may not exceed the volume capacity.|Space is limited by the volume "
                         "capacity.|[No|Not a single] load [may|can] [take up|occupy] more [space|volume] than "
                         "the volume capacity [in total|all together|overall].|The [combined|total|overall] "
                         "volume of [everything|all the {copy}s] loaded [must|has to] [stay within|be no more "
                         "than|be at most] the volume capacity.|[If|When] the volumes of all loaded {copy}s are "
                         "[added up|summed], [the result|the sum] [must not|may not|cannot] [exceed|be more "
                         "than] the volume capacity.]",
                         "[At most the available number of each {item} can be loaded.|Availability limits each "
                         "{item}.|[No|Not a single] {item} [may|can] be loaded [in a greater number|more often] "
                         "than [its number available|the number of its copies available].|For [each|every] "
                         "{item}, the number of {copy}s loaded [must stay within|must be at most|must not exceed] "
                         "[the|its] number available.|[Load|Take] [no more|not more] {copy}s of [each|every] "
                         "{item} than [are available|the number available].]"};
        f.objective = "[Maximize the total {value}.|Find the load with the largest total {value}.|The [goal|aim|"
                      "objective] is to make the [total|combined|overall] {value} of the load as [large|high] as "
                      "possible.|[Choose|Decide|Determine] how many of each {item} to load so that the "
                      "[total|combined|overall] {value} is [maximized|as large as possible|as high as "
                      "possible].|[Load|Pack] the vehicle [to get|so as to get|to earn] the [largest|highest|"
                      "greatest] [total|combined|overall] {value}.]";
        f.integrality = "[Only whole {copy}s can be loaded.|The number of each {item} must be a whole number.|[No|"
                        "Not a single] {copy} [may|can] be loaded [in part|partially|as a fraction].|[Every|Each] "
                        "{item} [is loaded|must be loaded] in [whole|complete] {copy}s[ only|], never in "
                        "fractions.|It is [not possible|not allowed] to load [a fraction of|part of] a {copy}; "
                        "the [counts|numbers loaded] [must|have to] be whole numbers.]";
        f.decisions = "how many copies of each {item} to load (integer)";
        f.latex = "\\begin{aligned}\n"
                  "\\max\\;& \\sum_{i\\in I} v_i\\,x_i \\\\\n"
                  "\\text{s.t.}\\;& \\sum_{i} w_i\\,x_i \\le W \\quad\\text{(weight)} \\\\\n"
                  "& \\sum_{i} q_i\\,x_i \\le V \\quad\\text{(volume)} \\\\\n"
                  "& x_i \\in \\{0, 1, \\dots, u_i\\} && \\forall i\\in I\n"
                  "\\end{aligned}";
        f.latex_symbols = {"$I$: {items}", "$v_i, w_i, q_i$: {value}, weight, volume per {copy}",
                           "$u_i$: number available", "$W, V$: weight and volume capacities",
                           "$x_i$: number of {item} $i$ loaded"};
        f.code = R"(I = data["items"]
x = {i: @var(f"x_{a + 1}", 0, data["available"][i], I) for a, i in enumerate(I)}
@obj(@sum(data["value"][i] * x[i] for i in I))
@add(@sum(data["weight"][i] * x[i] for i in I) <= data["weight_capacity"], "weight")
@add(@sum(data["volume"][i] * x[i] for i in I) <= data["volume_capacity"], "volume")
)";
        f.var_docs = {{"x", {"items"}, "number of {0}"}};
        f.con_docs = {{"weight", {}, "weight capacity"}, {"volume", {}, "volume capacity"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
