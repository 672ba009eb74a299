// Cutting stock without given patterns (Kantorovich formulation): K identical stock rolls of width W are available;
// item i is ordered d_i times at width w_i. y_k = 1 when roll k is cut, x_ik pieces of item i come from roll k
// (integer); a roll holds at most W of width and only when it is used, every order is met, and rolls are used in
// their listed order (y_k >= y_{k+1}, symmetry breaking); minimum number of rolls used. MILP. Infeasible design:
// the rolls available are too few for the total width ordered (K W below sum_i w_i d_i).
#include <algorithm>

#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace cutting_stock_patterns_impl {  // named, not anonymous: the families build as one unity translation unit

// Rolls first-fit decreasing needs for the pieces (an upper bound on the optimum).
int first_fit_rolls(const std::vector<double>& width, const std::vector<double>& demand, double W) {
    std::vector<double> pieces;
    for (size_t i = 0; i < width.size(); i++)
        for (int c = 0; c < (int)demand[i]; c++) pieces.push_back(width[i]);
    std::sort(pieces.rbegin(), pieces.rend());
    std::vector<double> room;
    for (double p : pieces) {
        bool placed = false;
        for (double& r : room)
            if (r >= p) {
                r -= p;
                placed = true;
                break;
            }
        if (!placed) room.push_back(W - p);
    }
    return (int)room.size();
}

void generate(gen_context& g) {
    const int d = g.req.difficulty;
    static const int base_items[] = {2, 3, 3, 4, 5};
    const int n = std::min(5, base_items[d - 1] + (d < 5 ? g.r.int_in(0, 1) : 0));
    const strings I = g.names("item", n);
    const double W = 10 * g.r.int_in(10, 25);
    std::vector<double> width(n), demand(n);
    // demands sized so the rolls needed grow with the difficulty (about 2-3 at difficulty 1, 8-10 at 5); drawn
    // (with the widths) until first-fit decreasing meets the width bound ceil(sum w_i d_i / W), which makes that count
    // the optimum
    const int target = 1 + 2 * d + g.r.int_in(0, 1);
    const double per_item = target * W * 0.8 / n;
    double total = 0;
    int ffd = 0;
    for (int tries = 0; tries < 300; tries++) {
        total = 0;
        for (int i = 0; i < n; i++) {
            width[i] = g.r.int_in((int)(W * 0.12), (int)(W * 0.45));
            while (std::count(width.begin(), width.begin() + i, width[i]) > 0) width[i] += 1;
        }
        for (int i = 0; i < n; i++) {
            demand[i] = std::max(1.0, std::round(per_item / width[i] * g.r.real_in(0.6, 1.4, 2)));
            total += width[i] * demand[i];
        }
        while (total <= 1.2 * W) {  // at least two rolls' worth of pieces
            const int i = g.r.int_in(0, n - 1);
            demand[i] += 1;
            total += width[i];
        }
        ffd = first_fit_rolls(width, demand, W);
        if (ffd == (int)std::ceil(total / W) && ffd * W - total >= 0.4 * W) break;
    }
    int K = ffd + 1;
    if (g.req.want == design::infeasible) K = (int)std::ceil(total / W) - 1;  // K W < total width ordered
    strings R;
    for (int k = 0; k < K; k++) R.push_back(fmt::format("{} {}", g.sc.words.at("roll_name"), k + 1));
    ojson& data = g.inst.data;
    data["rolls"] = list(R);
    data["items"] = list(I);
    data["stock_width"] = num(W);
    data["width"] = map1(I, width);
    data["demand"] = map1(I, demand);
    model& m = g.inst.m;
    std::vector<int> y(K);
    std::vector<std::vector<int>> x(n, std::vector<int>(K));
    for (int k = 0; k < K; k++) y[k] = m.add_var(nm("y", k), var_type::binary, 0, 1, 1);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < K; k++) x[i][k] = m.add_var(nm("x", i, k), var_type::integer, 0, inf, 0);
    for (int i = 0; i < n; i++) {
        std::vector<term> t;
        for (int k = 0; k < K; k++) t.push_back({x[i][k], 1});
        m.add_con(nm("demand", i), t, row_sense::ge, demand[i]);
    }
    for (int k = 0; k < K; k++) {
        std::vector<term> t;
        for (int i = 0; i < n; i++) t.push_back({x[i][k], width[i]});
        t.push_back({y[k], -W});
        m.add_con(nm("width", k), t, row_sense::le, 0);
    }
    for (int k = 0; k + 1 < K; k++) m.add_con(nm("order", k), {{y[k], 1}, {y[k + 1], -1}}, row_sense::ge, 0);
}

}  // namespace cutting_stock_patterns_impl

