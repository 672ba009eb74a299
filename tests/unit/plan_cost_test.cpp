// trex plan, the cost model: memory per device (Korthikanti's activation table, ZeRO-1 bytes per parameter),
// communication times of TP / DP / PP / EP by hand on a two-tier test machine, pipeline bubbles, monotonicity on
// V4-Flash, and impossible layouts.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/model/config.hpp"
#include "trex/model/inventory.hpp"
#include "trex/model/tensor_parallel.hpp"
#include "trex/plan/cost.hpp"
#include "trex/plan/json_reader.hpp"
#include "trex/plan/model.hpp"

using namespace trex::plan;
using trex::test::error_of;

namespace {

constexpr double GB = 1e9;

// Two tiers: 8 devices at 100 GB/s, then 10 GB/s; no latency, efficiency 1. 100 TF BF16, 1,000 GB/s HBM.
hardware_profile test_hw() {
    return hardware_from_json(json::parse(R"({"name": "test", "peak_tflops": {"bf16": 100}, "hbm_gb": 1000,
        "hbm_bw_gbps": 1000, "node_size": 8, "host_bw_gbps": 10,
        "tiers": [{"name": "fast", "size": 8, "bw_gbps": 100, "latency_us": 0, "efficiency": 1},
                  {"name": "slow", "size": 0, "bw_gbps": 10, "latency_us": 0, "efficiency": 1}]})"),
                              "test-hw.json");
}

// Nothing hidden behind compute, so every communication time shows in full.
calibration test_cal() {
    return calibration_from_json(json::parse(R"({"gemm_efficiency": 0.5, "fp8_gemm_efficiency": 0.4,
        "attention_efficiency": 0.3, "gemm_half_size": 64, "memory_passes": 4, "memory_efficiency": 0.8,
        "ep_overlap": 0.5, "tp_overlap": 0.5, "background_overlap": 0, "reserve_fraction": 0.05,
        "comm_buffer_gb": 1.5})"),
                                 "test-cal.json");
}

// GPT as in Korthikanti et al.: LayerNorm, GeLU 4h MLP, dropout, no flash attention. h 512, 8 heads, 2 layers.
const double h = 512, a = 8, V = 1000;
plan_model gpt(int64_t S) {
    return plan_model_from_json(json::parse(R"({"name": "gpt", "hidden_size": 512, "vocab_size": 1000,
        "num_layers": 2, "norm": "layernorm", "dropout": true, "attention": {"type": "gqa", "heads": 8},
        "ffn": {"activation": "gelu", "intermediate_size": 2048}})"),
                                "gpt.json", S, false);
}

// All-MoE GQA model: h 128, 4 heads, 16 experts of 64, top-2, 2 layers.
plan_model moe(int64_t S) {
    return plan_model_from_json(json::parse(R"({"name": "moe", "hidden_size": 128, "vocab_size": 1000,
        "num_layers": 2, "attention": {"type": "gqa", "heads": 4}, "ffn": {"activation": "swiglu"},
        "moe": {"n_routed_experts": 16, "num_experts_per_tok": 2, "moe_intermediate_size": 64}})"),
                                "moe.json", S, true);
}

plan_setup setup(int64_t S, int64_t gbs) {
    plan_setup s;
    s.seq_len = S;
    s.global_batch = gbs;
    s.micro_batch = 1;
    return s;
}

plan_layout layout(int tp, int pp, int ep = 1, const std::string& schedule = "1f1b", int vpp = 1) {
    plan_layout l;
    l.tp = tp, l.pp = pp, l.ep = ep, l.schedule = schedule, l.vpp = vpp;
    return l;
}

}  // namespace

// Weights 2 B, FP32 grads 4 B, ZeRO-1 FP32 master + 2 moments 12 B / DP; activations per layer s*b*h*(34 + 5*a*s/h)
// (Korthikanti Table 2, no parallelism) plus FP32 logits and their gradient.
TEST(PlanCost, MemoryByHandNoParallelism) {
    const int64_t S = 256;
    const plan_model m = gpt(S);
    const plan_result r = evaluate(m, test_hw(), test_cal(), 2, setup(S, 2), layout(1, 1));
    ASSERT_EQ(r.stages.size(), 1u);
    const stage_cost& st = r.stages[0];
    EXPECT_EQ(r.dp, 2);
    const double P = m.total_params;
    EXPECT_DOUBLE_EQ(st.params, P);
    EXPECT_NEAR(st.weights_GB, 2 * P / GB, 1e-12);
    EXPECT_NEAR(st.grads_GB, 4 * P / GB, 1e-12);
    EXPECT_NEAR(st.optimizer_GB, 12 * P / 2 / GB, 1e-12);
    const double act = 2 * S * h * (34 + 5 * a * S / h) + S * V * 4.0 * 2;
    EXPECT_NEAR(st.activations_GB, act / GB, 1e-12);
    EXPECT_DOUBLE_EQ(st.buffers_GB, 1.5);
    EXPECT_NEAR(st.total_GB, (6 * P + 6 * P) / GB + act / GB + 1.5, 1e-9);
    EXPECT_NEAR(r.usable_GB, 1000 * 0.95, 1e-9);
    EXPECT_TRUE(r.fits);
}

