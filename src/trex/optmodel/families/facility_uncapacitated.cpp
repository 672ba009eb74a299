// Uncapacitated facility location (strong formulation): open facilities at fixed cost f_i and assign each customer
// (demand d_j) to open facilities at cost d_j c_ij per full assignment; minimum total cost. MILP.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace facility_uncapacitated_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int nf = 2 + (d + 1) / 2 + g.r.int_in(0, 1), nc = 3 + d + g.r.int_in(0, 2);
    const strings F = g.names("fac", nf), C = g.names("cust", nc);
    std::vector<double> fixed(nf), demand(nc);
    std::vector<std::vector<double>> cost(nf, std::vector<double>(nc));
    for (auto& x : fixed) x = 10 * g.r.int_in(10, 60);
    for (auto& x : demand) x = g.r.int_in(5, 40);
    for (auto& row : cost)
        for (auto& c : row) c = g.r.int_in(1, 12);
    ojson& data = g.inst.data;
    data["facilities"] = list(F);
    data["customers"] = list(C);
    data["fixed_cost"] = map1(F, fixed);
    data["demand"] = map1(C, demand);
    data["unit_cost"] = map2(F, C, cost);
    model& m = g.inst.m;
    std::vector<int> y(nf);
    for (int i = 0; i < nf; i++) y[i] = m.add_var(nm("y", i), var_type::binary, 0, 1, fixed[i]);
    std::vector<std::vector<int>> x(nf, std::vector<int>(nc));
    for (int i = 0; i < nf; i++)
        for (int j = 0; j < nc; j++)
            x[i][j] = m.add_var(nm("x", i, j), var_type::continuous, 0, 1, demand[j] * cost[i][j]);
    for (int j = 0; j < nc; j++) {
        std::vector<term> t;
        for (int i = 0; i < nf; i++) t.push_back({x[i][j], 1});
        m.add_con(nm("serve", j), t, row_sense::eq, 1);
    }
    for (int i = 0; i < nf; i++)
        for (int j = 0; j < nc; j++) m.add_con(nm("open", i, j), {{x[i][j], 1}, {y[i], -1}}, row_sense::le, 0);
}

}  // namespace facility_uncapacitated_impl

