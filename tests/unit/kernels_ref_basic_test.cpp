// Reference kernels: embedding, linear, rmsnorm, rope, grouped linear, cross-entropy — forward values and
// finite-difference checks of every backward (double precision).
#include <gtest/gtest.h>

#include <cmath>

#include "support/fd_check.hpp"
#include "trex/kernels/ref/ops.hpp"

using namespace trex;
using namespace trex::test;
using std::vector;

TEST(KernelsRefEmbedding, ForwardAndBackwardAccumulates) {
    const int64_t V = 5, d = 3, N = 4;
    vector<double> table = randn(V * d, 1);
    vector<int32_t> ids{2, 0, 2, 4};
    vector<double> out(N * d);
    ref::embedding_forward(out.data(), ids.data(), table.data(), N, d);
    for (int64_t n = 0; n < N; n++)
        for (int64_t i = 0; i < d; i++) EXPECT_EQ(out[n * d + i], table[ids[n] * d + i]);
    vector<double> r = randn(N * d, 2);
    vector<double> pre = randn(V * d, 3), dtable = pre;
    ref::embedding_backward(dtable.data(), r.data(), ids.data(), N, d);
    vector<double> g = minus(dtable, pre);
    auto f = [&] {
        ref::embedding_forward(out.data(), ids.data(), table.data(), N, d);
        return dot(r, out);
    };
    EXPECT_LT(fd_rel_error("embedding dtable", table, g, f), kFdTol);
    // row 1 and 3 untouched
    for (int64_t i = 0; i < d; i++) EXPECT_EQ(g[1 * d + i], 0.0);
}

TEST(KernelsRefLinear, ForwardValueAndFd) {
    const int64_t N = 5, in = 7, out = 4;
    vector<double> x = randn(N * in, 10), W = randn(out * in, 11), y(N * out);
    ref::linear_forward(y.data(), x.data(), W.data(), N, in, out);
    double want = 0;
    for (int64_t i = 0; i < in; i++) want += x[2 * in + i] * W[3 * in + i];
    EXPECT_NEAR(y[2 * out + 3], want, 1e-14);
    vector<double> r = randn(N * out, 12), dx(N * in, 99.0), pre = randn(out * in, 13), dW = pre;
    ref::linear_backward(dx.data(), dW.data(), r.data(), x.data(), W.data(), N, in, out);
    auto f = [&] {
        ref::linear_forward(y.data(), x.data(), W.data(), N, in, out);
        return dot(r, y);
    };
    EXPECT_LT(fd_rel_error("linear dx", x, dx, f), kFdTol);
    EXPECT_LT(fd_rel_error("linear dW", W, minus(dW, pre), f), kFdTol);
    // nullptr skips
    vector<double> dW2 = pre;
    ref::linear_backward<double>(nullptr, dW2.data(), r.data(), x.data(), W.data(), N, in, out);
    ref::linear_backward<double>(dx.data(), nullptr, r.data(), x.data(), W.data(), N, in, out);
}

TEST(KernelsRefRmsnorm, WeightedAndUnweightedFd) {
    const int64_t N = 6, D = 9;
    const double eps = 1e-6;
    vector<double> x = randn(N * D, 20, 1.0, 0.3), w = randn(D, 21, 0.5, 1.0), y(N * D), rstd(N);
    ref::rmsnorm_forward(y.data(), rstd.data(), x.data(), w.data(), N, D, eps);
    double ss = 0;
    for (int64_t i = 0; i < D; i++) ss += x[D + i] * x[D + i];
    EXPECT_NEAR(rstd[1], 1.0 / std::sqrt(ss / D + eps), 1e-14);
    EXPECT_NEAR(y[D + 4], w[4] * x[D + 4] * rstd[1], 1e-14);
    vector<double> r = randn(N * D, 22);
    for (bool weighted : {true, false}) {
        const double* wp = weighted ? w.data() : nullptr;
        ref::rmsnorm_forward(y.data(), rstd.data(), x.data(), wp, N, D, eps);
        vector<double> dx(N * D, 7.0), pre = randn(D, 23), dw = pre;
        ref::rmsnorm_backward(dx.data(), dw.data(), r.data(), x.data(), wp, rstd.data(), N, D);
        auto f = [&] {
            vector<double> yy(N * D), rr(N);
            ref::rmsnorm_forward(yy.data(), rr.data(), x.data(), wp, N, D, eps);
            return dot(r, yy);
        };
        EXPECT_LT(fd_rel_error(weighted ? "rmsnorm dx (weighted)" : "rmsnorm dx (unweighted)", x, dx, f), kFdTol);
        if (weighted)
            EXPECT_LT(fd_rel_error("rmsnorm dw", w, minus(dw, pre), f), kFdTol);
        else
            EXPECT_EQ(dw, pre);  // ignored without a weight
    }
}