// Korthikanti Table 2 with TP t: 10 + 24/t + 5as/(ht) without SP, (34 + 5as/h)/t with SP; full recompute keeps the
// layer input (2sbh, /t with SP) and holds one layer's activations while it is recomputed.
TEST(PlanCost, ActivationsWithTensorParallelAndRecompute) {
    const int64_t S = 256;
    const double t = 4;
    const plan_model m = gpt(S);
    const double logits = S * V / t * 8.0;
    plan_setup s = setup(S, 1);
    s.sequence_parallel = false;
    plan_result r = evaluate(m, test_hw(), test_cal(), 4, s, layout(4, 1));
    EXPECT_NEAR(r.stages[0].activations_GB * GB, 2 * S * h * (10 + 24 / t + 5 * a * S / (h * t)) + logits, 1e-3);
    s.sequence_parallel = true;
    r = evaluate(m, test_hw(), test_cal(), 4, s, layout(4, 1));
    EXPECT_NEAR(r.stages[0].activations_GB * GB, 2 * S * h * (34 + 5 * a * S / h) / t + logits, 1e-3);
    s.recompute = {"full"};
    r = evaluate(m, test_hw(), test_cal(), 4, s, layout(4, 1));
    const double one_layer = S * h * (34 + 5 * a * S / h) / t;
    EXPECT_NEAR(r.stages[0].activations_GB * GB, 2 * 2 * S * h / t + one_layer + logits, 1e-3);
    // selective recompute drops exactly the 5as/h score term
    s.recompute = {"selective"};
    r = evaluate(m, test_hw(), test_cal(), 4, s, layout(4, 1));
    EXPECT_NEAR(r.stages[0].activations_GB * GB, 2 * S * h * 34 / t + logits, 1e-3);
}

// TP: 2 all-reduces forward + 2 backward per layer, each 2(t-1)/t of the s*b*h BF16 activation.
TEST(PlanCost, TensorParallelTimeByHand) {
    const int64_t S = 256;
    const plan_result r = evaluate(gpt(S), test_hw(), test_cal(), 2, setup(S, 1), layout(2, 1));
    const double one = 2.0 * (2 - 1) / 2 * S * h * 2 / (100 * GB);
    EXPECT_NEAR(r.stages[0].t_tp, 2 * 4 * one, 1e-15);
    // TP8 (one layer per stage with PP2) still inside the 8-device tier
    const plan_result r16 = evaluate(gpt(S), test_hw(), test_cal(), 16, setup(S, 1), layout(8, 2));
    EXPECT_NEAR(r16.stages[0].t_tp, 1 * 4 * (2.0 * 7 / 8 * S * h * 2 / (100 * GB)), 1e-15);
}

// ZeRO-1 DP: gradient reduce-scatter (FP32) + parameter all-gather (BF16), each (n-1)/n of the local parameters.
TEST(PlanCost, DataParallelTimeByHand) {
    const int64_t S = 256;
    const plan_model m = gpt(S);
    plan_result r = evaluate(m, test_hw(), test_cal(), 2, setup(S, 2), layout(1, 1));
    EXPECT_NEAR(r.t_dp, 0.5 * m.total_params * (4 + 2) / (100 * GB), 1e-15);
    EXPECT_NEAR(r.t_dp_exposed, r.t_dp, 1e-15);  // background_overlap 0
    // without ZeRO: an FP32 all-reduce, 2(n-1)/n; 16 devices span the slow tier
    plan_setup s = setup(S, 16);
    s.zero1 = false;
    r = evaluate(m, test_hw(), test_cal(), 16, s, layout(1, 1));
    EXPECT_NEAR(r.t_dp, 2.0 * 15 / 16 * m.total_params * 4 / (10 * GB), 1e-12);
}

