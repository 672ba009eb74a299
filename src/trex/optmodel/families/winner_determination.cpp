// Winner determination in a combinatorial auction (set packing): bidders place
// bids on bundles of items; accept bids so that no item is sold twice and each
// bidder wins one bid at most; maximum revenue. MILP.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace winner_determination_impl { // named, not anonymous: the families
                                      // build as one unity translation unit

void generate(gen_context &g) {
  const int d = g.req.difficulty;
  const int ni = 3 + 2 * d + g.r.int_in(0, 1), nk = 2 + d,
            nb = nk * 2 + d + g.r.int_in(0, 2);
  const strings I = g.names("item", ni), K = g.names("bidder", nk);
  strings B;
  for (int b = 0; b < nb; b++)
    B.push_back("bid " + letters(b));
  std::vector<std::vector<double>> bundle(nb, std::vector<double>(ni, 0)),
      placed(nk, std::vector<double>(nb, 0));
  std::vector<double> price(nb);
  std::vector<double> worth(ni);
  for (auto &w : worth)
    w = 5 * g.r.int_in(4, 20);
  for (int b = 0; b < nb; b++) {
    const int size = g.r.int_in(1, std::min(4, ni));
    double base = 0;
    for (int k : g.r.permutation(ni))
      if (bundle[b][k] == 0 && size > (int)sum(bundle[b])) {
        bundle[b][k] = 1;
        base += worth[k];
      }
    // complementarity: bundles are worth more or less than their parts
    price[b] = 5 * std::round(base * g.r.real_in(0.8, 1.5, 2) / 5);
    placed[b < nk ? b : g.r.int_in(0, nk - 1)][b] =
        1; // every bidder places one bid at least
  }
  ojson &data = g.inst.data;
  data["items"] = list(I);
  data["bidders"] = list(K);
  data["bids"] = list(B);
  data["price"] = map1(B, price);
  data["bundle"] = map2(B, I, bundle);
  data["placed"] = map2(K, B, placed);
  model &m = g.inst.m;
  m.sense = obj_sense::maximize;
  std::vector<int> x(nb);
  for (int b = 0; b < nb; b++)
    x[b] = m.add_var(nm("x", b), var_type::binary, 0, 1, price[b]);
  for (int i = 0; i < ni; i++) {
    std::vector<term> t;
    for (int b = 0; b < nb; b++)
      if (bundle[b][i] > 0)
        t.push_back({x[b], 1});
    m.add_con(nm("item", i), t, row_sense::le, 1);
  }
  for (int k = 0; k < nk; k++) {
    std::vector<term> t;
    for (int b = 0; b < nb; b++)
      if (placed[k][b] > 0)
        t.push_back({x[b], 1});
    m.add_con(nm("bidder", k), t, row_sense::le, 1);
  }
}

} // namespace winner_determination_impl

