// Set cover: choose candidate sites (cost c_s) so every zone is covered by at least one chosen site; minimum cost.
// Every zone has two candidate sites at least (a zone with one would force it). MILP. Infeasible design: one zone
// is covered by no site.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace set_cover_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int ns = 4 + d + g.r.int_in(0, 2), nz = 5 + 2 * d;
    const strings S = g.names("site", ns), Z = g.names("zone", nz);
    std::vector<double> cost(ns);
    for (auto& c : cost) c = 10 * g.r.int_in(3, 20);
    std::vector<std::vector<double>> cov(ns, std::vector<double>(nz, 0));
    for (int s = 0; s < ns; s++)
        for (int z = 0; z < nz; z++) cov[s][z] = g.r.chance(0.3) ? 1 : 0;
    for (int z = 0; z < nz; z++) {  // every zone covered by two sites at least: no row forces a site
        int n = 0;
        for (int s = 0; s < ns; s++) n += cov[s][z] > 0;
        while (n < 2) {
            const int s = g.r.int_in(0, ns - 1);
            if (cov[s][z] > 0) continue;
            cov[s][z] = 1;
            n++;
        }
    }
    auto column = [&](int z) {
        std::vector<double> c(ns);
        for (int s = 0; s < ns; s++) c[s] = cov[s][z];
        return c;
    };
    for (int z = 1; z < nz; z++)  // no two zones with the same candidate sites (a repeated row)
        for (int tries = 0; tries < 4 * ns; tries++) {
            bool repeated = false;
            for (int y = 0; y < z && !repeated; y++) repeated = column(y) == column(z);
            if (!repeated) break;
            const int s = g.r.int_in(0, ns - 1);
            cov[s][z] = 1;  // one more candidate (never fewer: a zone keeps its two at least)
        }
    if (g.req.want == design::infeasible) {
        const int z = g.r.int_in(0, nz - 1);
        for (int s = 0; s < ns; s++) cov[s][z] = 0;
    }
    ojson& data = g.inst.data;
    data["sites"] = list(S);
    data["zones"] = list(Z);
    data["cost"] = map1(S, cost);
    data["covers"] = map2(S, Z, cov);
    model& m = g.inst.m;
    std::vector<int> y(ns);
    for (int s = 0; s < ns; s++) y[s] = m.add_var(nm("y", s), var_type::binary, 0, 1, cost[s]);
    for (int z = 0; z < nz; z++) {
        std::vector<term> t;
        for (int s = 0; s < ns; s++)
            if (cov[s][z] > 0) t.push_back({y[s], 1});
        m.add_con(nm("cover", z), t, row_sense::ge, 1);
    }
}

}  // namespace set_cover_impl

