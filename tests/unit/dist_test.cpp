// Distributed building blocks in one process (docs/distributed.md): the single-process communicator, the device
// mesh and its validation, the balanced bucket plan, ZeRO-1 on one rank against the single-process optimizer
// (bitwise), and the EP route arithmetic. The multi-rank layouts run under mpirun as CTest script tests
// (tests/scripts/dist_equivalence.sh, dist_kill_rank.sh).
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/base/rng.hpp"
#include "trex/kernels/cpu/ops.hpp"
#include "trex/model/config.hpp"
#include "trex/optim/optimizer.hpp"
#include "trex/parallel/communicator.hpp"
#include "trex/parallel/context.hpp"
#include "trex/parallel/expert_parallel.hpp"
#include "trex/parallel/mesh.hpp"
#include "trex/parallel/zero_optimizer.hpp"

namespace {

trex::model_config tiny() {
    return trex::load_config(trex::test::source_path("configs/v4-tiny.json"));
}

using trex::test::error_of;

// A deterministic normal stream.
struct normals {
    uint64_t seed, i = 0;
    double normal() { return trex::normal01(seed, 0, i++); }
};

}  // namespace

TEST(DistComm, SingleProcessCollectivesAreCopies) {
    auto c = trex::parallel::make_single_communicator();
    EXPECT_EQ(c->size(), 1);
    std::vector<float> a{1, 2, 3}, b(3, 0.0f);
    c->all_reduce(a.data(), 3, trex::parallel::dtype::f32, trex::parallel::reduce_op::sum);
    EXPECT_EQ(a, (std::vector<float>{1, 2, 3}));
    c->reduce_scatter(a.data(), b.data(), {3}, trex::parallel::dtype::f32);
    EXPECT_EQ(b, a);
    std::vector<int64_t> x{5, 6}, y(2, 0);
    c->all_to_all_v(x.data(), {2}, {0}, y.data(), {2}, {0}, trex::parallel::dtype::i64);
    EXPECT_EQ(y, x);
    // send/recv to self through the mailbox, matched by tag
    int32_t s1 = 7, s2 = 9, r1 = 0, r2 = 0;
    c->send(&s1, 1, trex::parallel::dtype::i32, 0, 1);
    c->send(&s2, 1, trex::parallel::dtype::i32, 0, 2);
    auto h = c->recv_async(&r2, 1, trex::parallel::dtype::i32, 0, 2);
    h->wait();
    c->recv(&r1, 1, trex::parallel::dtype::i32, 0, 1);
    EXPECT_EQ(r1, 7);
    EXPECT_EQ(r2, 9);
    c->barrier();
    EXPECT_NE(error_of([&] { c->send(&s1, 1, trex::parallel::dtype::i32, 1, 0); }).find("destination rank 1"),
              std::string::npos);
}

TEST(DistMesh, FoldsExpertsOverTheStageRanks) {
    const auto cfg = tiny();  // 8 experts, 4 heads, 2 output groups
    const auto m = trex::parallel::make_mesh({1, 1, 2}, 4, 3, cfg);
    EXPECT_EQ(m.dp, 4);
    EXPECT_EQ(m.ep, 2);
    EXPECT_EQ(m.edp, 2);
    EXPECT_EQ(m.dp_rank, 3);
    EXPECT_EQ(m.ep_rank, 1);
    EXPECT_EQ(m.edp_rank, 1);
    EXPECT_EQ(m.expert_first(cfg), 4);
    const auto t = trex::parallel::make_mesh({2, 2, 1}, 8, 5, cfg);  // rank = (pp·dp + dp)·tp + tp
    EXPECT_EQ(t.dp, 2);
    EXPECT_EQ(t.tp_rank, 1);
    EXPECT_EQ(t.dp_rank, 0);
    EXPECT_EQ(t.pp_rank, 1);
    EXPECT_EQ(t.rank_of(1, 1, 0), 5);
    EXPECT_NE(m.describe(cfg).find("rank 3: tp 0 pp 0 dp 3 | ep 1 (experts 4..7) expert-dp 1"), std::string::npos);
}

