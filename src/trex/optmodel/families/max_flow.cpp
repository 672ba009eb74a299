// Maximum flow from a source to a sink through capacitated arcs. LP (value variable v).
#include "trex/optmodel/families/common.hpp"
#include "trex/optmodel/families/graph.hpp"

namespace trex::optmodel::families {

namespace max_flow_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int n = 4 + g.req.difficulty + g.r.int_in(0, 1);
    const strings N = g.names("node", n);
    auto arcs = random_arcs(n, n + 1 + g.req.difficulty, g.r);
    const int na = (int)arcs.size();
    strings A;
    std::vector<double> cap(na);
    ojson tail = ojson::object(), head = ojson::object();
    for (int a = 0; a < na; a++) {
        A.push_back(N[arcs[a].first] + "->" + N[arcs[a].second]);
        tail[A.back()] = N[arcs[a].first];
        head[A.back()] = N[arcs[a].second];
        cap[a] = 5 * g.r.int_in(1, 12);
    }
    ojson& data = g.inst.data;
    data["nodes"] = list(N);
    data["arcs"] = list(A);
    data["from"] = tail;
    data["to"] = head;
    data["capacity"] = map1(A, cap);
    data["source"] = N[0];
    data["sink"] = N[n - 1];
    model& m = g.inst.m;
    m.sense = obj_sense::maximize;
    const int v = m.add_var("flow", var_type::continuous, 0, inf, 1);
    std::vector<int> x(na);
    for (int a = 0; a < na; a++) x[a] = m.add_var(nm("x", a), var_type::continuous, 0, cap[a], 0);
    for (int k = 0; k < n; k++) {
        std::vector<term> t;
        for (int a = 0; a < na; a++) {
            if (arcs[a].first == k) t.push_back({x[a], 1});
            if (arcs[a].second == k) t.push_back({x[a], -1});
        }
        if (k == 0) t.push_back({v, -1});
        if (k == n - 1) t.push_back({v, 1});
        m.add_con(nm("balance", k), t, row_sense::eq, 0);
    }
}

}  // namespace max_flow_impl

