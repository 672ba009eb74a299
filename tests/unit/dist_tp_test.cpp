// Tensor parallelism in one process (docs/distributed.md §5): v4-tiny split over 2 TP ranks, each rank a thread
// with its own model holding only its slices of the split tensors and an in-memory all-reduce that adds in rank
// order like parallel::tp_group. The ranks' losses must equal the single-model step's, their replicated gradients must
// be identical to each other, and every gradient (the TP-split ones put together from the ranks' slices) must equal
// the single model's.
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <tuple>

#include "support/test_support.hpp"
#include "trex/kernels/cpu/ops.hpp"
#include "trex/model/config.hpp"
#include "trex/model/model.hpp"
#include "trex/parallel/communicator.hpp"
#include "trex/parallel/tensor_parallel.hpp"
#include "trex/train/synthetic_batch.hpp"

namespace {

trex::model_config tiny() {
    return trex::load_config(trex::test::source_path("configs/v4-tiny.json"));
}

// The ranks of an in-process TP group: each all-reduce publishes its buffer, waits for the others, and sums the
// buffers in rank order.
struct thread_group {
    explicit thread_group(int n) : size(n), bar(n), slots(n) {}
    int size;
    std::barrier<> bar;
    std::vector<std::vector<double>> slots;  // exact copies of floats or doubles
};

class thread_tp : public trex::tensor_parallel {
   public:
    thread_tp(thread_group& g, int rank) : g_(g), rank_(rank) {}
    int size() const override { return g_.size; }
    int rank() const override { return rank_; }
    void all_reduce_sum(float* x, int64_t n) override { reduce(x, n); }
    void all_reduce_sum(double* x, int64_t n) override { reduce(x, n); }
    void all_reduce_max(float* x, int64_t n) override {
        calls++;
        g_.slots[rank_].assign(x, x + n);
        g_.bar.arrive_and_wait();
        for (int64_t i = 0; i < n; i++)
            for (int r = 0; r < g_.size; r++)
                x[i] = r == 0 ? (float)g_.slots[0][i] : std::max(x[i], (float)g_.slots[r][i]);
        g_.bar.arrive_and_wait();
    }
    int64_t calls = 0;

