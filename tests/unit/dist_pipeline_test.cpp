// Pipeline parallelism in one process (docs/distributed.md §9): the schedules as step lists (every micro-batch's
// forward before its backward on every chunk, no deadlock when all ranks are simulated with blocking receives, peak
// in-flight micro-batches as the theory says), the layer partition and its errors, and the stage-wise model API and
// the pipeline runner against dsv4_model::step (bitwise).
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <set>
#include <tuple>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/parallel/communicator.hpp"
#include "trex/parallel/mesh.hpp"
#include "trex/parallel/pipeline.hpp"
#include "trex/parallel/pipeline_runner.hpp"
#include "trex/model/model.hpp"
#include "trex/train/synthetic_batch.hpp"

namespace {

using trex::parallel::pp_action;
using trex::parallel::pp_op;
using trex::parallel::pp_schedule_kind;

trex::model_config micro() {
    return trex::load_config(trex::test::source_path("configs/v4-micro.json"));
}

using trex::test::error_of;

// Runs every rank's list: a send puts a message on the wire at once, a receive blocks until its message is there,
// a forward/backward needs its inputs. Fails on a deadlock (no rank can move) or a broken dependency.
void simulate(pp_schedule_kind kind, int pp, int v, int m) {
    SCOPED_TRACE(testing::Message() << "pp " << pp << " v " << v << " m " << m);
    const int C = pp * v;
    std::vector<std::vector<pp_action>> lists;
    for (int r = 0; r < pp; r++) lists.push_back(trex::parallel::pipeline_schedule(kind, pp, v, m, r));
    // (kind, mb, model chunk) of messages on the wire; activations of model chunk mc, gradients of its input
    std::set<std::tuple<int, int, int>> wire;
    std::set<std::pair<int, int>> fwd_done, bwd_done;  // (mb, model chunk)
    std::vector<size_t> pos(pp, 0);
    for (;;) {
        bool moved = false, all_done = true;
        for (int r = 0; r < pp; r++) {
            while (pos[r] < lists[r].size()) {
                const pp_action& a = lists[r][pos[r]];
                const int mc = a.chunk * pp + r;
                bool ok = true;
                switch (a.op) {
                    case pp_op::recv_forward:
                        ok = wire.erase(std::make_tuple(0, a.mb, mc - 1)) > 0;
                        break;
                    case pp_op::recv_backward:
                        ok = wire.erase(std::make_tuple(1, a.mb, mc + 1)) > 0;
                        break;
                    case pp_op::forward:
                        if (mc > 0) {
                            ASSERT_TRUE(fwd_done.count({a.mb, mc - 1})) << "forward before its input";
                        }
                        ASSERT_FALSE(fwd_done.count({a.mb, mc})) << "two forwards";
                        fwd_done.insert({a.mb, mc});
                        break;
                    case pp_op::backward:
                        ASSERT_TRUE(fwd_done.count({a.mb, mc})) << "backward before forward";
                        if (mc < C - 1) {
                            ASSERT_TRUE(bwd_done.count({a.mb, mc + 1})) << "backward before its gradient";
                        }
                        ASSERT_FALSE(bwd_done.count({a.mb, mc})) << "two backwards";
                        bwd_done.insert({a.mb, mc});
                        break;
                    case pp_op::send_forward:
                        ASSERT_TRUE(fwd_done.count({a.mb, mc}));
                        wire.insert({0, a.mb, mc});
                        break;
                    case pp_op::send_backward:
                        ASSERT_TRUE(bwd_done.count({a.mb, mc}));
                        wire.insert({1, a.mb, mc});
                        break;
                }
                if (!ok) break;  // blocked on a receive
                pos[r]++;
                moved = true;
            }
            all_done = all_done && pos[r] == lists[r].size();
        }
        if (all_done) break;
        ASSERT_TRUE(moved) << "deadlock";
    }
    EXPECT_TRUE(wire.empty()) << "messages nobody received";
    EXPECT_EQ((int)fwd_done.size(), m * C);
    EXPECT_EQ((int)bwd_done.size(), m * C);
}

std::vector<float> grads_of(trex::dsv4_model& model) {
    const auto& p = model.params();
    return std::vector<float>(p.grads.data(), p.grads.data() + p.n_floats);
}

trex::synthetic_batch batch_of(int V, uint32_t seed) {
    trex::synthetic_batch_options o;
    o.packed = true;
    o.masked_fraction = 0.1;
    return trex::make_synthetic_batch(2, 32, V, seed, o);
}

}  // namespace

