// IR, writers and GLPK readers on small hand-made models: numbers, names, senses, bounds and types survive every
// format; bad files give one-line errors naming the file and line.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/optmodel/ir/format.hpp"
#include "trex/optmodel/ir/glpk_io.hpp"
#include "trex/optmodel/ir/latex.hpp"
#include "trex/optmodel/solvers/solve.hpp"
#include "trex/optmodel/solvers/verify.hpp"
#include "trex/optmodel/ir/writers.hpp"

using namespace trex::optmodel;

namespace {

// max 3x + 2y + 0.03z + 5  s.t. x + y <= 4.5, x + 3y >= 2, x - z = -1.25, x int in [0,10], y in [-2, inf), z bin
model sample_mip() {
    model m;
    m.name = "sample";
    m.sense = obj_sense::maximize;
    m.obj_constant = 5;
    int x = m.add_var("x_1", var_type::integer, 0, 10, 3);
    int y = m.add_var("y", var_type::continuous, -2, inf, 2);
    int z = m.add_var("open_2", var_type::binary, 0, 1, 0.03);
    m.add_con("cap_1", {{x, 1}, {y, 1}}, row_sense::le, 4.5);
    m.add_con("mix", {{x, 1}, {y, 3}}, row_sense::ge, 2);
    m.add_con("link", {{x, 1}, {z, -1}}, row_sense::eq, -1.25 + 0.25 + 1);  // x - z = 0
    return m;
}

void expect_same_optimum(const model& a, const model& b, const std::string& what) {
    solve_result ra = solve_glpk(a), rb = solve_glpk(b);
    ASSERT_EQ(ra.status, rb.status) << what;
    EXPECT_NEAR(ra.objective, rb.objective, 1e-9 * std::max(1.0, std::fabs(ra.objective))) << what;
    EXPECT_EQ(a.vars.size(), b.vars.size()) << what;
    EXPECT_EQ(a.cons.size(), b.cons.size()) << what;
}

std::string tmp_path(const std::string& name) {
    return trex::test::scratch_dir("ir") + "/" + name;
}

}  // namespace

TEST(OptmodelFormat, NumbersRoundTripWithoutLeadingDot) {
    EXPECT_EQ(format_number(0.03), "0.03");
    EXPECT_EQ(format_number(-0.5), "-0.5");
    EXPECT_EQ(format_number(12), "12");
    EXPECT_EQ(format_number(-0.0), "0");
    EXPECT_EQ(format_number(1e-5), "1e-05");
    for (double v : {0.1, 1.0 / 3.0, 2.0 / 7.0 * 1e7, 123456.789, 1e-12, 3.0e20}) {
        std::string s = format_number(v);
        EXPECT_NE(s[0], '.');
        EXPECT_EQ(std::stod(s), v) << s;
    }
    EXPECT_EQ(format_value(2.9999999999999), "3");
    EXPECT_EQ(format_value(0.125), "0.125");
}

TEST(OptmodelFormat, SafeNames) {
    model m;
    m.add_var("x[1,2]", var_type::continuous, 0, inf);
    m.add_var("x(1,2)", var_type::continuous, 0, inf);
    m.add_var("e1", var_type::continuous, 0, inf);
    m.add_var("3d", var_type::continuous, 0, inf);
    m.add_var("free", var_type::continuous, 0, inf);
    m.add_var("edge_1", var_type::continuous, 0, inf);
    safe_names n = make_safe_names(m);
    EXPECT_EQ(n.vars[0], "x_1_2_");
    EXPECT_EQ(n.vars[1], "x_1_2__2");
    EXPECT_EQ(n.vars[2], "n_e1");
    EXPECT_EQ(n.vars[3], "n_3d");
    EXPECT_EQ(n.vars[4], "n_free");
    EXPECT_EQ(n.vars[5], "edge_1");
}

TEST(OptmodelIr, ValidateNamesTheCulprit) {
    model m = sample_mip();
    validate(m);
    model bad = m;
    bad.vars[1].lb = 7;
    bad.vars[1].ub = 3;
    try {
        validate(bad);
        FAIL();
    } catch (const trex::error& e) {
        EXPECT_EQ(std::string(e.what()), "model 'sample': variable 'y' has lb 7 > ub 3");
    }
    bad = m;
    bad.cons[0].terms.push_back({5, 1.0});
    EXPECT_THROW(validate(bad), trex::error);
    bad = m;
    bad.cons[1].name = "cap_1";
    EXPECT_THROW(validate(bad), trex::error);
}