TREX_FAMILY(cutting_stock_patterns) {
    static const family f = [] {
        family f;
        f.name = "cutting_stock_patterns";
        f.title = "Cutting stock problem (patterns chosen by the model)";
        f.milp = true;
        f.can_infeasible = true;
        f.generate = cutting_stock_patterns_impl::generate;
        f.scenarios = {
            {"production",
             {{"org", "a paper converter"},
              {"stock", "jumbo roll"},
              {"stocks", "jumbo rolls"},
              {"roll_name", "Roll"},
              {"piece", "narrow roll"},
              {"pieces", "narrow rolls"},
              {"item", "customer order"},
              {"items", "customer orders"},
              {"item_set", "customer orders"},
              {"size", "width"},
              {"lunit", "cm"},
              {"item_pool", "products"}}},
            {"retail",
             {{"org", "an upholstery workshop"},
              {"stock", "bolt of fabric"},
              {"stocks", "bolts of fabric"},
              {"roll_name", "Bolt"},
              {"piece", "strip"},
              {"pieces", "strips"},
              {"item", "kind of strip"},
              {"items", "kinds of strip"},
              {"item_set", "kinds of strip (named after the furniture they cover)"},
              {"size", "width"},
              {"lunit", "cm"},
              {"item_pool", "furniture"}}},
            {"energy",
             {{"org", "an electricity utility"},
              {"stock", "cable drum"},
              {"stocks", "cable drums"},
              {"roll_name", "Drum"},
              {"piece", "cable run"},
              {"pieces", "cable runs"},
              {"item", "site"},
              {"items", "sites"},
              {"item_set", "sites"},
              {"size", "length"},
              {"lunit", "m"},
              {"item_pool", "sites"}}},
            {"environment",
             {{"org", "a carpentry shop working with reclaimed timber"},
              {"stock", "reclaimed beam"},
              {"stocks", "reclaimed beams"},
              {"roll_name", "Beam"},
              {"piece", "board"},
              {"pieces", "boards"},
              {"item", "kind of board"},
              {"items", "kinds of board"},
              {"item_set", "kinds of board (named after the furniture they are for)"},
              {"size", "length"},
              {"lunit", "cm"},
              {"item_pool", "furniture"}}},
        };
        f.intro =
            "[{Org} must cut {pieces} for {n_items} {items} out of identical {stocks}; no cutting patterns are "
            "given, so the plan decides which {pieces} come out of which {stock}.|{Org} has {n_rolls} identical "
            "{stocks} in stock and has to cut them into {pieces} for {n_items} {items}, choosing freely how each "
            "{stock} is cut.|[Out of|From] {n_rolls} identical {stocks}, {org} [needs to|has to|must] cut {pieces} "
            "for {n_items} {items}; [there are no given patterns|no patterns are fixed in advance], so [the plan "
            "itself|the plan] [decides|chooses] how [each|every] {stock} is cut.|There are {n_items} {items} to "
            "[serve|supply] at {org}, [whose|and their] {pieces} [must|have to] be cut from {n_rolls} identical "
            "{stocks}; how [each|every] {stock} is cut is [left to the plan|part of the decision].]";
        f.params = {
            {"rolls", {}, "[{stocks} available|available {stocks}|{stocks} on hand]", "", true},
            {"items", {}, "{item_set}", "", true},
            {"stock_width", {}, "[{size} of every {stock}|{size} of each {stock}|{stock} {size}]", "{lunit}"},
            {"width", {"items"}, "[{size} of one {piece}|{piece} {size}|{size} of each {piece}]", "{lunit}"},
            {"demand", {"items"}, "[number of {pieces} required|required number of {pieces}|{pieces} needed]", ""},
        };
        f.constraints = {
            "[The {pieces} cut from one {stock} may not exceed its {size} in total, and nothing can be cut from a "
            "{stock} that is not used.|A {stock} can only be cut if it is used, and the [total|combined] {size} of "
            "the {pieces} taken from it must fit within its {size}.|No {stock} may [give|yield] {pieces} whose "
            "[total|combined] {size} [exceeds|is more than] the {size} of the {stock}, and [unused {stocks} yield no "
            "{pieces}|a {stock} that is not used yields nothing].|If a {stock} is used, the [sum of the|total] "
            "{size} of the {pieces} cut from it [must|has to] be [at most|no more than] its {size}; [otherwise|if it "
            "is not used] no {pieces} [may|can] be cut from it.]",
            "[At least the required number of {pieces} must be cut for every one of the {items}.|Every requirement "
            "must be met in full: [each|every one] of the {items} [gets|receives] at least its required number of "
            "{pieces}.|[For each|For every one] of the {items}, the {pieces} cut [across|from] all {stocks} [must|"
            "have to] [total|add up to] [at least|no less than] the [required number|number required].|None of "
            "the {items} may [be short of|fall short of] its required number of {pieces}; [surplus|extra] {pieces} "
            "are [allowed|fine].]",
            "[To avoid equivalent plans, the {stocks} are used in the order listed: a {stock} may only be used if "
            "the one before it is used.|The {stocks} are opened in their listed order (a {stock} is used only if its "
            "predecessor is).|A {stock} [can|may] be used only if the {stock} [listed|just|immediately] before it is "
            "[used too|also used|used as well].|If a {stock} is used, [then] the one [immediately|directly|right] "
            "before it in the list [must|has to] be used [too|as well]; [this|that] [rules out|removes] "
            "[equivalent|symmetric] plans.]"};
        f.objective = "[Minimize the number of {stocks} used.|Use as few {stocks} as possible.|The [goal|aim|"
                      "objective] is to [use|cut into] [as few {stocks} as possible|the smallest number of {stocks}]."
                      "|[Plan|Organize] the cutting so that the number of {stocks} used is [minimized|as small as "
                      "possible].]";
        f.integrality =
            "[The number of {pieces} cut from a {stock} is a whole number, and each {stock} is either used or "
            "not.|{Pieces} come in whole numbers and a {stock} is used or left intact.|[Each|Every] {stock} is "
            "[either used or not|used or not, with no middle ground], and the {pieces} cut from it [are|come in] "
            "whole numbers.|[Fractional|Partial] {pieces} are [not allowed|ruled out], and the decision to use a "
            "{stock} is [yes/no|binary].]";
        f.decisions = "which {stocks} to use (binary) and how many {pieces} of each kind to cut from each (integer)";
        f.latex =
            "\\begin{aligned}\n"
            "\\min\\;& \\sum_{k\\in K} y_k \\\\\n"
            "\\text{s.t.}\\;& \\sum_{k\\in K} x_{ik} \\ge d_i && \\forall i\\in I \\quad\\text{(demand)} \\\\\n"
            "& \\sum_{i\\in I} w_i\\,x_{ik} \\le W\\,y_k && \\forall k\\in K \\quad\\text{(width)} \\\\\n"
            "& y_k \\ge y_{k+1} && k = 1,\\dots,|K|-1 \\quad\\text{(order)} \\\\\n"
            "& y_k \\in \\{0,1\\},\\; x_{ik} \\in \\mathbb{Z}_{\\ge 0}\n"
            "\\end{aligned}";
        f.latex_symbols = {"$K$: {stocks} (in the listed order); $I$: {items}", "$W$: {size} of a {stock}",
                           "$w_i$: {size} of a {piece} for $i$; $d_i$: number required",
                           "$y_k = 1$ if {stock} $k$ is used", "$x_{ik}$: {pieces} for $i$ cut from {stock} $k$"};
        f.code = R"(K = data["rolls"]
I = data["items"]
y = {k: @var(f"y_{b + 1}", 0, 1, B) for b, k in enumerate(K)}
x = {(i, k): @var(f"x_{a + 1}_{b + 1}", 0, None, I) for a, i in enumerate(I) for b, k in enumerate(K)}
@obj(@sum(y[k] for k in K))
for a, i in enumerate(I):
    @add(@sum(x[i, k] for k in K) >= data["demand"][i], f"demand_{a + 1}")
for b, k in enumerate(K):
    @add(@sum(data["width"][i] * x[i, k] for i in I) - data["stock_width"] * y[k] <= 0, f"width_{b + 1}")
for b in range(len(K) - 1):
    @add(y[K[b]] - y[K[b + 1]] >= 0, f"order_{b + 1}")
)";
        f.var_docs = {{"y", {"rolls"}, "{0} used"}, {"x", {"items", "rolls"}, "{pieces} for {0} cut from {1}"}};
        f.con_docs = {{"demand", {"items"}, "requirement of {0}"},
                      {"width", {"rolls"}, "{size} of {0}"},
                      {"order", {"rolls"}, "{0} used before the next one"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
