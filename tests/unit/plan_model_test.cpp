// trex plan, the model side: parameters and FLOPs per token by hand on small generic transformers, the DeepSeek-V4
// counts against `trex info` (src/trex/model/counts.*) and the facts file's arithmetic (planner_facts.md §4.2).
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/model/config.hpp"
#include "trex/model/counts.hpp"
#include "trex/plan/model.hpp"

using namespace trex::plan;
using trex::test::error_of;
using trex::test::source_path;

namespace {

// A dense GQA transformer: h 256, 4 heads of 64, 2 KV heads, SwiGLU 512, vocab 1000, 2 layers.
json gqa_json() {
    return json::parse(R"({"name": "tiny-gqa", "hidden_size": 256, "vocab_size": 1000, "num_layers": 2,
        "attention": {"type": "gqa", "heads": 4, "kv_heads": 2, "head_dim": 64},
        "ffn": {"activation": "swiglu", "intermediate_size": 512}})");
}

// A MoE transformer with MLA: 1 dense layer then 2 MoE layers (8 experts, top-2, 1 shared), MTP 1.
json moe_json() {
    return json::parse(R"({"name": "tiny-moe", "hidden_size": 128, "vocab_size": 500, "num_layers": 3,
        "attention": {"type": "mla", "heads": 4, "q_lora_rank": 64, "kv_lora_rank": 32,
                      "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16},
        "ffn": {"activation": "swiglu", "intermediate_size": 256},
        "moe": {"first_k_dense": 1, "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
                "n_shared_experts": 1},
        "mtp_layers": 1})");
}

}  // namespace

TEST(PlanModel, GqaParamsAndFlopsByHand) {
    const int64_t S = 128;
    const plan_model m = plan_model_from_json(gqa_json(), "gqa.json", S, true);
    const double h = 256, q = 4 * 64, kv = 2 * 64, F = 512, V = 1000;
    const double matrices = h * q + 2 * h * kv + q * h + 3 * h * F;  // per layer
    ASSERT_EQ(m.layers.size(), 2u);
    EXPECT_DOUBLE_EQ(m.layers[0].p_tp, matrices);
    EXPECT_DOUBLE_EQ(m.layers[0].p_rep, 2 * h);  // two RMSNorms
    // total = 2 layers + embedding + untied head + final norm
    EXPECT_DOUBLE_EQ(m.total_params, 2 * (matrices + 2 * h) + 2 * V * h + h);
    EXPECT_DOUBLE_EQ(m.active_params, 2 * (matrices + 2 * h) + V * h + h);

    // Megatron: 6 per matrix parameter, causal core 6*H*(d_qk+d_v)*S/2, head 6*V*h
    const double core_causal = 6.0 * 4 * (64 + 64) * S / 2;
    const model_flops f = flops_per_token(m, {"megatron", true});
    EXPECT_DOUBLE_EQ(f.gemm, 2 * 6 * matrices);
    EXPECT_DOUBLE_EQ(f.attention, 2 * core_causal);
    EXPECT_DOUBLE_EQ(f.head, 6 * V * h);
    EXPECT_DOUBLE_EQ(f.total, 2 * (6 * matrices + core_causal) + 6 * V * h);
    // non-causal doubles the core only; Megatron's GQA formula 12*L*h^2*(1 + G/H + s/h*r)*(H*d/h) for the
    // attention block (r = 1/2), checked against ours
    const model_flops fn = flops_per_token(m, {"megatron", false});
    EXPECT_DOUBLE_EQ(fn.attention, 2 * f.attention);
    const double meg_attn = 12.0 * 2 * h * h * (1 + 2.0 / 4 + (double)S / h * 0.5) * (4 * 64 / h);
    const double ours_attn = 2 * 6 * (h * q + 2 * h * kv + q * h) + f.attention;  // Q,O + K,V (G/H) + core
    EXPECT_NEAR(ours_attn, meg_attn, 1e-6 * meg_attn);
    EXPECT_NE(f.formula.find("megatron convention"), std::string::npos);
}

