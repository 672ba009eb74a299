// The activation plan (trex/model/activations.hpp): every saved tensor of a real step is placed once, aligned, without
// overlap, inside the arena; the plan is the memory the model reports; recompute shares one region sized by the
// largest block; the arena grows only when a plan needs more and the views of a smaller plan keep its memory; the
// key lists the layers build fill the plan's key count exactly (a TREX_CHECK in build_keys, exercised here on CSA,
// HCA and window layers with packed documents, top-k and dense).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "support/test_support.hpp"
#include "trex/base/sanitizer.hpp"
#include "trex/model/activations.hpp"
#include "trex/model/config.hpp"
#include "trex/model/model.hpp"
#include "trex/train/synthetic_batch.hpp"

namespace {

// Every placement 64-byte aligned, inside [0, size), no two sharing a byte.
void expect_disjoint_aligned_inside(std::vector<trex::act_place> places, size_t size) {
    std::sort(places.begin(), places.end(), [](const auto& a, const auto& b) { return a.offset < b.offset; });
    for (size_t i = 0; i < places.size(); i++) {
        EXPECT_EQ(places[i].offset % 64, 0u) << "tensor " << i;
        EXPECT_LE(places[i].offset + places[i].bytes, size) << "tensor " << i << " ends outside the arena";
        if (i > 0 && places[i].bytes > 0) {
            EXPECT_LE(places[i - 1].offset + places[i - 1].bytes, places[i].offset) << "tensors " << i - 1 << ", " << i;
        }
    }
}

trex::model_config micro() {
    return trex::load_config(trex::test::source_path("configs/v4-micro.json"));
}

// One step of v4-micro on B rows of 64 tokens in packed documents; returns the model.
struct stepped {
    trex::dsv4_model model;
    trex::step_result result;
    stepped(const trex::model_config& cfg, int64_t B, const trex::step_options& opts) : model(cfg) {
        model.params().init(7);
        model.params().zero_grads();
        trex::synthetic_batch_options o;
        o.packed = true;  // row 1: documents of 3, 20 and the rest
        auto batch = trex::make_synthetic_batch(B, 64, cfg.vocab_size, 11, o);
        result = model.step(batch.view(), opts);
    }
};

}  // namespace

TEST(ActivationPlan, EveryTensorOfARealStepIsPlacedOnceAlignedAndInsideTheArena) {
    const trex::model_config cfg = micro();
    for (bool recompute : {false, true})
        for (bool dense : {false, true}) {
            trex::step_options opts;
            opts.recompute = recompute;
            opts.dense_csa = dense;
            stepped s(cfg, 2, opts);
            const trex::stage_activations& acts = s.model.activations();
            SCOPED_TRACE(testing::Message() << "recompute " << recompute << " dense " << dense);
            ASSERT_TRUE(std::isfinite(s.result.loss));
            const std::vector<trex::act_place> places = acts.placements();
            if (!recompute) {
                expect_disjoint_aligned_inside(places, acts.bytes());
            } else {
                // the blocks share one region: check the states + heads, then each block's shape on its own
                for (const auto& p : places) EXPECT_LE(p.offset + p.bytes, acts.bytes());
            }
            EXPECT_EQ(s.model.activation_bytes(), acts.bytes()) << "the model reports the plan";
        }
}

TEST(ActivationPlan, RecomputeKeepsLessMemoryAndGivesTheSameBits) {
    const trex::model_config cfg = micro();
    trex::step_options full, rec;
    rec.recompute = true;
    stepped a(cfg, 2, full), r(cfg, 2, rec);
    // same geometry, same shapes: the full plan = shared part + Σ blocks; the recompute plan = shared + max block
    EXPECT_LT(r.model.activations().bytes(), a.model.activations().bytes());
    // the losses and gradients of the two runs are the same bits (the plan changes where tensors live, not values)
    EXPECT_EQ(a.result.loss, r.result.loss);
    EXPECT_EQ(a.result.lm, r.result.lm);
    EXPECT_EQ(a.result.idx, r.result.idx);
    const trex::param_store &pa = a.model.params(), &pr = r.model.params();
    ASSERT_EQ(pa.n_floats, pr.n_floats);
    EXPECT_TRUE(std::equal(pa.grads.data(), pa.grads.data() + pa.n_floats, pr.grads.data()));
}