TEST(OptmodelIr, CanonicalHashIgnoresOrderAndNames) {
    model a = sample_mip();
    model b;
    b.name = "other";
    b.sense = a.sense;
    b.obj_constant = a.obj_constant;
    // variables and constraints in reverse order, renamed
    for (int j = (int)a.vars.size() - 1; j >= 0; j--) {
        variable v = a.vars[j];
        v.name = fmt::format("v{}", j);
        b.vars.push_back(v);
    }
    const int n = (int)a.vars.size();
    for (int i = (int)a.cons.size() - 1; i >= 0; i--) {
        constraint c = a.cons[i];
        c.name = fmt::format("c{}", i);
        for (auto& t : c.terms) t.var = n - 1 - t.var;
        std::reverse(c.terms.begin(), c.terms.end());
        b.cons.push_back(c);
    }
    EXPECT_EQ(canonical_hash(a), canonical_hash(b));
    b.cons[0].rhs += 1;
    EXPECT_NE(canonical_hash(a), canonical_hash(b));
}

TEST(OptmodelIr, EveryWriterRoundTrips) {
    const model m = sample_mip();
    validate(m);
    const std::string lp = write_lp(m);
    EXPECT_EQ(lp.find(" ."), std::string::npos) << lp;  // no leading-dot numbers
    expect_same_optimum(m, read_lp_text(lp, "sample.lp"), "lp");
    expect_same_optimum(m, read_mps_text(write_mps(m), "sample.mps"), "mps");
    expect_same_optimum(m, read_mathprog_text(write_mathprog(m), "sample.mod"), "mathprog");
    model tex = parse_latex(write_latex(m), "sample.tex");
    expect_same_optimum(m, tex, "latex");
    // senses, constant, types and bounds survive exactly
    for (const model& r : {read_lp_text(lp, "a"), read_mps_text(write_mps(m), "b"), tex}) {
        EXPECT_EQ(r.sense, obj_sense::maximize);
        EXPECT_EQ(r.obj_constant, 5);
        EXPECT_EQ(canonical_hash(r), canonical_hash(m)) << write_lp(r);
    }
    const solve_result coin = solve_coin(m), glpk = solve_glpk(m);
    ASSERT_EQ(coin.status, solve_status::optimal);
    EXPECT_NEAR(coin.objective, glpk.objective, 1e-9);
}

TEST(OptmodelIr, LatexVariables) {
    EXPECT_EQ(latex_var("x_1_2"), "x_{1,2}");
    EXPECT_EQ(latex_var("open_3"), "\\mathit{open}_{3}");
    EXPECT_EQ(latex_var("foo_bar"), "\\mathit{foo\\_bar}");
    EXPECT_EQ(latex_var("y"), "y");
    EXPECT_THROW(parse_latex("\\begin{align*}\n\\min\\quad & 3\\,x_{1} +\n\\end{align*}", "ans"), trex::error);
}

TEST(OptmodelIr, LpDualsMatchGlpk) {
    // max 3x + 5y s.t. x <= 4, 2y <= 12, 3x + 2y <= 18 (Hillier-Lieberman Wyndor): duals 0, 1.5, 1
    for (obj_sense s : {obj_sense::maximize, obj_sense::minimize}) {
        model m;
        m.sense = s;
        const double f = s == obj_sense::maximize ? 1.0 : -1.0;
        int x = m.add_var("x", var_type::continuous, 0, inf, 3 * f);
        int y = m.add_var("y", var_type::continuous, 0, inf, 5 * f);
        m.add_con("plant1", {{x, 1}}, row_sense::le, 4);
        m.add_con("plant2", {{y, 2}}, row_sense::le, 12);
        m.add_con("plant3", {{x, 3}, {y, 2}}, row_sense::le, 18);
        solve_result a = solve_coin(m), b = solve_glpk(m);
        ASSERT_EQ(a.status, solve_status::optimal);
        EXPECT_NEAR(a.objective, 36 * f, 1e-9);
        const double expect[] = {0, 1.5 * f, 1 * f};
        for (int i = 0; i < 3; i++) {
            EXPECT_NEAR(a.dual[i], expect[i], 1e-9) << i;
            EXPECT_NEAR(b.dual[i], expect[i], 1e-9) << i;
        }
    }
}