TEST(PipelineSchedule, OneFOneBListIsPipeDreamFlush) {
    // pp 2, m 4: rank 0 runs one warm-up forward, then 1F1B, then the last backward
    auto s = trex::parallel::pipeline_schedule(pp_schedule_kind::one_f_one_b, 2, 1, 4, 0);
    std::vector<std::string> got;
    for (const pp_action& a : s) got.push_back(std::string(trex::parallel::pp_op_name(a.op)) + std::to_string(a.mb));
    const std::vector<std::string> want = {"forward0",       "send_forward0", "forward1",       "send_forward1",
                                           "recv_backward0", "backward0",     "forward2",       "send_forward2",
                                           "recv_backward1", "backward1",     "forward3",       "send_forward3",
                                           "recv_backward2", "backward2",     "recv_backward3", "backward3"};
    EXPECT_EQ(got, want);
    // the last rank alternates from the start and sends gradients back
    s = trex::parallel::pipeline_schedule(pp_schedule_kind::one_f_one_b, 2, 1, 2, 1);
    got.clear();
    for (const pp_action& a : s) got.push_back(std::string(trex::parallel::pp_op_name(a.op)) + std::to_string(a.mb));
    EXPECT_EQ(got, (std::vector<std::string>{"recv_forward0", "forward0", "backward0", "send_backward0",
                                             "recv_forward1", "forward1", "backward1", "send_backward1"}));
}

TEST(PipelineSchedule, OneFOneBRunsAndKeepsPpMinusRankInFlight) {
    for (int pp = 1; pp <= 5; pp++)
        for (int m = 1; m <= 9; m++) {
            simulate(pp_schedule_kind::one_f_one_b, pp, 1, m);
            for (int r = 0; r < pp; r++) {
                const auto s = trex::parallel::pipeline_schedule(pp_schedule_kind::one_f_one_b, pp, 1, m, r);
                EXPECT_EQ(trex::parallel::peak_in_flight(s), std::min(pp - r, m))
                    << "pp " << pp << " m " << m << " r " << r;
                // a rank's backwards run in micro-batch order (gradient accumulation order)
                int next = 0;
                for (const pp_action& a : s)
                    if (a.op == pp_op::backward) {
                        EXPECT_EQ(a.mb, next++);
                    }
            }
        }
}

TEST(PipelineSchedule, InterleavedRunsWithMegatronWarmup) {
    for (int pp = 1; pp <= 4; pp++)
        for (int v = 2; v <= 3; v++)
            for (int m = pp; m <= 3 * pp; m += pp) {
                simulate(pp_schedule_kind::interleaved, pp, v, m);
                for (int r = 0; r < pp; r++) {
                    const auto s = trex::parallel::pipeline_schedule(pp_schedule_kind::interleaved, pp, v, m, r);
                    const int warmup = m == pp ? m * v : std::min((pp - r - 1) * 2 + (v - 1) * pp, m * v);
                    EXPECT_EQ(trex::parallel::peak_in_flight(s), std::min(warmup + 1, m * v))
                        << "pp " << pp << " v " << v << " m " << m << " r " << r;
                    // per chunk, backwards in micro-batch order
                    std::vector<int> next(v, 0);
                    for (const pp_action& a : s)
                        if (a.op == pp_op::backward) {
                            EXPECT_EQ(a.mb, next[a.chunk]++);
                        }
                }
            }
    EXPECT_EQ(error_of([] { trex::parallel::pipeline_schedule(pp_schedule_kind::interleaved, 2, 2, 3, 0); }),
              "--pp 2 with dist.pp_schedule = \"interleaved\" needs data.grad_accum divisible by 2");
    EXPECT_NEAR(trex::parallel::theoretical_bubble(pp_schedule_kind::one_f_one_b, 2, 1, 4), 1.0 / 5, 1e-15);
    EXPECT_NEAR(trex::parallel::theoretical_bubble(pp_schedule_kind::interleaved, 2, 2, 4), 1.0 / 9, 1e-15);
}