TEST(ActivationPlan, BlockBytesFollowTheShape) {
    trex::block_act_shape s;
    s.ratio = 0;
    s.N = 10, s.d = 16, s.n = 4, s.rows = 24, s.dc = 8, s.H = 2, s.c = 8, s.groups = 2, s.dg = 4;
    s.keys = 10 * 3, s.E = 4, s.K = 2, s.Is = 8, s.routed = 20, s.a13_width = 16;
    const size_t window = trex::block_act_bytes(s);
    // one more token adds bytes; a CSA layer adds the compressor and the indexer; a dispatcher drops a13
    trex::block_act_shape more = s;
    more.N = 11, more.keys = 11 * 3, more.routed = 22;
    EXPECT_GT(trex::block_act_bytes(more), window);
    trex::block_act_shape csa = s;
    csa.ratio = 4, csa.Nc = 5, csa.HI = 2, csa.cI = 4, csa.ld = 3, csa.kw = 2;
    EXPECT_GT(trex::block_act_bytes(csa), window);
    trex::block_act_shape ep = s;
    ep.a13_width = 0;
    EXPECT_EQ(trex::block_act_bytes(s) - trex::block_act_bytes(ep), (size_t)20 * 16 * sizeof(float));
    // binding gives every view its exact element count
    std::vector<std::byte> mem(trex::block_act_bytes(csa) + 64);
    auto* base = reinterpret_cast<std::byte*>((reinterpret_cast<uintptr_t>(mem.data()) + 63) / 64 * 64);
    trex::block_acts A;
    trex::act_layout bind(base);
    trex::layout_block_acts(bind, A, csa);
    EXPECT_EQ(A.P.size(), (size_t)(csa.keys * csa.H));
    EXPECT_EQ(A.key_offset.size(), (size_t)csa.N + 1);
    EXPECT_EQ(A.iscores.size(), (size_t)(csa.N * csa.ld));
    EXPECT_EQ(A.sel.size(), (size_t)(csa.N * csa.kw));
    EXPECT_EQ(A.moe.a13.size(), (size_t)(csa.routed * csa.a13_width));
    EXPECT_EQ(A.kv_all.size(), (size_t)((csa.N + csa.Nc) * csa.c));
    EXPECT_EQ(A.ld, 3);
    EXPECT_EQ(A.kw, 2);
    EXPECT_EQ(bind.bytes(), trex::block_act_bytes(csa));
}

TEST(ActivationPlan, TheArenaGrowsOnlyWhenAPlanNeedsMore) {
    trex::stage_plan small, big;
    trex::block_act_shape s;
    s.N = 8, s.d = 16, s.n = 4, s.rows = 24, s.dc = 8, s.H = 2, s.c = 8, s.groups = 2, s.dg = 4, s.keys = 24;
    s.E = 4, s.K = 2, s.Is = 8, s.routed = 16, s.a13_width = 16;
    small.states = 3 * 8 * 64;
    small.blocks = {s, s};
    big = small;
    big.blocks.push_back(s);
    trex::stage_activations acts;
    acts.plan(small);
    const size_t b1 = acts.bytes();
    const std::byte* arena = acts.arena();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(arena) % 64, 0u);
    acts.plan(big);
    EXPECT_GT(acts.bytes(), b1);
    const std::byte* grown = acts.arena();
    acts.plan(small);
    EXPECT_EQ(acts.arena(), grown) << "a smaller plan reuses the arena";
    EXPECT_EQ(acts.block(1).y1.size(), (size_t)(8 * 16));
    expect_disjoint_aligned_inside(acts.placements(), acts.bytes());
    // under recompute block(i) rebinds the one entry: the same memory for every block
    trex::stage_plan rec = big;
    rec.recompute = true;
    acts.plan(rec);
    const float* y0 = acts.block(0).y1.data();
    EXPECT_EQ(acts.block(2).y1.data(), y0);
}

TEST(ActivationPlan, InAsanBuildsAccessPastAPlannedTensorIsReported) {
    if (!trex::kAddressSanitizer) GTEST_SKIP() << "the red zones between tensors exist in ASan builds only";
    trex::block_act_shape s;
    s.N = 8, s.d = 16, s.n = 4, s.rows = 24, s.dc = 8, s.H = 2, s.c = 8, s.groups = 2, s.dg = 4, s.keys = 24;
    s.E = 4, s.K = 2, s.Is = 8, s.routed = 16, s.a13_width = 16;
    trex::stage_plan p;
    p.states = 3 * 8 * 64;
    p.blocks = {s};
    trex::stage_activations acts;
    acts.plan(p);
    std::span<int32_t> keys = acts.block(0).key_idx;
    keys[keys.size() - 1] = 7;  // the last planned element is fine
    EXPECT_DEATH(
        {
            volatile int32_t* past = keys.data() + keys.size();
            *past = 7;
        },
        "use-after-poison");
}