TEST(KernelsRefRope, YarnLowHighForTheRealConfig) {
    const int r = 64;
    const double base = 160000, factor = 16;
    vector<double> plain(r / 2), yarn(r / 2);
    ref::rope_inv_freq(plain.data(), r, base, false, 1, 0, 32, 1);
    ref::rope_inv_freq(yarn.data(), r, base, true, factor, 65536, 32, 1);
    for (int i = 0; i < r / 2; i++) EXPECT_NEAR(plain[i], std::pow(base, -2.0 * i / r), 1e-15 * plain[i] + 1e-300);
    // low = 15, high = 25: unscaled up to i = 15, scaled by 1/factor from i = 25, linear ramp in between
    for (int i = 0; i <= 15; i++) EXPECT_EQ(yarn[i], plain[i]) << i;
    for (int i = 25; i < r / 2; i++) EXPECT_NEAR(yarn[i], plain[i] / factor, 1e-15 * plain[i]) << i;
    for (int i = 16; i < 25; i++) {
        double ramp = (i - 15) / 10.0;
        EXPECT_NEAR(yarn[i], plain[i] / factor * ramp + plain[i] * (1 - ramp), 1e-15 * plain[i]) << i;
        EXPECT_LT(yarn[i], plain[i]);
        EXPECT_GT(yarn[i], plain[i] / factor);
    }
    // the formula's intermediate values
    EXPECT_EQ(std::floor(r * std::log(65536 / (32 * 2 * M_PI)) / (2 * std::log(base))), 15);
    EXPECT_EQ(std::ceil(r * std::log(65536 / (1 * 2 * M_PI)) / (2 * std::log(base))), 25);
}

TEST(KernelsRefRope, HighEqualsLowGetsNudged) {
    // choose L0 so that both corrections clamp to 0: low = high = 0 → high = 0.001, ramp = 1 for i ≥ 1, 0 at i = 0
    vector<double> th(4), plain(4);
    ref::rope_inv_freq(plain.data(), 8, 10000, false, 1, 0, 32, 1);
    ref::rope_inv_freq(th.data(), 8, 10000, true, 4, 1, 32, 1);
    EXPECT_EQ(th[0], plain[0]);
    for (int i = 1; i < 4; i++) EXPECT_NEAR(th[i], plain[i] / 4, 1e-18);
}

namespace {
struct rope_tab {
    vector<double> cos, sin;
    rope_table_t<double> t;
};
rope_tab make_table(int r, int64_t n_pos, double base) {
    rope_tab tab;
    vector<double> theta(r / 2);
    ref::rope_inv_freq(theta.data(), r, base, true, 4, 64, 32, 1);
    tab.cos.resize(n_pos * r / 2);
    tab.sin.resize(n_pos * r / 2);
    for (int64_t p = 0; p < n_pos; p++)
        for (int i = 0; i < r / 2; i++) {
            tab.cos[p * r / 2 + i] = std::cos(p * theta[i]);
            tab.sin[p * r / 2 + i] = std::sin(p * theta[i]);
        }
    tab.t = {tab.cos.data(), tab.sin.data(), r / 2, n_pos};
    return tab;
}
}  // namespace

