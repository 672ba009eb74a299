// The backend seam (kernels/kernel_table.hpp): the model reaches its kernels only through the kernel table it was
// built with. A table whose every entry counts its calls before forwarding to the CPU kernel shows it: a model step
// (forward, losses, backward; also with recompute and with the profile on) through the counting table gives bitwise
// the default model's losses and gradients, and every entry the single-process model needs was called through the
// table — a kernel called directly would leave its count at zero. The same for the optimizer's Muon update. The CPU
// table itself is complete.
#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "trex/kernels/cpu/gemm.hpp"
#include "trex/kernels/cpu/ops.hpp"
#include "trex/kernels/kernel_table.hpp"
#include "trex/model/model.hpp"
#include "trex/optim/optimizer.hpp"
#include "trex/train/synthetic_batch.hpp"

namespace {

constexpr int kEntries = 60;
std::array<long, kEntries> g_calls{};
std::array<const char*, kEntries> g_names{};

// counted<I, &f>::call has f's signature: it counts, then calls f.
template <int I, auto F>
struct counted;
template <int I, typename R, typename... A, R (*F)(A...)>
struct counted<I, F> {
    static R call(A... a) {
        g_calls[I]++;
        return F(a...);
    }
};

#define TREX_COUNTED(i, name) (g_names[i] = #name, t.name = counted<i, &trex::cpu::name>::call)

trex::kernel_table counting_table() {
    trex::kernel_table t;
    t.name = "cpu-counting";
    t.memory = trex::host_memory();
    TREX_COUNTED(0, gemm);
    TREX_COUNTED(1, linear_fwd);
    TREX_COUNTED(2, linear_bwd_data);
    TREX_COUNTED(3, linear_bwd_weight);
    TREX_COUNTED(4, add_transposed);
    TREX_COUNTED(5, gemm_stats_section);
    TREX_COUNTED(6, embedding_forward);
    TREX_COUNTED(7, embedding_backward);
    TREX_COUNTED(8, rmsnorm_forward);
    TREX_COUNTED(9, rmsnorm_backward);
    TREX_COUNTED(10, rope_forward);
    TREX_COUNTED(11, hc_pre_forward);
    TREX_COUNTED(12, hc_pre_backward);
    TREX_COUNTED(13, hc_post_forward);
    TREX_COUNTED(14, hc_post_backward);
    TREX_COUNTED(15, hc_head_forward);
    TREX_COUNTED(16, hc_head_backward);
    TREX_COUNTED(17, compressor_forward);
    TREX_COUNTED(18, compressor_backward);
    TREX_COUNTED(19, indexer_scores_forward);
    TREX_COUNTED(20, indexer_scores_backward);
    TREX_COUNTED(21, indexer_topk);
    TREX_COUNTED(22, indexer_loss);
    TREX_COUNTED(23, attention_forward);
    TREX_COUNTED(24, attention_backward);
    TREX_COUNTED(25, grouped_linear_forward);
    TREX_COUNTED(26, grouped_linear_backward);
    TREX_COUNTED(27, router_forward);
    TREX_COUNTED(28, router_backward);
    TREX_COUNTED(29, swiglu_forward);
    TREX_COUNTED(30, swiglu_backward);
    TREX_COUNTED(31, moe_build_permutation);
    TREX_COUNTED(32, moe_gather_rows);
    TREX_COUNTED(33, moe_combine_rows);
    TREX_COUNTED(34, moe_experts_forward);
    TREX_COUNTED(35, moe_experts_backward);
    TREX_COUNTED(36, moe_route_weight_backward);
    TREX_COUNTED(37, balance_loss_forward);
    TREX_COUNTED(38, balance_loss_backward);
    TREX_COUNTED(39, cross_entropy_fused);
    TREX_COUNTED(40, cross_entropy_shard_stats);
    TREX_COUNTED(41, cross_entropy_shard_exp);
    TREX_COUNTED(42, cross_entropy_shard_grad);
    TREX_COUNTED(43, syrk);
    TREX_COUNTED(44, copy);
    TREX_COUNTED(45, fill_zero);
    TREX_COUNTED(46, scale);
    TREX_COUNTED(47, add);
    TREX_COUNTED(48, broadcast_streams);
    TREX_COUNTED(49, sum_streams);
    TREX_COUNTED(50, rms_unweighted_backward);
    TREX_COUNTED(51, attention_keys);
    TREX_COUNTED(52, indexer_head_sums);
    TREX_COUNTED(53, indexer_target);
    TREX_COUNTED(54, hash_select);
    TREX_COUNTED(55, expert_load);
    TREX_COUNTED(56, linear_fwd_decode);
    TREX_COUNTED(57, fake_quant_fp8);
    TREX_COUNTED(58, fake_quant_fp4);
    TREX_COUNTED(59, hadamard_rows);
    return t;
}

// The calls counted for the entry of that name (the counting table must have been built).
long calls_of(const std::string& name) {
    for (int i = 0; i < kEntries; i++)
        if (g_names[i] && name == g_names[i]) return g_calls[i];
    ADD_FAILURE() << "no counted entry " << name;
    return -1;
}

// Entries only expert parallelism calls (the permutation pieces of the routed experts; the single-process model
// calls moe_experts_forward/backward, which use them inside the CPU backend).
bool ep_only(const std::string& name) {
    return name == "moe_build_permutation" || name == "moe_gather_rows" || name == "moe_combine_rows" ||
           name == "moe_route_weight_backward";
}

// Entries only cached decoding calls (dsv4_model::decode, through decoding_kernels).
bool decode_only(const std::string& name) {
    return name == "linear_fwd_decode";
}

// Entries only the release's QAT simulation calls (model_config::qat == "release").
bool qat_only(const std::string& name) {
    return name == "fake_quant_fp8" || name == "fake_quant_fp4" || name == "hadamard_rows";
}

// v4-micro with the release's numerics: head_dim 80 gives the KV 64 non-RoPE dims (one FP8 block of 64).
trex::model_config micro_with_release_numerics() {
    auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    cfg.head_dim = 80;
    cfg.qat = "release";
    cfg.indexer_ties = "torch";
    trex::validate_config(cfg, "micro + release numerics");
    return cfg;
}

// Entries only tensor parallelism calls (the vocabulary-parallel cross-entropy; the single process calls
// cross_entropy_fused).
bool tp_only(const std::string& name) {
    return name.rfind("cross_entropy_shard_", 0) == 0;
}

// Entries only the optimizer calls (Muon's Newton-Schulz).
bool optimizer_only(const std::string& name) {
    return name == "syrk";
}

// The table's entries as raw words after `name` (function pointers are copied as bytes, never called this way).
std::vector<uintptr_t> entry_words(const trex::kernel_table& t) {
    static_assert(sizeof(trex::kernel_table) ==
                      sizeof(const char*) + kEntries * sizeof(void (*)()) + sizeof(trex::device_allocator),
                  "kernel_table gained or lost an entry: update kEntries and the counting table");
    std::vector<uintptr_t> w(kEntries);
    std::memcpy(w.data(), reinterpret_cast<const char*>(&t) + sizeof(const char*), kEntries * sizeof(uintptr_t));
    return w;
}

// A backend memory that counts: bytes live and allocations (the CPU's host memory underneath).
std::mutex g_mem_mutex;
std::map<void*, size_t> g_mem_sizes;
int64_t g_mem_live = 0, g_mem_allocations = 0;

void* counting_allocate(size_t bytes) {
    void* p = trex::host_memory().allocate(bytes);
    std::lock_guard<std::mutex> lock(g_mem_mutex);
    g_mem_sizes[p] = bytes;
    g_mem_live += (int64_t)bytes;
    g_mem_allocations++;
    return p;
}

void counting_release(void* p) {
    if (!p) return;
    {
        std::lock_guard<std::mutex> lock(g_mem_mutex);
        auto it = g_mem_sizes.find(p);
        ASSERT_NE(it, g_mem_sizes.end()) << "released a pointer the table did not allocate";
        g_mem_live -= (int64_t)it->second;
        g_mem_sizes.erase(it);
    }
    trex::host_memory().release(p);
}

struct step_out {
    trex::step_result r;
    std::vector<float> grads;
};

step_out run_step(trex::dsv4_model& model, const trex::synthetic_batch& batch, trex::step_options opts) {
    model.params().zero_grads();
    step_out o;
    o.r = model.step(batch.view(), opts);
    const auto& p = model.params();
    o.grads.assign(p.grads.data(), p.grads.data() + p.n_floats);
    return o;
}

}  // namespace

