// Product mix: choose production quantities of products (profit per unit) under resource limits and market
// limits; maximum profit. LP. Unbounded design: one product uses no resource and has no market limit.
// Infeasible design: minimum delivery commitments exceed a resource.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace product_mix_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int np = 2 + d + g.r.int_in(0, 1), nr = 2 + (d + 1) / 2;
    const strings P = g.names("product", np), R = g.names("resource", nr);
    std::vector<double> profit(np), avail(nr), market(np), minimum(np, 0);
    std::vector<std::vector<double>> use(nr, std::vector<double>(np));
    for (auto& p : profit) p = g.r.int_in(3, 40);
    for (auto& row : use)
        for (auto& u : row) u = g.r.chance(0.8) ? g.r.int_in(1, 9) : 0;
    for (int j = 0; j < np; j++) {  // every product uses something
        bool any = false;
        for (int r = 0; r < nr; r++) any = any || use[r][j] > 0;
        if (!any) use[g.r.int_in(0, nr - 1)][j] = g.r.int_in(1, 5);
    }
    for (auto& a : avail) a = 10 * g.r.int_in(10, 60);
    for (auto& mk : market) mk = 5 * g.r.int_in(4, 30);
    const int free_product = g.req.want == design::unbounded ? g.r.int_in(0, np - 1) : -1;
    if (free_product >= 0)
        for (int r = 0; r < nr; r++) use[r][free_product] = 0;
    if (g.req.want == design::infeasible) {  // commitments that resource 0 cannot support
        double need = 0;
        for (int j = 0; j < np; j++) {
            minimum[j] = std::min(market[j], 5.0 * g.r.int_in(2, 10));
            need += use[0][j] * minimum[j];
        }
        avail[0] = std::max(10.0, std::floor(need * 0.7));
        for (int j = 0; j < np; j++)
            if (use[0][j] == 0) use[0][j] = 1;
    }
    ojson& data = g.inst.data;
    data["products"] = list(P);
    data["resources"] = list(R);
    data["profit"] = map1(P, profit);
    data["available"] = map1(R, avail);
    data["usage"] = map2(R, P, use);
    ojson mk = ojson::object(), mn = ojson::object();
    for (int j = 0; j < np; j++) {
        if (j != free_product) mk[P[j]] = num(market[j]);
        if (minimum[j] > 0) mn[P[j]] = num(minimum[j]);
    }
    data["max_sales"] = mk;
    data["min_delivery"] = mn;
    model& m = g.inst.m;
    m.sense = obj_sense::maximize;
    std::vector<int> x(np);
    for (int j = 0; j < np; j++) {
        const double ub = j == free_product ? inf : market[j];
        x[j] = m.add_var(nm("x", j), var_type::continuous, minimum[j], ub, profit[j]);
    }
    for (int r = 0; r < nr; r++) {
        std::vector<term> t;
        for (int j = 0; j < np; j++)
            if (use[r][j] > 0) t.push_back({x[j], use[r][j]});
        m.add_con(nm("res", r), t, row_sense::le, avail[r]);
    }
}

}  // namespace product_mix_impl

