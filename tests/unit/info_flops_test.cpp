// Training FLOPs per token: hand-computed terms on MICRO, the planner's numbers on Flash/Pro, and the CLI.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "support/test_support.hpp"
#include "trex/model/config.hpp"
#include "trex/model/counts.hpp"

using trex::test::run_command;
using trex::test::source_path;
using trex::test::trex_binary;

namespace {

trex::model_config load(const char* name) {
    return trex::load_config(source_path(std::string("configs/") + name));
}

// Indexer matrices per token (wq_b, weights_proj, compressor wkv + wgate) of all CSA layers.
double indexer_matrix_params(const trex::model_config& c) {
    int n_csa = 0;
    for (int l = 0; l < c.n_layers(); l++) n_csa += c.ratio(l) == 4;
    const double d = c.hidden_size, HI = c.index_n_heads, cI = c.index_head_dim;
    return n_csa * (c.q_lora_rank * HI * cI + d * HI + 2 * d * 2 * cI);
}

}  // namespace

// Every term by hand on MICRO (d=64, H=2, c=32, window 8, ratios [0,4,8,4 | 0], top-4, V=256) at S=16.
TEST(InfoFlops, MicroByHand) {
    auto c = load("v4-micro.json");
    trex::flops_options o;
    o.seq_len = 16;
    auto f = trex::training_flops_per_token(c, o);
    const int S = 16;
    double win = 0, hca = 0, csa_sel = 0, csa_vis = 0;
    for (int p = 0; p < S; p++) {
        win += std::min(p + 1, 8);
        hca += (p + 1) / 8;
        csa_sel += std::min(4, (p + 1) / 4);
        csa_vis += (p + 1) / 4;
    }
    win /= S, hca /= S, csa_sel /= S, csa_vis /= S;
    const double Hc = 2 * 32;
    // 4 trunk layers + MTP: window everywhere, HCA on layer 2, CSA on layers 1 and 3
    EXPECT_NEAR(f.attention, 12 * Hc * (5 * win + hca + 2 * csa_sel), 1e-6);
    EXPECT_NEAR(f.indexer_score, 2 * 6.0 * 2 * 32 * csa_vis, 1e-6);
    EXPECT_NEAR(f.head, 6.0 * 256 * 64 * 2, 1e-6);
    EXPECT_NEAR(f.indexer_mm, 4 * indexer_matrix_params(c), 1e-6);
    // matrices: per block wq_a 32x64, wq_b 64x32, wkv 32x64, wo_a 64x32, wo_b 64x64, gate 4x64, shared 3x16x64,
    // 2 experts of 4 (3x16x64 each), hc_attn_fn + hc_ffn_fn 2x24x256; compressors: CSA 2x(64x64), HCA 2x(32x64);
    // top: hc_head_fn 4x256; MTP: e_proj 64x64, h_proj 64x64 x4 streams, hc_head_fn 4x256.
    const double block =
        32 * 64 + 64 * 32 + 32 * 64 + 64 * 32 + 64 * 64 + 4 * 64 + 3 * 16 * 64 + 2 * 3 * 16 * 64 + 2 * 24 * 256;
    const double compressors = 2 * (2 * 64 * 64) + 2 * 32 * 64;
    const double n_mm = 5 * block + compressors + 4 * 256 + 64 * 64 + 4 * 64 * 64 + 4 * 256;
    EXPECT_NEAR(f.matmul, 6 * n_mm, 1e-6);
    EXPECT_NEAR(f.mhc_share, 6 * (5 * 2 * 24 * 256 + 2 * 4 * 256), 1e-6);
    EXPECT_NEAR(f.routed_share, 6 * 5 * 2 * 3 * 16 * 64, 1e-6);
    EXPECT_NEAR(f.total, f.matmul + f.head + f.attention + f.indexer_mm + f.indexer_score, 1e-6);
    // the formula names every term
    for (const char* term : {"6*N_mm", "6*V*d*(1+MTP)", "12*H*c*n_keys", "4*N_idx_mm", "6*H_I*c_I", "S=16"})
        EXPECT_NE(f.formula.find(term), std::string::npos) << term;
    // dense CSA attends to all visible entries
    o.dense_csa = true;
    auto fd = trex::training_flops_per_token(c, o);
    EXPECT_NEAR(fd.attention, 12 * Hc * (5 * win + hca + 2 * csa_vis), 1e-6);
    // without MTP: one head use, no MTP block
    o.dense_csa = false;
    o.include_mtp = false;
    auto fn = trex::training_flops_per_token(c, o);
    EXPECT_NEAR(fn.head, 6.0 * 256 * 64, 1e-6);
    EXPECT_NEAR(fn.attention, 12 * Hc * (4 * win + hca + 2 * csa_sel), 1e-6);
    EXPECT_NEAR(f.matmul - fn.matmul, 6 * (block + 64 * 64 + 4 * 64 * 64 + 4 * 256), 1e-6);
}

