// Crew scheduling as set partitioning: candidate duties (pairings) each cover a
// set of trips at a cost; choose duties so that every trip is covered exactly
// once; minimum cost. MILP. Infeasible design: a trip no duty covers.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace crew_scheduling_impl { // named, not anonymous: the families build as
                                 // one unity translation unit

void generate(gen_context &g) {
  const int d = g.req.difficulty;
  const int nt = 4 + 3 * d + g.r.int_in(0, 1), nd = 2 * nt + g.r.int_in(0, 3);
  strings T, D;
  const std::string &trip = g.sc.words.at("trip_label");
  for (int t = 0; t < nt; t++)
    T.push_back(fmt::format("{} {}", trip, 101 + t));
  for (int k = 0; k < nd; k++)
    D.push_back("duty " + letters(k));
  std::vector<std::vector<double>> cover(nd, std::vector<double>(nt, 0));
  // a hidden partition first (so an exact cover exists), then duties drawn at
  // random
  int k = 0;
  const std::vector<int> order = g.r.permutation(nt);
  for (int p = 0; p < nt && k < nd;) {
    const int len = std::min(nt - p, g.r.int_in(1, 3));
    for (int q = 0; q < len; q++)
      cover[k][order[p + q]] = 1;
    p += len;
    k++;
  }
  for (; k < nd; k++) {
    const int len = g.r.int_in(2, 4);
    for (int q = 0; q < len; q++)
      cover[k][g.r.int_in(0, nt - 1)] = 1;
  }
  // duties in random order (the hidden partition is not the first rows)
  const std::vector<int> shuffle = g.r.permutation(nd);
  std::vector<std::vector<double>> rows(nd);
  for (int r = 0; r < nd; r++)
    rows[r] = cover[shuffle[r]];
  if (g.req.want == design::infeasible) {
    const int t = g.r.int_in(0, nt - 1);
    for (auto &row : rows)
      row[t] = 0;
  }
  std::vector<double> cost(nd);
  for (int r = 0; r < nd; r++)
    cost[r] =
        10 * (g.r.int_in(8, 15) + 4 * (int)sum(rows[r]) + g.r.int_in(0, 6));
  ojson &data = g.inst.data;
  data["trips"] = list(T);
  data["duties"] = list(D);
  data["cost"] = map1(D, cost);
  data["covers"] = map2(D, T, rows);
  model &m = g.inst.m;
  std::vector<int> x(nd);
  for (int r = 0; r < nd; r++)
    x[r] = m.add_var(nm("x", r), var_type::binary, 0, 1, cost[r]);
  for (int t = 0; t < nt; t++) {
    std::vector<term> tm;
    for (int r = 0; r < nd; r++)
      if (rows[r][t] > 0)
        tm.push_back({x[r], 1});
    m.add_con(nm("trip", t), tm, row_sense::eq, 1);
  }
}

} // namespace crew_scheduling_impl

