// The step's scratch workspace (trex/model/workspace.hpp): scoped lifetimes, no overlap, stable buffers across an
// overflow, one block of the high-water size afterwards; and the model's use of it (no growth after the first step).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/model/model.hpp"
#include "trex/model/workspace.hpp"
#include "trex/train/synthetic_batch.hpp"

namespace {

bool aligned64(const float* p) {
    return reinterpret_cast<uintptr_t>(p) % 64 == 0;
}

// [a, a+na) and [b, b+nb) share no float
bool disjoint(const float* a, size_t na, const float* b, size_t nb) {
    return a + na <= b || b + nb <= a;
}

void fill(float* p, size_t n, float v) {
    for (size_t i = 0; i < n; i++) p[i] = v + (float)i;
}

bool holds(const float* p, size_t n, float v) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != v + (float)i) return false;
    return true;
}

}  // namespace

TEST(Workspace, LiveBuffersAreAlignedAndDisjointAndAClosedScopeIsReused) {
    trex::workspace ws;
    trex::workspace::scope outer(ws);
    float* a = outer.floats(100);
    float* b = outer.floats(3);
    EXPECT_TRUE(aligned64(a));
    EXPECT_TRUE(aligned64(b));
    EXPECT_TRUE(disjoint(a, 100, b, 3));
    float* c1 = nullptr;
    {
        trex::workspace::scope inner(ws);
        EXPECT_EQ(ws.open_scopes(), 2u);
        c1 = inner.floats(50);
        EXPECT_TRUE(disjoint(c1, 50, a, 100));
        EXPECT_TRUE(disjoint(c1, 50, b, 3));
    }
    trex::workspace::scope again(ws);
    EXPECT_EQ(again.floats(50), c1);  // the closed scope's memory is handed out again
}

TEST(Workspace, OnlyTheInnermostScopeHandsOutBuffers) {
    trex::workspace ws;
    trex::workspace::scope outer(ws);
    trex::workspace::scope inner(ws);
    EXPECT_THROW(outer.floats(8), trex::error);
    EXPECT_NE(inner.floats(8), nullptr);
}

TEST(Workspace, AnOverflowMovesNoBufferAndTheNextStepFitsInOneBlock) {
    trex::workspace ws;
    const size_t big = size_t(1) << 20;  // 4 MiB, beyond the first block
    std::vector<const float*> first;
    {
        trex::workspace::scope step(ws);
        float* a = step.floats(1000);
        fill(a, 1000, 1.0f);
        {
            trex::workspace::scope s(ws);
            float* b = s.floats(big);  // overflows
            fill(b, big, 2.0f);
            float* c = s.floats(big);  // overflows again
            fill(c, big, 3.0f);
            EXPECT_TRUE(holds(a, 1000, 1.0f));
            EXPECT_TRUE(holds(b, big, 2.0f));
        }
        EXPECT_TRUE(holds(a, 1000, 1.0f));
    }
    const size_t want = (1008 + 2 * big) * sizeof(float);  // 1000 rounded up to 64 bytes
    EXPECT_EQ(ws.high_water_bytes(), want);
    EXPECT_EQ(ws.capacity_bytes(), want);  // one block of the high-water size
    {
        trex::workspace::scope step(ws);
        float* a = step.floats(1000);
        trex::workspace::scope s(ws);
        float* b = s.floats(big);
        float* c = s.floats(big);
        EXPECT_EQ(b, a + 1008);  // one contiguous block: nothing allocated
        EXPECT_EQ(c, b + big);
    }
    EXPECT_EQ(ws.capacity_bytes(), want);
}

TEST(Workspace, TheModelsStepsLeaveNoScopeOpenAndStopGrowingAfterTheFirst) {
    auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    trex::dsv4_model model(cfg);
    model.params().init(1234);
    trex::synthetic_batch_options o;
    o.packed = true;
    const auto batch = trex::make_synthetic_batch(2, 64, cfg.vocab_size, 7, o);
    trex::step_options opts;
    for (bool recompute : {false, true}) {
        opts.recompute = recompute;
        model.params().zero_grads();
        model.step(batch.view(), opts);
        const size_t after_first = model.workspace_bytes();
        EXPECT_GT(after_first, 0u);
        model.step(batch.view(), opts);
        EXPECT_EQ(model.workspace_bytes(), after_first) << "recompute " << recompute;
    }
}
