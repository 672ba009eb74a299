// The trainer: run configs, packing, checkpoints (atomic, verified, resumable), a learnable run, the NaN guard.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/data/packer.hpp"
#include "trex/data/shards.hpp"
#include "trex/data/sources.hpp"
#include "trex/data/synthetic.hpp"
#include "trex/io/checkpoint.hpp"
#include "trex/io/hf_checkpoint.hpp"
#include "trex/io/safetensors.hpp"
#include "trex/kernels/precision.hpp"
#include "trex/model/config.hpp"
#include "trex/model/counts.hpp"
#include "trex/train/report.hpp"
#include "trex/train/trainer.hpp"

namespace fs = std::filesystem;

namespace {

std::string tmp_dir(const std::string& name) {
    return trex::test::scratch_dir("train_test_" + name);
}

std::string expect_error(const std::function<void()>& f) {
    try {
        f();
    } catch (const trex::error& e) {
        const std::string m = e.what();
        EXPECT_EQ(m.find('\n'), std::string::npos) << "error message is not one line: " << m;
        return m;
    }
    ADD_FAILURE() << "expected a trex::error";
    return "";
}

// A source of fixed documents (cycled), for packer tests.
class list_source : public trex::document_source {
   public:
    explicit list_source(std::vector<trex::document> docs) : docs_(std::move(docs)) {}
    void next(trex::document& d) override { d = docs_[i_++ % docs_.size()]; }
    nlohmann::json state() const override { return {{"i", i_}}; }
    void restore(const nlohmann::json& s) override { i_ = s.at("i").get<size_t>(); }
    std::string describe() const override { return "list"; }

   private:
    std::vector<trex::document> docs_;
    size_t i_ = 0;
};

trex::train_config micro_config(const std::string& out, int64_t steps) {
    return trex::load_train_config(
        "", {"model.config=\"" + trex::test::source_path("configs/v4-micro.json") + "\"", "data.batch=4", "data.seq=64",
             "optim.lr=5e-3", "optim.warmup=5", "checkpoint.every=0", "log.report=false",
             "run.steps=" + std::to_string(steps), "run.out_dir=\"" + out + "\""});
}

std::vector<nlohmann::json> read_metrics(const std::string& dir) {
    std::vector<nlohmann::json> rows;
    std::ifstream in(dir + "/metrics.jsonl");
    std::string line;
    while (std::getline(in, line))
        if (!line.empty()) rows.push_back(nlohmann::json::parse(line));
    return rows;
}

// Sets elements [k0, k0 + n) of the I32 table `name` in a checkpoint's model.safetensors to `value` and re-signs the
// manifest, as a checkpoint written from a bad table would be (the checksums are the writer's, so verification passes).
void poke_table(const std::string& ckpt, const std::string& name, int64_t k0, int64_t n, int32_t value) {
    const std::string path = ckpt + "/model.safetensors";
    uint64_t data_start = 0, begin = 0;
    {
        trex::safetensors_file f(path);
        ASSERT_EQ(f.tensor(name).dtype, trex::st_dtype::i32);
        ASSERT_LE(k0 + n, f.tensor(name).numel());
        begin = f.tensor(name).begin;
        std::ifstream in(path, std::ios::binary);
        uint64_t header = 0;
        in.read(reinterpret_cast<char*>(&header), 8);
        data_start = 8 + header;
    }
    {
        std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp((std::streamoff)(data_start + begin + 4 * (uint64_t)k0));
        for (int64_t k = 0; k < n; k++) f.write(reinterpret_cast<const char*>(&value), 4);
    }
    auto man = nlohmann::json::parse(trex::read_file(ckpt + "/manifest.json"));
    man["files"]["model.safetensors"]["xxh64"] = trex::file_xxh64(path);
    std::ofstream(ckpt + "/manifest.json") << man.dump(1);
    ASSERT_EQ(trex::verify_checkpoint(ckpt), "");
}

}  // namespace

