// Vehicle routing with time windows: at most K vehicles of capacity Q leave the depot at time 0; every customer is
// visited once, service starts inside its window [a_i, b_i] and lasts s_i; travel times equal distances (minutes =
// km). MTZ load variables u_i in [q_i, Q] and service-start times t_i in [a_i, b_i] linked by big-M rows with
// M_ij = max(0, b_i + s_i + d_ij - a_j) (the depot counts as t = s = b = 0); minimum total distance. MILP.
// Infeasible design: one customer's window closes before a vehicle can reach it from the depot.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace vrptw_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int nc = d <= 3 ? d + 2 : d == 4 ? 6 + g.r.int_in(0, 1) : 8, n = nc + 1;
    strings N = {"Depot"};
    for (const auto& s : g.names("cust", nc)) N.push_back(s);
    std::vector<double> px(n), py(n), q(n, 0), serv(n, 0), open(n, 0), close(n, 0);
    for (int i = 0; i < n; i++) {
        px[i] = g.r.int_in(0, 40);
        py[i] = g.r.int_in(0, 40);
    }
    std::vector<std::vector<double>> dist(n, std::vector<double>(n, 0));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j) dist[i][j] = std::max(1.0, std::round(std::hypot(px[i] - px[j], py[i] - py[j])));
    for (int i = 1; i < n; i++) {
        q[i] = g.r.int_in(2, 9);
        serv[i] = g.r.int_in(2, 10);
    }
    // a reference plan: customers split into K routes in random order; windows are drawn around its arrival times
    const int K = nc <= 3 ? 1 + g.r.int_in(0, 1) : 2 + (nc >= 8 && g.r.chance(0.5));
    std::vector<int> perm = g.r.permutation(nc);
    double max_load = 0;
    for (int k = 0; k < K; k++) {
        double time = 0, load = 0;
        int prev = 0;
        for (int r = k; r < nc; r += K) {
            const int c = perm[(size_t)r] + 1;
            time += (prev ? serv[prev] : 0) + dist[prev][c];
            open[c] = std::max(0.0, time - g.r.int_in(0, 25));
            close[c] = time + g.r.int_in(0, 25);
            load += q[c];
            prev = c;
        }
        max_load = std::max(max_load, load);
    }
    const double Q = max_load + g.r.int_in(0, 4);
    if (g.req.want == design::infeasible) {
        int far = 1;
        for (int i = 2; i < n; i++)
            if (dist[0][i] > dist[0][far]) far = i;
        close[far] = std::max(0.0, dist[0][far] - g.r.int_in(1, 5));
        open[far] = std::max(0.0, close[far] - g.r.int_in(5, 15));
    }
    const strings Cn(N.begin() + 1, N.end());
    auto cust = [&](const std::vector<double>& v) { return std::vector<double>(v.begin() + 1, v.end()); };
    ojson& data = g.inst.data;
    data["locations"] = list(N);
    data["depot"] = N[0];
    data["demand"] = map1(Cn, cust(q));
    data["service_time"] = map1(Cn, cust(serv));
    data["window_open"] = map1(Cn, cust(open));
    data["window_close"] = map1(Cn, cust(close));
    data["vehicles"] = K;
    data["capacity"] = num(Q);
    data["distance"] = map2(N, N, dist);
    model& m = g.inst.m;
    std::vector<std::vector<int>> x(n, std::vector<int>(n, -1));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j) x[i][j] = m.add_var(nm("x", i, j), var_type::binary, 0, 1, dist[i][j]);
    std::vector<int> u(n, -1), t(n, -1);
    for (int i = 1; i < n; i++) u[i] = m.add_var(nm("u", i), var_type::continuous, q[i], Q, 0);
    for (int i = 1; i < n; i++) t[i] = m.add_var(nm("t", i), var_type::continuous, open[i], close[i], 0);
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
    for (int i = 0; i < n; i++)
        for (int j = 1; j < n; j++) {
            if (i == j) continue;
            const double big = std::max(0.0, close[i] + serv[i] + dist[i][j] - open[j]);
            std::vector<term> tm = {{t[j], -1}, {x[i][j], big}};
            if (i > 0) tm.push_back({t[i], 1});
            m.add_con(nm("time", i, j), tm, row_sense::le, big - serv[i] - dist[i][j]);
        }
}

}  // namespace vrptw_impl

