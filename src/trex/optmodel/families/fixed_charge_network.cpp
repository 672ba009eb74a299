// Fixed-charge network design (single commodity): directed arcs with a fixed cost to open, a unit flow cost and a
// capacity; nodes with a supply or a demand (b_n = supply - demand, 0 for transshipment nodes). Binary y_a opens arc a,
// flow 0 <= x_a <= u_a y_a; at each node outflow minus inflow is at most b_n (supplies need not be used up, demands are
// met at least); minimize fixed plus flow cost. MILP. Infeasible design: total supply below total demand.
#include "trex/optmodel/families/common.hpp"
#include "trex/optmodel/families/graph.hpp"

namespace trex::optmodel::families {

namespace fixed_charge_network_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    static const int node_count[] = {5, 6, 8, 10, 12};
    static const int extra_count[] = {2, 4, 7, 11, 15};
    const int n = node_count[d - 1];
    const strings N = g.names("node", n);
    auto arcs = random_arcs(n, extra_count[d - 1], g.r);
    const int na = (int)arcs.size();
    // demands at the last nodes, supplies at the first one or two
    const int nd = d <= 2 ? 2 : 3, nsup = d <= 2 ? 1 : 2;
    std::vector<double> bal(n, 0);
    double demand = 0;
    for (int k = 0; k < nd; k++) {
        bal[n - 1 - k] = -5 * g.r.int_in(2, 8);
        demand -= bal[n - 1 - k];
    }
    double supply = demand + 5 * g.r.int_in(1, 4);
    if (g.req.want == design::infeasible) supply = demand - 5 * g.r.int_in(1, 3);
    if (nsup == 1) {
        bal[0] = supply;
    } else {
        bal[0] = 5 * std::round(supply * g.r.real_in(0.4, 0.7, 2) / 5);
        bal[1] = supply - bal[0];
    }
    strings A;
    std::vector<double> fixed(na), cost(na), cap(na);
    for (int a = 0; a < na; a++) {
        A.push_back(N[arcs[a].first] + "->" + N[arcs[a].second]);
        const bool chain = arcs[a].second == arcs[a].first + 1;
        fixed[a] = 10 * g.r.int_in(4, 30);
        cost[a] = g.r.int_in(1, 9);
        cap[a] = chain ? supply : 5 * g.r.int_in(2, 8);  // the chain can carry everything (feasibility)
    }
    ojson& data = g.inst.data;
    data["nodes"] = list(N);
    data["arcs"] = list(A);
    write_arc_ends(data, N, A, arcs);
    data["fixed_cost"] = map1(A, fixed);
    data["unit_cost"] = map1(A, cost);
    data["capacity"] = map1(A, cap);
    strings SN, DN;
    std::vector<double> sv, dv;
    for (int v = 0; v < n; v++) {
        if (bal[v] > 0) SN.push_back(N[v]), sv.push_back(bal[v]);
        if (bal[v] < 0) DN.push_back(N[v]), dv.push_back(-bal[v]);
    }
    data["supply"] = map1(SN, sv);
    data["demand"] = map1(DN, dv);
    model& m = g.inst.m;
    std::vector<int> y(na), x(na);
    for (int a = 0; a < na; a++) y[a] = m.add_var(nm("y", a), var_type::binary, 0, 1, fixed[a]);
    for (int a = 0; a < na; a++) x[a] = m.add_var(nm("x", a), var_type::continuous, 0, inf, cost[a]);
    for (int v = 0; v < n; v++) {
        std::vector<term> t;
        for (int a = 0; a < na; a++) {
            if (arcs[a].first == v) t.push_back({x[a], 1});
            if (arcs[a].second == v) t.push_back({x[a], -1});
        }
        m.add_con(nm("balance", v), t, row_sense::le, bal[v]);
    }
    for (int a = 0; a < na; a++) m.add_con(nm("open", a), {{x[a], 1}, {y[a], -cap[a]}}, row_sense::le, 0);
}

}  // namespace fixed_charge_network_impl

