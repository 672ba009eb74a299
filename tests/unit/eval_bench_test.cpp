// trex eval benchmark readers on committed fixtures in the public formats (tests/fixtures/eval: NL4OPT, OptiBench,
// IndustryOR, MAMO, OptMATH-Bench JSON/JSONL with en_question/en_answer or Question/Answer, Bench4Opt-Feasible with
// data files, Bench4Opt-ORGEval with reference LPs): items, truths, categories, malformed records reported with
// their line number and skipped. Then the fixtures' canned answers (gurobipy, PuLP, LP, MPS, MathProg) replayed
// through the whole harness, the report re-judged with another tolerance, and the local-checkpoint backend.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/base/timer.hpp"
#include "trex/eval/backend.hpp"
#include "trex/eval/run.hpp"
#include "trex/io/checkpoint.hpp"
#include "trex/model/config.hpp"
#include "trex/model/model.hpp"
#include "trex/optmodel/solvers/python_runner.hpp"

namespace fs = std::filesystem;
using namespace trex::eval;
using trex::test::source_path;

namespace {

std::string fixture(const std::string& name) {
    return source_path("tests/fixtures/eval/" + name);
}

std::vector<eval_item> load(const std::string& name, load_report* rep, load_options o = {}) {
    return load_benchmark(fixture(name), o, rep);
}

std::string temp_dir(const std::string& name) {
    return trex::test::scratch_dir("eval_bench_" + name);
}

}  // namespace

TEST(EvalBenchmarks, EnQaJsonlWithMalformedLine) {
    load_report rep;
    const auto items = load("nl4opt.jsonl", &rep);
    EXPECT_EQ(rep.records, 5);
    ASSERT_EQ(items.size(), 4u);
    ASSERT_EQ(rep.skipped.size(), 1u);
    EXPECT_NE(rep.skipped[0].find("nl4opt.jsonl:4: malformed JSON"), std::string::npos) << rep.skipped[0];
    EXPECT_EQ(items[0].id, "nl4opt-1");
    EXPECT_EQ(items[0].benchmark, "nl4opt");
    EXPECT_EQ(items[0].truth.kind, truth_kind::objective);
    EXPECT_EQ(items[0].truth.value, 105.0);
    EXPECT_EQ(items[1].truth.value, 23.0);                    // "23.0"
    EXPECT_EQ(items[2].truth.kind, truth_kind::no_solution);  // "No Best Solution"
    EXPECT_EQ(items[3].id, "nl4opt-5");                       // ids count records, the broken one included
    EXPECT_EQ(items[3].truth.value, 20.0);                    // "$20"
    EXPECT_NE(items[3].source.find("nl4opt.jsonl:5"), std::string::npos);
}

TEST(EvalBenchmarks, JsonListsMamoIndustryOrAndOptMath) {
    load_report rep;
    auto items = load("optibench.json", &rep);
    ASSERT_EQ(items.size(), 2u);
    ASSERT_EQ(rep.skipped.size(), 1u);
    EXPECT_NE(rep.skipped[0].find("optibench.json:4"), std::string::npos) << rep.skipped[0];  // null answer
    EXPECT_EQ(items[1].truth.value, 2.1);

    items = load("mamo_easylp.json", &rep);  // JSONL under a .json name, as MAMO ships it
    ASSERT_EQ(items.size(), 2u);
    EXPECT_EQ(items[0].id, "0");
    EXPECT_EQ(items[1].category, "Transportation");
    EXPECT_EQ(items[1].truth.value, 80.0);

    items = load("industryor.jsonl", &rep);
    ASSERT_EQ(items.size(), 3u);
    EXPECT_EQ(items[1].difficulty, "Medium");
    EXPECT_EQ(items[1].category, "IP");
    EXPECT_EQ(items[2].truth.kind, truth_kind::no_solution);  // -99999 sentinel, default policy
    load_options skip;
    skip.sentinel = sentinel_policy::skip;
    items = load("industryor.jsonl", &rep, skip);
    EXPECT_EQ(items.size(), 2u);
    ASSERT_EQ(rep.skipped.size(), 1u);
    EXPECT_NE(rep.skipped[0].find("industryor.jsonl:3: sentinel"), std::string::npos) << rep.skipped[0];

    items = load("optmath_bench.json", &rep);
    ASSERT_EQ(items.size(), 2u);
    EXPECT_EQ(items[0].id, "optmath-1");
    EXPECT_EQ(items[1].truth.value, 20.0);
}

