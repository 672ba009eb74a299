// Multi-stage production planning over periods: raw materials r bought at a per-period price, turned into
// intermediates m (a_mr units of r per unit of m, processing cost, hours in the first-stage plant) and into final
// products f (b_fm units of m per unit of f, assembly cost, hours in the final-stage plant); finals are sold up to a
// per-period market limit or kept in stock (holding cost). Plant capacities per period; a committed first-period
// order. LP maximize profit. Infeasible design: a committed order above the final plant's first-period capacity.
// Unbounded design: a final product with no market limit and no plant capacities at all.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace multi_stage_production_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    const int nr = std::vector<int>{2, 3, 3, 4, 5}[(size_t)d - 1];
    const int nm_ = std::vector<int>{2, 2, 3, 4, 5}[(size_t)d - 1];
    const int nf = std::vector<int>{2, 3, 4, 5, 6}[(size_t)d - 1];
    const int T = std::vector<int>{2, 3, 4, 6, 8}[(size_t)d - 1];
    const strings R = g.names("raw", nr), M = g.names("inter", nm_), F = g.names("final", nf), P = g.names("period", T);
    std::vector<std::vector<double>> rawc(nr, std::vector<double>(T)), a(nm_, std::vector<double>(nr, 0)),
        b(nf, std::vector<double>(nm_, 0));
    std::vector<double> proc(nm_), mh(nm_), asm_(nf), fh(nf), price(nf), hold(nf), dem(nf), cap1(T), cap2(T);
    for (int r = 0; r < nr; r++) {
        const int base = g.r.int_in(2, 10);
        for (int t = 0; t < T; t++) rawc[r][t] = base + g.r.int_in(0, 4);
    }
    for (int m = 0; m < nm_; m++) {
        const int k = g.r.int_in(1, std::min(3, nr));
        const std::vector<int> perm = g.r.permutation(nr);
        for (int j = 0; j < k; j++) a[m][perm[j]] = g.r.int_in(1, 3);
        proc[m] = g.r.int_in(1, 5);
        mh[m] = g.r.int_in(1, 4);
    }
    for (int f = 0; f < nf; f++) {
        const int k = g.r.int_in(1, std::min(2, nm_));
        const std::vector<int> perm = g.r.permutation(nm_);
        for (int j = 0; j < k; j++) b[f][perm[j]] = g.r.int_in(1, 2);
        asm_[f] = g.r.int_in(2, 8);
        fh[f] = g.r.int_in(1, 3);
        hold[f] = g.r.int_in(1, 4);
        dem[f] = 10 * g.r.int_in(2, 8);
        double worst = asm_[f];  // the most expensive material content over the periods
        for (int t = 0; t < T; t++) {
            double c = asm_[f];
            for (int m = 0; m < nm_; m++) {
                double cm = proc[m];
                for (int r = 0; r < nr; r++) cm += a[m][r] * rawc[r][t];
                c += b[f][m] * cm;
            }
            worst = std::max(worst, c);
        }
        price[f] = std::round(worst * g.r.real_in(1.2, 1.7, 2));
    }
    // capacities: a share of what the full market would need, varying by period (stock can bridge)
    double need1 = 0, need2 = 0;
    for (int f = 0; f < nf; f++) {
        need2 += fh[f] * dem[f];
        for (int m = 0; m < nm_; m++) need1 += mh[m] * b[f][m] * dem[f];
    }
    for (int t = 0; t < T; t++) {
        cap1[t] = 10 * std::round(need1 * g.r.real_in(0.5, 0.9, 2) / 10);
        cap2[t] = 10 * std::round(need2 * g.r.real_in(0.5, 0.9, 2) / 10);
    }
    const int k = g.r.int_in(0, nf - 1);  // the final product with a committed first-period order
    double order = std::floor(std::min(dem[k] / 2, std::min(
                                                       cap2[0] / fh[k], cap1[0] /
                                                                            [&] {
                                                                                double h = 0;
                                                                                for (int m = 0; m < nm_; m++)
                                                                                    h += mh[m] * b[k][m];
                                                                                return h;
                                                                            }()) /
                                                       2));
    order = std::max(1.0, order);
    if (g.req.want == design::infeasible) {
        order = std::floor(cap2[0] / fh[k]) + g.r.int_in(1, 10);
        dem[k] = std::max(dem[k], 10 * std::ceil(order / 10));
    }
    const bool unb = g.req.want == design::unbounded;
    const int open = unb ? g.r.int_in(0, nf - 1) : -1;  // no market limit
    ojson& data = g.inst.data;
    data["materials"] = list(R);
    data["intermediates"] = list(M);
    data["products"] = list(F);
    data["periods"] = list(P);
    data["material_cost"] = map2(R, P, rawc);
    data["recipe"] = map2(M, R, a);
    data["processing_cost"] = map1(M, proc);
    data["processing_hours"] = map1(M, mh);
    data["bill"] = map2(F, M, b);
    data["assembly_cost"] = map1(F, asm_);
    data["assembly_hours"] = map1(F, fh);
    data["price"] = map1(F, price);
    data["holding_cost"] = map1(F, hold);
    data["market_limit"] = ojson::object();
    for (int f = 0; f < nf; f++)
        if (f != open) data["market_limit"][F[(size_t)f]] = num(dem[f]);
    data["processing_capacity"] = ojson::object();
    data["assembly_capacity"] = ojson::object();
    if (!unb)
        for (int t = 0; t < T; t++) {
            data["processing_capacity"][P[(size_t)t]] = num(cap1[t]);
            data["assembly_capacity"][P[(size_t)t]] = num(cap2[t]);
        }
    data["committed"] = ojson::object();
    data["committed"][F[(size_t)k]] = num(order);
    model& mo = g.inst.m;
    mo.sense = obj_sense::maximize;
    std::vector<std::vector<int>> buy(nr, std::vector<int>(T)), mk(nm_, std::vector<int>(T)),
        z(nf, std::vector<int>(T)), sell(nf, std::vector<int>(T)), inv(nf, std::vector<int>(T));
    for (int t = 0; t < T; t++) {
        for (int r = 0; r < nr; r++) buy[r][t] = mo.add_var(nm("buy", r, t), var_type::continuous, 0, inf, -rawc[r][t]);
        for (int m = 0; m < nm_; m++) mk[m][t] = mo.add_var(nm("make", m, t), var_type::continuous, 0, inf, -proc[m]);
        for (int f = 0; f < nf; f++) {
            z[f][t] = mo.add_var(nm("assemble", f, t), var_type::continuous, 0, inf, -asm_[f]);
            sell[f][t] = mo.add_var(nm("sell", f, t), var_type::continuous, 0, f == open ? inf : dem[f], price[f]);
            inv[f][t] = mo.add_var(nm("stock", f, t), var_type::continuous, 0, inf, -hold[f]);
        }
    }
    for (int t = 0; t < T; t++) {
        for (int r = 0; r < nr; r++) {
            std::vector<term> tm = {{buy[r][t], 1}};
            for (int m = 0; m < nm_; m++)
                if (a[m][r] != 0) tm.push_back({mk[m][t], -a[m][r]});
            mo.add_con(nm("material", r, t), tm, row_sense::eq, 0);
        }
        for (int m = 0; m < nm_; m++) {
            std::vector<term> tm = {{mk[m][t], 1}};
            for (int f = 0; f < nf; f++)
                if (b[f][m] != 0) tm.push_back({z[f][t], -b[f][m]});
            mo.add_con(nm("intermediate", m, t), tm, row_sense::eq, 0);
        }
        for (int f = 0; f < nf; f++) {
            std::vector<term> tm = {{z[f][t], 1}, {sell[f][t], -1}, {inv[f][t], -1}};
            if (t > 0) tm.push_back({inv[f][t - 1], 1});
            mo.add_con(nm("stock", f, t), tm, row_sense::eq, 0);
        }
        if (!unb) {
            std::vector<term> t1, t2;
            for (int m = 0; m < nm_; m++) t1.push_back({mk[m][t], mh[m]});
            for (int f = 0; f < nf; f++) t2.push_back({z[f][t], fh[f]});
            mo.add_con(nm("processing", t), t1, row_sense::le, cap1[t]);
            mo.add_con(nm("assembly", t), t2, row_sense::le, cap2[t]);
        }
    }
    mo.add_con(nm("order", k), {{sell[k][0], 1}}, row_sense::ge, order);
}

}  // namespace multi_stage_production_impl