TREX_FAMILY(fixed_charge_network) {
    static const family f = [] {
        family f;
        f.name = "fixed_charge_network";
        f.title = "Fixed-charge network design";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = fixed_charge_network_impl::generate;
        f.scenarios = {
            {"logistics",
             {{"org", "a regional freight company"},
              {"node", "terminal"},
              {"nodes", "terminals"},
              {"arc", "trucking lane"},
              {"open", "operate"},
              {"unit", "pallets"},
              {"node_pool", "cities"}}},
            {"energy",
             {{"org", "a district heating utility"},
              {"node", "station"},
              {"nodes", "stations"},
              {"arc", "pipeline"},
              {"open", "build"},
              {"unit", "megawatt-hours"},
              {"node_pool", "nodes"}}},
            {"environment",
             {{"org", "an irrigation board"},
              {"node", "junction"},
              {"nodes", "junctions"},
              {"arc", "canal"},
              {"open", "dig"},
              {"unit", "megaliters"},
              {"node_pool", "regions"}}},
            {"generic",
             {{"org", "a network planner"},
              {"node", "node"},
              {"nodes", "nodes"},
              {"arc", "arc"},
              {"open", "open"},
              {"unit", "units"},
              {"node_pool", "nodes"}}},
        };
        f.intro =
            "[{Org} is designing a network of {n_nodes} {nodes}: it may {open} any of {n_arcs} one-way {arc}s, "
            "each at a fixed cost.|{Org} must decide which of {n_arcs} candidate {arc}s between {n_nodes} {nodes} "
            "to {open} and how much to send along them.|There are {n_nodes} {nodes} and {n_arcs} candidate one-way "
            "{arc}s [between them|linking them]; {org} [can|may] {open} any {arc} [at|for] a fixed cost and "
            "[then] send flow along it.|[In designing|To design] its network of {n_nodes} {nodes}, {org} [has "
            "to|must] [choose|decide] which of {n_arcs} one-way {arc}s to {open}, [each|every one] [at|for] a fixed "
            "cost, and how much [to send|flows] on each.]";
        f.params = {
            {"nodes", {}, "{nodes}", "", true},
            {"arcs", {}, "[candidate {arc}s|possible {arc}s|{arc}s that can be opened]", "", true},
            {"from", {"arcs"}, "start", ""},
            {"to", {"arcs"}, "end", ""},
            {"fixed_cost", {"arcs"}, "[fixed cost if used|fixed cost when opened|fixed opening cost]", "$"},
            {"unit_cost", {"arcs"}, "[cost per unit of flow|unit flow cost|flow cost per unit]", "$ per {unit}"},
            {"capacity", {"arcs"}, "capacity", "{unit}"},
            {"supply", {"nodes"}, "[supply available|available supply|supply on hand]", "{unit}", false,
             "{have} no supply"},
            {"demand", {"nodes"}, "demand", "{unit}", false, "{have} no demand"},
        };
        f.constraints = {
            "[At every {node}, the flow out minus the flow in may not exceed its supply minus its demand: supply "
            "{nodes} ship at most their supply, demand {nodes} receive at least their demand, and other {nodes} "
            "send out no more than they receive.|Outflow minus inflow at each {node} is at most its supply less its "
            "demand, so every demand is met and no supply is overdrawn.|[For each|For every] {node}, [the flow "
            "leaving it minus the flow entering it|its outflow minus its inflow] [must|has to] be [at most|no more "
            "than] [its supply minus its demand|the difference between its supply and its demand] (a missing supply or "
            "demand counts as zero).|No {node} may send out more than it receives plus its "
            "supply minus its demand: [every|each] demand {node} receives [at least|no less than] its "
            "demand, no supply is exceeded, and {nodes} without supply or demand [pass on|forward] at most what they "
            "receive.]",
            "[Flow may use an {arc} only if it is opened, and then at most up to its capacity.|An {arc} that is not "
            "opened carries nothing; an opened one carries at most its capacity.|The flow on [each|every] {arc} "
            "[must|has to] be zero unless the {arc} is opened, and [may not|must not|cannot] exceed its capacity "
            "when it is.|No flow [may|can] [use|pass along] an {arc} that is not opened, and an "
            "opened {arc} [carries|takes] [at most|no more than] its capacity.|If an {arc} is "
            "[opened|used], the flow on it [is at most|may not exceed|stays within] its capacity; [otherwise|if "
            "not] the flow on it is zero.]"};
        f.objective =
            "[Minimize the fixed costs of the opened {arc}s plus the flow costs.|Find the cheapest design: fixed "
            "costs of the {arc}s used plus unit cost times flow.|The [goal|aim|objective] is to [keep|make] the "
            "[sum|total] of the fixed costs of opened {arc}s and the flow costs (unit cost times flow) as "
            "[low|small] as possible.|[Choose|Decide] which {arc}s to {open} and how much to send on them so that "
            "[fixed costs plus flow costs|the fixed costs together with the flow costs] are [minimized|as low as "
            "possible].]";
        f.integrality = "[Each {arc} is either opened or not.|Opening an {arc} is a yes/no decision.|[Whether|If] "
                        "to {open} an {arc} is a [binary|yes/no] [choice|decision].|[Partially|Fractionally] "
                        "opening an {arc} is [not allowed|not possible|ruled out].]";
        f.decisions = "which {arc}s to open (binary) and the flow on each {arc}";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{a\\in A} (f_a\\,y_a + c_a\\,x_a) \\\\\n"
            "\\text{s.t.}\\;& \\sum_{a\\in\\delta^+(n)} x_a - \\sum_{a\\in\\delta^-(n)} x_a \\le b_n && \\forall "
            "n\\in N \\quad\\text{(balance)} \\\\\n"
            "& x_a \\le u_a\\,y_a && \\forall a\\in A \\quad\\text{(open)} \\\\\n"
            "& x_a \\ge 0,\\ y_a \\in \\{0,1\\}\n"
            "\\end{aligned}";
        f.latex_symbols = {
            "$N$: {nodes}; $A$: {arc}s; $\\delta^+(n)$, $\\delta^-(n)$: arcs leaving/entering $n$",
            "$f_a$, $c_a$, $u_a$: fixed cost, unit cost and capacity; $b_n$: supply minus demand of $n$ (0 if neither)",
            "$y_a = 1$ if $a$ is opened; $x_a$: flow on $a$"};
        f.code = R"(N = data["nodes"]
A = data["arcs"]
y = {a: @var(f"y_{k + 1}", 0, 1, B) for k, a in enumerate(A)}
x = {a: @var(f"x_{k + 1}", 0, @inf(), C) for k, a in enumerate(A)}
@obj(@sum(data["fixed_cost"][a] * y[a] + data["unit_cost"][a] * x[a] for a in A))
for k, n in enumerate(N):
    @add(@sum(x[a] for a in A if data["from"][a] == n) - @sum(x[a] for a in A if data["to"][a] == n) <= data["supply"].get(n, 0) - data["demand"].get(n, 0), f"balance_{k + 1}")
for k, a in enumerate(A):
    @add(x[a] - data["capacity"][a] * y[a] <= 0, f"open_{k + 1}")
)";
        f.var_docs = {{"y", {"arcs"}, "{0} opened"}, {"x", {"arcs"}, "flow on {0}"}};
        f.con_docs = {{"balance", {"nodes"}, "flow balance at {0}"}, {"open", {"arcs"}, "capacity of {0} if opened"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
