// Quadratic models: the LP reader on quadratic sections as Gurobi, CPLEX, COPT and Pyomo write them, the LP writer's
// round trip, the convexity rules (quadratic_refusal), and solve_qp against optima worked out by hand (each in its
// comment), against Clp's own QP solver on random Markowitz portfolios (an independent solver), and the optimality
// gap that certifies a point (qp_optimality_gap) against the true distance from the optimum.
#include <gtest/gtest.h>

#include <coin/ClpSimplex.hpp>

#include <cmath>
#include <random>
#include <string>

#include "trex/base/error.hpp"
#include "trex/base/process.hpp"
#include "trex/optmodel/ir/glpk_io.hpp"
#include "trex/optmodel/ir/writers.hpp"
#include "trex/optmodel/solvers/python_runner.hpp"
#include "trex/optmodel/solvers/solve.hpp"

using namespace trex::optmodel;

namespace {

model read(const std::string& text) {
    model m = read_lp_text(text, "qp.lp");
    validate(m);
    return m;
}

int var_index(const model& m, const std::string& name) {
    for (size_t j = 0; j < m.vars.size(); j++)
        if (m.vars[j].name == name) return (int)j;
    ADD_FAILURE() << "no variable " << name;
    return -1;
}

// The coefficient of x_a * x_b in q (0 when absent).
double quad_coef(const model& m, const std::vector<quad_term>& q, const std::string& a, const std::string& b) {
    int i = var_index(m, a), j = var_index(m, b);
    if (i > j) std::swap(i, j);
    for (const quad_term& t : q)
        if (t.i == i && t.j == j) return t.coef;
    return 0.0;
}

bool have_highspy() {
    static const bool ok = [] {
        const std::string py = find_python_with_pulp();
        return !py.empty() && trex::run_process({py, "-c", "import highspy"}, 60).exit_code == 0;
    }();
    return ok;
}

#define REQUIRE_HIGHSPY() \
    if (!have_highspy()) GTEST_SKIP() << "no highspy in the project venv (scripts/setup.sh installs it)"

void expect_optimum(const solve_result& r, double objective, std::vector<double> x = {}) {
    ASSERT_EQ(r.status, solve_status::optimal) << r.message;
    EXPECT_NEAR(r.objective, objective, 1e-7 * std::max(1.0, std::fabs(objective)));
    for (size_t j = 0; j < x.size(); j++) EXPECT_NEAR(r.x[j], x[j], 1e-4) << "x[" << j << "]";
}

}  // namespace

// ---- reading

// Gurobi's layout (model.write of a QP/QCQP): `x ^2` and `x ^ 2`, a product, `Constant`, a quadratic row whose linear
// part comes first and one whose bracket comes first.
TEST(OptmodelQp, ReadsGurobiQuadraticSections) {
    const model m = read(R"(\ Model portfolio
\ LP format - for model browsing. Use MPS format to capture full model detail.
Minimize
  - 2 x[0] + Constant + [ 2 x[0] ^2 + 4 x[0] * x[1] + 6 x[1] ^ 2 ] / 2
Subject To
 budget: x[0] + x[1] = 1
 risk: 0.5 x[0] + [ x[0] ^ 2 + x[1] ^ 2 ] <= 4
 cone: [ 4.25 x[0] ^ 2 - 2 x[0] * x[1] ] + 2 x[1] <= 9.9
Bounds
 Constant = 1
End
)");
    EXPECT_EQ(m.vars.size(), 2u);  // Constant folded
    EXPECT_DOUBLE_EQ(m.obj_constant, 1.0);
    EXPECT_DOUBLE_EQ(quad_coef(m, m.obj_quad, "x[0]", "x[0]"), 1.0);  // halved
    EXPECT_DOUBLE_EQ(quad_coef(m, m.obj_quad, "x[0]", "x[1]"), 2.0);
    EXPECT_DOUBLE_EQ(quad_coef(m, m.obj_quad, "x[1]", "x[1]"), 3.0);
    ASSERT_EQ(m.cons.size(), 3u);
    EXPECT_TRUE(m.cons[0].quad.empty());
    EXPECT_DOUBLE_EQ(quad_coef(m, m.cons[1].quad, "x[0]", "x[0]"), 1.0);  // rows not halved
    EXPECT_DOUBLE_EQ(quad_coef(m, m.cons[1].quad, "x[1]", "x[1]"), 1.0);
    EXPECT_DOUBLE_EQ(quad_coef(m, m.cons[2].quad, "x[0]", "x[0]"), 4.25);
    EXPECT_DOUBLE_EQ(quad_coef(m, m.cons[2].quad, "x[0]", "x[1]"), -2.0);
    ASSERT_EQ(m.cons[2].terms.size(), 1u);
    EXPECT_DOUBLE_EQ(m.cons[2].terms[0].coef, 2.0);
    EXPECT_TRUE(m.is_quadratic());
    // objective at x = (1, 2): -2 + 1 + (1 + 4 + 12) = 16
    EXPECT_DOUBLE_EQ(m.objective_at({1, 2}), 16.0);
    EXPECT_DOUBLE_EQ(m.activity(1, {1, 2}), 0.5 + 1 + 4);
}