TEST(OptmodelIr, InfeasibleAndUnboundedAgree) {
    for (bool integer : {false, true}) {
        const var_type t = integer ? var_type::integer : var_type::continuous;
        model inf_m;
        int x = inf_m.add_var("x", t, 0, inf, 1);
        inf_m.add_con("lo", {{x, 1}}, row_sense::ge, 5);
        inf_m.add_con("hi", {{x, 1}}, row_sense::le, 3);
        EXPECT_EQ(solve_coin(inf_m).status, solve_status::infeasible) << integer;
        EXPECT_EQ(solve_glpk(inf_m).status, solve_status::infeasible) << integer;
        model unb;
        unb.sense = obj_sense::maximize;
        int u = unb.add_var("u", t, 0, inf, 1);
        int w = unb.add_var("w", t, 0, inf, 1);
        unb.add_con("c", {{u, 1}, {w, -1}}, row_sense::le, 3);
        EXPECT_EQ(solve_coin(unb).status, solve_status::unbounded) << integer;
        EXPECT_EQ(solve_glpk(unb).status, solve_status::unbounded) << integer;
        EXPECT_EQ(verify(unb).verdict, gate::kept);
        EXPECT_EQ(verify(unb).status, solve_status::unbounded);
    }
}

TEST(OptmodelIr, BadFilesGiveOneLineErrors) {
    const std::string p = tmp_path("bad.lp");
    std::ofstream(p) << "Minimize\n obj: x + y\nSubject To\n c1: x + y >=\nEnd\n";
    try {
        read_lp_file(p);
        FAIL();
    } catch (const trex::error& e) {
        std::string msg = e.what();
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
        EXPECT_EQ(msg.rfind(p + ": not a valid CPLEX LP file: line 5: missing right-hand side (read as Gurobi", 0), 0u) << msg;
    }
    std::ofstream(p) << "garbage that is no MPS\n";
    EXPECT_THROW(read_mps_file(p), trex::error);
    try {
        read_mathprog_text("var x >= 0;\nminimize z: x +;\nend;\n", "answer.mod");
        FAIL();
    } catch (const trex::error& e) {
        std::string msg = e.what();
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
        EXPECT_EQ(msg.rfind("answer.mod: MathProg model error: line 2", 0), 0u) << msg;
    }
    EXPECT_THROW(read_lp_file(tmp_path("missing.lp")), trex::error);
    std::filesystem::remove(p);
}

// A free bound after a fixed one makes GLPK 5.0's MPS reader fail an internal assertion (a fatal error) in both the
// free and the fixed format. The fatal error of the first attempt frees GLPK's environment and the hooks with it; the
// second attempt must still be guarded (found by fuzz/mps_fuzz.cpp: it used to abort the process).
TEST(OptmodelIr, GlpkFatalErrorInEveryMpsAttemptIsAnError) {
    const std::string mps =
        "NAME          T\nROWS\n N  COST\n L  LIM1\nCOLUMNS\n"
        "    X1        COST               1.0   LIM1               1.0\n"
        "RHS\n    RHS       LIM1               4.0\n"
        "BOUNDS\n FX BND       X1                 1.0\n FR BND       X1\nENDATA\n";
    for (int run = 0; run < 2; run++) {
        try {
            read_mps_text(mps, "fx_fr.mps", mps_format::detect);
            FAIL() << "GLPK read it";
        } catch (const trex::error& e) {
            const std::string msg = e.what();
            EXPECT_EQ(msg.rfind("fx_fr.mps: not a valid MPS file: ", 0), 0u) << msg;
            EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
        }
    }
    // GLPK still works afterwards
    EXPECT_NO_THROW(read_lp_text("Minimize\n obj: x\nSubject To\n c1: x >= 1\nEnd\n", "after.lp"));
}