TEST(KernelTable, CpuTableIsComplete) {
    const trex::kernel_table& t = trex::cpu_kernels();
    EXPECT_STREQ(t.name, "cpu");
    const std::vector<uintptr_t> w = entry_words(t);
    for (int i = 0; i < kEntries; i++) EXPECT_NE(w[i], 0u) << "entry " << i << " of the CPU kernel table is null";
    EXPECT_EQ(t.linear_fwd, &trex::cpu::linear_fwd);
    EXPECT_EQ(t.cross_entropy_fused, &trex::cpu::cross_entropy_fused);
}

TEST(KernelTable, ModelCallsEveryKernelThroughItsTableWithBitwiseEqualResults) {
    const trex::kernel_table counting = counting_table();
    for (uintptr_t w : entry_words(counting)) ASSERT_NE(w, 0u);
    for (const bool qat : {false, true}) {
        const auto cfg =
            qat ? micro_with_release_numerics() : trex::load_config(trex::test::source_path("configs/v4-micro.json"));
        trex::synthetic_batch_options bo;
        bo.packed = true;
        bo.masked_fraction = 0.1;
        const trex::synthetic_batch batch = trex::make_synthetic_batch(2, 64, cfg.vocab_size, 7, bo);
        trex::dsv4_model plain(cfg);
        trex::dsv4_model through(cfg, counting);
        plain.params().init(1234);
        through.params().init(1234);

        for (bool recompute : {false, true}) {
            SCOPED_TRACE(::testing::Message() << "qat " << qat << " recompute " << recompute);
            trex::step_options opts;
            opts.alpha_bal = 0.01;
            opts.recompute = recompute;
            opts.profile = recompute;  // (the profile's GEMM sections go through the table too)
            g_calls.fill(0);
            const step_out a = run_step(plain, batch, opts);
            EXPECT_EQ(calls_of("linear_fwd"), 0) << "the default model called the counting table";
            const step_out b = run_step(through, batch, opts);
            EXPECT_EQ(a.r.loss, b.r.loss);
            EXPECT_EQ(a.r.lm, b.r.lm);
            EXPECT_EQ(a.r.mtp, b.r.mtp);
            EXPECT_EQ(a.r.bal, b.r.bal);
            EXPECT_EQ(a.r.idx, b.r.idx);
            ASSERT_EQ(a.grads.size(), b.grads.size());
            EXPECT_EQ(0, std::memcmp(a.grads.data(), b.grads.data(), a.grads.size() * sizeof(float)))
                << "gradients through the table differ";
            for (int i = 0; i < kEntries; i++) {
                const std::string name = g_names[i];
                if (ep_only(name) || tp_only(name) || optimizer_only(name) || decode_only(name) ||
                    (name == "gemm_stats_section" && !opts.profile))
                    continue;
                if (qat_only(name) && !qat) {
                    EXPECT_EQ(g_calls[i], 0) << name << " was called without the release's numerics";
                    continue;
                }
                EXPECT_GT(g_calls[i], 0) << name << " was not called through the kernel table";
            }
        }
    }
}