TEST(EvalBenchmarks, Bench4OptFeasibleAndOrgEval) {
    load_report rep;
    auto items = load("b4o_feasible.jsonl", &rep);
    ASSERT_EQ(items.size(), 2u);
    ASSERT_EQ(rep.skipped.size(), 1u);
    EXPECT_NE(rep.skipped[0].find("b4o_feasible.jsonl:3: data_path"), std::string::npos) << rep.skipped[0];
    EXPECT_EQ(items[0].data_path, fs::absolute(fixture("data/feas-1.json")).lexically_normal().string());
    EXPECT_EQ(items[0].truth.value, 105.0);

    items = load("b4o_orgeval.jsonl", &rep);
    ASSERT_EQ(items.size(), 2u);
    EXPECT_EQ(items[0].truth.kind, truth_kind::structure);
    EXPECT_EQ(items[0].category, "production");
    EXPECT_FALSE(items[1].reference_lp_path.empty());
}

TEST(EvalBenchmarks, BrokenFilesAndRecords) {
    const std::string dir = temp_dir("broken");
    // one broken element in the middle of a JSON list does not hide the others; their line numbers are right
    trex::write_file_atomic(dir + "/list.json",
                            "[\n  {\"en_question\": \"q1\", \"en_answer\": 1},\n  {\"en_question\": \"q2\", "
                            "\"en_answer\": },\n  {\"en_question\": \"q3\", \"en_answer\": 3},\n  [1, 2],\n"
                            "  {\"en_question\": \"\", \"en_answer\": 5},\n  {\"Question\": \"q6\"}\n]\n");
    load_report rep;
    const auto items = load_benchmark(dir + "/list.json", {}, &rep);
    ASSERT_EQ(items.size(), 2u);
    EXPECT_EQ(items[1].question, "q3");
    EXPECT_EQ(items[1].source, dir + "/list.json:4");
    ASSERT_EQ(rep.skipped.size(), 4u);
    EXPECT_NE(rep.skipped[0].find("list.json:3: malformed JSON"), std::string::npos) << rep.skipped[0];
    EXPECT_NE(rep.skipped[1].find("list.json:5: record is not a JSON object"), std::string::npos) << rep.skipped[1];
    EXPECT_NE(rep.skipped[2].find("list.json:6: no question text"), std::string::npos) << rep.skipped[2];
    EXPECT_NE(rep.skipped[3].find("list.json:7: no answer field"), std::string::npos) << rep.skipped[3];
    // an object of records keyed by id
    trex::write_file_atomic(dir + "/obj.json",
                            "{\"a\": {\"en_question\": \"qa\", \"en_answer\": 1}, \"b\": {\"en_question\": \"qb\","
                            " \"en_answer\": \"infeasible\"}}");
    const auto obj = load_benchmark(dir + "/obj.json", {}, &rep);
    ASSERT_EQ(obj.size(), 2u);
    EXPECT_EQ(obj[0].id, "a");
    EXPECT_EQ(obj[1].truth.kind, truth_kind::no_solution);
    // not a benchmark at all: one error naming the file
    trex::write_file_atomic(dir + "/junk.txt", "hello\n");
    try {
        load_benchmark(dir + "/junk.txt", {}, &rep);
        ADD_FAILURE() << "no error";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("junk.txt"), std::string::npos) << e.what();
    }
    EXPECT_THROW(load_benchmark(dir + "/missing.json", {}, &rep), std::exception);
    fs::remove_all(dir);
}

