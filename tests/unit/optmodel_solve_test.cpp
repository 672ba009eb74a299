// The solve layer on numerically hostile models: numbers no solver may be given (Clp/Cbc abort on some of them),
// bounds and right-hand sides of COIN's infinity (1e30) and beyond, and the GLPK retry of small MILPs that Cbc does
// not finish in time.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "trex/optmodel/glpk_io.hpp"
#include "trex/optmodel/solve.hpp"

using namespace trex::optmodel;

namespace {

struct both_results {
    solve_result coin, glpk;
};

both_results solve_both(const std::string& lp) {
    const model m = read_lp_text(lp, "huge.lp");
    return {solve_coin(m), solve_glpk(m)};
}

void expect_refused(const solve_result& r, const std::string& what, const std::string& lp) {
    EXPECT_EQ(r.status, solve_status::error) << r.solver << " on\n" << lp;
    EXPECT_NE(r.message.find(what), std::string::npos) << r.solver << ": '" << r.message << "' lacks '" << what << "'";
    EXPECT_EQ(r.message.find('\n'), std::string::npos) << r.message;
    EXPECT_FALSE(r.solver.empty());
}

}  // namespace

TEST(OptmodelSolve, NumbersNoSolverCanTakeAreRefusedNamingTheCulprit) {
    // Each of these crashed a COIN solver (Clp's assertion |c_j| < 1e25 aborts the process) or gave garbage: Clp
    // "status 4", Cbc "infeasible" for feasible models, GLPK "optimal" with 1e-100 or a fatal error.
    struct refused_case {
        std::string lp, what;
    };
    const refused_case cases[] = {
        {"Minimize\n obj: -1e300 x\nSubject To\n c1: x <= 1e308\nEnd\n",
         "model 'huge.lp': variable 'x' has objective coefficient -1e+300"},
        {"Minimize\n obj: -1e28 x + y\nSubject To\n c1: x + y <= 3\nGeneral\n x\nEnd\n",
         "variable 'x' has objective coefficient -1e+28"},
        {"Minimize\n obj: 1e308 x + y\nSubject To\n c1: x + y >= 1\nEnd\n",
         "variable 'x' has objective coefficient 1e+308"},
        {"Minimize\n obj: x + y\nSubject To\n c1: 1e100 x + y >= 1\nEnd\n",
         "constraint 'c1' has coefficient 1e+100 on variable 'x'"},
        {"Maximize\n obj: x + y\nSubject To\n c1: 1e308 x + 1e308 y <= 1e308\nEnd\n",
         "constraint 'c1' has coefficient 1e+308 on variable 'x'"},
        {"Maximize\n obj: x + y\nSubject To\n c1: x - 1e300 y <= 10\nGeneral\n x y\nEnd\n",
         "constraint 'c1' has coefficient -1e+300 on variable 'y'"},
        {"Minimize\n obj: x\nSubject To\n c1: x + y >= 1\nBounds\n x >= 1e30\nEnd\n",
         "variable 'x' has lower bound 1e+30"},
        {"Minimize\n obj: x\nSubject To\n c1: x + y >= 1\nBounds\n -1e300 <= x <= -1e300\nEnd\n",
         "variable 'x' has upper bound -1e+300"},
        {"Minimize\n obj: x\nSubject To\n c1: x + y <= -1e300\nEnd\n", "constraint 'c1' has right-hand side -1e+300"},
        {"Minimize\n obj: x\nSubject To\n c1: x - y >= 1e30\nEnd\n", "constraint 'c1' has right-hand side 1e+30"},
        {"Minimize\n obj: x\nSubject To\n c1: x + y = 1e31\nGeneral\n x\nEnd\n",
         "constraint 'c1' has right-hand side 1e+31"},
    };
    for (const refused_case& c : cases) {
        const both_results r = solve_both(c.lp);
        expect_refused(r.coin, c.what, c.lp);
        expect_refused(r.glpk, c.what, c.lp);
    }
}

