// Diet: choose servings of foods (cost, nutrient content per serving, at most u_f servings) meeting minimum
// nutrient intakes; minimum cost. LP. Infeasible design: a minimum above what the foods can provide.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace diet_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int nf = 3 + d + g.r.int_in(0, 2), nn = 2 + (d + 1) / 2 + g.r.int_in(0, 1);
    const strings F = g.names("food", nf), N = g.names("nutrient", nn);
    std::vector<double> cost(nf), maxs(nf), need(nn);
    std::vector<std::vector<double>> content(nf, std::vector<double>(nn));
    for (int f = 0; f < nf; f++) {
        cost[f] = g.r.real_in(0.2, 3, 2);
        maxs[f] = g.r.int_in(2, 6);
        for (int k = 0; k < nn; k++) content[f][k] = g.r.chance(0.75) ? g.r.int_in(1, 30) : 0;
    }
    for (int k = 0; k < nn; k++) {
        double most = 0;
        for (int f = 0; f < nf; f++) most += content[f][k] * maxs[f];
        if (most == 0) {
            content[0][k] = 10;
            most = 10 * maxs[0];
        }
        need[k] = g.req.want == design::infeasible && k == 0 ? most + 10 : std::round(most * g.r.real_in(0.2, 0.5, 2));
        if (need[k] <= 0) need[k] = 1;
    }
    ojson& data = g.inst.data;
    data["foods"] = list(F);
    data["nutrients"] = list(N);
    data["cost"] = map1(F, cost);
    data["max_servings"] = map1(F, maxs);
    data["content"] = map2(F, N, content);
    data["min_intake"] = map1(N, need);
    model& m = g.inst.m;
    std::vector<int> x(nf);
    for (int f = 0; f < nf; f++) x[f] = m.add_var(nm("x", f), var_type::continuous, 0, maxs[f], cost[f]);
    for (int k = 0; k < nn; k++) {
        std::vector<term> t;
        for (int f = 0; f < nf; f++)
            if (content[f][k] > 0) t.push_back({x[f], content[f][k]});
        m.add_con(nm("intake", k), t, row_sense::ge, need[k]);
    }
}

}  // namespace diet_impl

TREX_FAMILY(diet) {
    static const family f = [] {
        family f;
        f.name = "diet";
        f.title = "Diet problem";
        f.can_infeasible = true;
        f.generate = diet_impl::generate;
        f.scenarios = {
            {"healthcare", {{"org", "a hospital dietitian"}, {"who", "a patient's daily menu"},
                            {"food_pool", "foods"}, {"nutrient_pool", "nutrients"}}},
            {"education", {{"org", "a school cafeteria"}, {"who", "a student lunch"}, {"food_pool", "foods"},
                           {"nutrient_pool", "nutrients"}}},
            {"generic", {{"org", "a budget-conscious student"}, {"who", "a daily diet"}, {"food_pool", "foods"},
                         {"nutrient_pool", "nutrients"}}},
            {"environment", {{"org", "an animal sanctuary"}, {"who", "the daily feed ration"},
                             {"food_pool", "foods"}, {"nutrient_pool", "nutrients"}}},
        };
        f.intro = "[{Org} is putting together {who} from {n_foods} foods.|{Org} wants to plan {who} that meets "
                  "nutritional minimums at low cost.|[Choosing|Selecting] from {n_foods} foods, {org} [has to|must|"
                  "wants to] [put together|plan|compose] {who}.|{Who} [is to be|has to be] [put together|planned] "
                  "by {org} from {n_foods} [available] foods.]";
        f.params = {
            {"foods", {}, "foods", "", true},
            {"nutrients", {}, "nutrients", "", true},
            {"cost", {"foods"}, "[cost per serving|cost of one serving|price per serving]", "$"},
            {"max_servings", {"foods"}, "[maximum servings|maximum number of servings|serving limit]", ""},
            {"content", {"foods", "nutrients"}, "[amount per serving|content per serving|amount in one serving]",
             "units"},
            {"min_intake", {"nutrients"}, "[minimum requirement|minimum intake|required minimum]", "units"},
        };
        f.constraints = {"[Each nutrient's total must reach its minimum.|Every nutritional minimum has to be "
                         "met.|[For each|For every] nutrient, the [total|combined] amount [supplied|provided] by the "
                         "chosen servings [must|has to] be at least the minimum requirement.|No nutrient may [fall|"
                         "drop] below its minimum requirement [in total|overall], [summed|counted] over all foods "
                         "served.|[It is required that|We need] the [total|combined] intake of [each|every] nutrient "
                         "[to reach|to be at least] its required minimum.]",
                         "[No food may be used beyond its maximum number of servings; fractional servings are "
                         "allowed.|Servings may be fractional but are capped per food by the maximum servings.|The "
                         "number of servings of [each|every] food [must|has to] stay [within|at or below] its "
                         "maximum, [though|but] [fractions|fractional servings] are [allowed|fine].|[Each|Every] "
                         "food [can|may] be served [at most|no more than|up to] its maximum number of servings, "
                         "[in any amount, fractional or not|fractions of a serving included].]"};
        f.objective = "[Minimize the total cost.|Find the cheapest menu.|The [goal|aim|objective] is to [keep|"
                      "make] the [total|overall|combined] cost of the servings as [low|small] as possible.|[Plan|"
                      "Choose] the servings so that the [total|overall] cost is [minimized|as low as possible].]";
        f.decisions = "the number of servings of each food";
        f.latex = "\\begin{aligned}\n"
                  "\\min\\;& \\sum_{f\\in F} c_f\\,x_f \\\\\n"
                  "\\text{s.t.}\\;& \\sum_{f\\in F} a_{fn}\\,x_f \\ge r_n && \\forall n\\in N \\quad\\text{(intake)} "
                  "\\\\\n"
                  "& 0 \\le x_f \\le u_f && \\forall f\\in F\n"
                  "\\end{aligned}";
        f.latex_symbols = {"$F$: foods; $N$: nutrients", "$c_f$: cost; $u_f$: maximum servings",
                           "$a_{fn}$: nutrient per serving; $r_n$: requirement", "$x_f$: servings of $f$"};
        f.code = R"(F = data["foods"]
N = data["nutrients"]
x = {f: @var(f"x_{a + 1}", 0, data["max_servings"][f], C) for a, f in enumerate(F)}
@obj(@sum(data["cost"][f] * x[f] for f in F))
for b, n in enumerate(N):
    @add(@sum(data["content"][f][n] * x[f] for f in F if data["content"][f][n] > 0) >= data["min_intake"][n], f"intake_{b + 1}")
)";
        f.var_docs = {{"x", {"foods"}, "servings of {0}"}};
        f.con_docs = {{"intake", {"nutrients"}, "minimum {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
