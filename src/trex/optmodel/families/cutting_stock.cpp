// Cutting stock (pattern formulation): stock rolls of width W are cut with given patterns; order k needs q_k
// pieces of width w_k; minimum number of rolls. MILP.
#include <algorithm>

#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace cutting_stock_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int k = 2 + (g.req.difficulty + 1) / 2 + g.r.int_in(0, 1);
    const double W = 10 * g.r.int_in(8, 20);
    std::vector<double> width(k), qty(k);
    for (int i = 0; i < k; i++) {
        width[i] = g.r.int_in((int)(W * 0.12), (int)(W * 0.45));
        qty[i] = g.r.int_in(5, 30);
        while (std::count(width.begin(), width.begin() + i, width[i]) > 0) width[i] += 1;  // orders named by width
    }
    // patterns: one single-width pattern per order (as many pieces as fit) plus random maximal mixes
    std::vector<std::vector<double>> pats;
    for (int i = 0; i < k; i++) {
        std::vector<double> p(k, 0);
        p[i] = std::floor(W / width[i]);
        pats.push_back(p);
    }
    const int extra = 2 + g.req.difficulty + g.r.int_in(0, 2);
    for (int tries = 0; tries < 50 && (int)pats.size() < k + extra; tries++) {
        std::vector<double> p(k, 0);
        double used = 0;
        for (int step = 0; step < 20; step++) {
            int i = g.r.int_in(0, k - 1);
            if (used + width[i] <= W) {
                p[i] += 1;
                used += width[i];
            }
        }
        bool dup = std::find(pats.begin(), pats.end(), p) != pats.end();
        if (!dup && used > 0) pats.push_back(p);
    }
    const int np = (int)pats.size();
    strings O;
    for (int i = 0; i < k; i++) O.push_back(fmt::format("{} cm", width[i]));
    strings P;
    for (int p = 0; p < np; p++) P.push_back(fmt::format("P{}", p + 1));
    ojson& data = g.inst.data;
    data["orders"] = list(O);
    data["patterns"] = list(P);
    data["roll_width"] = num(W);
    data["width"] = map1(O, width);
    data["quantity"] = map1(O, qty);
    data["pieces"] = map2(P, O, pats);
    model& m = g.inst.m;
    std::vector<int> n(np);
    for (int p = 0; p < np; p++) n[p] = m.add_var(nm("n", p), var_type::integer, 0, inf, 1);
    for (int i = 0; i < k; i++) {
        std::vector<term> t;
        for (int p = 0; p < np; p++)
            if (pats[p][i] > 0) t.push_back({n[p], pats[p][i]});
        m.add_con(nm("order", i), t, row_sense::ge, qty[i]);
    }
}

}  // namespace cutting_stock_impl

