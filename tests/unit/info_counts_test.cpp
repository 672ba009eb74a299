// Parameter and tensor counts against the spec (§1.5, §4.4, §5.1, §5.2) and against an independent closed-form
// count written from the spec's per-layer formulas.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "trex/model/config.hpp"
#include "trex/model/counts.hpp"

using trex::test::source_path;

namespace {

trex::model_config load(const char* name) {
    return trex::load_config(source_path(std::string("configs/") + name));
}

// Spec §1.5 formulas, written independently of inventory.cpp. Returns {total, active} for layer l.
struct closed_form {
    int64_t total_main = 0, active_main = 0, mtp_total = 0, mtp_active = 0, embedding = 0;
};

closed_form spec_formula(const trex::model_config& c) {
    const int64_t d = c.hidden_size, dc = c.q_lora_rank, H = c.num_attention_heads, hd = c.head_dim;
    const int64_t g = c.o_groups, dg = c.o_lora_rank, HI = c.index_n_heads, cI = c.index_head_dim;
    const int64_t E = c.n_routed_experts, K = c.num_experts_per_tok, I = c.moe_intermediate_size;
    const int64_t V = c.vocab_size, nhc = c.hc_mult;
    auto block = [&](int l, bool active) {
        const int64_t m = c.ratio(l);
        int64_t n = d * dc + dc + dc * H * hd + d * hd + hd + (H * hd / g) * (g * dg) + g * dg * d + H;
        if (m > 0) {
            const int64_t coff = m == 4 ? 2 : 1;
            n += m * coff * hd + 2 * d * coff * hd + hd;
        }
        if (m == 4) n += dc * HI * cI + d * HI + 4 * 2 * cI + 2 * d * 2 * cI + cI;
        n += 2 * ((2 + nhc) * nhc * nhc * d + (2 + nhc) * nhc + 3) + 2 * d;
        n += E * d + (c.is_hash_layer(l) && l < c.n_layers() ? 0 : E);
        n += (active ? K : E) * 3 * d * I + c.n_shared_experts * 3 * d * I;
        return n;
    };
    closed_form f;
    const int64_t top = 2 * V * d + d + nhc * nhc * d + nhc + 1;
    f.embedding = V * d;
    f.total_main = f.active_main = top;
    for (int l = 0; l < c.n_layers(); l++) {
        f.total_main += block(l, false);
        f.active_main += block(l, true);
    }
    if (c.has_mtp()) {
        const int64_t extra = 2 * d * d + 3 * d + nhc * nhc * d + nhc + 1;
        f.mtp_total = extra + block(c.n_layers(), false);
        f.mtp_active = extra + block(c.n_layers(), true);
    }
    return f;
}

}  // namespace

TEST(InfoCounts, MatchesSpecClosedFormForAllConfigs) {
    for (const char* name : {"v4-flash.json", "v4-pro.json", "v4-small.json", "v4-tiny.json", "v4-micro.json"}) {
        SCOPED_TRACE(name);
        auto cfg = load(name);
        auto pc = trex::count_params(cfg);
        auto f = spec_formula(cfg);
        EXPECT_EQ(pc.total, f.total_main);
        EXPECT_EQ(pc.active, f.active_main);
        EXPECT_EQ(pc.mtp_total, f.mtp_total);
        EXPECT_EQ(pc.mtp_active, f.mtp_active);
        EXPECT_EQ(pc.total_excl_embedding, f.total_main - f.embedding);
        EXPECT_EQ(pc.total_with_mtp, f.total_main + f.mtp_total);
        EXPECT_EQ(pc.total_with_mtp_excl_embedding, f.total_main + f.mtp_total - f.embedding);
        EXPECT_EQ(pc.active_excl_embedding, f.active_main - f.embedding);
        EXPECT_EQ(pc.active_with_mtp, f.active_main + f.mtp_active);
        EXPECT_EQ(pc.active_with_mtp_excl_embedding, f.active_main + f.mtp_active - f.embedding);
        // the breakdown sums to the totals
        int64_t st = 0, sa = 0, mt = 0, ma = 0;
        for (int c = 0; c < trex::n_param_components; c++) {
            st += pc.main_total[c];
            sa += pc.main_active[c];
            mt += pc.mtp_by_component[c];
            ma += pc.mtp_active_by_component[c];
        }
        EXPECT_EQ(st, pc.total);
        EXPECT_EQ(sa, pc.active);
        EXPECT_EQ(mt, pc.mtp_total);
        EXPECT_EQ(ma, pc.mtp_active);
        // tid2eid: vocab × K per hash layer, never counted as parameters
        EXPECT_EQ(pc.hash_table_entries, (int64_t)cfg.num_hash_layers * cfg.vocab_size * cfg.num_experts_per_tok);
    }
}