TEST(OptmodelSolve, NonFiniteNumbersInTheIrAreRefused) {
    // the IR can hold what no reader produces; the solvers refuse it rather than pass it on
    const double nan = std::numeric_limits<double>::quiet_NaN();
    struct edit_case {
        std::function<void(model&)> edit;
        std::string what;
    };
    const edit_case cases[] = {
        {[&](model& m) { m.vars[0].obj = nan; }, "variable 'x' has objective coefficient nan"},
        {[](model& m) { m.cons[0].terms[1].coef = inf; }, "constraint 'c1' has coefficient inf on variable 'y'"},
        {[&](model& m) { m.cons[0].rhs = nan; }, "constraint 'c1' has right-hand side nan"},
        {[&](model& m) { m.vars[1].lb = nan; }, "variable 'y' has lower bound nan"},
        {[](model& m) { m.vars[1].lb = inf; }, "variable 'y' has lower bound inf"},
        {[](model& m) { m.obj_constant = -inf; }, "model 'built': objective constant -inf"},
    };
    for (const edit_case& c : cases) {
        model m;
        m.name = "built";
        const int x = m.add_var("x", var_type::continuous, 0, 10, 1);
        const int y = m.add_var("y", var_type::integer, 0, 10, 1);
        m.add_con("c1", {{x, 1}, {y, 2}}, row_sense::ge, 3);
        c.edit(m);
        expect_refused(solve_coin(m), c.what, c.what);
        expect_refused(solve_glpk(m), c.what, c.what);
    }
}

TEST(OptmodelSolve, BoundsAndRightHandSidesOf1e30AndBeyondAreInfinite) {
    struct infinite_case {
        std::string lp;
        solve_status status;
        double objective;  // when optimal
    };
    const infinite_case cases[] = {
        // x + y <= 1e30 bounds nothing: unbounded (GLPK used to answer "optimal, 1e30")
        {"Maximize\n obj: x + y\nSubject To\n c1: x + y <= 1e30\nEnd\n", solve_status::unbounded, 0},
        {"Maximize\n obj: x + y\nSubject To\n c1: x + y <= 1e30\nGeneral\n x y\nEnd\n", solve_status::unbounded, 0},
        // an upper bound of 1e100 is no bound
        {"Maximize\n obj: x\nSubject To\n c1: x - y <= 5\nBounds\n x <= 1e100\nEnd\n", solve_status::unbounded, 0},
        // nor a lower bound of -1e300, nor a >= row at -1e31
        {"Minimize\n obj: y\nSubject To\n c1: x + y >= 1\nBounds\n -1e300 <= y <= 5\nEnd\n", solve_status::unbounded,
         0},
        {"Minimize\n obj: x\nSubject To\n c1: x - y >= -1e31\nBounds\n x free\nEnd\n", solve_status::unbounded, 0},
        // and where they bound nothing that matters, the optimum is the finite one
        {"Minimize\n obj: x + y\nSubject To\n c1: x + y >= 1\n c2: x - y >= -1e300\nBounds\n x <= 1e100\n"
         " -1e300 <= y <= 5\nEnd\n",
         solve_status::optimal, 1.0},
        {"Minimize\n obj: x + y\nSubject To\n c1: x + y >= 1\n c2: x - y >= -1e300\nBounds\n x <= 1e100\n"
         " -1e300 <= y <= 5\nGeneral\n x y\nEnd\n",
         solve_status::optimal, 1.0},
    };
    for (const infinite_case& c : cases) {
        const both_results r = solve_both(c.lp);
        for (const solve_result* s : {&r.coin, &r.glpk}) {
            EXPECT_EQ(s->status, c.status) << s->solver << " (" << s->message << ") on\n" << c.lp;
            if (c.status == solve_status::optimal) {
                EXPECT_NEAR(s->objective, c.objective, 1e-9) << s->solver;
            }
        }
    }
}
