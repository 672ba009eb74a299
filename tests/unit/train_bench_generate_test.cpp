// `trex bench generate` (src/trex/bench/bench_generate.hpp): the rates, the bandwidth bound and the cache parity on a
// small model; the peer protocol with a stand-in script (tokens compared one by one, the ratio); and, where the venv
// has PyTorch + transformers (scripts/setup.sh --with-torch), the real peer: HF transformers' cached `generate` on the
// same weights gives our greedy tokens.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/test_support.hpp"
#include "trex/bench/bench_generate.hpp"
#include "trex/model/config.hpp"
#include "trex/model/model.hpp"

namespace fs = std::filesystem;

namespace {

trex::bench::bench_generate_options small() {
    trex::bench::bench_generate_options o;
    o.batch = 3;
    o.prompt_len = 21;
    o.new_tokens = 12;
    return o;
}

struct micro_model {
    trex::model_config cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    trex::dsv4_model m{cfg};
    micro_model() { m.params().init(11, 0.05); }
};

double main_weight_bytes(trex::dsv4_model& m, bool experts) {
    double b = 0;
    for (const auto& s : m.params().specs)
        if (!s.is_mtp && (experts || s.expert < 0)) b += 4.0 * (double)s.numel();
    return b;
}

TEST(BenchGenerate, RatesTheBoundAndTheCacheParity) {
    micro_model mm;
    const auto r = trex::bench::run_bench_generate(mm.m, "micro", small());
    EXPECT_GT(r.prefill_tokens_per_s, 0);
    EXPECT_GT(r.decode_tokens_per_s, 0);
    EXPECT_GT(r.decode_tokens_per_s_batch1, 0);
    EXPECT_EQ(r.decode_batch, 3);
    EXPECT_NEAR(r.batch_speedup, r.decode_tokens_per_s / r.decode_tokens_per_s_batch1, 1e-9);
    EXPECT_EQ((int64_t)r.greedy_tokens.size(), 12);
    EXPECT_LE(r.cache_parity_max_rel, 1e-5);
    // the bytes a token reads: more than the weights without the routed experts, less than all of them
    EXPECT_GT(r.weight_bytes_per_token, main_weight_bytes(mm.m, false) - 4.0 * mm.cfg.vocab_size * mm.cfg.hidden_size);
    EXPECT_LT(r.weight_bytes_per_token, main_weight_bytes(mm.m, true));
    EXPECT_GT(r.cache_bytes_per_token, 0);
    EXPECT_GT(r.bandwidth_gbps, 0.1);
    EXPECT_NEAR(r.bandwidth_bound_tokens_per_s,
                r.bandwidth_gbps * 1e9 / (r.weight_bytes_per_token + r.cache_bytes_per_token),
                1e-9 * r.bandwidth_bound_tokens_per_s);
    EXPECT_GT(r.bound_batch_speedup, 1.0);
    EXPECT_LE(r.bound_batch_speedup, 3.0);  // never more than the batch
    const nlohmann::json j = trex::bench::bench_generate_json(r);
    for (const char* k : {"prefill_tokens_per_s", "decode_tokens_per_s", "decode_batch", "bandwidth_bound_tokens_per_s",
                          "cache_parity_max_rel"})
        EXPECT_TRUE(j.contains(k)) << k;
    EXPECT_FALSE(j.contains("ratio_vs_peer"));
}

TEST(BenchGenerate, SpeculativeDecodingIsTimedAndGivesThePlainTokens) {
    micro_model mm;
    auto o = small();
    o.speculative = true;
    const auto r = trex::bench::run_bench_generate(mm.m, "micro", o);
    ASSERT_TRUE(r.has_speculative);
    EXPECT_TRUE(r.speculative_identical);
    EXPECT_GE(r.mtp_acceptance, 0.0);
    EXPECT_LE(r.mtp_acceptance, 1.0);
    // the ratio of the medians of alternated runs; the draft is part of the speculative step, the ceiling its formula
    EXPECT_EQ(r.speculative_reps, 3);
    EXPECT_NEAR(r.speculative_speedup, r.speculative_decode_tokens_per_s / r.plain_decode_tokens_per_s, 1e-9);
    EXPECT_GT(r.mtp_draft_ms, 0.0);
    EXPECT_LT(r.mtp_draft_ms, r.speculative_step_ms);
    EXPECT_NEAR(r.speculative_ceiling, (1 + r.mtp_acceptance) * r.plain_step_ms / (r.plain_step_ms + r.mtp_draft_ms),
                1e-9);
    EXPECT_LT(r.speculative_ceiling, 2.0);
    const nlohmann::json j = trex::bench::bench_generate_json(r);
    for (const char* k :
         {"mtp_acceptance", "speculative_decode_tokens_per_s", "speculative_speedup", "plain_decode_tokens_per_s",
          "plain_step_ms", "speculative_step_ms", "mtp_draft_ms", "speculative_ceiling"})
        EXPECT_TRUE(j.contains(k)) << k;
}

// --profile: the sections of a decoding step at batch 1 and at the batch; the attention, MoE and head sections all
// appear, none is negative, and with "other" they sum to the step.
TEST(BenchGenerate, ProfileSplitsTheDecodingStepIntoItsSections) {
    micro_model mm;
    auto o = small();
    o.profile = true;
    const auto r = trex::bench::run_bench_generate(mm.m, "micro", o);
    ASSERT_EQ(r.profiles.size(), 2u);
    EXPECT_EQ(r.profiles[0].batch, 1);
    EXPECT_EQ(r.profiles[1].batch, 3);
    for (const auto& p : r.profiles) {
        EXPECT_EQ(p.steps, o.new_tokens - 2) << "the steps after the first (which follows the prefill)";
        double sum = 0;
        for (const auto& [name, ms] : p.section_ms) {
            EXPECT_GE(ms, 0.0) << name;
            sum += ms;
        }
        for (const char* s :
             {"dec.attn.proj", "dec.attn.core", "dec.attn.out", "fwd.moe.experts", "fwd.head", "fwd.mhc", "other"})
            EXPECT_TRUE(p.section_ms.count(s)) << s;
        EXPECT_NEAR(sum, p.step_ms, 1e-6 * p.step_ms + 1e-9);
    }
    EXPECT_TRUE(trex::bench::bench_generate_json(r).contains("decode_profile"));
    EXPECT_NE(trex::bench::format_bench_generate(r).find("decode profile"), std::string::npos);
}

TEST(BenchGenerate, PeerTokensAreComparedOneByOne) {
    micro_model mm;
    const auto plain = trex::bench::run_bench_generate(mm.m, "micro", small());
    // a stand-in peer: checks its input, reports our tokens with the fifth changed, at 10 tokens/s
    std::string tokens;
    for (size_t i = 0; i < plain.greedy_tokens.size(); i++)
        tokens += (i ? "," : "") + std::to_string(i == 4 ? plain.greedy_tokens[i] + 1 : plain.greedy_tokens[i]);
    const fs::path dir = fs::temp_directory_path() / "trex-bench-generate-test";
    fs::create_directories(dir);
    const fs::path script = dir / "peer.py";
    std::ofstream(script) << "import json, os, sys\n"
                             "assert os.path.getsize(sys.argv[1]) > 0 and sys.argv[2:4] == ['--new-tokens', '12']\n"
                             "print(json.dumps({'decode_tokens_per_s': 10.0, 'prefill_tokens_per_s': 100.0, "
                             "'tokens': ["
                          << tokens << "], 'threads': 1, 'torch_version': 'x', 'transformers_version': 'y'}))\n";
    auto o = small();
    o.peer = true;
    o.python = "/usr/bin/python3";
    o.peer_script = script.string();
    const auto r = trex::bench::run_bench_generate(mm.m, "micro", o);
    ASSERT_TRUE(r.has_peer);
    EXPECT_EQ(r.greedy_tokens, plain.greedy_tokens);  // the same weights and prompts decode the same
    EXPECT_DOUBLE_EQ(r.greedy_match, 4.0 / 12.0);
    EXPECT_EQ(r.greedy_first_mismatch, 4);
    EXPECT_DOUBLE_EQ(r.ratio_vs_peer, r.decode_tokens_per_s_batch1 / 10.0);
    const nlohmann::json j = trex::bench::bench_generate_json(r);
    for (const char* k : {"peer_decode_tokens_per_s", "ratio_vs_peer", "greedy_match"}) EXPECT_TRUE(j.contains(k)) << k;
    // a peer that fails is a one-line error naming it
    std::ofstream(script) << "import sys\nsys.exit('no transformers here')\n";
    EXPECT_THROW(trex::bench::run_bench_generate(mm.m, "micro", o), std::exception);
}

TEST(BenchGenerate, HfTransformersGenerateGivesOurGreedyTokens) {
    const std::string python = trex::test::source_path(".venv/bin/python");
    if (!fs::exists(python) ||
        std::system(("'" + python + "' -c 'import torch, transformers, safetensors' 2>/dev/null").c_str()) != 0)
        GTEST_SKIP() << "no torch + transformers in .venv (scripts/setup.sh --with-torch)";
    micro_model mm;
    auto o = small();
    o.peer = true;
    o.peer_threads = "1";
    o.new_tokens = 24;  // past the window (8), CSA's top-4 and HCA's blocks
    const auto r = trex::bench::run_bench_generate(mm.m, "micro", o);
    ASSERT_TRUE(r.has_peer);
    EXPECT_EQ(r.greedy_match, 1.0) << "first difference at token " << r.greedy_first_mismatch;
}

}  // namespace
