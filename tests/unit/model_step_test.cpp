// Whole-model properties that need no fixture: finite losses, determinism, recompute == no recompute.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/model/model.hpp"
#include "trex/train/synthetic_batch.hpp"

namespace {

trex::synthetic_batch make_batch(int64_t B, int64_t S, int V, uint32_t seed) {
    trex::synthetic_batch_options o;
    o.packed = true;  // row 1: documents of 3, 20 and the rest
    o.masked_fraction = 0.1;
    return trex::make_synthetic_batch(B, S, V, seed, o);
}

std::vector<float> grads_copy(trex::dsv4_model& m) {
    auto& p = m.params();
    return std::vector<float>(p.grads.data(), p.grads.data() + p.n_floats);
}

}  // namespace

TEST(ModelStep, FiniteDeterministicAndRecomputeEqual) {
    auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    trex::dsv4_model model(cfg);
    model.params().init(1234);
    auto batch = make_batch(2, 64, cfg.vocab_size, 7);
    trex::step_options opts;
    opts.alpha_bal = 0.01;
    model.params().zero_grads();
    auto r1 = model.step(batch.view(), opts);
    EXPECT_TRUE(std::isfinite(r1.loss));
    EXPECT_GT(r1.lm, 0.0);
    EXPECT_GT(r1.mtp, 0.0);
    EXPECT_GT(r1.idx, 0.0);
    EXPECT_GT(r1.bal, 0.0);
    auto g1 = grads_copy(model);
    for (float v : g1) ASSERT_TRUE(std::isfinite(v));

    model.params().zero_grads();
    auto r2 = model.step(batch.view(), opts);
    auto g2 = grads_copy(model);
    EXPECT_EQ(r1.loss, r2.loss);
    EXPECT_EQ(0, std::memcmp(g1.data(), g2.data(), g1.size() * sizeof(float))) << "gradients differ run to run";

    opts.recompute = true;
    model.params().zero_grads();
    auto r3 = model.step(batch.view(), opts);
    auto g3 = grads_copy(model);
    EXPECT_EQ(r1.loss, r3.loss);
    EXPECT_EQ(0, std::memcmp(g1.data(), g3.data(), g1.size() * sizeof(float))) << "recompute changed gradients";
}

TEST(ModelInit, FollowsTheContract) {
    // docs/model.md §5: matrices N(0, 0.006), norms 1, sink/ape/base 0, scales 0.01, bias 0, tid2eid K distinct experts
    auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    trex::param_store p(cfg);
    p.init(42);
    double sum = 0, sq = 0;
    int64_t n = 0;
    for (size_t i = 0; i < p.specs.size(); i++) {
        const auto& s = p.specs[i];
        if (s.role == trex::tensor_role::hash_table) {
            const int K = cfg.num_experts_per_tok;
            const int32_t* t = p.tables.data() + p.offset[i];
            for (int64_t v = 0; v < s.shape[0]; v++) {
                std::set<int32_t> experts(t + v * K, t + (v + 1) * K);
                ASSERT_EQ((int)experts.size(), K) << s.name << " row " << v;
                for (int32_t e : experts) ASSERT_TRUE(e >= 0 && e < cfg.n_routed_experts);
            }
            continue;
        }
        const float* w = p.w((int)i);
        const auto ends = [&](const char* suf) {
            const std::string f(suf);
            return s.name.size() >= f.size() && s.name.compare(s.name.size() - f.size(), f.size(), f) == 0;
        };
        if (s.role == trex::tensor_role::bias_buffer || ends("attn_sink") || ends(".ape") || ends("_base")) {
            for (int64_t k = 0; k < s.numel(); k++) ASSERT_EQ(w[k], 0.0f) << s.name;
        } else if (ends("_scale")) {
            for (int64_t k = 0; k < s.numel(); k++) ASSERT_EQ(w[k], 0.01f) << s.name;
        } else if (s.shape.size() == 1) {
            for (int64_t k = 0; k < s.numel(); k++) ASSERT_EQ(w[k], 1.0f) << s.name;
        } else {
            for (int64_t k = 0; k < s.numel(); k++) {
                sum += w[k];
                sq += (double)w[k] * w[k];
            }
            n += s.numel();
        }
    }
    EXPECT_NEAR(sum / n, 0.0, 1e-4);
    EXPECT_NEAR(std::sqrt(sq / n), 0.006, 1e-4);
    // values depend only on (seed, name): a second store gives the same bits
    trex::param_store q(cfg);
    q.init(42);
    EXPECT_EQ(0, std::memcmp(p.weights.data(), q.weights.data(), sizeof(float) * p.n_floats));
    trex::param_store r(cfg);
    r.init(43);
    EXPECT_NE(0, std::memcmp(p.weights.data(), r.weights.data(), sizeof(float) * p.n_floats));
}

TEST(ModelBias, AuxLossFreeUpdate) {
    auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    trex::dsv4_model model(cfg);
    model.params().init(3);
    trex::step_result r;
    const int E = cfg.n_routed_experts, L = cfg.n_layers();
    r.expert_load.assign(L + 1, std::vector<int64_t>(E, 0));
    for (int l = 0; l <= L; l++) r.expert_load[l] = {10, 2, 6, 6};  // mean 6: over, under, equal, equal
    const int updated = model.update_expert_biases(r, 0.001);
    EXPECT_EQ(updated, L + 1 - cfg.num_hash_layers);  // hash layers have no bias
    for (int l = cfg.num_hash_layers; l <= L; l++) {
        const std::string name = l < L ? "layers." + std::to_string(l) + ".ffn.gate.bias" : "mtp.0.ffn.gate.bias";
        const float* b = model.params().w(name);
        EXPECT_FLOAT_EQ(b[0], -0.001f) << name;
        EXPECT_FLOAT_EQ(b[1], 0.001f) << name;
        EXPECT_EQ(b[2], 0.0f) << name;
        EXPECT_EQ(b[3], 0.0f) << name;
    }
}