// Files cut short anywhere are one trex::error naming the file and the line (a file holding only `{"en_question`
// once gave an internal basic_string::substr error).
TEST(EvalBenchmarks, TruncatedFilesNameFileAndLine) {
    const std::string dir = temp_dir("truncated");
    const std::pair<std::string, std::string> cases[] = {
        {"{\"en_question", "key.json:1: the text ends inside a key"},
        {"{\"a\": {\"en_question\": \"q\\", "escape.json:1: the text ends inside a string"},
        {"[\n  {\"en_question\": \"q1\", \"en_answer\": 1},\n  {\"en_question\": \"q2\"",
         "list.json:3: the JSON list opened on line 1 is not closed"},
        {"[\n  {\"en_question\": \"q1\", \"en_answer\": 1},\n  {\"en_question\": \"q2, \"en_answer\": 2}\n",
         "string.json:3: the text ends inside a string"},
        {"\n\n   \"just a string\"", "str.json:3: expected a JSON list, a JSON object of records, or JSONL"},
        // a stray closer once looped forever, pushing empty elements until memory ran out (found by fuzz_benchmark)
        {"[1}]", "closer.json:1: unexpected '}'"},
        {"{\"a\": {\"en_question\": \"q\"}\n]", "closer2.json:2: unexpected ']'"},
    };
    for (const auto& [text, want] : cases) {
        const std::string path = dir + "/" + want.substr(0, want.find(':'));
        trex::write_file_atomic(path, text);
        const std::string m = trex::test::error_of([&] { load_benchmark(path, {}, nullptr); });
        EXPECT_EQ(m, dir + "/" + want);
    }
}

