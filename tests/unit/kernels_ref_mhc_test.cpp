// Reference mHC kernels: Sinkhorn values, FD checks of sinkhorn/hc_pre/hc_post/hc_head backward, and the composite
// hc_pre → rmsnorm → linear → hc_post chain (residual-stream gradient bookkeeping).
#include <gtest/gtest.h>

#include <cmath>

#include "support/fd_check.hpp"
#include "trex/kernels/ref/ops.hpp"

using namespace trex;
using namespace trex::test;
using std::vector;

namespace {

double sigm(double x) {
    return 1 / (1 + std::exp(-x));
}

// Straightforward Sinkhorn of docs/model.md §3.3, written independently of the kernel.
vector<double> sinkhorn_naive(const vector<double>& R, int n, int iters, double eps) {
    vector<vector<double>> P(n, vector<double>(n));
    for (int j = 0; j < n; j++) {
        double z = 0;
        for (int k = 0; k < n; k++) z += std::exp(R[j * n + k]);
        for (int k = 0; k < n; k++) P[j][k] = std::exp(R[j * n + k]) / z + eps;
    }
    auto colnorm = [&] {
        for (int k = 0; k < n; k++) {
            double s = 0;
            for (int j = 0; j < n; j++) s += P[j][k];
            for (int j = 0; j < n; j++) P[j][k] = P[j][k] / (s + eps);
        }
    };
    auto rownorm = [&] {
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += P[j][k];
            for (int k = 0; k < n; k++) P[j][k] = P[j][k] / (s + eps);
        }
    };
    colnorm();
    for (int it = 0; it < iters - 1; it++) {
        rownorm();
        colnorm();
    }
    vector<double> out(n * n);
    for (int j = 0; j < n; j++)
        for (int k = 0; k < n; k++) out[j * n + k] = P[j][k];
    return out;
}

mhc_dims dims_of(int n, int d) {
    mhc_dims dm;
    dm.n = n;
    dm.d = d;
    dm.iters = 20;
    dm.hc_eps = 1e-6;
    dm.norm_eps = 1e-6;
    return dm;
}

}  // namespace

TEST(KernelsRefSinkhorn, DoublyStochasticAndMatchesNaive) {
    const int n = 4;
    vector<double> R = randn(n * n, 100, 2.0), comb(n * n);
    ref::sinkhorn_forward(comb.data(), R.data(), n, 20, 1e-6);
    vector<double> want = sinkhorn_naive(R, n, 20, 1e-6);
    for (int i = 0; i < n * n; i++) EXPECT_NEAR(comb[i], want[i], 1e-15);
    for (int a = 0; a < n; a++) {
        double rs = 0, cs = 0;
        for (int b = 0; b < n; b++) {
            rs += comb[a * n + b];
            cs += comb[b * n + a];
        }
        EXPECT_NEAR(cs, 1.0, 1e-5);  // last step is a column normalisation: columns sum to 1/(1+eps/…)
        EXPECT_NEAR(rs, 1.0, 1e-3);  // rows approximately
    }
    // one iteration = softmax row, +eps, one column normalisation
    ref::sinkhorn_forward(comb.data(), R.data(), n, 1, 1e-6);
    want = sinkhorn_naive(R, n, 1, 1e-6);
    for (int i = 0; i < n * n; i++) EXPECT_NEAR(comb[i], want[i], 1e-15);
    // uniform R → uniform 1/n
    vector<double> Z(n * n, 0.3);
    ref::sinkhorn_forward(comb.data(), Z.data(), n, 20, 1e-6);
    for (int i = 0; i < n * n; i++) EXPECT_NEAR(comb[i], 0.25, 1e-5);
}

