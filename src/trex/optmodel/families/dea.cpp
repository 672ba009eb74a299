// Data envelopment analysis (CCR multiplier form, input oriented): the
// efficiency of one unit relative to its peers is the largest weighted output
// it can show with its weighted input fixed at 1, when no unit's weighted
// outputs may exceed its weighted inputs under the same weights. LP; the
// optimum is in (0, 1].
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace dea_impl { // named, not anonymous: the families build as one unity
                     // translation unit

// The scenario's comma-separated list under `key`, its first n entries.
strings word_list(const gen_context &g, const std::string &key, int n) {
  strings all;
  const std::string &s = g.sc.words.at(key);
  size_t a = 0;
  while (a <= s.size()) {
    const size_t b = s.find(',', a);
    all.push_back(
        s.substr(a, b == std::string::npos ? std::string::npos : b - a));
    if (b == std::string::npos)
      break;
    a = b + 1;
  }
  all.resize(std::min((size_t)n, all.size()));
  return all;
}

void generate(gen_context &g) {
  const int d = g.req.difficulty;
  const int nu = 4 + 2 * d + g.r.int_in(0, 2);
  const strings U = g.names("unit", nu),
                I = word_list(g, "input_names", 2 + (d >= 3)),
                R = word_list(g, "output_names", 1 + (d >= 2) + (d >= 4));
  std::vector<std::vector<double>> in(nu, std::vector<double>(I.size())),
      out(nu, std::vector<double>(R.size()));
  for (int j = 0; j < nu; j++) {
    const double scale =
        g.r.real_in(0.6, 1.6, 2); // unit size: inputs and outputs grow together
    for (auto &x : in[j])
      x = std::max(1.0, std::round(g.r.int_in(10, 40) * scale));
    for (auto &y : out[j])
      y = std::max(1.0, std::round(g.r.int_in(20, 90) * scale *
                                   g.r.real_in(0.7, 1.3, 2)));
  }
  const int o = g.r.int_in(0, nu - 1);
  ojson &data = g.inst.data;
  data["units"] = list(U);
  data["inputs"] = list(I);
  data["outputs"] = list(R);
  data["input"] = map2(U, I, in);
  data["output"] = map2(U, R, out);
  data["target"] = U[o];
  model &m = g.inst.m;
  m.sense = obj_sense::maximize;
  std::vector<int> v(I.size()), u(R.size());
  for (size_t i = 0; i < I.size(); i++)
    v[i] = m.add_var(nm("v", (int)i), var_type::continuous, 0, inf, 0);
  for (size_t r = 0; r < R.size(); r++)
    u[r] = m.add_var(nm("u", (int)r), var_type::continuous, 0, inf, out[o][r]);
  std::vector<term> norm;
  for (size_t i = 0; i < I.size(); i++)
    norm.push_back({v[i], in[o][i]});
  m.add_con("normalise", norm, row_sense::eq, 1);
  for (int j = 0; j < nu; j++) {
    std::vector<term> t;
    for (size_t r = 0; r < R.size(); r++)
      t.push_back({u[r], out[j][r]});
    for (size_t i = 0; i < I.size(); i++)
      t.push_back({v[i], -in[j][i]});
    m.add_con(nm("ratio", j), t, row_sense::le, 0);
  }
}

} // namespace dea_impl

