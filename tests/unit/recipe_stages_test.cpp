// The recipe's stage runner (skip what is done, rerun what changed and everything after it, restart or resume an
// interrupted stage), its general-text corpus (held-out split, n-gram decontamination against a benchmark file) and
// its report's summary keys. The whole recipe end to end, with kills and resumes: CTest recipe_cli.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/optmodel/families/family.hpp"
#include "trex/recipe/corpus.hpp"
#include "trex/recipe/profile.hpp"
#include "trex/recipe/report.hpp"
#include "trex/recipe/stages.hpp"

namespace fs = std::filesystem;
using namespace trex;
using namespace trex::recipe;

namespace {

void put(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
}

// Two stages: "a" writes a/out.txt from its definition, "b" copies it to b/out.txt; each counts its runs.
struct toy {
    std::string dir;
    std::map<std::string, int> runs;
    std::string a_text = "one";

    std::vector<stage> stages() {
        stage a{"a", {}, {"a"}, a_text, [this](const stage_context& c) {
                    runs["a"]++;
                    put(c.out_dir + "/a/out.txt", a_text);
                }};
        stage b{"b", {"a"}, {"b"}, "copy", [this](const stage_context& c) {
                    runs["b"]++;
                    put(c.out_dir + "/b/out.txt", read_file(c.out_dir + "/a/out.txt") + "!");
                }};
        return {a, b};
    }
    std::vector<stage_result> run(bool resume = false) {
        return run_stages(stages(), {dir, resume, false}, [](const stage&, bool) {});
    }
};

}  // namespace

TEST(RecipeStages, ADoneStageIsSkippedAndAChangedOneRunsWithEverythingAfterIt) {
    const std::string dir = test::scratch_dir("recipe-stages");
    toy t{dir, {}, "one"};
    t.run();
    EXPECT_EQ(t.runs["a"], 1);
    EXPECT_EQ(t.runs["b"], 1);
    const auto again = t.run();
    EXPECT_TRUE(again[0].skipped && again[1].skipped);
    EXPECT_EQ(t.runs["a"], 1);
    // a new definition of a: a runs, and b, whose input changed, runs after it
    t.a_text = "two";
    t.run();
    EXPECT_EQ(t.runs["a"], 2);
    EXPECT_EQ(t.runs["b"], 2);
    EXPECT_EQ(read_file(dir + "/b/out.txt"), "two!");
    // an output edited by hand: that stage runs again; a, whose output is intact, does not
    put(dir + "/b/out.txt", "tampered");
    t.run();
    EXPECT_EQ(t.runs["a"], 2);
    EXPECT_EQ(t.runs["b"], 3);
    EXPECT_EQ(read_file(dir + "/b/out.txt"), "two!");
}

TEST(RecipeStages, AnInterruptedStageRestartsFromNothingUnlessResumed) {
    const std::string dir = test::scratch_dir("recipe-interrupt");
    bool saw_interrupted = false;
    std::vector<stage> st = {{"x", {}, {"x"}, "def", [&](const stage_context& c) {
                                  saw_interrupted = c.interrupted;
                                  // the partial file of the interrupted run is there only when resuming
                                  EXPECT_EQ(fs::exists(c.out_dir + "/x/partial"), c.interrupted);
                                  put(c.out_dir + "/x/done", "ok");
                              }}};
    put(dir + "/x/partial", "half");  // a run that died: outputs, no record
    run_stages(st, {dir, false, false}, [](const stage&, bool) {});
    EXPECT_FALSE(saw_interrupted);
    EXPECT_FALSE(fs::exists(dir + "/x/partial"));

    fs::remove(dir + "/state/x.json");
    put(dir + "/x/partial", "half");
    run_stages(st, {dir, true, false}, [](const stage&, bool) {});
    EXPECT_TRUE(saw_interrupted);
}

TEST(RecipeStages, AFailingStageLeavesNoRecordAndNamesItself) {
    const std::string dir = test::scratch_dir("recipe-fail");
    std::vector<stage> st = {{"bad", {}, {"bad"}, "def", [](const stage_context&) { throw_error("it broke"); }}};
    EXPECT_THROW(run_stages(st, {dir, false, false}, [](const stage&, bool) {}), trex::error);
    EXPECT_FALSE(fs::exists(dir + "/state/bad.json"));
    // a child process that fails: the error names the stage, the exit status and the log
    try {
        stage_context c{dir, false, false, test::trex_binary()};
        run_trex(c, "the bad stage", {"no-such-command"}, dir + "/bad.log");
        FAIL() << "no error";
    } catch (const trex::error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("the bad stage failed (exit status"), std::string::npos) << m;
        EXPECT_NE(m.find("bad.log"), std::string::npos) << m;
    }
}