TEST(KernelsRefRope, ForwardValuesInverseIdentityAndFd) {
    const int r = 6;
    const int64_t N = 5, nvec = 3, c = 10;
    rope_tab tab = make_table(r, 20, 100.0);
    vector<int32_t> pos{0, 3, 7, 1, 19};
    vector<double> x = randn(N * nvec * c, 30), y = x;
    ref::rope_forward(y.data(), pos.data(), tab.t, N, nvec, c, false);
    // position 0: identity; nope dims untouched everywhere; one hand-computed pair
    for (int64_t i = 0; i < nvec * c; i++) EXPECT_NEAR(y[i], x[i], 1e-15);
    for (int64_t n = 0; n < N; n++)
        for (int64_t v = 0; v < nvec; v++)
            for (int64_t e = 0; e < c - r; e++) EXPECT_EQ(y[(n * nvec + v) * c + e], x[(n * nvec + v) * c + e]);
    {
        int64_t n = 2, v = 1, i = 2;
        double a = x[(n * nvec + v) * c + c - r + 2 * i], b = x[(n * nvec + v) * c + c - r + 2 * i + 1];
        double co = tab.cos[7 * 3 + i], si = tab.sin[7 * 3 + i];
        EXPECT_NEAR(y[(n * nvec + v) * c + c - r + 2 * i], a * co - b * si, 1e-15);
        EXPECT_NEAR(y[(n * nvec + v) * c + c - r + 2 * i + 1], a * si + b * co, 1e-15);
    }
    vector<double> z = y;
    ref::rope_forward(z.data(), pos.data(), tab.t, N, nvec, c, true);
    for (size_t i = 0; i < x.size(); i++) EXPECT_NEAR(z[i], x[i], 1e-14);
    // backward of the rotation = the opposite rotation (for both directions)
    vector<double> rr = randn(N * nvec * c, 31);
    for (bool inverse : {false, true}) {
        vector<double> g = rr;
        ref::rope_forward(g.data(), pos.data(), tab.t, N, nvec, c, !inverse);
        auto f = [&] {
            vector<double> yy = x;
            ref::rope_forward(yy.data(), pos.data(), tab.t, N, nvec, c, inverse);
            return dot(rr, yy);
        };
        EXPECT_LT(fd_rel_error(inverse ? "rope inverse dx" : "rope dx", x, g, f), kFdTol);
    }
}

TEST(KernelsRefGroupedLinear, ForwardValueAndFd) {
    const int64_t N = 4, in_g = 6, dg = 3;
    const int g = 3;
    vector<double> x = randn(N * g * in_g, 40), Wa = randn(g * dg * in_g, 41), u(N * g * dg);
    ref::grouped_linear_forward(u.data(), x.data(), Wa.data(), N, g, in_g, dg);
    double want = 0;  // token 1, group 2, output 1 uses rows 2·dg + 1 of Wa and x[1,2,:]
    for (int64_t i = 0; i < in_g; i++) want += Wa[(2 * dg + 1) * in_g + i] * x[(1 * g + 2) * in_g + i];
    EXPECT_NEAR(u[(1 * g + 2) * dg + 1], want, 1e-14);
    vector<double> r = randn(N * g * dg, 42), dx(N * g * in_g, 5.0), pre = randn(g * dg * in_g, 43), dWa = pre;
    ref::grouped_linear_backward(dx.data(), dWa.data(), r.data(), x.data(), Wa.data(), N, g, in_g, dg);
    auto f = [&] {
        ref::grouped_linear_forward(u.data(), x.data(), Wa.data(), N, g, in_g, dg);
        return dot(r, u);
    };
    EXPECT_LT(fd_rel_error("grouped_linear dx", x, dx, f), kFdTol);
    EXPECT_LT(fd_rel_error("grouped_linear dWa", Wa, minus(dWa, pre), f), kFdTol);
}

TEST(KernelsRefCrossEntropy, ForwardByHandAndFd) {
    const int64_t N = 5, V = 7;
    vector<double> z = randn(N * V, 50, 2.0);
    z[3 * V + 2] = 800;  // large logits stay finite
    vector<int32_t> labels{3, -1, 0, 2, 6};
    int64_t nv = 0;
    double loss = ref::cross_entropy_forward(&nv, z.data(), labels.data(), N, V);
    EXPECT_EQ(nv, 4);
    double want = 0;
    for (int64_t n = 0; n < N; n++) {
        if (labels[n] < 0) continue;
        double mx = -1e300;
        for (int64_t v = 0; v < V; v++) mx = std::max(mx, z[n * V + v]);
        double se = 0;
        for (int64_t v = 0; v < V; v++) se += std::exp(z[n * V + v] - mx);
        want += mx + std::log(se) - z[n * V + labels[n]];
    }
    EXPECT_NEAR(loss, want, 1e-12);
    // no valid label
    vector<int32_t> none(N, -1);
    EXPECT_EQ(ref::cross_entropy_forward(&nv, z.data(), none.data(), N, V), 0.0);
    EXPECT_EQ(nv, 0);
    // FD of scale·loss
    z[3 * V + 2] = 3.0;
    const double scale = 0.37;
    vector<double> dz(N * V, 9.0);
    ref::cross_entropy_backward(dz.data(), z.data(), labels.data(), N, V, scale);
    for (int64_t v = 0; v < V; v++) EXPECT_EQ(dz[1 * V + v], 0.0);
    auto f = [&] {
        int64_t n;
        return scale * ref::cross_entropy_forward(&n, z.data(), labels.data(), N, V);
    };
    EXPECT_LT(fd_rel_error("cross_entropy dlogits", z, dz, f), kFdTol);
}