// Pyomo's writer (`+ [` on its own line, `+2 x ^ 2`, `] / 2`), COPT's and CPLEX's (`x2^2`, glued brackets and signs).
TEST(OptmodelQp, ReadsPyomoCoptAndCplexSpellings) {
    const model pyomo = read(R"(\* Source Pyomo model name=unknown *\

min
obj:
+1 x
-3 y
+ [
+4 x ^ 2
-2 x * y
+2 y ^ 2
] / 2

s.t.

c_u_c1_:
+1 x
+1 y
+ [
+1 x ^ 2
]
<= 4

bounds
   -inf <= x <= +inf
   0 <= y <= +inf
end
)");
    EXPECT_DOUBLE_EQ(quad_coef(pyomo, pyomo.obj_quad, "x", "x"), 2.0);
    EXPECT_DOUBLE_EQ(quad_coef(pyomo, pyomo.obj_quad, "x", "y"), -1.0);
    EXPECT_DOUBLE_EQ(quad_coef(pyomo, pyomo.obj_quad, "y", "y"), 1.0);
    EXPECT_DOUBLE_EQ(quad_coef(pyomo, pyomo.cons[0].quad, "x", "x"), 1.0);

    const model copt = read(R"(Minimize
 obj: 2.1 x1 - 1.2 x2 + [ x2^2 ] / 2
Subject To
 r1: x1 + 2 x2 = 6
 q2: [ 4.25 x3^2 - 2 x3 * x4 + 4.25 x4^2  ] + 2 x1 + 3 x3 <= 9.9
 q3: + [- x3 * x4 + 2 x1*x2] <= 1
Bounds
 x2 Free
End
)");
    EXPECT_DOUBLE_EQ(quad_coef(copt, copt.obj_quad, "x2", "x2"), 0.5);
    EXPECT_DOUBLE_EQ(quad_coef(copt, copt.cons[1].quad, "x3", "x4"), -2.0);
    EXPECT_DOUBLE_EQ(quad_coef(copt, copt.cons[2].quad, "x3", "x4"), -1.0);
    EXPECT_DOUBLE_EQ(quad_coef(copt, copt.cons[2].quad, "x1", "x2"), 2.0);
    EXPECT_TRUE(std::isinf(copt.vars[var_index(copt, "x2")].lb));

    // repeated pairs are summed, y * x is x * y
    const model sum = read("Minimize\n obj: [ x * y + y * x + x ^ 2 - x^2 ] / 2\nSubject To\n c: x + y >= 1\nEnd\n");
    ASSERT_EQ(sum.obj_quad.size(), 1u);
    EXPECT_DOUBLE_EQ(quad_coef(sum, sum.obj_quad, "x", "y"), 1.0);
}

TEST(OptmodelQp, MalformedQuadraticSectionsNameTheLine) {
    auto error_of = [](const std::string& text) {
        try {
            read_lp_text(text, "bad.lp");
        } catch (const trex::error& e) {
            return std::string(e.what());
        }
        return std::string("(read)");
    };
    EXPECT_NE(error_of("Minimize\n obj: [ x ^ 2 ]\nSubject To\n c: x >= 1\nEnd\n").find("/ 2"), std::string::npos);
    EXPECT_NE(error_of("Minimize\n obj: x\nSubject To\n c: [ x ^ 2 ] / 2 <= 1\nEnd\n").find("no '/ 2'"),
              std::string::npos);
    EXPECT_NE(error_of("Minimize\n obj: [ x ^ 3 ] / 2\nSubject To\n c: x >= 1\nEnd\n").find("squares"),
              std::string::npos);
    EXPECT_NE(error_of("Minimize\n obj: x\nSubject To\n c: [ x ^ 2 <= 1\nEnd\n").find("bad.lp"), std::string::npos);
    EXPECT_NE(error_of("Minimize\n obj: x ^ 2\nSubject To\n c: x >= 1\nEnd\n").find("bad.lp"), std::string::npos);
}

// ---- MPS quadratic sections (mps_quadratic.hpp), fixtures written here after each writer's documented layout