TEST(KernelsRefSinkhorn, BackwardFd) {
    for (int n : {3, 4})
        for (int iters : {1, 2, 20}) {
            vector<double> R = randn(n * n, 101 + n + iters, 1.5), rr = randn(n * n, 102), dR(n * n, 8.0);
            const double eps = 1e-3;  // a larger eps so that its terms are visible to the check
            ref::sinkhorn_backward(dR.data(), rr.data(), R.data(), n, iters, eps);
            auto f = [&] {
                vector<double> c(n * n);
                ref::sinkhorn_forward(c.data(), R.data(), n, iters, eps);
                return dot(rr, c);
            };
            EXPECT_LT(fd_rel_error("sinkhorn dR n=" + std::to_string(n) + " iters=" + std::to_string(iters), R, dR, f),
                      kFdTol);
        }
}

namespace {
struct hc_params {
    vector<double> fn, base, scale;
};
hc_params make_hc(int rows, int n, int d, int nscale, uint64_t seed) {
    // large enough scales that every branch (pre, post, Sinkhorn) carries a gradient of order one
    return {randn(rows * n * d, seed, 0.5), randn(rows, seed + 1, 0.5), randn(nscale, seed + 2, 0.3, 1.0)};
}
}  // namespace

TEST(KernelsRefHcPre, ForwardByHand) {
    const int n = 4, d = 3;
    const int64_t N = 2;
    mhc_dims dm = dims_of(n, d);
    const int rows = dm.rows();
    hc_params p = make_hc(rows, n, d, 3, 200);
    vector<double> X = randn(N * n * d, 203);
    vector<double> y(N * d), post(N * n), comb(N * n * n), mix(N * rows), rho(N);
    ref::hc_pre_forward(y.data(), post.data(), comb.data(), mix.data(), rho.data(), X.data(), p.fn.data(),
                        p.base.data(), p.scale.data(), N, dm);
    const int64_t t = 1;
    const double* x = X.data() + t * n * d;
    double ss = 0;
    for (int i = 0; i < n * d; i++) ss += x[i] * x[i];
    double r = 1 / std::sqrt(ss / (n * d) + 1e-6);
    EXPECT_NEAR(rho[t], r, 1e-14);
    vector<double> m(rows);
    for (int q = 0; q < rows; q++) {
        double a = 0;
        for (int i = 0; i < n * d; i++) a += p.fn[q * n * d + i] * x[i];
        m[q] = r * a;
        EXPECT_NEAR(mix[t * rows + q], m[q], 1e-13);
    }
    for (int j = 0; j < n; j++) EXPECT_NEAR(post[t * n + j], 2 * sigm(m[n + j] * p.scale[1] + p.base[n + j]), 1e-14);
    vector<double> R(n * n);
    for (int q = 0; q < n * n; q++) R[q] = m[2 * n + q] * p.scale[2] + p.base[2 * n + q];
    vector<double> cw = sinkhorn_naive(R, n, 20, 1e-6);
    for (int q = 0; q < n * n; q++) EXPECT_NEAR(comb[t * n * n + q], cw[q], 1e-13);
    for (int i = 0; i < d; i++) {
        double want = 0;
        for (int j = 0; j < n; j++) want += (sigm(m[j] * p.scale[0] + p.base[j]) + 1e-6) * x[j * d + i];
        EXPECT_NEAR(y[t * d + i], want, 1e-13);
    }
}

