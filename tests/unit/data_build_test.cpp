// trex data build end to end: a 1,000-sample build whose every SFT answer re-executes to its label (checked again
// here, independently of the build), corrupted answers fail, same seed -> same bytes (also across worker counts),
// malformed configs and unwritable outputs give one-line errors and leave nothing behind, decontam finds overlaps.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "support/test_support.hpp"
#include "trex/optmodel/ir/glpk_io.hpp"
#include "trex/optmodel/render/render.hpp"
#include "trex/optmodel/solvers/python_runner.hpp"
#include "trex/optmodel/solvers/solve.hpp"

namespace fs = std::filesystem;
using namespace trex::optmodel;
using trex::test::run_command;
using trex::test::trex_binary;
using ojson = nlohmann::ordered_json;

namespace {

std::string temp_dir(const std::string& name) {
    return trex::test::scratch_dir("data_" + name);
}

std::string write_config(const std::string& dir, const std::string& name, const std::string& text) {
    const std::string p = dir + "/" + name;
    std::ofstream(p) << text;
    return p;
}

std::string one_line(std::string s) {
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
}

std::vector<ojson> read_jsonl(const std::string& path) {
    std::vector<ojson> out;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line))
        if (!line.empty()) out.push_back(ojson::parse(line));
    return out;
}

verification label_of(const ojson& meta) {
    verification v;
    const std::string st = meta["status"].get<std::string>();
    v.status = st == "optimal"      ? solve_status::optimal
               : st == "infeasible" ? solve_status::infeasible
                                    : solve_status::unbounded;
    if (v.status == solve_status::optimal) v.objective = meta["objective"].get<double>();
    return v;
}

std::string file_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Every regular file under dir (relative path -> bytes).
std::map<std::string, std::string> tree(const std::string& dir) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = file_bytes(e.path());
    return out;
}

bool leftovers(const std::string& dir) {
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().find(".tmp-") != std::string::npos) return true;
    return false;
}

}  // namespace

