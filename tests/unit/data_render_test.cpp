// Rendering: no objective value or solution leaks into questions; DPS questions for code tasks carry no numbers
// inline; every representation and category renders for every family and re-executes.
#include <gtest/gtest.h>

#include <functional>
#include <regex>
#include <set>

#include "trex/optmodel/ir/format.hpp"
#include "trex/optmodel/ir/writers.hpp"
#include "trex/optmodel/render/prose.hpp"
#include "trex/optmodel/render/render.hpp"
#include "trex/optmodel/solvers/python_runner.hpp"

using namespace trex::optmodel;

TEST(DataRender, NoObjectiveLeaksIntoQuestions) {
    int checked = 0;
    for (const family* f : all_families()) {
        for (int seed = 0; seed < 4; seed++) {
            gen_request rq;
            rq.seed = 500 + seed;
            rq.difficulty = 1 + seed % 3;
            const instance in = generate(*f, rq);
            const verification v = verify(in.m);
            if (v.status != solve_status::optimal) continue;
            const std::string obj = format_value(v.objective, 10);
            // a value that is itself part of the data cannot leak (e.g. one module bought at its listed price)
            bool in_data = false;
            std::function<void(const ojson&)> scan = [&](const ojson& j) {
                if (j.is_number() && format_value(j.get<double>(), 10) == obj) in_data = true;
                if (j.is_structured())
                    for (const auto& x : j) scan(x);
            };
            scan(in.data);
            if (in_data) continue;
            for (representation rep : {representation::dp, representation::dt, representation::dps}) {
                for (task t : {task::formulation, task::code, task::lp_file, task::benchmark}) {
                    const std::string q = render_question(*f, in, rep, t, dialect::pulp, 9);
                    EXPECT_EQ(q.find("ptimal objective value is"), std::string::npos) << f->name;
                    EXPECT_EQ(q.find('{'), q.find("```json") == std::string::npos ? std::string::npos : q.find('{'))
                        << f->name << ": unexpanded template in\n"
                        << q;
                    // the objective as a whole number token (long enough not to be a data value by accident)
                    if (obj.size() >= 4) {
                        const std::regex tok("(^|[^0-9.])" + std::regex_replace(obj, std::regex("\\."), "\\.") +
                                             "([^0-9]|$)");
                        EXPECT_FALSE(std::regex_search(q, tok)) << f->name << " leaks " << obj << " in\n" << q;
                    }
                    checked++;
                }
            }
        }
    }
    EXPECT_GT(checked, 500);
}

TEST(DataRender, DpsCodeQuestionsHaveNoInlineNumbers) {
    for (const family* f : all_families()) {
        gen_request rq;
        rq.seed = 42;
        const instance in = generate(*f, rq);
        const std::string q = render_question(*f, in, representation::dps, task::code, dialect::pulp, 1);
        EXPECT_EQ(q.find("```json"), std::string::npos) << f->name;
        EXPECT_NE(q.find("data.json"), std::string::npos) << f->name;
        const std::string qf = render_question(*f, in, representation::dps, task::formulation, dialect::pulp, 1);
        EXPECT_NE(qf.find("```json"), std::string::npos) << f->name;  // formulation needs the numbers
    }
}

TEST(DataRender, EveryFamilyRepresentationAndCategoryReexecutes) {
    const std::string py_path = find_python_with_pulp();
    std::unique_ptr<python_runner> py;
    if (!py_path.empty()) py = std::make_unique<python_runner>(py_path);
    for (const family* f : all_families()) {
        gen_request rq;
        rq.seed = 8;
        const instance in = generate(*f, rq);
        const verification v = verify(in.m);
        int k = 0;
        for (representation rep : {representation::dp, representation::dt, representation::dps}) {
            for (task t : {task::formulation, task::formulation_code, task::code, task::lp_file}) {
                const bool code = t == task::code || t == task::formulation_code;
                if (code && !py) continue;
                if (code && (k++ % 2)) continue;  // half of the code cases keep the test quick
                const std::string a = render_answer(*f, in, rep, t, dialect::pulp, v, 4);
                const reexec_result r = reexec_answer(a, t, rep, in.data, v, py.get(), "/tmp/trex_render_reexec");
                EXPECT_TRUE(r.ok) << f->name << " " << representation_name(rep) << " " << task_name(t) << ": "
                                  << r.detail;
            }
        }
    }
}

