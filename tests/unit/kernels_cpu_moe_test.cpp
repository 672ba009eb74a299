// Fast MoE kernels against the reference in double: router (score + bias selection with ties, hash routing) and its
// backward, clamped SwiGLU, the routed experts (permuted GEMMs with a moe_state kept from forward to backward,
// including an expert that receives no token) and the sequence-wise balance loss.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "support/cpu_compare.hpp"
#include "trex/kernels/cpu/ops.hpp"
#include "trex/kernels/ref/ops.hpp"

using namespace trex;
using namespace trex::test;
using std::vector;

namespace {

std::string tag(const std::string& op, int64_t N, const std::string& extra = "") {
    return op + (N > 64 ? " [tiny]" : " [small]") + (extra.empty() ? "" : " " + extra);
}

// ---------------------------------------------------------------- router
void check_router(int64_t N, int E, int K, bool hash, uint64_t seed) {
    const double rs = 1.5;
    vector<double> logits = randf(N * E, seed);
    // a few tokens with all logits equal (ties broken toward the lower expert id) and large / small logits
    for (int e = 0; e < E; e++) {
        logits[1 * E + e] = 0.25;
        logits[4 * E + e] = e % 2 ? 3.0 : -2.0;
    }
    logits[2 * E] = 12.0;
    logits[2 * E + 1] = -12.0;
    const vector<double> bias = hash ? vector<double>() : randf(E, seed + 1, 0.1);
    vector<int32_t> hash_sel;
    if (hash) {
        std::mt19937 g((uint32_t)seed);
        for (int64_t t = 0; t < N; t++) {
            vector<int32_t> ex(E);
            for (int e = 0; e < E; e++) ex[e] = e;
            std::shuffle(ex.begin(), ex.end(), g);
            hash_sel.insert(hash_sel.end(), ex.begin(), ex.begin() + K);
        }
    }
    const std::string ex = hash ? "hash" : "score+bias";
    vector<int32_t> sel(N * K), self(N * K, -5);
    vector<double> weight(N * K), s(N * E);
    vector<float> weightf(N * K), sf(N * E);
    const vector<float> lf = to_f(logits), bf = to_f(bias);
    ref::router_forward<double>(sel.data(), weight.data(), s.data(), logits.data(), hash ? nullptr : bias.data(),
                                hash ? hash_sel.data() : nullptr, N, E, K, rs);
    cpu::router_forward(self.data(), weightf.data(), sf.data(), lf.data(), hash ? nullptr : bf.data(),
                        hash ? hash_sel.data() : nullptr, N, E, K, rs);
    EXPECT_EQ(self, sel) << ex;  // same experts in the same slot order
    expect_close(tag("router_forward s", N, ex), sf, s);
    expect_close(tag("router_forward weight", N, ex), weightf, weight);
    // without bias
    if (!hash) {
        ref::router_forward<double>(sel.data(), weight.data(), s.data(), logits.data(), nullptr, nullptr, N, E, K, rs);
        cpu::router_forward(self.data(), weightf.data(), sf.data(), lf.data(), nullptr, nullptr, N, E, K, rs);
        EXPECT_EQ(self, sel) << "no bias";
        expect_close(tag("router_forward weight", N, "no bias"), weightf, weight);
    }

    // backward, with and without the extra score gradient (the balance loss); each side its own s and weight
    const vector<double> dweight = randf(N * K, seed + 2), ds_extra = randf(N * E, seed + 3, 0.1);
    for (bool extra : {false, true}) {
        vector<double> dl(N * E);
        ref::router_backward(dl.data(), dweight.data(), extra ? ds_extra.data() : nullptr, logits.data(), s.data(),
                             sel.data(), weight.data(), N, E, K, rs);
        vector<float> dlf(N * E, 3.0f);
        cpu::router_backward(dlf.data(), to_f(dweight).data(), extra ? to_f(ds_extra).data() : nullptr, lf.data(),
                             sf.data(), sel.data(), weightf.data(), N, E, K, rs);
        expect_close(tag("router_backward dlogits", N, ex + (extra ? " + ds_extra" : "")), dlf, dl);
    }
}

// ---------------------------------------------------------------- swiglu
void check_swiglu(int64_t n, int64_t I, double limit, uint64_t seed) {
    vector<double> a13 = randf(n * 2 * I, seed, 8.0);
    if (limit > 0) {  // exact boundary values: the gradient passes at ±L (torch.clamp convention)
        a13[0] = limit;
        a13[I] = limit;
        a13[2 * I + 1] = -limit;
        a13[I + 1] = -limit;
        a13[2] = limit * 1.5;
        a13[I + 2] = -limit * 1.5;
    }
    int n_clamped = 0;
    for (double v : a13) n_clamped += limit > 0 && std::fabs(v) > limit;
    const std::string ex = "L=" + std::to_string(limit).substr(0, 4) + " clamped=" + std::to_string(n_clamped);
    vector<double> h(n * I);
    ref::swiglu_forward(h.data(), a13.data(), n, I, limit);
    const vector<float> af = to_f(a13);
    vector<float> hf(n * I, 3.0f);
    cpu::swiglu_forward(hf.data(), af.data(), n, I, limit);
    expect_close(tag("swiglu_forward h", n, ex), hf, h);
    const vector<double> dh = randf(n * I, seed + 1);
    vector<double> da(n * 2 * I);
    ref::swiglu_backward(da.data(), dh.data(), a13.data(), n, I, limit);
    vector<float> daf(n * 2 * I, 3.0f);
    cpu::swiglu_backward(daf.data(), to_f(dh).data(), af.data(), n, I, limit);
    expect_close(tag("swiglu_backward da13", n, ex), daf, da);
    if (limit > 0) {
        EXPECT_GT(n_clamped, 0);
        EXPECT_NE(daf[0], 0.0f) << "a1 == L passes the gradient";
        EXPECT_NE(daf[I], 0.0f) << "a3 == L passes the gradient";
        EXPECT_NE(daf[I + 1], 0.0f) << "a3 == −L passes the gradient";
        EXPECT_EQ(daf[2], 0.0f) << "a1 > L blocks the gradient";
        EXPECT_EQ(daf[I + 2], 0.0f) << "a3 < −L blocks the gradient";
    }
}

}  // namespace