TEST(DistMesh, ValidationNamesTheFlag) {
    const auto cfg = tiny();
    EXPECT_NE(error_of([&] {
                  trex::parallel::make_mesh({1, 1, 3}, 3, 0, cfg);
              }).find("--ep 3 does not divide the model's 8"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  trex::parallel::make_mesh({1, 1, 4}, 2, 0, cfg);
              }).find("--ep 4 does not divide the 2 ranks"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  trex::parallel::make_mesh({2, 2, 1}, 6, 0, cfg);
              }).find("--tp 2 x --pp 2 = 4"),
              std::string::npos);
    EXPECT_NE(error_of([&] { trex::parallel::make_mesh({3, 1, 1}, 3, 0, cfg); }).find("--tp 3"), std::string::npos);
    EXPECT_NE(error_of([&] {
                  trex::parallel::make_mesh({1, 9, 1}, 9, 0, cfg);
              }).find("--pp 9 exceeds"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  trex::parallel::make_mesh({1, 1, 0}, 1, 0, cfg);
              }).find("--ep must be at least 1"),
              std::string::npos);
}

TEST(DistZero, BalancedAssignmentIsLongestFirstGreedy) {
    const std::vector<double> cost{5, 1, 4, 3, 3, 2};
    const auto owner = trex::parallel::balanced_assignment(cost, 2);
    std::vector<double> load(2, 0.0);
    for (size_t i = 0; i < cost.size(); i++) load[owner[i]] += cost[i];
    EXPECT_EQ(load[0], 9);  // 5, 3, 1 | 4, 3, 2
    EXPECT_EQ(load[1], 9);
    EXPECT_EQ(owner[0], 0);
    EXPECT_EQ(owner[2], 1);
}

TEST(DistZero, PlanKeepsMuonMatricesWholeAndBalances) {
    const auto cfg = tiny();
    trex::param_store p(cfg, true, false);
    trex::optim_config oc;
    std::vector<double> cost;
    std::vector<int> ids;
    for (size_t i = 0; i < p.specs.size(); i++)
        if (p.specs[i].role == trex::tensor_role::weight) {
            cost.push_back(trex::parallel::update_cost(p, (int)i, oc));
            ids.push_back((int)i);
        }
    const auto owner = trex::parallel::balanced_assignment(cost, 4);
    std::vector<double> load(4, 0.0);
    for (size_t k = 0; k < cost.size(); k++) load[owner[k]] += cost[k];
    const double total = std::accumulate(load.begin(), load.end(), 0.0);
    const double mx = *std::max_element(load.begin(), load.end());
    const double biggest = *std::max_element(cost.begin(), cost.end());
    // LPT: the heaviest owner carries at most the ideal share plus one item
    EXPECT_LE(mx, total / 4 + biggest);
    EXPECT_LT(mx / (total / 4), 1.10) << "plan imbalance";
}