TREX_FAMILY(product_mix) {
    static const family f = [] {
        family f;
        f.name = "product_mix";
        f.title = "Product mix problem";
        f.can_infeasible = true;
        f.can_unbounded = true;
        f.generate = product_mix_impl::generate;
        f.scenarios = {
            {"production",
             {{"org", "a furniture workshop"},
              {"products", "products"},
              {"unit", "units"},
              {"product_pool", "furniture"},
              {"resource_pool", "resources"}}},
            {"retail",
             {{"org", "a craft brewery"},
              {"products", "beers"},
              {"unit", "barrels"},
              {"product_pool", "products"},
              {"resource_pool", "resources"}}},
            {"energy",
             {{"org", "a refinery"},
              {"products", "fuel grades"},
              {"unit", "thousand barrels"},
              {"product_pool", "products"},
              {"resource_pool", "resources"}}},
            {"generic",
             {{"org", "a company"},
              {"products", "products"},
              {"unit", "units"},
              {"product_pool", "products"},
              {"resource_pool", "resources"}}},
            {"education",
             {{"org", "a university print shop"},
              {"products", "print products"},
              {"unit", "batches"},
              {"product_pool", "products"},
              {"resource_pool", "resources"}}},
        };
        f.intro =
            "[{Org} makes {n_products} {products} from {n_resources} limited resources.|{Org} must decide how much of "
            "each of its {n_products} {products} to produce this week.|[Using|With] {n_resources} [limited|scarce] "
            "resources, {org} [produces|makes|can make] {n_products} {products} and [has to|must|needs to] "
            "[choose|decide on|set] this week's production [quantities|amounts].|[There are|{Org} offers] {n_products} "
            "{products}, [all made|each made] from {n_resources} resources in limited supply; {org} [must|has to] "
            "[plan|decide] how much of each to produce this week.]";
        f.params = {
            {"products", {}, "{products}", "", true},
            {"resources", {}, "resources", "", true},
            {"profit", {"products"}, "profit", "$ per {unit}"},
            {"available", {"resources"}, "[amount available|available amount|quantity available]", ""},
            {"usage", {"resources", "products"},
             "[resource use per {unit}|resource usage per {unit}|amount of the resource used per {unit}]", ""},
            {"max_sales", {"products"}, "[maximum sales|sales limit|most that can be sold]", "{unit}", false,
             "{have} no sales limit"},
            {"min_delivery",
             {"products"},
             "[committed minimum production|minimum production committed|production minimum promised to "
             "customers]",
             "{unit}",
             false,
             "[{have} no delivery commitment|{have} no committed minimum]"},
        };
        f.constraints = {
            "[Resource use may not exceed availability.|Each resource is limited to the amount available.|[For "
            "each|For every] resource, the [total|combined] amount used by all {products} [must not|may not|cannot] "
            "[exceed|be more than] the amount available.|[No|Not a single] resource [may|can] be used beyond [its "
            "available amount|what is available], [summing|counting] the use of all {products} "
            "[together|combined].|[The production plan|The plan] [must|has to] [keep|hold] the [total|combined] use of "
            "[each|every] resource [within|at or below] its available amount.]",
            "[Production of a product may not exceed its maximum sales, where one is given, and must reach any "
            "committed minimum.|Respect the market limits and the delivery commitments.|[Where|If] a sales limit is "
            "given, production of that product [must not|may not|cannot] [exceed|go above] it; [where|if] a minimum is "
            "committed, production [must|has to] be at least that minimum.|[No|Not a single] product [may|can] be "
            "produced [above|in excess of] its maximum sales (when it has one) or [below|short of] its committed "
            "minimum production (when it has one).|[Each|Every] product's production [must|has to] [lie|stay] between "
            "its committed minimum, [if any|where given], and its maximum sales, [if any|where given].]"};
        f.objective =
            "[Maximize total profit.|Find the production plan with the highest profit.|The [goal|aim|objective] is to "
            "[earn|achieve|obtain] the [highest|largest|greatest] [total|overall|combined] "
            "profit.|[Decide|Choose|Determine] how much of each product to make so that [total|overall|combined] "
            "profit is [as high as possible|maximized].|Which production plan [earns|yields|brings in] the "
            "[most|largest|highest] [total|overall] profit?]";
        f.decisions = "how much of each product to make (fractional amounts allowed)";
        f.latex =
            "\\begin{aligned}\n"
            "\\max\\;& \\sum_{j\\in P} p_j\\,x_j \\\\\n"
            "\\text{s.t.}\\;& \\sum_{j\\in P} a_{rj}\\,x_j \\le b_r && \\forall r\\in R \\quad\\text{(res)} \\\\\n"
            "& l_j \\le x_j \\le u_j && \\forall j\\in P\n"
            "\\end{aligned}";
        f.latex_symbols = {"$P$: {products}; $R$: resources", "$p_j$: profit; $a_{rj}$: usage; $b_r$: available",
                           "$u_j$: maximum sales ($\\infty$ if none); $l_j$: committed minimum (0 if none)",
                           "$x_j$: amount of $j$ produced"};
        f.code = R"(P = data["products"]
R = data["resources"]
x = {j: @var(f"x_{a + 1}", data["min_delivery"].get(j, 0), data["max_sales"].get(j, @inf()), C) for a, j in enumerate(P)}
@obj(@sum(data["profit"][j] * x[j] for j in P))
for b, r in enumerate(R):
    @add(@sum(data["usage"][r][j] * x[j] for j in P if data["usage"][r][j] > 0) <= data["available"][r], f"res_{b + 1}")
)";
        f.var_docs = {{"x", {"products"}, "amount of {0}"}};
        f.con_docs = {{"res", {"resources"}, "availability of {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