TEST(KernelsRefHcPre, BackwardFdAllInputs) {
    const int n = 4, d = 5;
    const int64_t N = 3;
    mhc_dims dm = dims_of(n, d);
    dm.hc_eps = 1e-3;
    const int rows = dm.rows();
    hc_params p = make_hc(rows, n, d, 3, 300);
    vector<double> X = randn(N * n * d, 303, 1.0, 0.2);
    vector<double> ry = randn(N * d, 304), rpost = randn(N * n, 305), rcomb = randn(N * n * n, 306);
    vector<double> y(N * d), post(N * n), comb(N * n * n), mix(N * rows), rho(N);
    auto f = [&] {
        ref::hc_pre_forward(y.data(), post.data(), comb.data(), mix.data(), rho.data(), X.data(), p.fn.data(),
                            p.base.data(), p.scale.data(), N, dm);
        return dot(ry, y) + dot(rpost, post) + dot(rcomb, comb);
    };
    f();
    // prefilled buffers: dX and the parameter grads all accumulate
    vector<double> X0 = randn(N * n * d, 307), dX = X0, fn0 = randn(rows * n * d, 308), dfn = fn0;
    vector<double> b0 = randn(rows, 309), dbase = b0, s0 = randn(3, 310), dscale = s0;
    ref::hc_pre_backward(dX.data(), dfn.data(), dbase.data(), dscale.data(), ry.data(), rpost.data(), rcomb.data(),
                         X.data(), p.fn.data(), p.base.data(), p.scale.data(), mix.data(), rho.data(), N, dm);
    EXPECT_LT(fd_rel_error("hc_pre dX", X, minus(dX, X0), f), kFdTol);
    EXPECT_LT(fd_rel_error("hc_pre dfn", p.fn, minus(dfn, fn0), f), kFdTol);
    EXPECT_LT(fd_rel_error("hc_pre dbase", p.base, minus(dbase, b0), f), kFdTol);
    EXPECT_LT(fd_rel_error("hc_pre dscale", p.scale, minus(dscale, s0), f), kFdTol);
    // each branch separately, so that none hides behind another
    vector<double> zero_y(N * d, 0.0), zero_post(N * n, 0.0), zero_comb(N * n * n, 0.0);
    struct branch {
        const char* name;
        const vector<double>*a, *b, *c;
    } branches[] = {{"hc_pre dbase (y only)", &ry, &zero_post, &zero_comb},
                    {"hc_pre dbase (post only)", &zero_y, &rpost, &zero_comb},
                    {"hc_pre dbase (comb only)", &zero_y, &zero_post, &rcomb}};
    for (const branch& br : branches) {
        vector<double> gx(N * n * d, 0.0), gfn(rows * n * d, 0.0), gb(rows, 0.0), gs(3, 0.0);
        ref::hc_pre_backward(gx.data(), gfn.data(), gb.data(), gs.data(), br.a->data(), br.b->data(), br.c->data(),
                             X.data(), p.fn.data(), p.base.data(), p.scale.data(), mix.data(), rho.data(), N, dm);
        auto fb = [&] {
            ref::hc_pre_forward(y.data(), post.data(), comb.data(), mix.data(), rho.data(), X.data(), p.fn.data(),
                                p.base.data(), p.scale.data(), N, dm);
            return dot(*br.a, y) + dot(*br.b, post) + dot(*br.c, comb);
        };
        EXPECT_LT(fd_rel_error(br.name, p.base, gb, fb), kFdTol);
        f();
    }
}

TEST(KernelsRefHcPost, ForwardByHandAndFd) {
    const int n = 4, d = 6;
    const int64_t N = 3;
    mhc_dims dm = dims_of(n, d);
    vector<double> F = randn(N * d, 400), Xin = randn(N * n * d, 401), post = randn(N * n, 402),
                   comb = randn(N * n * n, 403), Xout(N * n * d);
    ref::hc_post_forward(Xout.data(), F.data(), Xin.data(), post.data(), comb.data(), N, dm);
    {
        int64_t t = 2, k = 1, i = 4;
        double want = post[t * n + k] * F[t * d + i];
        for (int j = 0; j < n; j++) want += comb[(t * n + j) * n + k] * Xin[(t * n + j) * d + i];  // comb[j,k]: j → k
        EXPECT_NEAR(Xout[(t * n + k) * d + i], want, 1e-14);
    }
    vector<double> r = randn(N * n * d, 404);
    vector<double> dF(N * d, 3.0), dXin(N * n * d, 3.0), dpost(N * n, 3.0), dcomb(N * n * n, 3.0);
    ref::hc_post_backward(dF.data(), dXin.data(), dpost.data(), dcomb.data(), r.data(), F.data(), Xin.data(),
                          post.data(), comb.data(), N, dm);
    auto f = [&] {
        ref::hc_post_forward(Xout.data(), F.data(), Xin.data(), post.data(), comb.data(), N, dm);
        return dot(r, Xout);
    };
    EXPECT_LT(fd_rel_error("hc_post dF", F, dF, f), kFdTol);
    EXPECT_LT(fd_rel_error("hc_post dX_in", Xin, dXin, f), kFdTol);
    EXPECT_LT(fd_rel_error("hc_post dpost", post, dpost, f), kFdTol);
    EXPECT_LT(fd_rel_error("hc_post dcomb", comb, dcomb, f), kFdTol);
}