TEST(TrainConfig, DefaultsOverridesAndErrors) {
    auto c = trex::load_train_config("", {"optim.lr=3e-4", "run.steps=7", "data.batch=2", "loss.mtp_weight=0.25"});
    EXPECT_DOUBLE_EQ(c.schedule.peak, 3e-4);
    EXPECT_EQ(c.steps, 7);
    EXPECT_EQ(c.schedule.total, 7);
    EXPECT_EQ(c.batch, 2);
    EXPECT_DOUBLE_EQ(c.mtp_weight, 0.25);
    EXPECT_DOUBLE_EQ(c.mtp_weight_after_decay, 0.25);
    EXPECT_EQ(c.sources.size(), 1u);
    EXPECT_NE(expect_error([] { trex::load_train_config("", {"optim.lrr=1"}); }).find("optim.lrr"), std::string::npos);
    EXPECT_NE(expect_error([] { trex::load_train_config("", {"run.steps=\"ten\""}); }).find("run.steps"),
              std::string::npos);
    EXPECT_NE(expect_error([] { trex::load_train_config("", {"run.mode=\"rl\""}); }).find("run.mode"),
              std::string::npos);
    EXPECT_NE(expect_error([] { trex::load_train_config("", {"nosection"}); }).find("section.key=value"),
              std::string::npos);
    const std::string dir = tmp_dir("cfg");
    const std::string bad = dir + "/bad.toml";
    std::ofstream(bad) << "[run]\nsteps = = 3\n";
    EXPECT_NE(expect_error([&] { trex::load_train_config(bad, {}); }).find("bad.toml:2"), std::string::npos);
    std::ofstream(dir + "/x.toml") << "[bogus]\nk = 1\n";
    EXPECT_NE(expect_error([&] { trex::load_train_config(dir + "/x.toml", {}); }).find("[bogus]"), std::string::npos);
}

// Every value the hostile review found accepted is a one-line error naming the key and the value, before any work.
TEST(TrainConfig, OutOfRangeValuesAreRefusedNamingKeyAndValue) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"optim.beta1=1.5", "'optim.beta1' = 1.5"},
        {"optim.beta2=-0.1", "'optim.beta2' = -0.1"},
        {"optim.muon_momentum=2", "'optim.muon_momentum' = 2"},
        {"optim.warmup=-3", "'optim.warmup' = -3"},
        {"optim.clip_grad_norm=-1", "'optim.clip_grad_norm' = -1"},
        {"run.steps=-1", "'run.steps' = -1"},
        {"run.steps=0", "'run.steps' = 0"},
        {"data.batch=0", "'data.batch' = 0"},
        {"data.seq=-8", "'data.seq' = -8"},
        {"optim.lr=inf", "'optim.lr' = inf"},
        {"optim.lr=nan", "'optim.lr' = nan"},
        {"optim.eps=0", "'optim.eps' = 0"},
        {"loss.mtp_weight=nan", "'loss.mtp_weight' = nan"},
        {"loss.balance_alpha=-1e-4", "'loss.balance_alpha' = -0.0001"},
        {"optim.min_lr=1", "'optim.min_lr' = 1"},
        {"model.init_std=0", "'model.init_std' = 0"},
        {"log.every=0", "'log.every' = 0"},
        {"guards.spike_factor=0.5", "'guards.spike_factor' = 0.5"},
        {"dist.tp=0", "'dist.tp' = 0"},
        {"dist.timeout=inf", "'dist.timeout' = inf"},
        {"dist.ep=4294967297", "'dist.ep' = 4294967297: out of range"},
        {"checkpoint.keep_last=0", "'checkpoint.keep_last' = 0"},
        {"data.pad_id=-1", "'data.pad_id' = -1"},
        {"data.batch=65536", "'data.batch' = 65536"},  // x seq 65536 = 2^32 tokens
        {"optim.ns_fast_steps=0", "'optim.ns_fast_steps' = 0"},
    };
    for (const auto& [set, want] : cases) {
        std::vector<std::string> sets = {set};
        if (set.rfind("data.batch=65536", 0) == 0) sets.push_back("data.seq=65536");
        if (set.rfind("optim.ns_fast_steps", 0) == 0) sets.push_back("optim.ns_stable_steps=0");
        const std::string m = expect_error([&] { trex::load_train_config("", sets); });
        EXPECT_NE(m.find(want), std::string::npos) << set << " -> " << m;
    }
    // the edges that are legal stay legal
    EXPECT_NO_THROW(trex::load_train_config("", {"optim.beta1=0", "optim.clip_grad_norm=0", "optim.warmup=0",
                                                 "loss.mtp_weight=0", "optim.min_lr=0", "checkpoint.every=0"}));
    // a 21-digit integer is not clamped to something else: it is refused, naming the key
    const std::string big = expect_error([] { trex::load_train_config("", {"run.steps=123456789012345678901"}); });
    EXPECT_NE(big.find("run.steps"), std::string::npos) << big;
}

