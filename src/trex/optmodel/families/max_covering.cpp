// Maximal covering location: open at most p of the candidate sites; a demand point counts as covered when at least
// one opened site covers it (a given 0/1 relation); maximize the covered population. Binary y_s (site opened) and
// z_j (point covered) with z_j <= sum of y_s over the sites covering j. MILP. No designs: opening nothing is always
// feasible and the objective is bounded by the total population.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace max_covering_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    static const int site_count[] = {4, 7, 10, 14, 20};
    static const int point_count[] = {6, 12, 20, 28, 40};
    const int ns = site_count[d - 1] + g.r.int_in(0, 1), np = point_count[d - 1];
    const int p = std::max(2, ns / 4);
    const double density = 0.4 - 0.05 * d;
    const strings S = g.names("site", ns), P = g.names("point", np);
    std::vector<double> pop(np);
    for (auto& x : pop) x = 10 * g.r.int_in(5, 60);
    std::vector<std::vector<double>> cov(ns, std::vector<double>(np, 0));
    for (int s = 0; s < ns; s++)
        for (int j = 0; j < np; j++) cov[s][j] = g.r.chance(density) ? 1 : 0;
    for (int j = 0; j < np; j++) {  // every point is covered by some site
        bool any = false;
        for (int s = 0; s < ns; s++) any = any || cov[s][j] > 0;
        if (!any) cov[g.r.int_in(0, ns - 1)][j] = 1;
    }
    for (int s = 0; s < ns; s++) {  // every site covers some point
        bool any = false;
        for (int j = 0; j < np; j++) any = any || cov[s][j] > 0;
        if (!any) cov[s][g.r.int_in(0, np - 1)] = 1;
    }
    ojson& data = g.inst.data;
    data["sites"] = list(S);
    data["points"] = list(P);
    data["p"] = num(p);
    data["population"] = map1(P, pop);
    data["covers"] = map2(S, P, cov);
    model& m = g.inst.m;
    m.sense = obj_sense::maximize;
    std::vector<int> y(ns), z(np);
    for (int s = 0; s < ns; s++) y[s] = m.add_var(nm("y", s), var_type::binary, 0, 1, 0);
    for (int j = 0; j < np; j++) z[j] = m.add_var(nm("z", j), var_type::binary, 0, 1, pop[j]);
    std::vector<term> t;
    for (int s = 0; s < ns; s++) t.push_back({y[s], 1});
    m.add_con("open_limit", t, row_sense::le, p);
    for (int j = 0; j < np; j++) {
        std::vector<term> c = {{z[j], 1}};
        for (int s = 0; s < ns; s++)
            if (cov[s][j] > 0) c.push_back({y[s], -1});
        m.add_con(nm("cover", j), c, row_sense::le, 0);
    }
}

}  // namespace max_covering_impl

