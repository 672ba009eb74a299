// Gurobi's LP dialect (lp_dialect.hpp) on files written the way Gurobi's model.write() writes them (the Bench4Opt
// references: bracketed names, wrapped expressions, `- c x <= 0` rows, empty Bounds, Binaries/Generals, objective
// constants, empty and infinite rows). Each is checked against the same model built by hand (canonical hash, the
// optimum by two solvers) or written in the CPLEX grammar that GLPK reads; what it cannot read is a one-line error
// naming the file and line.
#include <gtest/gtest.h>

#include <cmath>

#include "trex/base/error.hpp"
#include "trex/optmodel/ir/glpk_io.hpp"
#include "trex/optmodel/ir/lp_dialect.hpp"
#include "trex/optmodel/solvers/solve.hpp"

using namespace trex::optmodel;

namespace {

// A blend in Gurobi's layout: the header comments, a wrapped objective, purity rows written as `- c x[i] <= 0`, an
// empty Bounds section.
const char* kBlend = R"(\ Model Blend with purity limits
\ LP format - for model browsing. Use MPS format to capture full model detail.
Minimize
  12.5 x[0] + 7.25 x[1] + 30 x[2]
   + 4.125 x[3]
Subject To
 stock_0: x[0] <= 40
 stock_1: x[1] <= 25.5
 dose_lo_0: 2 x[0] + 1.5 x[1] + 4 x[2]
   + 0.5 x[3] >= 60
 dose_hi_0: 2 x[0] + 1.5 x[1] + 4 x[2]
   + 0.5 x[3] <= 90
 purity_0: - 0.75 x[3] <= 0
 purity_1: - 0.125 x[1] >= -3
Bounds
End
)";

// The same model in the CPLEX grammar GLPK reads.
const char* kBlendCplex = R"(Minimize
 obj: 12.5 x0 + 7.25 x1 + 30 x2 + 4.125 x3
Subject To
 s0: x0 <= 40
 s1: x1 <= 25.5
 d0: 2 x0 + 1.5 x1 + 4 x2 + 0.5 x3 >= 60
 d1: 2 x0 + 1.5 x1 + 4 x2 + 0.5 x3 <= 90
 p0: - 0.75 x3 <= 0
 p1: - 0.125 x1 >= -3
End
)";

// Facility location in Gurobi's layout with every bound form, general integers, binaries, an objective constant,
// rows that lost all their variables and a repeated row name.
const char* kFacility = R"(\ Model facility
\ LP format - for model browsing. Use MPS format to capture full model detail.
Maximize
  - 40 y[0] - 55 y[1] + 9 x[0,0] + 7 x[0,1] + 6 x[1,0] + 8 x[1,1] + 2 spare
   - 1.5e+00 shift(a,b) + 17.5 Constant
Subject To
 demand[0]: x[0,0] + x[1,0] <= 30
 demand[1]: x[0,1] + x[1,1] <= 25
 cap_0: - 35 y[0] + x[0,0] + x[0,1] <= 0
 cap_1: - 35 y[1] + x[1,0] + x[1,1] <= 0
 R4: 0 >= -3
 R5: >= -1
 link: spare - shift(a,b) = -2
 link: spare + shift(a,b) <= 40
Bounds
 -infinity <= spare <= 12
 shift(a,b) free
 3 <= x[0,0] <= 28
 x[1,1] = 4
 x[0,1] >= -inf
Binaries
 y[0] y[1]
Generals
 x[0,0] x[1,0]
End
)";

model facility_by_hand() {
    model m;
    m.sense = obj_sense::maximize;
    m.obj_constant = 17.5;
    const int y0 = m.add_var("y0", var_type::binary, 0, 1, -40);
    const int y1 = m.add_var("y1", var_type::binary, 0, 1, -55);
    const int x00 = m.add_var("x00", var_type::integer, 3, 28, 9);
    const int x01 = m.add_var("x01", var_type::continuous, -inf, inf, 7);
    const int x10 = m.add_var("x10", var_type::integer, 0, inf, 6);
    const int x11 = m.add_var("x11", var_type::continuous, 4, 4, 8);
    const int spare = m.add_var("spare", var_type::continuous, -inf, 12, 2);
    const int shift = m.add_var("shift", var_type::continuous, -inf, inf, -1.5);
    m.add_con("d0", {{x00, 1}, {x10, 1}}, row_sense::le, 30);
    m.add_con("d1", {{x01, 1}, {x11, 1}}, row_sense::le, 25);
    m.add_con("c0", {{y0, -35}, {x00, 1}, {x01, 1}}, row_sense::le, 0);
    m.add_con("c1", {{y1, -35}, {x10, 1}, {x11, 1}}, row_sense::le, 0);
    m.add_con("e0", {}, row_sense::ge, -3);
    m.add_con("e1", {}, row_sense::ge, -1);
    m.add_con("l0", {{spare, 1}, {shift, -1}}, row_sense::eq, -2);
    m.add_con("l1", {{spare, 1}, {shift, 1}}, row_sense::le, 40);
    return m;
}