TEST(KernelsCpuMoe, Router) {
    check_router(11, 7, 3, false, 100);
    check_router(11, 7, 3, true, 110);
    check_router(512, 8, 2, false, 120);
    check_router(512, 8, 2, true, 130);
}

TEST(KernelsCpuMoe, Swiglu) {
    for (double L : {10.0, 0.0}) {
        check_swiglu(7, 13, L, 200);
        check_swiglu(1024, 256, L, 210);  // N·K rows of the routed experts, I = 256
    }
}

// A NaN pre-activation (a diverged step) must reach the output and the gradient, clamped or not, so that the
// trainer sees it, in the vectorised loops as in the reference.
TEST(KernelsCpuMoe, SwigluPropagatesNaN) {
    const int64_t I = 16;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (double L : {10.0, 0.0}) {
        for (int64_t pos : {int64_t(3), I + 5}) {  // in a1 (gate), in a3 (up)
            vector<float> a13(2 * I, 0.5f), h(I), dh(I, 1.0f), da(2 * I);
            a13[pos] = nan;
            cpu::swiglu_forward(h.data(), a13.data(), 1, I, L);
            cpu::swiglu_backward(da.data(), dh.data(), a13.data(), 1, I, L);
            const int64_t i = pos % I;
            EXPECT_TRUE(std::isnan(h[i])) << "L=" << L << " NaN at " << pos;
            EXPECT_TRUE(std::isnan(da[i])) << "L=" << L << " NaN at " << pos;  // d/da1 ∝ clamp(a3)
            EXPECT_FALSE(std::isnan(h[(i + 1) % I])) << "L=" << L;
        }
    }
}