TREX_FAMILY(max_flow) {
    static const family f = [] {
        family f;
        f.name = "max_flow";
        f.title = "Maximum flow problem";
        f.generate = max_flow_impl::generate;
        f.scenarios = {
            {"logistics", {{"org", "an evacuation planner"}, {"node", "intersection"}, {"nodes", "intersections"},
                           {"arc", "road"}, {"unit", "vehicles per hour"}, {"node_pool", "nodes"}}},
            {"energy", {{"org", "an oil company"}, {"node", "pumping station"}, {"nodes", "pumping stations"},
                        {"arc", "pipeline"}, {"unit", "barrels per hour"}, {"node_pool", "cities"}}},
            {"generic", {{"org", "a network engineer"}, {"node", "router"}, {"nodes", "routers"}, {"arc", "link"},
                         {"unit", "Gbit/s"}, {"node_pool", "nodes"}}},
            {"environment", {{"org", "a flood-control agency"}, {"node", "basin"}, {"nodes", "basins"},
                             {"arc", "channel"}, {"unit", "cubic meters per second"}, {"node_pool", "regions"}}},
        };
        f.intro = "[{Org} studies a network of {n_nodes} {nodes} joined by one-way {arc}s.|{Org} wants to know how "
                  "much can be pushed from one {node} to another through {n_arcs} one-way {arc}s.|[Consider|Take] "
                  "a network of {n_nodes} {nodes} [linked|connected|joined] by {n_arcs} one-way {arc}s, [studied|"
                  "examined|analysed] by {org}.|[How much|What amount] can [be sent|flow|be pushed] from one "
                  "{node} to another [through|over|across] a network of {n_nodes} {nodes} and {n_arcs} one-way "
                  "{arc}s? {Org} [wants|needs|would like] to [know|find out].]";
        f.params = {
            {"nodes", {}, "{nodes}", "", true},
            {"arcs", {}, "{arc}s", "", true},
            {"from", {"arcs"}, "start", ""},
            {"to", {"arcs"}, "end", ""},
            {"capacity", {"arcs"}, "capacity", "{unit}"},
            {"source", {}, "[source {node}|source (the {node} where the flow starts)|{node} serving as the "
             "source]", ""},
            {"sink", {}, "[destination {node}|destination (the {node} where the flow ends)|{node} serving as the "
             "destination]", ""},
        };
        f.constraints = {"[Flow is conserved at every intermediate {node}.|Except at the source and the "
                         "destination, inflow equals outflow.|At [every|each] {node} other than the source and "
                         "the destination, [the flow in|what flows in] [must equal|has to equal|equals] [the flow "
                         "out|what flows out].|[No|Not a single] intermediate {node} [may|can] [store|keep|"
                         "create] flow: [everything|all the flow] [entering|arriving at] it [must|has to] "
                         "[leave|flow out] again, [and no flow may appear there|with nothing added].|[For|At] "
                         "[each|every] {node} [apart from|except] the source and the destination, [inflow|the "
                         "total flow in] and [outflow|the total flow out] [must be|have to be] [equal|the "
                         "same].]",
                         "[Each {arc} carries at most its capacity.|{Arc} capacities may not be exceeded.|[No|Not "
                         "a single] {arc} [may|can] carry more [than its capacity|flow than its capacity "
                         "allows].|The flow on [each|every] {arc} [must stay within|must not exceed|may not "
                         "exceed|has to stay within] [its|the {arc}'s] capacity.|[Keep|Hold] the flow on [each|"
                         "every] {arc} [within|at or below] its capacity.]"};
        f.objective = "[Maximize the total flow from the source to the destination.|Find the largest possible "
                      "throughput from source to destination.|The [goal|aim|objective] is to [send|push|get] as "
                      "much flow as possible from the source to the destination.|[Choose|Find|Determine] the "
                      "flows [so that|such that] the [total|net] flow [leaving|out of] the source [and reaching "
                      "the destination is|is] [as large as possible|maximized].|Find the [largest|"
                      "greatest|maximum] [total|overall] flow [that can be sent|that can travel] from the "
                      "source to the destination.]";
        f.decisions = "the flow on every {arc} and the total throughput";
        f.latex = "\\begin{aligned}\n"
                  "\\max\\;& v \\\\\n"
                  "\\text{s.t.}\\;& \\sum_{a\\in\\delta^+(n)} x_a - \\sum_{a\\in\\delta^-(n)} x_a = "
                  "\\begin{cases} v & n = s \\\\ -v & n = t \\\\ 0 & \\text{otherwise}\\end{cases} && \\forall n\\in N "
                  "\\quad\\text{(balance)} \\\\\n"
                  "& 0 \\le x_a \\le u_a && \\forall a\\in A\n"
                  "\\end{aligned}";
        f.latex_symbols = {"$N$: {nodes}; $A$: {arc}s; $s$, $t$: source and destination", "$u_a$: capacity",
                           "$x_a$: flow on $a$; $v$: total flow"};
        f.code = R"(N = data["nodes"]
A = data["arcs"]
v = @var("flow", 0, None, C)
x = {a: @var(f"x_{k + 1}", 0, data["capacity"][a], C) for k, a in enumerate(A)}
@obj(v)
for k, n in enumerate(N):
    net = @sum(x[a] for a in A if data["from"][a] == n) - @sum(x[a] for a in A if data["to"][a] == n)
    if n == data["source"]:
        net = net - v
    if n == data["sink"]:
        net = net + v
    @add(net == 0, f"balance_{k + 1}")
)";
        f.var_docs = {{"flow", {}, "total flow"}, {"x", {"arcs"}, "flow on {0}"}};
        f.con_docs = {{"balance", {"nodes"}, "flow balance at {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
