// Capacitated facility location: open facilities (fixed cost f_i, capacity u_i) and serve customer demand d_j at
// unit cost c_ij; minimum total cost. MILP. Infeasible design: total capacity below total demand.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace facility_capacitated_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int nf = 2 + (d + 1) / 2 + g.r.int_in(0, 1), nc = 3 + d + g.r.int_in(0, 1);
    const strings F = g.names("fac", nf), C = g.names("cust", nc);
    std::vector<double> fixed(nf), cap(nf), demand(nc);
    std::vector<std::vector<double>> cost(nf, std::vector<double>(nc));
    for (auto& x : demand) x = 5 * g.r.int_in(2, 12);
    const double dem = sum(demand);
    for (auto& u : cap) u = 10 * std::ceil(dem * g.r.real_in(0.35, 0.7, 2) / 10);
    if (g.req.want == design::infeasible) {
        for (auto& u : cap) u = 5 * std::floor(dem * 0.8 / nf / 5);
    } else if (sum(cap) < dem * 1.2) {
        cap[0] += 10 * std::ceil((dem * 1.2 - sum(cap)) / 10);
    }
    for (auto& x : fixed) x = 50 * g.r.int_in(4, 20);
    for (auto& row : cost)
        for (auto& c : row) c = g.r.int_in(1, 15);
    ojson& data = g.inst.data;
    data["facilities"] = list(F);
    data["customers"] = list(C);
    data["fixed_cost"] = map1(F, fixed);
    data["capacity"] = map1(F, cap);
    data["demand"] = map1(C, demand);
    data["unit_cost"] = map2(F, C, cost);
    model& m = g.inst.m;
    std::vector<int> y(nf);
    for (int i = 0; i < nf; i++) y[i] = m.add_var(nm("y", i), var_type::binary, 0, 1, fixed[i]);
    std::vector<std::vector<int>> x(nf, std::vector<int>(nc));
    for (int i = 0; i < nf; i++)
        for (int j = 0; j < nc; j++) x[i][j] = m.add_var(nm("x", i, j), var_type::continuous, 0, inf, cost[i][j]);
    for (int j = 0; j < nc; j++) {
        std::vector<term> t;
        for (int i = 0; i < nf; i++) t.push_back({x[i][j], 1});
        m.add_con(nm("demand", j), t, row_sense::eq, demand[j]);
    }
    for (int i = 0; i < nf; i++) {
        std::vector<term> t;
        for (int j = 0; j < nc; j++) t.push_back({x[i][j], 1});
        t.push_back({y[i], -cap[i]});
        m.add_con(nm("cap", i), t, row_sense::le, 0);
    }
}

}  // namespace facility_capacitated_impl