// The T-Rex repository ships NL4OPT as Parquet (read through pyarrow); ReSocratic / the first OptiBench release
// as {question, results}; records whose answer is null or absent are unscorable: skipped, named and counted.
TEST(EvalBenchmarks, ParquetReSocraticAndUnscorableRecords) {
    if (trex::optmodel::find_python_with_pulp().empty()) GTEST_SKIP() << "no project Python (scripts/setup.sh)";
    load_report rep;
    const auto nl = load("trex_suite/NL4OPT/test.parquet", &rep);
    ASSERT_EQ(nl.size(), 2u);
    EXPECT_EQ(nl[0].benchmark, "test");
    EXPECT_EQ(nl[0].id, "0");
    EXPECT_DOUBLE_EQ(nl[0].truth.value, 170.0);
    EXPECT_DOUBLE_EQ(nl[1].truth.value, 1700.0);
    ASSERT_EQ(rep.skipped.size(), 1u);
    EXPECT_NE(rep.skipped[0].find("test.parquet:3: the answer (en_answer) is null: unscorable"), std::string::npos)
        << rep.skipped[0];
    const auto rs = load("trex_suite/OptiBench/test.json", &rep);
    ASSERT_EQ(rs.size(), 2u);
    EXPECT_DOUBLE_EQ(rs[0].truth.value, 1325.0);  // the last label: the objective
    EXPECT_DOUBLE_EQ(rs[1].truth.value, 38.0);
    EXPECT_EQ(rs[1].category, "linear-table");
    ASSERT_EQ(rep.skipped.size(), 1u);
    EXPECT_NE(rep.skipped[0].find("results holds no value to judge against: unscorable"), std::string::npos);
    // a file that is not Parquet, named as one
    const std::string bad = temp_dir("parquet") + "/broken.parquet";
    trex::write_file_atomic(bad, "{\"en_question\": \"q\", \"en_answer\": 1}\n");
    try {
        load_benchmark(bad, {}, &rep);
        FAIL();
    } catch (const trex::error& e) {
        const std::string msg = e.what();
        EXPECT_EQ(msg.rfind(bad + ": not a Parquet file", 0), 0u) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
    // through the harness: the unscorable records are counted next to the benchmark's row
    const exec_config ec = [] {
        exec_config c = default_exec_config();
        c.trex_bin = trex::test::trex_binary();
        return c;
    }();
    const std::string dir = temp_dir("unscorable");
    std::string lines;
    for (const auto& [id, obj] :
         std::vector<std::pair<std::string, std::string>>{{"0", "1.5 m + 2 s"}, {"1", "40 w + 30 c"}})
        lines += ojson{{"id", id},
                       {"completion", "```lp\nMaximize\n obj: " + obj + "\nSubject To\n" +
                                          (id == "0" ? " t: 2 m + 3 s <= 240\n d: m <= 60\n"
                                                     : " a: w + c <= 50\n h: 3 w + 2 c <= 120\n") +
                                          "End\n```"}}
                     .dump() +
                 "\n";
    trex::write_file_atomic(dir + "/c.jsonl", lines);
    run_options o;
    o.benches.push_back({fixture("trex_suite/NL4OPT/test.parquet"), "nl4opt"});
    o.out_dir = dir + "/out";
    o.progress = false;
    o.quiet = true;
    o.exec = ec;
    auto b = make_replay_backend(dir + "/c.jsonl");
    const run_result r = run_eval(o, *b);
    EXPECT_DOUBLE_EQ(r.summary.benchmark.at("nl4opt").pass1, 1.0) << format_summary(r);
    EXPECT_EQ(r.unscorable.at("nl4opt"), 1);
    EXPECT_NE(format_summary(r).find("(+1 unscorable records, not counted)"), std::string::npos) << format_summary(r);
    const ojson summary = ojson::parse(trex::read_file(o.out_dir + "/summary.json"));
    EXPECT_EQ(summary["run"]["unscorable"]["nl4opt"].get<long>(), 1);
    fs::remove_all(dir);
}

TEST(EvalBenchmarks, FixtureAnswersThroughTheHarness) {
    const exec_config ec = [] {
        exec_config c = default_exec_config();
        c.trex_bin = trex::test::trex_binary();
        return c;
    }();
    if (ec.python.empty()) GTEST_SKIP() << "no python with pulp (scripts/setup.sh): the fixtures have Python answers";
    if (!sandbox_guarantees().isolated) GTEST_SKIP() << "no sandbox isolation here";
    const std::string dir = temp_dir("fixtures");
    // one replay file for all benchmarks (ids are distinct)
    std::string all;
    for (const char* f :
         {"nl4opt", "optibench", "industryor", "mamo_easylp", "optmath_bench", "b4o_feasible", "b4o_orgeval"})
        all += trex::read_file(fixture(std::string("completions/") + f + ".jsonl"));
    trex::write_file_atomic(dir + "/completions.jsonl", all);
    run_options o;
    for (const char* f : {"nl4opt.jsonl", "optibench.json", "industryor.jsonl", "mamo_easylp.json",
                          "optmath_bench.json", "b4o_feasible.jsonl", "b4o_orgeval.jsonl"})
        o.benches.push_back({fixture(f), ""});
    o.out_dir = dir + "/out";
    o.progress = false;
    o.workers = 2;
    o.exec = ec;
    auto b = make_replay_backend(dir + "/completions.jsonl");
    const run_result r = run_eval(o, *b);
    EXPECT_EQ(r.items, 17);
    EXPECT_EQ(r.skipped_records, 3);
    const auto& bm = r.summary.benchmark;
    for (const char* n : {"nl4opt", "optibench", "mamo_easylp", "optmath_bench", "b4o_feasible", "b4o_orgeval"})
        EXPECT_DOUBLE_EQ(bm.at(n).pass1, 1.0) << n << "\n" << format_summary(r);
    // IndustryOR: the sentinel item was answered with prose (no artefact)
    EXPECT_EQ(bm.at("industryor").correct, 2);
    EXPECT_EQ(bm.at("industryor").outcomes[(size_t)failure::no_artefact], 1);
    EXPECT_EQ(r.summary.difficulty.at("industryor").size(), 3u);
    // per-sample results name the artefact each answer was judged by
    std::map<std::string, std::string> art;
    std::ifstream in(o.out_dir + "/results.jsonl");
    std::string line;
    while (std::getline(in, line)) {
        const ojson j = ojson::parse(line);
        art[j["id"].get<std::string>()] = j["exec"]["artefact"].get<std::string>();
    }
    EXPECT_EQ(art["nl4opt-1"], "python");
    EXPECT_EQ(art["industryor-1"], "mathprog");
    EXPECT_EQ(art["industryor-2"], "mps");
    EXPECT_EQ(art["0"], "lp");
    EXPECT_EQ(art["org-2"], "mathprog");
    const std::string md = trex::read_file(o.out_dir + "/report.md");
    EXPECT_NE(md.find("b4o_orgeval"), std::string::npos);
    EXPECT_NE(md.find("Skipped records"), std::string::npos);
    // re-judging with a looser tolerance changes nothing here; a zero-tolerance judge is rejected
    const run_result rj = rescore_run(o.out_dir, "orlm", 0);
    EXPECT_EQ(rj.summary.micro.correct, r.summary.micro.correct);
    EXPECT_THROW(rescore_run(o.out_dir, "exact", 0), std::exception);
    fs::remove_all(dir);
}

TEST(EvalLocalBackend, GreedyDecodingIsDeterministicAndBounded) {
    auto cfg = trex::load_config(source_path("configs/v4-micro.json"));  // vocab 256: the byte codec
    trex::dsv4_model m(cfg);
    m.params().init(3);
    auto codec = make_byte_codec(0);
    auto b = make_local_backend(m, *codec, 64, "micro");
    gen_request rq;
    rq.item_id = "x";
    rq.messages = {{"user", "Maximise x."}};
    rq.params.temperature = 0;
    rq.params.max_tokens = 6;
    rq.n = 2;
    const gen_result a = b->generate(rq), c = b->generate(rq);
    ASSERT_TRUE(a.ok) << a.error;
    ASSERT_EQ(a.completions.size(), 2u);
    EXPECT_EQ(a.completions, c.completions);
    EXPECT_EQ(a.completions[0], a.completions[1]);  // greedy
    EXPECT_LE(a.completions[0].size(), 6u);
    // sampling: seeded, so repeatable; the prompt plus output never exceeds the context
    rq.params.temperature = 1.0;
    rq.params.max_tokens = 500;
    const gen_result s1 = b->generate(rq), s2 = b->generate(rq);
    EXPECT_EQ(s1.completions, s2.completions);
    EXPECT_LE((long)codec->encode_chat(rq.messages).size() + (long)s1.completions[0].size(), 64);
}

// v4-micro with random weights (N(0, 0.08), seed 5) and the byte codec (vocabulary 256): the batching tests' model.
struct micro_model {
    trex::dsv4_model m{trex::load_config(source_path("configs/v4-micro.json"))};
    std::unique_ptr<text_codec> codec = make_byte_codec(0);
    micro_model() { m.params().init(5, 0.08); }
};

// Six items of 1 to 16 prompt characters, greedy and sampled in turn, with 1 to 3 samples each.
static std::vector<gen_request> six_items() {
    std::vector<gen_request> rqs;
    for (int i = 0; i < 6; i++) {
        gen_request rq;
        rq.item_id = "item-" + std::to_string(i);
        rq.messages = {{"user", std::string(1 + 3 * i, (char)('a' + i)) + "?"}};
        rq.params.temperature = i % 2 ? 0.9 : 0.0;
        rq.params.max_tokens = 5 + i;
        rq.n = 1 + i % 3;
        rqs.push_back(rq);
    }
    return rqs;
}

TEST(EvalLocalBackend, ConcurrentItemsShareOneBatchAndGetTheirOwnAnswers) {
    // the runner calls generate from concurrency() threads at once: the answers are those of the items run alone
    micro_model mm;
    auto b = make_local_backend(mm.m, *mm.codec, 96, "micro", 4);
    EXPECT_EQ(b->concurrency(), 4);
    const std::vector<gen_request> rqs = six_items();
    std::vector<gen_result> alone;
    for (const gen_request& rq : rqs) alone.push_back(b->generate(rq));
    std::vector<gen_result> together(rqs.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < rqs.size(); i++) threads.emplace_back([&, i] { together[i] = b->generate(rqs[i]); });
    for (auto& t : threads) t.join();
    for (size_t i = 0; i < rqs.size(); i++) {
        ASSERT_TRUE(together[i].ok) << together[i].error;
        EXPECT_EQ(together[i].completions, alone[i].completions) << "item " << i;
        EXPECT_EQ((int)together[i].completions.size(), rqs[i].n);
        EXPECT_EQ(together[i].completion_tokens, alone[i].completion_tokens);
    }
    // a prompt that does not fit the context is this item's error, not the run's
    gen_request big = rqs[0];
    big.messages = {{"user", std::string(200, 'x')}};
    const gen_result e = b->generate(big);
    EXPECT_FALSE(e.ok);
    EXPECT_NE(e.error.find("context"), std::string::npos) << e.error;
}

// With a driver attached (the run's main thread, as trex eval run does), the callers only queue and wait and the
// driving thread runs every step: the same answers as the items run alone.
TEST(EvalLocalBackend, AnAttachedDriverRunsTheStepsAndTheAnswersStayTheSame) {
    micro_model mm;
    auto self_driven = make_local_backend(mm.m, *mm.codec, 96, "micro", 4);
    auto driven = make_local_backend(mm.m, *mm.codec, 96, "micro", 4);
    ASSERT_TRUE(driven->attach_driver());
    const std::vector<gen_request> rqs = six_items();
    std::vector<gen_result> together(rqs.size());
    std::atomic<int> finished{0};
    std::vector<std::thread> threads;
    for (size_t i = 0; i < rqs.size(); i++)
        threads.emplace_back([&, i] {
            together[i] = driven->generate(rqs[i]);
            finished++;
        });
    const double t0 = trex::now_seconds();
    while (finished.load() < (int)rqs.size() && trex::now_seconds() - t0 < 60) driven->drive(0.05);
    for (auto& t : threads) t.join();
    for (size_t i = 0; i < rqs.size(); i++) {
        ASSERT_TRUE(together[i].ok) << together[i].error;
        EXPECT_EQ(together[i].completions, self_driven->generate(rqs[i]).completions) << "item " << i;
    }
}

TEST(EvalLocalBackend, CheckpointAndTokenizerThroughTheCli) {
    // a random v4-micro model widened to the DeepSeek-V4 id space, saved as a training checkpoint; the reduced
    // DeepSeek-V4 tokenizer (its chat special tokens included) encodes the prompt
    const std::string dir = temp_dir("local");
    auto cfg = trex::load_config(source_path("configs/v4-micro.json"));
    cfg.vocab_size = 129280;
    trex::param_store p(cfg);
    p.init(5);
    trex::checkpoint_state st;
    trex::save_checkpoint(dir + "/run", p, nullptr, st, 1);
    const std::string tok = source_path("tests/golden/tokenizer/deepseek_v4_reduced.json");
    auto codec = load_tokenizer_codec(tok, true);
    const auto ids = codec->encode_chat({{"user", "Hi"}});
    ASSERT_GE(ids.size(), 3u);
    EXPECT_EQ(codec->decode({ids.end() - 2, ids.end()}), "<｜Assistant｜><think>");
    EXPECT_EQ(codec->decode(codec->encode("x + 2 y <= 5")), "x + 2 y <= 5");
    trex::write_file_atomic(dir + "/b.jsonl", "{\"en_question\": \"Maximise x with x <= 1.\", \"en_answer\": 1}\n");
    const auto r = trex::test::run_command(trex::test::trex_binary() + " eval run --backend local --checkpoint " + dir +
                                           "/run --tokenizer " + tok + " --bench " + dir + "/b.jsonl --out " + dir +
                                           "/out --max-tokens 3 --temperature 0 --no-progress --prompt pulp");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("1 items, 1 samples (0 cached, 1 generated)"), std::string::npos) << r.out;
    EXPECT_TRUE(fs::exists(dir + "/out/results.jsonl"));
    // a checkpoint without a tokenizer, or a bad one, is a one-line error
    const auto bad = trex::test::run_command(trex::test::trex_binary() + " eval run --backend local --checkpoint " +
                                             dir + "/run --bench " + dir + "/b.jsonl --out " + dir + "/out2");
    EXPECT_NE(bad.exit_code, 0);
    EXPECT_NE(bad.out.find("--tokenizer"), std::string::npos) << bad.out;
    if (!HasFailure()) fs::remove_all(dir);
}