// The direct answer (sft.answer = "direct") is the reasoned answer's LP file alone, and it re-executes; every CPT
// document carries the instance's LP file, which solves to the document's own optimum.
TEST(DataRender, DirectAnswersAndCptModelFilesAreTheVerifiedModel) {
    for (const family* f : all_families()) {
        gen_request rq;
        rq.seed = 11;
        const instance in = generate(*f, rq);
        const verification v = verify(in.m);
        const std::string lp = "```lp\n" + write_lp(in.m) + "```\n";
        for (representation rep : {representation::dp, representation::dt, representation::dps}) {
            const std::string direct = render_answer(*f, in, rep, task::lp_file, dialect::pulp, v, 4, false);
            EXPECT_EQ(direct, lp) << f->name;
            const std::string reasoned = render_answer(*f, in, rep, task::lp_file, dialect::pulp, v, 4);
            EXPECT_NE(reasoned.find("<think>"), std::string::npos) << f->name;
            EXPECT_EQ(reasoned.substr(reasoned.size() - lp.size()), lp) << f->name;
            const reexec_result r =
                reexec_answer(direct, task::lp_file, rep, in.data, v, nullptr, "/tmp/trex_render_direct");
            EXPECT_TRUE(r.ok) << f->name << ": " << r.detail;
        }
        const std::string doc = render_cpt_document(*f, in, v, 5);
        const size_t at = doc.find("## Model file\n");
        ASSERT_NE(at, std::string::npos) << f->name;
        EXPECT_LT(at, doc.find("## Solution")) << f->name;
        EXPECT_NE(doc.find(lp, at), std::string::npos) << f->name;
        const reexec_result r = reexec_answer(doc.substr(at), task::lp_file, representation::dp, in.data, v, nullptr,
                                              "/tmp/trex_render_direct");
        EXPECT_TRUE(r.ok) << f->name << ": " << r.detail;
    }
}

// Designed infeasible and unbounded instances of every family that has them: the PuLP program prints the status of
// the label. CBC calls some unbounded LPs infeasible (product_mix with a product no constraint limits and the others
// bounded); the programs tell the two apart with a zero-objective copy.
TEST(DataRender, DesignedStatusesReexecuteInPulpPrograms) {
    const std::string py_path = find_python_with_pulp();
    if (py_path.empty()) GTEST_SKIP() << "no python3 with pulp";
    python_runner py(py_path);
    int checked = 0;
    for (const family* f : all_families())
        for (design d : {design::infeasible, design::unbounded}) {
            if ((d == design::infeasible && !f->can_infeasible) || (d == design::unbounded && !f->can_unbounded))
                continue;
            for (uint64_t seed = 1; seed <= 3; seed++) {
                gen_request rq;
                rq.seed = seed;
                rq.want = d;
                const instance in = generate(*f, rq);
                const verification v = verify(in.m);
                if (v.status == solve_status::optimal) continue;  // the design gate of trex data build drops these
                const std::string a = render_answer(*f, in, representation::dps, task::code, dialect::pulp, v, 4);
                const reexec_result r = reexec_answer(a, task::code, representation::dps, in.data, v, &py,
                                                      "/tmp/trex_render_reexec_status");
                EXPECT_TRUE(r.ok) << f->name << " " << design_name(d) << " seed " << seed << ": " << r.detail;
                checked++;
            }
        }
    EXPECT_GE(checked, 10);
}

// Numbers the answers write come out as the data give them: no binary noise such as 2.1999999999999997 or
// 16239.999999999998 in LP files (portfolio's deviations and caps were computed, not given).
TEST(DataRender, WrittenModelsHaveNoBinaryNoise) {
    const std::regex noise(R"(\d\.\d*(0000000|9999999)\d)");
    for (const family* f : all_families())
        for (uint64_t seed = 1; seed <= 60; seed++) {
            gen_request rq;
            rq.seed = seed;
            rq.difficulty = 1 + (int)(seed % 3);
            const instance in = generate(*f, rq);
            std::smatch m;
            const std::string lp = write_lp(in.m);
            EXPECT_FALSE(std::regex_search(lp, m, noise)) << f->name << " seed " << seed << ": " << m.str();
        }
}

// Template joins keep English agreement: articles before vowel sounds, singular units after "per".
TEST(DataRender, TidyWordsFixesArticlesAndUnits) {
    EXPECT_EQ(tidy_words("A analyzer and a oven, an pallet, a unit, an hour, a one-way arc"),
              "An analyzer and an oven, a pallet, a unit, an hour, a one-way arc");
    EXPECT_EQ(tidy_words("$3 per liters, 4 per batches, 5 per bags of feed, 6 per hours, 7 per thousand barrels"),
              "$3 per liter, 4 per batch, 5 per bag of feed, 6 per hour, 7 per thousand barrels");
    EXPECT_EQ(tidy_words("per class, per series, per analysis, per cities"),
              "per class, per series, per analysis, per city");
    EXPECT_EQ(tidy_words("Plant A and B. A oven"), "Plant A and B. An oven");  // "A" inside a sentence is a name
    rng r(1, 2);
    EXPECT_EQ(expand("[a {machine}] costs $5 per {unit}", {{"machine", "analyzer"}, {"unit", "liters"}}, r),
              "an analyzer costs $5 per liter");
}

