// Reference MoE kernels: router selection order / ties / bias / hash path, router FD (selection held fixed), clamped
// SwiGLU values, zero gradient beyond the clamp and FD, routed experts FD of every input, balance loss by hand + FD.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "support/fd_check.hpp"
#include "trex/kernels/ref/ops.hpp"

using namespace trex;
using namespace trex::test;
using std::vector;

namespace {
double sqrt_softplus(double u) {
    return std::sqrt(std::log1p(std::exp(u)));
}
double silu(double x) {
    return x / (1 + std::exp(-x));
}
}  // namespace

TEST(KernelsRefRouter, SelectionOrderTiesBiasAndHash) {
    const int E = 6, K = 3;
    const double rs = 1.5;
    vector<double> logits{0.5, 1.0, 1.0, -1, 1.0, 0};
    vector<int32_t> sel(K);
    vector<double> w(K), s(E);
    ref::router_forward<double>(sel.data(), w.data(), s.data(), logits.data(), nullptr, nullptr, 1, E, K, rs);
    for (int e = 0; e < E; e++) EXPECT_NEAR(s[e], sqrt_softplus(logits[e]), 1e-15);
    EXPECT_EQ(sel, (vector<int32_t>{1, 2, 4}));  // three equal scores: lower id first
    for (int k = 0; k < K; k++) EXPECT_NEAR(w[k], rs / 3, 1e-15);
    // bias reorders the selection (slots in descending s + bias) but not the weights' formula
    vector<double> bias{0, 0, 0, 0, 0.1, 2.0};
    ref::router_forward<double>(sel.data(), w.data(), s.data(), logits.data(), bias.data(), nullptr, 1, E, K, rs);
    EXPECT_EQ(sel, (vector<int32_t>{5, 4, 1}));
    double S = s[5] + s[4] + s[1];
    EXPECT_NEAR(w[0], rs * s[5] / S, 1e-15);
    EXPECT_NEAR(w[1], rs * s[4] / S, 1e-15);
    EXPECT_NEAR(w[2], rs * s[1] / S, 1e-15);
    // hash path: the given rows, in their order, bias ignored
    vector<int32_t> hash{3, 0, 5, 2, 1, 4};
    vector<int32_t> sel2(2 * K);
    vector<double> w2(2 * K), s2(2 * E), lg2(logits);
    lg2.insert(lg2.end(), logits.begin(), logits.end());
    ref::router_forward<double>(sel2.data(), w2.data(), s2.data(), lg2.data(), bias.data(), hash.data(), 2, E, K, rs);
    EXPECT_EQ(sel2, hash);
    double S0 = s[3] + s[0] + s[5];
    EXPECT_NEAR(w2[0], rs * s[3] / S0, 1e-15);
    EXPECT_NEAR(w2[1], rs * s[0] / S0, 1e-15);
    EXPECT_NEAR(w2[2], rs * s[5] / S0, 1e-15);
}

TEST(KernelsRefRouter, BackwardFdSelectionFixed) {
    const int E = 7, K = 3;
    const int64_t N = 5;
    const double rs = 2.5;
    vector<double> logits = randn(N * E, 10, 2.0), bias = randn(E, 11, 0.2);
    vector<int32_t> sel(N * K);
    vector<double> w(N * K), s(N * E);
    ref::router_forward(sel.data(), w.data(), s.data(), logits.data(), bias.data(), nullptr, N, E, K, rs);
    // clear margin between the K-th and (K+1)-th key, so FD perturbations cannot change the selection
    for (int64_t t = 0; t < N; t++) {
        vector<double> key(E);
        for (int e = 0; e < E; e++) key[e] = s[t * E + e] + bias[e];
        std::sort(key.begin(), key.end(), std::greater<double>());
        ASSERT_GT(key[K - 1] - key[K], 1e-4) << t;
    }
    vector<double> rw = randn(N * K, 12), rsx = randn(N * E, 13);
    auto f = [&] {  // the selection is held fixed by passing it as the hash path
        vector<int32_t> sl(N * K);
        vector<double> ww(N * K), ss(N * E);
        ref::router_forward(sl.data(), ww.data(), ss.data(), logits.data(), bias.data(), sel.data(), N, E, K, rs);
        return dot(rw, ww) + dot(rsx, ss);
    };
    vector<double> dl(N * E, 3.0);
    ref::router_backward(dl.data(), rw.data(), rsx.data(), logits.data(), s.data(), sel.data(), w.data(), N, E, K, rs);
    EXPECT_LT(fd_rel_error("router dlogits (weight + s)", logits, dl, f), kFdTol);
    // without ds_extra: only the selected experts get a gradient
    vector<double> dl2(N * E, 3.0);
    ref::router_backward<double>(dl2.data(), rw.data(), nullptr, logits.data(), s.data(), sel.data(), w.data(), N, E, K,
                                 rs);
    for (int64_t t = 0; t < N; t++)
        for (int e = 0; e < E; e++)
            if (std::find(&sel[t * K], &sel[t * K] + K, e) == &sel[t * K] + K) {
                EXPECT_EQ(dl2[t * E + e], 0.0);
            }
    auto f2 = [&] {
        vector<int32_t> sl(N * K);
        vector<double> ww(N * K), ss(N * E);
        ref::router_forward(sl.data(), ww.data(), ss.data(), logits.data(), bias.data(), sel.data(), N, E, K, rs);
        return dot(rw, ww);
    };
    EXPECT_LT(fd_rel_error("router dlogits (weight only)", logits, dl2, f2), kFdTol);
}