TEST(Packer, CptLabelsStopAtDocumentBoundaries) {
    std::vector<trex::document> docs = {{{10, 11, 12}, {}}, {{20, 21, 22, 23, 24}, {}}};
    trex::packer p(std::make_unique<list_source>(docs), "cpt", 1);
    trex::train_batch b;
    p.next(b, 1, 6);  // stream: 10 11 12 | 20 21 22 23 24 | 10 11 12 ...
    EXPECT_EQ(b.ids, (std::vector<int32_t>{10, 11, 12, 20, 21, 22}));
    EXPECT_EQ(b.doc_start, (std::vector<int32_t>{1, 0, 0, 1, 0, 0}));
    EXPECT_EQ(b.labels, (std::vector<int32_t>{11, 12, -1, 21, 22, 23}));
    EXPECT_EQ(b.mtp_ids, (std::vector<int32_t>{11, 12, 20, 21, 22, 23}));
    EXPECT_EQ(b.mtp_labels, (std::vector<int32_t>{12, -1, -1, 22, 23, 24}));
    // state/restore continues exactly
    const auto st = p.state();
    trex::train_batch b2, b3;
    p.next(b2, 1, 6);
    trex::packer q(std::make_unique<list_source>(docs), "cpt", 1);
    q.restore(st);
    q.next(b3, 1, 6);
    EXPECT_EQ(b2.ids, b3.ids);
    EXPECT_EQ(b2.labels, b3.labels);
    EXPECT_EQ(b2.doc_start, b3.doc_start);
}

TEST(Packer, SftKeepsSamplesWholeAndTrainsOnMaskedTokensOnly) {
    // sample: prompt tokens (mask 0) then answer tokens (mask 1)
    std::vector<trex::document> docs = {{{5, 6, 7, 8}, {0, 0, 1, 1}}, {{30, 31, 32}, {0, 1, 1}}};
    trex::packer p(std::make_unique<list_source>(docs), "sft", 1);
    trex::train_batch b;
    p.next(b, 2, 6);
    // row 0: sample 1 (4 tokens) fits, sample 2 (3) does not: padding; row 1: sample 2 then the next sample 1 (4)
    // does not fit: padding
    EXPECT_EQ(b.ids, (std::vector<int32_t>{5, 6, 7, 8, 1, 1, 30, 31, 32, 1, 1, 1}));
    EXPECT_EQ(b.labels, (std::vector<int32_t>{-1, 7, 8, -1, -1, -1, 31, 32, -1, -1, -1, -1}));
    EXPECT_EQ(b.doc_start, (std::vector<int32_t>{1, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0}));
    EXPECT_EQ(b.target_tokens, 4);
}