// Members without a value are said in words (not "products not listed have no limit"); 0/1 relations are
// sentences ("Site 9 covers Riverton and Ashland."), not lists of zeros and ones.
TEST(DataRender, AbsentValuesAndRelationsAreSentences) {
    const family& pm = find_family("product_mix");
    gen_request rq;
    rq.want = design::unbounded;  // one product has no sales limit
    bool said = false;
    for (uint64_t seed = 1; seed <= 20 && !said; seed++) {
        rq.seed = seed;
        const instance in = generate(pm, rq);
        std::string free_product;
        for (const auto& p : in.data["products"])
            if (!in.data["max_sales"].contains(p.get<std::string>())) free_product = p.get<std::string>();
        if (free_product.empty()) continue;
        const std::string dp = render_problem(pm, in, representation::dp, false, seed);
        const std::string dt = render_problem(pm, in, representation::dt, false, seed);
        EXPECT_EQ(dp.find("not listed"), std::string::npos) << dp;
        EXPECT_NE(dp.find(free_product + " has no sales limit"), std::string::npos) << dp;
        EXPECT_NE(dt.find(free_product + " has no sales limit"), std::string::npos) << dt;
        said = true;
    }
    EXPECT_TRUE(said);
    const family& sc = find_family("set_cover");
    rq = gen_request{};
    rq.seed = 3;
    const instance in = generate(sc, rq);
    const std::string dp = render_problem(sc, in, representation::dp, false, 3);
    EXPECT_EQ(dp.find("coverage indicator"), std::string::npos) << dp;
    const std::string site = in.data["sites"][0].get<std::string>();
    std::vector<std::string> covered;
    for (auto it = in.data["covers"][site].begin(); it != in.data["covers"][site].end(); ++it)
        if (it.value().get<double>() != 0) covered.push_back(it.key());
    EXPECT_NE(dp.find(join_and(covered) + "."), std::string::npos) << dp;
    // every zone has two candidate sites at least, and no two zones the same ones (no forced or repeated rows)
    std::set<std::vector<int>> rows;
    for (const auto& c : in.m.cons) {
        std::vector<int> vars;
        for (const auto& t : c.terms) vars.push_back(t.var);
        EXPECT_GE(vars.size(), 2u) << c.name;
        EXPECT_TRUE(rows.insert(vars).second) << c.name << " repeats a row";
    }
}

// The phrasing engine (render/prose.hpp) states every number of data.json in every DP and DT statement, whatever
// plan it draws, and leaves no template syntax behind.
TEST(DataRender, EveryFamilyStatesEveryNumberOfItsData) {
    long texts = 0;
    for (const family* f : all_families()) {
        for (int k = 0; k < 12; k++) {
            gen_request rq;
            rq.seed = 900 + (uint64_t)k;
            rq.difficulty = 1 + k % 3;
            rq.want = k % 4 == 1 && f->can_infeasible  ? design::infeasible
                      : k % 4 == 3 && f->can_unbounded ? design::unbounded
                                                       : design::feasible;
            const instance in = generate(*f, rq);
            ojson numbers = in.data;  // 0/1 relations are said as sentences ("Site 9 covers Riverton"), not numbers
            for (const auto& p : f->params)
                if (!p.relation.empty()) numbers.erase(p.key);
            for (representation rep : {representation::dp, representation::dt}) {
                const std::string text = render_problem(*f, in, rep, false, 31 * (uint64_t)k + 7);
                const number_coverage c = check_numbers(text, numbers);
                EXPECT_TRUE(c.missing.empty()) << f->name << " " << representation_name(rep) << " seed " << rq.seed
                                               << " misses " << join_and(c.missing) << ":\n"
                                               << text;
                for (const char* leak : {"{", "}", "[", "|"})
                    if (rep == representation::dp) EXPECT_EQ(text.find(leak), std::string::npos) << f->name << text;
                texts++;
            }
        }
    }
    EXPECT_EQ(texts, (long)all_families().size() * 24);
}