// CPLEX's documented QMATRIX example (every off-diagonal entry listed twice, ½·xᵀQx): min a + b + ½(a² + 4ab + 7b²)
// s.t. a + b >= 10; the same objective as a QUADOBJ (one triangle, as Gurobi and HiGHS write it). IR coefficients:
// a² 0.5, ab 2, b² 3.5. Optimum: on a + b = 10 the objective is 360 - 50a + 2a², least at a = 12.5 > 10, so b = 0,
// a = 10: 10 + 50 = 60 (KKT: gradient (11, 21) = 11·(1, 1) + 10·(0, 1), both multipliers >= 0).
TEST(OptmodelQp, ReadsMpsQuadObjAndQMatrix) {
    const std::string head =
        "NAME          problem\nROWS\n N  obj\n G  c1\nCOLUMNS\n    a         obj                  1   c1"
        "                   1\n    b         obj                  1   c1                   1\nRHS\n    rhs       c1"
        "                  10\n";
    const std::string qmatrix =
        "QMATRIX\n    a         a                    1\n    a         b                    2\n"
        "    b         a                    2\n    b         b                    7\nENDATA\n";
    const std::string quadobj =
        "QUADOBJ\n    a         a                    1\n    a         b                    2\n"
        "    b         b                    7\nENDATA\n";
    for (const std::string& q : {qmatrix, quadobj}) {
        const model m = read_mps_text(head + q, "qp.mps");
        validate(m);
        ASSERT_EQ(m.obj_quad.size(), 3u);
        EXPECT_DOUBLE_EQ(quad_coef(m, m.obj_quad, "a", "a"), 0.5);
        EXPECT_DOUBLE_EQ(quad_coef(m, m.obj_quad, "a", "b"), 2.0);
        EXPECT_DOUBLE_EQ(quad_coef(m, m.obj_quad, "b", "b"), 3.5);
        EXPECT_DOUBLE_EQ(m.objective_at({1, 2}), 3 + 0.5 + 4 + 14);
        if (!have_highspy()) continue;
        expect_optimum(solve_qp(m), 60.0, {10.0, 0.0});
    }
}

// MOSEK's QSECTION on the objective row (one triangle, ½·xᵀQx) and a QCMATRIX on a row (all of Q, not halved, as
// CPLEX and Gurobi write a quadratic constraint), with OBJSENSE and a second QCMATRIX in the same file.
// min -x2 + ½(2x1² - 2x1x3 + 0.2x2² + 2x3²) s.t. x1 + x2 + x3 >= 1: x2 alone gives 0.1x2² - x2, least at x2 = 5
// (-2.5), and x1 = x3 = 0 leaves the other gradients 2x1 - x3 = 2x3 - x1 = 0: optimum -2.5 at (0, 5, 0).
TEST(OptmodelQp, ReadsMpsQSectionAndQcMatrix) {
    const model m = read_mps_text(
        "NAME qo1\nROWS\n N obj\n G c1\nCOLUMNS\n x1 c1 1.0\n x2 obj -1.0\n x2 c1 1.0\n x3 c1 1.0\n"
        "RHS\n rhs c1 1.0\nQSECTION obj\n x1 x1 2.0\n x1 x3 -1.0\n x2 x2 0.2\n x3 x3 2.0\nENDATA\n",
        "qo1.mps");
    EXPECT_DOUBLE_EQ(quad_coef(m, m.obj_quad, "x1", "x1"), 1.0);
    EXPECT_DOUBLE_EQ(quad_coef(m, m.obj_quad, "x1", "x3"), -1.0);
    EXPECT_DOUBLE_EQ(quad_coef(m, m.obj_quad, "x2", "x2"), 0.1);
    if (have_highspy()) expect_optimum(solve_qp(m), -2.5, {0.0, 5.0, 0.0});

    // max x + y s.t. disc: x² + y² <= 1 (QCMATRIX, diagonal), skew: x² - 2xy + 3y² <= 10 (its off-diagonal entry
    // listed twice, -1 each), x, y free: sqrt 2 at (1/sqrt 2, 1/sqrt 2), where skew is 2 <= 10
    const model q = read_mps_text(
        "NAME qcp\nOBJSENSE\n    MAX\nROWS\n N obj\n L disc\n L skew\nCOLUMNS\n x obj 1\n y obj 1\n"
        "RHS\n rhs disc 1\n rhs skew 10\nBOUNDS\n FR bnd x\n FR bnd y\nQCMATRIX disc\n x x 1\n y y 1\n"
        "QCMATRIX   skew\n x x 1\n x y -1\n y x -1\n y y 3\nENDATA\n",
        "qcp.mps");
    validate(q);
    EXPECT_EQ(q.sense, obj_sense::maximize);
    ASSERT_EQ(q.cons.size(), 2u);
    EXPECT_DOUBLE_EQ(quad_coef(q, q.cons[0].quad, "x", "x"), 1.0);
    EXPECT_DOUBLE_EQ(quad_coef(q, q.cons[1].quad, "x", "y"), -2.0);
    EXPECT_DOUBLE_EQ(quad_coef(q, q.cons[1].quad, "y", "y"), 3.0);
    EXPECT_DOUBLE_EQ(q.activity(1, {1, 2}), 1 - 4 + 12);
    if (have_highspy()) expect_optimum(solve_qp(q), std::sqrt(2.0), {std::sqrt(0.5), std::sqrt(0.5)});
}

