// Multiple knapsack: items with a value and a weight go into several containers
// of different capacities, each item into one container at most; maximum total
// value packed. MILP. Infeasible design: an order of items that must all be
// packed (stated as committed) outweighs the containers together.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace multiple_knapsack_impl { // named, not anonymous: the families build
                                   // as one unity translation unit

void generate(gen_context &g) {
  const int d = g.req.difficulty;
  const int n = 4 + (3 * d) / 2 + g.r.int_in(0, 1), k = 2 + d / 2;
  const strings I = g.names("item", n), K = g.names("bin", k);
  std::vector<double> value(n), weight(n), cap(k), must(n, 0);
  for (int i = 0; i < n; i++) {
    weight[i] = g.r.int_in(3, 25);
    value[i] =
        std::round(weight[i] * g.r.real_in(1.0, 3.0, 2) + g.r.int_in(0, 10));
  }
  const double total = sum(weight);
  for (int j = 0; j < k; j++)
    cap[j] = std::max(25.0, std::round(total * g.r.real_in(0.35, 0.6, 2) / k));
  if (g.req.want == design::infeasible) {
    // committed items heavier than all containers together
    double committed = 0;
    for (int i = 0; i < n && committed <= sum(cap); i++) {
      must[i] = 1;
      committed += weight[i];
    }
    if (committed <= sum(cap))
      weight[0] += sum(cap) - committed + 1;
  } else {
    must[(size_t)g.r.int_in(0, n - 1)] =
        1; // one committed item (the order the customer has paid for)
  }
  ojson &data = g.inst.data;
  data["items"] = list(I);
  data["containers"] = list(K);
  data["value"] = map1(I, value);
  data["weight"] = map1(I, weight);
  data["capacity"] = map1(K, cap);
  strings committed;
  for (int i = 0; i < n; i++)
    if (must[i] > 0)
      committed.push_back(I[i]);
  data["committed"] = list(committed);
  model &m = g.inst.m;
  m.sense = obj_sense::maximize;
  std::vector<std::vector<int>> x(n, std::vector<int>(k));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < k; j++)
      x[i][j] = m.add_var(nm("x", i, j), var_type::binary, 0, 1, value[i]);
  for (int i = 0; i < n; i++) {
    std::vector<term> t;
    for (int j = 0; j < k; j++)
      t.push_back({x[i][j], 1});
    m.add_con(nm("once", i), t, row_sense::le, 1);
    if (must[i] > 0)
      m.add_con(nm("commit", i), t, row_sense::ge, 1);
  }
  for (int j = 0; j < k; j++) {
    std::vector<term> t;
    for (int i = 0; i < n; i++)
      t.push_back({x[i][j], weight[i]});
    m.add_con(nm("cap", j), t, row_sense::le, cap[j]);
  }
}

} // namespace multiple_knapsack_impl