// ZeRO-1 on one rank is the single-process optimizer: same updates, bitwise, over several steps with clipping.
TEST(DistZero, OneRankIsBitwiseTheSingleProcessOptimizer) {
    auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    trex::param_store a(cfg), b(cfg);
    a.init(3);
    b.init(3);
    trex::optim_config oc;
    oc.clip_grad_norm = 0.5;
    trex::optimizer ref(a, oc);
    auto world = trex::parallel::make_single_communicator();
    trex::parallel::dist_context dc(*world, {}, cfg);
    trex::parallel::zero_optimizer z(b, oc, *world, dc.replica_groups(b));
    EXPECT_EQ(z.owned_floats(), a.trainable_count());
    normals r{11};
    for (int step = 0; step < 3; step++) {
        for (int64_t i = 0; i < a.n_floats; i++) a.grads.data()[i] = (float)(r.normal() * 1e-3);
        std::memcpy(b.grads.data(), a.grads.data(), sizeof(float) * a.n_floats);
        for (size_t i = 0; i < a.specs.size(); i++)
            if (a.specs[i].role != trex::tensor_role::weight) {
                std::memset(a.g((int)i), 0, sizeof(float) * a.specs[i].numel());
                std::memset(b.g((int)i), 0, sizeof(float) * b.specs[i].numel());
            }
        const auto sa = ref.step(1e-2);
        z.reduce_gradients();
        const double gn = z.grad_norm();
        EXPECT_EQ(gn, sa.grad_norm);
        const auto sb = z.step(1e-2, gn);
        EXPECT_EQ(sa.clip_scale, sb.clip_scale);
        ASSERT_EQ(std::memcmp(a.weights.data(), b.weights.data(), sizeof(float) * a.n_floats), 0) << "step " << step;
    }
    // the gathered state is the single-process optimizer's state
    trex::param_store whole(cfg, true, /*with_grads=*/false);
    std::vector<float> m(a.n_floats, 0.0f), v(a.n_floats, 0.0f);
    z.gather_full(0, &whole, m.data(), v.data());
    const float* w = whole.weights.data();
    for (size_t i = 0; i < a.specs.size(); i++) {
        if (a.specs[i].role != trex::tensor_role::weight) continue;
        const int64_t off = a.offset[i], n = a.specs[i].numel();
        ASSERT_EQ(std::memcmp(m.data() + off, ref.state_m().data() + off, n * 4), 0) << a.specs[i].name;
        ASSERT_EQ(std::memcmp(v.data() + off, ref.state_v().data() + off, n * 4), 0) << a.specs[i].name;
        ASSERT_EQ(std::memcmp(w + off, a.weights.data() + off, n * 4), 0) << a.specs[i].name;
    }
}

// On one rank the EP dispatcher is a local round trip: the same outputs and gradients as the fused kernel.
TEST(DistExpertParallel, OneRankRoundTripMatchesTheKernel) {
    auto world = trex::parallel::make_single_communicator();
    const int64_t N = 37, d = 16, I = 8;
    const int E = 4, K = 2;
    normals r{5};
    std::vector<float> x(N * d), wts(N * K), dy(N * d);
    std::vector<int32_t> sel(N * K);
    for (auto& v : x) v = (float)r.normal();
    for (auto& v : dy) v = (float)r.normal();
    for (int64_t t = 0; t < N; t++) {
        sel[t * K] = (int32_t)(t % E);
        sel[t * K + 1] = (int32_t)((t * 7 + 1) % E == t % E ? (t + 1) % E : (t * 7 + 1) % E);
        wts[t * K] = 0.7f;
        wts[t * K + 1] = 0.4f;
    }
    std::vector<std::vector<float>> W13(E, std::vector<float>(2 * I * d)), W2(E, std::vector<float>(d * I));
    std::vector<const float*> w13, w2;
    for (int e = 0; e < E; e++) {
        for (auto& v : W13[e]) v = (float)(0.2 * r.normal());
        for (auto& v : W2[e]) v = (float)(0.2 * r.normal());
        w13.push_back(W13[e].data());
        w2.push_back(W2[e].data());
    }
    trex::model_config cfg = tiny();
    cfg.n_routed_experts = E;
    trex::parallel::expert_parallel ep(*world, cfg, true);
    trex::moe_routing_storage b1, b2;
    trex::moe_routing s1 = b1.view(N, E, K, I), s2 = b2.view(N, E, K, I);
    std::vector<float> y1(N * d), y2(N * d);
    trex::cpu::moe_experts_forward(y1.data(), s1, x.data(), sel.data(), wts.data(), w13.data(), w2.data(), N, d, E, K,
                                   I, 10.0);
    int ran = 0;
    ep.forward(0, y2.data(), s2, x.data(), sel.data(), wts.data(), w13.data(), w2.data(), N, d, E, K, I, 10.0,
               [&] { ran++; });
    EXPECT_EQ(ran, 1);
    EXPECT_LT(trex::test::rel_error(y2.data(), y1.data(), (long)y1.size()), 1e-6);
    std::vector<std::vector<float>> G1(2 * E), G2(2 * E);
    std::vector<float*> g13a, g2a, g13b, g2b;
    for (int e = 0; e < E; e++) {
        G1[e].assign(2 * I * d, 0.0f), G1[E + e].assign(d * I, 0.0f);
        G2[e].assign(2 * I * d, 0.0f), G2[E + e].assign(d * I, 0.0f);
        g13a.push_back(G1[e].data()), g2a.push_back(G1[E + e].data());
        g13b.push_back(G2[e].data()), g2b.push_back(G2[E + e].data());
    }
    std::vector<float> dx1(N * d), dx2(N * d), dw1(N * K), dw2(N * K);
    trex::cpu::moe_experts_backward(dx1.data(), dw1.data(), g13a.data(), g2a.data(), dy.data(), s1, x.data(),
                                    wts.data(), w13.data(), w2.data(), N, d, E, K, I, 10.0);
    ep.backward(0, dx2.data(), dw2.data(), g13b.data(), g2b.data(), dy.data(), s2, x.data(), wts.data(), w13.data(),
                w2.data(), N, d, E, K, I, 10.0, [&] { ran++; });
    EXPECT_EQ(ran, 2);
    EXPECT_LT(trex::test::rel_error(dx2.data(), dx1.data(), (long)dx1.size()), 1e-6);
    EXPECT_LT(trex::test::rel_error(dw2.data(), dw1.data(), (long)dw1.size()), 1e-6);
    for (int e = 0; e < 2 * E; e++)
        EXPECT_LT(trex::test::rel_error(G2[e].data(), G1[e].data(), (long)G1[e].size()), 1e-6) << e;
}

