// Minimum-cost flow: node balances b_n (supply > 0, demand < 0), arcs with unit cost and capacity. LP.
// Infeasible design: arc capacities too small to carry the supply.
#include "trex/optmodel/families/common.hpp"
#include "trex/optmodel/families/graph.hpp"

namespace trex::optmodel::families {

namespace min_cost_flow_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int n = 4 + g.req.difficulty + g.r.int_in(0, 1);
    const strings N = g.names("node", n);
    auto arcs = random_arcs(n, n + g.req.difficulty, g.r);
    const int na = (int)arcs.size();
    // supply at the first node(s), demand at the last ones
    std::vector<double> bal(n, 0);
    const double total = 10 * g.r.int_in(3, 10);
    bal[0] = total;
    const int nd = std::min(2, n - 2);
    double left = total;
    for (int k = 0; k < nd; k++) {
        const double v = k + 1 == nd ? left : std::round(total * g.r.real_in(0.3, 0.7, 2));
        bal[n - 1 - k] = -v;
        left -= v;
    }
    strings A;
    std::vector<double> cost(na), cap(na);
    for (int a = 0; a < na; a++) {
        A.push_back(N[arcs[a].first] + "->" + N[arcs[a].second]);
        cost[a] = g.r.int_in(1, 12);
        cap[a] = g.req.want == design::infeasible ? std::round(total * 0.2) : 5 * g.r.int_in(2, (int)(total / 5) + 2);
    }
    // the chain carries everything when needed (feasibility)
    if (g.req.want != design::infeasible)
        for (int a = 0; a < na; a++)
            if (arcs[a].second == arcs[a].first + 1) cap[a] = std::max(cap[a], total);
    ojson& data = g.inst.data;
    data["nodes"] = list(N);
    data["arcs"] = list(A);
    write_arc_ends(data, N, A, arcs);
    data["cost"] = map1(A, cost);
    data["capacity"] = map1(A, cap);
    data["balance"] = map1(N, bal);
    model& m = g.inst.m;
    std::vector<int> x(na);
    for (int a = 0; a < na; a++) x[a] = m.add_var(nm("x", a), var_type::continuous, 0, cap[a], cost[a]);
    for (int v = 0; v < n; v++) {
        std::vector<term> t;
        for (int a = 0; a < na; a++) {
            if (arcs[a].first == v) t.push_back({x[a], 1});
            if (arcs[a].second == v) t.push_back({x[a], -1});
        }
        m.add_con(nm("balance", v), t, row_sense::eq, bal[v]);
    }
}

}  // namespace min_cost_flow_impl

