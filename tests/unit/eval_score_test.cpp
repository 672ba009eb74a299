// trex score's engine side (eval/score.hpp): the mean NLL is the model's own LM loss, chunks are independent
// forwards, the dumped logits are the forward's, and bad inputs are one-line errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "trex/eval/score.hpp"
#include "trex/io/safetensors.hpp"
#include "trex/model/config.hpp"
#include "trex/model/model.hpp"

namespace {

std::vector<int32_t> random_ids(int64_t n, int64_t V, uint64_t seed) {
    std::vector<int32_t> ids((size_t)n);
    uint64_t s = seed;
    for (auto& x : ids) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x = (int32_t)((s >> 33) % (uint64_t)V);
    }
    return ids;
}

// The model's LM loss of ids as one forward (labels: the next token; none for the last).
double lm_loss(trex::dsv4_model& m, const std::vector<int32_t>& ids) {
    std::vector<int32_t> labels(ids.size(), -1);
    for (size_t t = 0; t + 1 < ids.size(); t++) labels[t] = ids[t + 1];
    trex::batch_view b;
    b.B = 1;
    b.S = (int64_t)ids.size();
    b.input_ids = ids.data();
    b.labels = labels.data();
    trex::step_options so;
    so.backward = false;
    return m.step(b, so).lm;
}

struct ScoreMicroModel : ::testing::Test {
    trex::model_config cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    trex::dsv4_model model{cfg};
    void SetUp() override { model.params().init(3); }
};

}  // namespace

// Σ −log_softmax over the predicted tokens / their count is the fused cross-entropy's LM loss of the same forward.
TEST_F(ScoreMicroModel, MeanNllIsTheModelsLmLoss) {
    const std::vector<int32_t> ids = random_ids(70, cfg.vocab_size, 1);
    trex::eval::score_options o;
    o.per_token = true;
    const trex::eval::score_result r = trex::eval::score_sequences(model, {ids}, o);
    ASSERT_EQ(r.tokens, 69);
    ASSERT_EQ(r.sequences[0].chunks, 1);
    const double want = lm_loss(model, ids);
    EXPECT_NEAR(r.mean_nll(), want, 1e-6 * want);
    EXPECT_NEAR(r.perplexity(), std::exp(want), 1e-5 * std::exp(want));
    double sum = 0;
    for (double lp : r.sequences[0].logprobs) {
        EXPECT_LE(lp, 0.0);
        sum -= lp;
    }
    EXPECT_DOUBLE_EQ(sum, r.nll);
    EXPECT_EQ(r.sequences[0].predicted, std::vector<int32_t>(ids.begin() + 1, ids.end()));
}

// In chunks of 16: every token but the first predicted once; each chunk a forward of its own tokens whose last
// position predicts the next chunk's first token — the loss of that chunk plus the token as one shorter sequence.
TEST_F(ScoreMicroModel, ChunksAreIndependentForwards) {
    const std::vector<int32_t> ids = random_ids(40, cfg.vocab_size, 2);
    trex::eval::score_options o;
    o.chunk = 16;
    const trex::eval::score_result r = trex::eval::score_sequences(model, {ids}, o);
    EXPECT_EQ(r.tokens, 39);
    EXPECT_EQ(r.sequences[0].chunks, 3);
    double want = 0;
    for (size_t a = 0; a + 1 < ids.size(); a += 16) {
        const size_t b = std::min(ids.size(), a + 17);  // the chunk and the token its last position predicts
        const std::vector<int32_t> piece(ids.begin() + (long)a, ids.begin() + (long)b);
        want += lm_loss(model, piece) * (double)(piece.size() - 1);
    }
    EXPECT_NEAR(r.nll, want, 1e-5 * want);
}

TEST_F(ScoreMicroModel, DumpedLogitsAreTheForwardsAndNameTheirTokens) {
    const std::string dir = trex::test::scratch_dir("score_dump");
    const std::vector<int32_t> a = random_ids(12, cfg.vocab_size, 3), b = random_ids(9, cfg.vocab_size, 4);
    trex::eval::score_options o;
    o.dump_logits = dir + "/logits.safetensors";
    trex::eval::score_sequences(model, {a, b}, o);
    lm_loss(model, b);  // the same forward as the dump's last
    const trex::safetensors_file f(o.dump_logits);
    EXPECT_TRUE(f.has("logits.0.0"));
    EXPECT_EQ(f.tensor("logits.1.0").shape, (std::vector<int64_t>{9, cfg.vocab_size}));
    EXPECT_EQ(f.to_i32("input_ids.1.0"), b);
    trex::step_options so;
    const std::vector<float> dumped = f.to_f32("logits.1.0");
    // the model's logits of the last forward (kept by a forward with keep_logits)
    std::vector<int32_t> labels(b.size(), -1);
    trex::batch_view v;
    v.B = 1, v.S = (int64_t)b.size(), v.input_ids = b.data(), v.labels = labels.data();
    so.backward = false, so.keep_logits = true;
    model.step(v, so);
    ASSERT_EQ(dumped.size(), model.logits().size());
    EXPECT_EQ(0, std::memcmp(dumped.data(), model.logits().data(), dumped.size() * sizeof(float)));
}

TEST_F(ScoreMicroModel, BadSequencesAreOneLineErrors) {
    using trex::test::error_of;
    trex::eval::score_options o;
    EXPECT_NE(error_of([&] {
                  trex::eval::score_sequences(model, {{1, 2, (int32_t)cfg.vocab_size}}, o);
              }).find("sequence 0, token 2: id"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  trex::eval::score_sequences(model, {{1, 2}, {5}}, o);
              }).find("sequence 1 has 1 token"),
              std::string::npos);
    o.chunk = 1;
    EXPECT_NE(error_of([&] { trex::eval::score_sequences(model, {{1, 2}}, o); }).find("--chunk"), std::string::npos);
}

TEST(ScoreTokenFile, ReadsSpacesCommasAndJsonArrays) {
    const std::string path = trex::test::scratch_dir("score_tokens") + "/t.txt";
    std::ofstream(path) << "1 2 3\n\n[4, 5,6]\n7,8\r\n";
    const auto seqs = trex::eval::read_token_file(path);
    ASSERT_EQ(seqs.size(), 3u);
    EXPECT_EQ(seqs[0], (std::vector<int32_t>{1, 2, 3}));
    EXPECT_EQ(seqs[1], (std::vector<int32_t>{4, 5, 6}));
    EXPECT_EQ(seqs[2], (std::vector<int32_t>{7, 8}));
}

TEST(ScoreTokenFile, BadFilesNameTheLine) {
    using trex::test::error_of;
    const std::string dir = trex::test::scratch_dir("score_tokens_bad");
    auto err = [&](const std::string& text) {
        const std::string path = dir + "/t.txt";
        std::ofstream(path) << text;
        return error_of([&] { trex::eval::read_token_file(path); });
    };
    EXPECT_NE(err("1 2\n3 x 4\n").find("t.txt:2: 'x' is not a token id"), std::string::npos) << err("1 2\n3 x 4\n");
    EXPECT_NE(err("1 -2\n").find("t.txt:1: token id -2 is out of range"), std::string::npos) << err("1 -2\n");
    EXPECT_NE(err("[1 2\n").find("t.txt:1: a '[' without its ']'"), std::string::npos);
    EXPECT_NE(err("\n\n").find("no token ids"), std::string::npos);
    EXPECT_NE(error_of([&] { trex::eval::read_token_file(dir + "/absent.txt"); }).find("cannot open"),
              std::string::npos);
}