   private:
    template <class T>
    void reduce(T* x, int64_t n) {
        calls++;
        g_.slots[rank_].assign(x, x + n);
        g_.bar.arrive_and_wait();
        for (int64_t i = 0; i < n; i++) {
            T s = (T)g_.slots[0][i];
            for (int r = 1; r < g_.size; r++) s += (T)g_.slots[r][i];
            x[i] = s;
        }
        g_.bar.arrive_and_wait();  // nobody overwrites a slot before everyone has read it
    }
    thread_group& g_;
    int rank_;
};

// Routed experts through a dispatcher that computes them here, on whatever tokens it is given: under TP the model
// then splits the tokens over the ranks instead of the experts' intermediate dimension (the TP x EP path, with the
// expert parallelism itself left out).
class local_dispatcher : public trex::expert_dispatcher {
   public:
    void forward(int, float* y, trex::moe_routing& st, const float* x, const int32_t* sel, const float* weight,
                 const float* const* w13, const float* const* w2, int64_t N, int64_t d, int E, int K, int64_t I,
                 double limit, const std::function<void()>& overlap) override {
        trex::cpu::moe_experts_forward(y, st, x, sel, weight, w13, w2, N, d, E, K, I, limit);
        overlap();
    }
    void backward(int, float* dx, float* dweight, float* const* dw13, float* const* dw2, const float* dy,
                  const trex::moe_routing& st, const float* x, const float* weight, const float* const* w13,
                  const float* const* w2, int64_t N, int64_t d, int E, int K, int64_t I, double limit,
                  const std::function<void()>& overlap) override {
        overlap();
        trex::cpu::moe_experts_backward(dx, dweight, dw13, dw2, dy, st, x, weight, w13, w2, N, d, E, K, I, limit);
    }
};

struct tp_case {
    bool recompute = false;
    bool token_split = false;  // local_dispatcher on every rank: whole experts, disjoint tokens
};

double max_abs(const float* a, int64_t n) {
    double m = 0;
    for (int64_t i = 0; i < n; i++) m = std::max(m, std::fabs((double)a[i]));
    return m;
}

double max_diff(const float* a, const float* b, int64_t n) {
    double m = 0;
    for (int64_t i = 0; i < n; i++) m = std::max(m, std::fabs((double)a[i] - (double)b[i]));
    return m;
}

void check_tp2(const tp_case& tc) {
    const trex::model_config cfg = tiny();
    trex::synthetic_batch_options bo;
    bo.packed = true;
    const trex::synthetic_batch batch = trex::make_synthetic_batch(2, 64, cfg.vocab_size, 11, bo);
    trex::step_options so;
    so.recompute = tc.recompute;
    so.loss_scale = 0.5;
    so.keep_logits = true;  // the vocabulary-parallel head gathers them

    trex::dsv4_model full(cfg);
    full.params().init(5);
    full.params().zero_grads();
    const trex::step_result ref = full.step(batch.view(), so);

    constexpr int T = 2;
    thread_group group(T);
    std::vector<std::unique_ptr<trex::dsv4_model>> ranks;
    std::vector<std::unique_ptr<thread_tp>> tps;
    std::vector<local_dispatcher> dispatchers(T);
    std::vector<trex::step_result> res(T);
    for (int r = 0; r < T; r++) {
        ranks.push_back(std::make_unique<trex::dsv4_model>(cfg));
        tps.push_back(std::make_unique<thread_tp>(group, r));
        // the ranks hold only their slices, initialised to the single model's values there
        ranks[r]->set_tensor_parallel(tps[r].get(), /*experts_split=*/!tc.token_split);
        if (tc.token_split) ranks[r]->set_expert_dispatcher(&dispatchers[r]);
        ranks[r]->params().init(5);
        ranks[r]->params().zero_grads();
    }
    // TP2 holds half of the split tensors (the vocabulary rows of embed/head included) and the whole replicated ones
    // (norms, wq_a, the KV head, compressor, indexer, router, mHC: 11 % of v4-tiny): measured 0.5545 of the single
    // model's floats (0.633 while embed.weight and head.weight were replicated). With whole experts (token split)
    // every rank here holds all of them, as one EP rank of a size-1 EP group would.
    const double held = (double)ranks[0]->params().n_floats / (double)full.params().n_floats;
    std::printf("tp2 rank 0 holds %.4f of the single model's parameter floats\n", held);
    if (!tc.token_split) EXPECT_LT(held, 0.56);
    std::vector<std::thread> threads;
    for (int r = 0; r < T; r++) threads.emplace_back([&, r] { res[r] = ranks[r]->step(batch.view(), so); });
    for (auto& t : threads) t.join();
    EXPECT_GT(tps[0]->calls, 0);

    // losses: the same bits on every TP rank, and the single model's within 1e-6
    for (int r = 1; r < T; r++) {
        EXPECT_EQ(res[r].loss, res[0].loss);
        EXPECT_EQ(res[r].idx, res[0].idx);
        EXPECT_EQ(res[r].expert_load, res[0].expert_load);
    }
    EXPECT_EQ(res[0].expert_load, ref.expert_load);
    // the logits gathered from the ranks' vocabulary columns: the same bits on both ranks, the single model's values
    ASSERT_EQ(ranks[0]->logits().size(), full.logits().size());
    EXPECT_EQ(ranks[0]->logits(), ranks[1]->logits());
    const double lmax = max_abs(full.logits().data(), (int64_t)full.logits().size());
    EXPECT_LT(max_diff(ranks[0]->logits().data(), full.logits().data(), (int64_t)full.logits().size()), 1e-5 * lmax);
    for (auto [got, want, what] : {std::tuple{res[0].loss, ref.loss, "loss"},
                                   {res[0].lm, ref.lm, "lm"},
                                   {res[0].mtp, ref.mtp, "mtp"},
                                   {res[0].bal, ref.bal, "bal"},
                                   {res[0].idx, ref.idx, "idx"}})
        EXPECT_NEAR(got, want, 1e-6 * std::fabs(want)) << what;

    // gradients: every element within 3e-5 of its tensor's largest |g|, and the whole gradient within 3e-6 relative
    // L2 distance. A few tensors' gradients are sums that cancel to ~1e-10 (the MTP head's mHC scale) while their
    // terms are ~1e-6: their rounding is that of the terms, so the scale is floored at 1e-3 of the model's largest
    // gradient. Measured (2026-11-29): 1.0e-5 (an mHC base, whose gradient also cancels) and 7.9e-7 L2; most tensors
    // ~1e-6. That is float rounding, not a missing term: the TP sums (wo_b, w2, dkv, dqr, ...) add in another order,
    // and the same single model run with 2 OpenMP threads instead of 1 deviates 3.0e-6 and 2.7e-7 L2 from itself.
    trex::param_store& P = full.params();
    double gmax = 0;
    for (size_t i = 0; i < P.specs.size(); i++)
        if (P.specs[i].role == trex::tensor_role::weight)
            gmax = std::max(gmax, max_abs(P.g((int)i), P.specs[i].numel()));
    double worst = 0, l2_diff = 0, l2_ref = 0;
    std::string worst_name;
    int split = 0;
    for (size_t i = 0; i < P.specs.size(); i++) {
        const trex::tensor_spec& s = P.specs[i];
        if (s.role != trex::tensor_role::weight) continue;
        const int64_t n = s.numel();
        const trex::param_store& P0 = ranks[0]->params();
        std::vector<float> g(n);
        if (P0.sharded((int)i)) {
            split++;
            // the ranks' slices of the whole gradient, each at its local shape
            EXPECT_EQ(P0.specs[i].numel() * T, n) << s.name;
            EXPECT_EQ(P0.full_shape((int)i), s.shape) << s.name;
            for (int r = 0; r < T; r++)
                trex::tp_put_shard(g.data(), ranks[r]->params().g((int)i), s.shape, P0.split[i], r, T);
        } else if (tc.token_split && s.expert >= 0) {
            // whole experts, each rank's tokens: the sum over the ranks (what the expert-DP reduction does)
            std::memcpy(g.data(), P0.g((int)i), sizeof(float) * n);
            const float* g1 = ranks[1]->params().g((int)i);
            for (int64_t k = 0; k < n; k++) g[k] += g1[k];
        } else {
            std::memcpy(g.data(), P0.g((int)i), sizeof(float) * n);
            EXPECT_EQ(std::memcmp(g.data(), ranks[1]->params().g((int)i), sizeof(float) * n), 0)
                << s.name << ": a replicated gradient differs between the TP ranks";
        }
        const double d = max_diff(g.data(), P.g((int)i), n) / std::max(max_abs(P.g((int)i), n), 1e-3 * gmax);
        if (d > worst) worst = d, worst_name = s.name;
        for (int64_t k = 0; k < n; k++) {
            const double ref_k = P.g((int)i)[k];
            l2_diff += (g[k] - ref_k) * (g[k] - ref_k);
            l2_ref += ref_k * ref_k;
        }
    }
    EXPECT_GT(split, 0);
    std::printf(
        "tp2 (recompute %d, token split %d): loss %.9g vs %.9g, largest gradient deviation %.3g (relative to the "
        "tensor's "
        "largest value, floored at 1e-3 of the model's) in %s; relative L2 distance %.3g\n",
        (int)tc.recompute, (int)tc.token_split, res[0].loss, ref.loss, worst, worst_name.c_str(),
        std::sqrt(l2_diff / l2_ref));
    EXPECT_LT(worst, 3e-5) << worst_name;
    EXPECT_LT(std::sqrt(l2_diff / l2_ref), 3e-6);
}

}  // namespace