TEST(Checkpoint, RoundTripVerifyAndSkipCorrupt) {
    auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    trex::param_store p(cfg);
    p.init(5);
    trex::optimizer opt(p, trex::optim_config{});
    for (int64_t i = 0; i < p.n_floats; i++) {
        opt.state_m().data()[i] = 0.001f * (float)(i % 13);
        opt.state_v().data()[i] = 0.002f * (float)(i % 7);
    }
    const std::string run = tmp_dir("ckpt");
    trex::checkpoint_state st;
    st.adam_steps = 3;
    st.data = {{"x", 1}};
    for (int64_t step : {2, 4, 6}) {
        st.step = step;
        trex::save_checkpoint(run, p, &opt, st, 2);
    }
    EXPECT_FALSE(fs::exists(run + "/checkpoints/step-00000002"));  // keep_last = 2
    EXPECT_EQ(trex::find_latest_checkpoint(run, nullptr), run + "/checkpoints/step-00000006");
    trex::param_store q(cfg);
    trex::optimizer opt2(q, trex::optim_config{});
    auto got = trex::load_checkpoint(run + "/checkpoints/step-00000006", q, &opt2);
    EXPECT_EQ(got.step, 6);
    EXPECT_EQ(got.adam_steps, 3);
    EXPECT_EQ(opt2.adam_steps(), 3);
    EXPECT_EQ(got.data, st.data);
    EXPECT_EQ(0, std::memcmp(p.weights.data(), q.weights.data(), sizeof(float) * p.n_floats));
    EXPECT_EQ(p.tables, q.tables);
    for (size_t i = 0; i < p.specs.size(); i++) {  // optimizer state of every trainable tensor
        if (p.specs[i].role != trex::tensor_role::weight) continue;
        const size_t bytes = sizeof(float) * p.specs[i].numel();
        EXPECT_EQ(0, std::memcmp(opt.state_m().data() + p.offset[i], opt2.state_m().data() + p.offset[i], bytes));
        EXPECT_EQ(0, std::memcmp(opt.state_v().data() + p.offset[i], opt2.state_v().data() + p.offset[i], bytes));
    }
    // corrupt the newest: a flipped byte → checksum mismatch; resume picks the previous one and says why
    {
        std::fstream f(run + "/checkpoints/step-00000006/model.safetensors",
                       std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(200);
        f.put('\x7f');
    }
    EXPECT_NE(trex::verify_checkpoint(run + "/checkpoints/step-00000006").find("checksum"), std::string::npos);
    std::vector<std::string> skipped;
    EXPECT_EQ(trex::find_latest_checkpoint(run, &skipped), run + "/checkpoints/step-00000004");
    ASSERT_EQ(skipped.size(), 1u);
    EXPECT_NE(skipped[0].find("step-00000006"), std::string::npos);
    // truncated file: the size no longer matches the manifest
    fs::resize_file(run + "/checkpoints/step-00000004/optim.safetensors", 100);
    EXPECT_NE(trex::verify_checkpoint(run + "/checkpoints/step-00000004").find("size"), std::string::npos);
    EXPECT_NE(expect_error([&] {
                  trex::load_checkpoint(run + "/checkpoints/step-00000004", q, &opt2);
              }).find("optim.safetensors"),
              std::string::npos);
    // a partial (interrupted) write is ignored
    fs::create_directories(run + "/checkpoints/step-00000008.tmp-123");
    skipped.clear();
    EXPECT_EQ(trex::find_latest_checkpoint(run, &skipped), "");
    EXPECT_EQ(skipped.size(), 3u);
}

TEST(Checkpoint, OutOfRangeTid2eidIsRefusedAtLoadAndResume) {
    // A tid2eid entry outside [0, n_routed_experts) used to be copied into the table and then indexed the expert
    // arrays in the MoE layer (a segfault on resume, or a silent run that copied the bad table into its checkpoints).
    const std::string out = tmp_dir("bad_tid2eid");
    trex::run_training(micro_config(out, 2));
    const std::string ckpt = out + "/checkpoints/step-00000002";
    const std::string table = "layers.0.ffn.gate.tid2eid";
    const auto mcfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    ASSERT_EQ(mcfg.n_routed_experts, 4);
    ASSERT_EQ(mcfg.num_experts_per_tok, 2);
    const std::string resume =
        trex::test::trex_binary() + " train --set 'model.config=\"" + trex::test::source_path("configs/v4-micro.json") +
        "\"' --set data.batch=4 --set data.seq=64 --set log.report=false --steps 4 --out " + out + " --resume " + ckpt;
    struct corruption {
        int64_t first, count;
        int32_t value;
    };
    // one entry (token 7, second choice) just past the range, far past it, negative; then the whole table far out
    // (which crashed the old code: every token's experts are read at ~4 GB past the arrays)
    const int64_t entries = (int64_t)mcfg.vocab_size * mcfg.num_experts_per_tok;
    const std::string saved = tmp_dir("bad_tid2eid_saved");
    for (const char* f : {"model.safetensors", "manifest.json"}) fs::copy_file(ckpt + "/" + f, saved + "/" + f);
    for (const corruption c :
         {corruption{15, 1, 4}, corruption{15, 1, 99}, corruption{15, 1, -1}, corruption{0, entries, 1000000000}}) {
        poke_table(ckpt, table, c.first, c.count, c.value);
        const std::string want = fmt::format("element {} = {} (token {}, choice {}) is not an expert id in [0, 4)",
                                             c.first, c.value, c.first / 2, c.first % 2);
        trex::param_store p(mcfg);
        const std::string msg = expect_error([&] { trex::load_checkpoint(ckpt, p, nullptr); });
        EXPECT_NE(msg.find(table), std::string::npos) << msg;
        EXPECT_NE(msg.find(want), std::string::npos) << msg;
        EXPECT_NE(msg.find(ckpt), std::string::npos) << msg;
        // the CLI: exit status 1 with the one-line error (not a signal), and no new checkpoint
        const auto r = trex::test::run_command(resume);
        EXPECT_EQ(r.exit_code, 1) << r.out;
        EXPECT_NE(r.out.find(want), std::string::npos) << r.out;
        EXPECT_FALSE(fs::exists(out + "/checkpoints/step-00000004"));
        fs::remove_all(out + "/checkpoints/step-00000004");
        for (const char* f : {"model.safetensors", "manifest.json"})
            fs::copy_file(saved + "/" + f, ckpt + "/" + f, fs::copy_options::overwrite_existing);
    }
    // the original table: the checkpoint resumes
    const auto r = trex::test::run_command(resume);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(fs::exists(out + "/checkpoints/step-00000004"));
}

// A metrics append that fails (a full disk: here a file-size limit, which write() reports the same way) stops the run
// with an error naming metrics.jsonl and leaves no torn line; a torn last line that a killed process left is dropped
// at resume, and the temporary directory of a checkpoint write that was killed is removed at the next start.
TEST(Train, FullDiskStopsTheRunResumeRepairsTornLinesAndStaleTemps) {
    const std::string out = tmp_dir("full_disk");
    const std::string train = trex::test::trex_binary() + " train --set 'model.config=\"" +
                              trex::test::source_path("configs/v4-micro.json") +
                              "\"' --set data.batch=2 --set data.seq=64 --set log.report=false";
    // bash's ulimit -f counts KiB: 24 KiB hold the run's config.json and a few dozen metrics lines
    const auto full = trex::test::run_command("bash -c \"trap '' XFSZ; ulimit -f 24; exec " + train +
                                              " --set checkpoint.every=0 --steps 500 --out " + out + "/full\"");
    EXPECT_NE(full.exit_code, 0) << full.out;
    EXPECT_NE(full.out.find(out + "/full/metrics.jsonl: append failed"), std::string::npos) << full.out;
    const auto rows = read_metrics(out + "/full");  // throws on a torn line
    EXPECT_GT(rows.size(), 2u);
    EXPECT_LT(rows.size(), 500u);
    EXPECT_EQ(trex::read_file(out + "/full/metrics.jsonl").back(), '\n');

    const std::string run = out + "/resume";
    auto r = trex::test::run_command(train + " --set checkpoint.every=1 --steps 3 --out " + run);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    {
        std::ofstream(run + "/metrics.jsonl", std::ios::app) << "{\"step\": 4, \"loss\": 1.2";  // killed mid-line
    }
    const pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, nullptr, 0);
    const std::string stale = run + "/checkpoints/step-00000009.tmp-" + std::to_string(dead);
    fs::create_directories(stale);
    std::ofstream(stale + "/model.safetensors") << "partial";
    r = trex::test::run_command(train + " --set checkpoint.every=1 --steps 5 --resume auto --out " + run);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("dropped an unreadable line"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("train: removed " + stale), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(stale));
    const auto resumed = read_metrics(run);
    ASSERT_EQ(resumed.size(), 5u);
    for (size_t i = 0; i < resumed.size(); i++) EXPECT_EQ(resumed[i]["step"].get<int64_t>(), (int64_t)i + 1);
}