void expect_same_optimum(const model& a, const model& b) {
    for (auto solve : {solve_glpk, solve_coin}) {
        const solve_result ra = solve(a, {}), rb = solve(b, {});
        ASSERT_EQ(ra.status, rb.status);
        if (ra.status == solve_status::optimal) {
            EXPECT_NEAR(ra.objective, rb.objective, 1e-9 * std::max(1.0, std::fabs(ra.objective)));
        }
    }
}

std::string error_of(const std::string& text, const std::string& what) {
    try {
        read_lp_dialect(text, what);
    } catch (const trex::error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(OptmodelLpDialect, GurobiLayoutEqualsTheCplexGrammarModel) {
    const model g = read_lp_text(kBlend, "model_0.lp");
    const model c = read_lp_text(kBlendCplex, "blend.lp");
    ASSERT_EQ(g.vars.size(), 4u);
    ASSERT_EQ(g.cons.size(), 6u);
    EXPECT_EQ(g.vars[3].name, "x[3]");
    EXPECT_EQ(g.cons[4].name, "purity_0");
    EXPECT_EQ(canonical_hash(g), canonical_hash(c));
    expect_same_optimum(g, c);
    const solve_result r = solve_coin(g, {});
    ASSERT_EQ(r.status, solve_status::optimal);
    EXPECT_NEAR(r.objective, 324.0, 1e-9);  // x[1] = 24 (cheapest dose, capped by purity_1), x[0] = 12
}

TEST(OptmodelLpDialect, BoundsTypesConstantsAndEmptyRows) {
    const model g = read_lp_text(kFacility, "model_7.lp");
    ASSERT_EQ(g.vars.size(), 8u);
    ASSERT_EQ(g.cons.size(), 8u);
    EXPECT_EQ(g.sense, obj_sense::maximize);
    EXPECT_DOUBLE_EQ(g.obj_constant, 17.5);
    EXPECT_TRUE(g.cons[4].terms.empty());
    EXPECT_DOUBLE_EQ(g.cons[5].rhs, -1);
    EXPECT_EQ(g.cons[6].name, "link");
    EXPECT_EQ(g.cons[7].name, "link#2");  // Gurobi writes a repeated name as it is
    EXPECT_EQ(g.vars[7].name, "shift(a,b)");
    EXPECT_EQ(g.vars[7].lb, -inf);
    EXPECT_EQ(g.vars[6].lb, -inf);
    EXPECT_EQ(g.vars[6].ub, 12);
    EXPECT_EQ(g.vars[0].type, var_type::binary);
    const model h = facility_by_hand();
    EXPECT_EQ(canonical_hash(g), canonical_hash(h));
    expect_same_optimum(g, h);
}

TEST(OptmodelLpDialect, AnEmptyRowThatCannotHoldMakesTheModelInfeasible) {
    const model g = read_lp_text("Minimize\n  x[0]\nSubject To\n R0: 0 >= 5\n c: x[0] >= 1\nBounds\nEnd\n", "e.lp");
    ASSERT_EQ(g.cons.size(), 2u);
    EXPECT_EQ(solve_glpk(g, {}).status, solve_status::infeasible);
    EXPECT_EQ(solve_coin(g, {}).status, solve_status::infeasible);
}

TEST(OptmodelLpDialect, WhatItCannotReadIsOneLineNamingFileAndLine) {
    EXPECT_EQ(error_of("Minimize\n x + [ x ^ 2 ]\nSubject To\n c: x >= 1\nEnd\n", "q.lp"),
              "q.lp:2: the objective's quadratic bracket must end with '] / 2'");
    EXPECT_EQ(error_of("Minimize\n x\nSubject To\n c: b = 1 -> x >= 2\nBinaries\n b\nEnd\n", "i.lp"),
              "i.lp:4: indicator constraints (->) are not supported");
    EXPECT_EQ(error_of("Minimize\n x\nSubject To\n c: x >= 1\nSemi-continuous\n x\nEnd\n", "s.lp"),
              "s.lp:5: the 'Semi-continuous' section is not supported");
    EXPECT_EQ(error_of("Minimize\n x\nSubject To\n c: x >= 1\nGeneral Constraints\n g: x = MAX ( y )\nEnd\n", "g.lp"),
              "g.lp:5: the 'General' section is not supported");
    EXPECT_EQ(error_of("Minimize\n x\nSubject To\n c: x >=\nEnd\n", "r.lp"), "r.lp:5: 'End' is not a number");
    EXPECT_EQ(error_of("x + y\n", "n.lp"), "n.lp:1: the file does not start with Minimize or Maximize");
    // through read_lp_text: GLPK's CPLEX reader is tried next and both readings are named
    try {
        read_lp_text("Minimize\n x[0] + [ x[0] ^ 2 ]\nSubject To\n c: x[0] >= 1\nEnd\n", "answer.lp");
        FAIL();
    } catch (const trex::error& e) {
        const std::string msg = e.what();
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
        EXPECT_NE(msg.find("answer.lp: not a valid CPLEX LP file: line 2"), std::string::npos) << msg;
        EXPECT_NE(msg.find("(read as Gurobi's LP dialect: line 2: the objective's quadratic bracket"),
                  std::string::npos)
            << msg;
    }
}

TEST(OptmodelLpDialect, CplexOnlySpellingsStillReachGlpk) {
    // `3x` and `x+y` are a product and a sum in the CPLEX grammar, names in Gurobi's: this reader refuses them and
    // GLPK reads them.
    EXPECT_NE(error_of("Maximize\n obj: 3x + 2y\nSubject To\n c: x + y <= 4\nEnd\n", "a.lp"), "");
    EXPECT_NE(error_of("Maximize\n obj: x+y\nSubject To\n c: x + y <= 4\nEnd\n", "b.lp"), "");
    const model m = read_lp_text("Maximize\n obj: 3x + 2y\nSubject To\n c: x+y <= 4\nEnd\n", "c.lp");
    ASSERT_EQ(m.vars.size(), 2u);
    const solve_result r = solve_glpk(m, {});
    ASSERT_EQ(r.status, solve_status::optimal);
    EXPECT_NEAR(r.objective, 12.0, 1e-9);
}

// Gurobi writes an objective constant as a column `Constant` fixed at 1 in Bounds: folded back, no phantom variable
// (with or without the bound line; Pyomo's ONE_VAR_CONSTANT and our obj_constant likewise).
TEST(OptmodelLpDialect, ObjectiveConstantColumnsFoldBack) {
    for (const char* text :
         {"Minimize\n  - x + 10 Constant\nSubject To\n c: x <= 3\nBounds\n Constant = 1\nEnd\n",
          "Minimize\n  - x + 10 Constant\nSubject To\n c: x <= 3\nBounds\nEnd\n",
          "min\nobj:\n+10 ONE_VAR_CONSTANT\n-1 x\ns.t.\nc:\n+1 x\n<= 3\nbounds\n 1 <= ONE_VAR_CONSTANT <= 1\nend\n",
          "Minimize\n obj: - x + 10 obj_constant\nSubject To\n c: x <= 3\nBounds\n obj_constant = 1\nEnd\n",
          "Minimize\n obj: - x + 10\nSubject To\n c: x <= 3\nEnd\n"}) {
        const model m = read_lp_text(text, "k.lp");
        ASSERT_EQ(m.vars.size(), 1u) << text;
        EXPECT_EQ(m.vars[0].name, "x");
        EXPECT_DOUBLE_EQ(m.obj_constant, 10) << text;
        const solve_result r = solve_coin(m, {});
        ASSERT_EQ(r.status, solve_status::optimal);
        EXPECT_NEAR(r.objective, 7.0, 1e-9) << text;
    }
}