// ---------------------------------------------------------------- routed experts
namespace {

void check_moe_experts(int64_t N, int64_t d, int E, int K, int64_t I, double limit, int empty_expert, uint64_t seed) {
    // selection: K distinct experts per token, never `empty_expert`; weights as the router makes them
    std::mt19937 g((uint32_t)seed);
    vector<int32_t> sel;
    for (int64_t t = 0; t < N; t++) {
        vector<int32_t> ex;
        for (int e = 0; e < E; e++)
            if (e != empty_expert) ex.push_back(e);
        std::shuffle(ex.begin(), ex.end(), g);
        sel.insert(sel.end(), ex.begin(), ex.begin() + K);
    }
    const vector<double> weight = randf(N * K, seed + 1, 0.3, 0.75), x = randf(N * d, seed + 2),
                         dy = randf(N * d, seed + 3);
    // w13 scaled so that some pre-activations pass the clamp limit
    vector<vector<double>> w13(E), w2(E);
    vector<vector<float>> w13f(E), w2f(E);
    vector<const double*> p13, p2;
    vector<const float*> p13f, p2f;
    for (int e = 0; e < E; e++) {
        w13[e] = randf(2 * I * d, seed + 10 + e, 1.2 / std::sqrt((double)d));
        w2[e] = randf(d * I, seed + 30 + e, 1.0 / std::sqrt((double)I));
        w13f[e] = to_f(w13[e]);
        w2f[e] = to_f(w2[e]);
        p13.push_back(w13[e].data());
        p2.push_back(w2[e].data());
        p13f.push_back(w13f[e].data());
        p2f.push_back(w2f[e].data());
    }
    const std::string ex = "E=" + std::to_string(E) + " K=" + std::to_string(K) + " I=" + std::to_string(I);
    vector<double> y(N * d);
    ref::moe_experts_forward(y.data(), x.data(), sel.data(), weight.data(), p13.data(), p2.data(), N, d, K, I, limit);
    const vector<float> xf = to_f(x), wf = to_f(weight);
    vector<float> yf(N * d, 3.0f);
    moe_routing_storage buffers;
    cpu::moe_state st = buffers.view(N, E, K, I);
    cpu::moe_experts_forward(yf.data(), st, xf.data(), sel.data(), wf.data(), p13f.data(), p2f.data(), N, d, E, K, I,
                             limit);
    expect_close(tag("moe_experts_forward y", N, ex), yf, y);
    ASSERT_EQ(st.expert_offset.size(), (size_t)E + 1);
    EXPECT_EQ(st.expert_offset[empty_expert + 1], st.expert_offset[empty_expert]) << "the empty expert has no rows";
    EXPECT_EQ(st.expert_offset[E], N * K);
    int n_clamped = 0;
    for (float v : st.a13) n_clamped += std::fabs(v) > limit;
    std::printf("[CPU] %-52s %d of %zu pre-activations beyond the clamp limit\n", tag("moe_experts", N, ex).c_str(),
                n_clamped, st.a13.size());
    EXPECT_GT(n_clamped, 0);

    vector<double> dx(N * d), dweight(N * K);
    vector<vector<double>> dw13(E), dw2(E);
    vector<double*> pd13, pd2;
    for (int e = 0; e < E; e++) {
        dw13[e].assign(2 * I * d, 0.0);
        dw2[e].assign(d * I, 0.0);
        pd13.push_back(dw13[e].data());
        pd2.push_back(dw2[e].data());
    }
    ref::moe_experts_backward(dx.data(), dweight.data(), pd13.data(), pd2.data(), dy.data(), x.data(), sel.data(),
                              weight.data(), p13.data(), p2.data(), N, d, K, I, limit);
    vector<vector<double>> dw13_0(E), dw2_0(E);
    vector<vector<float>> dw13f(E), dw2f(E);
    vector<float*> pd13f, pd2f;
    for (int e = 0; e < E; e++) {
        dw13_0[e] = junk_like(dw13[e], seed + 50 + e);
        dw2_0[e] = junk_like(dw2[e], seed + 70 + e);
        dw13f[e] = to_f(dw13_0[e]);
        dw2f[e] = to_f(dw2_0[e]);
        pd13f.push_back(dw13f[e].data());
        pd2f.push_back(dw2f[e].data());
    }
    vector<float> dxf(N * d, 3.0f), dweightf(N * K, 3.0f);
    cpu::moe_experts_backward(dxf.data(), dweightf.data(), pd13f.data(), pd2f.data(), to_f(dy).data(), st, xf.data(),
                              wf.data(), p13f.data(), p2f.data(), N, d, E, K, I, limit);
    expect_close(tag("moe_experts_backward dx", N, ex), dxf, dx);
    expect_close(tag("moe_experts_backward dweight", N, ex), dweightf, dweight);
    // the parameter gradients of all experts together (and each used expert on its own)
    vector<float> all_f;
    vector<double> all_0, all_r;
    for (int e = 0; e < E; e++) {
        if (e == empty_expert) {
            EXPECT_EQ(dw13f[e], to_f(dw13_0[e])) << "expert without tokens: dw13 untouched";
            EXPECT_EQ(dw2f[e], to_f(dw2_0[e])) << "expert without tokens: dw2 untouched";
            continue;
        }
        for (auto* v : {&dw13f[e], &dw2f[e]}) all_f.insert(all_f.end(), v->begin(), v->end());
        for (auto* v : {&dw13_0[e], &dw2_0[e]}) all_0.insert(all_0.end(), v->begin(), v->end());
        for (auto* v : {&dw13[e], &dw2[e]}) all_r.insert(all_r.end(), v->begin(), v->end());
        if (e == 0 || e == E - 1) {
            expect_close_acc(tag("moe_experts_backward dw13[" + std::to_string(e) + "]", N, ex), dw13f[e], dw13_0[e],
                             dw13[e]);
            expect_close_acc(tag("moe_experts_backward dw2[" + std::to_string(e) + "]", N, ex), dw2f[e], dw2_0[e],
                             dw2[e]);
        }
    }
    expect_close_acc(tag("moe_experts_backward dw13+dw2 (all experts)", N, ex), all_f, all_0, all_r);
}

}  // namespace