// The model's memory — weight and gradient arenas, the activation arena, the workspace — is allocated through its
// table's `memory` and nowhere else: after a step the bytes live there are exactly those three, and none after the
// model is gone. The step's results are those of the default model.
TEST(KernelTable, DecodingRunsThroughItsTableWithBitwiseEqualResults) {
    const trex::kernel_table counting = counting_table();
    auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    trex::dsv4_model plain(cfg), through(cfg, counting);
    plain.params().init(99, 0.05);
    through.params().init(99, 0.05);
    std::vector<int32_t> ids;
    for (int i = 0; i < 30; i++) ids.push_back(2 + (i * 29) % 250);
    auto run = [&](trex::dsv4_model& m) {
        trex::sequence_cache c = trex::sequence_cache::for_model(cfg, false);
        trex::sequence_cache* seqs[] = {&c};
        std::vector<float> out, logits;
        const int64_t prefill[] = {24}, one[] = {1};
        m.decode(seqs, std::span<const int32_t>(ids.data(), 24), prefill, logits, true);
        out = logits;
        for (size_t t = 24; t < ids.size(); t++) {
            m.decode(seqs, std::span<const int32_t>(ids.data() + t, 1), one, logits, true);
            out.insert(out.end(), logits.begin(), logits.end());
        }
        return out;
    };
    g_calls.fill(0);
    const std::vector<float> a = run(plain);
    EXPECT_EQ(calls_of("linear_fwd_decode"), 0) << "the default model called the counting table";
    const std::vector<float> b = run(through);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
    EXPECT_GT(calls_of("linear_fwd_decode"), 0) << "decoding did not use linear_fwd_decode";
    EXPECT_GT(calls_of("attention_forward"), 0) << "decoding did not call attention_forward through the table";
}