TEST(DataBuild, ThousandSamplesAllReexecuteToTheirLabels) {
    const std::string py = find_python_with_pulp();
    if (py.empty()) GTEST_SKIP() << "no python with pulp (run scripts/setup.sh)";
    const std::string dir = temp_dir("k1");
    const std::string cfg = write_config(dir, "k1.json", R"({"seed": 11, "output_dir": ")" + dir + R"(/out",
        "sft": {"count": 1000, "dialects": {"pulp": 3, "gurobipy": 1}}, "test": {"count": 30},
        "cpt": {"documents": 20, "resources": true}})");
    auto r = run_command(trex_binary() + " data build --no-progress --config " + cfg);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto recs = read_jsonl(dir + "/out/sft.jsonl");
    ASSERT_EQ(recs.size(), 1000u);
    std::map<std::string, int> cats, reps;
    python_runner runner(py);
    int corrupted_checked = 0;
    for (const auto& rec : recs) {
        const ojson& meta = rec["meta"];
        task t;
        representation rp;
        ASSERT_TRUE(parse_task(meta["category"].get<std::string>(), &t));
        ASSERT_TRUE(parse_representation(meta["representation"].get<std::string>(), &rp));
        cats[meta["category"]]++;
        reps[meta["representation"]]++;
        const std::string q = rec["messages"][0]["content"], a = rec["messages"][1]["content"];
        ASSERT_NE(a.find("<think>"), std::string::npos);
        const verification label = label_of(meta);
        const ojson data = rec.contains("data") ? rec["data"] : ojson::object();
        if (meta.value("dialect", "") == "gurobipy") {
            EXPECT_NE(a.find("import gurobipy"), std::string::npos);
            continue;  // runs only under the eval harness's shim; its PuLP twin was re-executed by the build
        }
        reexec_result rr = reexec_answer(a, t, rp, data, label, &runner, dir + "/scratch");
        ASSERT_TRUE(rr.ok) << rec["id"] << ": " << rr.detail;
        // a deliberately corrupted answer must fail: formulation -> a wrong stated value; code -> the objective
        // doubled; LP file -> an extra row that no solution satisfies
        if (label.status == solve_status::optimal && corrupted_checked < 80) {
            std::string bad = a;
            if (t == task::formulation) {
                const std::string stated = "**" + label_text(label) + "**";
                bad.replace(bad.rfind(stated), stated.size(), "**" + label_text(label) + "1**");
            } else if (t == task::lp_file) {
                const size_t obj = bad.find(" obj: ");
                std::smatch mm;
                const std::string rest = bad.substr(obj + 6);
                ASSERT_TRUE(std::regex_search(rest, mm, std::regex("[A-Za-z_][A-Za-z0-9_]*")));
                bad.replace(bad.find("Bounds\n"), 7, "Bounds\n");
                bad.insert(bad.find("Bounds\n"), " corrupt: " + mm.str() + " <= -1\n");
            } else {
                const bool gurobi = bad.find("m.optimize()") != std::string::npos;
                const std::string at = gurobi ? "m.optimize()" : "prob.solve(";
                bad.insert(bad.find(at), gurobi ? "m.setObjective(2 * m.getObjective() + 1)\n"
                                                : "prob.setObjective(2 * prob.objective + 1)\n");
            }
            ASSERT_NE(bad, a);
            reexec_result cr = reexec_answer(bad, t, rp, data, label, &runner, dir + "/scratch");
            EXPECT_FALSE(cr.ok) << rec["id"] << " corrupted answer passed";
            corrupted_checked++;
        }
    }
    EXPECT_GE(corrupted_checked, 80);
    for (const char* c : {"formulation", "formulation_code", "code", "lp_file"}) EXPECT_EQ(cats[c], 250) << c;
    for (const char* p : {"DP", "DT", "DPS"}) EXPECT_GE(reps[p], 332) << p;  // balanced up to rounding
    // held-out sets in the public format, CPT documents and resources
    for (const char* rp : {"dp", "dt", "dps"}) {
        const auto items = read_jsonl(dir + "/out/test/" + rp + ".jsonl");
        ASSERT_EQ(items.size(), 10u) << rp;
        for (const auto& it : items) {
            EXPECT_TRUE(it.contains("en_question") && it.contains("en_answer"));
            // labels at full precision: a JSON number that the reference LP's optimum matches within the default
            // judge's absolute 1e-6 (labels rounded to 10 digits failed it on answers above ~1e4)
            if (it["en_answer"].is_string()) {
                EXPECT_EQ(it["en_answer"], "No Best Solution");
            } else {
                ASSERT_TRUE(it["en_answer"].is_number()) << it.dump();
                const auto m =
                    trex::optmodel::read_lp_file(dir + "/out/test/" + it["reference_lp_path"].get<std::string>());
                const auto r = trex::optmodel::solve_coin(m, {});
                ASSERT_EQ(r.status, trex::optmodel::solve_status::optimal) << it["id"];
                EXPECT_NEAR(r.objective, it["en_answer"].get<double>(), 1e-6) << it["id"];
            }
            if (std::string(rp) == "dps") {
                EXPECT_TRUE(fs::exists(dir + "/out/test/" + it["data_path"].get<std::string>()));
            }
        }
    }
    ojson manifest = ojson::parse(file_bytes(dir + "/out/manifest.json"));
    EXPECT_EQ(manifest["counts"]["sft"], 1000);
    EXPECT_EQ(manifest["counts"]["cpt_synthetic"], 20);
    EXPECT_GT(manifest["counts"]["cpt_resources"].get<int>(), 50);
    EXPECT_EQ(manifest["sft"]["by_family"].size(), all_families().size());
    EXPECT_GE(manifest["sft"]["by_domain"].size(), 8u);
    auto st = run_command(trex_binary() + " data stats " + dir + "/out");
    EXPECT_EQ(st.exit_code, 0) << st.out;
    EXPECT_NE(st.out.find("sft by_category"), std::string::npos);
    fs::remove_all(dir);
}

TEST(DataBuild, SameSeedSameBytesAcrossWorkerCounts) {
    if (find_python_with_pulp().empty()) GTEST_SKIP() << "no python with pulp";
    const std::string dir = temp_dir("det");
    std::map<std::string, std::string> first;
    for (int workers : {1, 2, 2}) {
        const std::string out = dir + "/out" + std::to_string(workers);
        const std::string cfg = write_config(dir, "c.json", R"({"seed": 3, "output_dir": ")" + out + R"(",
            "workers": )" + std::to_string(workers) + R"(, "sft": {"count": 48}, "test": {"count": 6},
            "cpt": {"documents": 4, "resources": false}})");
        auto r = run_command(trex_binary() + " data build --no-progress --force --config " + cfg);
        ASSERT_EQ(r.exit_code, 0) << r.out;
        auto t = tree(out);
        ojson m = ojson::parse(t["manifest.json"]);
        m.erase("config");  // the config echo names the worker count
        t["manifest.json"] = m.dump();
        if (first.empty()) {
            first = t;
            EXPECT_GT(first.size(), 10u);
        } else {
            EXPECT_EQ(t.size(), first.size());
            for (const auto& [k, v] : first) EXPECT_EQ(t[k], v) << k;
        }
    }
    fs::remove_all(dir);
}