TEST(OptmodelQp, MalformedMpsQuadraticSectionsNameTheLine) {
    auto error_of = [](const std::string& quad) {
        try {
            read_mps_text("NAME t\nROWS\n N obj\n L c\nCOLUMNS\n x obj 1\n x c 1\nRHS\n rhs c 4\n" + quad + "ENDATA\n",
                          "bad.mps");
        } catch (const trex::error& e) {
            return std::string(e.what());
        }
        return std::string("(read)");
    };
    EXPECT_EQ(error_of("QUADOBJ\n x x 2\n"), "(read)");
    // a second N row constrains nothing: its QSECTION is dropped with it, the first N row's is the objective's
    const model two = read_mps_text(
        "NAME t\nROWS\n N obj\n N aux\n L c\nCOLUMNS\n x obj 1\n x aux 1\n x c 1\n"
        "RHS\n rhs c 4\nQSECTION aux\n x x 5\nQSECTION obj\n x x 2\nENDATA\n",
        "two.mps");
    ASSERT_EQ(two.obj_quad.size(), 1u);
    EXPECT_DOUBLE_EQ(two.obj_quad[0].coef, 1.0);
    EXPECT_EQ(two.cons.size(), 1u);
    EXPECT_NE(error_of("QUADOBJ\n x x two\n").find("bad.mps:11: 'two' is not a finite number"), std::string::npos)
        << error_of("QUADOBJ\n x x two\n");
    EXPECT_NE(error_of("QUADOBJ\n x x\n").find("bad.mps:11:"), std::string::npos);
    EXPECT_NE(error_of("QUADOBJ\n x z 1\n").find("bad.mps:11: quadratic term of 'z'"), std::string::npos);
    EXPECT_NE(error_of("QCMATRIX\n x x 1\n").find("bad.mps:10: QCMATRIX needs the name of its row"), std::string::npos);
    EXPECT_NE(error_of("QCMATRIX nowhere\n x x 1\n").find("row 'nowhere'"), std::string::npos);
}

// write_lp writes the brackets (the objective's doubled, then halved by "/ 2") and write_mps its quadratic sections;
// both read back to the same model.
TEST(OptmodelQp, WriterRoundTrip) {
    const model m = read(
        "Maximize\n obj: 3 x + [ - 2 x ^ 2 + 2 x * y - 4 y ^ 2 ] / 2 + 5 Constant\nSubject To\n"
        " lin: x + y <= 10\n q: [ x ^ 2 + y ^ 2 ] + y <= 4\n lo: [ - x ^ 2 - y ^ 2 ] + x >= -9\n"
        "Bounds\n Constant = 1\nEnd\n");
    const std::string text = write_lp(m);
    EXPECT_NE(text.find("] / 2"), std::string::npos) << text;
    const model back = read(text);
    EXPECT_EQ(canonical_hash(back), canonical_hash(m)) << text;
    EXPECT_DOUBLE_EQ(back.obj_constant, 5.0);
    EXPECT_DOUBLE_EQ(quad_coef(back, back.obj_quad, "x", "x"), -1.0);
    EXPECT_DOUBLE_EQ(quad_coef(back, back.obj_quad, "x", "y"), 1.0);
    EXPECT_DOUBLE_EQ(quad_coef(back, back.cons[2].quad, "y", "y"), -1.0);
    for (const std::vector<double>& x : {std::vector<double>{1, 2}, std::vector<double>{-3, 0.5}}) {
        EXPECT_DOUBLE_EQ(back.objective_at(x), m.objective_at(x));
        for (int i = 0; i < 3; i++) EXPECT_DOUBLE_EQ(back.activity(i, x), m.activity(i, x));
    }
    // a quadratic term changes the canonical hash
    model other = m;
    other.cons[1].quad[0].coef = 2.0;
    EXPECT_NE(canonical_hash(other), canonical_hash(m));
    // write_mps's QUADOBJ and QCMATRIX read back to the same model
    const std::string mps = write_mps(m);
    EXPECT_NE(mps.find("QUADOBJ"), std::string::npos) << mps;
    EXPECT_NE(mps.find("QCMATRIX q"), std::string::npos) << mps;
    const model from_mps = read_mps_text(mps, "qp.mps");
    EXPECT_EQ(canonical_hash(from_mps), canonical_hash(m)) << mps;
    // writers and solvers of linear models refuse it by name
    EXPECT_THROW(write_gurobipy(m), trex::error);
    const solve_result g = solve_glpk(m);
    EXPECT_EQ(g.status, solve_status::error);
    EXPECT_NE(g.message.find("quadratic"), std::string::npos) << g.message;
}

