// Transportation: ship from sources (supply s_i) to destinations (demand d_j) at unit cost c_ij, minimum total
// cost. LP. Infeasible design: total demand exceeds total supply.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace transportation_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const strings S = g.names("src", 1 + d + g.r.int_in(0, 1));
    const strings D = g.names("dst", 2 + d + g.r.int_in(0, 1));
    const int ns = (int)S.size(), nd = (int)D.size();
    std::vector<double> supply(ns), demand(nd);
    std::vector<std::vector<double>> cost(ns, std::vector<double>(nd));
    for (auto& s : supply) s = 10 * g.r.int_in(5, 20);
    const double ratio = g.req.want == design::infeasible ? g.r.real_in(1.1, 1.3, 2) : g.r.real_in(0.7, 0.95, 2);
    const double total = sum(supply) * ratio;
    std::vector<double> w(nd);
    for (auto& x : w) x = g.r.real_in(0.5, 1.5, 2);
    const double wsum = sum(w);
    for (int j = 0; j < nd; j++) demand[j] = std::max(5.0, std::round(total * w[j] / wsum));
    for (auto& row : cost)
        for (auto& c : row) c = g.r.int_in(2, 25);
    ojson& data = g.inst.data;
    data["sources"] = list(S);
    data["destinations"] = list(D);
    data["supply"] = map1(S, supply);
    data["demand"] = map1(D, demand);
    data["cost"] = map2(S, D, cost);
    model& m = g.inst.m;
    m.sense = obj_sense::minimize;
    std::vector<std::vector<int>> x(ns, std::vector<int>(nd));
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < nd; j++) x[i][j] = m.add_var(nm("x", i, j), var_type::continuous, 0, inf, cost[i][j]);
    for (int i = 0; i < ns; i++) {
        std::vector<term> t;
        for (int j = 0; j < nd; j++) t.push_back({x[i][j], 1});
        m.add_con(nm("supply", i), t, row_sense::le, supply[i]);
    }
    for (int j = 0; j < nd; j++) {
        std::vector<term> t;
        for (int i = 0; i < ns; i++) t.push_back({x[i][j], 1});
        m.add_con(nm("demand", j), t, row_sense::ge, demand[j]);
    }
}

}  // namespace transportation_impl

