// Token sampling (src/trex/infer/sampling.hpp): greedy is the argmax with ties to the lower id; draws follow
// softmax(logits / T) cut to top-k and top-p (frequencies over many draws against the exact probabilities); a seed
// reproduces its draws; log-probabilities are the model's log softmax; bad parameters are errors.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "trex/base/error.hpp"
#include "trex/infer/sampling.hpp"

namespace {

using trex::infer::sample_token;
using trex::infer::sampling_params;
using trex::infer::token_rng;

// logits whose softmax is {0.5, 0.3, 0.15, 0.05}
std::vector<float> four() {
    return {(float)std::log(0.5), (float)std::log(0.3), (float)std::log(0.15), (float)std::log(0.05)};
}

std::map<int32_t, double> frequencies(const std::vector<float>& logits, const sampling_params& p, int n) {
    token_rng rng(p.seed);
    std::map<int32_t, double> f;
    for (int i = 0; i < n; i++) f[sample_token(logits.data(), (int64_t)logits.size(), p, rng).id] += 1.0 / n;
    return f;
}

TEST(InferSampling, GreedyIsTheArgmaxWithTiesToTheLowerId) {
    const std::vector<float> l = {0.1f, 2.0f, -1.0f, 2.0f};
    token_rng rng(1);
    EXPECT_EQ(sample_token(l.data(), 4, sampling_params{}, rng).id, 1);
}

TEST(InferSampling, DrawsFollowTheDistribution) {
    sampling_params p;
    p.temperature = 1.0;
    p.seed = 7;
    const auto f = frequencies(four(), p, 40000);
    const double want[] = {0.5, 0.3, 0.15, 0.05};
    for (int i = 0; i < 4; i++) EXPECT_NEAR(f.count(i) ? f.at(i) : 0.0, want[i], 0.01) << "token " << i;
}

TEST(InferSampling, TemperatureSharpensAndTopKTopPCut) {
    sampling_params p;
    p.temperature = 0.5;  // probabilities ∝ p²: 0.25, 0.09, 0.0225, 0.0025 over 0.365
    p.seed = 3;
    auto f = frequencies(four(), p, 40000);
    EXPECT_NEAR(f[0], 0.25 / 0.365, 0.01);
    EXPECT_NEAR(f[1], 0.09 / 0.365, 0.01);
    p.temperature = 1.0;
    p.top_k = 2;  // {0.5, 0.3} renormalised
    f = frequencies(four(), p, 40000);
    EXPECT_NEAR(f[0], 0.625, 0.01);
    EXPECT_EQ(f.count(2) + f.count(3), 0u);
    p.top_k = 0;
    p.top_p = 0.5;  // the first token reaches 0.5 alone
    f = frequencies(four(), p, 2000);
    EXPECT_EQ(f.size(), 1u);
    EXPECT_EQ(f.begin()->first, 0);
    p.top_p = 0.85;  // 0.5 + 0.3 < 0.85 ≤ 0.95: three tokens
    f = frequencies(four(), p, 40000);
    EXPECT_NEAR(f[2], 0.15 / 0.95, 0.01);
    EXPECT_EQ(f.count(3), 0u);
}

TEST(InferSampling, TopPOverALargeVocabularyKeepsTheSmallestPrefix) {
    // 3000 tokens, p_i ∝ exp(−0.004·i): the top-p cut lies past the first sorted blocks the sampler tries
    const int64_t V = 3000;
    std::vector<float> l((size_t)V);
    for (int64_t i = 0; i < V; i++) l[(size_t)(V - 1 - i)] = (float)(-0.004 * (double)i);  // highest logit last
    std::vector<double> w((size_t)V);
    double z = 0;
    for (int64_t i = 0; i < V; i++) z += w[(size_t)i] = std::exp(-0.004 * (double)i);
    int64_t keep = 0;
    double acc = 0;
    while (acc < 0.9 * z) acc += w[(size_t)keep++];
    ASSERT_GT(keep, 512);  // the sampler's first two prefixes (64, 512) are too short
    sampling_params p;
    p.temperature = 1.0;
    p.top_p = 0.9;
    p.seed = 5;
    const auto f = frequencies(l, p, 4000);
    double in_first = 0;  // the mass of the 100 most likely tokens, renormalised to the kept ones
    for (int64_t i = 0; i < 100; i++) in_first += w[(size_t)i] / acc;
    double got = 0;
    for (const auto& [id, x] : f) {
        EXPECT_GE(id, V - keep) << "token " << id << " is past the top-p cut";
        if (id >= V - 100) got += x;
    }
    EXPECT_NEAR(got, in_first, 0.025);  // 5 standard deviations of 4000 draws
}

TEST(InferSampling, ASeedReproducesItsDraws) {
    sampling_params p;
    p.temperature = 1.0;
    p.seed = 99;
    std::vector<float> l(1000);
    for (size_t i = 0; i < l.size(); i++) l[i] = (float)std::sin((double)i);
    token_rng a(p.seed), b(p.seed), c(p.seed + 1);
    std::vector<int32_t> x, y, z;
    for (int i = 0; i < 50; i++) {
        x.push_back(sample_token(l.data(), 1000, p, a).id);
        y.push_back(sample_token(l.data(), 1000, p, b).id);
        z.push_back(sample_token(l.data(), 1000, p, c).id);
    }
    EXPECT_EQ(x, y);
    EXPECT_NE(x, z);
}

TEST(InferSampling, LogProbabilitiesAreTheModelsLogSoftmax) {
    sampling_params p;
    p.top_logprobs = 3;
    p.temperature = 0.3;  // does not change the reported log-probabilities
    token_rng rng(0);
    const std::vector<float> l = four();
    const trex::infer::token_choice c = sample_token(l.data(), 4, p, rng);
    EXPECT_NEAR(c.logprob, l[(size_t)c.id], 1e-6);
    ASSERT_EQ(c.top.size(), 3u);
    EXPECT_EQ(c.top[0].first, 0);
    EXPECT_NEAR(c.top[0].second, std::log(0.5), 1e-6);
    EXPECT_EQ(c.top[2].first, 2);
    EXPECT_NEAR(trex::infer::token_logprob(l.data(), 4, 3), std::log(0.05), 1e-6);
}

TEST(InferSampling, BadParametersAreErrors) {
    sampling_params p;
    p.temperature = -1;
    EXPECT_THROW(trex::infer::validate(p), trex::error);
    p = {};
    p.top_p = 0;
    EXPECT_THROW(trex::infer::validate(p), trex::error);
    p = {};
    p.top_k = -2;
    EXPECT_THROW(trex::infer::validate(p), trex::error);
    p = {};
    p.top_logprobs = 21;
    EXPECT_THROW(trex::infer::validate(p), trex::error);
    EXPECT_NO_THROW(trex::infer::validate(sampling_params{}));
}

}  // namespace
