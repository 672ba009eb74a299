// Shortest path from an origin to a destination as a unit flow (LP; the constraint matrix is totally unimodular).
// Infeasible design: the destination cannot be reached.
#include "trex/optmodel/families/common.hpp"
#include "trex/optmodel/families/graph.hpp"

namespace trex::optmodel::families {

namespace shortest_path_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int n = 5 + g.req.difficulty + g.r.int_in(0, 1);
    const strings N = g.names("node", n);
    auto arcs = random_arcs(n, n + 2 + g.req.difficulty, g.r);
    if (g.req.want == design::infeasible) {  // cut every arc into the destination
        std::vector<std::pair<int, int>> kept;
        for (auto a : arcs)
            if (a.second != n - 1) kept.push_back(a);
        kept.push_back({n - 1, g.r.int_in(1, n - 2)});
        arcs = kept;
    }
    const int na = (int)arcs.size();
    strings A;
    std::vector<double> len(na);
    ojson tail = ojson::object(), head = ojson::object();
    for (int a = 0; a < na; a++) {
        A.push_back(N[arcs[a].first] + "->" + N[arcs[a].second]);
        tail[A.back()] = N[arcs[a].first];
        head[A.back()] = N[arcs[a].second];
        // chain arcs are long so that shortcuts matter
        len[a] = arcs[a].second == arcs[a].first + 1 ? g.r.int_in(8, 20) : g.r.int_in(3, 25);
    }
    ojson& data = g.inst.data;
    data["nodes"] = list(N);
    data["arcs"] = list(A);
    data["from"] = tail;
    data["to"] = head;
    data["length"] = map1(A, len);
    data["origin"] = N[0];
    data["destination"] = N[n - 1];
    model& m = g.inst.m;
    std::vector<int> x(na);
    for (int a = 0; a < na; a++) x[a] = m.add_var(nm("x", a), var_type::continuous, 0, inf, len[a]);
    for (int k = 0; k < n; k++) {
        std::vector<term> t;
        for (int a = 0; a < na; a++) {
            if (arcs[a].first == k) t.push_back({x[a], 1});
            if (arcs[a].second == k) t.push_back({x[a], -1});
        }
        m.add_con(nm("balance", k), t, row_sense::eq, k == 0 ? 1 : (k == n - 1 ? -1 : 0));
    }
}

}  // namespace shortest_path_impl

