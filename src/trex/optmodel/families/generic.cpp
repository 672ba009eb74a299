// Generic LP and MILP in textbook form: max c x s.t. A x <= b (some rows >= for the MILP's minimisation twin),
// x >= 0, optional upper bounds. Unbounded design (LP): a variable with positive profit that no row limits.
#include "trex/optmodel/families/common.hpp"

namespace trex::optmodel::families {

namespace generic_impl {  // named, not anonymous: the families build as one unity translation unit

void generate_common(gen_context& g, bool integer) {
    const int d = g.req.difficulty;
    const int n = 2 + d + g.r.int_in(0, 1), k = 2 + (d + 1) / 2 + g.r.int_in(0, 1);
    strings X, R;
    for (int j = 0; j < n; j++) X.push_back(fmt::format("x{}", j + 1));
    for (int i = 0; i < k; i++) R.push_back(fmt::format("c{}", i + 1));
    const bool maximize = !integer || g.r.chance(0.6);
    std::vector<double> c(n), b(k);
    std::vector<std::vector<double>> a(k, std::vector<double>(n));
    for (auto& v : c) v = g.r.int_in(1, 20);
    for (auto& row : a)
        for (auto& v : row) v = g.r.chance(0.8) ? g.r.int_in(1, 12) : 0;
    for (int j = 0; j < n; j++) {
        bool any = false;
        for (int i = 0; i < k; i++) any = any || a[i][j] > 0;
        if (!any) a[g.r.int_in(0, k - 1)][j] = g.r.int_in(1, 6);
    }
    const int free_var = g.req.want == design::unbounded ? g.r.int_in(0, n - 1) : -1;
    if (free_var >= 0)
        for (int i = 0; i < k; i++) a[i][free_var] = 0;
    for (auto& v : b) v = 5 * g.r.int_in(6, 40);
    // the MILP's minimisation form: covering rows (>=), so the zero solution is infeasible
    const std::string rel = maximize ? "<=" : ">=";
    ojson& data = g.inst.data;
    data["variables"] = list(X);
    data["constraints"] = list(R);
    data["objective"] = map1(X, c);
    data["sense"] = maximize ? "maximize" : "minimize";
    data["coefficients"] = map2(R, X, a);
    data["relation"] = rel;
    data["rhs"] = map1(R, b);
    model& m = g.inst.m;
    m.sense = maximize ? obj_sense::maximize : obj_sense::minimize;
    std::vector<int> x(n);
    for (int j = 0; j < n; j++)
        x[j] = m.add_var(nm("x", j), integer ? var_type::integer : var_type::continuous, 0, inf, c[j]);
    for (int i = 0; i < k; i++) {
        std::vector<term> t;
        for (int j = 0; j < n; j++)
            if (a[i][j] != 0) t.push_back({x[j], a[i][j]});
        m.add_con(nm("c", i), t, maximize ? row_sense::le : row_sense::ge, b[i]);
    }
}

void generate_lp(gen_context& g) { generate_common(g, false); }
void generate_milp(gen_context& g) { generate_common(g, true); }

family make(bool integer) {
    family f;
    f.name = integer ? "generic_milp" : "generic_lp";
    f.title = integer ? "Integer linear program" : "Linear program";
    f.milp = integer;
    f.can_unbounded = !integer;
    f.generate = integer ? generate_milp : generate_lp;
    f.scenarios = {
        {"generic", {{"what", "the following linear program"}}},
        {"generic", {{"what", "this optimization problem"}}},
    };
    f.intro = integer ? "[Solve {what} in {n_variables} integer variables.|Consider {what}; all {n_variables} "
                        "variables are non-negative integers.|[Below is|Here is|We are given] {what}, [with|in|"
                        "having] {n_variables} [non-negative integer|integer-valued, non-negative] variables.|"
                        "[Find the best solution of|Solve|Work out] {what}, whose {n_variables} variables [must|"
                        "have to] be [non-negative integers|whole numbers that are not negative].]"
                      : "[Solve {what} in {n_variables} non-negative variables.|Consider {what} with "
                        "{n_variables} variables, all non-negative.|[Below is|Here is|We are given] {what}, "
                        "[with|in|having] {n_variables} [continuous|real-valued] variables[, each non-negative|"
                        " that are all non-negative].|[Find the best solution of|Solve|Work out] {what}, whose "
                        "{n_variables} variables [may not be|cannot be|must not be] negative.]";
    f.params = {
        {"variables", {}, "variables", "", true},
        {"constraints", {}, "constraints", "", true},
        {"objective", {"variables"}, "[objective coefficient|coefficient in the objective|objective weight]", ""},
        {"sense", {}, "[objective sense|direction of optimization|optimization sense]", ""},
        {"coefficients", {"constraints", "variables"}, "[coefficient|constraint coefficient|matrix coefficient]",
         ""},
        {"relation", {},
         "[relation of every constraint|relation used in every constraint|comparison every constraint uses]", ""},
        {"rhs", {"constraints"}, "[right-hand side|right-hand-side value|constant on the right-hand side]", ""},
    };
    f.constraints = {"[Each constraint compares the weighted sum of the variables with its right-hand side using the "
                     "given relation.|Every constraint reads: sum of coefficient times variable, relation, "
                     "right-hand side.|[In|For] [each|every] constraint, the [sum|total] of [coefficient times "
                     "variable|each coefficient times its variable] [must satisfy|has to satisfy|must obey] the "
                     "given relation [with|against|to] the right-hand side.|[The|Each] constraint's [weighted sum|"
                     "coefficient-weighted sum] of the variables [must|has to] [stand in|satisfy] the given relation "
                     "[to|with] its right-hand side.|[Apply|Use] the given relation [between|to compare] the "
                     "[weighted sum|coefficient-weighted sum] of the variables [and|with] the right-hand side[ in "
                     "each constraint| of every constraint].]",
                     "[All variables are non-negative.|No variable may be negative.|[Every|Each] variable [must|"
                     "has to] be [non-negative|at least zero|zero or more].|It is required that [each|every] "
                     "variable be [non-negative|greater than or equal to zero].|Negative "
                     "values are [not allowed|not permitted|ruled out] for [any|every] variable.]"};
    f.objective = "[Optimize the objective (sum of objective coefficient times variable) in the given sense.|"
                  "The objective is the coefficient-weighted sum of the variables, to be optimized in the given "
                  "sense.|[In|Following] the given sense, [optimize|make optimal] the [sum|total] of [objective "
                  "coefficient times variable|each objective coefficient times its variable].|The [weighted sum|"
                  "coefficient-weighted sum] of the variables, using the objective coefficients, [is to be|must "
                  "be|should be] [optimized|"
                  "made optimal] in the given sense.|[Take|"
                  "Use] the objective coefficients as weights and [optimize the weighted sum of the variables in "
                  "the given sense|maximize or minimize, as the given sense says, the weighted sum of the "
                  "variables].]";
    f.integrality = integer ? "[All variables must take integer values.|The variables are integers.|[Every|Each] "
                              "variable [must|has to|is required to] be [a whole number|an integer|"
                              "integer-valued].|[Fractional|Non-integer] values are [not allowed|not permitted|"
                              "ruled out] for [any|every] variable.|Only [integer|whole-number] values [may|can] "
                              "be [taken|used] by the variables.]"
                            : "";
    f.decisions = "the values of the variables";
    f.latex = "\\begin{aligned}\n"
              "\\text{opt}\\;& \\sum_{j} c_j\\,x_j \\\\\n"
              "\\text{s.t.}\\;& \\sum_{j} a_{ij}\\,x_j \\;\\square\\; b_i && \\forall i \\quad\\text{(c)} \\\\\n"
              "& x_j \\ge 0" + std::string(integer ? ",\\ x_j \\in \\mathbb{Z}" : "") + "\n"
              "\\end{aligned}";
    f.latex_symbols = {"opt: the given sense; $\\square$: the given relation", "$c_j$, $a_{ij}$, $b_i$: the data"};
    f.code = std::string(R"(X = data["variables"]
R = data["constraints"]
x = {v: @var(f"x_{k + 1}", 0, None, )") + (integer ? "I" : "C") + R"() for k, v in enumerate(X)}
@obj(@sum(data["objective"][v] * x[v] for v in X))
for k, c in enumerate(R):
    lhs = @sum(data["coefficients"][c][v] * x[v] for v in X if data["coefficients"][c][v] != 0)
    if data["relation"] == "<=":
        @add(lhs <= data["rhs"][c], f"c_{k + 1}")
    else:
        @add(lhs >= data["rhs"][c], f"c_{k + 1}")
)";
    f.var_docs = {{"x", {"variables"}, "{0}"}};
    f.con_docs = {{"c", {"constraints"}, "constraint {0}"}};
    return f;
}

}  // namespace generic_impl

TREX_FAMILY(generic_lp) {
    static const family f = generic_impl::make(false);
    return f;
}

TREX_FAMILY(generic_milp) {
    static const family f = generic_impl::make(true);
    return f;
}

}  // namespace trex::optmodel::families