// PP: the residual stream (s*b*h BF16) crosses each stage boundary forward and backward; 1F1B's bubble is (p-1)
// micro-batch times, interleaving divides it by v, DualPipeV's is (p-1)/3 of a micro-batch.
TEST(PlanCost, PipelineSendsAndBubbles) {
    const int64_t S = 256;
    const plan_model m = gpt(S);
    plan_result r = evaluate(m, test_hw(), test_cal(), 2, setup(S, 8), layout(1, 2));
    ASSERT_EQ(r.stages.size(), 2u);
    EXPECT_EQ(r.micro_batches, 8);
    for (const auto& st : r.stages) EXPECT_NEAR(st.t_pp, 2 * S * 2 * h / (100 * GB), 1e-15);
    EXPECT_NEAR(r.t_bubble, 1 * r.t_mb_max, 1e-15);
    EXPECT_NEAR(r.t_pipeline, 8 * r.t_mb_max + r.t_bubble, 1e-12);
    EXPECT_NEAR(r.t_step, r.t_pipeline + r.t_dp_exposed + r.t_optimizer, 1e-12);
    // 1F1B holds p - d micro-batches of activations on stage d
    EXPECT_DOUBLE_EQ(r.stages[0].in_flight, 2);
    EXPECT_DOUBLE_EQ(r.stages[1].in_flight, 1);

    const plan_model m8 = plan_model_from_json(json::parse(R"({"hidden_size": 512, "vocab_size": 1000,
        "num_layers": 8, "attention": {"type": "gqa", "heads": 8}, "ffn": {"intermediate_size": 1024}})"),
                                               "eight.json", S, true);
    r = evaluate(m8, test_hw(), test_cal(), 4, setup(S, 8), layout(1, 4, 1, "interleaved", 2));
    EXPECT_NEAR(r.t_bubble, 3 * r.t_mb_max / 2, 1e-15);
    EXPECT_EQ(r.stages[0].chunks, (std::vector<int>{0, 4}));
    r = evaluate(m8, test_hw(), test_cal(), 4, setup(S, 8), layout(1, 4, 1, "dualpipev"));
    EXPECT_NEAR(r.t_bubble, 3 * r.t_mb_max / 3, 1e-15);
    EXPECT_EQ(r.stages[0].chunks, (std::vector<int>{0, 7}));
}

// EP: per routed token and MoE layer, the dispatch + combine forward and their mirror backward = 4 BF16 copies of h
// per destination; (ep-1)/ep of the k copies leave the device inside the fast domain; across domains an
// all-to-all dispatcher sends one copy per remote expert, DeepEP one per remote domain.
TEST(PlanCost, ExpertParallelTimeByHand) {
    const int64_t S = 256;
    const double hm = 128, k = 2;
    const plan_model m = moe(S);
    plan_result r = evaluate(m, test_hw(), test_cal(), 4, setup(S, 4), layout(1, 1, 4));
    const double per_layer = k * 3 / 4 * 8 * hm * S / (100 * GB);
    EXPECT_NEAR(r.stages[0].t_ep, 2 * per_layer, 1e-15);
    // overlap hides the calibrated fraction
    plan_setup s = setup(S, 4);
    s.ep_overlap = true;
    r = evaluate(m, test_hw(), test_cal(), 4, s, layout(1, 1, 4));
    EXPECT_NEAR(r.stages[0].t_ep, 2 * per_layer * 0.5, 1e-15);
    // EP16 over two 8-device domains
    s = setup(S, 16);
    s.ep_dispatcher = "alltoall";
    r = evaluate(m, test_hw(), test_cal(), 16, s, layout(1, 1, 16));
    const double t_out = k * 8 / 16 * 8 * hm * S / (10 * GB), t_in = k * 7 / 16 * 8 * hm * S / (100 * GB);
    EXPECT_NEAR(r.stages[0].t_ep, 2 * std::max(t_out, t_in), 1e-15);
    s.ep_dispatcher = "deepep";  // 1 - (1/2)^2 = 0.75 copies to the other domain, k*(1 - 1/8) inside
    r = evaluate(m, test_hw(), test_cal(), 16, s, layout(1, 1, 16));
    EXPECT_NEAR(r.stages[0].t_ep, 2 * std::max(0.75 * 8 * hm * S / (10 * GB), k * 7 / 8 * 8 * hm * S / (100 * GB)),
                1e-15);
    // node-limited routing caps the copies that leave the domain
    s.node_limited_routing = 1;
    r = evaluate(m, test_hw(), test_cal(), 16, s, layout(1, 1, 16));
    EXPECT_NEAR(r.stages[0].t_ep, 2 * std::max(0.5 * 8 * hm * S / (10 * GB), k * 7 / 8 * 8 * hm * S / (100 * GB)),
                1e-15);
    // experts shard over EP: each device holds 16/ep of them
    EXPECT_DOUBLE_EQ(r.stages[0].params - m.embed_params - m.head_params - m.top_params,
                     2 * (m.layers[0].p_tp + m.layers[0].p_rep + m.layers[0].p_expert));
}