TEST(DataBuild, BadConfigsAndOutputsGiveOneLineErrors) {
    const std::string dir = temp_dir("bad");
    struct bad_case {
        std::string json, expect;
    } cases[] = {
        {"{\"seed\": 1, \"output_dir\": \"" + dir + "/o\", \"sft\": {\"count\": 10,}}", "malformed JSON"},
        {"{\"seed\": 1, \"output_dir\": \"" + dir + "/o\", \"sft\": {\"cuont\": 10}}", "key 'sft.cuont': unknown key"},
        {"{\"seed\": 1, \"output_dir\": \"" + dir + "/o\", \"sft\": {\"count\": -5}}", "key 'sft.count'"},
        {"{\"seed\": 1, \"output_dir\": \"" + dir + "/o\", \"sft\": {\"count\": 5, \"families\": [\"tsp\", \"nope\"]}}",
         "key 'sft.families': unknown name 'nope'"},
        {"{\"seed\": 1, \"output_dir\": \"" + dir + "/o\", \"sft\": {\"count\": 5, \"difficulty\": [3, 9]}}",
         "key 'sft.difficulty'"},
        {"{\"seed\": 1, \"output_dir\": \"" + dir + "/o\", \"sft\": {\"count\": 5, \"answer\": \"short\"}}",
         "key 'sft.answer': expected \"reasoned\" or \"direct\""},
        {"{\"seed\": 1, \"sft\": {\"count\": 5}}", "key 'output_dir': required"},
        {"[1, 2]", "must be a JSON object"},
        {"{\"seed\": 1, \"output_dir\": \"/proc/trex_cannot_write/o\", \"sft\": {\"count\": 2}}",
         "cannot create the temporary directory"},
    };
    int i = 0;
    for (const auto& c : cases) {
        const std::string cfg = write_config(dir, "bad" + std::to_string(i++) + ".json", c.json);
        auto r = run_command(trex_binary() + " data build --no-progress --config " + cfg);
        EXPECT_EQ(r.exit_code, 1) << c.json;
        const std::string line = one_line(r.out);
        EXPECT_EQ(line.find('\n'), std::string::npos) << r.out;
        EXPECT_EQ(line.rfind("trex: error: ", 0), 0u) << r.out;
        EXPECT_NE(line.find(c.expect), std::string::npos) << r.out;
    }
    // an output path below a regular file
    std::ofstream(dir + "/afile") << "x";
    const std::string cfg =
        write_config(dir, "under_file.json", "{\"output_dir\": \"" + dir + "/afile/o\", \"sft\": {\"count\": 2}}");
    auto r = run_command(trex_binary() + " data build --no-progress --config " + cfg);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(one_line(r.out).find('\n'), std::string::npos) << r.out;
    // an existing output without --force
    fs::create_directories(dir + "/exists");
    const std::string cfg2 =
        write_config(dir, "exists.json", "{\"output_dir\": \"" + dir + "/exists\", \"sft\": {\"count\": 2}}");
    r = run_command(trex_binary() + " data build --no-progress --config " + cfg2);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.out.find("output directory exists (use --force"), std::string::npos) << r.out;
    EXPECT_FALSE(leftovers(dir));
    EXPECT_FALSE(fs::exists(dir + "/o"));
    fs::remove_all(dir);
}

