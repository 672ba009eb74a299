// Bin packing: pack items of size s_i into identical bins of capacity C, minimum number of bins used. MILP.
// The bins offered are as many as first-fit-decreasing needs (an upper bound).
#include <algorithm>

#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace bin_packing_impl {  // named, not anonymous: the families build as one unity translation unit

void generate(gen_context& g) {
    const int n = 4 + g.req.difficulty + g.r.int_in(0, 2);
    const double cap = 10 * g.r.int_in(5, 12);
    std::vector<double> size(n);
    for (auto& s : size) s = g.r.int_in((int)(cap * 0.15), (int)(cap * 0.6));
    // first-fit decreasing bin count
    std::vector<double> sorted = size, loads;
    std::sort(sorted.rbegin(), sorted.rend());
    for (double s : sorted) {
        bool placed = false;
        for (double& l : loads)
            if (l + s <= cap) {
                l += s;
                placed = true;
                break;
            }
        if (!placed) loads.push_back(s);
    }
    const int nb = (int)loads.size();
    const strings I = g.names("item", n), B = g.names("bin", nb);
    ojson& data = g.inst.data;
    data["items"] = list(I);
    data["bins"] = list(B);
    data["size"] = map1(I, size);
    data["capacity"] = num(cap);
    model& m = g.inst.m;
    std::vector<int> y(nb);
    for (int b = 0; b < nb; b++) y[b] = m.add_var(nm("y", b), var_type::binary, 0, 1, 1);
    std::vector<std::vector<int>> x(n, std::vector<int>(nb));
    for (int i = 0; i < n; i++)
        for (int b = 0; b < nb; b++) x[i][b] = m.add_var(nm("x", i, b), var_type::binary, 0, 1, 0);
    for (int i = 0; i < n; i++) {
        std::vector<term> t;
        for (int b = 0; b < nb; b++) t.push_back({x[i][b], 1});
        m.add_con(nm("assign", i), t, row_sense::eq, 1);
    }
    for (int b = 0; b < nb; b++) {
        std::vector<term> t;
        for (int i = 0; i < n; i++) t.push_back({x[i][b], size[i]});
        t.push_back({y[b], -cap});
        m.add_con(nm("cap", b), t, row_sense::le, 0);
    }
}

}  // namespace bin_packing_impl