// Properties on V4-Flash (the MindSpeed recipe TP1 PP4 EP32 on 128 A3 dies).
TEST(PlanCost, MonotoneOnV4Flash) {
    const plan_model m = load_plan_model("v4-flash", 4096);
    const hardware_profile hw = load_hardware("ascend910c_die");
    const calibration cal = load_calibration();
    plan_setup s = setup(4096, 1024);
    const plan_layout l = layout(1, 4, 32);
    const plan_result base = evaluate(m, hw, cal, 128, s, l);
    // a larger batch amortises the bubble: MFU does not drop
    s.global_batch = 2048;
    EXPECT_GE(evaluate(m, hw, cal, 128, s, l).mfu, base.mfu);
    s.global_batch = 1024;
    // twice the devices (DP) with twice the batch: more tokens/s in total
    s.global_batch = 2048;
    EXPECT_GT(evaluate(m, hw, cal, 256, s, l).tokens_per_s, base.tokens_per_s);
    s.global_batch = 1024;
    // optimizer swap: no optimizer state on the device, a swap time instead
    s.optimizer_swap = true;
    const plan_result sw = evaluate(m, hw, cal, 128, s, l);
    EXPECT_EQ(sw.stages[0].optimizer_GB, 0);
    EXPECT_LT(sw.peak_GB, base.peak_GB);
    EXPECT_GT(sw.t_swap, 0);
    s.optimizer_swap = false;
    // full recompute: fewer activations, more hardware FLOPs and time, the same model FLOPs
    s.recompute = {"full"};
    const plan_result fr = evaluate(m, hw, cal, 128, s, l);
    EXPECT_LT(fr.stages[0].activations_GB, base.stages[0].activations_GB);
    EXPECT_GT(fr.hardware_flops_per_token, base.hardware_flops_per_token);
    EXPECT_GT(fr.t_step, base.t_step);
    EXPECT_DOUBLE_EQ(fr.flops.total, base.flops.total);
    s.recompute = {};
    // TP2 halves the split matrices: fewer weights per device
    EXPECT_LT(evaluate(m, hw, cal, 128, s, layout(2, 4, 32)).stages[1].weights_GB, base.stages[1].weights_GB);
    // faster links never slow a step down
    hardware_profile fast = hw;
    for (auto& t : fast.tiers) t.bw_GBps *= 2;
    EXPECT_LE(evaluate(m, fast, cal, 128, s, l).t_step, base.t_step);
    // BF16 moments take less optimizer memory than FP32
    s.moment_dtype = "bf16";
    EXPECT_LT(evaluate(m, hw, cal, 128, s, l).stages[0].optimizer_GB, base.stages[0].optimizer_GB);
    s.moment_dtype = "fp32";
    // Muon keeps one momentum buffer for matrices: less optimizer memory than AdamW
    s.optimizer = "muon";
    EXPECT_LT(evaluate(m, hw, cal, 128, s, l).stages[0].optimizer_GB, base.stages[0].optimizer_GB);
}