TREX_FAMILY(cutting_stock) {
    static const family f = [] {
        family f;
        f.name = "cutting_stock";
        f.title = "Cutting stock problem (given patterns)";
        f.milp = true;
        f.generate = cutting_stock_impl::generate;
        f.scenarios = {
            {"production", {{"org", "a paper mill"}, {"stock", "jumbo roll"}, {"stocks", "jumbo rolls"},
                            {"piece", "roll"}, {"pieces", "rolls"}}},
            {"production", {{"org", "a steel service center"}, {"stock", "steel coil"}, {"stocks", "steel coils"},
                            {"piece", "strip"}, {"pieces", "strips"}}},
            {"retail", {{"org", "a fabric retailer"}, {"stock", "bolt of fabric"}, {"stocks", "bolts of fabric"},
                        {"piece", "piece"}, {"pieces", "pieces"}}},
            {"environment", {{"org", "a timber mill using reclaimed wood"}, {"stock", "reclaimed beam"},
                             {"stocks", "reclaimed beams"}, {"piece", "board"}, {"pieces", "boards"}}},
        };
        f.intro = "[{Org} cuts {stocks} into narrower {pieces} to fill {n_orders} orders.|{Org} receives "
                  "orders for {pieces} of {n_orders} widths, cut from standard {stocks}.|There are {n_orders} "
                  "orders [at|for] {org}, [each|every one] for {pieces} of [one|a single] width, [and they are|all] "
                  "cut from standard {stocks}.|[Standard|Full-width] {stocks} are cut by {org} into narrower {pieces} "
                  "[to fill|to meet|to satisfy] {n_orders} orders.]";
        f.params = {
            {"orders", {}, "[orders (by width)|orders (one per width)|orders (each for one width)]", "", true},
            {"patterns", {}, "[cutting patterns|available cutting patterns|patterns to cut with]", "", true},
            {"roll_width", {}, "[width of a {stock}|{stock} width|full width of one {stock}]", "cm"},
            {"width", {"orders"}, "width", "cm"},
            {"quantity", {"orders"}, "[number of {pieces} ordered|ordered number of {pieces}|{pieces} ordered]", ""},
            {"pieces", {"patterns", "orders"}, "[{pieces} obtained per {stock}|{pieces} cut from one {stock}|"
             "number of {pieces} yielded per {stock}]", ""},
        };
        f.constraints = {"[Each order must be filled: the patterns used must yield at least the ordered number "
                         "of {pieces}.|At least the ordered quantity of every width has to be produced.|[For "
                         "each|For every] order, the {pieces} [obtained|cut] [across|over] all patterns used [must|"
                         "have to] [reach|be at least] the ordered quantity; [surplus|extra] {pieces} are "
                         "[allowed|fine].|No order may [fall short|be short]: the [total|combined] number of its "
                         "{pieces} [cut|produced] [is at least|must be at least|may not be less than] the quantity "
                         "ordered.|[Cut enough {stocks}|Choose the cuts] so that [each|every] width [gets|receives] "
                         "[at least|no fewer than] the ordered number of {pieces}.]"};
        f.objective = "[Minimize the number of {stocks} cut.|Use as few {stocks} as possible.|The [goal|aim|"
                      "objective] is to cut the [smallest|lowest] [possible] [number|total number] of {stocks}.|"
                      "[Fill|Meet] the orders [while cutting|using] [as few {stocks} as possible|the fewest {stocks}]"
                      ".]";
        f.integrality = "[Each pattern is applied to a whole number of {stocks}.|{Stocks} are cut whole: the number "
                        "cut with each pattern is a whole number.|The number of {stocks} [cut|processed] with "
                        "[each|every] pattern [must|has to] be [an integer|a whole number].|[A pattern cannot be "
                        "applied to part of a {stock}|No pattern may be used on a fraction of a {stock}].]";
        f.decisions = "how many {stocks} to cut with each pattern (integer)";
        f.latex = "\\begin{aligned}\n"
                  "\\min\\;& \\sum_{p\\in P} n_p \\\\\n"
                  "\\text{s.t.}\\;& \\sum_{p\\in P} a_{pk}\\,n_p \\ge q_k && \\forall k\\in K \\quad\\text{(order)} "
                  "\\\\\n"
                  "& n_p \\in \\mathbb{Z}_{\\ge 0} && \\forall p\\in P\n"
                  "\\end{aligned}";
        f.latex_symbols = {"$P$: patterns; $K$: orders", "$a_{pk}$: {pieces} of order $k$ per {stock} cut with $p$",
                           "$q_k$: ordered quantity", "$n_p$: {stocks} cut with pattern $p$"};
        f.code = R"(K = data["orders"]
P = data["patterns"]
n = {p: @var(f"n_{a + 1}", 0, None, I) for a, p in enumerate(P)}
@obj(@sum(n[p] for p in P))
for b, k in enumerate(K):
    @add(@sum(data["pieces"][p][k] * n[p] for p in P if data["pieces"][p][k] > 0) >= data["quantity"][k], f"order_{b + 1}")
)";
        f.var_docs = {{"n", {"patterns"}, "{stocks} cut with pattern {0}"}};
        f.con_docs = {{"order", {"orders"}, "order {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
