// Minimum spanning tree by a single-commodity flow formulation: choose edges (binary x_e, cost c_e) of an undirected
// graph so that all nodes are connected at minimum cost. The first node sends one unit of flow to every other node;
// flow may use an edge in either direction only if the edge is chosen (f_e + r_e <= (n - 1) x_e), and exactly n - 1
// edges are chosen. MILP. Infeasible design: the last two nodes are joined only to each other (two components).
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace spanning_tree_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    static const int node_count[] = {5, 6, 7, 9, 10};
    static const int extra_count[] = {3, 4, 6, 9, 13};
    const int n = node_count[d - 1] + (d > 1 ? g.r.int_in(0, 1) : 0);
    const strings N = g.names("node", n);
    // nodes joined by the random tree: all, or (infeasible design) all but the last two, which get only the edge
    // between them: two components that no edge joins
    const int linked = g.req.want == design::infeasible ? n - 2 : n;
    std::vector<std::pair<int, int>> edges;
    auto has = [&](int a, int b) {
        for (auto& e : edges)
            if ((e.first == a && e.second == b) || (e.first == b && e.second == a)) return true;
        return false;
    };
    const std::vector<int> order = g.r.permutation(linked);
    for (int k = 1; k < linked; k++) {  // a random tree first (connectivity)
        const int a = order[(size_t)g.r.int_in(0, k - 1)], b = order[(size_t)k];
        edges.push_back({std::min(a, b), std::max(a, b)});
    }
    const int want = linked - 1 + extra_count[d - 1];
    for (int t = 0; t < 50 * want && (int)edges.size() < want; t++) {
        const int a = g.r.int_in(0, linked - 1), b = g.r.int_in(0, linked - 1);
        if (a == b || has(a, b)) continue;
        edges.push_back({std::min(a, b), std::max(a, b)});
    }
    if (linked < n) edges.push_back({n - 2, n - 1});
    std::sort(edges.begin(), edges.end());
    const int ne = (int)edges.size();
    strings E;
    std::vector<double> cost(ne);
    ojson e1 = ojson::object(), e2 = ojson::object();
    for (int e = 0; e < ne; e++) {
        E.push_back(N[edges[e].first] + "-" + N[edges[e].second]);
        e1[E[e]] = N[edges[e].first];
        e2[E[e]] = N[edges[e].second];
        cost[e] = g.r.int_in(5, 60);
    }
    ojson& data = g.inst.data;
    data["nodes"] = list(N);
    data["edges"] = list(E);
    data["end1"] = e1;
    data["end2"] = e2;
    data["cost"] = map1(E, cost);
    model& m = g.inst.m;
    std::vector<int> x(ne), f(ne), r(ne);
    for (int e = 0; e < ne; e++) x[e] = m.add_var(nm("x", e), var_type::binary, 0, 1, cost[e]);
    for (int e = 0; e < ne; e++) f[e] = m.add_var(nm("f", e), var_type::continuous, 0, inf, 0);
    for (int e = 0; e < ne; e++) r[e] = m.add_var(nm("r", e), var_type::continuous, 0, inf, 0);
    std::vector<term> t;
    for (int e = 0; e < ne; e++) t.push_back({x[e], 1});
    m.add_con("tree_size", t, row_sense::eq, n - 1);
    for (int v = 0; v < n; v++) {  // outflow - inflow: n - 1 at the root (first node), -1 elsewhere
        std::vector<term> b;
        for (int e = 0; e < ne; e++) {
            if (edges[e].first == v) b.push_back({f[e], 1}), b.push_back({r[e], -1});
            if (edges[e].second == v) b.push_back({f[e], -1}), b.push_back({r[e], 1});
        }
        m.add_con(nm("balance", v), b, row_sense::eq, v == 0 ? n - 1 : -1);
    }
    for (int e = 0; e < ne; e++)
        m.add_con(nm("link", e), {{f[e], 1}, {r[e], 1}, {x[e], -(double)(n - 1)}}, row_sense::le, 0);
}

}  // namespace spanning_tree_impl