TEST(KernelsCpuMoe, Experts) {
    check_moe_experts(11, 13, 5, 2, 7, 1.0, 3, 300);
    check_moe_experts(9, 6, 4, 3, 5, 1.5, 0, 310);
    check_moe_experts(512, 256, 8, 2, 256, 2.0, 5, 320);
}

// ---------------------------------------------------------------- balance loss
namespace {
void check_balance(int64_t B, int64_t S, int E, int K, uint64_t seed) {
    const int64_t N = B * S;
    const vector<double> logits = randf(N * E, seed);
    vector<int32_t> sel(N * K);
    vector<double> w(N * K), s(N * E);
    ref::router_forward<double>(sel.data(), w.data(), s.data(), logits.data(), nullptr, nullptr, N, E, K, 1.0);
    s = to_d(to_f(s));
    const double alpha = 1e-4;
    const double L = ref::balance_loss_forward(s.data(), sel.data(), B, S, E, K, alpha);
    const double Lf = cpu::balance_loss_forward(to_f(s).data(), sel.data(), B, S, E, K, alpha);
    expect_close_scalar(tag("balance_loss_forward", N), Lf, L);
    vector<double> ds(N * E, 0.0);
    ref::balance_loss_backward(ds.data(), s.data(), sel.data(), B, S, E, K, alpha);
    const vector<double> ds0 = junk_like(ds, seed + 1);
    vector<float> dsf = to_f(ds0);
    cpu::balance_loss_backward(dsf.data(), to_f(s).data(), sel.data(), B, S, E, K, alpha);
    expect_close_acc(tag("balance_loss_backward ds", N), dsf, ds0, ds);
}
}  // namespace

TEST(KernelsCpuMoe, BalanceLoss) {
    check_balance(3, 4, 7, 3, 400);
    check_balance(1, 11, 5, 2, 410);
    check_balance(2, 256, 8, 2, 420);
}
