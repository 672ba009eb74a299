// Blending: mix ingredients (cost, availability, attribute contents in %) into a batch of T units whose attribute
// percentages lie within [lo_k, hi_k]; minimum cost. LP. Infeasible design: a minimum no ingredient can reach.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace blending_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int ni = 3 + d + g.r.int_in(0, 1), nk = 2 + (d + 1) / 2;
    const strings I = g.names("ingredient", ni), K = g.names("attribute", nk);
    std::vector<double> cost(ni), avail(ni), lo(nk), hi(nk);
    std::vector<std::vector<double>> content(ni, std::vector<double>(nk));
    for (int i = 0; i < ni; i++) {
        cost[i] = g.r.real_in(1, 12, 1);
        for (int k = 0; k < nk; k++) content[i][k] = g.r.int_in(1, 40);
    }
    const double total = 100 * g.r.int_in(5, 20);
    // a reference blend (random weights) that is feasible by construction
    std::vector<double> w(ni);
    for (auto& x : w) x = g.r.real_in(0.1, 1, 2);
    const double ws = sum(w);
    for (int i = 0; i < ni; i++) avail[i] = 10 * std::ceil(total * w[i] / ws * g.r.real_in(1.3, 3, 2) / 10);
    for (int k = 0; k < nk; k++) {
        double g_k = 0;
        for (int i = 0; i < ni; i++) g_k += w[i] / ws * content[i][k];
        lo[k] = std::floor(g_k - g.r.real_in(1, 4, 0));
        hi[k] = std::ceil(g_k + g.r.real_in(1, 6, 0));
        if (lo[k] < 0) lo[k] = 0;
    }
    if (g.req.want == design::infeasible) {
        const int k = g.r.int_in(0, nk - 1);
        double mx = 0;
        for (int i = 0; i < ni; i++) mx = std::max(mx, content[i][k]);
        lo[k] = mx + 2;
        hi[k] = mx + 8;
    }
    ojson& data = g.inst.data;
    data["ingredients"] = list(I);
    data["attributes"] = list(K);
    data["cost"] = map1(I, cost);
    data["available"] = map1(I, avail);
    data["content"] = map2(I, K, content);
    data["min_percent"] = map1(K, lo);
    data["max_percent"] = map1(K, hi);
    data["batch_size"] = num(total);
    model& m = g.inst.m;
    std::vector<int> x(ni);
    for (int i = 0; i < ni; i++) x[i] = m.add_var(nm("x", i), var_type::continuous, 0, avail[i], cost[i]);
    std::vector<term> t;
    for (int i = 0; i < ni; i++) t.push_back({x[i], 1});
    m.add_con("batch", t, row_sense::eq, total);
    // sum_i content_ik x_i >= lo_k T  (percent of the batch)
    for (int k = 0; k < nk; k++) {
        std::vector<term> tk;
        for (int i = 0; i < ni; i++) tk.push_back({x[i], content[i][k]});
        m.add_con(nm("min", k), tk, row_sense::ge, lo[k] * total);
        m.add_con(nm("max", k), tk, row_sense::le, hi[k] * total);
    }
}

}  // namespace blending_impl