TREX_FAMILY(multiple_knapsack) {
  static const family f = [] {
    family f;
    f.name = "multiple_knapsack";
    f.title = "Multiple knapsack problem";
    f.milp = true;
    f.can_infeasible = true;
    f.generate = multiple_knapsack_impl::generate;
    f.scenarios = {
        {"logistics",
         {{"org", "a freight forwarder"},
          {"item", "pallet"},
          {"items", "pallets"},
          {"bin", "truck"},
          {"bins", "trucks"},
          {"value", "revenue"},
          {"vunit", "$"},
          {"wunit", "kg"},
          {"item_pool", "items"},
          {"bin_pool", "vehicles"}}},
        {"retail",
         {{"org", "a furniture outlet"},
          {"item", "piece"},
          {"items", "pieces"},
          {"bin", "display room"},
          {"bins", "display rooms"},
          {"value", "expected profit"},
          {"vunit", "$"},
          {"wunit", "square meters"},
          {"item_pool", "furniture"},
          {"bin_pool", "regions"}}},
        {"energy",
         {{"org", "a data-center operator"},
          {"item", "computing job"},
          {"items", "computing jobs"},
          {"bin", "server rack"},
          {"bins", "server racks"},
          {"value", "fee"},
          {"vunit", "$"},
          {"wunit", "kW"},
          {"item_pool", "jobs"},
          {"bin_pool", "sites"}}},
        {"healthcare",
         {{"org", "a relief agency"},
          {"item", "supply kit"},
          {"items", "supply kits"},
          {"bin", "aircraft"},
          {"bins", "aircraft"},
          {"value", "priority score"},
          {"vunit", "points"},
          {"wunit", "kg"},
          {"item_pool", "items"},
          {"bin_pool", "vehicles"}}},
    };
    f.intro = "[{Org} has {n_items} {items} and {n_containers} {bins} to put them in.|{Org} must decide which of "
              "{n_items} {items} to place, and where, using {n_containers} {bins}.|[Which|Exactly which] of "
              "{n_items} {items} [to place|to load|to put] into [which|what] of {n_containers} {bins} is [up to|"
              "for] {org} [to decide|to settle].|There are {n_containers} {bins} [available|to fill] and {n_items} "
              "{items} [that could go into them|that may be placed in them]; {org} [has to|must|needs to] "
              "[choose|decide] which {items} [go where|go into which {bin}].]";
    f.params = {
        {"items", {}, "{items}", "", true},
        {"containers", {}, "{bins}", "", true},
        {"value", {"items"}, "{value}", "{vunit}"},
        {"weight", {"items"}, "load", "{wunit}"},
        {"capacity", {"containers"}, "capacity", "{wunit}"},
        {"committed", {},
         "[committed {items} (they must be placed)|committed {items} (each must be placed)|{items} already "
         "committed (they have to be placed)]",
         "", true},
    };
    f.constraints = {"[Each {item} goes into one {bin} at most and cannot be split.|An {item} is placed whole in a "
                     "single {bin}, or not at all.|[No|Not a single] {item} [may|can] be [split|divided] or "
                     "[placed in|put into] [more than one {bin}|two or more {bins}]; [it goes|each goes] into [at "
                     "most one|no more than one] {bin}.|[Every|Each] {item} [is placed|goes] [whole|in one piece] "
                     "into [at most one|no more than one] {bin}[, or is left out|, or is not placed at all].|It is "
                     "[not allowed|not possible] to [split|divide] an {item} or to [place|put] it in [more than one "
                     "{bin}|two or more {bins}].]",
                     "[The load placed in a {bin} may not exceed its capacity.|No {bin} may be loaded beyond its "
                     "capacity.|[For|In] [each|every] {bin}, the [total|combined|summed] load of the {items} "
                     "[placed in it|it holds] [must stay within|must not exceed|may not exceed|has to stay within] "
                     "its capacity.|The capacity of [a|each] {bin} [limits|caps|bounds] the [total|combined|summed] "
                     "load of the {items} [placed in it|it holds|put into it].|[If|When] the loads of the {items} "
                     "in a {bin} are [added up|summed], [the result|the sum] [must not|may not|cannot] [exceed|be "
                     "more than] that {bin}'s capacity.]",
                     "[Committed {items} must be placed.|Every committed {item} has to be placed somewhere.|[No|Not "
                     "a single] committed {item} [may|can] be left [out|unplaced].|[Each|Every] committed {item} "
                     "[must|has to] [go into|be placed in] [one of the {bins}|some {bin}].|It is [required|necessary] "
                     "that "
                     "[all the committed {items} be|every committed {item} be] placed [in a {bin}|somewhere].]"};
    f.objective = "[Maximize the total {value} of the {items} placed.|Find the placement with the largest total "
                  "{value}.|The [goal|aim|objective] is to [make|get] the [total|combined|overall] {value} of the "
                  "placed {items} as [large|high] as possible.|[Choose|Decide|Determine] which {items} go into "
                  "which {bins} so that the [total|combined|overall] {value} [placed|of the placed {items}] is "
                  "[maximized|as large as possible].|[Place|Load] the {items} [to get|so as to get|to earn] the "
                  "[largest|highest|greatest] [total|combined|overall] {value}.]";
    f.integrality = "[Each placement is a yes/no decision.|An {item} is either in a {bin} or not.|Whether an {item} "
                    "[goes|is placed] in a [given|particular] {bin} is a [yes/no|binary|all-or-nothing] [decision|"
                    "choice].|[No|Not a single] {item} [may|can] be [partly|partially] placed in a {bin}.|[Every|"
                    "Each] placement is [all or nothing|yes or no]: an {item} is either in a {bin} [or not|or "
                    "it is not].]";
    f.decisions = "which {item} goes into which {bin} (binary)";
    f.latex = "\\begin{aligned}\n"
              "\\max\\;& \\sum_{i\\in I}\\sum_{k\\in K} v_i\\,x_{ik} \\\\\n"
              "\\text{s.t.}\\;& \\sum_{k\\in K} x_{ik} \\le 1 && \\forall "
              "i\\in I \\quad\\text{(once)} \\\\\n"
              "& \\sum_{k\\in K} x_{ik} \\ge 1 && \\forall i\\in I: m_i = 1 "
              "\\quad\\text{(commit)} \\\\\n"
              "& \\sum_{i\\in I} w_i\\,x_{ik} \\le C_k && \\forall k\\in K "
              "\\quad\\text{(cap)} \\\\\n"
              "& x_{ik} \\in \\{0,1\\}\n"
              "\\end{aligned}";
    f.latex_symbols = {
        "$I$: {items}; $K$: {bins}",
        "$v_i, w_i$: {value} and load of {item} $i$",
        "$C_k$: capacity of {bin} $k$; $m_i = 1$ if {item} $i$ is committed",
        "$x_{ik} = 1$ if {item} $i$ goes into {bin} $k$"};
    f.code = R"(I = data["items"]
K = data["containers"]
x = {(i, k): @var(f"x_{a + 1}_{b + 1}", 0, 1, B) for a, i in enumerate(I) for b, k in enumerate(K)}
@obj(@sum(data["value"][i] * x[i, k] for i in I for k in K))
for a, i in enumerate(I):
    @add(@sum(x[i, k] for k in K) <= 1, f"once_{a + 1}")
    if i in data["committed"]:
        @add(@sum(x[i, k] for k in K) >= 1, f"commit_{a + 1}")
for b, k in enumerate(K):
    @add(@sum(data["weight"][i] * x[i, k] for i in I) <= data["capacity"][k], f"cap_{b + 1}")
)";
    f.var_docs = {{"x", {"items", "containers"}, "{0} placed in {1}"}};
    f.con_docs = {{"once", {"items"}, "{0} placed once at most"},
                  {"commit", {"items"}, "{0} must be placed"},
                  {"cap", {"containers"}, "capacity of {0}"}};
    return f;
  }();
  return f;
}

} // namespace trex::optmodel::families