TEST(KernelsRefHcHead, ForwardByHandAndFd) {
    const int n = 4, d = 5;
    const int64_t N = 3;
    mhc_dims dm = dims_of(n, d);
    hc_params p = make_hc(n, n, d, 1, 500);
    vector<double> X = randn(N * n * d, 503, 1.0, -0.1), y(N * d), mix(N * n), rho(N);
    ref::hc_head_forward(y.data(), mix.data(), rho.data(), X.data(), p.fn.data(), p.base.data(), p.scale.data(), N, dm);
    {
        const int64_t t = 0;
        double ss = 0;
        for (int i = 0; i < n * d; i++) ss += X[i] * X[i];
        double r = 1 / std::sqrt(ss / (n * d) + 1e-6);
        for (int i = 0; i < d; i++) {
            double want = 0;
            for (int j = 0; j < n; j++) {
                double a = 0;
                for (int e = 0; e < n * d; e++) a += p.fn[j * n * d + e] * X[e];
                want += (sigm(r * a * p.scale[0] + p.base[j]) + 1e-6) * X[j * d + i];
            }
            EXPECT_NEAR(y[t * d + i], want, 1e-13);
        }
    }
    vector<double> r = randn(N * d, 504);
    auto f = [&] {
        ref::hc_head_forward(y.data(), mix.data(), rho.data(), X.data(), p.fn.data(), p.base.data(), p.scale.data(), N,
                             dm);
        return dot(r, y);
    };
    f();
    vector<double> dX(N * n * d, 5.0), fn0 = randn(n * n * d, 505), dfn = fn0, b0 = randn(n, 506), dbase = b0, s0{0.25},
                                       dscale = s0;
    ref::hc_head_backward(dX.data(), dfn.data(), dbase.data(), dscale.data(), r.data(), X.data(), p.fn.data(),
                          p.base.data(), p.scale.data(), mix.data(), rho.data(), N, dm);
    EXPECT_LT(fd_rel_error("hc_head dX", X, dX, f), kFdTol);
    EXPECT_LT(fd_rel_error("hc_head dfn", p.fn, minus(dfn, fn0), f), kFdTol);
    EXPECT_LT(fd_rel_error("hc_head dbase", p.base, minus(dbase, b0), f), kFdTol);
    EXPECT_LT(fd_rel_error("hc_head dscale", p.scale, minus(dscale, s0), f), kFdTol);
}