TEST(KernelTable, ModelMemoryIsAllocatedThroughItsTable) {
    trex::kernel_table counting_memory = trex::cpu_kernels();
    counting_memory.memory = {counting_allocate, counting_release};
    auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    const trex::synthetic_batch batch = trex::make_synthetic_batch(2, 64, cfg.vocab_size, 7);
    trex::dsv4_model plain(cfg);
    plain.params().init(1234);
    const step_out a = run_step(plain, batch, {});
    g_mem_live = 0, g_mem_allocations = 0;
    {
        trex::dsv4_model through(cfg, counting_memory);
        through.params().init(1234);
        const int64_t params = 2 * (int64_t)sizeof(float) * through.params().n_floats;
        EXPECT_EQ(g_mem_live, params) << "the weight and gradient arenas";
        const step_out b = run_step(through, batch, {});
        EXPECT_EQ(a.r.loss, b.r.loss);
        EXPECT_EQ(0, std::memcmp(a.grads.data(), b.grads.data(), a.grads.size() * sizeof(float)));
        EXPECT_GT(through.activation_bytes(), 0u);
        EXPECT_GT(through.workspace_bytes(), 0u);
        EXPECT_EQ(g_mem_live, params + (int64_t)through.activation_bytes() + (int64_t)through.workspace_bytes())
            << "the model holds memory the table did not allocate, or the table's allocations are not the model's";
        EXPECT_GE(g_mem_allocations, 4);
    }
    EXPECT_EQ(g_mem_live, 0) << "memory allocated through the table was not released through it";
}

TEST(KernelTable, OptimizerRunsMuonThroughItsTableWithBitwiseEqualResults) {
    const trex::kernel_table counting = counting_table();
    auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    trex::dsv4_model plain(cfg), through(cfg);
    plain.params().init(1234);
    through.params().init(1234);
    // the same gradients in both: a deterministic pattern
    for (trex::dsv4_model* m : {&plain, &through}) {
        auto& p = m->params();
        for (int64_t i = 0; i < p.n_floats; i++) p.grads.data()[i] = (float)((i * 7919 % 1000) - 500) * 1e-5f;
    }
    trex::optimizer a(plain.params(), trex::optim_config{});
    trex::optimizer b(through.params(), trex::optim_config{}, counting);
    ASSERT_FALSE(a.muon_matrices().empty());
    g_calls.fill(0);
    a.step(1e-3);
    EXPECT_EQ(calls_of("gemm") + calls_of("syrk"), 0) << "the default optimizer called the counting table";
    b.step(1e-3);
    EXPECT_GT(calls_of("syrk"), 0) << "syrk was not called through the kernel table";
    EXPECT_GT(calls_of("gemm"), 0) << "gemm was not called through the kernel table";
    const auto& pa = plain.params();
    const auto& pb = through.params();
    EXPECT_EQ(0, std::memcmp(pa.weights.data(), pb.weights.data(), pa.n_floats * sizeof(float)))
        << "weights updated through the table differ";
}
