// The float instantiations of the reference kernels agree with the double ones (relative error ~1e-6): they link,
// and nothing in them depends on T beyond rounding.
#include <gtest/gtest.h>

#include "support/fd_check.hpp"
#include "support/test_support.hpp"
#include "trex/kernels/ref/ops.hpp"

using namespace trex;
using namespace trex::test;
using std::vector;

namespace {
vector<float> to_f(const vector<double>& v) {
    return vector<float>(v.begin(), v.end());
}
constexpr double kTol = 2e-6;
#define EXPECT_CLOSE(fv, dv) EXPECT_LT(rel_error((fv).data(), (dv).data(), (long)(dv).size()), kTol) << #fv
}  // namespace

TEST(KernelsRefFloat, MhcMatchesDouble) {
    mhc_dims dm;
    dm.n = 4;
    dm.d = 8;
    const int64_t N = 3;
    const int rows = dm.rows(), n = 4, d = 8;
    vector<double> X = randn(N * n * d, 1), fn = randn(rows * n * d, 2, 0.5), base = randn(rows, 3, 0.5),
                   scale = randn(3, 4, 0.3, 1.0);
    vector<double> y(N * d), post(N * n), comb(N * n * n), mix(N * rows), rho(N);
    vector<float> yf(N * d), postf(N * n), combf(N * n * n), mixf(N * rows), rhof(N);
    vector<float> Xf = to_f(X), fnf = to_f(fn), basef = to_f(base), scalef = to_f(scale);
    ref::hc_pre_forward(y.data(), post.data(), comb.data(), mix.data(), rho.data(), X.data(), fn.data(), base.data(),
                        scale.data(), N, dm);
    ref::hc_pre_forward(yf.data(), postf.data(), combf.data(), mixf.data(), rhof.data(), Xf.data(), fnf.data(),
                        basef.data(), scalef.data(), N, dm);
    EXPECT_CLOSE(yf, y);
    EXPECT_CLOSE(postf, post);
    EXPECT_CLOSE(combf, comb);
    vector<double> dy = randn(N * d, 5), dpost = randn(N * n, 6), dcomb = randn(N * n * n, 7);
    vector<double> dX(N * n * d, 0.0), dfn(rows * n * d, 0.0), dbase(rows, 0.0), dscale(3, 0.0);
    vector<float> dXf(N * n * d, 0.f), dfnf(rows * n * d, 0.f), dbasef(rows, 0.f), dscalef(3, 0.f);
    vector<float> dyf = to_f(dy), dpostf = to_f(dpost), dcombf = to_f(dcomb);
    ref::hc_pre_backward(dX.data(), dfn.data(), dbase.data(), dscale.data(), dy.data(), dpost.data(), dcomb.data(),
                         X.data(), fn.data(), base.data(), scale.data(), mix.data(), rho.data(), N, dm);
    ref::hc_pre_backward(dXf.data(), dfnf.data(), dbasef.data(), dscalef.data(), dyf.data(), dpostf.data(),
                         dcombf.data(), Xf.data(), fnf.data(), basef.data(), scalef.data(), mixf.data(), rhof.data(), N,
                         dm);
    EXPECT_LT(rel_error(dXf.data(), dX.data(), (long)dX.size()), 1e-5);  // Sinkhorn backward amplifies rounding
    EXPECT_LT(rel_error(dfnf.data(), dfn.data(), (long)dfn.size()), 1e-5);
    EXPECT_LT(rel_error(dbasef.data(), dbase.data(), (long)dbase.size()), 1e-5);
    EXPECT_LT(rel_error(dscalef.data(), dscale.data(), 3), 1e-5);
}

