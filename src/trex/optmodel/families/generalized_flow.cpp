// Generalized network flow (flow with losses): each directed arc has a multiplier m_a < 1 (the share of what enters
// the arc that arrives at its end, e.g. 0.9 when 10 % is lost in transit), a unit cost on the flow entering it and a
// capacity on that flow. Supplies are available at source nodes; demands at sink nodes must be met by what arrives.
// At each node: outflow minus the arriving inflow (sum of m_a x_a) is at most supply minus demand. LP, min cost.
// Infeasible design: the total supply only equals the total demand, so the losses make the demand unreachable.
#include "trex/optmodel/families/common.hpp"
#include "trex/optmodel/families/graph.hpp"

namespace trex::optmodel::families {

namespace generalized_flow_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    static const int node_count[] = {5, 7, 10, 14, 20};
    static const int extra_count[] = {3, 6, 12, 24, 45};
    const int n = node_count[d - 1];
    const strings N = g.names("node", n);
    auto arcs = random_arcs(n, extra_count[d - 1], g.r);
    const int na = (int)arcs.size();
    std::vector<double> mult(na), cost(na), cap(na);
    for (int a = 0; a < na; a++) {
        const bool chain = arcs[a].second == arcs[a].first + 1;
        mult[a] = chain ? g.r.real_in(0.95, 0.99, 2) : g.r.real_in(0.8, 0.97, 2);
        cost[a] = chain ? g.r.int_in(6, 12) : g.r.int_in(1, 5);
    }
    // demands at the last nodes; the supply at the first node covers them along the chain with 10 % to spare
    const int nd = d <= 2 ? 2 : 3;
    std::vector<double> bal(n, 0);
    double demand = 0, need = 0;
    for (int k = 0; k < nd; k++) {
        const int v = n - 1 - k;
        bal[v] = -5 * g.r.int_in(2, 8);
        demand -= bal[v];
        double gain = 1;
        for (int a = 0; a < na; a++)
            if (arcs[a].second == arcs[a].first + 1 && arcs[a].second <= v) gain *= mult[a];
        need -= bal[v] / gain;
    }
    double supply = 5 * std::ceil(need * 1.1 / 5);
    if (g.req.want == design::infeasible) supply = demand;  // every arc loses something: less arrives than is sent
    if (d <= 2) {
        bal[0] = supply;
    } else {  // a second, smaller source
        bal[1] = 5 * std::round(supply * g.r.real_in(0.2, 0.4, 2) / 5);
        bal[0] = supply - bal[1];
        if (g.req.want != design::infeasible) bal[0] = supply;  // the first source alone still suffices
    }
    for (int a = 0; a < na; a++) {
        const bool chain = arcs[a].second == arcs[a].first + 1;
        cap[a] = chain ? std::ceil(bal[0] + bal[1]) : 5 * g.r.int_in(2, 6);
    }
    strings A, SN, DN;
    std::vector<double> sv, dv;
    for (int a = 0; a < na; a++) A.push_back(N[arcs[a].first] + "->" + N[arcs[a].second]);
    for (int v = 0; v < n; v++) {
        if (bal[v] > 0) SN.push_back(N[v]), sv.push_back(bal[v]);
        if (bal[v] < 0) DN.push_back(N[v]), dv.push_back(-bal[v]);
    }
    ojson& data = g.inst.data;
    data["nodes"] = list(N);
    data["arcs"] = list(A);
    write_arc_ends(data, N, A, arcs);
    data["multiplier"] = map1(A, mult);
    data["cost"] = map1(A, cost);
    data["capacity"] = map1(A, cap);
    data["supply"] = map1(SN, sv);
    data["demand"] = map1(DN, dv);
    model& m = g.inst.m;
    std::vector<int> x(na);
    for (int a = 0; a < na; a++) x[a] = m.add_var(nm("x", a), var_type::continuous, 0, cap[a], cost[a]);
    for (int v = 0; v < n; v++) {
        std::vector<term> t;
        for (int a = 0; a < na; a++) {
            if (arcs[a].first == v) t.push_back({x[a], 1});
            if (arcs[a].second == v) t.push_back({x[a], -mult[a]});
        }
        m.add_con(nm("balance", v), t, row_sense::le, bal[v]);
    }
}

}  // namespace generalized_flow_impl