TEST(ModelStep, BadTokenIdsAreErrors) {
    auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    trex::dsv4_model model(cfg);
    model.params().init(1);
    auto batch = make_batch(1, 16, cfg.vocab_size, 3);
    batch.ids[5] = cfg.vocab_size;  // out of range
    trex::step_options o;
    try {
        model.step(batch.view(), o);
        FAIL() << "expected an error";
    } catch (const trex::error& e) {
        EXPECT_NE(std::string(e.what()).find("input_ids[5]"), std::string::npos) << e.what();
    }
}

// What the forward keeps for the backward grows linearly with the tokens, and recompute keeps one block's activations
// instead of every block's (the block inputs, heads and logits stay): the memory side of step_options::recompute.
// The vocabulary head runs by chunks of tokens (logits, loss and backward, chunk by chunk): any chunk size gives the
// one-chunk results up to rounding — losses, logits, every gradient — and without a backward no gradient at all.
TEST(ModelStep, ChunkedVocabHeadMatchesOneChunk) {
    auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    trex::dsv4_model model(cfg);
    model.params().init(77);
    auto batch = make_batch(2, 64, cfg.vocab_size, 11);
    auto run = [&](int64_t chunk, std::vector<float>* logits, std::vector<float>* mtp_logits) {
        trex::step_options opts;
        opts.head_chunk = chunk;
        opts.keep_logits = true;
        model.params().zero_grads();
        auto r = model.step(batch.view(), opts);
        *logits = model.logits();
        *mtp_logits = model.mtp_logits();
        return r;
    };
    std::vector<float> l1, m1, l2, m2;
    const auto r1 = run(128, &l1, &m1);  // one chunk: 2 x 64 tokens
    const auto g1 = grads_copy(model);
    for (int64_t chunk : {1, 7, 64}) {
        SCOPED_TRACE("chunk " + std::to_string(chunk));
        const auto r2 = run(chunk, &l2, &m2);
        EXPECT_EQ(r1.n_lm, r2.n_lm);
        EXPECT_EQ(r1.n_mtp, r2.n_mtp);
        EXPECT_NEAR(r2.lm, r1.lm, 1e-6 * r1.lm);
        EXPECT_NEAR(r2.mtp, r1.mtp, 1e-6 * r1.mtp);
        ASSERT_EQ(l1.size(), (size_t)128 * cfg.vocab_size);
        ASSERT_EQ(l2.size(), l1.size());
        ASSERT_EQ(m2.size(), m1.size());
        double max_l = 0, max_g = 0, scale_g = 0;
        for (size_t i = 0; i < l1.size(); i++)
            max_l = std::max({max_l, std::fabs((double)l2[i] - l1[i]), std::fabs((double)m2[i] - m1[i])});
        const auto g2 = grads_copy(model);
        for (size_t i = 0; i < g1.size(); i++) {
            max_g = std::max(max_g, std::fabs((double)g2[i] - g1[i]));
            scale_g = std::max(scale_g, std::fabs((double)g1[i]));
        }
        EXPECT_LT(max_l, 1e-5) << "logits";
        EXPECT_LT(max_g, 1e-5 * scale_g) << "gradients (largest " << scale_g << ")";
    }
    // forward only: losses, no gradient
    trex::step_options fwd;
    fwd.backward = false;
    fwd.head_chunk = 7;
    model.params().zero_grads();
    const auto r3 = model.step(batch.view(), fwd);
    EXPECT_NEAR(r3.lm, r1.lm, 1e-6 * r1.lm);
    for (float g : grads_copy(model)) ASSERT_EQ(g, 0.0f) << "a forward-only step added a gradient";
}

TEST(ModelStep, ActivationMemoryIsLinearInTokensAndRecomputeKeepsOneBlock) {
    auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    const int blocks = cfg.n_layers() + (cfg.has_mtp() ? 1 : 0);
    ASSERT_GE(blocks, 3);
    auto kept = [&](int64_t B, bool recompute) {
        trex::dsv4_model model(cfg);
        model.params().init(5);
        EXPECT_EQ(model.activation_bytes(), 0u);
        auto batch = make_batch(B, 64, cfg.vocab_size, 9);
        trex::step_options opts;
        opts.recompute = recompute;
        model.step(batch.view(), opts);
        EXPECT_GT(model.workspace_bytes(), 0u);
        return (double)model.activation_bytes();
    };
    const double a2 = kept(2, false), a4 = kept(4, false), r2 = kept(2, true), r4 = kept(4, true);
    EXPECT_NEAR(a4 / a2, 2.0, 0.2) << a2 << " " << a4;
    EXPECT_NEAR(r4 / r2, 2.0, 0.2) << r2 << " " << r4;
    // a2 = shared + Σ blocks, r2 = shared + (the largest block): the saving is at least (blocks − 1)/blocks of the
    // blocks' part, which is most of the total here
    EXPECT_LT(r2, 0.6 * a2) << "recompute: " << r2 << " bytes vs " << a2;
    std::printf("activations kept, v4-micro, 2 x 64 tokens: %.0f bytes (%.0f per token); recompute: %.0f\n", a2,
                a2 / 128.0, r2);
}