TEST(PipelinePartition, BalancedExplicitAndErrors) {
    trex::model_config cfg = micro();  // 4 layers, 1 hash-routed, MTP
    using trex::parallel::pipeline_partition;
    EXPECT_EQ(pipeline_partition(cfg, 2, 1, {}), (std::vector<int>{2, 2}));
    EXPECT_EQ(pipeline_partition(cfg, 2, 2, {}), (std::vector<int>{1, 1, 1, 1}));
    EXPECT_EQ(pipeline_partition(cfg, 3, 1, {}), (std::vector<int>{2, 1, 1}));
    EXPECT_EQ(pipeline_partition(cfg, 2, 1, {3, 1}), (std::vector<int>{3, 1}));
    EXPECT_EQ(error_of([&] {
                  pipeline_partition(cfg, 2, 1, {1, 2});
              }),
              "dist.pp_layers sums to 3 blocks; the model has 4");
    EXPECT_EQ(error_of([&] {
                  pipeline_partition(cfg, 2, 1, {4, 0});
              }),
              "dist.pp_layers: every model chunk needs at least one block, got 0");
    EXPECT_EQ(error_of([&] {
                  pipeline_partition(cfg, 2, 2, {2, 2});
              }),
              "dist.pp_layers has 2 entries; --pp 2 x dist.pp_virtual 2 needs 4");
    EXPECT_EQ(error_of([&] { pipeline_partition(cfg, 4, 2, {}); }),
              "--pp 4 x dist.pp_virtual 2 = 8 model chunks exceed the model's 4 layers");
    cfg.num_hash_layers = 2;
    EXPECT_EQ(error_of([&] { pipeline_partition(cfg, 4, 1, {}); }),
              "--pp 4 x dist.pp_virtual 1: the first stage must hold the 2 hash-routed layers, leaving too few for "
              "the other 3 model chunks");
    EXPECT_EQ(pipeline_partition(cfg, 3, 1, {}), (std::vector<int>{2, 1, 1}));
    EXPECT_EQ(error_of([&] {
                  pipeline_partition(cfg, 2, 1, {1, 3});
              }),
              "dist.pp_layers: the first stage must hold the 2 hash-routed layer(s), got 1");
    cfg.num_hash_layers = 3;
    EXPECT_EQ(pipeline_partition(cfg, 2, 1, {}), (std::vector<int>{3, 1}));
    // which rank holds which tensor
    const auto pl = trex::parallel::make_pipeline_layout(micro(), pp_schedule_kind::interleaved, 2, 2, 1, {});
    EXPECT_EQ(pl.ranges.size(), 2u);
    EXPECT_EQ(pl.ranges[0].first, 1);  // model chunk 1
    EXPECT_EQ(pl.ranges[1].first, 3);  // model chunk 3 (the last)
    trex::tensor_spec s;
    s.layer = 4;  // MTP
    EXPECT_TRUE(pl.holds(s));
    s.layer = 0;
    EXPECT_FALSE(pl.holds(s));
    s.layer = -1;
    s.is_embedding = true;
    EXPECT_FALSE(pl.holds(s));
    s.is_embedding = false;  // head, norm, hc_head
    EXPECT_TRUE(pl.holds(s));
}