TREX_FAMILY(generalized_flow) {
    static const family f = [] {
        family f;
        f.name = "generalized_flow";
        f.title = "Generalized network flow with losses";
        f.can_infeasible = true;
        f.generate = generalized_flow_impl::generate;
        f.scenarios = {
            {"environment",
             {{"org", "a water utility"},
              {"node", "site"},
              {"goods", "water"},
              {"nodes", "sites"},
              {"arc", "pipe"},
              {"loss", "leakage"},
              {"unit", "megaliters"},
              {"node_pool", "cities"}}},
            {"energy",
             {{"org", "a power transmission operator"},
              {"node", "substation"},
              {"goods", "electricity"},
              {"nodes", "substations"},
              {"arc", "transmission line"},
              {"loss", "line losses"},
              {"unit", "megawatt-hours"},
              {"node_pool", "nodes"}}},
            {"logistics",
             {{"org", "a fresh-produce distributor"},
              {"node", "depot"},
              {"goods", "fresh produce"},
              {"nodes", "depots"},
              {"arc", "route"},
              {"loss", "spoilage"},
              {"unit", "crates"},
              {"node_pool", "cities"}}},
            {"healthcare",
             {{"org", "a blood bank network"},
              {"node", "centre"},
              {"goods", "blood"},
              {"nodes", "centres"},
              {"arc", "courier link"},
              {"loss", "units expiring in transit"},
              {"unit", "blood units"},
              {"node_pool", "hospitals"}}},
        };
        f.intro =
            "[{Org} moves {goods} through a network of {n_nodes} {nodes} and {n_arcs} one-way {arc}s, and part "
            "of what is sent is lost to {loss} on the way.|{Org} must supply its demand {nodes} over {n_arcs} "
            "one-way {arc}s between {n_nodes} {nodes}; because of {loss}, less arrives than is sent.|[Through|"
            "Over] a network of {n_nodes} {nodes} [linked|joined|connected] by {n_arcs} one-way {arc}s, {org} "
            "[ships|sends|moves] {goods}[, losing part of it to {loss} in transit|; some of it is lost to {loss} "
            "along the way].|Because of {loss}, [less {goods} arrives than is sent|not all {goods} that is sent "
            "arrives] on the {n_arcs} one-way {arc}s [that link|between|joining] the {n_nodes} {nodes} [of|run "
            "by|served by] {org}.]";
        f.params = {
            {"nodes", {}, "{nodes}", "", true},
            {"arcs", {}, "{arc}s", "", true},
            {"from", {"arcs"}, "start", ""},
            {"to", {"arcs"}, "end", ""},
            {"multiplier", {"arcs"},
             "[share of the flow sent that arrives at the end (the rest is lost)|fraction of the amount sent that "
             "reaches the end (the rest is lost)|share of what is sent that arrives at the end (the remainder is "
             "lost)]",
             ""},
            {"cost", {"arcs"}, "[cost per unit sent|unit cost of sending|cost of each unit sent]", "$ per {unit}"},
            {"capacity", {"arcs"},
             "[capacity (on the amount sent)|capacity (a limit on the amount sent)|capacity (applied to the amount "
             "sent)]",
             "{unit}"},
            {"supply", {"nodes"}, "[supply available|available supply|supply on hand]", "{unit}", false,
             "{have} no supply"},
            {"demand", {"nodes"},
             "[demand (to be met by what arrives)|demand (which must be covered by what arrives)|demand (met from "
             "the amounts that arrive)]",
             "{unit}", false, "{have} no demand"},
        };
        f.constraints = {
            "[At every {node}, the amount sent out minus the amount arriving (flow sent on each incoming {arc} times "
            "its multiplier) may not exceed its supply minus its demand.|Sending from a {node} is limited by its "
            "supply plus what arrives there after losses, and every demand must be covered by what arrives.|[For "
            "each|For every|At each] {node}, [the total sent out|everything it sends out] plus its demand [must "
            "not|may not|cannot] [exceed|be more than] its supply plus [what arrives there|the amount arriving] "
            "(the flow on each incoming {arc} [times|multiplied by] its multiplier).|No {node} may [send out|"
            "ship out] more than its supply plus [the arrivals after losses|what reaches it after {loss}] minus "
            "its demand, where [an incoming {arc} delivers|each incoming {arc} brings in] its flow [times|"
            "multiplied by] its multiplier.|[Every|Each] {node} [must|has to] [cover|meet] its "
            "demand (if any) and [whatever|everything] it sends out [from|with] its supply plus [what arrives "
            "there|the arrivals] after losses; arrivals on an {arc} are the flow sent [times|multiplied by] "
            "its multiplier.]",
            "[The amount sent on an {arc} may not exceed its capacity.|Each {arc}'s flow is limited by its "
            "capacity.|[No|Not a single] {arc} [may|can] [carry|take] more [than its capacity|flow than its "
            "capacity allows], [measured on|counting] the amount sent.|[On each|On every|For each] {arc}, the "
            "amount sent [must stay within|has to stay within|must not exceed|may not exceed] [its|the "
            "{arc}'s] capacity.|[Keep|Hold] the amount sent on [each|every] {arc} [within|at or below] its capacity.]"};
        f.objective =
            "[Minimize the total cost of the flow sent.|Meet all demands at minimum total shipping cost.|The "
            "[goal|aim|objective] is the [lowest|smallest|least] [total|overall|combined] cost of [the flow sent|"
            "all amounts sent|sending {goods}] on the {arc}s.|[Choose|Decide|Determine] the amount sent on each "
            "{arc} so that the [total|overall|combined] [sending|shipping] cost is [minimized|as low as possible|"
            "as small as possible].|[Find|Plan] the [flows|shipments] [that minimize|with the smallest|with the "
            "lowest] [total|overall|combined] cost of what is sent.]";
        f.decisions = "the amount sent on each {arc}";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{a\\in A} c_a\\,x_a \\\\\n"
            "\\text{s.t.}\\;& \\sum_{a\\in\\delta^+(n)} x_a - \\sum_{a\\in\\delta^-(n)} m_a\\,x_a \\le s_n - "
            "d_n && \\forall n\\in N \\quad\\text{(balance)} \\\\\n"
            "& 0 \\le x_a \\le u_a && \\forall a\\in A\n"
            "\\end{aligned}";
        f.latex_symbols = {"$N$: {nodes}; $A$: {arc}s; $\\delta^+(n)$, $\\delta^-(n)$: arcs leaving/entering $n$",
                           "$m_a$: multiplier; $c_a$, $u_a$: unit cost and capacity; $s_n$, $d_n$: supply and demand "
                           "(0 when none)",
                           "$x_a$: amount sent on $a$"};
        f.code = R"(N = data["nodes"]
A = data["arcs"]
x = {a: @var(f"x_{k + 1}", 0, data["capacity"][a], C) for k, a in enumerate(A)}
@obj(@sum(data["cost"][a] * x[a] for a in A))
for k, n in enumerate(N):
    @add(@sum(x[a] for a in A if data["from"][a] == n) - @sum(data["multiplier"][a] * x[a] for a in A if data["to"][a] == n) <= data["supply"].get(n, 0) - data["demand"].get(n, 0), f"balance_{k + 1}")
)";
        f.var_docs = {{"x", {"arcs"}, "amount sent on {0}"}};
        f.con_docs = {{"balance", {"nodes"}, "flow balance at {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
