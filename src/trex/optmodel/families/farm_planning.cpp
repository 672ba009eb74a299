// Farm planning: crops c with land use x_c (hectares), labour a_ct per hectare in each season t, water w_c per
// hectare, yield y_c (tonnes per hectare), price p_c and growing cost k_c per hectare; output q_c = y_c x_c. Limits on
// land, labour per season and water; contracted minimum outputs for some crops. Maximize profit. LP. Infeasible
// design: a contracted minimum output larger than the whole farm could grow.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace farm_planning_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int n = std::vector<int>{2, 3, 5, 7, 10}[(size_t)d - 1];
    const int T = std::vector<int>{2, 2, 3, 4, 4}[(size_t)d - 1];
    const strings C = g.names("crop", n), S = g.names("season", T);
    const double land = 10 * g.r.int_in(10, 40);
    std::vector<double> yld(n), price(n), cost(n), water(n);
    std::vector<std::vector<double>> lab(n, std::vector<double>(T));
    std::vector<double> labav(T, 0);
    double wsum = 0;
    for (int c = 0; c < n; c++) {
        yld[c] = g.r.real_in(2, 9, 1);
        price[c] = 10 * g.r.int_in(10, 40);
        cost[c] = 10 * std::round(yld[c] * price[c] * g.r.real_in(0.3, 0.7, 2) / 10);
        water[c] = g.r.int_in(2, 9);
        wsum += water[c];
        for (int t = 0; t < T; t++) {
            lab[c][t] = g.r.chance(0.2) ? 0 : g.r.int_in(2, 12);
            labav[t] += lab[c][t];
        }
    }
    for (int t = 0; t < T; t++) labav[t] = 10 * std::round(land * labav[t] / n * g.r.real_in(0.5, 0.85, 2) / 10);
    const double wav = 10 * std::round(land * wsum / n * g.r.real_in(0.6, 0.9, 2) / 10);
    // one crop with a contracted minimum output
    const int k = g.r.int_in(0, n - 1);
    double quota = std::round(yld[k] * land * g.r.real_in(0.05, 0.15, 2));
    if (g.req.want == design::infeasible) quota = std::ceil(yld[k] * land) + 10 * g.r.int_in(1, 5);
    ojson& data = g.inst.data;
    data["crops"] = list(C);
    data["seasons"] = list(S);
    data["land"] = num(land);
    data["labour_available"] = map1(S, labav);
    data["water_available"] = num(wav);
    data["labour"] = map2(C, S, lab);
    data["water"] = map1(C, water);
    data["yield"] = map1(C, yld);
    data["price"] = map1(C, price);
    data["cost"] = map1(C, cost);
    data["min_output"] = ojson::object();
    data["min_output"][C[(size_t)k]] = num(quota);
    model& m = g.inst.m;
    m.sense = obj_sense::maximize;
    std::vector<int> x(n), q(n);
    for (int c = 0; c < n; c++) {
        x[c] = m.add_var(nm("x", c), var_type::continuous, 0, inf, -cost[c]);
        q[c] = m.add_var(nm("q", c), var_type::continuous, 0, inf, price[c]);
    }
    for (int c = 0; c < n; c++) m.add_con(nm("output", c), {{q[c], 1}, {x[c], -yld[c]}}, row_sense::eq, 0);
    std::vector<term> tl, tw;
    for (int c = 0; c < n; c++) tl.push_back({x[c], 1}), tw.push_back({x[c], water[c]});
    m.add_con("land", tl, row_sense::le, land);
    for (int t = 0; t < T; t++) {
        std::vector<term> tm;
        for (int c = 0; c < n; c++)
            if (lab[c][t] != 0) tm.push_back({x[c], lab[c][t]});
        m.add_con(nm("labour", t), tm, row_sense::le, labav[t]);
    }
    m.add_con("water", tw, row_sense::le, wav);
    m.add_con(nm("contract", k), {{q[k], 1}}, row_sense::ge, quota);
}

}  // namespace farm_planning_impl