TREX_FAMILY(shortest_path) {
    static const family f = [] {
        family f;
        f.name = "shortest_path";
        f.title = "Shortest path problem";
        f.can_infeasible = true;
        f.generate = shortest_path_impl::generate;
        f.scenarios = {
            {"logistics", {{"org", "a courier"}, {"node", "town"}, {"nodes", "towns"}, {"arc", "road"},
                           {"len", "travel time"}, {"unit", "minutes"}, {"node_pool", "cities"}}},
            {"generic", {{"org", "a routing protocol"}, {"node", "node"}, {"nodes", "nodes"}, {"arc", "link"},
                         {"len", "latency"}, {"unit", "ms"}, {"node_pool", "nodes"}}},
            {"healthcare", {{"org", "an ambulance dispatcher"}, {"node", "junction"}, {"nodes", "junctions"},
                            {"arc", "street segment"}, {"len", "driving time"}, {"unit", "seconds"},
                            {"node_pool", "nodes"}}},
            {"energy", {{"org", "a cable-laying firm"}, {"node", "substation"}, {"nodes", "substations"},
                        {"arc", "possible cable run"}, {"len", "cost"}, {"unit", "k$"}, {"node_pool", "cities"}}},
        };
        f.intro =
            "[{Org} needs the best route between two of {n_nodes} {nodes}.|{Org} looks for the route from the origin "
            "to the destination over {n_arcs} one-way {arc}s.|[In|On] a network of {n_nodes} {nodes} "
            "[joined|linked|connected] by {n_arcs} one-way {arc}s, {org} [wants|needs|has] to [find|identify] [a "
            "route|the best route] from the origin to the destination.|[Among|Using] {n_arcs} one-way {arc}s "
            "[between|that link] {n_nodes} {nodes}, {org} [must|has to] [choose|pick] a route [leading|going] from the "
            "origin to the destination.]";
        f.params = {
            {"nodes", {}, "{nodes}", "", true},
            {"arcs", {}, "[one-way {arc}s|{arc}s (one-way)|directed {arc}s]", "", true},
            {"from", {"arcs"}, "start", ""},
            {"to", {"arcs"}, "end", ""},
            {"length", {"arcs"}, "{len}", "{unit}"},
            {"origin", {}, "origin", ""},
            {"destination", {}, "destination", ""},
        };
        f.constraints = {
            "[One unit of flow leaves the origin and arrives at the destination; at all other {nodes} what enters "
            "leaves.|Model the route as a unit flow from origin to destination.|[Send|Route] one unit of flow from the "
            "origin to the destination: the origin [sends out|ships out] one unit more than it [receives|takes in], "
            "the destination receives one unit more than it sends out, and [every|each] other {node} [passes on|sends "
            "out] exactly what [enters|arrives at] it.|[At|For] every {node} [other than|except] the origin and the "
            "destination, the flow [in|entering] [must|has to] equal the flow [out|leaving]; the origin [has a net "
            "outflow of|sends out, net,] one unit and the destination [has a net inflow of|takes in, net,] one "
            "unit.|[Treat|Think of] the route as one unit of flow [over|along] the {arc}s: [it leaves|it starts at] "
            "the origin, [arrives|ends] at the destination, and [is conserved at every other {node}|neither appears "
            "nor disappears at any other {node}].]"};
        f.objective =
            "[Minimize the total {len} of the route.|Find the route with the smallest total {len}.|The "
            "[goal|aim|objective] is to find [a route|the route] with the [lowest|smallest|least] "
            "[total|overall|combined] {len}.|[Choose|Pick|Select] the {arc}s of the route so that the sum of their "
            "{len} is [as small as possible|minimized].|Which route from the origin to the destination [has|gives] the "
            "[smallest|lowest|least] [total|overall] {len}?]";
        f.decisions = "whether each {arc} is on the route (a unit flow; the LP has integral optimal solutions)";
        f.latex = "\\begin{aligned}\n"
                  "\\min\\;& \\sum_{a\\in A} \\ell_a\\,x_a \\\\\n"
                  "\\text{s.t.}\\;& \\sum_{a\\in\\delta^+(n)} x_a - \\sum_{a\\in\\delta^-(n)} x_a = "
                  "\\begin{cases} 1 & n = o \\\\ -1 & n = d \\\\ 0 & \\text{otherwise}\\end{cases} && \\forall n\\in N "
                  "\\quad\\text{(balance)} \\\\\n"
                  "& x_a \\ge 0 && \\forall a\\in A\n"
                  "\\end{aligned}";
        f.latex_symbols = {"$N$: {nodes}; $A$: {arc}s; $o$, $d$: origin and destination", "$\\ell_a$: {len}",
                           "$x_a$: 1 if $a$ is on the route"};
        f.code = R"(N = data["nodes"]
A = data["arcs"]
x = {a: @var(f"x_{k + 1}", 0, None, C) for k, a in enumerate(A)}
@obj(@sum(data["length"][a] * x[a] for a in A))
for k, n in enumerate(N):
    rhs = 1 if n == data["origin"] else (-1 if n == data["destination"] else 0)
    @add(@sum(x[a] for a in A if data["from"][a] == n) - @sum(x[a] for a in A if data["to"][a] == n) == rhs, f"balance_{k + 1}")
)";
        f.var_docs = {{"x", {"arcs"}, "{0} used"}};
        f.con_docs = {{"balance", {"nodes"}, "flow balance at {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