TREX_FAMILY(facility_capacitated) {
    static const family f = [] {
        family f;
        f.name = "facility_capacitated";
        f.title = "Capacitated facility location";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = facility_capacitated_impl::generate;
        f.scenarios = {
            {"logistics", {{"org", "a logistics provider"}, {"fac", "candidate depot"}, {"facs", "candidate depots"},
                           {"cust", "customer zone"}, {"custs", "customer zones"}, {"unit", "tons"},
                           {"fac_pool", "cities"}, {"cust_pool", "regions"}}},
            {"healthcare", {{"org", "a health authority"}, {"fac", "candidate clinic"},
                            {"facs", "candidate clinics"}, {"cust", "district"}, {"custs", "districts"},
                            {"unit", "patient visits"}, {"fac_pool", "sites"}, {"cust_pool", "regions"}}},
            {"energy", {{"org", "a hydrogen start-up"}, {"fac", "candidate fuelling station"},
                        {"facs", "candidate fuelling stations"}, {"cust", "fleet"}, {"custs", "fleets"},
                        {"unit", "kg of hydrogen"}, {"fac_pool", "cities"}, {"cust_pool", "vehicles"}}},
            {"retail", {{"org", "a grocery chain"}, {"fac", "candidate warehouse"}, {"facs", "candidate warehouses"},
                        {"cust", "store"}, {"custs", "stores"}, {"unit", "pallets"}, {"fac_pool", "warehouses"},
                        {"cust_pool", "cities"}}},
        };
        f.intro = "[{Org} considers {n_facilities} {facs} to serve {n_customers} {custs}.|{Org} must decide "
                  "which of {n_facilities} {facs} to open and how to serve its {custs} from them.|There are "
                  "{n_customers} {custs} to [serve|supply], and {org} [can open|may open] any of {n_facilities} "
                  "{facs} [for this|to do so].|[To serve|For serving] {n_customers} {custs}, {org} [has to|must] "
                  "[choose|decide] which of {n_facilities} {facs} to open and [how much|what] each open one "
                  "[delivers|supplies] to each {cust}.]";
        f.params = {
            {"facilities", {}, "{facs}", "", true},
            {"customers", {}, "{custs}", "", true},
            {"fixed_cost", {"facilities"}, "[fixed opening cost|fixed cost|fixed cost of opening]", "$"},
            {"capacity", {"facilities"}, "capacity", "{unit}"},
            {"demand", {"customers"}, "demand", "{unit}"},
            {"unit_cost", {"facilities", "customers"}, "[cost per {unit} served|serving cost per {unit}|unit "
             "service cost]", "$ per {unit}"},
        };
        f.constraints = {"[The demand of every {cust} must be served exactly.|All demand has to be met exactly: "
                         "[each|every] {cust} receives its full demand.|[Each|Every] {cust} [must|has to] "
                         "[receive|get] [exactly|precisely] its demand, [summed|added up] over all sites serving "
                         "it.|The [total|combined] amount [delivered|supplied] to [each|every] {cust} [must|has to] "
                         "equal its demand.|No {cust} may [receive|get] more or less than "
                         "its demand.]",
                         "[A site can serve {custs} only if it is opened, and at most up to its capacity.|Closed "
                         "sites serve nothing; open ones serve at most their capacity in total.|The [total|combined] "
                         "amount [served|supplied] from a site [may not|must not|cannot] exceed its capacity if it "
                         "is open, and [must be|is] zero if it is closed.|No site may [serve|supply] {custs} unless "
                         "it is opened, and an open site [serves|supplies] [at most|no more than|not more than] its "
                         "capacity [in total|across all {custs}].|If a site is [opened|open], the [sum|total] of "
                         "what it [serves|supplies] [over|across] all {custs} [must|has to] [stay within|be at most] "
                         "its capacity; [otherwise|if it is not opened] it serves nothing.]"};
        f.objective = "[Minimize fixed opening costs plus serving costs.|Find the plan with the lowest total "
                      "cost (opening plus service).|The [goal|aim|objective] is to [keep|make] the [sum|total] of "
                      "the fixed opening costs and the serving costs as [low|small] as possible.|[Choose|Decide] "
                      "which sites to open and how to serve the {custs} so that [fixed costs plus serving costs|the "
                      "opening costs together with the serving costs] are [minimized|as low as possible].]";
        f.integrality = "[A site is either opened or not.|Opening decisions are yes/no.|[Each|Every] site is "
                        "[either fully opened or kept closed|opened completely or not at all].|[Partial|Fractional] "
                        "opening of a site is [not allowed|not possible|ruled out].]";
        f.decisions = "which sites to open (binary) and how much each open site serves each {cust}";
        f.latex = "\\begin{aligned}\n"
                  "\\min\\;& \\sum_{i\\in F} f_i\\,y_i + \\sum_{i\\in F}\\sum_{j\\in C} c_{ij}\\,x_{ij} \\\\\n"
                  "\\text{s.t.}\\;& \\sum_{i\\in F} x_{ij} = d_j && \\forall j\\in C \\quad\\text{(demand)} \\\\\n"
                  "& \\sum_{j\\in C} x_{ij} \\le u_i\\,y_i && \\forall i\\in F \\quad\\text{(cap)} \\\\\n"
                  "& x_{ij} \\ge 0,\\ y_i \\in \\{0,1\\}\n"
                  "\\end{aligned}";
        f.latex_symbols = {"$F$: {facs}; $C$: {custs}", "$f_i$, $u_i$: fixed cost and capacity of $i$",
                           "$d_j$: demand; $c_{ij}$: unit service cost",
                           "$y_i = 1$ if $i$ is opened; $x_{ij}$: {unit} served from $i$ to $j$"};
        f.code = R"(F = data["facilities"]
C = data["customers"]
y = {i: @var(f"y_{a + 1}", 0, 1, B) for a, i in enumerate(F)}
x = {(i, j): @var(f"x_{a + 1}_{b + 1}", 0, None, C) for a, i in enumerate(F) for b, j in enumerate(C)}
@obj(@sum(data["fixed_cost"][i] * y[i] for i in F) + @sum(data["unit_cost"][i][j] * x[i, j] for i in F for j in C))
for b, j in enumerate(C):
    @add(@sum(x[i, j] for i in F) == data["demand"][j], f"demand_{b + 1}")
for a, i in enumerate(F):
    @add(@sum(x[i, j] for j in C) - data["capacity"][i] * y[i] <= 0, f"cap_{a + 1}")
)";
        f.var_docs = {{"y", {"facilities"}, "{0} opened"}, {"x", {"facilities", "customers"}, "{unit} from {0} to {1}"}};
        f.con_docs = {{"demand", {"customers"}, "demand of {0}"}, {"cap", {"facilities"}, "capacity of {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
