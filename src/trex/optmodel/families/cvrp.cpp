// Capacitated vehicle routing (MTZ load formulation): K vehicles of capacity Q start and end at the depot, every
// customer visited once, loads u_i in [q_i, Q]; minimum total distance. MILP. Infeasible design: total demand
// above K Q.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace cvrp_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int nc = 2 + g.req.difficulty + g.r.int_in(0, 1), n = nc + 1;
    strings N = {"Depot"};
    for (const auto& s : g.names("cust", nc)) N.push_back(s);
    std::vector<double> px(n), py(n), q(n, 0);
    for (int i = 0; i < n; i++) {
        px[i] = g.r.int_in(0, 60);
        py[i] = g.r.int_in(0, 60);
    }
    for (int i = 1; i < n; i++) q[i] = g.r.int_in(2, 9);
    const double total = sum(q);
    const int K = g.r.int_in(2, 3);
    double Q = std::max(*std::max_element(q.begin(), q.end()), std::ceil(total / K * g.r.real_in(1.1, 1.5, 2)));
    if (g.req.want == design::infeasible) Q = std::floor(total / K * 0.9);
    std::vector<std::vector<double>> dist(n, std::vector<double>(n, 0));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j) dist[i][j] = std::max(1.0, std::round(std::hypot(px[i] - px[j], py[i] - py[j])));
    ojson& data = g.inst.data;
    data["locations"] = list(N);
    data["depot"] = N[0];
    data["demand"] = map1(strings(N.begin() + 1, N.end()), std::vector<double>(q.begin() + 1, q.end()));
    data["vehicles"] = K;
    data["capacity"] = num(Q);
    data["distance"] = map2(N, N, dist);
    model& m = g.inst.m;
    std::vector<std::vector<int>> x(n, std::vector<int>(n, -1));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j) x[i][j] = m.add_var(nm("x", i, j), var_type::binary, 0, 1, dist[i][j]);
    std::vector<int> u(n, -1);
    for (int i = 1; i < n; i++) u[i] = m.add_var(nm("u", i), var_type::continuous, q[i], std::max(q[i], Q), 0);
    for (int i = 1; i < n; i++) {
        std::vector<term> out, in;
        for (int j = 0; j < n; j++)
            if (i != j) {
                out.push_back({x[i][j], 1});
                in.push_back({x[j][i], 1});
            }
        m.add_con(nm("leave", i), out, row_sense::eq, 1);
        m.add_con(nm("enter", i), in, row_sense::eq, 1);
    }
    std::vector<term> dep;
    for (int j = 1; j < n; j++) dep.push_back({x[0][j], 1});
    m.add_con("fleet", dep, row_sense::le, K);
    for (int i = 1; i < n; i++)
        for (int j = 1; j < n; j++)
            if (i != j) m.add_con(nm("load", i, j), {{u[i], 1}, {u[j], -1}, {x[i][j], Q}}, row_sense::le, Q - q[j]);
}

}  // namespace cvrp_impl