// Two stages with two micro-batches in flight (each state swapped out between its forward and backward), the
// gradient of the MTP lookup handed from the last stage to the first: bitwise dsv4_model::step.
TEST(PipelineStages, StageForwardBackwardEqualsStep) {
    const trex::model_config cfg = micro();
    trex::dsv4_model ref(cfg), staged(cfg);
    ref.params().init(11);
    staged.params().init(11);
    trex::step_options so;
    so.alpha_bal = 0.01;
    so.loss_scale = 0.5;
    const auto b0 = batch_of(cfg.vocab_size, 3), b1 = batch_of(cfg.vocab_size, 4);
    ref.params().zero_grads();
    const trex::step_result r0 = ref.step(b0.view(), so);
    const trex::step_result r1 = ref.step(b1.view(), so);  // gradients accumulate over both
    const std::vector<float> want = grads_of(ref);

    const int L = cfg.n_layers();
    const trex::stage_range s0{0, 2}, s1{2, L};
    const int64_t N = 2 * 32, nd = (int64_t)cfg.hc_mult * cfg.hidden_size;
    staged.params().zero_grads();
    std::vector<trex::forward_state> st(4);  // [mb·2 + stage]
    std::vector<float> h(2 * N * nd), dh(2 * N * nd), de(2 * N * cfg.hidden_size);
    const trex::batch_view views[2] = {b0.view(), b1.view()};
    trex::step_result parts[2][2];
    for (int mb = 0; mb < 2; mb++) {
        staged.swap_state(st[mb * 2]);
        parts[mb][0] = staged.stage_forward(s0, views[mb], so, nullptr, h.data() + mb * N * nd);
        staged.swap_state(st[mb * 2]);
    }
    for (int mb = 0; mb < 2; mb++) {
        staged.swap_state(st[mb * 2 + 1]);
        parts[mb][1] = staged.stage_forward(s1, views[mb], so, h.data() + mb * N * nd, nullptr);
        staged.stage_backward(s1, views[mb], so, nullptr, dh.data() + mb * N * nd,
                              de.data() + mb * N * cfg.hidden_size);
        staged.swap_state(st[mb * 2 + 1]);
    }
    for (int mb = 0; mb < 2; mb++) {
        staged.swap_state(st[mb * 2]);
        staged.stage_backward(s0, views[mb], so, dh.data() + mb * N * nd, nullptr,
                              de.data() + mb * N * cfg.hidden_size);
        staged.swap_state(st[mb * 2]);
    }
    const std::vector<float> got = grads_of(staged);
    // every tensor, the embedding included (the first stage adds each micro-batch's MTP lookup gradient before its
    // own, as step() does)
    const auto& P = staged.params();
    for (size_t t = 0; t < P.specs.size(); t++) {
        const int64_t off = P.offset[t], n = P.specs[t].numel();
        ASSERT_EQ(0, std::memcmp(want.data() + off, got.data() + off, sizeof(float) * n)) << P.specs[t].name;
    }
    // losses: the stages' parts combined in block order
    const trex::step_result* refs[2] = {&r0, &r1};
    for (int mb = 0; mb < 2; mb++) {
        trex::step_result r;
        r.lm = parts[mb][1].lm;
        r.mtp = parts[mb][1].mtp;
        r.block_bal = parts[mb][0].block_bal;
        r.block_idx = parts[mb][0].block_idx;
        for (size_t l = 0; l < r.block_bal.size(); l++) {
            r.block_bal[l] += parts[mb][1].block_bal[l];
            r.block_idx[l] += parts[mb][1].block_idx[l];
        }
        trex::finish_step_result(r, so, L);
        EXPECT_EQ(r.loss, refs[mb]->loss);
        EXPECT_EQ(r.lm, refs[mb]->lm);
        EXPECT_EQ(r.mtp, refs[mb]->mtp);
        EXPECT_EQ(r.bal, refs[mb]->bal);
        EXPECT_EQ(r.idx, refs[mb]->idx);
        EXPECT_GT(r.idx, 0.0);
        for (int l = 0; l <= L; l++) {
            const auto& load = l < 2 ? parts[mb][0].expert_load[l] : parts[mb][1].expert_load[l];
            EXPECT_EQ(load, refs[mb]->expert_load[l]) << "block " << l;
        }
    }
    // one micro-batch at a time, the embedding gradient too
    ref.params().zero_grads();
    staged.params().zero_grads();
    ref.step(b1.view(), so);
    staged.stage_forward(s0, views[1], so, nullptr, h.data());
    staged.swap_state(st[0]);
    staged.stage_forward(s1, views[1], so, h.data(), nullptr);
    staged.stage_backward(s1, views[1], so, nullptr, dh.data(), de.data());
    staged.swap_state(st[0]);
    staged.stage_backward(s0, views[1], so, dh.data(), nullptr, de.data());
    const std::vector<float> want1 = grads_of(ref), got1 = grads_of(staged);
    EXPECT_EQ(0, std::memcmp(want1.data(), got1.data(), sizeof(float) * want1.size()));
    // backward of a range that is not the last forward's
    EXPECT_EQ(error_of([&] { staged.stage_backward(s1, views[1], so, nullptr, dh.data(), de.data()); }),
              "stage: backward of blocks [2, 4) after a forward of [0, 2)");
}

