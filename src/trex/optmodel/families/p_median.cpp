// p-median location: open exactly p of the candidate sites and serve every customer (weight w_j) from open sites,
// minimising the total weighted distance sum w_j d_ij x_ij. Strong formulation with x_ij <= y_i. MILP (binary
// openings; the assignment shares x_ij are continuous and come out 0/1 at an optimum, since each customer goes to
// its nearest open site). No designs: every choice of p sites is feasible.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace p_median_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    static const int site_count[] = {4, 6, 8, 11, 14};
    static const int cust_count[] = {5, 9, 14, 20, 28};
    const int ns = site_count[d - 1] + g.r.int_in(0, d > 1 ? 1 : 0);
    const int nc = cust_count[d - 1] + g.r.int_in(0, d > 1 ? 2 : 0);
    const int p = std::max(2, ns / 4 + g.r.int_in(0, 1));
    const strings S = g.names("site", ns), C = g.names("cust", nc);
    // points on a 100 x 100 map; distances are rounded Euclidean distances (integers)
    std::vector<std::pair<int, int>> sp(ns), cp(nc);
    for (auto& q : sp) q = {g.r.int_in(0, 100), g.r.int_in(0, 100)};
    for (auto& q : cp) q = {g.r.int_in(0, 100), g.r.int_in(0, 100)};
    std::vector<double> weight(nc);
    for (auto& w : weight) w = g.r.int_in(2, 20);
    std::vector<std::vector<double>> dist(ns, std::vector<double>(nc));
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < nc; j++) {
            const double dx = sp[i].first - cp[j].first, dy = sp[i].second - cp[j].second;
            dist[i][j] = std::max(1.0, std::round(std::sqrt(dx * dx + dy * dy)));
        }
    ojson& data = g.inst.data;
    data["sites"] = list(S);
    data["customers"] = list(C);
    data["p"] = num(p);
    data["weight"] = map1(C, weight);
    data["distance"] = map2(S, C, dist);
    model& m = g.inst.m;
    std::vector<int> y(ns);
    for (int i = 0; i < ns; i++) y[i] = m.add_var(nm("y", i), var_type::binary, 0, 1, 0);
    std::vector<std::vector<int>> x(ns, std::vector<int>(nc));
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < nc; j++)
            x[i][j] = m.add_var(nm("x", i, j), var_type::continuous, 0, 1, weight[j] * dist[i][j]);
    std::vector<term> t;
    for (int i = 0; i < ns; i++) t.push_back({y[i], 1});
    m.add_con("open_count", t, row_sense::eq, p);
    for (int j = 0; j < nc; j++) {
        std::vector<term> s;
        for (int i = 0; i < ns; i++) s.push_back({x[i][j], 1});
        m.add_con(nm("serve", j), s, row_sense::eq, 1);
    }
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < nc; j++) m.add_con(nm("link", i, j), {{x[i][j], 1}, {y[i], -1}}, row_sense::le, 0);
}

}  // namespace p_median_impl

