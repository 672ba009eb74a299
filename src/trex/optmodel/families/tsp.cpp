// Travelling salesman (Miller-Tucker-Zemlin): visit every city once and return, minimum total distance. MILP.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace tsp_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int n = 3 + g.req.difficulty + g.r.int_in(0, 1);
    const strings C = g.names("city", n);
    std::vector<double> px(n), py(n);
    for (int i = 0; i < n; i++) {
        px[i] = g.r.int_in(0, 100);
        py[i] = g.r.int_in(0, 100);
    }
    std::vector<std::vector<double>> dist(n, std::vector<double>(n, 0));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j) dist[i][j] = std::max(1.0, std::round(std::hypot(px[i] - px[j], py[i] - py[j])));
    ojson& data = g.inst.data;
    data["cities"] = list(C);
    data["distance"] = map2(C, C, dist);
    model& m = g.inst.m;
    std::vector<std::vector<int>> x(n, std::vector<int>(n, -1));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j) x[i][j] = m.add_var(nm("x", i, j), var_type::binary, 0, 1, dist[i][j]);
    std::vector<int> u(n, -1);
    for (int i = 1; i < n; i++) u[i] = m.add_var(nm("u", i), var_type::continuous, 1, n - 1, 0);
    for (int i = 0; i < n; i++) {
        std::vector<term> t;
        for (int j = 0; j < n; j++)
            if (i != j) t.push_back({x[i][j], 1});
        m.add_con(nm("leave", i), t, row_sense::eq, 1);
    }
    for (int j = 0; j < n; j++) {
        std::vector<term> t;
        for (int i = 0; i < n; i++)
            if (i != j) t.push_back({x[i][j], 1});
        m.add_con(nm("enter", j), t, row_sense::eq, 1);
    }
    for (int i = 1; i < n; i++)
        for (int j = 1; j < n; j++)
            if (i != j) m.add_con(nm("mtz", i, j), {{u[i], 1}, {u[j], -1}, {x[i][j], (double)n}}, row_sense::le, n - 1);
}

}  // namespace tsp_impl