TREX_FAMILY(multi_stage_production) {
    static const family f = [] {
        family f;
        f.name = "multi_stage_production";
        f.title = "Multi-stage production planning (bill of materials)";
        f.can_infeasible = true;
        f.can_unbounded = true;
        f.generate = multi_stage_production_impl::generate;
        f.scenarios = {
            {"production",
             {{"org", "an electronics manufacturer"},
              {"raws", "raw materials"},
              {"inters", "circuit boards"},
              {"inter", "circuit board"},
              {"finals", "device models"},
              {"final", "device"},
              {"stage1", "board shop"},
              {"stage2", "assembly line"},
              {"raw_pool", "elements"},
              {"inter_pool", "nodes"},
              {"final_pool", "products"},
              {"period_pool", "periods"}}},
            {"energy",
             {{"org", "a refinery"},
              {"raws", "crude oils"},
              {"inters", "blending components"},
              {"inter", "component"},
              {"finals", "fuel grades"},
              {"final", "fuel grade"},
              {"stage1", "distillation unit"},
              {"stage2", "blending unit"},
              {"raw_pool", "regions"},
              {"inter_pool", "fuel_components"},
              {"final_pool", "products"},
              {"period_pool", "weeks"}}},
            {"environment",
             {{"org", "a composting company"},
              {"raws", "feedstocks"},
              {"inters", "compost bases"},
              {"inter", "compost base"},
              {"finals", "soil mixes"},
              {"final", "soil mix"},
              {"stage1", "composting hall"},
              {"stage2", "mixing line"},
              {"raw_pool", "feedstocks"},
              {"inter_pool", "nodes"},
              {"final_pool", "products"},
              {"period_pool", "periods"}}},
            {"retail",
             {{"org", "a bakery chain's central kitchen"},
              {"raws", "ingredients"},
              {"inters", "doughs"},
              {"inter", "dough"},
              {"finals", "product lines"},
              {"final", "product line"},
              {"stage1", "mixing room"},
              {"stage2", "baking line"},
              {"raw_pool", "foods"},
              {"inter_pool", "nodes"},
              {"final_pool", "products"},
              {"period_pool", "weeks"}}},
        };
        f.intro =
            "[{Org} turns {n_materials} {raws} into {n_intermediates} {inters} and these into {n_products} {finals}, "
            "and plans the next {n_periods} periods.|{Org} runs a two-stage process: the {stage1} makes {inters} "
            "from {raws}, and the {stage2} makes {finals} from {inters}. It plans {n_periods} periods.|[Over|For] "
            "the [next|coming] {n_periods} periods, {org} [has to|must|needs to] plan [a two-stage process|two "
            "production stages]: {n_materials} {raws} [become|are turned into] {n_intermediates} {inters} in the "
            "{stage1}, and [these|the {inters}] [become|are turned into] {n_products} {finals} in the "
            "{stage2}.|In the {stage1} of {org}, {n_materials} {raws} are [made|turned|processed] into "
            "{n_intermediates} {inters}; the {stage2} then [makes|turns out|produces] {n_products} {finals} from "
            "[them|those {inters}], and [a plan|the plan] [is needed|must be made] for {n_periods} periods.]";
        f.params = {
            {"materials", {}, "{raws}", "", true},
            {"intermediates", {}, "{inters}", "", true},
            {"products", {}, "{finals}", "", true},
            {"periods", {}, "periods", "", true},
            {"material_cost", {"materials", "periods"}, "[purchase price|buying price|unit purchase price]",
             "$ per unit"},
            {"recipe", {"intermediates", "materials"},
             "[{raws} used per unit of {inter}|{raws} needed for each unit of {inter}|amount of {raws} per unit "
             "of {inter}]",
             "units"},
            {"processing_cost", {"intermediates"},
             "[processing cost in the {stage1}|cost of processing in the {stage1}|{stage1} processing cost]",
             "$ per unit"},
            {"processing_hours", {"intermediates"},
             "[{stage1} hours per unit|{stage1} hours for each unit|hours in the {stage1} per unit]", "hours"},
            {"bill", {"products", "intermediates"},
             "[{inters} used per unit of {final}|{inters} needed for each unit of {final}|amount of {inters} per "
             "unit of {final}]",
             "units"},
            {"assembly_cost", {"products"},
             "[processing cost in the {stage2}|cost of processing in the {stage2}|{stage2} processing cost]",
             "$ per unit"},
            {"assembly_hours", {"products"},
             "[{stage2} hours per unit|{stage2} hours for each unit|hours in the {stage2} per unit]", "hours"},
            {"price", {"products"}, "[selling price|sales price|price per unit sold]", "$ per unit"},
            {"holding_cost", {"products"},
             "[holding cost per unit kept to the next period|cost of holding each unit carried to the next "
             "period|holding cost for every unit kept into the next period]",
             "$"},
            {"market_limit", {"products"},
             "[most that can be sold per period|largest amount that can be sold in a period|sales limit per "
             "period]",
             "units", false, "{have} no sales limit"},
            {"processing_capacity",
             {"periods"},
             "[{stage1} hours available|available {stage1} hours|hours available in the {stage1}]",
             "hours",
             false,
             "{have} no {stage1} limit"},
            {"assembly_capacity", {"periods"},
             "[{stage2} hours available|available {stage2} hours|hours available in the {stage2}]", "hours", false,
             "{have} no {stage2} limit"},
            {"committed",
             {"products"},
             "[first-period order already promised to a customer|order already promised to a customer for the "
             "first period|customer order already committed for the first period]",
             "units",
             false,
             "{have} no committed order"},
        };
        f.constraints = {
            "[{Raws} are bought in the period they are used; none are stored.|Each period's purchases of {raws} "
            "equal what the {stage1} consumes.|[No {raws} are|None of the {raws} are] [kept in stock|stored]: "
            "[each period's|a period's] purchases [match|are exactly] what the {stage1} [uses|consumes] [that "
            "period|in it].|[In every period|Period by period], the amount of [each|every] [raw input|one of the "
            "{raws}] [bought|purchased] [must equal|has to equal|equals] the amount the {stage1} [uses|consumes] "
            "[to make {inters}|for its {inters}] in that period.]",
            "[{Inters} are made in the period the {stage2} uses them.|The {inters} made in a period are exactly "
            "those consumed by the {stage2} in that period.|[Any|All the] {inters} [made|produced] in a "
            "period [go straight to|are used at once by] the {stage2} [in the same period|that period]; [none "
            "are|no {inters} are] [stored|carried over].|[For|In] [each|every] period, the [output|production] of "
            "[each|every] {inter} [must equal|has to equal|equals] [what|the amount] the {stage2} [uses of "
            "it|uses|consumes] in that period[, with nothing stored|].]",
            "[{Finals} start with no stock; each period's output plus the stock carried in equals sales plus the "
            "stock carried out.|Stock of {finals} starts at zero and is carried from period to period: output plus "
            "incoming stock is sold or kept.|[Starting from|With] [zero|no] [initial stock|opening stock] of "
            "{finals}, [in every period|each period] [the stock carried in plus output|output plus incoming stock] "
            "[equals sales plus|is split between sales and] the stock carried [out|to the next period].|For "
            "[each|every] {final} [and|in each] period, [what is sold plus what is kept|sales plus the stock "
            "carried out] [must equal|has to equal|equals] [output plus the stock carried in|the stock carried in "
            "plus output], [stock being|with stock] zero before the first period.]",
            "[Sales of a {final} per period cannot exceed its market limit.|Each {final} has a per-period market "
            "limit where stated.|[Where a market limit is given|For a {final} with a market limit], [its sales|"
            "sales] in [any|each] period [may not|cannot] [exceed|go above] [that limit|it].|[No|Not a single] "
            "{final} [may|can] be sold [beyond|above] its [market|sales] limit in [any|a] period, [where one is "
            "stated|where it has one].]",
            "[The hours used in the {stage1} and in the {stage2} may not exceed the hours available in each "
            "period.|Both the {stage1} and the {stage2} have limited hours per period.|[In every period|Period by "
            "period], [neither the {stage1} nor the {stage2}|no stage, whether the {stage1} or the {stage2},] "
            "[may|can] [use|take] more hours than [it has available|are available to it].|[Each|Every] period, "
            "the hours [used|needed] in the {stage1} and [those|the hours] [used|needed] in the {stage2} [must "
            "stay within|must not exceed|may not exceed] [what each has available|the hours available to each], "
            "[wherever a limit is given|where a limit is stated].]",
            "[Committed first-period orders must be delivered.|The first period's sales must cover the committed "
            "orders.|[The orders committed for the first period|First-period commitments] [have to|must] be [met|"
            "delivered] [in full|from that period's sales].|[For|Of] [each|every] {final} with a committed order, "
            "[at least that much|no less than the order] [must|has to] be sold in the first period.]"};
        f.objective =
            "[Maximize profit: sales revenue minus purchase, processing and holding costs.|Find the plan with the "
            "largest revenue minus purchasing, processing and stock-holding costs.|[The aim is|Aim for] the "
            "[highest|largest] profit: [what sales bring in|revenue from sales] [less|minus] the [costs of "
            "buying, processing and holding stock|purchase, processing and holding costs].|[Choose|Plan|Decide] "
            "purchases, production, sales and stock so that [sales revenue minus|revenue from sales less] [all|"
            "the] purchase, processing and holding costs is [as large as possible|maximized].]";
        f.decisions = "purchases, intermediate and final production, sales and stock in each period";
        f.latex =
            "\\begin{aligned}\n"
            "\\max\\;& \\sum_{t\\in T}\\Big(\\sum_{f\\in F} (p_f\\,s_{ft} - e_f\\,z_{ft} - h_f\\,v_{ft}) - "
            "\\sum_{m\\in M} g_m\\,y_{mt} - \\sum_{r\\in R} c_{rt}\\,u_{rt}\\Big) \\\\\n"
            "\\text{s.t.}\\;& u_{rt} - \\sum_{m} a_{mr}\\,y_{mt} = 0 && \\forall r, t \\quad\\text{(material)} \\\\\n"
            "& y_{mt} - \\sum_{f} b_{fm}\\,z_{ft} = 0 && \\forall m, t \\quad\\text{(intermediate)} \\\\\n"
            "& v_{f,t-1} + z_{ft} - s_{ft} - v_{ft} = 0 && \\forall f, t,\\ v_{f0} = 0 \\quad\\text{(stock)} \\\\\n"
            "& \\sum_{m} q_m\\,y_{mt} \\le Q_t,\\ \\ \\sum_{f} k_f\\,z_{ft} \\le K_t && \\forall t \\text{ with a "
            "limit} \\quad\\text{(processing, assembly)} \\\\\n"
            "& s_{f1} \\ge o_f && \\forall f \\text{ with an order} \\quad\\text{(order)} \\\\\n"
            "& 0 \\le s_{ft} \\le D_f \\text{ (where limited)},\\ u, y, z, v \\ge 0\n"
            "\\end{aligned}";
        f.latex_symbols = {"$R$: {raws}; $M$: {inters}; $F$: {finals}; $T$: periods",
                           "$c_{rt}$: purchase price; $a_{mr}$, $b_{fm}$: recipe and bill quantities",
                           "$g_m$, $e_f$: processing costs; $q_m$, $k_f$: hours per unit; $Q_t$, $K_t$: hours "
                           "available",
                           "$p_f$: price; $h_f$: holding cost; $D_f$: market limit; $o_f$: committed order",
                           "$u_{rt}$: purchases; $y_{mt}$: {inters} made; $z_{ft}$: {finals} made; $s_{ft}$: sales; "
                           "$v_{ft}$: end stock"};
        f.code = R"(R = data["materials"]
M = data["intermediates"]
F = data["products"]
T = data["periods"]
lim = data["market_limit"]
buy, make, asm, sell, stock = {}, {}, {}, {}, {}
for b, t in enumerate(T):
    for a, r in enumerate(R):
        buy[r, t] = @var(f"buy_{a + 1}_{b + 1}", 0, None, C)
    for a, k in enumerate(M):
        make[k, t] = @var(f"make_{a + 1}_{b + 1}", 0, None, C)
    for a, p in enumerate(F):
        asm[p, t] = @var(f"assemble_{a + 1}_{b + 1}", 0, None, C)
        sell[p, t] = @var(f"sell_{a + 1}_{b + 1}", 0, lim[p] if p in lim else @inf(), C)
        stock[p, t] = @var(f"stock_{a + 1}_{b + 1}", 0, None, C)
@obj(@sum(data["price"][p] * sell[p, t] - data["assembly_cost"][p] * asm[p, t] - data["holding_cost"][p] * stock[p, t] for p in F for t in T) - @sum(data["processing_cost"][k] * make[k, t] for k in M for t in T) - @sum(data["material_cost"][r][t] * buy[r, t] for r in R for t in T))
for b, t in enumerate(T):
    for a, r in enumerate(R):
        @add(buy[r, t] - @sum(data["recipe"][k][r] * make[k, t] for k in M if data["recipe"][k][r] != 0) == 0, f"material_{a + 1}_{b + 1}")
    for a, k in enumerate(M):
        @add(make[k, t] - @sum(data["bill"][p][k] * asm[p, t] for p in F if data["bill"][p][k] != 0) == 0, f"intermediate_{a + 1}_{b + 1}")
    for a, p in enumerate(F):
        prev = stock[p, T[b - 1]] if b > 0 else 0
        @add(prev + asm[p, t] - sell[p, t] - stock[p, t] == 0, f"stock_{a + 1}_{b + 1}")
    if t in data["processing_capacity"]:
        @add(@sum(data["processing_hours"][k] * make[k, t] for k in M) <= data["processing_capacity"][t], f"processing_{b + 1}")
    if t in data["assembly_capacity"]:
        @add(@sum(data["assembly_hours"][p] * asm[p, t] for p in F) <= data["assembly_capacity"][t], f"assembly_{b + 1}")
for a, p in enumerate(F):
    if p in data["committed"]:
        @add(sell[p, T[0]] >= data["committed"][p], f"order_{a + 1}")
)";
        f.var_docs = {{"buy", {"materials", "periods"}, "units of {0} bought in {1}"},
                      {"make", {"intermediates", "periods"}, "units of {0} made in {1}"},
                      {"assemble", {"products", "periods"}, "units of {0} made in {1}"},
                      {"sell", {"products", "periods"}, "units of {0} sold in {1}"},
                      {"stock", {"products", "periods"}, "stock of {0} at the end of {1}"}};
        f.con_docs = {{"material", {"materials", "periods"}, "purchases of {0} in {1}"},
                      {"intermediate", {"intermediates", "periods"}, "balance of {0} in {1}"},
                      {"stock", {"products", "periods"}, "stock balance of {0} in {1}"},
                      {"processing", {"periods"}, "first-stage hours in {0}"},
                      {"assembly", {"periods"}, "second-stage hours in {0}"},
                      {"order", {"products"}, "committed order of {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
