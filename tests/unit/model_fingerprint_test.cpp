// Bitwise fingerprints of training on v4-micro, v4-tiny and v4-bench-cpu, written from main before the engine
// architecture refactor (issue 19) started, so that every step of that refactor can show its results are unchanged:
// the losses and gradients of one model step, and the metrics and checkpoint files of a two-step `trex train` run
// (Muon + AdamW, a checkpoint after each step).
//
// Floating-point results depend on the machine (vector width, oneDNN's kernels and blockings, thread count), so the
// fixture (tests/golden/refactor_fingerprints.json) holds one entry per machine signature; on a machine without one
// the test is skipped and names its signature. TREX_WRITE_FINGERPRINTS=1 records this machine's entry — only ever from
// a build of the pre-refactor sources.
#include <gtest/gtest.h>
#include <omp.h>
#include <xxhash.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <oneapi/dnnl/dnnl.h>

#include "support/test_support.hpp"
#include "trex/base/files.hpp"
#include "trex/model/model.hpp"
#include "trex/kernels/cpu/peak.hpp"
#include "trex/train/synthetic_batch.hpp"
#include "trex/train/train_config.hpp"
#include "trex/train/trainer.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct fingerprint_case {
    const char* config;
    int64_t batch, seq;
};
// small enough to run in seconds; every architecture feature of each config is exercised
constexpr fingerprint_case kCases[] = {{"v4-micro", 2, 64}, {"v4-tiny", 2, 128}, {"v4-bench-cpu", 1, 128}};
// the two-step training run (checkpoints of 1.2 GB for v4-bench-cpu would dominate the test's time): the smaller two
bool trains(const fingerprint_case& c) { return std::string(c.config) != "v4-bench-cpu"; }

std::string hex64(uint64_t v) { return fmt::format("{:016x}", v); }
std::string bits(double x) {
    uint64_t u;
    std::memcpy(&u, &x, sizeof u);
    return hex64(u);
}
std::string hash_floats(const float* p, int64_t n) { return hex64(XXH64(p, sizeof(float) * (size_t)n, 0)); }

// What decides the bits: the CPU (its family, model and caches drive oneDNN's kernel choice and blocking), the vector
// ISA, the compiler, oneDNN and the thread count.
std::string machine_signature() {
    std::ifstream in("/proc/cpuinfo");
    std::string line, name, family, model, stepping;
    auto value = [](const std::string& l) { return l.substr(l.find(':') + 2); };
    while (std::getline(in, line)) {
        if (name.empty() && line.rfind("model name", 0) == 0) name = value(line);
        if (family.empty() && line.rfind("cpu family", 0) == 0) family = value(line);
        if (model.empty() && line.rfind("model\t", 0) == 0) model = value(line);
        if (stepping.empty() && line.rfind("stepping", 0) == 0) stepping = value(line);
    }
    const dnnl_version_t* v = dnnl_version();
    return fmt::format("{} (family {} model {} stepping {}) | {} | gcc {} | oneDNN {}.{}.{} | {} threads", name, family,
                       model, stepping, trex::measure_fma_peak(0.01).isa, __VERSION__, v->major, v->minor, v->patch,
                       omp_get_max_threads());
}

// One forward + backward of the model: the five losses and the gradient arena.
json model_step_fingerprint(const fingerprint_case& c) {
    const auto cfg = trex::load_config(trex::test::source_path(fmt::format("configs/{}.json", c.config)));
    trex::dsv4_model model(cfg);
    model.params().init(1234);
    trex::synthetic_batch_options o;
    o.packed = true;
    o.masked_fraction = 0.1;
    const auto batch = trex::make_synthetic_batch(c.batch, c.seq, cfg.vocab_size, 7, o);
    trex::step_options so;
    so.alpha_bal = 0.01;
    model.params().zero_grads();
    const auto r = model.step(batch.view(), so);
    const auto& p = model.params();
    return {{"loss", bits(r.loss)}, {"lm", bits(r.lm)},   {"mtp", bits(r.mtp)},
            {"bal", bits(r.bal)},   {"idx", bits(r.idx)}, {"grads", hash_floats(p.grads.data(), p.n_floats)}};
}

// Two steps of `trex train` (synthetic-chain data, Muon + AdamW, a checkpoint after each): every logged value that is
// not a timing, and the bytes of the last checkpoint's weights and optimizer state.
json train_fingerprint(const fingerprint_case& c, const std::string& out) {
    const auto cfg = trex::load_train_config(
        "", {fmt::format("model.config=\"{}\"", trex::test::source_path(fmt::format("configs/{}.json", c.config))),
             fmt::format("data.batch={}", c.batch), fmt::format("data.seq={}", c.seq), "run.steps=2",
             "checkpoint.every=1", "log.report=false", fmt::format("run.out_dir=\"{}\"", out)});
    const auto s = trex::run_training(cfg);
    json steps = json::array();
    std::istringstream metrics(trex::read_file(out + "/metrics.jsonl"));
    std::string line;
    while (std::getline(metrics, line)) {
        json j = json::parse(line), kept;
        for (const char* k : {"loss", "lm", "mtp", "bal", "idx", "grad_norm", "clip_scale", "lr"})
            kept[k] = bits(j.at(k).get<double>());
        kept["expert_load"] = j.at("expert_load");
        kept["tokens"] = j.at("tokens");
        steps.push_back(kept);
    }
    return {{"steps", steps},
            {"model.safetensors", trex::file_xxh64(s.checkpoint + "/model.safetensors")},
            {"optim.safetensors", trex::file_xxh64(s.checkpoint + "/optim.safetensors")},
            {"state.json", trex::file_xxh64(s.checkpoint + "/state.json")}};
}

}  // namespace

TEST(RefactorFingerprint, TrainingIsBitwiseThatOfThePreRefactorMain) {
#ifndef NDEBUG
    // The fixture holds Release builds (-O3): another optimisation level or a sanitizer build changes the bits.
    GTEST_SKIP() << "the fingerprints are of Release builds; this is a Debug or sanitizer build";
#endif
    const std::string fixture = trex::test::source_path("tests/golden/refactor_fingerprints.json");
    const std::string sig = machine_signature();
    json now;
    for (const auto& c : kCases) {
        const std::string out = trex::test::scratch_dir(fmt::format("fingerprint_{}", c.config));
        now[c.config]["model_step"] = model_step_fingerprint(c);
        if (trains(c)) now[c.config]["train"] = train_fingerprint(c, out);
        fs::remove_all(out);
    }
    json all = fs::exists(fixture) ? json::parse(trex::read_file(fixture)) : json::object();
    if (const char* w = std::getenv("TREX_WRITE_FINGERPRINTS"); w && std::string(w) == "1") {
        all[sig] = now;
        trex::write_file_atomic(fixture, all.dump(1) + "\n");
        GTEST_SKIP() << "wrote the fingerprints of " << sig << " to " << fixture;
    }
    if (!all.contains(sig))
        GTEST_SKIP() << "no fingerprints for this machine (" << sig << "); the fixture has " << all.size()
                     << " other machine(s)";
    const json& want = all[sig];
    for (const auto& c : kCases) {
        SCOPED_TRACE(c.config);
        EXPECT_EQ(now[c.config]["model_step"], want[c.config]["model_step"]);
        if (trains(c)) {
            EXPECT_EQ(now[c.config]["train"], want[c.config]["train"]);
        }
    }
}