TEST(RecipeStages, OutputHashesSeeContentsAndNames) {
    const std::string dir = test::scratch_dir("recipe-hash");
    put(dir + "/d/a.txt", "1");
    put(dir + "/d/sub/b.txt", "2");
    const std::string h = hash_outputs(dir, {"d"});
    EXPECT_EQ(h, hash_outputs(dir, {"d"}));
    put(dir + "/d/sub/b.txt", "3");
    const std::string h2 = hash_outputs(dir, {"d"});
    EXPECT_NE(h, h2);
    fs::rename(dir + "/d/sub/b.txt", dir + "/d/sub/c.txt");
    EXPECT_NE(h2, hash_outputs(dir, {"d"}));
    EXPECT_NE(hash_outputs(dir, {"missing"}), hash_outputs(dir, {"d"}));
}

TEST(RecipeCorpus, HeldOutSplitAndDecontaminationAgainstABenchmark) {
    const std::string dir = test::scratch_dir("recipe-corpus");
    const std::string leaked =
        "A factory makes chairs and tables; each chair needs two hours of carpentry and each table needs three hours "
        "of carpentry per unit made.";
    for (int i = 0; i < 60; i++)
        put(fmt::format("{}/docs/d{:02d}.rst.txt", dir, i),
            fmt::format("Document {} explains a module.\n\nIt has two paragraphs of ordinary prose number {}.\n", i,
                        i) +
                (i == 7 ? "\n" + leaked + "\n" : ""));
    put(dir + "/bench.jsonl",
        nlohmann::json{{"en_question", leaked + " How many of each maximise profit?"}, {"en_answer", "12"}}.dump() +
            "\n");
    corpus_options o;
    o.roots = {dir + "/docs"};
    o.heldout_share = 0.2;
    o.against = {dir + "/bench.jsonl"};
    const corpus_stats st = build_general_corpus(o, dir + "/corpus");
    EXPECT_EQ(st.train_docs + st.heldout_docs, 60u);
    EXPECT_GT(st.heldout_docs, 3u);
    EXPECT_LT(st.heldout_docs, 25u);
    EXPECT_EQ(st.paragraphs_dropped, 1u);
    EXPECT_EQ(st.benchmark_questions, 1u);
    const std::string all = read_file(dir + "/corpus/train.jsonl") + read_file(dir + "/corpus/heldout.txt");
    EXPECT_EQ(all.find("carpentry"), std::string::npos);
    EXPECT_NE(all.find("Document 7 explains"), std::string::npos);
    // deterministic: the same inputs give the same files
    build_general_corpus(o, dir + "/corpus2");
    EXPECT_EQ(read_file(dir + "/corpus/train.jsonl"), read_file(dir + "/corpus2/train.jsonl"));
    // no root: a one-line error naming what to install
    o.roots.clear();
    EXPECT_THROW(build_general_corpus(o, dir + "/corpus3"), trex::error);
    EXPECT_FALSE(fs::exists(dir + "/corpus3"));
}

TEST(RecipeProfile, ProfilesAreKnownAndAnUnknownOneIsAnError) {
    for (const auto& n : profile_names()) {
        const profile& p = profile_named(n);
        EXPECT_EQ(p.name, n);
        EXPECT_GT(p.sft_count, 0);
        EXPECT_GT(p.base.steps, 0);
        EXPECT_FALSE(p.transfer_families.empty());
    }
    EXPECT_THROW(profile_named("huge"), trex::error);
}