TREX_FAMILY(cvrp) {
    static const family f = [] {
        family f;
        f.name = "cvrp";
        f.title = "Capacitated vehicle routing problem";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = cvrp_impl::generate;
        f.scenarios = {
            {"logistics", {{"org", "a delivery company"}, {"cust", "customer"}, {"custs", "customers"},
                           {"veh", "van"}, {"vehs", "vans"}, {"unit", "crates"}, {"cust_pool", "cities"}}},
            {"retail", {{"org", "a bakery"}, {"cust", "shop"}, {"custs", "shops"}, {"veh", "delivery bike"},
                        {"vehs", "delivery bikes"}, {"unit", "trays"}, {"cust_pool", "regions"}}},
            {"environment", {{"org", "a waste collector"}, {"cust", "collection point"},
                             {"custs", "collection points"}, {"veh", "truck"}, {"vehs", "trucks"},
                             {"unit", "bins"}, {"cust_pool", "sites"}}},
            {"healthcare", {{"org", "a pharmacy network"}, {"cust", "clinic"}, {"custs", "clinics"},
                            {"veh", "courier car"}, {"vehs", "courier cars"}, {"unit", "boxes"},
                            {"cust_pool", "hospitals"}}},
        };
        f.intro = "[{Org} serves {n_demand} {custs} from one depot with a fleet of identical {vehs}.|{Org} plans "
                  "routes of {vehs} that start and end at the depot and visit {n_demand} {custs}.|There are "
                  "{n_demand} {custs} [to serve|to be served] by {org}, [using|with] identical {vehs} that [leave "
                  "from|start at] [one|a single] depot and return to it.|[Starting and ending|Based] at [one|a "
                  "single] depot, the identical {vehs} of {org} [must|have to] [serve|visit] {n_demand} {custs}.]";
        f.params = {
            {"locations", {}, "[locations (the depot first)|locations (depot listed first)|places (the depot "
             "first)]", "", true},
            {"depot", {}, "depot", ""},
            {"demand", {"locations"}, "demand", "{unit}"},
            {"vehicles", {}, "[number of {vehs} available|number of available {vehs}|size of the {veh} fleet]", ""},
            {"capacity", {}, "[capacity of each {veh}|capacity per {veh}|{veh} capacity]", "{unit}"},
            {"distance", {"locations", "locations"}, "distance", "km"},
        };
        f.constraints = {"[Each {cust} is visited exactly once: one {veh} arrives and one leaves.|Every {cust} is "
                         "served by exactly one visit, entered once and left once.|[Exactly one|One and only one] "
                         "{veh} [arrives at|enters] [each|every] {cust}, and exactly one [leaves|departs from] "
                         "it.|No {cust} may be [skipped|missed] or [visited twice|visited more than once]: "
                         "[each|every] {cust} has exactly one incoming and exactly one outgoing leg.]",
                         "[At most the available number of {vehs} leave the depot.|The fleet size limits the number "
                         "of routes: [no more|not more] [{vehs}|routes] than available [may|can] leave the "
                         "depot.|The number of {vehs} [leaving|departing from] the depot [may not|must not|cannot] "
                         "exceed the number available.|[No more than|At most] the available {vehs} [can|may] "
                         "[start|begin] a route at the depot.]",
                         "[The demand delivered on one route may not exceed the {veh} capacity, and routes may not "
                         "form cycles that avoid the depot.|Each route starts and ends at the depot and its "
                         "[total|combined] demand respects the capacity.|No route may [carry|serve] more [total "
                         "demand|demand in total] than the capacity of a {veh}, and every route [must|has to] pass "
                         "through the depot (no cycles among {custs} only).|[Every|Each] route [must|has to] "
                         "[begin|start] and end at the depot, with the [total|combined|summed] demand of its "
                         "{custs} [at most|no more than|not exceeding] the {veh} capacity.]"};
        f.objective = "[Minimize the total distance travelled.|Find routes of minimum total length.|The "
                      "[goal|aim|objective] is to [keep|make] the [total|overall|combined] distance [driven|travelled] "
                      "as [short|small] as possible.|[Plan|Choose] the routes so that the [total|overall] distance "
                      "[covered|travelled] is [minimized|as small as possible].]";
        f.integrality = "[Each leg is either driven or not.|Routing decisions are yes/no: [a leg|each leg between "
                        "two locations] is driven or not.|[Whether|If] a {veh} [drives|travels] [directly] from one "
                        "location to another is a [binary|yes/no] [decision|choice].|[Partial|Fractional] legs are "
                        "[not allowed|ruled out]: [each|every] leg is [either] driven [in full|fully] or not at "
                        "all.]";
        f.decisions = "which legs are driven (binary) and the load on arrival at each {cust} (MTZ)";
        f.latex = "\\begin{aligned}\n"
                  "\\min\\;& \\sum_{i\\ne j} d_{ij}\\,x_{ij} \\\\\n"
                  "\\text{s.t.}\\;& \\sum_{j\\ne i} x_{ij} = 1,\\ \\sum_{j\\ne i} x_{ji} = 1 && \\forall i\\in C "
                  "\\quad\\text{(leave, enter)} \\\\\n"
                  "& \\sum_{j\\in C} x_{0j} \\le K \\quad\\text{(fleet)} \\\\\n"
                  "& u_i - u_j + Q\\,x_{ij} \\le Q - q_j && \\forall i\\ne j \\in C \\quad\\text{(load)} \\\\\n"
                  "& x_{ij} \\in \\{0,1\\},\\ q_i \\le u_i \\le Q\n"
                  "\\end{aligned}";
        f.latex_symbols = {"$0$: depot; $C$: {custs}", "$d_{ij}$: distance; $q_i$: demand",
                           "$K$: {vehs}; $Q$: capacity", "$x_{ij} = 1$ if a {veh} drives from $i$ to $j$; $u_i$: load"};
        f.code = R"(N = data["locations"]
C = [c for c in N if c != data["depot"]]
Q = data["capacity"]
q = data["demand"]
x = {(i, j): @var(f"x_{a + 1}_{b + 1}", 0, 1, B) for a, i in enumerate(N) for b, j in enumerate(N) if i != j}
u = {i: @var(f"u_{a + 1}", q[i], max(q[i], Q), C) for a, i in enumerate(N) if i in q}
@obj(@sum(data["distance"][i][j] * x[i, j] for (i, j) in x))
for a, i in enumerate(N):
    if i in q:
        @add(@sum(x[i, j] for j in N if j != i) == 1, f"leave_{a + 1}")
        @add(@sum(x[j, i] for j in N if j != i) == 1, f"enter_{a + 1}")
@add(@sum(x[data["depot"], j] for j in C) <= data["vehicles"], "fleet")
for a, i in enumerate(N):
    for b, j in enumerate(N):
        if i in q and j in q and i != j:
            @add(u[i] - u[j] + Q * x[i, j] <= Q - q[j], f"load_{a + 1}_{b + 1}")
)";
        f.var_docs = {{"x", {"locations", "locations"}, "trip from {0} to {1}"}, {"u", {"locations"}, "load at {0}"}};
        f.con_docs = {{"leave", {"locations"}, "departure from {0}"}, {"enter", {"locations"}, "arrival at {0}"},
                      {"fleet", {}, "fleet size"}, {"load", {"locations", "locations"}, "load propagation {0} -> {1}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
