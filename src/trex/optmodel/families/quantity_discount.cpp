// Purchasing with all-units quantity discounts: a buyer needs at least D units and may split the order among
// suppliers; supplier s charges p_st per unit on the WHOLE order when its size reaches the tier's start q_st (tiers
// cheaper as they start higher; orders below q_s1 are refused) and delivers at most u_s. The cost is not convex, so
// z_st (binary) picks the tier and x_st is the quantity ordered in it: q_st z_st <= x_st <= q_s,t+1 z_st (u_s for
// the last tier), at most one tier per supplier, total at least D; minimum purchase cost. MILP. Infeasible design: a
// requirement above the suppliers' capacities together.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace quantity_discount_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    static const int suppliers_at[] = {2, 3, 4, 6, 8};
    const int n = suppliers_at[d - 1] + (d < 5 ? g.r.int_in(0, 1) : 0);
    const int nt = d <= 2 ? 3 : 4;
    strings S = g.names("supplier", n);
    for (auto& s : S) s += " " + g.sc.words.at("supplier_suffix");
    strings T;
    for (int t = 0; t < nt; t++) T.push_back(fmt::format("Tier {}", t + 1));
    std::vector<std::vector<double>> start(n, std::vector<double>(nt)), price(n, std::vector<double>(nt));
    std::vector<double> capacity(n);
    double total_capacity = 0;
    for (int s = 0; s < n; s++) {
        start[s][0] = 10 * g.r.int_in(1, 4);
        price[s][0] = g.r.int_in(30, 60);
        for (int t = 1; t < nt; t++) {
            start[s][t] = start[s][t - 1] + 10 * g.r.int_in(3, 9);
            price[s][t] = price[s][t - 1] - g.r.int_in(2, 6);
        }
        capacity[s] = start[s][nt - 1] + 10 * g.r.int_in(2, 8);
        total_capacity += capacity[s];
    }
    double demand = 10 * std::round(total_capacity * g.r.real_in(0.35, 0.6, 2) / 10);
    if (g.req.want == design::infeasible) demand = total_capacity + 10 * g.r.int_in(1, 5);
    ojson& data = g.inst.data;
    data["suppliers"] = list(S);
    data["tiers"] = list(T);
    data["demand"] = num(demand);
    data["capacity"] = map1(S, capacity);
    data["tier_start"] = map2(S, T, start);
    data["price"] = map2(S, T, price);
    model& m = g.inst.m;
    std::vector<std::vector<int>> x(n, std::vector<int>(nt)), z(n, std::vector<int>(nt));
    for (int s = 0; s < n; s++)
        for (int t = 0; t < nt; t++) x[s][t] = m.add_var(nm("x", s, t), var_type::continuous, 0, inf, price[s][t]);
    for (int s = 0; s < n; s++)
        for (int t = 0; t < nt; t++) z[s][t] = m.add_var(nm("z", s, t), var_type::binary, 0, 1, 0);
    for (int s = 0; s < n; s++)
        for (int t = 0; t < nt; t++) {
            const double upto = t + 1 < nt ? start[s][t + 1] : capacity[s];
            m.add_con(nm("lower", s, t), {{x[s][t], 1}, {z[s][t], -start[s][t]}}, row_sense::ge, 0);
            m.add_con(nm("upper", s, t), {{x[s][t], 1}, {z[s][t], -upto}}, row_sense::le, 0);
        }
    for (int s = 0; s < n; s++) {
        std::vector<term> row;
        for (int t = 0; t < nt; t++) row.push_back({z[s][t], 1});
        m.add_con(nm("one_tier", s), row, row_sense::le, 1);
    }
    std::vector<term> row;
    for (int s = 0; s < n; s++)
        for (int t = 0; t < nt; t++) row.push_back({x[s][t], 1});
    m.add_con("demand", row, row_sense::ge, demand);
}

}  // namespace quantity_discount_impl