TEST(Train, LossFallsOnTheSyntheticTask) {
    // The successor-chain corpus (src/trex/data/synthetic.hpp) is learnable to ~0 LM loss once the model maps each
    // token to its successor (the packer never asks it to predict a document's first token). A uniform guess costs
    // ln(256) = 5.55 nats on v4-micro; 80 steps of 256 tokens must bring the mean LM loss of the last 10 logged
    // steps under 0.5 (runs of this config reach ~0.01 by step 50, with occasional routing-flip spikes to ~1).
    const std::string out = tmp_dir("learn");
    auto cfg = micro_config(out, 80);
    const auto s = trex::run_training(cfg);
    const auto rows = read_metrics(out);
    ASSERT_EQ(rows.size(), 80u);
    EXPECT_NEAR(rows.front()["lm"].get<double>(), std::log(256.0), 0.3);
    double tail = 0;
    for (size_t i = rows.size() - 10; i < rows.size(); i++) tail += rows[i]["lm"].get<double>();
    EXPECT_LT(tail / 10, 0.5);
    EXPECT_EQ(s.skipped, 0);
    EXPECT_TRUE(fs::exists(s.checkpoint + "/manifest.json"));
}

TEST(Train, MfuCountsTheDenseCsaWarmUpSteps) {
    // loss.indexer_dense_steps = 2: the first two steps attend to every visible compressed entry of the CSA layers,
    // so their MFU divides the dense count of FLOPs per token, the later steps the top-k count (the peak is measured
    // once per run, so mfu / tokens_per_s is FLOPs/token over a constant)
    const std::string out = tmp_dir("mfu_dense");
    auto cfg = micro_config(out, 4);
    cfg.indexer_dense_steps = 2;
    trex::run_training(cfg);
    const auto rows = read_metrics(out);
    ASSERT_EQ(rows.size(), 4u);
    for (const auto& r : rows)
        if (r["mfu"].is_null()) GTEST_SKIP() << "the run could not validate its FMA peak (a busy machine): no MFU";
    const auto per_token = [&](size_t i) {
        return rows[i]["mfu"].get<double>() / rows[i]["tokens_per_s"].get<double>();
    };
    const trex::model_config mc = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    trex::flops_options fo;
    fo.seq_len = 64;
    const double sparse = trex::training_flops_per_token(mc, fo).total;
    fo.dense_csa = true;
    const double dense = trex::training_flops_per_token(mc, fo).total;
    ASSERT_GT(dense, sparse);
    EXPECT_NEAR(per_token(0) / per_token(3), dense / sparse, 1e-9);
    EXPECT_NEAR(per_token(1) / per_token(2), dense / sparse, 1e-9);
    EXPECT_NEAR(per_token(2) / per_token(3), 1.0, 1e-9);
}