// The data plans on one hand-made instance: a network whose arc names repeat their ends says the naming rule once
// instead of every arc's start and end; sorted plans put equal values together; every plan keeps each number.
TEST(DataRender, DataPlansNameArcsOnceAndKeepEveryNumber) {
    const ojson data = {
        {"nodes", {"Hudson", "Oxford", "Salem"}},
        {"arcs", {"Hudson->Oxford", "Oxford->Salem", "Hudson->Salem"}},
        {"from", {{"Hudson->Oxford", "Hudson"}, {"Oxford->Salem", "Oxford"}, {"Hudson->Salem", "Hudson"}}},
        {"to", {{"Hudson->Oxford", "Oxford"}, {"Oxford->Salem", "Salem"}, {"Hudson->Salem", "Salem"}}},
        {"cost", {{"Hudson->Oxford", 7}, {"Oxford->Salem", 3}, {"Hudson->Salem", 7}}},
        {"cap", {{"Hudson->Oxford", 175}, {"Oxford->Salem", 15.5}, {"Hudson->Salem", 40}}}};
    const std::vector<param_doc> docs = {{"arcs", {}, "routes", "", true},
                                         {"from", {"arcs"}, "start", ""},
                                         {"to", {"arcs"}, "end", ""},
                                         {"cost", {"arcs"}, "cost per crate", "$"},
                                         {"cap", {"arcs"}, "capacity", "crates"}};
    const vocab v = {{"arcs_label", "routes"}};
    std::set<std::string> seen;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        rng r(seed, 3);
        const std::string s = prose_data({&docs[1], &docs[2], &docs[3], &docs[4]}, data, v, r);
        EXPECT_NE(s.find("start->end"), std::string::npos) << s;
        EXPECT_EQ(s.find("the start is"), std::string::npos) << s;
        const number_coverage c = check_numbers(s, data);
        EXPECT_TRUE(c.missing.empty()) << s;
        EXPECT_TRUE(c.unused.empty()) << s;
        seen.insert(s.substr(0, 40));
    }
    EXPECT_GE(seen.size(), 4u);  // several plans drawn
    // a sorted list says equal neighbours once
    bool merged = false;
    for (uint64_t seed = 1; seed <= 60 && !merged; seed++) {
        rng r(seed, 4);
        const std::string s = prose_data({&docs[3]}, data, v, r);
        merged = s.find("Hudson->Oxford and Hudson->Salem both 7") != std::string::npos ||
                 s.find("Hudson->Salem and Hudson->Oxford both 7") != std::string::npos;
    }
    EXPECT_TRUE(merged);
}

// The wording pass swaps stock phrases for ones of the same meaning and leaves them where a swap would break the
// grammar or the meaning.
TEST(DataRender, WordingSwapsKeepMeaningAndGrammar) {
    std::set<std::string> seen;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        rng r(seed, 1);
        const std::string s = vary_wording("Each plant ships at most 40 crates and at least as many as Oxford.", r);
        EXPECT_NE(s.find("40 crates"), std::string::npos) << s;
        EXPECT_NE(s.find("at least as many as Oxford"), std::string::npos) << s;  // "no less than as many" is wrong
        EXPECT_TRUE(s.rfind("Each plant", 0) == 0 || s.rfind("Every plant", 0) == 0) << s;
        seen.insert(s);
        rng q(seed, 2);
        // "each" as a pronoun, after a price or before a verb, stays
        EXPECT_EQ(vary_wording("Tables cost $3 each. Each can hold 4 and each costs $2, each at a fixed fee.", q),
                  "Tables cost $3 each. Each can hold 4 and each costs $2, each at a fixed fee.");
        rng t(seed, 3);
        const std::string u = vary_wording("A batch cannot exceed the capacity; setups are whole numbers.", t);
        EXPECT_TRUE(u.find("cannot") != std::string::npos || u.find("may not") != std::string::npos ||
                    u.find("must not") != std::string::npos)
            << u;
        EXPECT_TRUE(u.find("whole numbers") != std::string::npos || u.find("integers") != std::string::npos) << u;
        EXPECT_EQ(u.find("  "), std::string::npos) << u;
    }
    EXPECT_GE(seen.size(), 4u);  // the phrases do vary
    // "a whole number" becomes "an integer" with its article, never "a integer"
    bool integer = false;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        rng r(seed, 4);
        const std::string s = vary_wording("Each count is a whole number.", r);
        EXPECT_EQ(s.find("a integer"), std::string::npos) << s;
        integer = integer || s.find("an integer") != std::string::npos;
    }
    EXPECT_TRUE(integer);
}