TEST(PlanModel, MoeMlaParamsAndConventions) {
    const int64_t S = 64;
    const plan_model m = plan_model_from_json(moe_json(), "moe.json", S, true);
    ASSERT_EQ(m.layers.size(), 4u);  // 3 + MTP
    const double h = 128, H = 4, ql = 64, kvl = 32, dn = 16, dr = 8, dv = 16, E = 8, K = 2, Fm = 32, F = 256;
    EXPECT_FALSE(m.layers[0].moe);
    EXPECT_TRUE(m.layers[1].moe && m.layers[2].moe);
    EXPECT_TRUE(m.layers[3].mtp && m.layers[3].moe);  // the MTP layer copies the last layer's kind
    // MLA: up-projections and the output projection are TP-split; the down-projections replicated
    const double up = ql * H * (dn + dr) + kvl * H * (dn + dv);
    const double attn_tp = up + H * dv * h;
    EXPECT_DOUBLE_EQ(m.layers[0].p_tp, attn_tp + 3 * h * F);
    EXPECT_DOUBLE_EQ(m.layers[1].p_tp, attn_tp + 3 * h * Fm);  // + the shared expert
    EXPECT_DOUBLE_EQ(m.layers[1].p_expert, 3 * h * Fm);
    EXPECT_DOUBLE_EQ(m.layers[1].f_expert, 6 * K * 3 * h * Fm);
    EXPECT_DOUBLE_EQ(m.layers[1].f_router, 6 * E * h);
    EXPECT_DOUBLE_EQ(m.layers[1].dispatch_elems, K * h);
    // total: routed experts all E; active: top-K; MTP excluded from active
    const double rep_mla = h * ql + ql + h * (kvl + dr) + kvl + 2 * h;
    const double dense_layer = attn_tp + 3 * h * F + rep_mla;
    const double moe_layer = attn_tp + 3 * h * Fm + rep_mla + E * h;
    const double mtp_extra = 2 * h * h + 2 * h;
    EXPECT_DOUBLE_EQ(m.total_params, dense_layer + 3 * moe_layer + mtp_extra + 3 * E * 3 * h * Fm + 2 * 500 * h + h);
    EXPECT_DOUBLE_EQ(m.active_params, dense_layer + 2 * moe_layer + 2 * K * 3 * h * Fm + 500 * h + h);

    // Megatron counts MTP and a second head use, and leaves the router out; DeepSeek's the reverse
    const model_flops meg = flops_per_token(m, {"megatron", true});
    const model_flops ds = flops_per_token(m, {"deepseek", true});
    EXPECT_GT(meg.mtp, 0);
    EXPECT_EQ(ds.mtp, 0);
    EXPECT_DOUBLE_EQ(meg.head, 2 * ds.head);
    EXPECT_DOUBLE_EQ(ds.gemm - meg.gemm, 2 * 6 * E * h);  // the router of the two main MoE layers
    const double core = 6.0 * H * (dn + dr + dv) * S / 2;
    EXPECT_DOUBLE_EQ(ds.attention, 3 * core);
}