TREX_FAMILY(set_cover) {
    static const family f = [] {
        family f;
        f.name = "set_cover";
        f.title = "Set covering problem";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = set_cover_impl::generate;
        f.scenarios = {
            {"healthcare",
             {{"org", "a city's emergency services"},
              {"site", "candidate ambulance station"},
              {"sites", "candidate ambulance stations"},
              {"zone", "neighbourhood"},
              {"zones", "neighbourhoods"},
              {"site_pool", "sites"},
              {"zone_pool", "cities"}}},
            {"energy",
             {{"org", "a telecom operator"},
              {"site", "candidate tower location"},
              {"sites", "candidate tower locations"},
              {"zone", "village"},
              {"zones", "villages"},
              {"site_pool", "sites"},
              {"zone_pool", "cities"}}},
            {"environment",
             {{"org", "a wildfire agency"},
              {"site", "candidate lookout"},
              {"sites", "candidate lookouts"},
              {"zone", "forest sector"},
              {"zones", "forest sectors"},
              {"site_pool", "regions"},
              {"zone_pool", "nodes"}}},
            {"education",
             {{"org", "a tutoring network"},
              {"site", "candidate tutor"},
              {"sites", "candidate tutors"},
              {"zone", "subject"},
              {"zones", "subjects"},
              {"site_pool", "workers"},
              {"zone_pool", "courses"}}},
        };
        f.intro =
            "[{Org} wants to cover {n_zones} {zones} using some of {n_sites} {sites}.|{Org} is selecting among "
            "{n_sites} {sites} so that all {n_zones} {zones} are covered.|[There are|{Org} has] {n_sites} {sites} to "
            "choose from, and [each of the|every one of the] {n_zones} {zones} [must|has to] be covered by [at least "
            "one|one or more] of the chosen ones.|[To cover|So as to cover] all {n_zones} {zones}, {org} [must|has "
            "to|will] [pick|select|choose] a [subset|selection] of {n_sites} {sites}, [each covering|each of which "
            "covers] [certain|some of the] {zones}.]";
        f.params = {
            {"sites", {}, "{sites}", "", true},
            {"zones", {}, "{zones}", "", true},
            {"cost", {"sites"}, "cost", "thousand dollars"},
            {"covers",
             {"sites", "zones"},
             "[coverage indicator (1 if the {site} covers the {zone}, else 0)|coverage flag (1 when the {site} "
             "covers the {zone}, 0 otherwise)|indicator of coverage (1 if the {zone} is covered by the {site}, else "
             "0)]",
             "",
             false,
             "",
             "[{row} covers {cols}.|{row} would cover {cols}.|Choosing {row} covers {cols}.|[If|When] {row} is "
             "[selected|chosen], it covers {cols}.|{row} [provides|gives] coverage to {cols}.]"},
        };
        f.constraints = {
            "[Every {zone} must be covered by at least one selected {site}.|No {zone} may be left uncovered.|[For "
            "each|For every] {zone}, [at least one|one or more] of the {sites} [that cover it|covering it] must be "
            "[selected|chosen].|[Each|Every] {zone} [has to|must] [be covered by|get coverage from] [at least one "
            "selected {site}|one or more selected {sites}][, and more than one is allowed|].|[Select|Choose] the "
            "{sites} so that [no {zone} is|not a single {zone} is] left [without coverage|uncovered] by the "
            "[selection|chosen {sites}].]"};
        f.objective =
            "[Minimize the total cost of the selected {sites}.|Find the cheapest selection.|The [goal|aim|objective] "
            "is to [reach|achieve] the [lowest|smallest|least] [total|overall|combined] cost of the [selected|chosen] "
            "{sites}.|[Choose|Select|Pick] the {sites} so that their [total|combined] cost is [as low as "
            "possible|minimized].|Which [selection|set] of {sites} covers every {zone} at the [lowest|least|smallest] "
            "[total|overall] cost?]";
        f.integrality =
            "[Each {site} is either selected or not.|Selections are yes/no decisions.|A {site} [cannot|may not] be "
            "[partly|partially] [selected|chosen].|[Every|Each] {site} [must|has to] be [fully selected or not "
            "selected at all|either chosen in full or left out].|Whether a {site} is [selected|chosen] is [a yes/no|an "
            "all-or-nothing] [decision|choice].]";
        f.decisions = "which {sites} to select (binary)";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{s\\in S} c_s\\,y_s \\\\\n"
            "\\text{s.t.}\\;& \\sum_{s\\in S} a_{sz}\\,y_s \\ge 1 && \\forall z\\in Z \\quad\\text{(cover)} \\\\\n"
            "& y_s \\in \\{0,1\\}\n"
            "\\end{aligned}";
        f.latex_symbols = {"$S$: {sites}; $Z$: {zones}", "$c_s$: cost; $a_{sz} = 1$ if $s$ covers $z$",
                           "$y_s = 1$ if $s$ is selected"};
        f.code = R"(S = data["sites"]
Z = data["zones"]
y = {s: @var(f"y_{a + 1}", 0, 1, B) for a, s in enumerate(S)}
@obj(@sum(data["cost"][s] * y[s] for s in S))
for b, z in enumerate(Z):
    @add(@sum(y[s] for s in S if data["covers"][s][z] == 1) >= 1, f"cover_{b + 1}")
)";
        f.var_docs = {{"y", {"sites"}, "{0} selected"}};
        f.con_docs = {{"cover", {"zones"}, "coverage of {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