TEST(DistTensorParallel, TwoRanksMatchTheSingleModel) {
    check_tp2({});
}

TEST(DistTensorParallel, TwoRanksMatchTheSingleModelUnderRecompute) {
    check_tp2({.recompute = true});
}

TEST(DistTensorParallel, TwoRanksWithWholeExpertsSplitTheTokens) {
    check_tp2({.token_split = true});
}

TEST(DistTensorParallel, OneRankGroupIsTheIdentity) {
    auto c = trex::parallel::make_single_communicator();
    trex::parallel::tp_group g(*c);
    EXPECT_EQ(g.size(), 1);
    std::vector<float> x{1.5f, -2.0f};
    g.all_reduce_sum(x.data(), 2);
    EXPECT_EQ(x, (std::vector<float>{1.5f, -2.0f}));
}

TEST(DistTensorParallel, ShardedTensorsAreTheColumnAndRowParallelOnes) {
    const trex::model_config cfg = tiny();
    trex::param_store p(cfg);
    auto split = [&](const std::string& n, bool experts = true) {
        return trex::tp_split_of(p.specs[p.index(n)], experts);
    };
    using trex::tp_split;
    EXPECT_EQ(split("layers.0.attn.wq_b.weight"), tp_split::rows);
    EXPECT_EQ(split("layers.0.attn.attn_sink"), tp_split::rows);
    EXPECT_EQ(split("layers.0.attn.wo_a.weight"), tp_split::rows);
    EXPECT_EQ(split("layers.0.attn.wo_b.weight"), tp_split::cols);
    EXPECT_EQ(split("layers.0.ffn.shared_experts.w1.weight"), tp_split::rows);
    EXPECT_EQ(split("layers.0.ffn.shared_experts.w2.weight"), tp_split::cols);
    EXPECT_EQ(split("layers.0.ffn.experts.0.w1.weight"), tp_split::rows);
    EXPECT_EQ(split("layers.0.ffn.experts.0.w2.weight"), tp_split::cols);
    EXPECT_EQ(split("layers.0.ffn.experts.0.w1.weight", false), tp_split::none);  // EP: whole experts
    EXPECT_EQ(split("layers.0.attn.wq_a.weight"), tp_split::none);
    EXPECT_EQ(split("layers.0.attn.wkv.weight"), tp_split::none);
    EXPECT_EQ(split("layers.0.ffn.gate.weight"), tp_split::none);
    EXPECT_EQ(split("embed.weight"), tp_split::rows);  // vocabulary parallel
    EXPECT_EQ(split("head.weight"), tp_split::rows);
    EXPECT_EQ(split("norm.weight"), tp_split::none);
    EXPECT_EQ(split("hc_head_fn"), tp_split::none);
    for (const auto& s : p.specs) {
        if (s.is_indexer) {
            EXPECT_EQ(trex::tp_split_of(s, true), tp_split::none) << s.name;
        }
    }
}