// ---- what is solved: convex models only

TEST(OptmodelQp, ConvexityRules) {
    auto refusal = [](const std::string& text) { return quadratic_refusal(read(text)); };
    const std::string rows = "Subject To\n c: x + y >= 1\nBounds\n x <= 10\n y <= 10\n";
    EXPECT_EQ(refusal("Minimize\n obj: [ 2 x ^ 2 + 2 y ^ 2 ] / 2\n" + rows + "End\n"), "");
    // (x - y)^2: positive semidefinite, singular
    EXPECT_EQ(refusal("Minimize\n obj: [ 2 x ^ 2 - 4 x * y + 2 y ^ 2 ] / 2\n" + rows + "End\n"), "");
    // a concave objective maximised
    EXPECT_EQ(refusal("Maximize\n obj: x + [ - 2 x ^ 2 - 2 y ^ 2 ] / 2\n" + rows + "End\n"), "");
    // x * y is indefinite either way
    EXPECT_NE(refusal("Minimize\n obj: [ 2 x * y ] / 2\n" + rows + "End\n").find("nonconvex quadratic objectives"),
              std::string::npos);
    EXPECT_NE(refusal("Maximize\n obj: [ 2 x ^ 2 ] / 2\n" + rows + "End\n").find("negative semidefinite"),
              std::string::npos);
    // MIQP
    EXPECT_NE(refusal("Minimize\n obj: [ 2 x ^ 2 ] / 2\n" + rows + "General\n x\nEnd\n").find("MIQP"),
              std::string::npos);
    // rows: x^2 + y^2 <= 1 convex; >= 1 is not; -x^2 - y^2 >= -1 is the convex one again; equalities never
    const std::string obj = "Minimize\n obj: x + y\nSubject To\n";
    EXPECT_EQ(refusal(obj + " q: [ x ^ 2 + y ^ 2 ] <= 1\nEnd\n"), "");
    EXPECT_EQ(refusal(obj + " q: [ - x ^ 2 - y ^ 2 ] >= -1\nEnd\n"), "");
    EXPECT_NE(refusal(obj + " q: [ x ^ 2 + y ^ 2 ] >= 1\nEnd\n").find("'q'"), std::string::npos);
    EXPECT_NE(refusal(obj + " q: [ x ^ 2 ] + y = 1\nEnd\n").find("equality"), std::string::npos);
    EXPECT_NE(refusal(obj + " q: [ x * y ] >= 1\nEnd\n").find("nonconvex quadratic constraints"), std::string::npos);
    // a Hessian too wide for the dense check
    model wide;
    wide.name = "wide";
    for (int j = 0; j <= kQpMaxHessianVars; j++) {
        wide.add_var("x" + std::to_string(j), var_type::continuous, 0, 1);
        wide.obj_quad.push_back({j, j, 1.0});
    }
    EXPECT_NE(quadratic_refusal(wide).find("more than 2000 variables"), std::string::npos);
    // every refusal is an unsupported feature, not a failure
    const solve_result r = solve_qp(read("Minimize\n obj: [ 2 x * y ] / 2\n" + rows + "End\n"));
    EXPECT_EQ(r.status, solve_status::error);
    EXPECT_NE(r.message.find("are not supported"), std::string::npos);
}

// min (x-1)^2 + (y-2)^2 = x^2 + y^2 - 2x - 4y + 5 s.t. x + y <= 2, x, y >= 0: the projection of (1, 2) on the
// half-plane, (0.5, 1.5), objective 0.5; d(objective)/d(rhs) = -2 * 0.5 = -1.
TEST(OptmodelQp, ProjectionOntoAHalfPlane) {
    REQUIRE_HIGHSPY();
    const model m = read(
        "Minimize\n obj: - 2 x - 4 y + 5 Constant + [ 2 x ^ 2 + 2 y ^ 2 ] / 2\nSubject To\n"
        " c: x + y <= 2\nBounds\n Constant = 1\nEnd\n");
    const solve_result r = solve_qp(m);
    expect_optimum(r, 0.5, {0.5, 1.5});
    EXPECT_EQ(r.solver, "highs-qp");
    EXPECT_NEAR(r.dual[0], -1.0, 1e-6);
    EXPECT_NE(r.message.find("optimality gap"), std::string::npos);
    // the judge's entry points take the same path
    expect_optimum(solve_checked(m), 0.5);
    expect_optimum(solve_coin(m), 0.5);
}

