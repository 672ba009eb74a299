// Piecewise-linear convex costs: products bought from suppliers whose unit price rises by tier (the first q_1 units
// at p_1, the next q_2 at p_2 > p_1, the rest at p_3), demands to meet and supplier capacities; one segment variable
// per tier (convex: the cheaper tiers fill first on their own, no binaries needed). LP. Infeasible design: a demand
// above what the suppliers can deliver together.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace piecewise_convex_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int ns = 2 + (d + 1) / 2, np = 1 + d / 2;
    const strings S = g.names("supplier", ns), P = g.names("product", np);
    std::vector<double> demand(np), cap(ns);
    // tier sizes per supplier (the last tier: up to the capacity), prices per supplier, product and tier
    std::vector<std::vector<double>> size(ns, std::vector<double>(2));
    std::vector<std::vector<std::vector<double>>> price(ns,
                                                        std::vector<std::vector<double>>(np, std::vector<double>(3)));
    for (int s = 0; s < ns; s++) {
        size[s][0] = 10 * g.r.int_in(3, 10);
        size[s][1] = 10 * g.r.int_in(3, 10);
        cap[s] = size[s][0] + size[s][1] + 10 * g.r.int_in(2, 10);
        for (int p = 0; p < np; p++) {
            price[s][p][0] = g.r.int_in(4, 12);
            price[s][p][1] = price[s][p][0] + g.r.int_in(1, 4);
            price[s][p][2] = price[s][p][1] + g.r.int_in(1, 5);
        }
    }
    const double total_cap = sum(cap);
    for (int p = 0; p < np; p++) demand[p] = 10 * std::round(total_cap * g.r.real_in(0.5, 0.8, 2) / np / 10);
    if (g.req.want == design::infeasible) demand[0] += total_cap;
    ojson& data = g.inst.data;
    data["suppliers"] = list(S);
    data["products"] = list(P);
    data["tiers"] = list({"tier 1", "tier 2", "tier 3"});
    data["demand"] = map1(P, demand);
    data["capacity"] = map1(S, cap);
    data["tier1_units"] = map1(S, [&] {
        std::vector<double> v;
        for (auto& z : size) v.push_back(z[0]);
        return v;
    }());
    data["tier2_units"] = map1(S, [&] {
        std::vector<double> v;
        for (auto& z : size) v.push_back(z[1]);
        return v;
    }());
    for (int k = 0; k < 3; k++) {
        std::vector<std::vector<double>> pk(ns, std::vector<double>(np));
        for (int s = 0; s < ns; s++)
            for (int p = 0; p < np; p++) pk[s][p] = price[s][p][k];
        data[fmt::format("price_tier{}", k + 1)] = map2(S, P, pk);
    }
    model& m = g.inst.m;
    // y_s_p_k: units of product p bought from supplier s at tier k; tier bounds apply to the supplier's total
    std::vector<std::vector<std::vector<int>>> y(ns, std::vector<std::vector<int>>(np, std::vector<int>(3)));
    for (int s = 0; s < ns; s++)
        for (int p = 0; p < np; p++)
            for (int k = 0; k < 3; k++)
                y[s][p][k] = m.add_var(fmt::format("y_{}_{}_{}", s + 1, p + 1, k + 1), var_type::continuous, 0, inf,
                                       price[s][p][k]);
    for (int p = 0; p < np; p++) {
        std::vector<term> t;
        for (int s = 0; s < ns; s++)
            for (int k = 0; k < 3; k++) t.push_back({y[s][p][k], 1});
        m.add_con(nm("demand", p), t, row_sense::ge, demand[p]);
    }
    for (int s = 0; s < ns; s++) {
        std::vector<term> t1, t2, all;
        for (int p = 0; p < np; p++) {
            t1.push_back({y[s][p][0], 1});
            t2.push_back({y[s][p][1], 1});
            for (int k = 0; k < 3; k++) all.push_back({y[s][p][k], 1});
        }
        m.add_con(nm("tier1", s), t1, row_sense::le, size[s][0]);
        m.add_con(nm("tier2", s), t2, row_sense::le, size[s][1]);
        m.add_con(nm("capacity", s), all, row_sense::le, cap[s]);
    }
}

}  // namespace piecewise_convex_impl

