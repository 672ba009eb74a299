// The Debian-shipped sample models: COIN's MPS samples (known optima of netlib afiro and MIPLIB p0033, p0201,
// p0548, as tabulated in glpk-doc) and GLPK's MathProg / LP / MPS examples (optima stated in their comments), read
// through GLPK and solved by both COIN (Clp/Cbc) and GLPK.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "trex/optmodel/ir/glpk_io.hpp"
#include "trex/optmodel/solvers/solve.hpp"
#include "trex/optmodel/solvers/verify.hpp"

using namespace trex::optmodel;

namespace {

const std::string coin_dir = "/usr/share/coin/Data/Sample/";
const std::string glpk_dir = "/usr/share/doc/glpk-utils/examples/";

void expect_both(const model& m, double expected, double tol_rel, const std::string& what) {
    solve_options opt;
    opt.time_limit_s = 60;
    solve_result a = solve_coin(m, opt), b = solve_glpk(m, opt);
    ASSERT_EQ(a.status, solve_status::optimal) << what << " coin: " << a.message;
    ASSERT_EQ(b.status, solve_status::optimal) << what << " glpk: " << b.message;
    EXPECT_NEAR(a.objective, expected, tol_rel * std::max(1.0, std::fabs(expected))) << what << " (" << a.solver << ")";
    EXPECT_NEAR(b.objective, expected, tol_rel * std::max(1.0, std::fabs(expected))) << what << " (" << b.solver << ")";
}

}  // namespace

TEST(OptmodelSamples, CoinSampleKnownOptima) {
    if (!std::filesystem::exists(coin_dir + "afiro.mps")) GTEST_SKIP() << "coinor-libcoinutils-dev samples missing";
    struct known {
        const char* file;
        double optimum;
    } cases[] = {{"afiro.mps", -464.7531429}, {"p0033.mps", 3089}, {"p0201.mps", 7615}, {"p0548.mps", 8691}};
    for (const auto& k : cases) {
        model m = read_mps_file(coin_dir + k.file);
        expect_both(m, k.optimum, 1e-8, k.file);
    }
}

TEST(OptmodelSamples, GlpkExamplesKnownOptima) {
    if (!std::filesystem::exists(glpk_dir + "assign.mod")) GTEST_SKIP() << "glpk-utils examples missing";
    struct known {
        const char* file;
        double optimum;
    } cases[] = {{"assign.mod", 76},   {"bpp.mod", 3},  {"cpp.mod", 46},  {"fctp.mod", 471.55}, {"gap.mod", 261},
                 {"maxflow.mod", 29}, {"spp.mod", 20}, {"mvcp.mod", 6}, {"mfasp.mod", 3}};
    for (const auto& k : cases) {
        model m = read_mathprog_file(glpk_dir + k.file);
        expect_both(m, k.optimum, 1e-8, k.file);
    }
}

TEST(OptmodelSamples, PlanInThreeFormatsAgrees) {
    if (!std::filesystem::exists(glpk_dir + "plan.lp")) GTEST_SKIP() << "glpk-utils examples missing";
    // plan.lp writes numbers with a leading dot (".03"): GLPK's reader takes it, COIN's would not
    model lp = read_lp_file(glpk_dir + "plan.lp");
    model mps = read_mps_file(glpk_dir + "plan.mps");
    model mod = read_mathprog_file(glpk_dir + "plan.mod");
    const double ref = solve_glpk(lp).objective;
    expect_both(lp, ref, 1e-9, "plan.lp");
    expect_both(mps, ref, 1e-9, "plan.mps");
    expect_both(mod, ref, 1e-9, "plan.mod");
    EXPECT_NEAR(ref, 296.2166065, 1e-6);
}

TEST(OptmodelSamples, FixedDeckMpsReadsWithGlpk) {
    if (!std::filesystem::exists(glpk_dir + "samp1.mps")) GTEST_SKIP();
    model m = read_mps_file(glpk_dir + "samp1.mps", mps_format::fixed_format);
    EXPECT_GT(m.vars.size(), 0u);
}