TEST(KernelsRefSwiglu, ClampValuesAndZeroGradientBeyond) {
    const double L = 2.0;
    // columns: [a1 | a3], I = 4
    vector<double> a13{3.0, 1.0, -5.0, 0.5, /* a3: */ -5.0, 0.7, 1.5, 2.5};
    vector<double> h(4);
    ref::swiglu_forward(h.data(), a13.data(), 1, 4, L);
    EXPECT_NEAR(h[0], silu(2.0) * -2.0, 1e-15);  // a1 clamped from above, a3 from below
    EXPECT_NEAR(h[1], silu(1.0) * 0.7, 1e-15);
    EXPECT_NEAR(h[2], silu(-5.0) * 1.5, 1e-15);  // a1 not clamped from below
    EXPECT_NEAR(h[3], silu(0.5) * 2.0, 1e-15);
    vector<double> dh{1, 1, 1, 1}, da(8);
    ref::swiglu_backward(da.data(), dh.data(), a13.data(), 1, 4, L);
    EXPECT_EQ(da[0], 0.0);      // a1 > L → da1 = 0
    EXPECT_NE(da[2], 0.0);      // a1 < −L still passes
    EXPECT_EQ(da[4 + 0], 0.0);  // a3 < −L → da3 = 0
    EXPECT_EQ(da[4 + 3], 0.0);  // a3 > L → da3 = 0
    EXPECT_NEAR(da[4 + 1], silu(1.0), 1e-15);
    // limit ≤ 0: no clamp
    ref::swiglu_forward(h.data(), a13.data(), 1, 4, 0.0);
    EXPECT_NEAR(h[0], silu(3.0) * -5.0, 1e-14);
    ref::swiglu_backward(da.data(), dh.data(), a13.data(), 1, 4, 0.0);
    EXPECT_NE(da[0], 0.0);
    EXPECT_NEAR(da[4], silu(3.0), 1e-14);
}

TEST(KernelsRefSwiglu, BackwardFd) {
    const int64_t n = 6, I = 5;
    for (double L : {0.0, 1.2}) {
        vector<double> a13 = randn(n * 2 * I, 20, 1.5);
        if (L > 0)
            for (double v : a13) {
                ASSERT_GT(std::fabs(v - L), 1e-4);
                ASSERT_GT(std::fabs(v + L), 1e-4);
            }
        vector<double> r = randn(n * I, 21), da(n * 2 * I, 4.0);
        ref::swiglu_backward(da.data(), r.data(), a13.data(), n, I, L);
        auto f = [&] {
            vector<double> h(n * I);
            ref::swiglu_forward(h.data(), a13.data(), n, I, L);
            return dot(r, h);
        };
        EXPECT_LT(fd_rel_error(L > 0 ? "swiglu da13 (clamped)" : "swiglu da13 (no clamp)", a13, da, f), kFdTol);
    }
}

