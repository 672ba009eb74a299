// `trex bench serve` (src/trex/bench/bench_serve.hpp): the in-process server under a bounded load — every request
// completes with its max_tokens tokens (end of sequence ignored), the rates and latencies are consistent, and the
// ratios are the ones the levels give.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/bench/bench_serve.hpp"
#include "trex/eval/backend.hpp"
#include "trex/model/config.hpp"
#include "trex/model/model.hpp"

TEST(BenchServe, EveryRequestCompletesAndTheRatiosAreTheLevels) {
    const auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    trex::dsv4_model m(cfg);
    m.params().init(3, 0.05);
    const auto codec = trex::eval::make_byte_codec(cfg.eos_token_id);
    trex::bench::bench_serve_options o;
    o.concurrency = {1, 8};
    o.requests = 16;
    o.max_tokens = 6;
    o.prompt_len = 20;
    const auto r = trex::bench::run_bench_serve(m, *codec, "micro", o);
    ASSERT_EQ(r.levels.size(), 2u);
    for (const auto& lv : r.levels) {
        EXPECT_EQ(lv.requests, 16) << lv.concurrency;
        EXPECT_EQ(lv.errors, 0) << lv.concurrency << ": " << lv.first_error;
        EXPECT_TRUE(lv.first_error.empty());
        EXPECT_EQ(lv.tokens, 16 * 6) << lv.concurrency;
        EXPECT_NEAR(lv.decode_tokens_per_s, (double)lv.tokens / lv.seconds, 1e-9 * lv.decode_tokens_per_s);
        EXPECT_GT(lv.ttft_p50, 0);
        EXPECT_LE(lv.ttft_p50, lv.ttft_p99);
        EXPECT_LE(lv.itl_p50, lv.itl_p99);
    }
    EXPECT_NEAR(r.decode_scaling, r.levels[1].decode_tokens_per_s / r.levels[0].decode_tokens_per_s, 1e-12);
    EXPECT_NEAR(r.itl_p99_ratio_8, r.levels[1].itl_p99 / r.levels[0].itl_p99, 1e-12);
    const auto j = trex::bench::bench_serve_json(r);
    EXPECT_EQ(j["levels"].size(), 2u);
    EXPECT_TRUE(j["levels"][0].contains("first_error"));
    EXPECT_TRUE(j.contains("decode_scaling"));
}

TEST(BenchServe, SpeculativeServingCompletesEveryRequestAndReportsItsAcceptance) {
    // the server with MTP drafts and prompts prefilled inside the speculative steps: every request gets its
    // max_tokens tokens, and the acceptance is the engine's
    const auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    ASSERT_TRUE(cfg.has_mtp());
    trex::dsv4_model m(cfg);
    m.params().init(3, 0.05);
    const auto codec = trex::eval::make_byte_codec(cfg.eos_token_id);
    trex::bench::bench_serve_options o;
    o.concurrency = {1, 4};
    o.requests = 8;
    o.max_tokens = 9;
    o.prompt_len = 20;
    o.prefill_chunk = 8;
    o.speculative = true;
    const auto r = trex::bench::run_bench_serve(m, *codec, "micro", o);
    ASSERT_EQ(r.levels.size(), 2u);
    for (const auto& lv : r.levels) {
        EXPECT_EQ(lv.errors, 0) << lv.concurrency;
        EXPECT_EQ(lv.tokens, 8 * 9) << lv.concurrency;
    }
    EXPECT_TRUE(r.speculative);
    EXPECT_GE(r.mtp_acceptance, 0.0);
    EXPECT_LE(r.mtp_acceptance, 1.0);
    const auto j = trex::bench::bench_serve_json(r);
    EXPECT_TRUE(j["speculative"].get<bool>());
    EXPECT_TRUE(j.contains("mtp_acceptance"));
    // a model without MTP is refused by name
    trex::model_config plain = cfg;
    plain.num_nextn_predict_layers = 0;
    trex::dsv4_model p(plain);
    p.params().init(3, 0.05);
    EXPECT_THROW(trex::bench::run_bench_serve(p, *codec, "micro", o), trex::error);
}
