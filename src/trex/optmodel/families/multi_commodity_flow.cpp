// Multi-commodity minimum-cost flow: several commodities, each with an origin node, a destination node and a quantity
// to move, share the arcs of one directed network; each arc has a unit cost (the same for every commodity) and a
// joint capacity on the total flow of all commodities. LP. Infeasible design: one commodity's quantity exceeds the
// total capacity of the arcs leaving its origin.
#include "trex/optmodel/families/common.hpp"
#include "trex/optmodel/families/graph.hpp"

namespace trex::optmodel::families {

namespace multi_commodity_flow_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int n = 3 + 2 * d + g.r.int_in(0, 1);
    const int nk = d <= 2 ? 2 : d <= 4 ? 3 : 4;
    const strings N = g.names("node", n), K = g.names("com", nk);
    auto arcs = random_arcs(n, n + d, g.r);
    const int na = (int)arcs.size();
    // origins in the first half of the chain, destinations in the second half (so the chain connects them)
    std::vector<int> orig(nk), dest(nk);
    std::vector<double> qty(nk);
    for (int k = 0; k < nk; k++) {
        for (;;) {
            orig[k] = g.r.int_in(0, n / 2 - 1);
            dest[k] = g.r.int_in(n / 2, n - 1);
            bool repeated = false;
            for (int l = 0; l < k; l++) repeated = repeated || (orig[l] == orig[k] && dest[l] == dest[k]);
            if (!repeated) break;
        }
        qty[k] = 5 * g.r.int_in(3, 10);
    }
    const double total = sum(qty);
    strings A;
    std::vector<double> cost(na), cap(na);
    for (int a = 0; a < na; a++) {
        A.push_back(N[arcs[a].first] + "->" + N[arcs[a].second]);
        const bool chain = arcs[a].second == arcs[a].first + 1;
        // the chain is expensive but carries everything; the shortcuts are cheap and tight
        cost[a] = chain ? g.r.int_in(8, 15) : g.r.int_in(1, 7);
        cap[a] = chain ? total : 5 * g.r.int_in(2, 6);
    }
    if (g.req.want == design::infeasible) {
        const int k = g.r.int_in(0, nk - 1);
        double out = 0;
        for (int a = 0; a < na; a++)
            if (arcs[a].first == orig[k]) out += cap[a];
        qty[k] = out + 5 * g.r.int_in(1, 4);
    }
    ojson& data = g.inst.data;
    data["nodes"] = list(N);
    data["arcs"] = list(A);
    ojson o = ojson::object(), t = ojson::object();
    write_arc_ends(data, N, A, arcs);
    data["cost"] = map1(A, cost);
    data["capacity"] = map1(A, cap);
    data["commodities"] = list(K);
    for (int k = 0; k < nk; k++) {
        o[K[k]] = N[orig[k]];
        t[K[k]] = N[dest[k]];
    }
    data["origin"] = o;
    data["destination"] = t;
    data["quantity"] = map1(K, qty);
    model& m = g.inst.m;
    std::vector<std::vector<int>> x(nk, std::vector<int>(na));
    for (int k = 0; k < nk; k++)
        for (int a = 0; a < na; a++) x[k][a] = m.add_var(nm("x", k, a), var_type::continuous, 0, inf, cost[a]);
    for (int k = 0; k < nk; k++)
        for (int v = 0; v < n; v++) {
            std::vector<term> s;
            for (int a = 0; a < na; a++) {
                if (arcs[a].first == v) s.push_back({x[k][a], 1});
                if (arcs[a].second == v) s.push_back({x[k][a], -1});
            }
            const double rhs = v == orig[k] ? qty[k] : v == dest[k] ? -qty[k] : 0;
            m.add_con(nm("balance", k, v), s, row_sense::eq, rhs);
        }
    for (int a = 0; a < na; a++) {
        std::vector<term> s;
        for (int k = 0; k < nk; k++) s.push_back({x[k][a], 1});
        m.add_con(nm("cap", a), s, row_sense::le, cap[a]);
    }
}

}  // namespace multi_commodity_flow_impl