// V4: the planner reads the engine's own counts; they must equal `trex info`'s, and the facts file's arithmetic.
TEST(PlanModel, V4FlopsAgreeWithInfoAndFacts) {
    struct row {
        const char* model;
        int64_t S;
        bool dense;       // CSA over every visible compressed entry (V4's dense warm-up) instead of top-k
        double facts_gf;  // planner_facts.md §4.2, main model (no MTP)
    };
    const row rows[] = {
        {"v4-pro", 4096, false, 312},    {"v4-pro", 65536, false, 341},  {"v4-pro", 1048576, false, 616},
        {"v4-flash", 4096, false, 85.6}, {"v4-flash", 65536, false, 96}, {"v4-flash", 1048576, false, 253},
        {"v4-pro", 4096, true, 312},     {"v4-pro", 65536, true, 511},   {"v4-pro", 1048576, true, 3684},
        {"v4-flash", 4096, true, 86.6},  {"v4-flash", 65536, true, 160}, {"v4-flash", 1048576, true, 1331}};
    for (const auto& r : rows) {
        SCOPED_TRACE(std::string(r.model) + " S=" + std::to_string(r.S) + (r.dense ? " dense" : " sparse"));
        const plan_model m = load_plan_model(r.model, r.S, true, r.dense);
        const trex::model_config cfg = trex::load_config(source_path(std::string("configs/") + r.model + ".json"));
        trex::flops_options o;
        o.seq_len = r.S;
        o.dense_csa = r.dense;
        const trex::flops_breakdown info = trex::training_flops_per_token(cfg, o);
        const model_flops meg = flops_per_token(m, {"megatron", true});
        const model_flops ds = flops_per_token(m, {"deepseek", true});
        EXPECT_NEAR(meg.total, info.total, 1e-9 * info.total);  // incl. MTP and its head use
        o.include_mtp = false;
        const double info_main = trex::training_flops_per_token(cfg, o).total;
        EXPECT_NEAR(ds.total, info_main, 1e-9 * info_main);
        EXPECT_NEAR(ds.total / 1e9, r.facts_gf, 0.01 * r.facts_gf);
    }
    // the parameter totals of `trex info`: Flash 284.33B / 13.27B active, Pro 1573.0B / 48.85B (main model)
    const plan_model flash = load_plan_model("v4-flash", 4096), pro = load_plan_model("v4-pro", 4096);
    double flash_mtp = 0, pro_mtp = 0;
    for (const auto& L : flash.layers)
        if (L.mtp) flash_mtp += L.p_tp + L.p_rep + L.n_experts * L.p_expert;
    for (const auto& L : pro.layers)
        if (L.mtp) pro_mtp += L.p_tp + L.p_rep + L.n_experts * L.p_expert;
    EXPECT_NEAR((flash.total_params - flash_mtp) / 1e9, 284.33, 0.01);
    EXPECT_NEAR(flash.active_params / 1e9, 13.27, 0.01);
    EXPECT_NEAR((pro.total_params - pro_mtp) / 1e9, 1573.0, 0.1);
    EXPECT_NEAR(pro.active_params / 1e9, 48.85, 0.01);
}

// Non-causal V4 counts use every query's view of the last position: more attention, same matrices.
TEST(PlanModel, V4NonCausalAddsOnlyAttention) {
    const plan_model m = load_plan_model("v4-flash", 65536);
    const model_flops c = flops_per_token(m, {"deepseek", true});
    const model_flops n = flops_per_token(m, {"deepseek", false});
    EXPECT_DOUBLE_EQ(c.gemm, n.gemm);
    EXPECT_DOUBLE_EQ(c.head, n.head);
    EXPECT_GT(n.attention, c.attention);
    EXPECT_GT(n.indexer, c.indexer);
}

TEST(PlanModel, MalformedModelFilesNameTheKey) {
    json j = gqa_json();
    j["attention"]["kv_heads"] = 3;
    EXPECT_NE(error_of([&] { plan_model_from_json(j, "m.json", 64, true); }).find("key 'attention.kv_heads'"),
              std::string::npos);
    j = gqa_json();
    j["hiden_size"] = 1;
    EXPECT_NE(error_of([&] { plan_model_from_json(j, "m.json", 64, true); }).find("key 'hiden_size': unknown key"),
              std::string::npos);
    j = gqa_json();
    j.erase("num_layers");
    EXPECT_NE(error_of([&] {
                  plan_model_from_json(j, "m.json", 64, true);
              }).find("m.json: key 'num_layers': missing required key"),
              std::string::npos);
    j = gqa_json();
    j["ffn"]["activation"] = "relu";
    EXPECT_NE(error_of([&] { plan_model_from_json(j, "m.json", 64, true); }).find("key 'ffn.activation'"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  load_plan_model("no-such-model", 64);
              }).find("model 'no-such-model' not found (a file, configs/plan/<name>.json"),
              std::string::npos);
}