// A profile's training families are known families and none is a transfer family (the transfer sets would then
// not be held out); a sliding window that a profile sets, and every training stage's rows, cover at most its
// context; the SFT answers' shape is one trex data build knows.
TEST(RecipeProfile, TrainingFamiliesAreKnownAndDisjointFromTheTransferFamilies) {
    for (const auto& n : profile_names()) {
        const profile& p = profile_named(n);
        for (const auto& f : p.families) {
            EXPECT_NO_THROW(optmodel::find_family(f)) << n << ": " << f;
            EXPECT_EQ(std::count(p.transfer_families.begin(), p.transfer_families.end(), f), 0) << n << ": " << f;
        }
        for (const auto& f : p.transfer_families) EXPECT_NO_THROW(optmodel::find_family(f)) << n << ": " << f;
        EXPECT_GE(p.sliding_window, 0) << n;
        EXPECT_LE(p.sliding_window, p.max_position) << n;
        for (const train_sizes* t : {&p.base, &p.cpt, &p.sft}) EXPECT_LE(t->seq, p.max_position) << n;
        EXPECT_TRUE(p.sft_answer == "reasoned" || p.sft_answer == "direct") << n << ": " << p.sft_answer;
    }
}

TEST(RecipeReport, SummaryHasThePaperTableKeysFromTheEvalRuns) {
    const std::string dir = test::scratch_dir("recipe-report");
    // eval summaries in the form trex eval run writes them
    auto eval = [&](const std::string& model, double dp, double transfer, double real) {
        nlohmann::ordered_json s = {{"benchmarks",
                                     {{"heldout-dp", {{"items", 4}, {"pass@1", dp}}},
                                      {"transfer-dp", {{"items", 2}, {"pass@1", transfer}}},
                                      {"nl4opt", {{"items", 10}, {"pass@1", real}}}}},
                                    {"by_category", {{"heldout-dp", {{"diet", {{"items", 4}, {"pass@1", dp}}}}}}}};
        put(dir + "/eval/" + model + "-lp/summary.json", s.dump());
    };
    eval("base", 0.0, 0.0, 0.0);
    eval("sft-only", 0.5, 0.0, 0.1);
    eval("cpt-sft", 0.75, 0.5, 0.2);
    put(dir + "/perplexity/base.json", R"({"tokens": 100, "mean_nll": 2.0, "perplexity": 7.389})");
    put(dir + "/runs/base/metrics.jsonl",
        "{\"step\": 1, \"loss\": 9.0, \"lm\": 8.0, \"tokens_per_s\": 100, \"mfu\": 0.1}\n"
        "{\"step\": 2, \"loss\": 7.0, \"lm\": 6.0, \"tokens_per_s\": 300, \"mfu\": null}\n");
    report_inputs in;
    in.profile = "test";
    in.out_dir = dir;
    in.models = {"base", "sft-only", "cpt-sft"};
    in.training_runs = {"base", "cpt", "sft-only", "cpt-sft"};
    in.forms = {"lp"};
    in.sets = {"heldout-dp", "transfer-dp", "nl4opt"};
    in.stages = {{"data", false, 1.5}, {"base", true, 10}};
    std::string md;
    const auto s = write_recipe_report(in, &md);
    EXPECT_DOUBLE_EQ(s["pass_at_1_avg"]["base"].get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(s["pass_at_1_avg"]["sft_only"].get<double>(), 0.25);
    EXPECT_DOUBLE_EQ(s["pass_at_1_avg"]["cpt_sft"].get<double>(), 0.625);  // nl4opt is not a synthetic set
    EXPECT_DOUBLE_EQ(s["real_benchmarks"]["nl4opt"]["lp"]["cpt_sft"].get<double>(), 0.2);
    EXPECT_DOUBLE_EQ(s["sets"]["transfer-dp"]["lp"]["cpt_sft"].get<double>(), 0.5);
    EXPECT_DOUBLE_EQ(s["perplexity"]["base"].get<double>(), 7.389);
    EXPECT_TRUE(s["perplexity"]["cpt"].is_null());
    EXPECT_DOUBLE_EQ(s["training"]["base"]["last_loss"].get<double>(), 6.0);  // the LM loss
    EXPECT_DOUBLE_EQ(s["training"]["base"]["mfu"].get<double>(), 0.1);        // steps without an MFU not averaged in
    EXPECT_DOUBLE_EQ(s["wall_s_total"].get<double>(), 11.5);
    EXPECT_TRUE(fs::exists(dir + "/report.html"));
    EXPECT_TRUE(fs::exists(dir + "/charts/loss-sft.svg"));
    EXPECT_NE(read_file(md).find("| heldout-dp | lp | 0.00 | 50.00 | 75.00 |"), std::string::npos);
}