// The runner with one pipeline rank and two virtual chunks (messages to itself through the single-process
// communicator): 4 micro-batches of the interleaved schedule, per-chunk gradient accumulation in micro-batch order,
// against step() over the same micro-batches accumulated the trainer's way. Bitwise.
TEST(PipelineRunner, InterleavedOnOneRankEqualsStep) {
    const trex::model_config cfg = micro();
    trex::dsv4_model ref(cfg), piped(cfg);
    ref.params().init(5);
    piped.params().init(5);
    trex::step_options so;
    so.alpha_bal = 0.01;
    so.loss_scale = 0.25;
    std::vector<trex::synthetic_batch> batches;
    std::vector<trex::batch_view> views;
    for (int k = 0; k < 4; k++) batches.push_back(batch_of(cfg.vocab_size, 20 + k));
    for (const auto& b : batches) views.push_back(b.view());
    const int64_t n = ref.params().n_floats;
    std::vector<float> acc(n);
    std::vector<trex::step_result> want;
    for (int k = 0; k < 4; k++) {
        ref.params().zero_grads();
        want.push_back(ref.step(views[k], so));
        const float* g = ref.params().grads.data();
        for (int64_t i = 0; i < n; i++) acc[i] = k == 0 ? g[i] : acc[i] + g[i];
    }

    auto world = trex::parallel::make_single_communicator();
    const trex::parallel::device_mesh mesh = trex::parallel::make_mesh({1, 1, 1}, 1, 0, cfg);
    auto pl = trex::parallel::make_pipeline_layout(cfg, pp_schedule_kind::interleaved, 1, 2, 0, {});
    EXPECT_EQ(pl.ranges[0].last, 2);
    trex::parallel::pipeline_runner runner(piped, *world, mesh, pl, nullptr);
    auto& P = piped.params();
    P.zero_grads();
    std::vector<float> pacc(n, 0.0f);
    std::vector<int> seen(2, 0);
    const auto parts = runner.run(views, so, [&](int mb, int chunk) {
        EXPECT_EQ(mb, seen[chunk]++);
        for (size_t t = 0; t < P.specs.size(); t++) {
            if (pl.chunk_of(P.specs[t]) != chunk) continue;
            const int64_t off = P.offset[t];
            for (int64_t i = 0; i < P.specs[t].numel(); i++) {
                pacc[off + i] = mb == 0 ? P.grads.data()[off + i] : pacc[off + i] + P.grads.data()[off + i];
                P.grads.data()[off + i] = 0.0f;
            }
        }
    });
    EXPECT_EQ(runner.states_allocated(), 2);  // the schedule's peak in flight
    EXPECT_EQ(0, std::memcmp(acc.data(), pacc.data(), sizeof(float) * n));
    for (int k = 0; k < 4; k++) {
        trex::step_result r = parts[k];
        trex::finish_step_result(r, so, cfg.n_layers());
        EXPECT_EQ(r.loss, want[k].loss);
        EXPECT_EQ(r.expert_load, want[k].expert_load);
    }
}