// max 10x - x^2 + 4y - y^2 s.t. x + y <= 3, x, y >= 0: the unconstrained (5, 2) is cut off; with multiplier l,
// 10 - 2x = l = 4 - 2y and x + y = 3 give x = 3, y = 0, l = 4 >= 0: objective 30 - 9 = 21, dual +4 (maximising).
TEST(OptmodelQp, ConcaveRevenueMaximised) {
    REQUIRE_HIGHSPY();
    const model m = read("Maximize\n obj: 10 x + 4 y + [ - 2 x ^ 2 - 2 y ^ 2 ] / 2\nSubject To\n c: x + y <= 3\nEnd\n");
    const solve_result r = solve_qp(m);
    expect_optimum(r, 21.0, {3.0, 0.0});
    EXPECT_NEAR(r.dual[0], 4.0, 1e-6);
}

// Markowitz: min w'Sw with S = diag(1, 2, 4), sum w = 1: w_i proportional to 1/S_ii, w = (4, 2, 1)/7, objective
// 1 / (1 + 1/2 + 1/4) = 4/7.
TEST(OptmodelQp, MinimumVariancePortfolio) {
    REQUIRE_HIGHSPY();
    const model m = read(
        "Minimize\n obj: [ 2 w1 ^ 2 + 4 w2 ^ 2 + 8 w3 ^ 2 ] / 2\nSubject To\n"
        " budget: w1 + w2 + w3 = 1\nEnd\n");
    expect_optimum(solve_qp(m), 4.0 / 7.0, {4.0 / 7, 2.0 / 7, 1.0 / 7});
}

// min -x - y s.t. x^2 + y^2 <= 1, x, y free: (1/sqrt 2, 1/sqrt 2), objective -sqrt 2, through the row's multiplier
// (the Lagrangian at multiplier 0 is unbounded); as a >= row written concave, the same.
TEST(OptmodelQp, QuadraticConstraintOnTheUnitDisc) {
    REQUIRE_HIGHSPY();
    const std::string bounds = "Bounds\n x free\n y free\nEnd\n";
    const solve_result r =
        solve_qp(read("Minimize\n obj: - x - y\nSubject To\n disc: [ x ^ 2 + y ^ 2 ] <= 1\n" + bounds));
    expect_optimum(r, -std::sqrt(2.0), {std::sqrt(0.5), std::sqrt(0.5)});
    EXPECT_NEAR(r.dual[0], -std::sqrt(0.5), 1e-4);  // d(-sqrt(2 rhs))/d rhs at rhs = 1
    expect_optimum(solve_qp(read("Maximize\n obj: x + y\nSubject To\n disc: [ - x ^ 2 - y ^ 2 ] >= -1\n" + bounds)),
                   std::sqrt(2.0));
    // two quadratic rows (cutting planes): max x + 2y s.t. x^2 + y^2 <= 5, y^2 <= 3: on the disc alone (1, 2), cut off
    // by y <= sqrt 3, so y = sqrt 3, x = sqrt(5 - 3) (KKT: (1, 2) = a (2x, 2y) + b (0, 2y), a = 1/(2 sqrt 2) > 0,
    // b = (2 - sqrt(3/2)) / (2 sqrt 3) > 0): sqrt 2 + 2 sqrt 3
    expect_optimum(solve_qp(read("Maximize\n obj: x + 2 y\nSubject To\n d: [ x ^ 2 + y ^ 2 ] <= 5\n"
                                 " c: [ y ^ 2 ] <= 3\nEnd\n")),
                   std::sqrt(2.0) + 2 * std::sqrt(3.0), {std::sqrt(2.0), std::sqrt(3.0)});
}

// A singular Hessian: min (x - y)^2 - x - y s.t. x + y <= 4, x, y >= 0 is least on x = y, x + y = 4: (2, 2), -4.
// Free variables, no active row: min (x-3)^2 + (y+1)^2 + (x+y)^2 = 2x^2 + 2y^2 + 2xy - 6x + 2y + 10 has gradient 0 at
// 2x + y = 3, x + 2y = -1: (7/3, -5/3), objective 4/9 + 4/9 + 4/9 = 4/3.
TEST(OptmodelQp, SingularHessianAndFreeVariables) {
    REQUIRE_HIGHSPY();
    expect_optimum(solve_qp(read("Minimize\n obj: - x - y + [ 2 x ^ 2 - 4 x * y + 2 y ^ 2 ] / 2\nSubject To\n"
                                 " c: x + y <= 4\nEnd\n")),
                   -4.0, {2.0, 2.0});
    expect_optimum(solve_qp(read("Minimize\n obj: - 6 x + 2 y + 10 Constant + [ 4 x ^ 2 + 4 x * y + 4 y ^ 2 ] / 2\n"
                                 "Subject To\n c: x + y <= 100\nBounds\n x free\n y free\n Constant = 1\nEnd\n")),
                   4.0 / 3.0, {7.0 / 3.0, -5.0 / 3.0});
}