TEST(KernelsRefMoeExperts, ForwardByHandAndFd) {
    const int E = 4, K = 2;
    const int64_t N = 5, d = 6, I = 5;
    const double L = 1.0;
    vector<vector<double>> w13(E), w2(E);
    for (int e = 0; e < E; e++) {
        w13[e] = randn(2 * I * d, 30 + e, 0.6);
        w2[e] = randn(d * I, 40 + e, 0.6);
    }
    vector<double> x = randn(N * d, 50), weight = randn(N * K, 51, 0.5, 0.7);
    vector<int32_t> sel{0, 2, 2, 1, 1, 0, 0, 1, 2, 0};  // expert 3 is never selected
    auto ptrs = [](vector<vector<double>>& v) {
        vector<double*> p;
        for (auto& x : v) p.push_back(x.data());
        return p;
    };
    vector<double*> w13p = ptrs(w13), w2p = ptrs(w2);
    vector<const double*> w13c(w13p.begin(), w13p.end()), w2c(w2p.begin(), w2p.end());
    // margins around the clamp, and some pre-activations actually clamped
    int n_clamped = 0;
    for (int64_t t = 0; t < N; t++)
        for (int k = 0; k < K; k++)
            for (int64_t r = 0; r < 2 * I; r++) {
                double a = 0;
                for (int64_t i = 0; i < d; i++) a += w13[sel[t * K + k]][r * d + i] * x[t * d + i];
                ASSERT_GT(std::fabs(std::fabs(a) - L), 1e-4);
                n_clamped += (r < I ? a > L : std::fabs(a) > L);
            }
    EXPECT_GT(n_clamped, 0);
    vector<double> y(N * d);
    ref::moe_experts_forward(y.data(), x.data(), sel.data(), weight.data(), w13c.data(), w2c.data(), N, d, K, I, L);
    {  // token 3 by hand
        const int64_t t = 3;
        vector<double> want(d, 0.0);
        for (int k = 0; k < K; k++) {
            const int e = sel[t * K + k];
            vector<double> h(I);
            for (int64_t j = 0; j < I; j++) {
                double a1 = 0, a3 = 0;
                for (int64_t i = 0; i < d; i++) {
                    a1 += w13[e][j * d + i] * x[t * d + i];
                    a3 += w13[e][(I + j) * d + i] * x[t * d + i];
                }
                h[j] = silu(std::min(a1, L)) * std::clamp(a3, -L, L);
            }
            for (int64_t o = 0; o < d; o++)
                for (int64_t j = 0; j < I; j++) want[o] += weight[t * K + k] * w2[e][o * I + j] * h[j];
        }
        for (int64_t o = 0; o < d; o++) EXPECT_NEAR(y[t * d + o], want[o], 1e-14);
    }
    vector<double> r = randn(N * d, 52);
    auto f = [&] {
        vector<double> yy(N * d);
        ref::moe_experts_forward(yy.data(), x.data(), sel.data(), weight.data(), w13c.data(), w2c.data(), N, d, K, I,
                                 L);
        return dot(r, yy);
    };
    vector<vector<double>> dw13(E), dw2(E), dw13_0(E), dw2_0(E);
    for (int e = 0; e < E; e++) {
        dw13[e] = dw13_0[e] = randn(2 * I * d, 60 + e);
        dw2[e] = dw2_0[e] = randn(d * I, 70 + e);
    }
    vector<double*> dw13p = ptrs(dw13), dw2p = ptrs(dw2);
    vector<double> dx(N * d, 8.0), dweight(N * K, 8.0);
    ref::moe_experts_backward(dx.data(), dweight.data(), dw13p.data(), dw2p.data(), r.data(), x.data(), sel.data(),
                              weight.data(), w13c.data(), w2c.data(), N, d, K, I, L);
    EXPECT_LT(fd_rel_error("moe_experts dx", x, dx, f), kFdTol);
    EXPECT_LT(fd_rel_error("moe_experts dweight", weight, dweight, f), kFdTol);
    for (int e = 0; e < 3; e++) {
        EXPECT_LT(fd_rel_error("moe_experts dw13[" + std::to_string(e) + "]", w13[e], minus(dw13[e], dw13_0[e]), f),
                  kFdTol);
        EXPECT_LT(fd_rel_error("moe_experts dw2[" + std::to_string(e) + "]", w2[e], minus(dw2[e], dw2_0[e]), f),
                  kFdTol);
    }
    EXPECT_EQ(dw13[3], dw13_0[3]);
    EXPECT_EQ(dw2[3], dw2_0[3]);
}

TEST(KernelsRefBalanceLoss, ByHandAndFd) {
    // B = 1, S = 2, E = 2, K = 1; s = [[1,3],[2,2]], both tokens pick expert 1:
    // f = E/(K·S)·count = [0, 2]; s' = [[.25,.75],[.5,.5]]; P = [.375, .625]; Σ f P = 1.25
    vector<double> s{1, 3, 2, 2};
    vector<int32_t> sel{1, 1};
    EXPECT_NEAR(ref::balance_loss_forward(s.data(), sel.data(), 1, 2, 2, 1, 0.1), 0.125, 1e-15);
    // B = 2 rows: the mean over rows, f per row
    vector<double> s2{1, 3, 2, 2, /* row 1 */ 1, 1, 4, 1};
    vector<int32_t> sel2{1, 1, 0, 1};
    // row 1: f = [1, 1]; P = [(.5 + .8)/2, (.5 + .2)/2] = [.65, .35]; Σ f P = 1
    EXPECT_NEAR(ref::balance_loss_forward(s2.data(), sel2.data(), 2, 2, 2, 1, 0.1), 0.1 * (1.25 + 1.0) / 2, 1e-15);
    // FD over random positive scores, K = 2 of E = 5, B = 2 rows of S = 4
    const int64_t B = 2, S = 4;
    const int E = 5, K = 2;
    vector<double> sc = randn(B * S * E, 80, 0.3, 1.0);
    vector<int32_t> sl{0, 1, 0, 2, 3, 4, 0, 1, /* row 1 */ 2, 3, 2, 4, 1, 2, 3, 4};
    const double alpha = 0.01;
    vector<double> ds0 = randn(B * S * E, 81), ds = ds0;
    ref::balance_loss_backward(ds.data(), sc.data(), sl.data(), B, S, E, K, alpha);
    auto f = [&] { return ref::balance_loss_forward(sc.data(), sl.data(), B, S, E, K, alpha); };
    EXPECT_LT(fd_rel_error("balance_loss ds", sc, minus(ds, ds0), f), kFdTol);
}