TREX_FAMILY(crew_scheduling) {
  static const family f = [] {
    family f;
    f.name = "crew_scheduling";
    f.title = "Crew scheduling (set partitioning)";
    f.milp = true;
    f.can_infeasible = true;
    f.generate = crew_scheduling_impl::generate;
    f.scenarios = {
        {"logistics",
         {{"org", "a regional airline"},
          {"trip", "flight"},
          {"trips", "flights"},
          {"trip_label", "flight"},
          {"crew", "crew"}}},
        {"generic",
         {{"org", "a city bus company"},
          {"trip", "bus trip"},
          {"trips", "bus trips"},
          {"trip_label", "trip"},
          {"crew", "driver"}}},
        {"healthcare",
         {{"org", "a home-care service"},
          {"trip", "patient visit"},
          {"trips", "patient visits"},
          {"trip_label", "visit"},
          {"crew", "nurse"}}},
        {"energy",
         {{"org", "a power utility"},
          {"trip", "maintenance job"},
          {"trips", "maintenance jobs"},
          {"trip_label", "job"},
          {"crew", "field crew"}}},
    };
    f.intro = "[{Org} has to staff {n_trips} {trips} and has priced {n_duties} candidate duties, each a "
              "sequence of {trips} one {crew} can work.|{Org} must choose {crew} duties among {n_duties} "
              "candidates to cover {n_trips} {trips}.|There are {n_trips} {trips} [to staff|to be staffed] at "
              "{org}, and {n_duties} candidate {crew} duties [have been|were] priced, each [a sequence|a chain] of "
              "{trips} that one {crew} can [work|handle].|[To cover|For] its {n_trips} {trips}, {org} [selects|has "
              "to select|must pick] {crew} duties from {n_duties} [priced|costed] candidates.]";
    f.params = {
        {"trips", {}, "{trips}", "", true},
        {"duties", {}, "[candidate duties|duties to choose from|candidate {crew} duties]", "", true},
        {"cost", {"duties"}, "cost", "$"},
        {"covers",
         {"duties", "trips"},
         "[{trips} covered|{trips} included|{trips} worked]",
         "",
         false,
         "",
         "[{Row} covers {cols}.|{Row} works {cols}.|{Row} [consists of|is made up of] {cols}.|If {row} is "
         "chosen, it covers {cols}.]"},
    };
    f.constraints = {"[Every {trip} must be covered by exactly one chosen duty: no gaps and no two {crew}s on "
                     "the same {trip}.|Each {trip} is worked by exactly one of the chosen duties.|[Exactly "
                     "one|One and only one] [chosen|selected] duty [must|has to] cover [each|every] {trip}.|No "
                     "{trip} may be left [uncovered|unstaffed] or covered [twice|more than once]: [each|every] "
                     "{trip} [belongs to|is in] exactly one [chosen|selected] duty.|[It is required that|We require "
                     "that] [every|each] {trip} [be|is] covered by [exactly one|one and only one] of the [chosen|"
                     "selected] duties.]"};
    f.objective = "[Minimize the total cost of the chosen duties.|Find the cheapest set of duties.|The "
                  "[goal|aim|objective] is to [keep|make] the [total|combined|overall] cost of the [selected|chosen] "
                  "duties as [low|small] as possible.|[Choose|Select] the duties so that their [total|combined] cost "
                  "is [minimized|as small as possible].]";
    f.integrality =
        "[A duty is either chosen or not.|Duties cannot be chosen in part.|[Choosing a duty|The choice of each "
        "duty] is a yes/no [choice|decision].|[Partial|Fractional] [selection|choice] of a duty is [not allowed|ruled "
        "out].]";
    f.decisions = "which duties to choose (binary)";
    f.latex = "\\begin{aligned}\n"
              "\\min\\;& \\sum_{k\\in D} c_k\\,x_k \\\\\n"
              "\\text{s.t.}\\;& \\sum_{k\\in D} a_{kt}\\,x_k = 1 && \\forall "
              "t\\in T \\quad\\text{(trip)} \\\\\n"
              "& x_k \\in \\{0,1\\}\n"
              "\\end{aligned}";
    f.latex_symbols = {"$T$: {trips}; $D$: candidate duties",
                       "$c_k$: cost of duty $k$",
                       "$a_{kt} = 1$ if duty $k$ covers {trip} $t$",
                       "$x_k = 1$ if duty $k$ is chosen"};
    f.code = R"(T = data["trips"]
D = data["duties"]
x = {k: @var(f"x_{a + 1}", 0, 1, B) for a, k in enumerate(D)}
@obj(@sum(data["cost"][k] * x[k] for k in D))
for b, t in enumerate(T):
    @add(@sum(x[k] for k in D if data["covers"][k][t] == 1) == 1, f"trip_{b + 1}")
)";
    f.var_docs = {{"x", {"duties"}, "{0} chosen"}};
    f.con_docs = {{"trip", {"trips"}, "{0} covered exactly once"}};
    return f;
  }();
  return f;
}

} // namespace trex::optmodel::families