// x^2 + y^2 <= 1 and x + y >= 2 meet nowhere: infeasible. min x^2 - y with y unbounded above: unbounded.
TEST(OptmodelQp, InfeasibleAndUnbounded) {
    REQUIRE_HIGHSPY();
    EXPECT_EQ(
        solve_qp(read("Minimize\n obj: x\nSubject To\n disc: [ x ^ 2 + y ^ 2 ] <= 1\n c: x + y >= 2\nEnd\n")).status,
        solve_status::infeasible);
    const solve_result u = solve_qp(read("Minimize\n obj: - y + [ 2 x ^ 2 ] / 2\nSubject To\n c: x + y >= 0\nEnd\n"));
    EXPECT_EQ(u.status, solve_status::unbounded) << u.message;
}

// ---- an independent solver: Clp's QP on random Markowitz portfolios

namespace {

// Clp's own QP (ClpSimplex with a quadratic objective, primal) on m: minimisation, linear rows; its objective.
double clp_qp_objective(const model& m) {
    const int n = (int)m.vars.size(), k = (int)m.cons.size();
    std::vector<std::vector<std::pair<int, double>>> cols(n), hcols(n);
    for (int i = 0; i < k; i++)
        for (const term& t : m.cons[i].terms) cols[t.var].push_back({i, t.coef});
    for (const quad_term& t : m.obj_quad) hcols[t.i].push_back({t.j, t.i == t.j ? 2 * t.coef : t.coef});
    std::vector<CoinBigIndex> start{0}, hstart{0};
    std::vector<int> index, hindex;
    std::vector<double> value, hvalue, lo, up, obj, rlo, rup;
    for (int j = 0; j < n; j++) {
        for (auto [i, v] : cols[j]) index.push_back(i), value.push_back(v);
        for (auto [i, v] : hcols[j]) hindex.push_back(i), hvalue.push_back(v);
        start.push_back((CoinBigIndex)index.size());
        hstart.push_back((CoinBigIndex)hindex.size());
        lo.push_back(m.vars[j].lb);
        up.push_back(std::isinf(m.vars[j].ub) ? COIN_DBL_MAX : m.vars[j].ub);
        obj.push_back(m.vars[j].obj);
    }
    for (const constraint& c : m.cons) {
        rlo.push_back(c.sense == row_sense::le ? -COIN_DBL_MAX : c.rhs);
        rup.push_back(c.sense == row_sense::ge ? COIN_DBL_MAX : c.rhs);
    }
    ClpSimplex clp;
    clp.setLogLevel(0);
    clp.loadProblem(n, k, start.data(), index.data(), value.data(), lo.data(), up.data(), obj.data(), rlo.data(),
                    rup.data());
    clp.loadQuadraticObjective(n, hstart.data(), hindex.data(), hvalue.data());
    clp.primal();
    EXPECT_EQ(clp.status(), 0);
    return clp.objectiveValue() + m.obj_constant;
}

// n >= 4 assets: covariance F'F/n + diag(0.01..0.1), returns mu in [0.01, 0.2]; sum w = 1, mu'w >= mean(mu),
// w <= 0.3.
model random_portfolio(int n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> u01(0, 1);
    const int f = n / 2 + 1;
    std::vector<double> F((size_t)f * n), mu(n);
    for (double& v : F) v = normal(rng);
    model m;
    m.name = "portfolio";
    for (int j = 0; j < n; j++) {
        m.add_var("w" + std::to_string(j), var_type::continuous, 0.0, 0.3);
        mu[j] = 0.01 + 0.19 * u01(rng);
    }
    for (int i = 0; i < n; i++)
        for (int j = i; j < n; j++) {
            double s = 0;
            for (int r = 0; r < f; r++) s += F[(size_t)r * n + i] * F[(size_t)r * n + j];
            s /= n;
            if (i == j) s += 0.01 + 0.09 * u01(rng);
            m.obj_quad.push_back({i, j, i == j ? s : 2 * s});  // w'Sw: off-diagonal pairs count twice
        }
    std::vector<term> budget, ret;
    for (int j = 0; j < n; j++) budget.push_back({j, 1.0}), ret.push_back({j, mu[j]});
    double mean = 0;
    for (double v : mu) mean += v / n;
    m.add_con("budget", budget, row_sense::eq, 1.0);
    m.add_con("return", ret, row_sense::ge, mean);  // met by w = 1/n
    return m;
}

}  // namespace

