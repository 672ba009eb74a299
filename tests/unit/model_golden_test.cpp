// Whole-model parity with the PyTorch reference (tests/reference/dsv4_ref.py, itself checked against HF
// transformers' DeepseekV4ForCausalLM): logits, every loss, the indexer's top-k sets, every block's output and
// every parameter's gradient, from the committed golden fixtures (tests/golden, docs/model.md §6).
// When TREX_TINY_FIXTURES names a directory of fixtures made at test time (v4-tiny; needs torch), those run too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "support/test_support.hpp"
#include "trex/io/safetensors.hpp"
#include "trex/model/model.hpp"

namespace {

constexpr double kTol = 1e-4;  // relative error ||a − b|| / ||b|| per tensor (the bar)

struct fixture_run {
    std::vector<std::string> failures;
    double worst_grad = 0;
    std::string worst_grad_name;
};

void check_fixture(const std::string& path) {
    SCOPED_TRACE(path);
    trex::safetensors_file f(path);
    const auto& meta = f.metadata();
    auto cfg = trex::config_from_json(nlohmann::json::parse(meta.at("config")), path + ":config");
    const bool dense = meta.at("mode") == "dense";
    trex::dsv4_model model(cfg);
    auto& P = model.params();
    for (size_t i = 0; i < P.specs.size(); i++) {
        const auto& s = P.specs[i];
        const std::string key = "w." + s.name;
        ASSERT_TRUE(f.has(key)) << "fixture lacks " << key;
        ASSERT_EQ(f.tensor(key).shape, s.shape) << key;
        if (s.role == trex::tensor_role::hash_table) {
            auto v = f.to_i32(key);
            std::copy(v.begin(), v.end(), P.tables.data() + P.offset[i]);
        } else {
            auto v = f.to_f32(key);
            std::copy(v.begin(), v.end(), P.w((int)i));
        }
    }
    auto ids = f.to_i32("in.input_ids"), labels = f.to_i32("in.labels"), mids = f.to_i32("in.mtp_input_ids"),
         mlabels = f.to_i32("in.mtp_labels"), starts = f.to_i32("in.doc_start");
    const auto shape = f.tensor("in.input_ids").shape;
    trex::batch_view b;
    b.B = shape[0];
    b.S = shape[1];
    b.input_ids = ids.data();
    b.labels = labels.data();
    b.mtp_input_ids = mids.data();
    b.mtp_labels = mlabels.data();
    b.doc_start = starts.data();
    trex::step_options o;
    o.lambda_mtp = std::stod(meta.at("lambda_mtp"));
    o.alpha_bal = std::stod(meta.at("alpha_bal"));
    o.lambda_idx = std::stod(meta.at("lambda_idx"));
    o.dense_csa = dense;
    o.keep_logits = true;
    P.zero_grads();
    auto r = model.step(b, o);

    // losses
    auto L = f.to_f64("out.losses");
    const double got[5] = {r.loss, r.lm, r.mtp, r.bal, r.idx};
    const char* names[5] = {"total", "lm", "mtp", "bal", "idx"};
    for (int k = 0; k < 5; k++)
        EXPECT_NEAR(got[k], L[k], kTol * std::max(std::fabs(L[k]), 1e-3)) << "loss " << names[k];
    // logits
    auto logits = f.to_f64("out.logits");
    EXPECT_LT(trex::test::rel_error(model.logits().data(), logits.data(), (long)logits.size()), kTol) << "logits";
    auto mlog = f.to_f64("out.mtp_logits");
    EXPECT_LT(trex::test::rel_error(model.mtp_logits().data(), mlog.data(), (long)mlog.size()), kTol) << "mtp logits";
    // top-k sets of the CSA layers
    for (int l = 0; l < cfg.n_layers(); l++) {
        const std::string key = "out.topk." + std::to_string(l);
        if (!f.has(key)) continue;
        auto want = f.to_i32(key);
        const int64_t kf = f.tensor(key).shape[2];
        int64_t kw = 0;
        const auto& sel = model.csa_selection(l, &kw);
        for (int64_t t = 0; t < b.B * b.S; t++) {
            std::set<int32_t> a, e;
            for (int64_t j = 0; j < kw; j++)
                if (sel[t * kw + j] >= 0) a.insert(sel[t * kw + j]);
            for (int64_t j = 0; j < kf; j++)
                if (want[t * kf + j] >= 0) e.insert(want[t * kf + j]);
            ASSERT_EQ(a, e) << "layer " << l << " query " << t << " selects different compressed entries";
        }
    }
    // block outputs
    for (int l = 0; l <= cfg.n_layers(); l++) {
        const std::string key = "act." + std::to_string(l);
        if (!f.has(key)) continue;
        auto want = f.to_f64(key);
        EXPECT_LT(trex::test::rel_error(model.block_output(l), want.data(), (long)want.size()), kTol) << key;
    }
    // gradients
    int checked = 0;
    double worst = 0;
    std::string worst_name;
    for (size_t i = 0; i < P.specs.size(); i++) {
        const auto& s = P.specs[i];
        if (s.role != trex::tensor_role::weight) continue;
        const std::string key = "g." + s.name;
        ASSERT_TRUE(f.has(key)) << "fixture lacks " << key;
        auto want = f.to_f64(key);
        const double err = trex::test::rel_error(P.g((int)i), want.data(), (long)want.size());
        EXPECT_LT(err, kTol) << "gradient of " << s.name;
        if (err > worst) {
            worst = err;
            worst_name = s.name;
        }
        checked++;
    }
    EXPECT_GT(checked, 50);
    std::printf(
        "[golden] %s: losses total %.8f lm %.8f mtp %.8f bal %.8f idx %.8f (fixture %.8f); %d gradients, "
        "worst relative error %.2e (%s)\n",
        path.c_str(), r.loss, r.lm, r.mtp, r.bal, r.idx, L[0], checked, worst, worst_name.c_str());
}

}  // namespace

TEST(ModelGolden, MicroDense) {
    check_fixture(trex::test::source_path("tests/golden/micro_dense.safetensors"));
}
TEST(ModelGolden, MicroTopkPacked) {
    check_fixture(trex::test::source_path("tests/golden/micro_topk.safetensors"));
}

// The release's numerics (tests/golden/v4-micro-release-numerics.json: v4-micro with head_dim 80, "qat": "release",
// "indexer_ties": "torch"): the reference's straight-through fake quantisation, Hadamard rotation and torch.topk
// selection against the engine's, forward and gradients.
TEST(ModelGolden, MicroReleaseNumerics) {
    check_fixture(trex::test::source_path("tests/golden/micro_qat.safetensors"));
}

// v4-tiny fixtures generated at test time by tests/reference/make_fixtures.py (CTest runs it when torch is there).
TEST(ModelGolden, TinyFromPyTorch) {
    const char* dir = std::getenv("TREX_TINY_FIXTURES");
    if (!dir) GTEST_SKIP() << "TREX_TINY_FIXTURES not set (CTest's model_golden_tiny sets it when .venv has torch)";
    ASSERT_TRUE(std::filesystem::exists(dir)) << "TREX_TINY_FIXTURES=" << dir << " does not exist";
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ".safetensors") {
            check_fixture(e.path().string());
            n++;
        }
    EXPECT_GT(n, 0);
}