TREX_FAMILY(max_covering) {
    static const family f = [] {
        family f;
        f.name = "max_covering";
        f.title = "Maximal covering location problem";
        f.milp = true;
        f.generate = max_covering_impl::generate;
        f.scenarios = {
            {"healthcare",
             {{"org", "a county ambulance service"},
              {"site", "candidate ambulance base"},
              {"sites", "candidate ambulance bases"},
              {"point", "residential district"},
              {"points", "residential districts"},
              {"pop", "residents"},
              {"site_pool", "sites"},
              {"point_pool", "cities"}}},
            {"environment",
             {{"org", "a forest service"},
              {"site", "candidate fire lookout"},
              {"sites", "candidate fire lookouts"},
              {"point", "forest sector"},
              {"points", "forest sectors"},
              {"pop", "hectares"},
              {"site_pool", "regions"},
              {"point_pool", "nodes"}}},
            {"retail",
             {{"org", "a supermarket chain"},
              {"site", "candidate store location"},
              {"sites", "candidate store locations"},
              {"point", "neighbourhood"},
              {"points", "neighbourhoods"},
              {"pop", "households"},
              {"site_pool", "sites"},
              {"point_pool", "cities"}}},
            {"education",
             {{"org", "a rural library service"},
              {"site", "candidate mobile-library stop"},
              {"sites", "candidate mobile-library stops"},
              {"point", "village"},
              {"points", "villages"},
              {"pop", "school children"},
              {"site_pool", "schools"},
              {"point_pool", "cities"}}},
        };
        f.intro =
            "[{Org} can open only a limited number of its {n_sites} {sites} and wants them to reach as much of "
            "{n_points} {points} as possible.|{Org} is choosing among {n_sites} {sites} so as to cover the "
            "largest share of {n_points} {points}.|[Out of|From] {n_sites} {sites}, {org} [may|can] open only "
            "a limited number, and [it wants|the aim is for] them to [reach|cover] as [much|large a share] of "
            "{n_points} {points} as possible.|There are {n_sites} {sites} and {n_points} {points}; {org} "
            "[has to|must|wants to] [decide|choose] which sites to open, [up to a limit|within a limit on their "
            "number], so that the [{points} they reach|covered {points}] hold as many {pop} as possible.]";
        f.params = {
            {"sites", {}, "{sites}", "", true},
            {"points", {}, "{points}", "", true},
            {"p", {},
             "[maximum number of sites to open|largest number of sites that may be opened|limit on the number of "
             "sites opened]",
             ""},
            {"population", {"points"}, "size", "{pop}"},
            {"covers",
             {"sites", "points"},
             "[coverage indicator (1 if the site covers the {point}, else 0)|coverage flag (1 when the site "
             "covers the {point}, 0 otherwise)|coverage marker (1 if the {point} is covered by the site, else 0)]",
             "",
             false,
             "",
             "[{row} covers {cols}.|{row} would reach {cols}.|Opening {row} covers {cols}.|If {row} is opened, "
             "it [covers|reaches] {cols}.|{cols} would be [within reach of|covered by] {row}[ once it is "
             "opened| if it is opened].]"},
        };
        f.constraints = {
            "[At most the maximum number of sites may be opened.|No more sites than the given maximum can be "
            "opened.|The number of sites [opened|that are opened] [must not|may not|cannot] [exceed|go above|be "
            "more than] the [given|stated] maximum.|[Open|Choose] [at most|no more than|not more than] the "
            "[maximum|given maximum] number of sites.|It is [not allowed|not possible] to open more sites than "
            "the [given|stated] maximum.]",
            "[A {point} counts as covered only if at least one opened site covers it.|A {point} is covered only when "
            "some opened site reaches it.|[No|Not a single] {point} [may|can] count as covered [unless|if not] "
            "[at least one|some] opened site [covers|reaches] it.|For a {point} to count as "
            "covered, [at least one|some] [opened site|site that is opened] [must|has to] [cover|reach] it.|[If|"
            "When] none of the [opened sites|sites that are opened] [covers|reaches] a {point}, that {point} "
            "[does not count|cannot count] as covered.]"};
        f.objective =
            "[Maximize the total size (in {pop}) of the covered {points}.|Cover as many {pop} as possible.|The "
            "[goal|aim|objective] is to [make|get] the [total|combined|overall] size of the covered {points} (in "
            "{pop}) as [large|high] as possible.|[Choose|Open] [the|those] sites so that the [total|combined] "
            "number of {pop} in covered {points} is [maximized|as large as possible].|[Find|Determine] the "
            "[choice|set] of sites [with|that gives] the [largest|greatest|highest] [total|combined] size (in "
            "{pop}) of covered {points}.]";
        f.integrality =
            "[Each site is either opened or not, and each {point} is either covered or not.|Opening and coverage "
            "are yes/no decisions.|Whether a site is opened and whether a {point} is covered are "
            "[yes/no|binary|all-or-nothing] [decisions|choices].|[No|Not a single] site [may|can] be [partly|"
            "partially] opened, and [no|not a single] {point} [may|can] be [partly|partially] covered.|[Every|"
            "Each] site is [open or closed|opened or not], and [every|each] {point} [either counts as covered or "
            "not|is covered or not], [with nothing in between|never in part].]";
        f.decisions = "which sites to open (binary) and which {points} count as covered (binary)";
        f.latex =
            "\\begin{aligned}\n"
            "\\max\\;& \\sum_{j\\in J} w_j\\,z_j \\\\\n"
            "\\text{s.t.}\\;& \\sum_{s\\in S} y_s \\le p && \\quad\\text{(open\\_limit)} \\\\\n"
            "& z_j \\le \\sum_{s\\in S} a_{sj}\\,y_s && \\forall j\\in J \\quad\\text{(cover)} \\\\\n"
            "& y_s, z_j \\in \\{0,1\\}\n"
            "\\end{aligned}";
        f.latex_symbols = {"$S$: {sites}; $J$: {points}; $p$: maximum number of sites to open",
                           "$w_j$: size of $j$; $a_{sj} = 1$ if $s$ covers $j$",
                           "$y_s = 1$ if $s$ is opened; $z_j = 1$ if $j$ is covered"};
        f.code = R"(S = data["sites"]
J = data["points"]
y = {s: @var(f"y_{a + 1}", 0, 1, B) for a, s in enumerate(S)}
z = {j: @var(f"z_{b + 1}", 0, 1, B) for b, j in enumerate(J)}
@obj(@sum(data["population"][j] * z[j] for j in J))
@add(@sum(y[s] for s in S) <= data["p"], "open_limit")
for b, j in enumerate(J):
    @add(z[j] - @sum(y[s] for s in S if data["covers"][s][j] == 1) <= 0, f"cover_{b + 1}")
)";
        f.var_docs = {{"y", {"sites"}, "{0} opened"}, {"z", {"points"}, "{0} covered"}};
        f.con_docs = {{"open_limit", {}, "limit on opened sites"}, {"cover", {"points"}, "coverage of {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