// X_out = hc_post(F = W·rmsnorm_w(hc_pre(X).y), X, post, comb): the residual stream X receives hc_post's dX_in
// (assigned) plus hc_pre's dX (+=).
TEST(KernelsRefMhcComposite, PreNormLinearPostFd) {
    const int n = 4, d = 6;
    const int64_t N = 3;
    mhc_dims dm = dims_of(n, d);
    const int rows = dm.rows();
    hc_params p = make_hc(rows, n, d, 3, 600);
    vector<double> X = randn(N * n * d, 603, 1.0, 0.1), w = randn(d, 604, 0.3, 1.0), W = randn(d * d, 605, 0.5);
    vector<double> r = randn(N * n * d, 606);
    vector<double> y(N * d), post(N * n), comb(N * n * n), mix(N * rows), rho(N), a(N * d), rstd(N), F(N * d),
        Xout(N * n * d);
    auto f = [&] {
        ref::hc_pre_forward(y.data(), post.data(), comb.data(), mix.data(), rho.data(), X.data(), p.fn.data(),
                            p.base.data(), p.scale.data(), N, dm);
        ref::rmsnorm_forward(a.data(), rstd.data(), y.data(), w.data(), N, d, 1e-6);
        ref::linear_forward(F.data(), a.data(), W.data(), N, d, d);
        ref::hc_post_forward(Xout.data(), F.data(), X.data(), post.data(), comb.data(), N, dm);
        return dot(r, Xout);
    };
    f();
    vector<double> dX(N * n * d, 123.0), dF(N * d), dpost(N * n), dcomb(N * n * n), da(N * d), dy(N * d);
    vector<double> dW(d * d, 0.0), dw(d, 0.0), dfn(rows * n * d, 0.0), dbase(rows, 0.0), dscale(3, 0.0);
    ref::hc_post_backward(dF.data(), dX.data(), dpost.data(), dcomb.data(), r.data(), F.data(), X.data(), post.data(),
                          comb.data(), N, dm);  // dX assigned here (overwrites the 123s)
    ref::linear_backward(da.data(), dW.data(), dF.data(), a.data(), W.data(), N, d, d);
    ref::rmsnorm_backward(dy.data(), dw.data(), da.data(), y.data(), w.data(), rstd.data(), N, d);
    ref::hc_pre_backward(dX.data(), dfn.data(), dbase.data(), dscale.data(), dy.data(), dpost.data(), dcomb.data(),
                         X.data(), p.fn.data(), p.base.data(), p.scale.data(), mix.data(), rho.data(), N, dm);
    EXPECT_LT(fd_rel_error("composite dX", X, dX, f), kFdTol);
    EXPECT_LT(fd_rel_error("composite dfn", p.fn, dfn, f), kFdTol);
    EXPECT_LT(fd_rel_error("composite dbase", p.base, dbase, f), kFdTol);
    EXPECT_LT(fd_rel_error("composite dscale", p.scale, dscale, f), kFdTol);
    EXPECT_LT(fd_rel_error("composite dnorm_w", w, dw, f), kFdTol);
    EXPECT_LT(fd_rel_error("composite dW", W, dW, f), kFdTol);
}

// docs/model.md §5: with base 0 and scale 0.01 the unit starts at pre ≈ 0.5, post ≈ 1, comb ≈ 1/4, so that
// y ≈ 0.5·Σ_j X_j and X_out ≈ F + mean_j X_j.
TEST(KernelsRefHcPre, InitialisationValues) {
    const int n = 4, d = 8;
    const int64_t N = 2;
    mhc_dims dm = dims_of(n, d);
    const int rows = dm.rows();
    vector<double> X = randn(N * n * d, 700), fn = randn(rows * n * d, 701, 0.006), base(rows, 0.0), scale(3, 0.01);
    vector<double> y(N * d), post(N * n), comb(N * n * n), mix(N * rows), rho(N);
    ref::hc_pre_forward(y.data(), post.data(), comb.data(), mix.data(), rho.data(), X.data(), fn.data(), base.data(),
                        scale.data(), N, dm);
    for (double p : post) EXPECT_NEAR(p, 1.0, 1e-3);
    for (double c : comb) EXPECT_NEAR(c, 0.25, 1e-3);
    for (int64_t t = 0; t < N; t++)
        for (int i = 0; i < d; i++) {
            double s = 0;
            for (int j = 0; j < n; j++) s += X[(t * n + j) * d + i];
            EXPECT_NEAR(y[t * d + i], 0.5 * s, 1e-3 * (1 + std::fabs(s)));
        }
}
