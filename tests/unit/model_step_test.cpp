// Whole-model properties that need no fixture: finite losses, determinism, recompute == no recompute.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "support/test_support.hpp"
#include "trex/model/model.hpp"

namespace {

struct random_batch {
    int64_t B, S;
    std::vector<int32_t> ids, labels, mtp_ids, mtp_labels, doc_start;
    trex::batch_view view() const {
        trex::batch_view v;
        v.B = B;
        v.S = S;
        v.input_ids = ids.data();
        v.labels = labels.data();
        v.mtp_input_ids = mtp_ids.data();
        v.mtp_labels = mtp_labels.data();
        v.doc_start = doc_start.data();
        return v;
    }
};

random_batch make_batch(int64_t B, int64_t S, int V, uint32_t seed) {
    std::mt19937 rng(seed);
    random_batch b{B, S};
    std::vector<int32_t> tok(B * (S + 2));
    for (auto& t : tok) t = (int32_t)(rng() % V);
    b.ids.resize(B * S);
    b.labels.resize(B * S);
    b.mtp_ids.resize(B * S);
    b.mtp_labels.resize(B * S);
    b.doc_start.assign(B * S, 0);
    for (int64_t r = 0; r < B; r++) {
        for (int64_t s = 0; s < S; s++) {
            const int32_t* row = tok.data() + r * (S + 2);
            b.ids[r * S + s] = row[s];
            b.labels[r * S + s] = (rng() % 10 == 0) ? -1 : row[s + 1];
            b.mtp_ids[r * S + s] = row[s + 1];
            b.mtp_labels[r * S + s] = s + 2 <= S ? row[s + 2] : -1;
        }
        b.doc_start[r * S] = 1;
        if (r == 1) {  // a packed row: documents of 3, 20 and the rest
            b.doc_start[r * S + 3] = 1;
            b.doc_start[r * S + 23] = 1;
        }
    }
    return b;
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