TEST(Train, ABf16RunTracksTheFp32LossCurve) {
    // model.precision = "bf16": the GEMMs of forward and backward take bf16 operands, the master weights, gradients
    // and optimizer stay fp32. On the successor-chain task the two runs' LM losses must agree within 2 % step by
    // step while the loss falls from ln 256 (the first 12 steps: later the loss is near 0 and relative differences
    // measure nothing) and the bf16 run must still learn the task; and they must not be equal (a bf16 run that
    // computed in fp32 fails here).
    if (!trex::cpu_has_bf16()) GTEST_SKIP() << "this CPU has no AVX512_BF16";
    constexpr int64_t steps = 40;
    std::vector<nlohmann::json> runs[2];
    for (int i = 0; i < 2; i++) {
        const std::string out = tmp_dir(i ? "bf16_run" : "fp32_run");
        auto cfg = micro_config(out, steps);
        cfg.precision = i ? "bf16" : "fp32";
        trex::run_training(cfg);
        runs[i] = read_metrics(out);
        ASSERT_EQ(runs[i].size(), (size_t)steps);
    }
    double max_rel = 0;
    bool differ = false;
    for (size_t s = 0; s < 12; s++) {
        const double a = runs[0][s]["lm"].get<double>(), b = runs[1][s]["lm"].get<double>();
        max_rel = std::max(max_rel, std::fabs(b - a) / a);
        differ = differ || a != b;
    }
    EXPECT_LT(max_rel, 0.02);
    EXPECT_TRUE(differ) << "the bf16 run's losses equal the fp32 run's bit for bit";
    double tail = 0;
    for (size_t s = steps - 10; s < (size_t)steps; s++) tail += runs[1][s]["lm"].get<double>();
    // (both runs' last ten steps average ~1 nat here, with routing-flip spikes to ~2)
    EXPECT_LT(tail / 10, 0.5 * std::log(256.0)) << "the bf16 run did not learn the task";
}

TEST(Train, Bf16WithoutTheInstructionsIsRefusedBeforeAnythingIsWritten) {
    const std::string out = tmp_dir("bf16_refused");
    fs::remove_all(out);
    auto cfg = micro_config(out, 1);
    cfg.precision = "bf16";
    setenv("TREX_ASSUME_NO_BF16", "1", 1);
    const std::string msg = expect_error([&] { trex::run_training(cfg); });
    unsetenv("TREX_ASSUME_NO_BF16");
    EXPECT_NE(msg.find("model.precision = \"bf16\": this CPU has no AVX512_BF16 instructions"), std::string::npos)
        << msg;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_NE(expect_error([] { trex::load_train_config("", {"model.precision=\"fp16\""}); }).find("model.precision"),
              std::string::npos);
}

