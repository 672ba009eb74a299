// The optimizer recipe: Muon and AdamW steps against the PyTorch reference (tests/reference/optim_ref.py:
// Muon written from spec §3 in float64, AdamW = torch.optim.AdamW), parameter groups, schedule, clipping.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "support/test_support.hpp"
#include "trex/base/rng.hpp"
#include "trex/io/safetensors.hpp"
#include "trex/optim/optimizer.hpp"

namespace {

trex::safetensors_file fixture() {
    return trex::safetensors_file(trex::test::source_path("tests/golden/optim_steps.safetensors"));
}

}  // namespace

TEST(Optim, MuonMatchesPyTorchReference) {
    auto f = fixture();
    const auto mu = nlohmann::json::parse(f.metadata().at("muon"));
    const auto lrs = nlohmann::json::parse(f.metadata().at("lrs")).get<std::vector<double>>();
    trex::optim_config cfg;
    cfg.muon_momentum = mu.at("momentum");
    cfg.muon_nesterov = mu.at("nesterov");
    cfg.muon_update_rms = mu.at("update_rms");
    cfg.weight_decay = mu.at("weight_decay");
    const int cases = std::stoi(f.metadata().at("muon_cases"));
    for (int c = 0; c < cases; c++) {
        const std::string p = "muon." + std::to_string(c) + ".";
        auto W = f.to_f32(p + "w0");
        const auto shape = f.tensor(p + "w0").shape;
        std::vector<float> M(W.size(), 0.0f);
        for (size_t k = 0; k < lrs.size(); k++) {
            const auto G = f.to_f32(p + "g" + std::to_string(k));
            trex::muon_step_matrix(W.data(), M.data(), G.data(), shape[0], shape[1], lrs[k], cfg);
            const auto Wr = f.to_f64(p + "w" + std::to_string(k + 1));
            const auto Mr = f.to_f64(p + "m" + std::to_string(k + 1));
            EXPECT_LT(trex::test::rel_error(W.data(), Wr.data(), (long)W.size()), 2e-6)
                << "muon case " << c << " [" << shape[0] << "x" << shape[1] << "] step " << k + 1;
            EXPECT_LT(trex::test::rel_error(M.data(), Mr.data(), (long)M.size()), 1e-6) << "momentum " << c;
        }
    }
}

TEST(Optim, AdamWMatchesTorchOptimAdamW) {
    auto f = fixture();
    const auto ad = nlohmann::json::parse(f.metadata().at("adamw"));
    const auto lrs = nlohmann::json::parse(f.metadata().at("lrs")).get<std::vector<double>>();
    trex::optim_config cfg;
    cfg.beta1 = ad.at("betas")[0];
    cfg.beta2 = ad.at("betas")[1];
    cfg.eps = ad.at("eps");
    cfg.weight_decay = ad.at("weight_decay");
    const int cases = std::stoi(f.metadata().at("adamw_cases"));
    for (int c = 0; c < cases; c++) {
        auto W = f.to_f32(fmt::format("adamw.{}.w0", c));
        std::vector<float> m(W.size(), 0.0f), v(W.size(), 0.0f);
        for (size_t k = 0; k < lrs.size(); k++) {
            const auto G = f.to_f32(fmt::format("adamw.{}.g{}", c, k));
            trex::adamw_step_tensor(W.data(), m.data(), v.data(), G.data(), (int64_t)W.size(), lrs[k], (int64_t)k + 1,
                                    cfg);
            const auto Wr = f.to_f64(fmt::format("adamw.{}.w{}", c, k + 1));
            EXPECT_LT(trex::test::rel_error(W.data(), Wr.data(), (long)W.size()), 1e-6) << "adamw case " << c;
        }
    }
}

TEST(Optim, NewtonSchulzOrthogonalises) {
    // The hybrid iteration drives the singular values to ~1: X Xᵀ ≈ I for a wide matrix.
    const int64_t n = 16, m = 40;
    std::vector<float> X(n * m);
    for (int64_t i = 0; i < n * m; i++) X[i] = (float)trex::normal01(9, 1, (uint64_t)i);  // well conditioned
    trex::newton_schulz(X.data(), n, m, 8, 2);
    double worst = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t k = 0; k < m; k++) s += (double)X[i * m + k] * X[j * m + k];
            worst = std::max(worst, std::fabs(s - (i == j ? 1.0 : 0.0)));
        }
    EXPECT_LT(worst, 0.05);  // the stabilising steps (2, −1.5, 0.5) pull the singular values to ~1
}