// Bad layouts are one-line errors naming the flag, exit status 1 (one process: the world size is 1).
TEST(DistCli, BadLayoutsNameTheFlag) {
    const std::string t = trex::test::trex_binary() + " train --steps 1 --out /tmp/trex_dist_cli_unused ";
    auto r = trex::test::run_command(t + "--ep 2 2>&1");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.out.find("trex: error: --ep 2 does not divide the 1 ranks of a pipeline stage"), std::string::npos)
        << r.out;
    r = trex::test::run_command(t + "--pp 2 2>&1");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.out.find("--tp 1 x --pp 2 = 2 does not divide the world size 1"), std::string::npos) << r.out;
    r = trex::test::run_command(t + "--set dist.timeout=0 2>&1");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.out.find("key 'dist.timeout'"), std::string::npos) << r.out;
}

// An EP rank's store (param_store's holds predicate, as parallel::parallelize sets it): storage for its routed
// experts only, the held tensors initialised and taken from a whole store exactly as the whole model has them.
TEST(DistExpertParallel, ARankStoresOnlyItsExperts) {
    auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    const int E = cfg.n_routed_experts;
    ASSERT_GE(E, 2);
    auto mine = [E](const trex::tensor_spec& s) { return s.expert < E / 2; };  // EP rank 0 of 2 (dense: expert −1)
    trex::param_store whole(cfg, true, false), rank(cfg, true, true, {}, mine);
    whole.init(5);
    rank.init(5);
    EXPECT_FALSE(rank.holds_all());
    EXPECT_TRUE(whole.holds_all());
    int64_t expert_floats = 0;
    for (size_t i = 0; i < whole.specs.size(); i++)
        if (whole.specs[i].expert >= 0) expert_floats += whole.specs[i].numel();
    EXPECT_LE(rank.n_floats, whole.n_floats - expert_floats / 2);  // half the experts' floats are gone
    trex::param_store taken(cfg, true, false, {}, mine);
    trex::take_shards(taken, whole);
    for (size_t i = 0; i < whole.specs.size(); i++) {
        const trex::tensor_spec& s = whole.specs[i];
        if (s.role == trex::tensor_role::hash_table) continue;
        EXPECT_EQ(rank.held[i], s.expert < E / 2) << s.name;
        if (!rank.held[i]) {
            EXPECT_EQ(rank.specs[i].numel(), 0) << s.name;
            continue;
        }
        ASSERT_EQ(rank.specs[i].numel(), s.numel()) << s.name;
        EXPECT_EQ(std::memcmp(rank.w((int)i), whole.w((int)i), sizeof(float) * s.numel()), 0) << s.name;
        EXPECT_EQ(std::memcmp(taken.w((int)i), whole.w((int)i), sizeof(float) * s.numel()), 0) << s.name;
    }
}