// A TP rank's store: the split tensors at their local shapes, initialised to the whole model's values there; the
// slices put back together are the whole tensor, and take_shards of a whole store gives the same slices.
TEST(DistTensorParallel, SlicesOfAStoreAreTheWholeModelsValues) {
    const trex::model_config cfg = tiny();
    trex::param_store whole(cfg, true, false);
    whole.init(9);
    constexpr int T = 2;
    std::vector<std::unique_ptr<trex::param_store>> ranks;
    for (int r = 0; r < T; r++) {
        ranks.push_back(std::make_unique<trex::param_store>(cfg, true, true, trex::tp_layout{r, T, true}));
        ranks[r]->init(9);
    }
    const int wq_b = whole.index("layers.0.attn.wq_b.weight"), wo_b = whole.index("layers.0.attn.wo_b.weight");
    EXPECT_EQ(ranks[0]->specs[wq_b].shape[0] * T, whole.specs[wq_b].shape[0]);
    EXPECT_EQ(ranks[0]->specs[wo_b].shape[1] * T, whole.specs[wo_b].shape[1]);
    int64_t split_floats = 0, all_floats = 0;
    for (size_t i = 0; i < whole.specs.size(); i++) {
        const trex::tensor_spec& s = whole.specs[i];
        if (s.role == trex::tensor_role::hash_table) continue;
        all_floats += s.numel();
        std::vector<float> back(s.numel());
        for (int r = 0; r < T; r++)
            trex::tp_put_shard(back.data(), ranks[r]->w((int)i), s.shape, ranks[r]->split[i], r, T);
        EXPECT_EQ(std::memcmp(back.data(), whole.w((int)i), sizeof(float) * s.numel()), 0) << s.name;
        if (ranks[0]->sharded((int)i)) split_floats += s.numel();
    }
    // the split tensors are most of the model's floats: a rank holds about half of them
    EXPECT_GT(split_floats, all_floats / 2);
    trex::param_store taken(cfg, true, false, trex::tp_layout{1, T, true});
    trex::take_shards(taken, whole);
    EXPECT_EQ(std::memcmp(taken.weights.data(), ranks[1]->weights.data(), sizeof(float) * taken.n_floats), 0);
    EXPECT_EQ(taken.tables, whole.tables);
}