TREX_FAMILY(farm_planning) {
    static const family f = [] {
        family f;
        f.name = "farm_planning";
        f.title = "Farm planning (crop mix under land, labour and water limits)";
        f.can_infeasible = true;
        f.generate = farm_planning_impl::generate;
        f.scenarios = {
            {"environment",
             {{"org", "a family farm"},
              {"crops", "crop varieties"},
              {"crop", "crop"},
              {"water_unit", "thousand cubic meters"},
              {"crop_pool", "products"},
              {"season_pool", "periods"}}},
            {"production",
             {{"org", "a seed-production company"},
              {"crops", "seed lines"},
              {"crop", "seed line"},
              {"water_unit", "megaliters"},
              {"crop_pool", "products"},
              {"season_pool", "periods"}}},
            {"education",
             {{"org", "the teaching farm of an agricultural college"},
              {"crops", "trial crops"},
              {"crop", "trial crop"},
              {"water_unit", "thousand cubic meters"},
              {"crop_pool", "products"},
              {"season_pool", "weeks"}}},
            {"energy",
             {{"org", "a biogas cooperative"},
              {"crops", "energy crops"},
              {"crop", "energy crop"},
              {"water_unit", "megaliters"},
              {"crop_pool", "products"},
              {"season_pool", "periods"}}},
        };
        f.intro =
            "[{Org} must decide how many hectares to plant with each of {n_crops} {crops}.|{Org} is planning the "
            "land use for {n_crops} {crops} over {n_seasons} labour periods.|How many hectares [should go to|"
            "should be planted with] each of {n_crops} {crops}? [That|This] is what {org} [has to|must] "
            "decide, [with|given] {n_seasons} labour periods to plan for.|[Across|Over] {n_seasons} labour periods, "
            "{org} [plans|is planning] how [much land|many hectares] to [give|devote] to [each|every one] of "
            "{n_crops} {crops}.]";
        f.params = {
            {"crops", {}, "{crops}", "", true},
            {"seasons", {}, "labour periods", "", true},
            {"land", {}, "[land available|available land|farmland available]", "hectares"},
            {"labour_available", {"seasons"}, "[labour hours available|available labour hours|hours of labour "
             "available]", "hours"},
            {"water_available", {}, "[irrigation water available|available irrigation water|water available for "
             "irrigation]", "{water_unit}"},
            {"labour", {"crops", "seasons"}, "[labour needed per hectare|labour per hectare|labour hours required "
             "per hectare]", "hours"},
            {"water", {"crops"}, "[irrigation water needed per hectare|irrigation water per hectare|water required "
             "per hectare]", "{water_unit}"},
            {"yield", {"crops"}, "[yield per hectare|harvest per hectare|output per hectare]", "tonnes"},
            {"price", {"crops"}, "[selling price|sale price|market price]", "$ per tonne"},
            {"cost", {"crops"}, "[growing cost per hectare|cost of growing one hectare|cultivation cost per "
             "hectare]", "$"},
            {"min_output", {"crops"}, "[contracted minimum output|minimum output under contract|minimum output "
             "promised by contract]", "tonnes", false, "{have} no contract"},
        };
        f.constraints = {
            "[The output of a {crop} is its yield times the hectares planted.|Each hectare of a {crop} produces "
            "exactly its yield.|[Every|Each] hectare [planted with|sown to] a {crop} [gives|brings in] exactly "
            "[that {crop}'s|its] yield per hectare.|The [harvest|output] of [each|every] {crop} [equals|is] the "
            "hectares [given to|planted with] it [times|multiplied by] its yield per hectare.]",
            "[The planted area may not exceed the land available.|At most the available land can be planted.|The "
            "hectares [planted|sown] [across|over] all {crops} [together|combined] [cannot|may not] [exceed|go "
            "beyond] the land [on hand|available].|[No more land than is available|Only the available land] "
            "[can|may] be [used|planted] [in total|altogether].]",
            "[In every labour period the hours needed by the planted {crops} must not exceed the hours "
            "available.|Labour use in each period is limited by the hours available in that period.|[For|In] "
            "[each|every] labour period, the [hours|labour hours] [the {crops} need|needed by the {crops}] [must|"
            "have to] [stay within|not exceed|be at most] [that period's|the period's] [available hours|labour "
            "supply].|No labour period [may|can] [call for|require] more hours [for the {crops}|from the planted "
            "{crops}] than [it has available|are available in it].]",
            "[Irrigation water use is limited to the water available.|The {crops} together may not use more water "
            "than available.|[Total|Overall] irrigation water [use|needs] [cannot|may not] [exceed|go beyond] the "
            "[irrigation] water [available|on hand].|The water [drawn|used] for irrigation by all {crops} "
            "[together|combined] [is at most|must stay within] the [amount available|available supply].]",
            "[Contracted minimum outputs must be delivered.|Every contract's minimum output has to be grown.|[Each|"
            "Every] {crop} under contract [must yield|has to produce] at least its contracted minimum output.|The "
            "[harvest|output] of a contracted {crop} [cannot|may not] fall [short of|below] its contracted "
            "minimum.]"};
        f.objective =
            "[Maximize profit: sales revenue minus growing costs.|Find the land use with the highest revenue minus "
            "growing cost.|[Choose|Plan] the [hectares|planting] [to earn|so as to earn] the [largest|highest] "
            "profit, [that is|namely] [revenue from selling the output|sales revenue] [less|minus] the growing "
            "costs.|The [aim|goal] is the [greatest|largest] profit: what the [whole] output sells for [minus|less] "
            "what the hectares cost to grow.]";
        f.decisions = "the hectares planted with each {crop} and its output";
        f.latex =
            "\\begin{aligned}\n"
            "\\max\\;& \\sum_{c\\in C} (p_c\\,q_c - k_c\\,x_c) \\\\\n"
            "\\text{s.t.}\\;& q_c - y_c\\,x_c = 0 && \\forall c\\in C \\quad\\text{(output)} \\\\\n"
            "& \\sum_{c\\in C} x_c \\le L \\quad\\text{(land)} \\\\\n"
            "& \\sum_{c\\in C} a_{ct}\\,x_c \\le A_t && \\forall t\\in T \\quad\\text{(labour)} \\\\\n"
            "& \\sum_{c\\in C} w_c\\,x_c \\le W \\quad\\text{(water)} \\\\\n"
            "& q_c \\ge m_c && \\forall c\\in M \\quad\\text{(contract)} \\\\\n"
            "& x, q \\ge 0\n"
            "\\end{aligned}";
        f.latex_symbols = {"$C$: {crops}; $T$: labour periods; $M \\subseteq C$: {crops} with a contract",
                           "$L$, $A_t$, $W$: land, labour hours and water available",
                           "$a_{ct}$, $w_c$, $y_c$: labour, water and yield per hectare; $p_c$: price; $k_c$: cost "
                           "per hectare; $m_c$: contracted output",
                           "$x_c$: hectares planted; $q_c$: output in tonnes"};
        f.code = R"(C = data["crops"]
S = data["seasons"]
x = {c: @var(f"x_{a + 1}", 0, None, C) for a, c in enumerate(C)}
q = {c: @var(f"q_{a + 1}", 0, None, C) for a, c in enumerate(C)}
@obj(@sum(data["price"][c] * q[c] - data["cost"][c] * x[c] for c in C))
for a, c in enumerate(C):
    @add(q[c] - data["yield"][c] * x[c] == 0, f"output_{a + 1}")
@add(@sum(x[c] for c in C) <= data["land"], "land")
for b, t in enumerate(S):
    @add(@sum(data["labour"][c][t] * x[c] for c in C if data["labour"][c][t] != 0) <= data["labour_available"][t], f"labour_{b + 1}")
@add(@sum(data["water"][c] * x[c] for c in C) <= data["water_available"], "water")
for a, c in enumerate(C):
    if c in data["min_output"]:
        @add(q[c] >= data["min_output"][c], f"contract_{a + 1}")
)";
        f.var_docs = {{"x", {"crops"}, "hectares planted with {0}"}, {"q", {"crops"}, "output of {0} in tonnes"}};
        f.con_docs = {{"output", {"crops"}, "output of {0}"},
                      {"land", {}, "land available"},
                      {"labour", {"seasons"}, "labour hours in {0}"},
                      {"water", {}, "irrigation water"},
                      {"contract", {"crops"}, "contracted output of {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