TREX_FAMILY(piecewise_convex) {
    static const family f = [] {
        family f;
        f.name = "piecewise_convex";
        f.title = "Purchasing with tiered (piecewise-linear convex) prices";
        f.can_infeasible = true;
        f.generate = piecewise_convex_impl::generate;
        f.scenarios = {
            {"production",
             {{"org", "a packaging plant"},
              {"supplier", "supplier"},
              {"suppliers", "suppliers"},
              {"product", "material"},
              {"products", "materials"},
              {"unit", "tons"},
              {"supplier_pool", "cities"},
              {"product_pool", "ingredients"}}},
            {"energy",
             {{"org", "a utility"},
              {"supplier", "generator"},
              {"suppliers", "generators"},
              {"product", "energy block"},
              {"products", "energy blocks"},
              {"unit", "MWh"},
              {"supplier_pool", "generators"},
              {"product_pool", "slots"}}},
            {"retail",
             {{"org", "a grocery chain"},
              {"supplier", "farm"},
              {"suppliers", "farms"},
              {"product", "produce item"},
              {"products", "produce items"},
              {"unit", "crates"},
              {"supplier_pool", "regions"},
              {"product_pool", "foods"}}},
            {"healthcare",
             {{"org", "a hospital group"},
              {"supplier", "wholesaler"},
              {"suppliers", "wholesalers"},
              {"product", "supply"},
              {"products", "supplies"},
              {"unit", "boxes"},
              {"supplier_pool", "cities"},
              {"product_pool", "items"}}},
        };
        f.intro =
            "[{Org} buys {n_products} {products} from {n_suppliers} {suppliers} whose prices rise with the quantity "
            "ordered.|{Org} must cover its demand for {n_products} {products}; each of {n_suppliers} {suppliers} "
            "charges by tier, more per unit as the order grows.|[To meet|To cover] its demand for {n_products} "
            "{products}, {org} [orders|buys|purchases] from {n_suppliers} {suppliers}, [and each of them|each of "
            "which] [charges|bills] a higher unit price [once|as soon as] [the order|the quantity bought] passes [a "
            "tier limit|the limit of a price tier].|{Org} [deals with|buys from] {n_suppliers} {suppliers} [that "
            "sell|selling] it {n_products} {products} at tiered prices: the [more is bought|larger the order], the "
            "higher the price of [the extra units|each additional unit].]";
        f.params = {
            {"suppliers", {}, "{suppliers}", "", true},
            {"products", {}, "{products}", "", true},
            {"tiers", {}, "[price tiers|pricing tiers|tiers of prices]", "", true},
            {"demand", {"products"}, "demand", "{unit}"},
            {"capacity", {"suppliers"},
             "[capacity (all {products} together)|capacity (over all {products} combined)|capacity (shared by all "
             "{products})]",
             "{unit}"},
            {"tier1_units", {"suppliers"},
             "[tier 1 quantity (the first units)|tier 1 quantity (covering the first units)|quantity of tier 1 "
             "(the first units)]",
             "{unit}"},
            {"tier2_units", {"suppliers"},
             "[tier 2 quantity (the next units)|tier 2 quantity (covering the next units)|quantity of tier 2 (the "
             "next units)]",
             "{unit}"},
            {"price_tier1", {"suppliers", "products"},
             "[tier 1 price per unit|unit price in tier 1|price per unit at tier 1]",
             "$"},
            {"price_tier2", {"suppliers", "products"},
             "[tier 2 price per unit|unit price in tier 2|price per unit at tier 2]", "$"},
            {"price_tier3", {"suppliers", "products"},
             "[tier 3 price per unit (beyond tier 2)|unit price in tier 3 (beyond tier 2)|price per unit at tier 3 "
             "(past tier 2)]",
             "$"},
        };
        f.constraints = {
            "[Each {product}'s demand must be met.|Enough of every {product} has to be bought.|[The total|The combined "
            "amount|The overall amount] of each {product} bought from all {suppliers} [must|has to] [reach|be at "
            "least] its demand.|[No|Not a single] {product} [may|can] [be left short|fall short] of its demand: "
            "[purchases|what is bought] across all {suppliers} and tiers [must|has to] [cover|meet] it [in "
            "full|completely].|[For each|For every] {product}, [buy|purchase|order] [at least|no less than] its demand "
            "[in total|altogether] [over|across] the {suppliers}.]",
            "[At a {supplier}, the first units of all {products} together are sold at tier 1 prices up to the tier 1 "
            "quantity, the next at tier 2 prices up to the tier 2 quantity, and the rest at tier 3 prices, up to the "
            "{supplier}'s capacity.|Each {supplier}'s tiers hold a limited number of units (tier 3: the rest of its "
            "capacity), shared by all {products}.|[For each|For every] {supplier}, [at most|no more than] its tier 1 "
            "quantity [can|may] be bought at tier 1 prices and [at most|no more than] its tier 2 quantity at tier 2 "
            "prices, [counting all {products} together|summed over all {products}]; [everything else|any further "
            "quantity] is [priced|charged] at tier 3, and the [total|overall amount] bought from the {supplier} "
            "[must|may] not exceed its capacity.|[No|Not a single] {supplier} [may|can] [sell|supply] more than its "
            "tier 1 quantity at tier 1 prices or more than its tier 2 quantity at tier 2 prices ([all|the] {products} "
            "[combined|together]), and [its total sales|everything it sells] [must stay within|may not exceed|cannot "
            "exceed] its capacity; [units beyond|purchases past] tiers 1 and 2 [cost|are paid at] tier 3 "
            "prices.|[Purchases|Units bought] from a {supplier} [must|have to] respect its tier limits: [the "
            "amount|the quantity] [bought|purchased] at tier 1 prices is [at most|capped at] the tier 1 quantity, [the "
            "amount|the quantity] at tier 2 prices is [at most|capped at] the tier 2 quantity (all {products} [counted "
            "together|combined]), tier 3 [takes|covers] the rest, and the [grand total|total of all tiers] is [at "
            "most|capped at] the capacity.]"};
        f.objective =
            "[Minimize the total purchase cost.|Find the cheapest way to cover the demand.|The [goal|aim|objective] is "
            "to [buy|purchase] [everything needed|what is needed] at the [lowest|smallest|least] "
            "[total|overall|combined] cost.|[Decide|Choose|Determine] how much of each {product} to buy from each "
            "{supplier} [in|at] each tier so that the [total|overall|combined] [purchase cost|amount paid] is [as low "
            "as possible|minimized].|What [purchase plan|buying plan] [covers|meets] [the demand|all demand] at the "
            "[lowest|least|smallest] [total|overall] cost?]";
        f.decisions = "how many units of each {product} to buy from each {supplier} at each price tier";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{s,p,k} c_{spk}\\,y_{spk} \\\\\n"
            "\\text{s.t.}\\;& \\sum_{s,k} y_{spk} \\ge D_p && \\forall p \\quad\\text{(demand)} \\\\\n"
            "& \\sum_{p} y_{sp1} \\le Q^1_s,\\ \\sum_{p} y_{sp2} \\le Q^2_s && \\forall s "
            "\\quad\\text{(tier1, tier2)} \\\\\n"
            "& \\sum_{p,k} y_{spk} \\le C_s && \\forall s \\quad\\text{(capacity)} \\\\\n"
            "& y \\ge 0\n"
            "\\end{aligned}";
        f.latex_symbols = {"$S$: {suppliers}; $P$: {products}; $k = 1, 2, 3$: price tiers",
                           "$c_{spk}$: price per unit; $Q^1_s, Q^2_s$: tier sizes; $C_s$: capacity; $D_p$: demand",
                           "$y_{spk}$: units of $p$ bought from $s$ at tier $k$ (prices rise by tier, so the "
                           "cheaper tiers fill first)"};
        f.code = R"(S = data["suppliers"]
P = data["products"]
K = [1, 2, 3]
y = {(s, p, k): @var(f"y_{a + 1}_{b + 1}_{k}", 0, @inf(), C) for a, s in enumerate(S) for b, p in enumerate(P) for k in K}
@obj(@sum(data[f"price_tier{k}"][s][p] * y[s, p, k] for s in S for p in P for k in K))
for b, p in enumerate(P):
    @add(@sum(y[s, p, k] for s in S for k in K) >= data["demand"][p], f"demand_{b + 1}")
for a, s in enumerate(S):
    @add(@sum(y[s, p, 1] for p in P) <= data["tier1_units"][s], f"tier1_{a + 1}")
    @add(@sum(y[s, p, 2] for p in P) <= data["tier2_units"][s], f"tier2_{a + 1}")
    @add(@sum(y[s, p, k] for p in P for k in K) <= data["capacity"][s], f"capacity_{a + 1}")
)";
        f.var_docs = {{"y", {"suppliers", "products", "tiers"}, "units of {1} bought from {0} at {2}"}};
        f.con_docs = {{"demand", {"products"}, "demand for {0}"},
                      {"tier1", {"suppliers"}, "tier 1 quantity of {0}"},
                      {"tier2", {"suppliers"}, "tier 2 quantity of {0}"},
                      {"capacity", {"suppliers"}, "capacity of {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