TEST(PlanCost, ImpossibleLayoutsAreOneLineErrors) {
    const plan_model m = load_plan_model("v4-pro", 4096);
    const hardware_profile hw = load_hardware("ascend910c_die");
    const calibration cal = load_calibration();
    const plan_setup s = setup(4096, 1024);
    auto err = [&](const plan_layout& l, int64_t n = 512) { return error_of([&] { evaluate(m, hw, cal, n, s, l); }); };
    EXPECT_NE(err(layout(3, 8, 64), 528).find("TP 3 does not divide the 128 attention heads"), std::string::npos);
    EXPECT_NE(err(layout(2, 8, 7)).find("EP 7 does not divide the 384 routed experts"), std::string::npos);
    EXPECT_NE(err(layout(2, 7, 64)).find("TP*CP*PP = 14 does not divide the device count"), std::string::npos);
    EXPECT_NE(err(layout(2, 8, 64, "interleaved", 1)).find("needs vpp >= 2"), std::string::npos);
    EXPECT_NE(err(layout(1, 64, 1)).find("64 pipeline chunks for 61 layers"), std::string::npos);
    plan_layout bad = layout(2, 8, 64);
    bad.layers_per_chunk = {8, 8, 8, 8, 8, 8, 8, 8};
    EXPECT_NE(err(bad).find("layers_per_chunk sums to 64, the model has 61 layers"), std::string::npos);
    plan_setup fp8 = s;
    fp8.precision = "fp8";
    EXPECT_NE(error_of([&] { evaluate(m, hw, cal, 512, fp8, layout(2, 8, 64)); }).find("has no fp8 peak"),
              std::string::npos);
    for (const auto& e : {err(layout(3, 8, 64), 528), err(layout(2, 8, 7))}) EXPECT_EQ(e.find('\n'), std::string::npos);
}

TEST(PlanCost, MalformedFilesNameTheKey) {
    auto hw_err = [](const std::string& text) {
        return error_of([&] { hardware_from_json(json::parse(text), "hw.json"); });
    };
    const std::string tiers = R"("tiers": [{"name": "a", "size": 8, "bw_gbps": 100}])";
    EXPECT_NE(hw_err(R"({"name": "x", "peak_tflops": {"bf16": 1}, "hbm_bw_gbps": 1, "node_size": 8, )" + tiers + "}")
                  .find("hw.json: key 'hbm_gb': missing required key"),
              std::string::npos);
    EXPECT_NE(hw_err(R"({"name": "x", "peak_tflops": {"bf16": 1}, "hbm_gb": "80", "hbm_bw_gbps": 1, "node_size": 8, )" +
                     tiers + "}")
                  .find("key 'hbm_gb': expected a number"),
              std::string::npos);
    EXPECT_NE(hw_err(R"({"name": "x", "peak_tflops": {"bf16": 1}, "mfu_peak": "fp8", "hbm_gb": 80, "hbm_bw_gbps": 1,
                         "node_size": 8, )" +
                     tiers + "}")
                  .find("key 'mfu_peak'"),
              std::string::npos);
    EXPECT_NE(hw_err(R"({"name": "x", "peak_tflops": {"bf16": 1}, "hbm_gb": 80, "hbm_bw_gbps": 1, "node_size": 8,
                         "tiers": [{"name": "a", "size": 8, "bw_gbps": 100}, {"name": "b", "size": 4, "bw_gbps": 1}]})")
                  .find("key 'tiers[1].size': must grow"),
              std::string::npos);
    EXPECT_NE(hw_err(R"({"name": "x", "peak_tflops": {"bf16": 1}, "hbm_gb": 80, "hbm_bw_gbps": 1, "node_size": 8,
                         "nvlink": 1, )" +
                     tiers + "}")
                  .find("key 'nvlink': unknown key"),
              std::string::npos);
    // run files: the layout and setup keys
    auto run_err = [](const std::string& text) {
        return error_of([&] { run_from_json(json::parse(text), "run.json"); });
    };
    const std::string head = R"({"model": "v4-pro", "hardware": "ascend910c_die", "devices": 512, )";
    EXPECT_NE(run_err(head + R"("layout": {"tp": 2, "vpp": 2, "schedule": "1f1b"}})").find("key 'layout.vpp'"),
              std::string::npos);
    EXPECT_NE(run_err(head + R"("layout": {"tp": 0}})").find("key 'layout.tp': must be in [1,"), std::string::npos);
    EXPECT_NE(run_err(head + R"("setup": {"recompute": ["attn"]}})").find("unknown recompute module 'attn'"),
              std::string::npos);
    EXPECT_NE(run_err(head + R"("setup": {"precision": "int4"}})").find("key 'setup.precision'"), std::string::npos);
    EXPECT_NE(run_err(R"({"model": "v4-pro", "devices": 512})").find("key 'hardware': missing required key"),
              std::string::npos);
    EXPECT_NE(error_of([] { load_hardware("no-such-device"); }).find("hardware profile 'no-such-device' not found"),
              std::string::npos);
    // a number beyond double's range: the JSON parser throws out_of_range (not parse_error), still a trex::error
    const std::string overflow = trex::test::scratch_dir("plan_overflow") + "/overflow.json";
    std::ofstream(overflow) << R"({"model": "v4-pro", "devices": 1e999})";
    EXPECT_NE(error_of([&] { read_json_file(overflow); }).find(overflow + ": invalid JSON"), std::string::npos);
}