TEST(Train, NonFiniteGuardSkipsThenStops) {
    // a checkpoint whose weights hold a NaN: every step's loss is NaN, the updates are skipped and counted, and the
    // run stops after guards.max_consecutive_skips with a final checkpoint.
    auto mcfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    trex::param_store p(mcfg);
    p.init(1);
    p.w("norm.weight")[0] = NAN;
    const std::string init = tmp_dir("nan_init");
    trex::checkpoint_state st;
    trex::save_checkpoint(init, p, nullptr, st, 1);
    const std::string out = tmp_dir("nan_run");
    auto cfg = micro_config(out, 20);
    cfg.init_from = init + "/checkpoints/step-00000000";
    cfg.max_consecutive_skips = 3;
    const std::string msg = expect_error([&] { trex::run_training(cfg); });
    EXPECT_NE(msg.find("3 consecutive steps"), std::string::npos) << msg;
    const auto rows = read_metrics(out);
    ASSERT_EQ(rows.size(), 3u);
    for (const auto& r : rows) EXPECT_TRUE(r["skipped"].get<bool>());
    EXPECT_NE(trex::find_latest_checkpoint(out, nullptr), "");
}

// A run that starts from a release-layout checkpoint (config.json with quantization_config) trains with the
// release's numerics (model.qat = "auto"), and its checkpoints say so; model.qat = "none" overrides; a shape the
// release's blocks do not fit is a one-line error naming qat.
TEST(Train, ARunFromAReleaseCheckpointTakesTheReleaseNumerics) {
    auto mcfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    mcfg.head_dim = 80;    // 64 non-RoPE dims: the release's FP8 KV blocks fit
    mcfg.qat = "release";  // what a release's config.json implies, so the export writes neither key, as DeepSeek's
    mcfg.indexer_ties = "torch";
    trex::param_store p(mcfg);
    p.init(3);
    const std::string release = tmp_dir("release_init") + "/hf";
    trex::hf_save_options so;
    so.dtype = trex::hf_dtype::fp8;
    trex::save_hf_checkpoint(p, release, so);
    ASSERT_EQ(trex::load_config(release).qat, "release");
    {
        std::ifstream in(release + "/config.json");
        const auto j = nlohmann::json::parse(in);
        ASSERT_TRUE(j.contains("quantization_config"));
        ASSERT_FALSE(j.contains("qat") || j.contains("indexer_ties")) << "a release's config.json has neither key";
    }
    for (const std::string qat : {"auto", "none"}) {
        SCOPED_TRACE(qat);
        const std::string out = tmp_dir("release_run_" + qat);
        auto cfg = trex::load_train_config(
            "", {"model.init_from=\"" + release + "\"", "model.qat=\"" + qat + "\"", "data.batch=1", "data.seq=64",
                 "checkpoint.every=0", "log.report=false", "run.steps=1", "run.out_dir=\"" + out + "\""});
        trex::run_training(cfg);
        const std::string ckpt = trex::find_latest_checkpoint(out, nullptr);
        ASSERT_NE(ckpt, "");
        const trex::model_config saved = trex::load_config(ckpt);
        EXPECT_EQ(saved.qat, qat == "auto" ? "release" : "none");
        EXPECT_EQ(saved.indexer_ties, "torch");
    }
    auto micro = trex::load_train_config(
        "", {"model.config=\"" + trex::test::source_path("configs/v4-micro.json") + "\"", "model.qat=\"release\"",
             "run.steps=1", "run.out_dir=\"" + tmp_dir("release_bad") + "\""});
    const std::string msg = expect_error([&] { trex::run_training(micro); });
    EXPECT_NE(msg.find("key 'qat': 'release' quantises head_dim − qk_rope_head_dim = 16"), std::string::npos) << msg;
}

TEST(Shards, RoundTripAndCorruption) {
    const std::string dir = tmp_dir("shards");
    trex::shard_writer w(100);
    w.add({5, 6, 7});
    w.add({8, 9}, {0, 1});
    w.add({});
    w.write(dir + "/a.tshard");
    trex::shard_file f(dir + "/a.tshard");
    EXPECT_EQ(f.docs(), 3);
    EXPECT_EQ(f.tokens(), 5);
    EXPECT_TRUE(f.has_mask());
    std::vector<int32_t> t;
    std::vector<uint8_t> m;
    f.get(0, t, m);
    EXPECT_EQ(t, (std::vector<int32_t>{5, 6, 7}));
    EXPECT_EQ(m, (std::vector<uint8_t>{1, 1, 1}));
    f.get(1, t, m);
    EXPECT_EQ(m, (std::vector<uint8_t>{0, 1}));
    EXPECT_NE(expect_error([&] { trex::shard_writer(10).add({10}); }).find("outside the vocabulary"),
              std::string::npos);
    // truncated, corrupted, not a shard
    const std::string bytes = trex::read_file(dir + "/a.tshard");
    std::ofstream(dir + "/t.tshard", std::ios::binary) << bytes.substr(0, bytes.size() - 3);
    EXPECT_NE(expect_error([&] { trex::shard_file g(dir + "/t.tshard"); }).find("does not match its header"),
              std::string::npos);
    std::string bad = bytes;
    bad[bad.size() - 8] ^= 0x40;
    std::ofstream(dir + "/c.tshard", std::ios::binary) << bad;
    EXPECT_NE(expect_error([&] { trex::shard_file g(dir + "/c.tshard"); }).find("checksum"), std::string::npos);
    std::ofstream(dir + "/x.tshard", std::ios::binary) << "hello";
    EXPECT_NE(expect_error([&] { trex::shard_file g(dir + "/x.tshard"); }).find("not a token shard"),
              std::string::npos);
}

