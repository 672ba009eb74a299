// Transshipment: sources -> hubs -> customers; hubs conserve flow and have a throughput capacity. LP.
// Infeasible design: total demand exceeds total supply.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace transshipment_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const strings S = g.names("src", 1 + (d + 1) / 2 + g.r.int_in(0, 1));
    const strings H = g.names("hub", 1 + (d + 1) / 2);
    const strings C = g.names("dst", 2 + d);
    const int ns = (int)S.size(), nh = (int)H.size(), nc = (int)C.size();
    std::vector<double> supply(ns), cap(nh), demand(nc);
    for (auto& s : supply) s = 10 * g.r.int_in(6, 20);
    const double ratio = g.req.want == design::infeasible ? g.r.real_in(1.1, 1.3, 2) : g.r.real_in(0.6, 0.9, 2);
    const double total = sum(supply) * ratio;
    for (int j = 0; j < nc; j++) demand[j] = std::max(5.0, std::round(total / nc * g.r.real_in(0.7, 1.3, 2)));
    const double dem = sum(demand);
    for (auto& c : cap) c = 10 * std::ceil(dem * g.r.real_in(0.5, 0.9, 2) / 10);
    if (sum(cap) < dem * 1.1) cap[0] += 10 * std::ceil((dem * 1.1 - sum(cap)) / 10);
    std::vector<std::vector<double>> cin(ns, std::vector<double>(nh)), cout_(nh, std::vector<double>(nc));
    for (auto& row : cin)
        for (auto& c : row) c = g.r.int_in(1, 12);
    for (auto& row : cout_)
        for (auto& c : row) c = g.r.int_in(2, 15);
    ojson& data = g.inst.data;
    data["sources"] = list(S);
    data["hubs"] = list(H);
    data["customers"] = list(C);
    data["supply"] = map1(S, supply);
    data["hub_capacity"] = map1(H, cap);
    data["demand"] = map1(C, demand);
    data["cost_in"] = map2(S, H, cin);
    data["cost_out"] = map2(H, C, cout_);
    model& m = g.inst.m;
    std::vector<std::vector<int>> x(ns, std::vector<int>(nh)), y(nh, std::vector<int>(nc));
    for (int i = 0; i < ns; i++)
        for (int h = 0; h < nh; h++) x[i][h] = m.add_var(nm("x", i, h), var_type::continuous, 0, inf, cin[i][h]);
    for (int h = 0; h < nh; h++)
        for (int j = 0; j < nc; j++) y[h][j] = m.add_var(nm("y", h, j), var_type::continuous, 0, inf, cout_[h][j]);
    for (int i = 0; i < ns; i++) {
        std::vector<term> t;
        for (int h = 0; h < nh; h++) t.push_back({x[i][h], 1});
        m.add_con(nm("supply", i), t, row_sense::le, supply[i]);
    }
    for (int h = 0; h < nh; h++) {
        std::vector<term> in, bal;
        for (int i = 0; i < ns; i++) in.push_back({x[i][h], 1});
        bal = in;
        for (int j = 0; j < nc; j++) bal.push_back({y[h][j], -1});
        m.add_con(nm("balance", h), bal, row_sense::eq, 0);
        m.add_con(nm("hubcap", h), in, row_sense::le, cap[h]);
    }
    for (int j = 0; j < nc; j++) {
        std::vector<term> t;
        for (int h = 0; h < nh; h++) t.push_back({y[h][j], 1});
        m.add_con(nm("demand", j), t, row_sense::ge, demand[j]);
    }
}

}  // namespace transshipment_impl

