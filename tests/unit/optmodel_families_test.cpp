// Every problem family: generator -> IR -> every writer -> reader / solver round trip gives the same objective;
// COIN (Clp/Cbc) and GLPK agree on a sample; designed infeasible / unbounded instances are labelled so; the
// family's solver-code template (PuLP) reproduces the objective and its gurobipy twin compiles.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "support/test_support.hpp"
#include "trex/optmodel/families/family.hpp"
#include "trex/optmodel/ir/glpk_io.hpp"
#include "trex/optmodel/ir/latex.hpp"
#include "trex/optmodel/ir/writers.hpp"
#include "trex/optmodel/render/code.hpp"
#include "trex/optmodel/solvers/python_runner.hpp"
#include "trex/optmodel/solvers/verify.hpp"

using namespace trex::optmodel;

namespace {

std::string temp_dir(const std::string& name) {
    return trex::test::scratch_dir("fam_" + name);
}

void expect_same(const solve_result& ref, const model& m, const std::string& what) {
    solve_result r = solve_glpk(m);
    ASSERT_EQ(r.status, ref.status) << what;
    if (ref.status == solve_status::optimal) {
        EXPECT_TRUE(objectives_agree(r.objective, ref.objective, 1e-9))
            << what << ": " << r.objective << " vs " << ref.objective;
    }
}

}  // namespace

TEST(OptmodelFamilies, AtLeastTwentyWithEightDomains) {
    EXPECT_GE(all_families().size(), 20u);
    std::set<std::string> domains;
    for (const family* f : all_families()) {
        EXPECT_FALSE(f->scenarios.empty()) << f->name;
        for (const auto& s : f->scenarios) domains.insert(s.domain);
        EXPECT_FALSE(f->code.empty()) << f->name;
        EXPECT_FALSE(f->latex.empty()) << f->name;
    }
    for (const char* d : {"production", "logistics", "finance", "energy", "healthcare", "education", "environment",
                          "retail", "generic"})
        EXPECT_TRUE(domains.count(d)) << d;
}

TEST(OptmodelFamilies, EveryWriterRoundTrips) {
    for (const family* f : all_families()) {
        for (int seed = 0; seed < 2; seed++) {
            gen_request rq;
            rq.seed = 100 + seed;
            rq.difficulty = 1 + seed;
            const instance in = generate(*f, rq);
            const std::string what = f->name + " seed " + std::to_string(rq.seed);
            const solve_result ref = solve_glpk(in.m);
            ASSERT_NE(ref.status, solve_status::error) << what;
            expect_same(ref, read_lp_text(write_lp(in.m), what + ".lp"), what + " lp");
            expect_same(ref, read_mps_text(write_mps(in.m), what + ".mps"), what + " mps");
            expect_same(ref, read_mathprog_text(write_mathprog(in.m), what + ".mod"), what + " mathprog");
            expect_same(ref, parse_latex(write_latex(in.m), what + ".tex"), what + " latex");
            // the MPS reader is used by COIN-independent tools; COIN solves the re-read model too
            const solve_result coin = solve_coin(read_mps_text(write_mps(in.m), what));
            ASSERT_EQ(coin.status, ref.status) << what;
            if (ref.status == solve_status::optimal) {
                EXPECT_TRUE(objectives_agree(coin.objective, ref.objective)) << what;
            }
        }
    }
}

TEST(OptmodelFamilies, CoinAndGlpkAgree) {
    for (const family* f : all_families()) {
        int kept = 0;
        for (int seed = 0; seed < 6; seed++) {
            gen_request rq;
            rq.seed = 1000 + seed;
            rq.difficulty = 1 + seed % 3;
            const verification v = verify(generate(*f, rq).m);
            EXPECT_NE(v.verdict, gate::status_disagree) << f->name << " seed " << rq.seed;
            EXPECT_NE(v.verdict, gate::objective_disagree) << f->name << " seed " << rq.seed;
            EXPECT_NE(v.verdict, gate::solver_error) << f->name << " seed " << rq.seed;
            EXPECT_NE(v.verdict, gate::time_limit) << f->name << " seed " << rq.seed;
            if (v.verdict == gate::kept) {
                kept++;
                EXPECT_EQ(v.status, solve_status::optimal) << f->name;
            }
        }
        EXPECT_GE(kept, 2) << f->name;
    }
}

TEST(OptmodelFamilies, DesignedStatusesAreLabelled) {
    int checked = 0;
    for (const family* f : all_families()) {
        for (design d : {design::infeasible, design::unbounded}) {
            if ((d == design::infeasible && !f->can_infeasible) || (d == design::unbounded && !f->can_unbounded))
                continue;
            for (int seed = 0; seed < 3; seed++) {
                gen_request rq;
                rq.seed = 77 + seed;
                rq.want = d;
                const verification v = verify(generate(*f, rq).m);
                EXPECT_EQ(v.verdict, gate::kept) << f->name << " " << design_name(d);
                EXPECT_EQ(v.status, d == design::infeasible ? solve_status::infeasible : solve_status::unbounded)
                    << f->name << " " << design_name(d) << " seed " << seed;
                checked++;
            }
        }
    }
    EXPECT_GE(checked, 30);
}