// Every shipped profile loads; the Ascend units are dies with the BF16 Cube peak as the MFU denominator.
TEST(PlanCost, ShippedHardwareProfiles) {
    for (const char* name :
         {"ascend910b", "ascend910c_die", "cloudmatrix384", "h100", "h800", "h200", "b200", "gb200_nvl72", "a100"}) {
        SCOPED_TRACE(name);
        const hardware_profile hw = load_hardware(name);
        EXPECT_GT(hw.mfu_peak_tflops(), 0);
        EXPECT_GT(hw.hbm_GB, 0);
        EXPECT_FALSE(hw.tiers.empty());
        EXPECT_FALSE(hw.source.empty());
        EXPECT_EQ(hw.tiers.back().size, 0);  // the outermost tier reaches the whole cluster
    }
    for (const char* name : {"ascend910c_die", "cloudmatrix384"}) {
        const hardware_profile hw = load_hardware(name);
        EXPECT_DOUBLE_EQ(hw.mfu_peak_tflops(), 353.9);
        EXPECT_DOUBLE_EQ(hw.hbm_GB, 64);
        EXPECT_EQ(hw.node_size, 16);
        EXPECT_EQ(hw.tflops_fp8, 0);
    }
    EXPECT_EQ(load_hardware("cloudmatrix384").tier_for_span(512).name, "ub-pod");
    EXPECT_EQ(load_hardware("ascend910c_die").tier_for_span(512).name, "roce");
    EXPECT_DOUBLE_EQ(load_hardware("h800").tier_for_span(8).bw_GBps, 200);
    EXPECT_EQ(load_hardware("gb200_nvl72").tier_for_span(64).name, "nvlink");
}

namespace {

// Parameters a TP rank of the engine holds: the inventory at its local shapes (param_store with a tp_layout, counted
// without allocating), hash tables excluded as in the plan.
double engine_rank_params(const trex::model_config& cfg, int tp) {
    double n = 0;
    for (const trex::tensor_spec& s : trex::build_inventory(cfg, true)) {
        if (s.role == trex::tensor_role::hash_table) continue;
        const trex::tp_split sp = tp > 1 ? trex::tp_split_of(s, true) : trex::tp_split::none;
        double k = 1;
        for (int64_t d : trex::tp_local_shape(s.name, s.shape, sp, tp)) k *= (double)d;
        n += k;
    }
    return n;
}

// What the engine keeps whole under TP that the plan (Megatron's layout) splits: the indexer's query projection and
// head weights. (The embedding and head are vocabulary-parallel on both sides.)
double engine_replicates_plan_splits(const trex::model_config& cfg) {
    double n = 0;
    for (const trex::tensor_spec& s : trex::build_inventory(cfg, true))
        if (s.is_indexer && (s.name.find(".indexer.wq_b.") != std::string::npos ||
                             s.name.find(".indexer.weights_proj.") != std::string::npos))
            n += (double)s.numel();
    return n;
}

}  // namespace

// TP2's per-rank parameters: the engine (param_store's tp_layout) and the plan (tp 2, etp 2: every expert split like
// the engine without EP) agree once the plan's split indexer projections are counted whole; the split tensors (the
// vocabulary-parallel embedding and head among them) are halved exactly on both sides.
TEST(PlanCost, TensorParallelParamsPerRankAreTheEngines) {
    for (const char* name : {"configs/v4-tiny.json", "configs/v4-flash.json"}) {
        const trex::model_config cfg = trex::load_config(trex::test::source_path(name));
        const plan_model m = load_plan_model(trex::test::source_path(name), 256);
        plan_setup s = setup(256, 4);
        plan_layout l = layout(2, 1);
        l.etp = 2;
        const plan_result r = evaluate(m, test_hw(), test_cal(), 2, s, l);
        const double engine1 = engine_rank_params(cfg, 1), engine2 = engine_rank_params(cfg, 2);
        EXPECT_EQ(engine1, m.total_params) << name;
        EXPECT_NEAR(engine2, r.stages[0].params + engine_replicates_plan_splits(cfg) / 2, 0.5) << name;
        std::printf("%s: TP2 rank holds %.4g of %.4g parameters (%.3f); the plan's Megatron layout %.3f\n", name,
                    engine2, engine1, engine2 / engine1, r.stages[0].params / engine1);
    }
}