TREX_FAMILY(transshipment) {
    static const family f = [] {
        family f;
        f.name = "transshipment";
        f.title = "Transshipment problem";
        f.can_infeasible = true;
        f.generate = transshipment_impl::generate;
        f.scenarios = {
            {"logistics", {{"org", "a parcel carrier"}, {"src", "factory"}, {"srcs", "factories"},
                           {"hub", "cross-dock"}, {"hubs", "cross-docks"}, {"dst", "customer region"},
                           {"dsts", "customer regions"}, {"unit", "pallets"}, {"src_pool", "plants"},
                           {"hub_pool", "warehouses"}, {"dst_pool", "regions"}}},
            {"retail", {{"org", "an online retailer"}, {"src", "supplier"}, {"srcs", "suppliers"},
                        {"hub", "fulfilment center"}, {"hubs", "fulfilment centers"}, {"dst", "city"},
                        {"dsts", "cities"}, {"unit", "parcels"}, {"src_pool", "regions"},
                        {"hub_pool", "warehouses"}, {"dst_pool", "cities"}}},
            {"environment", {{"org", "a recycling cooperative"}, {"src", "collection point"},
                             {"srcs", "collection points"}, {"hub", "sorting facility"},
                             {"hubs", "sorting facilities"}, {"dst", "processing plant"},
                             {"dsts", "processing plants"}, {"unit", "tons"}, {"src_pool", "cities"},
                             {"hub_pool", "sites"}, {"dst_pool", "plants"}}},
            {"healthcare", {{"org", "a vaccine distribution program"}, {"src", "manufacturer"},
                            {"srcs", "manufacturers"}, {"hub", "cold-storage hub"}, {"hubs", "cold-storage hubs"},
                            {"dst", "hospital"}, {"dsts", "hospitals"}, {"unit", "crates"},
                            {"src_pool", "plants"}, {"hub_pool", "cities"}, {"dst_pool", "hospitals"}}},
        };
        f.intro =
            "[{Org} sends goods from {n_sources} {srcs} through {n_hubs} {hubs} to {n_customers} {dsts}.|{Org} routes "
            "shipments from its {srcs} via {hubs} to {dsts}; nothing is shipped directly.|{Org}'s [goods|shipments] "
            "[travel|go] from {n_sources} {srcs} to {n_customers} {dsts}, [always passing through|always routed "
            "through] one of {n_hubs} {hubs}[; there are no direct shipments|].|[With|Using] {n_hubs} {hubs} [as|for] "
            "[intermediate points|transfer points], {org} [must|has to] [plan|organise] how goods [flow|move] from "
            "{n_sources} {srcs} to {n_customers} {dsts}, [since|as] [nothing|no goods] [may|can] be shipped directly.]";
        f.params = {
            {"sources", {}, "{srcs}", "", true},
            {"hubs", {}, "{hubs}", "", true},
            {"customers", {}, "{dsts}", "", true},
            {"supply", {"sources"}, "[supply|available supply|supply on hand]", "{unit}"},
            {"hub_capacity", {"hubs"}, "[throughput capacity|handling capacity|capacity for throughput]", "{unit}"},
            {"demand", {"customers"}, "[demand|requirement|amount required]", "{unit}"},
            {"cost_in", {"sources", "hubs"},
             "[cost per {unit} to the {hub}|shipping cost per {unit} to the {hub}|cost of each {unit} sent to the "
             "{hub}]",
             "$ per {unit}"},
            {"cost_out", {"hubs", "customers"},
             "[cost per {unit} from the {hub}|shipping cost per {unit} from the {hub}|cost of each {unit} sent from "
             "the {hub}]",
             "$ per {unit}"},
        };
        f.constraints = {
            "[A {src} cannot ship more than its supply.|Shipments out of each {src} are limited by its supply.|[No|Not "
            "a single] {src} [may|can] [send|ship] more [to the {hubs}|in total] than its supply.|[The total|The "
            "combined amount] shipped from [each|every] {src} [must not|may not|cannot] [exceed|be more than] its "
            "supply.|[For each|For every] {src}, [keep|hold] [total shipments|the total shipped] [within|at or below] "
            "its supply.]",
            "[Everything that enters a {hub} must leave it, and the amount entering may not exceed its "
            "capacity.|{Hubs} keep no stock: inflow equals outflow, and inflow is limited by the {hub}'s "
            "capacity.|[At|For] [each|every] {hub}, the amount [shipped out|sent on] [must|has to] equal the amount "
            "[received|coming in], and the amount [received|coming in] [must not|may not|cannot] [exceed|be more than] "
            "its [throughput|handling] capacity.|[No|Not a single] {hub} [may|can] [store|hold back] goods or "
            "[handle|take in] more than its capacity: [what comes in|its inflow] [goes out|is shipped on] in full, and "
            "[its inflow|what comes in] [stays within|is at most] the capacity.|[If|When] goods [reach|arrive at] a "
            "{hub}, [all of them|everything that arrives] [must|has to] be [sent on|forwarded] to {dsts}, and the "
            "[total|amount] arriving at [that|the] {hub} [may|can] not [exceed|be more than] its capacity.]",
            "[Each {dst} must receive at least its demand.|All demand has to be satisfied.|[No|Not a single] {dst} "
            "[may|can] receive less than its demand.|[The total|The combined amount] [delivered|shipped] to "
            "[each|every] {dst} from the {hubs} [must|has to] be at least its demand.|[For each|For every] {dst}, "
            "[deliveries|what arrives] [must|has to] [cover|meet] its demand [in full|completely].]"};
        f.objective =
            "[Minimize the total transportation cost.|Determine the flows that meet demand at the least total "
            "cost.|The [goal|aim|objective] is to [reach|achieve] the [lowest|smallest|least] [total|overall|combined] "
            "shipping cost [on both legs|into and out of the {hubs}].|[Decide|Choose|Plan] the shipments [to and from "
            "the {hubs}|on every leg] so that the [total|overall|combined] cost is [as low as "
            "possible|minimized].|Which [shipping plan|routing] [meets|covers] all demand at the "
            "[lowest|least|smallest] [total|overall] cost?]";
        f.decisions = "the flow from each {src} to each {hub} and from each {hub} to each {dst}";
        f.latex = "\\begin{aligned}\n"
                  "\\min\\;& \\sum_{i\\in S}\\sum_{h\\in H} a_{ih}x_{ih} + \\sum_{h\\in H}\\sum_{j\\in C} b_{hj}"
                  "y_{hj} \\\\\n"
                  "\\text{s.t.}\\;& \\sum_{h} x_{ih} \\le s_i && \\forall i\\in S \\quad\\text{(supply)} \\\\\n"
                  "& \\sum_{i} x_{ih} - \\sum_{j} y_{hj} = 0 && \\forall h\\in H \\quad\\text{(balance)} \\\\\n"
                  "& \\sum_{i} x_{ih} \\le u_h && \\forall h\\in H \\quad\\text{(hubcap)} \\\\\n"
                  "& \\sum_{h} y_{hj} \\ge d_j && \\forall j\\in C \\quad\\text{(demand)} \\\\\n"
                  "& x, y \\ge 0\n"
                  "\\end{aligned}";
        f.latex_symbols = {"$S$, $H$, $C$: {srcs}, {hubs}, {dsts}", "$s_i$, $u_h$, $d_j$: supply, capacity, demand",
                           "$a_{ih}$, $b_{hj}$: unit costs of the two legs",
                           "$x_{ih}$, $y_{hj}$: {unit} moved on each leg"};
        f.code = R"(S = data["sources"]
H = data["hubs"]
C = data["customers"]
x = {(i, h): @var(f"x_{a + 1}_{b + 1}", 0, None, C) for a, i in enumerate(S) for b, h in enumerate(H)}
y = {(h, j): @var(f"y_{b + 1}_{c + 1}", 0, None, C) for b, h in enumerate(H) for c, j in enumerate(C)}
@obj(@sum(data["cost_in"][i][h] * x[i, h] for i in S for h in H) + @sum(data["cost_out"][h][j] * y[h, j] for h in H for j in C))
for a, i in enumerate(S):
    @add(@sum(x[i, h] for h in H) <= data["supply"][i], f"supply_{a + 1}")
for b, h in enumerate(H):
    @add(@sum(x[i, h] for i in S) - @sum(y[h, j] for j in C) == 0, f"balance_{b + 1}")
    @add(@sum(x[i, h] for i in S) <= data["hub_capacity"][h], f"hubcap_{b + 1}")
for c, j in enumerate(C):
    @add(@sum(y[h, j] for h in H) >= data["demand"][j], f"demand_{c + 1}")
)";
        f.var_docs = {{"x", {"sources", "hubs"}, "{unit} from {0} to {1}"},
                      {"y", {"hubs", "customers"}, "{unit} from {0} to {1}"}};
        f.con_docs = {{"supply", {"sources"}, "supply of {0}"},
                      {"balance", {"hubs"}, "flow balance at {0}"},
                      {"hubcap", {"hubs"}, "capacity of {0}"},
                      {"demand", {"customers"}, "demand of {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