TREX_FAMILY(spanning_tree) {
    static const family f = [] {
        family f;
        f.name = "spanning_tree";
        f.title = "Minimum spanning tree (flow formulation)";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = spanning_tree_impl::generate;
        f.scenarios = {
            {"energy",
             {{"org", "a wind farm developer"},
              {"node", "turbine"},
              {"nodes", "turbines"},
              {"edge", "cable route"},
              {"cost_unit", "thousand dollars"},
              {"node_pool", "nodes"}}},
            {"education",
             {{"org", "a school district"},
              {"node", "school"},
              {"nodes", "schools"},
              {"edge", "fibre link"},
              {"cost_unit", "thousand dollars"},
              {"node_pool", "schools"}}},
            {"environment",
             {{"org", "an irrigation cooperative"},
              {"node", "field"},
              {"nodes", "fields"},
              {"edge", "pipe route"},
              {"cost_unit", "thousand euros"},
              {"node_pool", "regions"}}},
            {"generic",
             {{"org", "a rural council"},
              {"node", "town"},
              {"nodes", "towns"},
              {"edge", "road link"},
              {"cost_unit", "million dollars"},
              {"node_pool", "cities"}}},
        };
        f.intro =
            "[{Org} must connect all {n_nodes} {nodes} into one network using some of {n_edges} candidate "
            "{edge}s.|{Org} wants every one of its {n_nodes} {nodes} linked, directly or indirectly, choosing among "
            "{n_edges} possible {edge}s.|[From|Out of] {n_edges} candidate {edge}s, {org} [has to|must|will] "
            "[choose|select|pick] which to build so that [all|each of the] {n_nodes} {nodes} [end up|are] "
            "[connected|joined] in [a single|one] network.|[There are|{Org} has] {n_nodes} {nodes} [to be linked|to "
            "connect] [into one network|into a single network], and {n_edges} candidate {edge}s [are available|can be "
            "built] for [this|the purpose].]";
        f.params = {
            {"nodes", {}, "{nodes}", "", true},
            {"edges", {},
             "[candidate {edge}s (usable in both directions)|possible {edge}s (usable either way)|candidate {edge}s "
             "(which work in both directions)]",
             "", true},
            {"end1", {"edges"}, "[first end|first endpoint|one end]", ""},
            {"end2", {"edges"}, "[second end|second endpoint|other end]", ""},
            {"cost", {"edges"}, "[construction cost|cost to build|building cost]", "{cost_unit}"},
        };
        f.constraints = {
            "[Exactly one {edge} fewer than there are {nodes} is built.|The number of {edge}s built equals the number "
            "of {nodes} minus one.|[Build|Select] [exactly|precisely] as many {edge}s as [the number of {nodes} minus "
            "one|there are {nodes}, minus one].|[The count of {edge}s built|How many {edge}s are built] [must|has to] "
            "[equal|be exactly] the number of {nodes} [less|minus] one[, no more and no fewer|].|[No more and no "
            "fewer|Neither more nor fewer] {edge}s than the number of {nodes} minus one [may|can] be built.]",
            "[Connectivity is modelled as a flow: the first {node} listed sends one unit to every other {node}, and "
            "each other {node} keeps exactly one unit.|To ensure connectivity, one unit of flow per other {node} "
            "leaves the first {node} listed, and every other {node} absorbs exactly one unit.|[To guarantee|To "
            "enforce] connectivity, [the first {node} listed|the {node} listed first] [ships out|sends out], net, [one "
            "unit for each|one unit per] other {node}, and [every|each] other {node} [takes in|receives], net, exactly "
            "one unit.|[Each|Every] {node} other than the first listed [must|has to] [receive|absorb] [exactly one|a "
            "single] unit of [flow|connectivity flow] [net|on balance], [all of it coming|which all comes] from the "
            "first {node} listed[, whose net outflow equals the number of other {nodes}|].|[Flow|A connectivity flow] "
            "[starts|originates] at the first {node} listed: its net outflow is the number of {nodes} minus one, while "
            "[each|every] other {node} has a net inflow of [exactly one|one] unit.]",
            "[Flow may use an {edge}, in either direction, only if it is built, and then carry at most the number of "
            "{nodes} minus one units.|An {edge} that is not built carries no flow; a built one carries at most the "
            "number of {nodes} minus one units in total.|[If|When] an {edge} is not built, no flow [may|can] use it in "
            "[either|any] direction; [if|when] it is built, [the flow on it in both directions together|its flow in "
            "the two directions combined] is at most the number of {nodes} minus one.|[No|Not a single] {edge} "
            "[may|can] carry flow unless it is built, and [a built {edge}|one that is built] [carries|may carry] [no "
            "more than|at most] the number of {nodes} minus one units, [counting both directions|both directions "
            "counted together].|[Only|Just the] built {edge}s [may|can] carry flow, in [either|both] "
            "[direction|directions], with [the total|the combined flow] on [each|every] one [limited to|capped at] the "
            "number of {nodes} minus one.]"};
        f.objective =
            "[Minimize the total construction cost.|Connect everything as cheaply as possible.|The "
            "[goal|aim|objective] is to [reach|achieve] [the lowest|the smallest|the least] [total|overall|combined] "
            "cost of the {edge}s built.|[Choose|Select|Decide] the {edge}s to build so that the "
            "[total|overall|combined] construction cost is [as low as possible|minimized].|Which [set|selection] of "
            "{edge}s [connects|links] all the {nodes} at the [lowest|least|smallest] [total|overall] construction "
            "cost?]";
        f.integrality =
            "[Each {edge} is either built or not.|Building an {edge} is a yes/no decision.|An {edge} [cannot|may not] "
            "be [partly|partially] built.|[Every|Each] {edge} [must|has to] be [fully built or not built at all|either "
            "built in full or left out].|Whether an {edge} is built is [a yes/no|an all-or-nothing] "
            "[decision|choice].]";
        f.decisions = "which {edge}s to build (binary) and the connectivity flow on each {edge} in each direction";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{e\\in E} c_e\\,x_e \\\\\n"
            "\\text{s.t.}\\;& \\sum_{e\\in E} x_e = |N| - 1 && \\quad\\text{(tree\\_size)} \\\\\n"
            "& \\sum_{e\\in E:\\,a_e = v} (f_e - r_e) - \\sum_{e\\in E:\\,b_e = v} (f_e - r_e) = "
            "\\begin{cases} |N| - 1 & v = v_1 \\\\ -1 & \\text{otherwise} \\end{cases} && \\forall v\\in N "
            "\\quad\\text{(balance)} \\\\\n"
            "& f_e + r_e \\le (|N| - 1)\\,x_e && \\forall e\\in E \\quad\\text{(link)} \\\\\n"
            "& f_e, r_e \\ge 0,\\ x_e \\in \\{0,1\\}\n"
            "\\end{aligned}";
        f.latex_symbols = {"$N$: {nodes} ($v_1$: the first one); $E$: {edge}s with ends $a_e$, $b_e$",
                           "$c_e$: construction cost",
                           "$x_e = 1$ if $e$ is built; $f_e$ / $r_e$: flow on $e$ from $a_e$ to $b_e$ / back"};
        f.code = R"(N = data["nodes"]
E = data["edges"]
n = len(N)
x = {e: @var(f"x_{k + 1}", 0, 1, B) for k, e in enumerate(E)}
f = {e: @var(f"f_{k + 1}", 0, @inf(), C) for k, e in enumerate(E)}
r = {e: @var(f"r_{k + 1}", 0, @inf(), C) for k, e in enumerate(E)}
@obj(@sum(data["cost"][e] * x[e] for e in E))
@add(@sum(x[e] for e in E) == n - 1, "tree_size")
for k, v in enumerate(N):
    out_minus_in = @sum(f[e] - r[e] for e in E if data["end1"][e] == v) - @sum(f[e] - r[e] for e in E if data["end2"][e] == v)
    @add(out_minus_in == (n - 1 if k == 0 else -1), f"balance_{k + 1}")
for k, e in enumerate(E):
    @add(f[e] + r[e] - (n - 1) * x[e] <= 0, f"link_{k + 1}")
)";
        f.var_docs = {{"x", {"edges"}, "{0} built"},
                      {"f", {"edges"}, "connectivity flow on {0} from its first to its second end"},
                      {"r", {"edges"}, "connectivity flow on {0} from its second to its first end"}};
        f.con_docs = {{"tree_size", {}, "number of built edges"},
                      {"balance", {"nodes"}, "flow balance at {0}"},
                      {"link", {"edges"}, "flow on {0} only if built"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