TREX_FAMILY(quantity_discount) {
    static const family f = [] {
        family f;
        f.name = "quantity_discount";
        f.title = "Purchasing with all-units quantity discounts";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = quantity_discount_impl::generate;
        f.scenarios = {
            {"production",
             {{"org", "a machinery manufacturer"},
              {"good", "steel plate"},
              {"unit", "tons"},
              {"one", "ton"},
              {"supplier", "steel mill"},
              {"suppliers", "steel mills"},
              {"supplier_suffix", "Steel"},
              {"money", "$"},
              {"supplier_pool", "cities"}}},
            {"retail",
             {{"org", "a chain of coffee shops"},
              {"good", "green coffee"},
              {"unit", "bags"},
              {"one", "bag"},
              {"supplier", "importer"},
              {"suppliers", "importers"},
              {"supplier_suffix", "Coffee Traders"},
              {"money", "$"},
              {"supplier_pool", "cities"}}},
            {"healthcare",
             {{"org", "a hospital group"},
              {"good", "surgical gloves"},
              {"unit", "cases"},
              {"one", "case"},
              {"supplier", "distributor"},
              {"suppliers", "distributors"},
              {"supplier_suffix", "Medical"},
              {"money", "$"},
              {"supplier_pool", "cities"}}},
            {"energy",
             {{"org", "a district heating company"},
              {"good", "wood pellets"},
              {"unit", "tons"},
              {"one", "ton"},
              {"supplier", "pellet producer"},
              {"suppliers", "pellet producers"},
              {"supplier_suffix", "Pellets"},
              {"money", "$"},
              {"supplier_pool", "regions"}}},
        };
        f.intro =
            "[{Org} needs {good} and can split its order among {n_suppliers} {suppliers}, each offering all-units "
            "quantity discounts.|{Org} buys {good} from up to {n_suppliers} {suppliers}; every {supplier} gives a "
            "lower unit price on the entire order once the order is large enough.|[To buy|For its purchase of] {good}, "
            "{org} [may|can] [divide|split] the order [among|between] {n_suppliers} {suppliers}, [and each of "
            "them|each of which] [offers|grants] all-units discounts [on larger orders|when the order is big enough].] "
            "[Each {supplier} has {n_tiers} price tiers: an order that reaches a tier's starting quantity is charged "
            "that tier's price on every {one}, not only on the {unit} above the threshold.|A {supplier}'s price "
            "depends on the size of the order: once it reaches the start of a tier, all {unit} ordered are charged at "
            "that tier's price.|[Every|Each] {supplier} [uses|works with] {n_tiers} price tiers, and [the|its] "
            "discount is all-units: [when|once] an order [reaches|is at least] a tier's starting quantity, [every "
            "{one} of it|the whole order] is [charged|billed] at that tier's price.]";
        f.params = {
            {"suppliers", {}, "{suppliers}", "", true},
            {"tiers", {}, "[price tiers (from the smallest orders up)|price tiers (ordered from the smallest "
             "orders upward)|tiers of prices (starting with the smallest orders)]", "", true},
            {"demand", {}, "[quantity of {good} required|required quantity of {good}|amount of {good} needed]",
             "{unit}"},
            {"capacity", {"suppliers"}, "[delivery capacity|capacity for delivery|largest quantity it can deliver]",
             "{unit}"},
            {"tier_start", {"suppliers", "tiers"},
             "[smallest order qualifying for the tier|minimum order size for the tier|smallest order that qualifies "
             "for the tier]",
             "{unit}"},
            {"price", {"suppliers", "tiers"}, "[unit price in each tier|price per {one} in each tier|tier unit "
             "price]", "{money} per {one}"},
        };
        f.constraints = {
            "[The order placed with a {supplier} falls into one tier, from that tier's starting quantity up to the "
            "start of the next tier (up to the {supplier}'s capacity for the last tier); orders smaller than the start "
            "of the first tier are not accepted, though a {supplier} may also receive no order at all.|An order with a "
            "{supplier} is charged at a single tier's price and must lie between that tier's start and the next tier's "
            "start (the {supplier}'s capacity for the top tier); below the first tier's start a {supplier} does not "
            "deliver, but it can be left out entirely.|[If|When] an order is placed in a tier of a {supplier}, its "
            "size [must|has to] be at least that tier's starting quantity and at most the next tier's starting "
            "quantity ([or|up to] the {supplier}'s capacity [for|in] the [last|highest] tier); a {supplier} [may|can] "
            "also [receive no order|be left without an order], but [no order below|nothing smaller than] its first "
            "tier's start [is accepted|can be placed].|[No|Not a single] order [may|can] be [smaller|less] than the "
            "starting quantity of [its|the chosen] tier or [larger|more] than the start of the following tier (the "
            "capacity, for the [top|last] tier); [ordering nothing|placing no order] [from|with] a {supplier} is [also "
            "allowed|allowed as well].]",
            "[Each {supplier} receives at most one order.|At most one tier applies per {supplier}.|[No|Not a single] "
            "{supplier} [gets|receives] more than one order.|[Any|Each] {supplier} [is given|gets] [one order at "
            "most|at most a single order], [priced|charged] in one tier.]",
            "[The {unit} ordered must cover the quantity required.|Together the orders must supply at least the "
            "required quantity.|[The orders|All orders] [together|combined] [must|have to] [add up to|come to] [at "
            "least|no less than] the [required quantity|quantity needed].|[Enough|Sufficient] {unit} must be ordered "
            "[to cover|to meet] [the requirement|what is required] [in total|altogether].]"};
        f.objective =
            "[Minimize the total purchase cost.|Find the cheapest way to buy the {good}.|Minimize what is paid to the "
            "{suppliers} in total.|[Buy|Order] the {good} [at|for] the [lowest|least] [total|overall] "
            "[cost|price].|[Keep|Make] the [total|overall] [purchase bill|amount paid to the {suppliers}] as "
            "[low|small] as possible.]";
        f.integrality =
            "[Whether an order is placed in a given tier is a yes/no decision; quantities may be fractional.|The tier "
            "of each order is a yes/no choice; the {unit} ordered need not be whole.|[Choosing|Selecting] a tier "
            "[for|at] a {supplier} is [all or nothing|a yes/no decision], while the [quantity|amount] ordered "
            "[may|can] be [fractional|any non-negative amount].|[A tier is either used or not|A tier cannot be partly "
            "chosen], but [fractional quantities are allowed|the {unit} ordered may be fractional].]";
        f.decisions = "which price tier each {supplier}'s order falls into (binary) and how much to order in it";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{s\\in S}\\sum_{t\\in T} p_{st}\\,x_{st} \\\\\n"
            "\\text{s.t.}\\;& x_{st} \\ge q_{st}\\,z_{st} && \\forall s\\in S,\\ t\\in T \\quad\\text{(lower)} \\\\\n"
            "& x_{st} \\le \\bar q_{st}\\,z_{st} && \\forall s\\in S,\\ t\\in T \\quad\\text{(upper)} \\\\\n"
            "& \\sum_{t\\in T} z_{st} \\le 1 && \\forall s\\in S \\quad\\text{(one\\_tier)} \\\\\n"
            "& \\sum_{s\\in S}\\sum_{t\\in T} x_{st} \\ge D \\quad\\text{(demand)} \\\\\n"
            "& x_{st} \\ge 0,\\; z_{st} \\in \\{0,1\\}\n"
            "\\end{aligned}";
        f.latex_symbols = {"$S$: {suppliers}; $T$: price tiers in order", "$D$: quantity required",
                           "$q_{st}$: start of tier $t$ at $s$; $p_{st}$: unit price in it",
                           "$\\bar q_{st}$: start of the next tier at $s$, or the capacity $u_s$ for the last tier",
                           "$x_{st}$: {unit} ordered from $s$ at tier $t$; $z_{st} = 1$ if that tier applies"};
        f.code = R"(S = data["suppliers"]
T = data["tiers"]
x = {(s, t): @var(f"x_{i + 1}_{j + 1}", 0, None, C) for i, s in enumerate(S) for j, t in enumerate(T)}
z = {(s, t): @var(f"z_{i + 1}_{j + 1}", 0, 1, B) for i, s in enumerate(S) for j, t in enumerate(T)}
@obj(@sum(data["price"][s][t] * x[s, t] for s in S for t in T))
for i, s in enumerate(S):
    for j, t in enumerate(T):
        upto = data["tier_start"][s][T[j + 1]] if j + 1 < len(T) else data["capacity"][s]
        @add(x[s, t] - data["tier_start"][s][t] * z[s, t] >= 0, f"lower_{i + 1}_{j + 1}")
        @add(x[s, t] - upto * z[s, t] <= 0, f"upper_{i + 1}_{j + 1}")
for i, s in enumerate(S):
    @add(@sum(z[s, t] for t in T) <= 1, f"one_tier_{i + 1}")
@add(@sum(x[s, t] for s in S for t in T) >= data["demand"], "demand")
)";
        f.var_docs = {{"x", {"suppliers", "tiers"}, "{unit} ordered from {0} at {1} prices"},
                      {"z", {"suppliers", "tiers"}, "order with {0} falls in {1}"}};
        f.con_docs = {{"lower", {"suppliers", "tiers"}, "start of {1} at {0}"},
                      {"upper", {"suppliers", "tiers"}, "end of {1} at {0}"},
                      {"one_tier", {"suppliers"}, "one tier at {0}"},
                      {"demand", {}, "quantity required"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