TREX_FAMILY(dea) {
  static const family f = [] {
    family f;
    f.name = "dea";
    f.title = "Data envelopment analysis (relative efficiency)";
    f.generate = dea_impl::generate;
    f.scenarios = {
        {"healthcare",
         {{"org", "a regional health authority"},
          {"unit", "hospital"},
          {"units", "hospitals"},
          {"input_names", "doctors,nurses,beds"},
          {"output_names", "outpatient visits,operations,discharged patients"},
          {"unit_pool", "hospitals"}}},
        {"education",
         {{"org", "a school district"},
          {"unit", "school"},
          {"units", "schools"},
          {"input_names", "teachers,budget in thousand dollars,classrooms"},
          {"output_names",
           "graduates,students passing the state test,college admissions"},
          {"unit_pool", "schools"}}},
        {"finance",
         {{"org", "a retail bank"},
          {"unit", "branch"},
          {"units", "branches"},
          {"input_names", "staff,operating cost in thousand dollars,floor "
                          "space in hundred square meters"},
          {"output_names",
           "new accounts,loans issued,transactions in thousands"},
          {"unit_pool", "cities"}}},
        {"retail",
         {{"org", "a supermarket chain"},
          {"unit", "store"},
          {"units", "stores"},
          {"input_names", "employees,shelf space in hundred square "
                          "meters,opening hours per week"},
          {"output_names",
           "sales in thousand dollars,customers in thousands,loyalty sign-ups"},
          {"unit_pool", "regions"}}},
    };
    f.intro = "[{Org} compares the efficiency of its {n_units} {units}.|{Org} wants to know how efficient one of "
              "its {n_units} {units} is compared with the others.|[To see|To learn] how efficient one of its "
              "{n_units} {units} is [compared with|relative to] the others, {org} [carries out|performs] [an "
              "efficiency comparison|a relative efficiency study].|[Using|With] data on its {n_units} {units}, {org} "
              "[measures|assesses|rates] the relative efficiency of one {unit} [against|compared with] its peers.]";
    f.params = {
        {"units", {}, "{units}", "", true},
        {"inputs", {}, "[inputs each {unit} uses|inputs used by each {unit}|inputs consumed by every {unit}]", "",
         true},
        {"outputs", {}, "[outputs each {unit} produces|outputs produced by each {unit}|outputs every {unit} "
         "delivers]", "", true},
        {"input", {"units", "inputs"}, "[amount of each input used|quantity of each input used|amount used of each "
         "input]", ""},
        {"output", {"units", "outputs"}, "[amount of each output produced|quantity of each output "
         "produced|amount produced of each output]", ""},
        {"target", {}, "[{unit} to evaluate|{unit} being evaluated|{unit} under evaluation]", ""},
    };
    f.constraints = {
        "[Weights are chosen for the inputs and the outputs; with them, the weighted input of the {unit} "
        "evaluated must equal 1.|Input and output weights are to be chosen so that the {unit} evaluated has a "
        "weighted input of exactly 1.|The weighted input of the {unit} [being evaluated|under evaluation] [must|has "
        "to] be [exactly|equal to] 1, [using|under] the chosen input [and output] weights.|[Choose|Pick] a weight "
        "for [each|every] input and [each|every] output [such that|so that] the {unit} [being evaluated|under "
        "evaluation] has a weighted input [of exactly 1|equal to 1].]",
        "[Under the same weights, no {unit}'s weighted output may exceed its weighted input (no efficiency "
        "above 1).|The weights must not let any {unit}, the evaluated one included, score above 1: its "
        "weighted output at most its weighted input.|For [every|each] {unit}, [the evaluated one included|including "
        "the one evaluated], the weighted output [must|has to] be [at most|no more than|no greater than] its "
        "weighted input [under the same weights|with the same weights].|[With|Using] the same weights, [every|each] "
        "{unit} [must|has to] have a weighted output [that does not exceed|no larger than] its weighted input, so "
        "[no {unit} scores|none of the {units} scores] above 1.]",
        "[All weights are non-negative.|Weights cannot be negative.|[Every|Each] input and output weight [must|has "
        "to] be [at least zero|zero or more|non-negative].|No weight may be [negative|below zero].]"};
    f.objective = "[Maximize the weighted output of the {unit} evaluated: its efficiency score.|Find the largest "
                  "efficiency score the {unit} evaluated can reach: its weighted output.|The [goal|aim|objective] is "
                  "to make the weighted output of the {unit} [being evaluated|under evaluation] (its efficiency "
                  "score) as [large|high] as possible.|[Choose|Set] the weights [so that|such that] the {unit} "
                  "[being evaluated|under evaluation] [reaches|attains] the [largest|highest] [possible] weighted "
                  "output, which is its efficiency score.]";
    f.decisions = "a non-negative weight for each input and each output";
    f.latex = "\\begin{aligned}\n"
              "\\max\\;& \\sum_{r\\in R} y_{or}\\,u_r \\\\\n"
              "\\text{s.t.}\\;& \\sum_{i\\in I} x_{oi}\\,v_i = 1 "
              "\\quad\\text{(normalise)} \\\\\n"
              "& \\sum_{r\\in R} y_{jr}\\,u_r - \\sum_{i\\in I} x_{ji}\\,v_i "
              "\\le 0 && \\forall j\\in J "
              "\\quad\\text{(ratio)} \\\\\n"
              "& u_r \\ge 0,\\ v_i \\ge 0\n"
              "\\end{aligned}";
    f.latex_symbols = {"$J$: {units}; $o \\in J$: the {unit} evaluated; $I$: "
                       "inputs; $R$: outputs",
                       "$x_{ji}$: input $i$ used by {unit} $j$; $y_{jr}$: "
                       "output $r$ of {unit} $j$",
                       "$v_i$, $u_r$: weights of input $i$ and output $r$"};
    f.code = R"(J = data["units"]
I = data["inputs"]
R = data["outputs"]
o = data["target"]
v = {i: @var(f"v_{a + 1}", 0, @inf(), C) for a, i in enumerate(I)}
u = {r: @var(f"u_{b + 1}", 0, @inf(), C) for b, r in enumerate(R)}
@obj(@sum(data["output"][o][r] * u[r] for r in R))
@add(@sum(data["input"][o][i] * v[i] for i in I) == 1, "normalise")
for c, j in enumerate(J):
    @add(@sum(data["output"][j][r] * u[r] for r in R) - @sum(data["input"][j][i] * v[i] for i in I) <= 0, f"ratio_{c + 1}")
)";
    f.var_docs = {{"v", {"inputs"}, "weight of {0}"},
                  {"u", {"outputs"}, "weight of {0}"}};
    f.con_docs = {
        {"normalise", {}, "weighted input of the evaluated {unit} equal to 1"},
        {"ratio", {"units"}, "efficiency of {0} at most 1"}};
    return f;
  }();
  return f;
}

} // namespace trex::optmodel::families