// shared/spec/planner_v4_flops_calc.py prints, without MTP and with dense CSA at S=4096:
//   flash 86.62 GF, pro 312.35 GF (exact position sums), and at S=65536 (positions sampled every 16th):
//   flash sparse 96.40 / dense 159.86, pro sparse 340.93 / dense 510.76.
// The planner counts the indexer projections at 6 FLOPs per parameter; we count 4 (their inputs are detached, so
// backward needs weight gradients only), so ours + 2·N_idx_mm must equal the planner. The planner also omits
// hc_head_fn (4×4d, 0.0004 GF) — below its 0.01 GF rounding. At S=65536 the planner samples positions, hence the
// looser tolerance.
TEST(InfoFlops, MatchesPlanner) {
    struct row {
        const char* cfg;
        int64_t S;
        bool dense;
        double planner_gf, tol;
    };
    for (const row& r :
         {row{"v4-flash.json", 4096, true, 86.62, 0.006}, row{"v4-pro.json", 4096, true, 312.35, 0.006},
          row{"v4-flash.json", 65536, false, 96.40, 0.05}, row{"v4-flash.json", 65536, true, 159.86, 0.1},
          row{"v4-pro.json", 65536, false, 340.93, 0.05}, row{"v4-pro.json", 65536, true, 510.76, 0.1}}) {
        SCOPED_TRACE(std::string(r.cfg) + " S=" + std::to_string(r.S));
        auto c = load(r.cfg);
        trex::flops_options o;
        o.seq_len = r.S;
        o.dense_csa = r.dense;
        o.include_mtp = false;
        auto f = trex::training_flops_per_token(c, o);
        EXPECT_NEAR((f.total + 2 * indexer_matrix_params(c)) / 1e9, r.planner_gf, r.tol);
    }
}

TEST(InfoFlops, SparseVersusDense) {
    auto c = load("v4-flash.json");
    trex::flops_options o;
    o.seq_len = 2048;  // floor(2048/4) = 512 = top-k: sparse == dense
    auto a = trex::training_flops_per_token(c, o);
    o.dense_csa = true;
    auto b = trex::training_flops_per_token(c, o);
    EXPECT_DOUBLE_EQ(a.total, b.total);
    o.seq_len = 8192;
    auto dense = trex::training_flops_per_token(c, o);
    o.dense_csa = false;
    auto sparse = trex::training_flops_per_token(c, o);
    EXPECT_LT(sparse.attention, dense.attention);
    EXPECT_DOUBLE_EQ(sparse.matmul, dense.matmul);
    EXPECT_DOUBLE_EQ(sparse.indexer_score, dense.indexer_score);  // the indexer scores every visible entry
    o.seq_len = 1;  // one token: only itself in the window, nothing compressed
    auto one = trex::training_flops_per_token(c, o);
    EXPECT_DOUBLE_EQ(one.attention, 12.0 * 64 * 512 * 44);
    EXPECT_DOUBLE_EQ(one.indexer_score, 0.0);
}

TEST(InfoCli, JsonAndTable) {
    auto r = run_command(trex_binary() + " info --config " + source_path("configs/v4-flash.json") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_NEAR(j["params"]["total"].get<double>() / 1e9, 284.33, 0.005);
    EXPECT_NEAR(j["params"]["active_excl_embedding"].get<double>() / 1e9, 13.27, 0.005);
    EXPECT_EQ(j["tensors"]["release"].get<int64_t>(), 67612);
    EXPECT_EQ(j["tensors"]["release_mtp"].get<int64_t>(), 1575);
    EXPECT_EQ(j["flops_per_token"]["seq_len"].get<int64_t>(), 4096);
    EXPECT_EQ(j["flops_per_token"]["csa"], "topk");
    EXPECT_TRUE(j["breakdown"].contains("routed_experts"));
    EXPECT_TRUE(j["mtp_breakdown"].contains("mtp_proj"));

    r = run_command(trex_binary() + " info --config " + source_path("configs/v4-pro.json") +
                    " --seq-len 65536 --dense-csa --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["flops_per_token"]["csa"], "dense");
    EXPECT_EQ(j["flops_per_token"]["seq_len"].get<int64_t>(), 65536);

    r = run_command(trex_binary() + " info --config " + source_path("configs/v4-tiny.json"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    for (const char* s : {"11.17 M", "2.22 M", "13.39 M", "routed_experts", "formula:", "release layout"})
        EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

// The closed-form key counts equal explicit sums over positions for every S (window 8, HCA m=8, CSA top-4 on MICRO),
// and a very long sequence is O(1).
TEST(InfoFlops, ClosedFormsMatchPositionSums) {
    auto c = load("v4-micro.json");
    for (int S = 1; S <= 200; S++) {
        double win = 0, hca = 0, sel = 0, vis = 0;
        for (int p = 0; p < S; p++) {
            win += std::min(p + 1, 8);
            hca += (p + 1) / 8;
            sel += std::min(4, (p + 1) / 4);
            vis += (p + 1) / 4;
        }
        trex::flops_options o;
        o.seq_len = S;
        auto f = trex::training_flops_per_token(c, o);
        const double Hc = 64;
        ASSERT_NEAR(f.attention, 12 * Hc * (5 * win + hca + 2 * sel) / S, 1e-9) << "S=" << S;
        ASSERT_NEAR(f.indexer_score, 2 * 6.0 * 64 * vis / S, 1e-9) << "S=" << S;
        o.dense_csa = true;
        auto fd = trex::training_flops_per_token(c, o);
        ASSERT_NEAR(fd.attention, 12 * Hc * (5 * win + hca + 2 * vis) / S, 1e-9) << "S=" << S;
    }
    trex::flops_options o;
    o.seq_len = (int64_t)1 << 40;
    auto f = trex::training_flops_per_token(load("v4-flash.json"), o);
    // every CSA query far from the start sees top-512, every window 128 keys, HCA mean floor(q/128) ≈ S/256 − 1/2
    const double hca = (double)o.seq_len / 256 - 0.5;
    EXPECT_NEAR(f.attention / (12.0 * 64 * 512), 44 * 128 + 20 * hca + 21 * 512, 1.0);
}