TREX_FAMILY(transportation) {
    static const family f = [] {
        family f;
        f.name = "transportation";
        f.title = "Transportation problem";
        f.can_infeasible = true;
        f.generate = transportation_impl::generate;
        f.scenarios = {
            {"logistics", {{"org", "a distribution company"}, {"src", "factory"}, {"srcs", "factories"},
                           {"dst", "city"}, {"dsts", "cities"}, {"good", "pallets of goods"}, {"unit", "pallets"},
                           {"src_pool", "plants"}, {"dst_pool", "cities"}}},
            {"energy", {{"org", "a regional power utility"}, {"src", "power plant"}, {"srcs", "power plants"},
                        {"dst", "city"}, {"dsts", "cities"}, {"good", "electricity"}, {"unit", "MWh"},
                        {"src_pool", "generators"}, {"dst_pool", "cities"}}},
            {"healthcare", {{"org", "a regional blood service"}, {"src", "blood bank"}, {"srcs", "blood banks"},
                            {"dst", "hospital"}, {"dsts", "hospitals"}, {"good", "units of blood"},
                            {"unit", "units"}, {"src_pool", "cities"}, {"dst_pool", "hospitals"}}},
            {"retail", {{"org", "a retail chain"}, {"src", "warehouse"}, {"srcs", "warehouses"}, {"dst", "store"},
                        {"dsts", "stores"}, {"good", "cases of stock"}, {"unit", "cases"},
                        {"src_pool", "warehouses"}, {"dst_pool", "cities"}}},
            {"education", {{"org", "a school district"}, {"src", "book depot"}, {"srcs", "book depots"},
                           {"dst", "school"}, {"dsts", "schools"}, {"good", "boxes of textbooks"},
                           {"unit", "boxes"}, {"src_pool", "regions"}, {"dst_pool", "schools"}}},
            {"environment", {{"org", "a waste authority"}, {"src", "collection center"},
                             {"srcs", "collection centers"}, {"dst", "recycling plant"},
                             {"dsts", "recycling plants"}, {"good", "tons of recyclables"}, {"unit", "tons"},
                             {"src_pool", "cities"}, {"dst_pool", "sites"}}},
        };
        f.intro =
            "[{Org} moves {good} from {n_sources} {srcs} to {n_destinations} {dsts}.|{Org} has to plan how to ship "
            "{good} from its {n_sources} {srcs} to {n_destinations} {dsts}.|Consider {org} that supplies "
            "{n_destinations} {dsts} with {good} from {n_sources} {srcs}.|[There are|{Org} runs] {n_sources} {srcs} "
            "[that must supply|supplying] {n_destinations} {dsts} with {good}, and [the shipments between them|the "
            "shipping plan] must be [planned|decided].|[Shipping|Sending] {good} from {n_sources} {srcs} to "
            "{n_destinations} {dsts} is [the task|the job] {org} [faces|has to plan].]";
        f.params = {
            {"sources", {}, "{srcs}", "", true},
            {"destinations", {}, "{dsts}", "", true},
            {"supply", {"sources"}, "[supply|available supply|supply on hand]", "{unit}"},
            {"demand", {"destinations"}, "[demand|requirement|amount required]", "{unit}"},
            {"cost", {"sources", "destinations"},
             "[unit shipping cost|cost per {unit} shipped|shipping cost per {unit}]", "$ per {unit}"},
        };
        f.constraints = {
            "[Each {src} cannot ship more than its supply.|No {src} may send out more than it has available.|[The "
            "total|The combined amount] shipped from [each|every] {src} [to all {dsts}|over all {dsts}] [must not|may "
            "not|cannot] [exceed|be more than] its supply.|[For each|For every] {src}, [shipments|what is shipped] [to "
            "the {dsts}|out] [must stay within|has to stay within|may not exceed] [its supply|the supply available "
            "there].|[Do not|Never] ship more [out of|from] a {src} than [its supply|the supply it has] [in "
            "total|altogether].]",
            "[Each {dst} must receive at least its demand.|The demand of every {dst} has to be met in full.|[The "
            "total|The combined amount] [received by|shipped to] [each|every] {dst} [from all {srcs}|over all {srcs}] "
            "[must|has to] be at least its demand.|[No|Not a single] {dst} [may|can] receive less than its "
            "demand.|[For each|For every] {dst}, [deliveries|the amounts shipped in] [must|have to] [cover|meet] [its "
            "demand|what it requires] [in full|completely].]"};
        f.objective =
            "[Find the shipping plan with the lowest total transportation cost.|The goal is to minimize the total "
            "shipping cost.|How should the shipments be planned to minimize total cost?|[Decide|Choose|Determine] how "
            "much to ship [on each route|from each {src} to each {dst}] so that the [total|overall|combined] shipping "
            "cost is [as low as possible|minimized].|[Meet|Satisfy] all demand [at the lowest|at the least|for the "
            "smallest] [total|overall|combined] [shipping|transportation] cost.]";
        f.decisions = "the amount of {good} shipped from each {src} to each {dst}";
        f.latex = "\\begin{aligned}\n"
                  "\\min\\;& \\sum_{i\\in S}\\sum_{j\\in D} c_{ij}\\,x_{ij} \\\\\n"
                  "\\text{s.t.}\\;& \\sum_{j\\in D} x_{ij} \\le s_i && \\forall i\\in S \\quad\\text{(supply)} \\\\\n"
                  "& \\sum_{i\\in S} x_{ij} \\ge d_j && \\forall j\\in D \\quad\\text{(demand)} \\\\\n"
                  "& x_{ij} \\ge 0 && \\forall i\\in S,\\ j\\in D\n"
                  "\\end{aligned}";
        f.latex_symbols = {"$S$: the {srcs}; $D$: the {dsts}", "$s_i$: supply of {src} $i$ ({unit})",
                           "$d_j$: demand of {dst} $j$ ({unit})", "$c_{ij}$: cost per {unit} from $i$ to $j$",
                           "$x_{ij}$: {unit} shipped from {src} $i$ to {dst} $j$"};
        f.code = R"(S = data["sources"]
D = data["destinations"]
x = {(i, j): @var(f"x_{a + 1}_{b + 1}", 0, None, C) for a, i in enumerate(S) for b, j in enumerate(D)}
@obj(@sum(data["cost"][i][j] * x[i, j] for i in S for j in D))
for a, i in enumerate(S):
    @add(@sum(x[i, j] for j in D) <= data["supply"][i], f"supply_{a + 1}")
for b, j in enumerate(D):
    @add(@sum(x[i, j] for i in S) >= data["demand"][j], f"demand_{b + 1}")
)";
        f.var_docs = {{"x", {"sources", "destinations"}, "{unit} shipped from {0} to {1}"}};
        f.con_docs = {{"supply", {"sources"}, "supply limit of {0}"}, {"demand", {"destinations"}, "demand of {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