// The fast Newton–Schulz (symmetric products by cpu::syrk, X ← (a·I + b·A + c·A²)·X) against the iteration exactly
// as spec §3 writes it, X ← a·X + (b·A + c·A²)·X with A = X·Xᵀ, in double — on matrices large enough that syrk
// recurses (n > 64), wide, tall (transposed internally) and square.
TEST(Optim, NewtonSchulzMatchesTheSpecIterationInDouble) {
    const int64_t shapes[][2] = {{150, 300}, {300, 150}, {200, 200}, {16, 40}};
    uint64_t seed = 30;
    for (const auto& sh : shapes) {
        const int64_t rows = sh[0], cols = sh[1];
        std::vector<float> X(rows * cols);
        for (int64_t i = 0; i < rows * cols; i++) X[i] = (float)trex::normal01(seed, 1, (uint64_t)i);
        seed++;
        // reference on Y [n, m] = X or Xᵀ, n ≤ m
        const bool tr = rows > cols;
        const int64_t n = tr ? cols : rows, m = tr ? rows : cols;
        std::vector<double> Y(n * m), A(n * n), A2(n * n), Z(n * m);
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) (tr ? Y[j * m + i] : Y[i * m + j]) = X[i * cols + j];
        double ss = 0;
        for (double v : Y) ss += v * v;
        for (double& v : Y) v /= std::sqrt(ss) + 1e-7;
        for (int k = 0; k < 10; k++) {
            const double a = k < 8 ? 3.4445 : 2.0, b = k < 8 ? -4.7750 : -1.5, c = k < 8 ? 2.0315 : 0.5;
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < n; j++) {
                    double s = 0;
                    for (int64_t q = 0; q < m; q++) s += Y[i * m + q] * Y[j * m + q];
                    A[i * n + j] = s;
                }
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < n; j++) {
                    double s = 0;
                    for (int64_t q = 0; q < n; q++) s += A[i * n + q] * A[q * n + j];
                    A2[i * n + j] = b * A[i * n + j] + c * s;
                }
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < m; j++) {
                    double s = 0;
                    for (int64_t q = 0; q < n; q++) s += A2[i * n + q] * Y[q * m + j];
                    Z[i * m + j] = a * Y[i * m + j] + s;
                }
            Y.swap(Z);
        }
        std::vector<double> ref(rows * cols);
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) ref[i * cols + j] = tr ? Y[j * m + i] : Y[i * m + j];
        trex::newton_schulz(X.data(), rows, cols, 8, 2);
        EXPECT_LT(trex::test::rel_error(X.data(), ref.data(), (long)X.size()), 1e-5) << rows << "x" << cols;
    }
}

TEST(Optim, EveryParameterLandsInItsGroup) {
    auto cfg = trex::load_config(trex::test::source_path("configs/v4-tiny.json"));
    trex::param_store p(cfg);
    trex::optimizer opt(p, trex::optim_config{});
    std::set<int> muon_tensors;
    int64_t wo_a = 0;
    for (const auto& mm : opt.muon_matrices()) muon_tensors.insert(mm.tensor);
    for (size_t i = 0; i < p.specs.size(); i++) {
        const auto& s = p.specs[i];
        const bool is_ape = s.name.size() > 4 && s.name.compare(s.name.size() - 4, 4, ".ape") == 0;
        const bool adam_name = s.name == "embed.weight" || s.name == "head.weight" || s.shape.size() == 1 || is_ape;
        if (s.role != trex::tensor_role::weight) {
            EXPECT_FALSE(opt.uses_muon((int)i)) << s.name;
            continue;
        }
        EXPECT_EQ(opt.uses_muon((int)i), !adam_name) << s.name;
        EXPECT_EQ(muon_tensors.count((int)i) > 0, !adam_name) << s.name;
        if (s.name.find("attn.wo_a.weight") != std::string::npos) wo_a++;
    }
    // wo_a splits into o_groups matrices of [o_lora_rank, H·c/g]
    EXPECT_EQ((int64_t)opt.muon_matrices().size(), (int64_t)muon_tensors.size() + wo_a * (cfg.o_groups - 1));
    for (const auto& mm : opt.muon_matrices())
        if (p.specs[mm.tensor].name.find("attn.wo_a.weight") != std::string::npos) {
            EXPECT_EQ(mm.rows, cfg.o_lora_rank);
            EXPECT_EQ(mm.cols, (int64_t)cfg.num_attention_heads * cfg.head_dim / cfg.o_groups);
        }
    // pure AdamW: no Muon matrix at all
    trex::optim_config a;
    a.kind = "adamw";
    trex::optimizer opt2(p, a);
    EXPECT_TRUE(opt2.muon_matrices().empty());
}

TEST(Optim, ScheduleWarmupConstantCosine) {
    trex::lr_schedule s;
    s.peak = 1e-3;
    s.min_lr = 1e-4;
    s.warmup = 10;
    s.decay_start = 50;
    s.total = 100;
    EXPECT_DOUBLE_EQ(s.at(0), 1e-4);
    EXPECT_DOUBLE_EQ(s.at(9), 1e-3);
    EXPECT_DOUBLE_EQ(s.at(30), 1e-3);
    EXPECT_DOUBLE_EQ(s.at(50), 1e-3);
    EXPECT_NEAR(s.at(75), 0.5 * (1e-3 + 1e-4), 1e-12);
    EXPECT_DOUBLE_EQ(s.at(100), 1e-4);
    EXPECT_DOUBLE_EQ(s.at(1000), 1e-4);
}

TEST(Optim, GlobalNormClipping) {
    auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    trex::param_store p(cfg);
    p.init(1);
    double sq = 0;
    for (size_t i = 0; i < p.specs.size(); i++) {
        if (p.specs[i].role != trex::tensor_role::weight) continue;
        float* g = p.g((int)i);
        for (int64_t k = 0; k < p.specs[i].numel(); k++) {
            g[k] = 0.01f * (float)((k % 7) - 3);
            sq += (double)g[k] * g[k];
        }
    }
    trex::optim_config oc;
    oc.clip_grad_norm = 0.5;
    trex::optimizer opt(p, oc);
    EXPECT_NEAR(opt.grad_norm(), std::sqrt(sq), 1e-6 * std::sqrt(sq));
    auto st = opt.step(1e-3);
    EXPECT_NEAR(st.grad_norm, std::sqrt(sq), 1e-6 * std::sqrt(sq));
    EXPECT_NEAR(st.clip_scale * st.grad_norm, 0.5, 1e-5);
    EXPECT_NEAR(opt.grad_norm(), 0.5, 1e-4);  // the gradients were scaled in place
}