TEST(OptmodelQp, RandomPortfoliosAgreeWithClpsQp) {
    REQUIRE_HIGHSPY();
    for (int n : {5, 20, 60})
        for (unsigned seed : {1u, 2u}) {
            const model m = random_portfolio(n, seed);
            ASSERT_EQ(quadratic_refusal(m), "");
            const solve_result r = solve_qp(m);
            ASSERT_EQ(r.status, solve_status::optimal) << r.message;
            // Clp's reduced-gradient QP stops within ~1e-6 relative (measured); HiGHS's point is certified tighter
            EXPECT_NEAR(r.objective, clp_qp_objective(m), 2e-6 * std::fabs(r.objective)) << n << " " << seed;
            EXPECT_LE(qp_optimality_gap(m, r.x), kQpGapTolerance * std::max(1.0, std::fabs(r.objective)));
        }
}

// max mu'w s.t. sum w = 1, w'Sw <= 0.8 * (the equal-weight portfolio's variance), 0 <= w <= 0.3, for 100 assets: a
// QCQP with one quadratic row (HiGHS through the row's multiplier). Checked against Clp's own QP by strong duality:
// with the multiplier l the result reports, min -mu'w + l (w'Sw - limit) over the linear rows (a QP, solved by Clp)
// equals the optimum.
TEST(OptmodelQp, VarianceLimitedPortfolioMeetsItsDualBound) {
    REQUIRE_HIGHSPY();
    const int n = 100;
    const model risk = random_portfolio(n, 7);  // its objective is w'Sw
    model m;
    m.name = "variance limited";
    m.sense = obj_sense::maximize;
    std::vector<term> budget;
    for (int j = 0; j < n; j++) {
        m.add_var("w" + std::to_string(j), var_type::continuous, 0.0, 0.3, risk.cons[1].terms[j].coef);
        budget.push_back({j, 1.0});
    }
    m.add_con("budget", budget, row_sense::eq, 1.0);
    double equal_weight = 0;
    for (const quad_term& t : risk.obj_quad) equal_weight += t.coef / (n * n);
    m.add_con("risk", {}, row_sense::le, 0.8 * equal_weight);
    m.cons[1].quad = risk.obj_quad;
    ASSERT_EQ(quadratic_refusal(m), "");
    const solve_result r = solve_qp(m);
    ASSERT_EQ(r.status, solve_status::optimal) << r.message;
    EXPECT_LE(m.activity(1, r.x), 0.8 * equal_weight * (1 + 1e-9));
    const double lambda = r.dual[1];  // d(max objective)/d(limit): the multiplier of the min form
    ASSERT_GT(lambda, 0.0);
    model dual = m;  // min -mu'w + lambda w'Sw over the linear rows; its optimum - lambda * limit = -(the optimum)
    dual.sense = obj_sense::minimize;
    for (variable& v : dual.vars) v.obj = -v.obj;
    dual.obj_quad = risk.obj_quad;
    for (quad_term& t : dual.obj_quad) t.coef *= lambda;
    dual.cons.pop_back();
    const double bound = clp_qp_objective(dual) - lambda * 0.8 * equal_weight;
    EXPECT_NEAR(-bound, r.objective, 1e-6 * std::fabs(r.objective));
    EXPECT_LT(r.seconds, 20.0);
}

// The gap bounds the distance from the optimum: at the feasible (0, 2) of the projection model (objective 1, optimum
// 0.5) it is at least 0.5; at the optimum about 0; an infeasible or wrong-length point is not certified.
TEST(OptmodelQp, OptimalityGapBoundsTheDistanceFromTheOptimum) {
    const model m = read(
        "Minimize\n obj: - 2 x - 4 y + 5 Constant + [ 2 x ^ 2 + 2 y ^ 2 ] / 2\nSubject To\n"
        " c: x + y <= 2\nBounds\n Constant = 1\nEnd\n");
    EXPECT_GE(qp_optimality_gap(m, {0.0, 2.0}), 0.5 - 1e-9);
    EXPECT_GE(qp_optimality_gap(m, {1.0, 0.0}), m.objective_at({1.0, 0.0}) - 0.5 - 1e-9);
    EXPECT_NEAR(qp_optimality_gap(m, {0.5, 1.5}), 0.0, 1e-9);
    EXPECT_TRUE(std::isinf(qp_optimality_gap(m, {0.5})));
    // the disc: at a point on the circle away from the optimum, gap >= its objective's excess
    const model disc = read(
        "Minimize\n obj: - x - y\nSubject To\n d: [ x ^ 2 + y ^ 2 ] <= 1\nBounds\n x free\n"
        " y free\nEnd\n");
    EXPECT_GE(qp_optimality_gap(disc, {1.0, 0.0}), -1.0 + std::sqrt(2.0) - 1e-9);
    EXPECT_NEAR(qp_optimality_gap(disc, {std::sqrt(0.5), std::sqrt(0.5)}), 0.0, 1e-9);
}