TEST(Shards, SourcesShuffleByEpochMixAndResume) {
    const std::string dir = tmp_dir("shard_src");
    fs::create_directories(dir + "/a");
    trex::shard_writer wa(1000), wb(1000);
    for (int i = 0; i < 10; i++) wa.add({100 + i, 100 + i});
    for (int i = 0; i < 5; i++) wb.add({500 + i});
    wa.write(dir + "/a/part0.tshard");
    wb.write(dir + "/b.tshard");
    // one epoch visits every document once, in a seeded order
    trex::shard_source s({dir + "/a"}, 7, 0, 1000);
    std::set<int32_t> seen;
    trex::document d;
    for (int i = 0; i < 10; i++) {
        s.next(d);
        seen.insert(d.tokens[0]);
    }
    EXPECT_EQ(seen.size(), 10u);
    // mixture: deterministic, roughly weighted, resumable mid-stream
    auto make = [&] {
        std::vector<std::unique_ptr<trex::document_source>> v;
        v.push_back(std::make_unique<trex::shard_source>(std::vector<std::string>{dir + "/a"}, 7, 0, 1000));
        v.push_back(std::make_unique<trex::shard_source>(std::vector<std::string>{dir + "/b.tshard"}, 7, 1, 1000));
        return std::make_unique<trex::mixture_source>(std::move(v), std::vector<double>{3.0, 1.0}, 7);
    };
    auto m1 = make();
    std::vector<int32_t> first;
    int from_b = 0;
    nlohmann::json mid;
    for (int i = 0; i < 400; i++) {
        if (i == 150) mid = m1->state();
        m1->next(d);
        first.push_back(d.tokens[0]);
        from_b += d.tokens[0] >= 500;
    }
    EXPECT_NEAR(from_b / 400.0, 0.25, 0.06);
    auto m2 = make();
    m2->restore(mid);
    for (int i = 150; i < 400; i++) {
        m2->next(d);
        ASSERT_EQ(d.tokens[0], first[i]) << "document " << i << " after restore";
    }
}

// A step whose MFU could not be trusted is logged with "mfu": null (the trainer says why and trains on); the run report
// averages the steps that have one and says when none has, instead of failing or printing 0 %.
TEST(TrainReport, StepsWithoutAnMfuAreLeftOutOfTheMean) {
    const std::string out = tmp_dir("report_null_mfu");
    {
        std::ofstream m(out + "/metrics.jsonl");
        m << R"({"step":1,"loss":5.0,"tokens_per_s":100,"mfu":0.2})"
          << "\n";
        m << R"({"step":2,"loss":4.0,"tokens_per_s":100,"mfu":null})"
          << "\n";
        m << R"({"step":3,"loss":3.0,"tokens_per_s":100,"mfu":0.4})"
          << "\n";
    }
    std::string md = trex::read_file(trex::write_run_report(out, "t", "6N", 100.0));
    EXPECT_NE(md.find("| mean MFU | 30.0% of 100.0 GFLOP/s (measured fp32 FMA peak; 2 of 3 steps) |"),
              std::string::npos)
        << md;
    {
        std::ofstream m(out + "/metrics.jsonl");
        m << R"({"step":1,"loss":5.0,"tokens_per_s":100,"mfu":null})"
          << "\n";
    }
    md = trex::read_file(trex::write_run_report(out, "t", "6N", 100.0));
    EXPECT_NE(md.find("| mean MFU | not reported"), std::string::npos) << md;
}