TREX_FAMILY(winner_determination) {
  static const family f = [] {
    family f;
    f.name = "winner_determination";
    f.title = "Winner determination in a combinatorial auction (set packing)";
    f.milp = true;
    f.generate = winner_determination_impl::generate;
    f.scenarios = {
        {"energy",
         {{"org", "a grid operator"},
          {"item", "transmission slot"},
          {"items", "transmission slots"},
          {"bidder", "power trader"},
          {"bidders", "power traders"},
          {"item_pool", "slots"},
          {"bidder_pool", "generators"}}},
        {"logistics",
         {{"org", "a port authority"},
          {"item", "berth"},
          {"items", "berths"},
          {"bidder", "shipping line"},
          {"bidders", "shipping lines"},
          {"item_pool", "sites"},
          {"bidder_pool", "cities"}}},
        {"retail",
         {{"org", "an auction house"},
          {"item", "lot"},
          {"items", "lots"},
          {"bidder", "collector"},
          {"bidders", "collectors"},
          {"item_pool", "furniture"},
          {"bidder_pool", "workers"}}},
        {"generic",
         {{"org", "a government agency"},
          {"item", "spectrum licence"},
          {"items", "spectrum licences"},
          {"bidder", "operator"},
          {"bidders", "operators"},
          {"item_pool", "regions"},
          {"bidder_pool", "products"}}},
    };
    f.intro =
        "[{Org} is selling {n_items} {items} in a combinatorial auction: each "
        "bid asks for a whole bundle at one price.|{Org} has received {n_bids} "
        "bundle bids for {n_items} {items} and must decide which bids win.|In "
        "a combinatorial auction of {n_items} {items}, {org} [has "
        "received|holds] {n_bids} bids, [each for|each one for] a "
        "[whole|complete] bundle of {items} at a single price, and [must|has "
        "to] [choose|pick|select] the [winning bids|winners].|{Org} "
        "[has|holds] {n_bids} bids on bundles of its {n_items} {items}; "
        "[every|each] bid [offers|names] one price for its [entire|whole] "
        "bundle, and {org} [must|has to] [decide|determine] which bids [to "
        "accept|are accepted].]";
    f.params = {
        {"items", {}, "{items}", "", true},
        {"bidders", {}, "{bidders}", "", true},
        {"bids", {}, "bids", "", true},
        {"price", {"bids"}, "[price offered|offered price|price bid]", "$"},
        {"bundle",
         {"bids", "items"},
         "[{items} asked for|{items} requested|{items} in the bundle]",
         "",
         false,
         "",
         "[{Row} asks for {cols}.|{Row} is for {cols}.|{Row} [covers|requests] "
         "{cols}.|The bundle of {row} [consists of|contains] "
         "{cols}.]"},
        {"placed",
         {"bidders", "bids"},
         "[bids placed|bids submitted|bids made]",
         "",
         false,
         "",
         "[{Row} placed {cols}.|{Cols} came from {row}.|{Row} [submitted|"
         "made] {cols}.|{Row} is the bidder "
         "behind {cols}.]"},
    };
    f.constraints = {
        "[No {item} can be sold twice: accepted bids may not share an "
        "{item}.|Each {item} goes to one accepted bid at most.|[No|Not a "
        "single] {item} [may|can] [appear|be included] in more than one "
        "accepted bid.|[For each|For every] {item}, [at most|no more than] one "
        "of the bids [asking for|containing] it [may|can] be "
        "accepted.|[If|When] two bids [share|both ask for] an {item}, [they "
        "cannot both be accepted|accepting both of them is not allowed].]",
        "[Each {bidder} wins one bid at most.|A {bidder}'s bids are "
        "alternatives: at most one of them is accepted.|[No|Not a single] "
        "{bidder} [may|can] win more than one bid.|[For each|For every] "
        "{bidder}, [at most|no more than] one of the bids [it placed|it "
        "submitted] [may|can] be accepted.|[Of|Among] the bids placed by "
        "[a|any] {bidder}, [at most one|no more than one] [may|can] [win|be "
        "accepted].]"};
    f.objective =
        "[Maximize the auction revenue.|Choose the winning bids that bring in "
        "the most money.|The [goal|aim|objective] is to [reach|achieve] the "
        "[highest|largest|greatest] [total|overall|combined] price of the "
        "accepted bids.|[Accept|Select] bids so that the "
        "[total|overall|combined] revenue is [as high as "
        "possible|maximized].|Which [set|selection] of bids [yields|brings "
        "in|earns] the [most|highest|largest] [total|overall] revenue?]";
    f.integrality =
        "[A bid is accepted whole or rejected.|Bids cannot be accepted in "
        "part.|[No|Not a single] bid [may|can] be [partly|partially] "
        "accepted.|[Each|Every] bid [must|has to] be either [accepted in "
        "full|fully accepted] or rejected.|Whether a bid wins is [a yes/no|an "
        "all-or-nothing] [decision|choice].]";
    f.decisions = "which bids to accept (binary)";
    f.latex = "\\begin{aligned}\n"
              "\\max\\;& \\sum_{b\\in B} p_b\\,x_b \\\\\n"
              "\\text{s.t.}\\;& \\sum_{b\\in B} a_{bi}\\,x_b \\le 1 && "
              "\\forall i\\in I \\quad\\text{(item)} \\\\\n"
              "& \\sum_{b\\in B} q_{kb}\\,x_b \\le 1 && \\forall k\\in K "
              "\\quad\\text{(bidder)} \\\\\n"
              "& x_b \\in \\{0,1\\}\n"
              "\\end{aligned}";
    f.latex_symbols = {"$I$: {items}; $K$: {bidders}; $B$: bids",
                       "$p_b$: price of bid $b$",
                       "$a_{bi} = 1$ if bid $b$ asks for {item} $i$; $q_{kb} = "
                       "1$ if {bidder} $k$ placed bid $b$",
                       "$x_b = 1$ if bid $b$ is accepted"};
    f.code = R"(I = data["items"]
K = data["bidders"]
Bids = data["bids"]
x = {b: @var(f"x_{a + 1}", 0, 1, B) for a, b in enumerate(Bids)}
@obj(@sum(data["price"][b] * x[b] for b in Bids))
for c, i in enumerate(I):
    @add(@sum(x[b] for b in Bids if data["bundle"][b][i] == 1) <= 1, f"item_{c + 1}")
for c, k in enumerate(K):
    @add(@sum(x[b] for b in Bids if data["placed"][k][b] == 1) <= 1, f"bidder_{c + 1}")
)";
    f.var_docs = {{"x", {"bids"}, "{0} accepted"}};
    f.con_docs = {{"item", {"items"}, "{0} sold once at most"},
                  {"bidder", {"bidders"}, "{0} wins once at most"}};
    return f;
  }();
  return f;
}

} // namespace trex::optmodel::families