TREX_FAMILY(vrptw) {
    static const family f = [] {
        family f;
        f.name = "vrptw";
        f.title = "Vehicle routing problem with time windows";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = vrptw_impl::generate;
        f.scenarios = {
            {"logistics",
             {{"org", "a parcel delivery company"},
              {"cust", "customer"},
              {"custs", "customers"},
              {"veh", "van"},
              {"vehs", "vans"},
              {"unit", "parcels"},
              {"cust_pool", "cities"}}},
            {"healthcare",
             {{"org", "a home-care service"},
              {"cust", "patient"},
              {"custs", "patients"},
              {"veh", "nurse car"},
              {"vehs", "nurse cars"},
              {"unit", "supply kits"},
              {"cust_pool", "workers"}}},
            {"retail",
             {{"org", "a grocery chain"},
              {"cust", "store"},
              {"custs", "stores"},
              {"veh", "truck"},
              {"vehs", "trucks"},
              {"unit", "pallets"},
              {"cust_pool", "regions"}}},
            {"education",
             {{"org", "a school catering service"},
              {"cust", "school"},
              {"custs", "schools"},
              {"veh", "delivery van"},
              {"vehs", "delivery vans"},
              {"unit", "meal crates"},
              {"cust_pool", "schools"}}},
        };
        f.intro =
            "[{Org} serves {n_demand} {custs} from a depot with a fleet of identical {vehs}. Each {cust} must be "
            "visited within its time window (times count in minutes from the departure at time 0).|{Org} plans routes "
            "of {vehs} that start and end at the depot and visit {n_demand} {custs}, each inside a given time "
            "window.|[Using|With] a fleet of identical {vehs} [based|stationed] at a depot, {org} [has to|must] "
            "[visit|serve] {n_demand} {custs}, [each one|every one of them] within its [own |]time window; [times are "
            "counted|all times count] in minutes from the departure at time 0.] [The {vehs} drive one km per minute, "
            "so travel times in minutes equal distances in km.|Travel time in minutes equals the distance in km (one "
            "km per minute).|[Since|Because] the {vehs} [travel|drive] [at|with a speed of] one km per minute, [the "
            "travel time in minutes|every travel time in minutes] [equals|is equal to] the distance in km.]";
        f.params = {
            {"locations", {}, "[locations (the depot first)|locations (with the depot listed first)|locations "
             "(starting with the depot)]", "", true},
            {"depot", {}, "depot", ""},
            {"demand", {"locations"}, "demand", "{unit}"},
            {"service_time", {"locations"}, "[service time|time needed for service|duration of service]",
             "minutes"},
            {"window_open", {"locations"}, "[time-window start|opening of the time window|earliest service "
             "start]", "minutes"},
            {"window_close", {"locations"}, "[time-window end|closing of the time window|latest service start]",
             "minutes"},
            {"vehicles", {}, "[number of {vehs} available|count of available {vehs}|number of {vehs} in the "
             "fleet]", ""},
            {"capacity", {}, "[capacity of each {veh}|capacity per {veh}|load capacity of a {veh}]", "{unit}"},
            {"distance", {"locations", "locations"}, "distance", "km"},
        };
        f.constraints = {
            "[Each {cust} is visited exactly once.|Every {cust} is served by exactly one visit.|[No|Not a single] "
            "{cust} [may|can] be [visited|served] more than once or [skipped|left out].|[Exactly one|Precisely one] "
            "visit [must|has to] be [made|paid] to [each|every] {cust}[, by a single {veh}|].|[Every|Each] {cust} [has "
            "to|must] be [reached|entered] once and [left|departed from] once by [the routes|exactly one route].]",
            "[At most the available number of {vehs} leave the depot.|The fleet size limits the number of routes.|[No "
            "more|Not more] {vehs} [than are available|than the number available] [may|can] [leave|depart from] the "
            "depot.|The number of routes [leaving|starting at] the depot [must not|may not|cannot] [exceed|be more "
            "than] the number of {vehs} available.|[Use|Send out] [at most|no more than] the available number of "
            "{vehs}, one route [per|for each] {veh}.]",
            "[The demand delivered on one route may not exceed the {veh} capacity, and routes may not form cycles that "
            "avoid the depot.|Each route respects the capacity and starts at the depot.|[On each|On every] route, the "
            "[total|combined] demand [delivered|of the {custs} served] [must not|may not|cannot] [exceed|be more than] "
            "the capacity of a {veh}, and [every|each] route [must|has to] [start and end|begin and finish] at the "
            "depot[, with no loops that skip it|].|[No|Not a single] route [may|can] [carry|deliver] more than one "
            "{veh}'s capacity [in total|of demand], and no [cycle|loop] [may|can] [avoid|bypass] the "
            "depot.|[Routes|All routes] [must|have to] [start|begin] at the depot [rather than forming|instead of "
            "forming|and not form] [separate|isolated] cycles, and the demand [served|delivered] on [each|any] route "
            "[stays|must stay] [within|at or below] the {veh} capacity.]",
            "[All {vehs} leave the depot at time 0. Service at a {cust} starts within its window (a {veh} that arrives "
            "early waits) and the next {cust} on the route is reached after the service time plus the travel time.|The "
            "{vehs} depart at time 0; service must start inside each {cust}'s time window, waiting is allowed, and "
            "leaving a {cust} takes its service time plus the travel time to the next stop.|[Every|Each] {veh} "
            "[leaves|departs from] the depot at time 0; [at each|at every] {cust}, service [must|has to] [begin|start] "
            "[no earlier than the window's start and no later than its end|between the opening and the closing of its "
            "window], [a {veh} arriving early [may|can] wait|early arrivals may wait], and service at the next {cust} "
            "[cannot|may not] [start|begin] [before|earlier than] the [start of the previous service|previous service "
            "start] plus [its|that] service time plus the travel time.|[If|When] a {veh} [goes|drives] from one {cust} "
            "to the next, service at the next [one|{cust}] [cannot|may not] [start|begin] [earlier than|before] the "
            "start of service at the first plus [its|the first one's] service time plus the travel time; [all|every] "
            "service [must|has to] [start|begin] within the {cust}'s window (waiting is [allowed|permitted]), [with "
            "the {vehs} leaving|the {vehs} leaving] the depot at time 0.] [There is no limit on the return time to the "
            "depot.|Returns to the depot are not time-limited.|[The {vehs} may return|A {veh} may get back] to the "
            "depot at any time[, without a deadline|].]"};
        f.objective =
            "[Minimize the total distance travelled.|Find routes of minimum total length.|The [goal|aim|objective] is "
            "to [reach|achieve] [the shortest|the smallest|the lowest] [total|overall|combined] distance "
            "[driven|travelled] by all {vehs}.|[Plan|Choose|Design] the routes so that the [total|overall|combined] "
            "distance [driven|travelled] is [as small as possible|minimized].|Which routes [serve|visit] all {custs} "
            "[with|at] the [least|smallest|lowest] [total|overall] distance [travelled|driven]?]";
        f.integrality =
            "[Each leg is either driven or not.|Routing decisions are yes/no.|A leg [cannot|may not] be "
            "[partly|partially] [driven|used].|[Every|Each] leg between two locations [must|has to] be [either driven "
            "or skipped|used fully or not at all].|Whether a {veh} [drives|travels] a leg is [a yes/no|an "
            "all-or-nothing] [decision|choice].]";
        f.decisions =
            "which legs are driven (binary), the load on arrival at each {cust} (MTZ) and the service "
            "start time at each {cust}";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{i\\ne j} d_{ij}\\,x_{ij} \\\\\n"
            "\\text{s.t.}\\;& \\sum_{j\\ne i} x_{ij} = 1,\\ \\sum_{j\\ne i} x_{ji} = 1 && \\forall i\\in C "
            "\\quad\\text{(leave, enter)} \\\\\n"
            "& \\sum_{j\\in C} x_{0j} \\le K \\quad\\text{(fleet)} \\\\\n"
            "& u_i - u_j + Q\\,x_{ij} \\le Q - q_j && \\forall i\\ne j \\in C \\quad\\text{(load)} \\\\\n"
            "& t_i - t_j + M_{ij}\\,x_{ij} \\le M_{ij} - s_i - d_{ij} && \\forall i\\in C\\cup\\{0\\},\\ j\\in "
            "C,\\ i\\ne j \\quad\\text{(time)} \\\\\n"
            "& x_{ij} \\in \\{0,1\\},\\ q_i \\le u_i \\le Q,\\ a_i \\le t_i \\le b_i\n"
            "\\end{aligned}";
        f.latex_symbols = {"$0$: depot; $C$: {custs}",
                           "$d_{ij}$: distance = travel time; $q_i$: demand",
                           "$s_i$: service time; $[a_i, b_i]$: time window; $t_0 = s_0 = b_0 = 0$",
                           "$M_{ij} = \\max(0,\\ b_i + s_i + d_{ij} - a_j)$: big-M",
                           "$K$: {vehs}; $Q$: capacity",
                           "$x_{ij} = 1$ if a {veh} drives from $i$ to $j$; $u_i$: load; $t_i$: service start"};
        f.code = R"(N = data["locations"]
dep = data["depot"]
C = [c for c in N if c != dep]
Q = data["capacity"]
q = data["demand"]
d = data["distance"]
a = data["window_open"]
b = data["window_close"]
sv = data["service_time"]
x = {(i, j): @var(f"x_{k + 1}_{l + 1}", 0, 1, B) for k, i in enumerate(N) for l, j in enumerate(N) if i != j}
u = {i: @var(f"u_{k + 1}", q[i], Q, C) for k, i in enumerate(N) if i != dep}
t = {i: @var(f"t_{k + 1}", a[i], b[i], C) for k, i in enumerate(N) if i != dep}
@obj(@sum(d[i][j] * x[i, j] for (i, j) in x))
for k, i in enumerate(N):
    if i != dep:
        @add(@sum(x[i, j] for j in N if j != i) == 1, f"leave_{k + 1}")
        @add(@sum(x[j, i] for j in N if j != i) == 1, f"enter_{k + 1}")
@add(@sum(x[dep, j] for j in C) <= data["vehicles"], "fleet")
for k, i in enumerate(N):
    for l, j in enumerate(N):
        if i != dep and j != dep and i != j:
            @add(u[i] - u[j] + Q * x[i, j] <= Q - q[j], f"load_{k + 1}_{l + 1}")
for k, i in enumerate(N):
    for l, j in enumerate(N):
        if j != dep and i != j:
            ti, si, bi = (0, 0, 0) if i == dep else (t[i], sv[i], b[i])
            big = max(0, bi + si + d[i][j] - a[j])
            @add(ti - t[j] + big * x[i, j] <= big - si - d[i][j], f"time_{k + 1}_{l + 1}")
)";
        f.var_docs = {{"x", {"locations", "locations"}, "trip from {0} to {1}"},
                      {"u", {"locations"}, "load at {0}"},
                      {"t", {"locations"}, "service start at {0}"}};
        f.con_docs = {{"leave", {"locations"}, "departure from {0}"},
                      {"enter", {"locations"}, "arrival at {0}"},
                      {"fleet", {}, "fleet size"},
                      {"load", {"locations", "locations"}, "load propagation {0} -> {1}"},
                      {"time", {"locations", "locations"}, "time propagation {0} -> {1}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