TEST(DataBuild, DecontamFindsAndDropsOverlaps) {
    const std::string dir = temp_dir("dec");
    const std::string cfg = write_config(dir, "c.json", R"({"seed": 5, "output_dir": ")" + dir + R"(/out",
        "sft": {"count": 24, "categories": ["formulation", "lp_file"]}, "cpt": {"resources": false}})");
    auto r = run_command(trex_binary() + " data build --no-progress --config " + cfg);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    auto recs = read_jsonl(dir + "/out/sft.jsonl");
    ASSERT_EQ(recs.size(), 24u);
    // a benchmark file (JSON list) quoting one of our questions inside a longer text, plus an unrelated item
    ojson bench = ojson::array();
    bench.push_back(
        {{"en_question", "Preface. " + recs[5]["messages"][0]["content"].get<std::string>()}, {"en_answer", "1"}});
    bench.push_back({{"en_question",
                      "A farmer has 100 acres to plant wheat and corn and wants the largest profit "
                      "given labor and fertilizer limits on every acre of the farm."},
                     {"en_answer", "2"}});
    std::ofstream(dir + "/bench.json") << bench.dump();
    r = run_command(trex_binary() + " data decontam --data " + dir + "/out --against " + dir + "/bench.json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    ojson rep = ojson::parse(r.out);
    // the quoted question overlaps (so may others that share its boilerplate sentences)
    const long hits = rep["overlapping"].get<long>();
    bool found = false;
    for (const auto& o : rep["files"][0]["overlaps"]) found = found || o["id"] == recs[5]["id"];
    EXPECT_TRUE(found) << r.out;
    r = run_command(trex_binary() + " data decontam --drop --data " + dir + "/out/sft.jsonl --against " + dir +
                    "/bench.json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const long left = (long)read_jsonl(dir + "/out/sft.jsonl").size();
    EXPECT_EQ(left, 24 - hits);
    fs::remove_all(dir);
}

// CPT documents are decontaminated too: a benchmark quoting a paragraph of one is found in cpt/index.jsonl, and
// --drop removes the index line and the document.
TEST(DataBuild, DecontamScansCptDocuments) {
    const std::string dir = temp_dir("dec_cpt");
    const std::string cfg = write_config(dir, "c.json", R"({"seed": 9, "output_dir": ")" + dir + R"(/out",
        "sft": {"count": 4, "categories": ["formulation"]}, "cpt": {"documents": 6, "resources": false}})");
    auto r = run_command(trex_binary() + " data build --no-progress --config " + cfg);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto index = read_jsonl(dir + "/out/cpt/index.jsonl");
    ASSERT_EQ(index.size(), 6u);
    const fs::path doc = fs::path(dir) / "out/cpt" / index[2]["path"].get<std::string>();
    const std::string text = file_bytes(doc);
    ASSERT_GT(text.size(), 400u);
    ojson bench = ojson::array();
    bench.push_back({{"question", "Quoted: " + text.substr(0, 400)}, {"answer", 1}});
    std::ofstream(dir + "/bench.json") << bench.dump();
    r = run_command(trex_binary() + " data decontam --drop --data " + dir + "/out --against " + dir + "/bench.json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const ojson rep = ojson::parse(r.out);
    bool found = false;
    for (const auto& f : rep["files"])
        if (f["file"].get<std::string>().find("cpt/index.jsonl") != std::string::npos)
            for (const auto& o : f["overlaps"]) found = found || o["id"] == index[2]["id"];
    EXPECT_TRUE(found) << r.out;
    EXPECT_FALSE(fs::exists(doc));
    for (const auto& rec : read_jsonl(dir + "/out/cpt/index.jsonl")) EXPECT_NE(rec["id"], index[2]["id"]);
    fs::remove_all(dir);
}

// The infeasible and unbounded shares of a build are the configured ones exactly (drawn among the slots whose family
// has such a design), whatever the gates drop. (Families listed: with every family, 200 slots hold fewer than 10 of
// the three families with an unbounded design.)
TEST(DataBuild, DesignSharesAreAsConfigured) {
    const std::string dir = temp_dir("shares");
    const std::string cfg = write_config(dir, "c.json", R"({"seed": 11, "output_dir": ")" + dir + R"(/out",
        "sft": {"count": 200, "categories": ["formulation", "lp_file"], "infeasible_share": 0.1,
                "unbounded_share": 0.05, "families": ["product_mix", "generic_lp", "multi_stage_production",
                "transportation", "diet", "lot_sizing", "cvrp", "knapsack_01"]},
        "cpt": {"documents": 0, "resources": false}})");
    auto r = run_command(trex_binary() + " data build --no-progress --config " + cfg);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    std::map<std::string, int> status;
    for (const auto& rec : read_jsonl(dir + "/out/sft.jsonl")) status[rec["meta"]["status"].get<std::string>()]++;
    EXPECT_EQ(status["infeasible"], 20);
    EXPECT_EQ(status["unbounded"], 10);
    EXPECT_EQ(status["optimal"], 170);
    fs::remove_all(dir);
}