TEST(InfoCounts, FlashMatchesSpec) {
    auto pc = trex::count_params(load("v4-flash.json"));
    EXPECT_NEAR(pc.total / 1e9, 284.33, 0.005);  // spec §1.5
    EXPECT_NEAR(pc.active_excl_embedding / 1e9, 13.27, 0.005);
    EXPECT_NEAR(pc.mtp_total / 1e9, 6.61, 0.005);
    EXPECT_NEAR(pc.mtp_active / 1e9, 0.32, 0.005);
    EXPECT_EQ(pc.release_tensors, 67612);  // spec §4.4
    EXPECT_EQ(pc.release_mtp_tensors, 1575);
    EXPECT_EQ(pc.release_tensors + pc.release_mtp_tensors, 69187);
    // every inventory tensor but the FP8/FP4 ones has no scale: 34,223 + 33,389 scales
    EXPECT_EQ(pc.tensors, 34223);
    EXPECT_EQ(pc.mtp_tensors, 797);
}

TEST(InfoCounts, ProMatchesSpec) {
    auto pc = trex::count_params(load("v4-pro.json"));
    EXPECT_NEAR(pc.total / 1e9, 1572.997, 0.0005);  // spec §1.5
    EXPECT_NEAR(pc.total_with_mtp / 1e12, 1.599, 0.0005);
    EXPECT_NEAR(pc.active_excl_embedding / 1e9, 48.85, 0.005);
    EXPECT_NEAR(pc.mtp_total / 1e9, 25.84, 0.005);
    EXPECT_EQ(pc.release_tensors, 142773);  // spec §4.4
    EXPECT_EQ(pc.release_mtp_tensors, 2343);
}

TEST(InfoCounts, TinyMatchesSpec) {
    using pcmp = trex::param_component;
    auto pc = trex::count_params(load("v4-tiny.json"));
    EXPECT_NEAR(pc.total / 1e6, 11.17, 0.005);  // spec §5.1
    EXPECT_NEAR(pc.mtp_total / 1e6, 2.22, 0.005);
    EXPECT_NEAR(pc.total_with_mtp / 1e6, 13.39, 0.005);
    EXPECT_NEAR(pc.active_excl_embedding / 1e6, 5.4, 0.05);
    auto M = [&](pcmp c) { return pc.main_total[(int)c] / 1e6; };
    EXPECT_NEAR(M(pcmp::embedding), 1.05, 0.005);
    EXPECT_NEAR(M(pcmp::head), 1.05, 0.005);
    EXPECT_NEAR(M(pcmp::attention), 1.05, 0.005);
    EXPECT_NEAR(M(pcmp::compressor), 0.33, 0.005);
    EXPECT_NEAR(M(pcmp::indexer), 0.40, 0.005);
    EXPECT_NEAR(M(pcmp::mhc), 0.20, 0.005);
    EXPECT_NEAR(M(pcmp::routed_experts), 6.29, 0.005);
    EXPECT_NEAR(M(pcmp::shared_experts), 0.79, 0.005);
}

TEST(InfoCounts, SmallMatchesSpec) {
    using pcmp = trex::param_component;
    auto pc = trex::count_params(load("v4-small.json"));
    EXPECT_NEAR(pc.total / 1e6, 256.66, 0.005);  // spec §5.2
    EXPECT_NEAR(pc.mtp_total / 1e6, 15.46, 0.005);
    EXPECT_NEAR(pc.total_with_mtp / 1e6, 272.1, 0.05);
    EXPECT_NEAR(pc.active_excl_embedding / 1e6, 102.4, 0.05);
    EXPECT_NEAR(pc.active / 1e6, 168.6, 0.05);  // "incl. embedding+head"
    auto M = [&](pcmp c) { return pc.main_total[(int)c] / 1e6; };
    // The spec rounds its breakdown loosely (shared 3.146 M is printed as 3.2 M), hence 0.06.
    EXPECT_NEAR(M(pcmp::embedding), 66.2, 0.06);
    EXPECT_NEAR(M(pcmp::head), 66.2, 0.06);
    EXPECT_NEAR(M(pcmp::attention), 14.7, 0.06);
    EXPECT_NEAR(M(pcmp::compressor), 2.5, 0.06);
    EXPECT_NEAR(M(pcmp::indexer), 2.4, 0.06);
    EXPECT_NEAR(M(pcmp::mhc), 0.8, 0.06);
    EXPECT_NEAR(M(pcmp::routed_experts), 100.7, 0.06);
    EXPECT_NEAR(M(pcmp::shared_experts), 3.2, 0.06);
}

TEST(InfoCounts, GateBiasCountedHashTableNot) {
    auto cfg = load("v4-tiny.json");
    auto inv = trex::build_inventory(cfg, true);
    int64_t bias = 0, tables = 0;
    for (const auto& t : inv) {
        if (t.role == trex::tensor_role::bias_buffer) bias += t.numel();
        if (t.role == trex::tensor_role::hash_table) tables++;
    }
    auto pc = trex::count_params(cfg);
    // 3 score-routed trunk layers + the MTP block carry gate.bias [E]
    EXPECT_EQ(bias, 4 * cfg.n_routed_experts);
    EXPECT_EQ(tables, cfg.num_hash_layers);
    EXPECT_EQ(
        pc.main_total[(int)trex::param_component::router] + pc.mtp_by_component[(int)trex::param_component::router],
        5 * (int64_t)cfg.n_routed_experts * cfg.hidden_size + bias);
}