TREX_FAMILY(bin_packing) {
    static const family f = [] {
        family f;
        f.name = "bin_packing";
        f.title = "Bin packing problem";
        f.milp = true;
        f.generate = bin_packing_impl::generate;
        f.scenarios = {
            {"logistics", {{"org", "a moving company"}, {"item", "crate"}, {"items", "crates"}, {"bin", "truck"},
                           {"bins", "trucks"}, {"unit", "cubic feet"}, {"item_pool", "furniture"},
                           {"bin_pool", "vehicles"}}},
            {"generic", {{"org", "a data center"}, {"item", "virtual machine"}, {"items", "virtual machines"},
                         {"bin", "server"}, {"bins", "servers"}, {"unit", "GB of memory"},
                         {"item_pool", "jobs"}, {"bin_pool", "machines"}}},
            {"education", {{"org", "a school"}, {"item", "exam group"}, {"items", "exam groups"},
                           {"bin", "exam hall"}, {"bins", "exam halls"}, {"unit", "seats"},
                           {"item_pool", "courses"}, {"bin_pool", "schools"}}},
            {"environment", {{"org", "a recycling depot"}, {"item", "load"}, {"items", "loads"},
                             {"bin", "container"}, {"bins", "containers"}, {"unit", "kg"},
                             {"item_pool", "ingredients"}, {"bin_pool", "sites"}}},
        };
        f.intro = "[{Org} [has to|must|needs to] place {n_items} {items} into identical {bins}.|{Org} needs to pack "
                  "{n_items} {items}; {n_bins} {bins} are on hand.|There are {n_items} {items} [to be packed|to "
                  "place] at {org}, and {n_bins} identical {bins} are [available|on hand] for them.|[Using|With] "
                  "[up to|at most] {n_bins} identical {bins}, {org} [has to|must] [pack|place] {n_items} {items}.]";
        f.params = {
            {"items", {}, "{items}", "", true},
            {"bins", {}, "[{bins} available|available {bins}|{bins} on hand]", "", true},
            {"size", {"items"}, "size", "{unit}"},
            {"capacity", {}, "[capacity of each {bin}|capacity per {bin}|{bin} capacity]", "{unit}"},
        };
        f.constraints = {"[Every {item} goes into exactly one {bin}.|Each {item} must be placed in exactly one "
                         "{bin}.|No {item} may be [left out|left unpacked] or [split|divided] [among|between] "
                         "{bins}: it [goes into|is put in] exactly one {bin}.|[Exactly one|One and only one] {bin} "
                         "[must|has to] [receive|hold] [each|every] {item}.]",
                         "[The [total size of the|combined size of the] {items} in a {bin} cannot exceed its "
                         "capacity, and only {bins} in use may hold {items}.|A {bin}'s load (the [total|combined] "
                         "size of its {items}) is limited by its capacity, and [an unused {bin} holds no {items}|no "
                         "{item} may go into a {bin} that is not used].|No {bin} may [hold|take] {items} whose "
                         "[total|combined] size [exceeds|is more than] the capacity, and {items} [can|may] only go "
                         "into {bins} [that are used|in use].|If a {bin} is used, the [sum of the sizes|total size] of "
                         "the {items} [in it|placed in it] [must|has to] be [at most|no more than] the capacity; "
                         "[otherwise|if it is not used] it [must stay|stays] empty.]"};
        f.objective = "[Minimize the number of {bins} used.|Use as few {bins} as possible.|The [goal|aim|objective] "
                      "is to use [the smallest number of {bins}|the fewest {bins}|as few {bins} as possible].|Pack "
                      "the {items} so that the number of {bins} [in use|used] is [minimized|as small as possible].]";
        f.integrality = "[{Items} cannot be split across {bins}, and a {bin} is either used or not.|A {bin} is "
                        "either used or not, and each {item} goes [wholly|entirely] into one {bin}.|[Every|Each] "
                        "decision [on|about] [whether|if] an {item} goes into a {bin}, and [whether|if] a {bin} is "
                        "used, is [binary|a yes/no choice].|[Fractional|Partial] [placements|assignments] of {items} "
                        "and [partly|partially] used {bins} are [not allowed|ruled out].]";
        f.decisions = "which {bins} are used and which {item} goes into which {bin} (binary)";
        f.latex = "\\begin{aligned}\n"
                  "\\min\\;& \\sum_{b\\in B} y_b \\\\\n"
                  "\\text{s.t.}\\;& \\sum_{b\\in B} x_{ib} = 1 && \\forall i\\in I \\quad\\text{(assign)} \\\\\n"
                  "& \\sum_{i\\in I} s_i\\,x_{ib} \\le C\\,y_b && \\forall b\\in B \\quad\\text{(cap)} \\\\\n"
                  "& x_{ib}, y_b \\in \\{0,1\\}\n"
                  "\\end{aligned}";
        f.latex_symbols = {"$I$: {items}; $B$: {bins}", "$s_i$: size of $i$; $C$: capacity",
                           "$y_b = 1$ if {bin} $b$ is used; $x_{ib} = 1$ if $i$ is placed in $b$"};
        f.code = R"(I = data["items"]
B = data["bins"]
y = {b: @var(f"y_{k + 1}", 0, 1, B) for k, b in enumerate(B)}
x = {(i, b): @var(f"x_{a + 1}_{k + 1}", 0, 1, B) for a, i in enumerate(I) for k, b in enumerate(B)}
@obj(@sum(y[b] for b in B))
for a, i in enumerate(I):
    @add(@sum(x[i, b] for b in B) == 1, f"assign_{a + 1}")
for k, b in enumerate(B):
    @add(@sum(data["size"][i] * x[i, b] for i in I) - data["capacity"] * y[b] <= 0, f"cap_{k + 1}")
)";
        f.var_docs = {{"y", {"bins"}, "{0} used"}, {"x", {"items", "bins"}, "{0} placed in {1}"}};
        f.con_docs = {{"assign", {"items"}, "placement of {0}"}, {"cap", {"bins"}, "capacity of {0}"}};
        return f;
    }();
    return f;
}

}  // namespace trex::optmodel::families