TEST(OptmodelFamilies, GenerationIsDeterministic) {
    for (const family* f : all_families()) {
        gen_request rq;
        rq.seed = 5;
        rq.difficulty = 3;
        const instance a = generate(*f, rq), b = generate(*f, rq);
        EXPECT_EQ(a.data.dump(), b.data.dump()) << f->name;
        EXPECT_EQ(write_lp(a.m), write_lp(b.m)) << f->name;
        rq.seed = 6;
        EXPECT_NE(canonical_hash(generate(*f, rq).m), canonical_hash(a.m)) << f->name;
    }
}

TEST(OptmodelFamilies, CodeTemplatesReproduceTheObjective) {
    const std::string py = find_python_with_pulp();
    if (py.empty()) GTEST_SKIP() << "no python with pulp (run scripts/setup.sh)";
    python_runner runner(py);
    const std::string dir = temp_dir("code");
    std::string compile_check = "import json\nbad = []\n";
    for (const family* f : all_families()) {
        gen_request rq;
        rq.seed = 3;
        rq.difficulty = 2;
        const instance in = generate(*f, rq);
        const verification v = verify(in.m);
        const std::string sub = dir + "/" + f->name;
        std::filesystem::create_directories(sub);
        std::ofstream(sub + "/data.json") << in.data.dump(2);
        // family template: DPS (reads data.json) and inline-data variants; IR writer script
        struct prog {
            std::string file, text;
        } progs[] = {{sub + "/template_file.py", render_code(*f, in, dialect::pulp, true)},
                     {sub + "/template_inline.py", render_code(*f, in, dialect::pulp, false)},
                     {sub + "/ir.py", write_pulp(in.m)}};
        for (const auto& p : progs) {
            std::ofstream(p.file) << p.text;
            python_result r = runner.run(p.file);
            ASSERT_TRUE(r.ok) << f->name << " " << p.file << ": " << r.error;
            std::string status;
            double obj = 0;
            bool has_obj = false;
            ASSERT_TRUE(parse_program_output(r.output, &status, &obj, &has_obj)) << r.output;
            ASSERT_EQ(status, solve_status_name(v.status)) << f->name << " " << p.file;
            if (v.status == solve_status::optimal) {
                ASSERT_TRUE(has_obj);
                EXPECT_TRUE(objectives_agree(obj, v.objective))
                    << f->name << " " << p.file << " " << obj << " vs " << v.objective;
            }
        }
        for (const auto& [file, text] :
             {std::pair{sub + "/gurobi_template.py", render_code(*f, in, dialect::gurobipy, true)},
              std::pair{sub + "/gurobi_ir.py", write_gurobipy(in.m)}}) {
            std::ofstream(file) << text;
            compile_check += "try:\n    compile(open(\"" + file + "\").read(), \"" + file +
                             "\", \"exec\")\nexcept SyntaxError as e:\n    bad.append(str(e))\n";
        }
    }
    compile_check += "print(\"Status:\", \"optimal\" if not bad else \"; \".join(bad))\n";
    std::ofstream(dir + "/compile_check.py") << compile_check;
    python_result r = runner.run(dir + "/compile_check.py");
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.output, "Status: optimal\n");
    std::filesystem::remove_all(dir);
}

// Pyomo answers are re-executed for real by the data build (Pyomo with GLPK's glpsol): every family's program, on an
// optimal instance and on each designed infeasible / unbounded one, reports the verified status and objective.
TEST(OptmodelFamilies, PyomoProgramsReproduceTheObjective) {
    const std::string py = find_python_with_pulp();
    if (py.empty()) GTEST_SKIP() << "no python with pulp (run scripts/setup.sh)";
    python_runner runner(py);
    const std::string dir = temp_dir("pyomo");
    {
        std::ofstream(dir + "/probe.py") << "import pyomo.environ\nprint('Status: optimal')\n";
        if (!runner.run(dir + "/probe.py").ok) GTEST_SKIP() << "no pyomo in the project venv (run scripts/setup.sh)";
    }
    int runs = 0;
    for (const family* f : all_families()) {
        std::vector<design> designs = {design::feasible};
        if (f->can_infeasible) designs.push_back(design::infeasible);
        if (f->can_unbounded) designs.push_back(design::unbounded);
        for (design d : designs) {
            gen_request rq;
            rq.seed = 21;
            rq.difficulty = 2;
            rq.want = d;
            const instance in = generate(*f, rq);
            const verification v = verify(in.m);
            std::ofstream(dir + "/data.json") << in.data.dump(2);
            std::ofstream(dir + "/p.py") << render_code(*f, in, dialect::pyomo, runs % 2 == 0);
            python_result r = runner.run(dir + "/p.py");
            ASSERT_TRUE(r.ok) << f->name << ": " << r.error;
            std::string status;
            double obj = 0;
            bool has_obj = false;
            ASSERT_TRUE(parse_program_output(r.output, &status, &obj, &has_obj)) << r.output;
            EXPECT_EQ(status, solve_status_name(v.status)) << f->name << " " << design_name(d);
            if (v.status == solve_status::optimal)
                EXPECT_TRUE(has_obj && objectives_agree(obj, v.objective))
                    << f->name << " " << obj << " vs " << v.objective;
            runs++;
        }
    }
    EXPECT_GE(runs, (int)all_families().size());
    std::filesystem::remove_all(dir);
}