TREX_FAMILY(min_cost_flow) {
    static const family f = [] {
        family f;
        f.name = "min_cost_flow";
        f.title = "Minimum-cost network flow";
        f.can_infeasible = true;
        f.generate = min_cost_flow_impl::generate;
        f.scenarios = {
            {"energy",
             {{"org", "a gas pipeline operator"},
              {"node", "station"},
              {"nodes", "stations"},
              {"arc", "pipeline"},
              {"unit", "thousand cubic meters"},
              {"node_pool", "cities"}}},
            {"logistics",
             {{"org", "a rail freight company"},
              {"node", "terminal"},
              {"nodes", "terminals"},
              {"arc", "rail link"},
              {"unit", "containers"},
              {"node_pool", "cities"}}},
            {"environment",
             {{"org", "a water board"},
              {"node", "junction"},
              {"nodes", "junctions"},
              {"arc", "canal"},
              {"unit", "megaliters"},
              {"node_pool", "nodes"}}},
        };
        f.intro =
            "[{Org} runs a network of {n_nodes} {nodes} connected by one-way {arc}s.|{Org} must route flow "
            "through a network of {n_nodes} {nodes} and {n_arcs} {arc}s.|[The|A] network [run|operated] by "
            "{org} [has|consists of] {n_nodes} {nodes} [linked|joined|connected] by {n_arcs} one-way "
            "{arc}s.|[Across|Over|Through] {n_arcs} one-way {arc}s [between|linking|joining] {n_nodes} "
            "{nodes}, {org} [has to|must|needs to] [route|send|move] [flow|its flow] from [supply|the supply] "
            "{nodes} to [demand|the demand] {nodes}.]";
        f.params = {
            {"nodes", {}, "{nodes}", "", true},
            {"arcs", {}, "{arc}s", "", true},
            {"from", {"arcs"}, "start", ""},
            {"to", {"arcs"}, "end", ""},
            {"cost", {"arcs"}, "[cost per unit of flow|unit flow cost|cost of each unit of flow]", "$ per {unit}"},
            {"capacity", {"arcs"}, "capacity", "{unit}"},
            {"balance", {"nodes"},
             "[net supply (positive: supply, negative: demand)|net supply (a positive value is a supply, a "
             "negative one a demand)|net supply (supply if positive, demand if negative)]",
             "{unit}"},
        };
        f.constraints = {
            "[At every {node}, flow out minus flow in equals its net supply.|Flow is conserved: outflow minus inflow "
            "at each {node} equals its net supply.|[For|At] [each|every] {node}, the [total|combined] flow [leaving|"
            "going out] [minus|less] the [total|combined] flow [entering|coming in] [must equal|has to equal|is "
            "exactly] [its|the {node}'s] net supply.|[Every|Each] {node}'s net supply [must|has to] "
            "[equal|match|equal exactly] "
            "[what flows out of it minus what flows into it|its outflow minus its inflow].|The net outflow "
            "([outflow minus inflow|flow out minus flow in]) at [each|every] {node} [must be|has to be|is] "
            "[exactly|precisely] [its|that {node}'s] net supply.]",
            "[No {arc} may carry more than its capacity.|Each {arc}'s flow is limited by its capacity.|The flow "
            "on [each|every] {arc} [must stay within|must not exceed|may not exceed|has to stay within] [its|the "
            "{arc}'s] capacity.|[Keep|Hold] the flow on [each|every] {arc} [within|at or below] its capacity.|It is "
            "[not allowed|not "
            "possible] [to send more flow on an {arc} than its capacity|for an {arc} to carry more than its "
            "capacity].]"};
        f.objective =
            "[Minimize the total cost of the flow.|Route all supply to the demands at minimum cost.|The [goal|aim|"
            "objective] is to [make|keep] the [total|overall|combined] cost of the flow as [low|small] as "
            "possible.|[Choose|Find|Determine] the flow on [each|every] {arc} so that the [total|overall|"
            "combined] cost is [minimized|as low as possible|as small as possible].|[Find|Plan] the [flows|"
            "routing] [that minimize|with the smallest|with the lowest] [total|overall|combined] [flow cost|cost "
            "of flow].]";
        f.decisions = "the flow on each {arc}";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{a\\in A} c_a\\,x_a \\\\\n"
            "\\text{s.t.}\\;& \\sum_{a\\in\\delta^+(n)} x_a - \\sum_{a\\in\\delta^-(n)} x_a = b_n && \\forall "
            "n\\in N \\quad\\text{(balance)} \\\\\n"
            "& 0 \\le x_a \\le u_a && \\forall a\\in A\n"
            "\\end{aligned}";
        f.latex_symbols = {"$N$: {nodes}; $A$: {arc}s; $\\delta^+(n)$, $\\delta^-(n)$: arcs leaving/entering $n$",
                           "$c_a$, $u_a$: unit cost and capacity; $b_n$: net supply", "$x_a$: flow on $a$"};
        f.code = R"(N = data["nodes"]
A = data["arcs"]
x = {a: @var(f"x_{k + 1}", 0, data["capacity"][a], C) for k, a in enumerate(A)}
@obj(@sum(data["cost"][a] * x[a] for a in A))
for k, n in enumerate(N):
    @add(@sum(x[a] for a in A if data["from"][a] == n) - @sum(x[a] for a in A if data["to"][a] == n) == data["balance"][n], f"balance_{k + 1}")
)";
        f.var_docs = {{"x", {"arcs"}, "flow on {0}"}};
        f.con_docs = {{"balance", {"nodes"}, "flow balance at {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