TEST(KernelsRefFloat, CompressorAttentionIndexerMatchDouble) {
    // compressor, overlap m = 4, two documents
    const int m = 4;
    const int64_t c = 6, w = 2 * c, N = 13;
    vector<doc_span> docs{{0, 9}, {9, 4}};
    vector<int64_t> eoff{0, 2};
    const int64_t Nc = 3;
    vector<double> kvp = randn(N * w, 10), gp = randn(N * w, 11), ape = randn(m * w, 12), out(Nc * c);
    vector<float> kvpf = to_f(kvp), gpf = to_f(gp), apef = to_f(ape), outf(Nc * c);
    ref::compressor_forward(out.data(), kvp.data(), gp.data(), ape.data(), docs.data(), eoff.data(), 2, m, c, true);
    ref::compressor_forward(outf.data(), kvpf.data(), gpf.data(), apef.data(), docs.data(), eoff.data(), 2, m, c, true);
    EXPECT_CLOSE(outf, out);
    vector<double> dout = randn(Nc * c, 13), dkvp(N * w), dgp(N * w), dape(m * w, 0.0);
    vector<float> doutf = to_f(dout), dkvpf(N * w), dgpf(N * w), dapef(m * w, 0.f);
    ref::compressor_backward(dkvp.data(), dgp.data(), dape.data(), dout.data(), kvp.data(), gp.data(), ape.data(),
                             docs.data(), eoff.data(), 2, m, c, true);
    ref::compressor_backward(dkvpf.data(), dgpf.data(), dapef.data(), doutf.data(), kvpf.data(), gpf.data(),
                             apef.data(), docs.data(), eoff.data(), 2, m, c, true);
    EXPECT_CLOSE(dkvpf, dkvp);
    EXPECT_CLOSE(dgpf, dgp);
    EXPECT_CLOSE(dapef, dape);

    // attention over the window keys of the same tokens (rows of kv = tokens)
    const int H = 2;
    vector<int64_t> koff{0};
    vector<int32_t> kidx;
    for (int64_t t = 0; t < N; t++) {
        for (int64_t s = std::max<int64_t>(0, t - 3); s <= t; s++) kidx.push_back((int32_t)s);
        koff.push_back((int64_t)kidx.size());
    }
    vector<double> q = randn(N * H * c, 14), kv = randn(N * c, 15), sink = randn(H, 16), o(N * H * c),
                   P(koff.back() * H);
    vector<float> qf = to_f(q), kvf = to_f(kv), sinkf = to_f(sink), of(N * H * c), Pf(koff.back() * H);
    ref::attention_forward(o.data(), P.data(), q.data(), kv.data(), sink.data(), koff.data(), kidx.data(), N, H, c,
                           0.4);
    ref::attention_forward(of.data(), Pf.data(), qf.data(), kvf.data(), sinkf.data(), koff.data(), kidx.data(), N, H, c,
                           0.4);
    EXPECT_CLOSE(of, o);
    EXPECT_CLOSE(Pf, P);
    vector<double> dA = randn(N * H * c, 17), dq(N * H * c), dkv(N * c), dsink(H, 0.0);
    vector<float> dAf = to_f(dA), dqf(N * H * c), dkvf(N * c), dsinkf(H, 0.f);
    ref::attention_backward(dq.data(), dkv.data(), dsink.data(), dA.data(), q.data(), kv.data(), sink.data(), o.data(),
                            P.data(), koff.data(), kidx.data(), N, N, H, c, 0.4);
    ref::attention_backward(dqf.data(), dkvf.data(), dsinkf.data(), dAf.data(), qf.data(), kvf.data(), sinkf.data(),
                            of.data(), Pf.data(), koff.data(), kidx.data(), N, N, H, c, 0.4);
    EXPECT_CLOSE(dqf, dq);
    EXPECT_CLOSE(dkvf, dkv);
    EXPECT_LT(rel_error(dsinkf.data(), dsink.data(), H), 1e-5);  // 1 − Σp in float

    // indexer scores over the compressed entries
    const int HI = 2;
    vector<int32_t> doc_of, pos;
    for (int64_t t = 0; t < N; t++) {
        doc_of.push_back(t < 9 ? 0 : 1);
        pos.push_back((int32_t)(t < 9 ? t : t - 9));
    }
    const int64_t ld = 2;
    vector<double> qI = randn(N * HI * c, 18), wI = randn(N * HI, 19), sc(N * ld, 0.0);
    vector<float> qIf = to_f(qI), wIf = to_f(wI), scf(N * ld, 0.f);
    ref::indexer_scores_forward(sc.data(), qI.data(), out.data(), wI.data(), doc_of.data(), pos.data(), eoff.data(), N,
                                HI, c, m, ld);
    ref::indexer_scores_forward(scf.data(), qIf.data(), outf.data(), wIf.data(), doc_of.data(), pos.data(), eoff.data(),
                                N, HI, c, m, ld);
    EXPECT_CLOSE(scf, sc);
    vector<double> dsc = randn(N * ld, 20), dqI(N * HI * c), dK(Nc * c, 0.0), dwI(N * HI);
    vector<float> dscf = to_f(dsc), dqIf(N * HI * c), dKf(Nc * c, 0.f), dwIf(N * HI);
    ref::indexer_scores_backward(dqI.data(), dK.data(), dwI.data(), dsc.data(), qI.data(), out.data(), wI.data(),
                                 doc_of.data(), pos.data(), eoff.data(), N, HI, c, m, ld);
    ref::indexer_scores_backward(dqIf.data(), dKf.data(), dwIf.data(), dscf.data(), qIf.data(), outf.data(), wIf.data(),
                                 doc_of.data(), pos.data(), eoff.data(), N, HI, c, m, ld);
    EXPECT_CLOSE(dqIf, dqI);
    EXPECT_CLOSE(dKf, dK);
    EXPECT_CLOSE(dwIf, dwI);
}