TREX_FAMILY(tsp) {
    static const family f = [] {
        family f;
        f.name = "tsp";
        f.title = "Travelling salesman problem (MTZ)";
        f.milp = true;
        f.generate = tsp_impl::generate;
        f.scenarios = {
            {"logistics", {{"org", "a sales representative"}, {"city", "city"}, {"cities", "cities"},
                           {"dist", "driving distance"}, {"unit", "km"}, {"city_pool", "cities"}}},
            {"production", {{"org", "a drilling machine"}, {"city", "hole position"}, {"cities", "hole positions"},
                            {"dist", "travel time of the drill head"}, {"unit", "ms"}, {"city_pool", "nodes"}}},
            {"healthcare", {{"org", "a home-care nurse"}, {"city", "patient home"}, {"cities", "patient homes"},
                            {"dist", "travel time"}, {"unit", "minutes"}, {"city_pool", "workers"}}},
            {"education", {{"org", "a school inspector"}, {"city", "school"}, {"cities", "schools"},
                           {"dist", "distance"}, {"unit", "km"}, {"city_pool", "schools"}}},
        };
        f.intro =
            "[{Org} must visit {n_cities} {cities}, each exactly once, and return to the start.|{Org} plans a round "
            "trip through {n_cities} {cities}.|[There are|We have] {n_cities} {cities} that {org} [has to|must] "
            "[visit|pass through] [once each|exactly once each] [on|in] a [single|closed] [round trip|tour] "
            "[ending|that ends] where it [began|started].|[Starting from|Leaving from] one of {n_cities} {cities}, "
            "{org} [must|has to] [visit|call at] [every other one|each of the others] exactly once and then "
            "[return|come back] to [the start|the starting point].]";
        f.params = {
            {"cities", {}, "{cities}", "", true},
            {"distance", {"cities", "cities"}, "{dist}", "{unit}"},
        };
        f.constraints = {
            "[Each {city} is left exactly once and entered exactly once.|Every {city} has exactly one successor and "
            "one predecessor on the tour.|[Exactly one|Precisely one] leg [must|has to] [leave|start from] "
            "[each|every] {city}, and [exactly one|precisely one] leg [must|has to] [enter|arrive at] it.|[No|Not a "
            "single] {city} [may|can] be [entered|arrived at] or [left|departed from] more than once, and [each|every] "
            "{city} [must|has to] be [both entered and left|visited, entered once and left once].|[For each|For every] "
            "{city}, the tour [uses|contains] [exactly one|one and only one] incoming leg and [exactly one|one and "
            "only one] outgoing leg.]",
            "[The route must be a single tour, without separate sub-tours.|Sub-tours are not allowed.|[The legs "
            "chosen|The chosen legs] [must|have to] form [one|a single] [closed|connected] tour [through|covering] all "
            "{cities}[, with no smaller separate loops|; separate smaller loops are not allowed].|[No|Not a single] "
            "[sub-tour|smaller loop] [covering|through] only some of the {cities} [is allowed|may appear|can appear]; "
            "the route [must|has to] be [one|a single] round trip.|[Separate|Disconnected] [sub-tours|loops] [are "
            "ruled out|are forbidden]: [all|every one of the] {cities} [must|have to] lie on [one|the same] "
            "[tour|round trip].]"};
        f.objective =
            "[Minimize the total {dist} of the tour.|Find the shortest round trip.|The [goal|aim|objective] is to find "
            "[a tour|the round trip] with the [smallest|lowest|least] [total|overall|combined] "
            "{dist}.|[Choose|Pick|Select] the legs so that the sum of their {dist} is [as small as "
            "possible|minimized].|Which [tour|round trip] [through|visiting] all {cities} has the "
            "[smallest|lowest|least] [total|overall] {dist}?]";
        f.integrality =
            "[Each leg is either travelled or not.|Travel decisions are yes/no.|A leg [cannot|may not] be "
            "[partly|partially] [travelled|used].|[Every|Each] leg [must|has to] be [either fully travelled "
            "or|travelled in full or else] skipped.|Whether a leg is [used|travelled] is [a yes/no|an all-or-nothing] "
            "[decision|choice].]";
        f.decisions = "which legs (ordered pairs of {cities}) are travelled (binary), plus MTZ position variables";
        f.latex = "\\begin{aligned}\n"
                  "\\min\\;& \\sum_{i\\ne j} d_{ij}\\,x_{ij} \\\\\n"
                  "\\text{s.t.}\\;& \\sum_{j\\ne i} x_{ij} = 1 && \\forall i \\quad\\text{(leave)} \\\\\n"
                  "& \\sum_{i\\ne j} x_{ij} = 1 && \\forall j \\quad\\text{(enter)} \\\\\n"
                  "& u_i - u_j + n\\,x_{ij} \\le n - 1 && \\forall i\\ne j,\\ i,j \\ge 2 \\quad\\text{(mtz)} \\\\\n"
                  "& x_{ij} \\in \\{0,1\\},\\ 1 \\le u_i \\le n-1\n"
                  "\\end{aligned}";
        f.latex_symbols = {"cities $1..n$ (the first is the start)", "$d_{ij}$: {dist} from $i$ to $j$",
                           "$x_{ij} = 1$ if the tour goes from $i$ to $j$; $u_i$: position of $i$ in the tour"};
        f.code = R"(C = data["cities"]
n = len(C)
x = {(i, j): @var(f"x_{a + 1}_{b + 1}", 0, 1, B) for a, i in enumerate(C) for b, j in enumerate(C) if i != j}
u = {i: @var(f"u_{a + 1}", 1, n - 1, C) for a, i in enumerate(C) if a > 0}
@obj(@sum(data["distance"][i][j] * x[i, j] for (i, j) in x))
for a, i in enumerate(C):
    @add(@sum(x[i, j] for j in C if j != i) == 1, f"leave_{a + 1}")
for b, j in enumerate(C):
    @add(@sum(x[i, j] for i in C if i != j) == 1, f"enter_{b + 1}")
for a, i in enumerate(C):
    for b, j in enumerate(C):
        if a > 0 and b > 0 and a != b:
            @add(u[i] - u[j] + n * x[i, j] <= n - 1, f"mtz_{a + 1}_{b + 1}")
)";
        f.var_docs = {{"x", {"cities", "cities"}, "leg from {0} to {1}"}, {"u", {"cities"}, "position of {0}"}};
        f.con_docs = {{"leave", {"cities"}, "departure from {0}"}, {"enter", {"cities"}, "arrival at {0}"},
                      {"mtz", {"cities", "cities"}, "sub-tour elimination for {0} -> {1}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