// With every family configured, 3 of 57 have an unbounded design: a 200-sample build still has its 6 unbounded
// samples (slots handed to those families); a mix where no family has one says so and builds the rest.
TEST(DataBuild, DesignSharesHoldWhenFewFamiliesHaveTheDesign) {
    const std::string dir = temp_dir("shares_all");
    std::string cfg = write_config(dir, "c.json", R"({"seed": 5, "output_dir": ")" + dir + R"(/out",
        "sft": {"count": 200, "categories": ["lp_file"], "infeasible_share": 0.04, "unbounded_share": 0.03},
        "cpt": {"documents": 0, "resources": false}})");
    auto r = run_command(trex_binary() + " data build --no-progress --config " + cfg);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
    std::map<std::string, int> status;
    for (const auto& rec : read_jsonl(dir + "/out/sft.jsonl")) {
        status[rec["meta"]["status"].get<std::string>()]++;
        if (rec["meta"]["status"] == "unbounded")
            EXPECT_TRUE(find_family(rec["meta"]["family"].get<std::string>()).can_unbounded) << rec.dump();
    }
    EXPECT_EQ(status["infeasible"], 8);
    EXPECT_EQ(status["unbounded"], 6);
    cfg = write_config(dir, "d.json", R"({"seed": 5, "output_dir": ")" + dir + R"(/out2",
        "sft": {"count": 40, "categories": ["lp_file"], "families": ["transportation", "tsp"],
                "unbounded_share": 0.05}, "cpt": {"documents": 0, "resources": false}})");
    r = run_command(trex_binary() + " data build --no-progress --config " + cfg);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("warning: 2 of 2 unbounded slots have no unbounded design"), std::string::npos) << r.out;
    fs::remove_all(dir);
}

// trex data stats --against: our questions' vocabulary and variety next to a benchmark file's, and the benchmark
// words none of our questions uses.
TEST(DataBuild, StatsAgainstABenchmark) {
    const std::string dir = temp_dir("stats_against");
    const std::string cfg = write_config(dir, "c.json", R"({"seed": 4, "output_dir": ")" + dir + R"(/out",
        "sft": {"count": 30, "categories": ["formulation"]}, "cpt": {"documents": 0, "resources": false}})");
    auto r = run_command(trex_binary() + " data build --no-progress --config " + cfg);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    {
        std::ofstream b(dir + "/bench.jsonl");
        b << ojson{{"question", "A zorblat factory makes 3 widgets and 4 gadgets; maximize profit."}}.dump() << "\n";
        b << ojson{{"question", "A farmer plants 12 acres of wheat; minimize cost."}}.dump() << "\n";
    }
    r = run_command(trex_binary() + " data stats " + dir + "/out --against " + dir + "/bench.jsonl --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const ojson rep = ojson::parse(r.out);
    EXPECT_EQ(rep["ours"]["questions"], 30);
    const ojson& f = rep["against"][0];
    EXPECT_EQ(f["benchmark"]["texts"], 2);
    EXPECT_EQ(f["our_sample"]["texts"], 2);  // as many of ours as the benchmark has
    EXPECT_EQ(f["our_sample_representation"], "DP");
    bool zorblat = false;
    for (const auto& w : f["unseen_examples"]) zorblat = zorblat || w == "zorblat";
    EXPECT_TRUE(zorblat) << f.dump();
    const double share = f["unseen_word_type_share"].get<double>();
    EXPECT_GT(share, 0.0);
    EXPECT_LT(share, 1.0);
    EXPECT_NEAR(share, f["unseen_word_types"].get<double>() / f["benchmark"]["word_types"].get<double>(), 1e-12);
    // a readable table too; bad arguments name themselves
    r = run_command(trex_binary() + " data stats " + dir + "/out --against " + dir + "/bench.jsonl --sample 5");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("benchmark word types no question of ours uses"), std::string::npos) << r.out;
    r = run_command(trex_binary() + " data stats " + dir + "/out --against " + dir +
                    "/bench.jsonl --representation XX");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.out.find("--representation"), std::string::npos) << r.out;
    r = run_command(trex_binary() + " data stats " + dir + "/out --against " + dir + "/missing.jsonl");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.out.find("missing.jsonl"), std::string::npos) << r.out;
    fs::remove_all(dir);
}