TEST(KernelsRefFloat, MoeMatchesDouble) {
    const int E = 4, K = 2;
    const int64_t N = 6, d = 8, I = 6;
    vector<double> logits = randn(N * E, 30), s(N * E), wt(N * K);
    vector<float> logitsf = to_f(logits), sf(N * E), wtf(N * K);
    vector<int32_t> sel(N * K), self(N * K);
    ref::router_forward<double>(sel.data(), wt.data(), s.data(), logits.data(), nullptr, nullptr, N, E, K, 1.5);
    ref::router_forward<float>(self.data(), wtf.data(), sf.data(), logitsf.data(), nullptr, nullptr, N, E, K, 1.5);
    EXPECT_EQ(self, sel);
    EXPECT_CLOSE(sf, s);
    EXPECT_CLOSE(wtf, wt);
    vector<vector<double>> w13(E), w2(E);
    vector<vector<float>> w13f(E), w2f(E);
    vector<const double*> p13, p2;
    vector<const float*> p13f, p2f;
    for (int e = 0; e < E; e++) {
        w13[e] = randn(2 * I * d, 31 + e, 0.5);
        w2[e] = randn(d * I, 41 + e, 0.5);
        w13f[e] = to_f(w13[e]);
        w2f[e] = to_f(w2[e]);
        p13.push_back(w13[e].data());
        p2.push_back(w2[e].data());
        p13f.push_back(w13f[e].data());
        p2f.push_back(w2f[e].data());
    }
    vector<double> x = randn(N * d, 50), y(N * d);
    vector<float> xf = to_f(x), yf(N * d);
    ref::moe_experts_forward(y.data(), x.data(), sel.data(), wt.data(), p13.data(), p2.data(), N, d, K, I, 1.0);
    ref::moe_experts_forward(yf.data(), xf.data(), sel.data(), wtf.data(), p13f.data(), p2f.data(), N, d, K, I, 1.0);
    EXPECT_CLOSE(yf, y);
    EXPECT_NEAR(ref::balance_loss_forward(sf.data(), self.data(), 2, 3, E, K, 0.1),
                ref::balance_loss_forward(s.data(), sel.data(), 2, 3, E, K, 0.1), 1e-7);
}