TREX_FAMILY(facility_uncapacitated) {
    static const family f = [] {
        family f;
        f.name = "facility_uncapacitated";
        f.title = "Uncapacitated facility location";
        f.milp = true;
        f.generate = facility_uncapacitated_impl::generate;
        f.scenarios = {
            {"retail", {{"org", "a coffee chain"}, {"fac", "candidate roastery"}, {"facs", "candidate roasteries"},
                        {"cust", "café"}, {"custs", "cafés"}, {"unit", "bags per week"}, {"fac_pool", "cities"},
                        {"cust_pool", "regions"}}},
            {"healthcare", {{"org", "an ambulance service"}, {"fac", "candidate base"}, {"facs", "candidate bases"},
                            {"cust", "town"}, {"custs", "towns"}, {"unit", "calls per month"},
                            {"fac_pool", "sites"}, {"cust_pool", "cities"}}},
            {"education", {{"org", "a school board"}, {"fac", "candidate bus depot"},
                           {"facs", "candidate bus depots"}, {"cust", "school"}, {"custs", "schools"},
                           {"unit", "bus trips per week"}, {"fac_pool", "regions"}, {"cust_pool", "schools"}}},
            {"environment", {{"org", "a county"}, {"fac", "candidate composting site"},
                             {"facs", "candidate composting sites"}, {"cust", "neighbourhood"},
                             {"custs", "neighbourhoods"}, {"unit", "tons per month"}, {"fac_pool", "sites"},
                             {"cust_pool", "cities"}}},
        };
        f.intro = "[{Org} may open any of {n_facilities} {facs}; each of {n_customers} {custs} must be served.|"
                  "{Org} is choosing locations among {n_facilities} {facs} to serve {n_customers} {custs}.|There "
                  "are {n_customers} {custs} that [must|have to] be served, and {org} [can|may] open any of "
                  "{n_facilities} {facs} [to serve them|for that].|[To serve|For serving] its {n_customers} {custs}, "
                  "{org} [has to|must] [decide|choose] which of {n_facilities} {facs} to open.]";
        f.params = {
            {"facilities", {}, "{facs}", "", true},
            {"customers", {}, "{custs}", "", true},
            {"fixed_cost", {"facilities"}, "[fixed cost|fixed opening cost|fixed cost of opening]", "$"},
            {"demand", {"customers"}, "demand", "{unit}"},
            {"unit_cost", {"facilities", "customers"}, "[cost per unit of demand served|service cost per unit of "
             "demand|cost of serving one unit of demand]", "$"},
        };
        f.constraints = {"[Each {cust}'s demand must be fully served; it may be split among open sites.|Every "
                         "{cust} is served completely, possibly by several sites.|The shares of [each|every] "
                         "{cust}'s demand served by the [various|different] sites [must|have to] [add up to|sum to] "
                         "the whole demand.|No {cust} may be left [partly|partially] [unserved|unsupplied]: [all|the "
                         "whole] of its demand [must|has to] be served, [possibly|perhaps] split [among|between] "
                         "several sites.]",
                         "[Only opened sites can serve {custs}.|A site that is not opened serves nobody.|No {cust} "
                         "may be served [from|by] a site that is [closed|not opened].|If a site is [not opened|kept "
                         "closed], [then] it [cannot|may not] serve any {cust}; [any|each] open site [can|may] serve "
                         "[every|any] {cust}.|[Serving|Supplying] a {cust} from a site is [allowed|possible] only "
                         "when that site is [open|opened].]"};
        f.objective = "[Minimize total fixed plus service cost, where serving demand from a site costs the amount "
                      "of demand served times the unit cost.|Find the cheapest plan: fixed costs of opened sites "
                      "plus, for every service, the demand served times the unit cost.|The [goal|aim|objective] is "
                      "the [lowest|smallest] [total|overall] cost: the fixed costs of the opened sites plus the "
                      "service costs, [each|every] service cost being the [amount|quantity] of demand served times "
                      "the cost per unit.|[Choose|Decide] the sites and the service so that [the sum of|the total "
                      "of] fixed costs and service costs (demand served times unit cost) is [minimized|as small as "
                      "possible].]";
        f.integrality = "[Sites are either opened or not.|Opening is a yes/no decision.|[Each|Every] site is "
                        "[either opened or kept closed|opened completely or not at all].|[Partially|Fractionally] "
                        "opening a site is [not allowed|not possible|ruled out].]";
        f.decisions = "which sites to open (binary) and the fraction of each {cust}'s demand served by each site";
        f.latex = "\\begin{aligned}\n"
                  "\\min\\;& \\sum_{i\\in F} f_i\\,y_i + \\sum_{i\\in F}\\sum_{j\\in C} d_j\\,c_{ij}\\,x_{ij} \\\\\n"
                  "\\text{s.t.}\\;& \\sum_{i\\in F} x_{ij} = 1 && \\forall j\\in C \\quad\\text{(serve)} \\\\\n"
                  "& x_{ij} \\le y_i && \\forall i\\in F,\\ j\\in C \\quad\\text{(open)} \\\\\n"
                  "& 0 \\le x_{ij} \\le 1,\\ y_i \\in \\{0,1\\}\n"
                  "\\end{aligned}";
        f.latex_symbols = {"$F$: {facs}; $C$: {custs}", "$f_i$: fixed cost; $d_j$: demand; $c_{ij}$: unit cost",
                           "$y_i = 1$ if $i$ is opened; $x_{ij}$: share of $j$'s demand served by $i$"};
        f.code = R"(F = data["facilities"]
C = data["customers"]
y = {i: @var(f"y_{a + 1}", 0, 1, B) for a, i in enumerate(F)}
x = {(i, j): @var(f"x_{a + 1}_{b + 1}", 0, 1, C) for a, i in enumerate(F) for b, j in enumerate(C)}
@obj(@sum(data["fixed_cost"][i] * y[i] for i in F) + @sum(data["demand"][j] * data["unit_cost"][i][j] * x[i, j] for i in F for j in C))
for b, j in enumerate(C):
    @add(@sum(x[i, j] for i in F) == 1, f"serve_{b + 1}")
for a, i in enumerate(F):
    for b, j in enumerate(C):
        @add(x[i, j] - y[i] <= 0, f"open_{a + 1}_{b + 1}")
)";
        f.var_docs = {{"y", {"facilities"}, "{0} opened"}, {"x", {"facilities", "customers"}, "share of {1} served by {0}"}};
        f.con_docs = {{"serve", {"customers"}, "service of {0}"}, {"open", {"facilities", "customers"}, "{0} open to serve {1}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