TREX_FAMILY(p_median) {
    static const family f = [] {
        family f;
        f.name = "p_median";
        f.title = "p-median location problem";
        f.milp = true;
        f.generate = p_median_impl::generate;
        f.scenarios = {
            {"healthcare",
             {{"org", "a regional health authority"},
              {"site", "candidate clinic location"},
              {"sites", "candidate clinic locations"},
              {"cust", "town"},
              {"custs", "towns"},
              {"weight", "expected patient visits per week"},
              {"dunit", "km"},
              {"site_pool", "sites"},
              {"cust_pool", "cities"}}},
            {"logistics",
             {{"org", "a parcel carrier"},
              {"site", "candidate depot"},
              {"sites", "candidate depots"},
              {"cust", "delivery zone"},
              {"custs", "delivery zones"},
              {"weight", "deliveries per day"},
              {"dunit", "km"},
              {"site_pool", "warehouses"},
              {"cust_pool", "regions"}}},
            {"education",
             {{"org", "a school district"},
              {"site", "candidate school site"},
              {"sites", "candidate school sites"},
              {"cust", "neighbourhood"},
              {"custs", "neighbourhoods"},
              {"weight", "school-age children"},
              {"dunit", "km"},
              {"site_pool", "schools"},
              {"cust_pool", "cities"}}},
            {"environment",
             {{"org", "a county waste authority"},
              {"site", "candidate recycling centre"},
              {"sites", "candidate recycling centres"},
              {"cust", "village"},
              {"custs", "villages"},
              {"weight", "tons of recyclables per month"},
              {"dunit", "km"},
              {"site_pool", "sites"},
              {"cust_pool", "cities"}}},
        };
        f.intro =
            "[{Org} will open a [fixed|given] number of its {n_sites} {sites} and serve {n_customers} {custs} from "
            "them.|{Org} must choose which of {n_sites} {sites} to open so that {n_customers} {custs} are served as "
            "close to home as possible.|[There are|We have] {n_customers} {custs} [to be served|to serve] and "
            "{n_sites} {sites}; {org} [will open|is going to open|plans to open] a [fixed|given] number of [these "
            "sites|the sites|them].|[Out of|Among] {n_sites} {sites}, {org} [has to|must|will] [pick|select|choose] a "
            "[fixed|given] number to open, and [those open sites|the opened sites] [will serve|are to serve] "
            "{n_customers} {custs}.]";
        f.params = {
            {"sites", {}, "{sites}", "", true},
            {"customers", {}, "{custs}", "", true},
            {"p", {}, "[number of sites to open|number of sites that must be opened|count of sites to open]", ""},
            {"weight", {"customers"}, "weight", "{weight}"},
            {"distance", {"sites", "customers"}, "distance", "{dunit}"},
        };
        f.constraints = {
            "[[Exactly|Precisely] the given number of sites [must|has to] be opened.|The number of opened sites "
            "[must|has to] equal the number of sites to open.|[Open|Choose to open] [exactly|precisely] the "
            "[required|given|stated] number of sites[, no more and no fewer|].|[No more and no fewer|Neither more nor "
            "fewer] sites than the number to open [may|can] be opened.|[The count of|How many] sites [are opened|get "
            "opened] [has to|must] [equal|match] [exactly |]the number of sites to open.]",
            "[Every {cust} [must|has to] be fully served by the opened sites.|Each {cust} is assigned to the opened "
            "sites; its shares [add up|sum] to one.|[For each|For every] {cust}, the shares served by the "
            "[various|different|individual] sites [must|have to] [add up|sum] to [exactly |]one.|[No|Not a single] "
            "{cust} [may|can] be left [partly|partially] unserved: [its|the] shares [across|over] all sites [total|sum "
            "to] [exactly |]one.|[It is required that|It must hold that] [each|every] {cust} [is served|gets served] "
            "in full, [its shares over the sites adding up|with its shares over the sites summing] to one.]",
            "[A {cust} [may|can] only be served by a site that is [opened|open].|Sites that [stay|remain] closed serve "
            "no {cust}.|[If|When] a site is [not opened|left closed|kept closed], [no {cust} may|none of the {custs} "
            "can] be served [by|from] it.|Only [opened|open] sites [may|can] serve {custs}[; a closed site serves "
            "none|].|[Serving a {cust} from|Assigning a {cust} to] a site [is allowed|is permitted|is possible] only "
            "[if|when] that site is opened.]"};
        f.objective =
            "[Minimize the [total|overall] weighted distance, i.e. the sum over {custs} of weight times distance to "
            "the serving site.|Make the sum of weight times distance travelled as [small|low] as possible.|The "
            "[goal|aim|objective] is to minimize the [total|overall|combined] weighted distance: [for each {cust} and "
            "site|over every {cust} and every site], the {cust}'s weight [times|multiplied by] the distance between "
            "them [times|multiplied by] the share served.|[Choose|Decide|Determine] [which sites to open|the sites to "
            "open] and [how to serve the {custs}|the service shares] so that the sum of weight [times|multiplied by] "
            "distance [times|multiplied by] share served is as [small|low] as possible.|What [choice|selection] of "
            "sites [gives|yields|achieves] the [lowest|smallest|least] [total|overall|combined] weighted distance "
            "[between {custs} and the sites serving them|from the {custs} to their serving sites]?]";
        f.integrality =
            "[Each site is either opened or not.|Opening a site is a yes/no decision.|A site [cannot|may not] be "
            "[partly|partially] opened[; it is open or closed|].|[Every|Each] site [must|has to] be [fully opened or "
            "left|either fully opened or] closed[, nothing in between|].|Whether a site opens is [an all-or-nothing|a "
            "yes-or-no|a binary] [decision|choice].]";
        f.decisions = "which sites to open (binary) and the share of each {cust} served by each site";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{i\\in S}\\sum_{j\\in C} w_j\\,d_{ij}\\,x_{ij} \\\\\n"
            "\\text{s.t.}\\;& \\sum_{i\\in S} y_i = p && \\quad\\text{(open\\_count)} \\\\\n"
            "& \\sum_{i\\in S} x_{ij} = 1 && \\forall j\\in C \\quad\\text{(serve)} \\\\\n"
            "& x_{ij} \\le y_i && \\forall i\\in S,\\ j\\in C \\quad\\text{(link)} \\\\\n"
            "& 0 \\le x_{ij} \\le 1,\\ y_i \\in \\{0,1\\}\n"
            "\\end{aligned}";
        f.latex_symbols = {"$S$: {sites}; $C$: {custs}; $p$: number of sites to open",
                           "$w_j$: weight of $j$; $d_{ij}$: distance from $i$ to $j$",
                           "$y_i = 1$ if $i$ is opened; $x_{ij}$: share of $j$ served by $i$"};
        f.code = R"(S = data["sites"]
C = data["customers"]
y = {i: @var(f"y_{a + 1}", 0, 1, B) for a, i in enumerate(S)}
x = {(i, j): @var(f"x_{a + 1}_{b + 1}", 0, 1, C) for a, i in enumerate(S) for b, j in enumerate(C)}
@obj(@sum(data["weight"][j] * data["distance"][i][j] * x[i, j] for i in S for j in C))
@add(@sum(y[i] for i in S) == data["p"], "open_count")
for b, j in enumerate(C):
    @add(@sum(x[i, j] for i in S) == 1, f"serve_{b + 1}")
for a, i in enumerate(S):
    for b, j in enumerate(C):
        @add(x[i, j] - y[i] <= 0, f"link_{a + 1}_{b + 1}")
)";
        f.var_docs = {{"y", {"sites"}, "{0} opened"}, {"x", {"sites", "customers"}, "share of {1} served by {0}"}};
        f.con_docs = {{"open_count", {}, "number of opened sites"},
                      {"serve", {"customers"}, "service of {0}"},
                      {"link", {"sites", "customers"}, "{1} served by {0} only if it is opened"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