TREX_FAMILY(blending) {
    static const family f = [] {
        family f;
        f.name = "blending";
        f.title = "Blending problem";
        f.can_infeasible = true;
        f.generate = blending_impl::generate;
        f.scenarios = {
            {"production", {{"org", "a foundry"}, {"ingredients", "raw materials"}, {"product", "alloy"},
                            {"unit", "kg"}, {"ingredient_pool", "ingredients"}, {"attribute_pool", "elements"}}},
            {"energy", {{"org", "a fuel blender"}, {"ingredients", "component fuels"}, {"product", "fuel"},
                        {"unit", "liters"}, {"ingredient_pool", "fuel_components"},
                        {"attribute_pool", "fuel_properties"}}},
            {"environment", {{"org", "a compost producer"}, {"ingredients", "feedstocks"}, {"product", "compost"},
                             {"unit", "kg"}, {"ingredient_pool", "feedstocks"},
                             {"attribute_pool", "soil_nutrients"}}},
            {"healthcare", {{"org", "a clinical nutrition kitchen"}, {"ingredients", "base powders"},
                            {"product", "formula"}, {"unit", "grams"}, {"ingredient_pool", "foods"},
                            {"attribute_pool", "nutrients"}}},
        };
        f.intro = "[{Org} [produces|makes|prepares] a batch of {product} by blending {n_ingredients} "
                  "{ingredients}.|{Org} must decide how much of each of {n_ingredients} {ingredients} goes into a "
                  "batch of {product}.|A batch of {product} at {org} is [a blend|a mix] of {n_ingredients} "
                  "{ingredients}, [and|whose] [amounts|quantities] [have to|must] be [chosen|decided].|[To "
                  "make|For] a batch of {product}, {org} [blends|mixes] {n_ingredients} {ingredients} and [needs "
                  "to|must] [choose|decide] how much of each to use.]";
        f.params = {
            {"ingredients", {}, "{ingredients}", "", true},
            {"attributes", {}, "[quality attributes|quality properties|attributes tracked]", "", true},
            {"cost", {"ingredients"}, "[cost|unit cost|purchase cost]", "$ per {unit}"},
            {"available", {"ingredients"}, "[amount available|available amount|available quantity]", "{unit}"},
            {"content", {"ingredients", "attributes"}, "content", "%"},
            {"min_percent", {"attributes"}, "[minimum share in the {product}|lowest allowed share in the "
             "{product}|minimum percentage in the {product}]", "%"},
            {"max_percent", {"attributes"}, "[maximum share in the {product}|highest allowed share in the "
             "{product}|maximum percentage in the {product}]", "%"},
            {"batch_size", {}, "batch size", "{unit}"},
        };
        f.constraints = {"[The batch must have exactly the required size.|The amounts used add up to [exactly] the "
                         "batch size.|The [total|combined] amount of {ingredients} [used|blended] [must|has to] "
                         "equal the batch size [exactly].|[Exactly|Precisely] the batch size [must|has to] be "
                         "produced: the [amounts|quantities] of all {ingredients} [sum|add up] to it.]",
                         "[For each attribute, the share in the final {product} (the content-weighted average of "
                         "the {ingredients}) must lie between its minimum and maximum.|Each attribute's percentage "
                         "in the blend (the content-weighted average of the {ingredients}) must stay within its "
                         "[minimum and maximum|lower and upper limits].|[For every|For each] attribute, the "
                         "[content-weighted average|weighted average content] of the {ingredients} [used|in the "
                         "batch] [may not|must not] [fall below|drop below] its minimum share [nor|or] [exceed|rise "
                         "above] its maximum share.|No attribute may [end up|be] [below its minimum|under its "
                         "minimum] or [above its maximum|over its maximum] share in the {product}, [where|with] the "
                         "share [being|computed as] the content-weighted average of the {ingredients}.]",
                         "[No more of [any|each] of the {ingredients} can be used than is available.|[Availability "
                         "limits|The amount available caps] [each|every one] of the {ingredients}.|[The amount used "
                         "of each of the {ingredients}|The quantity used of each of the {ingredients}] [may not|must not|cannot] "
                         "exceed [its|the] available amount.|[Each|Every one] of the {ingredients} [can|may] be used "
                         "[only up to its availability|in at most the amount available].]"};
        f.objective = "[Minimize the cost of the batch.|Find the cheapest blend.|The [goal|aim|objective] is the "
                      "[lowest|smallest] [total|overall] cost of the {ingredients} [in the batch|blended].|[Blend|Mix] "
                      "the {ingredients} [so that|such that] the [total|overall] cost of the batch is [as low as "
                      "possible|minimal].]";
        f.decisions = "the amount of each ingredient in the batch";
        f.latex = "\\begin{aligned}\n"
                  "\\min\\;& \\sum_{i\\in I} c_i\\,x_i \\\\\n"
                  "\\text{s.t.}\\;& \\sum_{i\\in I} x_i = B \\quad\\text{(batch)} \\\\\n"
                  "& \\sum_{i\\in I} a_{ik}\\,x_i \\ge l_k\\,B && \\forall k\\in K \\quad\\text{(min)} \\\\\n"
                  "& \\sum_{i\\in I} a_{ik}\\,x_i \\le h_k\\,B && \\forall k\\in K \\quad\\text{(max)} \\\\\n"
                  "& 0 \\le x_i \\le s_i && \\forall i\\in I\n"
                  "\\end{aligned}";
        f.latex_symbols = {"$I$: {ingredients}; $K$: attributes", "$c_i$: cost; $s_i$: availability; $B$: batch "
                           "size", "$a_{ik}$: content (%); $l_k$, $h_k$: bounds (%)", "$x_i$: amount of $i$ used"};
        f.code = R"(I = data["ingredients"]
K = data["attributes"]
B = data["batch_size"]
x = {i: @var(f"x_{a + 1}", 0, data["available"][i], C) for a, i in enumerate(I)}
@obj(@sum(data["cost"][i] * x[i] for i in I))
@add(@sum(x[i] for i in I) == B, "batch")
for b, k in enumerate(K):
    @add(@sum(data["content"][i][k] * x[i] for i in I) >= data["min_percent"][k] * B, f"min_{b + 1}")
    @add(@sum(data["content"][i][k] * x[i] for i in I) <= data["max_percent"][k] * B, f"max_{b + 1}")
)";
        f.var_docs = {{"x", {"ingredients"}, "amount of {0}"}};
        f.con_docs = {{"batch", {}, "batch size"}, {"min", {"attributes"}, "minimum {0}"},
                      {"max", {"attributes"}, "maximum {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