TREX_FAMILY(multi_commodity_flow) {
    static const family f = [] {
        family f;
        f.name = "multi_commodity_flow";
        f.title = "Multi-commodity minimum-cost flow";
        f.can_infeasible = true;
        f.generate = multi_commodity_flow_impl::generate;
        f.scenarios = {
            {"logistics",
             {{"org", "a freight forwarder"},
              {"node", "terminal"},
              {"nodes", "terminals"},
              {"arc", "rail link"},
              {"com", "product line"},
              {"coms", "product lines"},
              {"unit", "containers"},
              {"node_pool", "cities"},
              {"com_pool", "products"}}},
            {"healthcare",
             {{"org", "a regional medical supply agency"},
              {"node", "hub"},
              {"nodes", "hubs"},
              {"arc", "delivery route"},
              {"com", "supply type"},
              {"coms", "supply types"},
              {"unit", "pallets"},
              {"node_pool", "cities"},
              {"com_pool", "items"}}},
            {"retail",
             {{"org", "a grocery chain"},
              {"node", "distribution point"},
              {"nodes", "distribution points"},
              {"arc", "truck lane"},
              {"com", "product"},
              {"coms", "products"},
              {"unit", "crates"},
              {"node_pool", "cities"},
              {"com_pool", "foods"}}},
            {"generic",
             {{"org", "a network planner"},
              {"node", "node"},
              {"nodes", "nodes"},
              {"arc", "arc"},
              {"com", "commodity"},
              {"coms", "commodities"},
              {"unit", "units"},
              {"node_pool", "nodes"},
              {"com_pool", "elements"}}},
        };
        f.intro =
            "[{Org} must move {n_commodities} {coms} through a network of {n_nodes} {nodes} and {n_arcs} one-way "
            "{arc}s.|{Org} ships {n_commodities} different {coms}, each from its own origin to its own "
            "destination, over a shared network of {n_nodes} {nodes}.|[Over|Across|Through] a [shared|common] "
            "network of {n_nodes} {nodes} and {n_arcs} one-way {arc}s, {org} [has to|must|needs to] [ship|move|"
            "route] {n_commodities} {coms}, each from its [own origin|origin] to its [own "
            "destination|destination].|There are "
            "{n_commodities} {coms} [to ship|to move|to be routed], [each with|every one with] its own origin "
            "and destination, and {org} [sends|moves|routes] them [all|together] over {n_arcs} one-way {arc}s "
            "[linking|between|joining] {n_nodes} {nodes}.]";
        f.params = {
            {"nodes", {}, "{nodes}", "", true},
            {"arcs", {}, "{arc}s", "", true},
            {"from", {"arcs"}, "start", ""},
            {"to", {"arcs"}, "end", ""},
            {"cost", {"arcs"},
             "[cost per unit shipped (any {com})|unit shipping cost (the same for every {com})|shipping cost per "
             "unit (for any {com})]",
             "$ per {unit}"},
            {"capacity", {"arcs"},
             "[joint capacity (all {coms} together)|shared capacity (for all {coms} combined)|joint capacity "
             "(shared by all {coms})]",
             "{unit}"},
            {"commodities", {}, "{coms}", "", true},
            {"origin", {"commodities"}, "origin", ""},
            {"destination", {"commodities"}, "destination", ""},
            {"quantity", {"commodities"}, "[quantity to ship|quantity to be shipped|amount to ship]", "{unit}"},
        };
        f.constraints = {
            "[For each {com}, flow is conserved at every {node}: the origin sends out the full quantity, the "
            "destination receives it, and every other {node} passes on what it receives.|Each {com} leaves its "
            "origin and reaches its destination in full; at all other {nodes} its inflow equals its outflow.|[For "
            "every|For each] {com} [and|at] every {node}, [outflow minus inflow|flow out minus flow in] [equals|"
            "must equal|is] the [full|whole] quantity at [its|the {com}'s] origin, [minus the quantity|the "
            "negative of the quantity] at its destination, and zero [elsewhere|at every other {node}].|[The full|"
            "The whole|All of the] quantity of [each|every] {com} [must|has to] [leave|be sent out of] its origin "
            "and [arrive at|reach] its destination, [while|and] [every|each] other {node} [passes on|sends on|"
            "forwards] exactly what it [receives|takes in] of that {com}.|No {node} other than a {com}'s origin or "
            "destination [may|can] [keep|hold back|create] [any of that {com}|flow of that {com}]: [its inflow "
            "of that {com} equals its outflow|what comes in must go out]; the origin [sends out|ships] the "
            "[full|whole] "
            "quantity and the destination [receives it|takes it in].]",
            "[The total flow of all {coms} on an {arc} may not exceed its capacity.|{Arc} capacities are shared by "
            "all {coms}.|[On each|On every|For each] {arc}, the [combined|total|summed] flow of all {coms} [must "
            "stay within|must not exceed|may not exceed|has to stay within] [its|the {arc}'s] capacity.|[No|Not a "
            "single] {arc} [may|can] carry more [flow than its capacity|than its capacity], [counting|adding up|"
            "summing] all {coms} [together|combined].|[Each|Every] {arc}'s capacity is [a joint limit|one shared "
            "limit] on the [total|combined] flow of [all|every one of the] {coms} [on it|it carries].]"};
        f.objective =
            "[Minimize the total shipping cost.|Route all {coms} at the lowest total cost.|The [goal|aim|"
            "objective] is to [make|keep] the [total|overall|combined] [shipping cost of all {coms}|shipping cost] as "
            "[low|"
            "small] as possible.|[Choose|Find|Determine] the flow of [each|every] {com} on [each|every] {arc} so "
            "that the [total|overall|combined] shipping cost is [minimized|as low as possible|as small as "
            "possible].|[Find|Plan] the [routing|flows] [that minimizes|with the smallest|with the lowest] "
            "[total|overall|combined] [shipping cost|cost of shipping] [over all {coms}|for all {coms}].]";
        f.decisions = "the flow of each {com} on each {arc}";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{k\\in K}\\sum_{a\\in A} c_a\\,x_{ka} \\\\\n"
            "\\text{s.t.}\\;& \\sum_{a\\in\\delta^+(n)} x_{ka} - \\sum_{a\\in\\delta^-(n)} x_{ka} = b_{kn} && "
            "\\forall k\\in K,\\ n\\in N \\quad\\text{(balance)} \\\\\n"
            "& \\sum_{k\\in K} x_{ka} \\le u_a && \\forall a\\in A \\quad\\text{(cap)} \\\\\n"
            "& x_{ka} \\ge 0\n"
            "\\end{aligned}";
        f.latex_symbols = {
            "$N$: {nodes}; $A$: {arc}s; $K$: {coms}; $\\delta^+(n)$, $\\delta^-(n)$: arcs "
            "leaving/entering $n$",
            "$c_a$, $u_a$: unit cost and capacity; $b_{kn} = q_k$ at $k$'s origin, $-q_k$ at its "
            "destination, 0 elsewhere",
            "$x_{ka}$: flow of $k$ on $a$"};
        f.code = R"(N = data["nodes"]
A = data["arcs"]
K = data["commodities"]
x = {(k, a): @var(f"x_{i + 1}_{j + 1}", 0, @inf(), C) for i, k in enumerate(K) for j, a in enumerate(A)}
@obj(@sum(data["cost"][a] * x[k, a] for k in K for a in A))
for i, k in enumerate(K):
    q = data["quantity"][k]
    for j, n in enumerate(N):
        b = q if n == data["origin"][k] else (-q if n == data["destination"][k] else 0)
        @add(@sum(x[k, a] for a in A if data["from"][a] == n) - @sum(x[k, a] for a in A if data["to"][a] == n) == b, f"balance_{i + 1}_{j + 1}")
for j, a in enumerate(A):
    @add(@sum(x[k, a] for k in K) <= data["capacity"][a], f"cap_{j + 1}")
)";
        f.var_docs = {{"x", {"commodities", "arcs"}, "flow of {0} on {1}"}};
        f.con_docs = {{"balance", {"commodities", "nodes"}, "flow balance of {0} at {1}"},
                      {"cap", {"arcs"}, "joint capacity of {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
