// The engine's determinism contract (kernels/cpu/ops.hpp, gemm.hpp): every kernel is bitwise reproducible run to run.
// Kernels without a GEMM also give the same bits for any OpenMP thread count (their reductions have a fixed order).
// Kernels built on oneDNN's sgemm are reproducible for a fixed thread count only: oneDNN partitions the product
// (including K) by the number of threads. A thread-independent tiling of the GEMM cost ~25% of its throughput
// here (81 -> 64 GFLOP/s single-threaded), so we keep oneDNN's own threading and test what it guarantees.
// Every fast kernel runs at v4-tiny sizes with 1, 2, 3 and 4 threads.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "support/cpu_compare.hpp"
#include "trex/kernels/cpu/gemm.hpp"
#include "trex/kernels/cpu/ops.hpp"

using namespace trex;
using namespace trex::test;
using std::vector;

namespace {

using outputs = vector<vector<float>>;

// Runs `run` (which returns every output of the kernel, accumulated ones starting from fixed junk) with each
// thread count and expects bitwise-identical outputs.
enum class det { any_threads, fixed_threads };

void expect_thread_invariant(const std::string& name, const std::function<outputs()>& run,
                             det mode = det::any_threads) {
    const int saved = omp_get_max_threads();
    outputs base;
    bool all_same = true;
    for (int nt : {1, 2, 3, 4}) {
        omp_set_num_threads(nt);
        outputs r = run();
        if (nt == 1 || mode == det::fixed_threads) {
            if (mode == det::fixed_threads) {  // compare two runs with this thread count
                outputs again = run();
                for (size_t i = 0; i < r.size(); i++)
                    if (std::memcmp(r[i].data(), again[i].data(), r[i].size() * sizeof(float)) != 0) {
                        all_same = false;
                        ADD_FAILURE() << name << ": output " << i << " differs between two runs with " << nt
                                      << " threads";
                    }
            }
            base = std::move(r);
            continue;
        }
        ASSERT_EQ(r.size(), base.size());
        for (size_t i = 0; i < r.size(); i++) {
            ASSERT_EQ(r[i].size(), base[i].size());
            if (std::memcmp(r[i].data(), base[i].data(), r[i].size() * sizeof(float)) != 0) {
                all_same = false;
                double mx = 0;
                size_t ndiff = 0;
                for (size_t j = 0; j < r[i].size(); j++)
                    if (r[i][j] != base[i][j]) {
                        ndiff++;
                        mx = std::max(mx, (double)std::fabs(r[i][j] - base[i][j]));
                    }
                ADD_FAILURE() << name << ": output " << i << " differs between 1 and " << nt << " threads (" << ndiff
                              << " of " << r[i].size() << " values, max |diff| " << mx << ")";
            }
        }
    }
    omp_set_num_threads(saved);
    std::printf("[DET] %-60s %s\n", name.c_str(),
                !all_same ? "DIFFERS"
                          : (mode == det::any_threads ? "bitwise identical for 1..4 threads"
                                                      : "bitwise identical run to run for each of 1..4 threads"));
}

vector<float> rf(size_t n, uint64_t seed, double sd = 1.0, double mean = 0.0) {
    return to_f(randf(n, seed, sd, mean));
}

mhc_dims mdims() {
    mhc_dims dm;
    dm.n = 4;
    dm.d = 256;
    return dm;
}

}  // namespace

TEST(KernelsCpuDeterminism, DenseAndNorms) {
    const int64_t N = 512, d = 256, V = 4096;
    {
        std::mt19937 g(1);
        vector<int32_t> ids(N);
        for (auto& id : ids) id = (int32_t)(g() % 64);
        const vector<float> dout = rf(N * d, 2), junk = rf(V * d, 3);
        expect_thread_invariant("embedding_backward", [&] {
            vector<float> dt = junk;
            cpu::embedding_backward(dt.data(), dout.data(), ids.data(), N, d, V);
            return outputs{dt};
        });
    }
    {
        const vector<float> x = rf(N * d, 4), w = rf(d, 5, 0.3, 1.0), dy = rf(N * d, 6), junk = rf(d, 7);
        expect_thread_invariant("rmsnorm_forward + rmsnorm_backward", [&] {
            vector<float> y(N * d), rstd(N), dx(N * d), dw = junk;
            cpu::rmsnorm_forward(y.data(), rstd.data(), x.data(), w.data(), N, d, 1e-6);
            cpu::rmsnorm_backward(dx.data(), dw.data(), dy.data(), x.data(), w.data(), rstd.data(), N, d);
            return outputs{y, rstd, dx, dw};
        });
    }
    {
        const int half = 32;
        vector<float> cs(512 * half), sn(512 * half);
        for (int64_t p = 0; p < 512; p++)
            for (int i = 0; i < half; i++) {
                cs[p * half + i] = (float)std::cos(p * std::pow(1e4, -i / 32.0));
                sn[p * half + i] = (float)std::sin(p * std::pow(1e4, -i / 32.0));
            }
        vector<int32_t> pos(N);
        for (int64_t t = 0; t < N; t++) pos[t] = (int32_t)(t % 300);
        const vector<float> x = rf(N * 4 * 128, 8);
        expect_thread_invariant("rope_forward", [&] {
            vector<float> a = x;
            cpu::rope_forward(a.data(), pos.data(), {cs.data(), sn.data(), half, 512}, N, 4, 128, false);
            return outputs{a};
        });
    }
    // the Linear helpers over the v4-tiny shapes; the weight gradient is a reduction over the tokens
    for (auto [Nt, in, out] : vector<std::tuple<int64_t, int64_t, int64_t>>{
             {512, 256, 128}, {512, 128, 512}, {512, 256, 8}, {512, 256, 4096}, {8192, 256, 8}, {8192, 256, 128}}) {
        const vector<float> x = rf(Nt * in, 9), W = rf(out * in, 10, 0.05), dy = rf(Nt * out, 11),
                            junk = rf(out * in, 12);
        expect_thread_invariant(
            "linear fwd/bwd_data/bwd_weight N=" + std::to_string(Nt) + " in=" + std::to_string(in) +
                " out=" + std::to_string(out),
            [&] {
                vector<float> y(Nt * out), dx(Nt * in), dW = junk;
                cpu::linear_fwd(y.data(), x.data(), W.data(), Nt, in, out);
                cpu::linear_bwd_data(dx.data(), dy.data(), W.data(), Nt, in, out);
                cpu::linear_bwd_weight(dW.data(), dy.data(), x.data(), Nt, in, out);
                return outputs{y, dx, dW};
            },
            det::fixed_threads);
    }
    {
        const int g = 2;
        const int64_t in_g = 256, dg = 128;
        const vector<float> x = rf(N * g * in_g, 13), Wa = rf(g * dg * in_g, 14, 0.05), du = rf(N * g * dg, 15),
                            junk = rf(g * dg * in_g, 16);
        expect_thread_invariant(
            "grouped_linear forward + backward",
            [&] {
                vector<float> u(N * g * dg), dx(N * g * in_g), dWa = junk;
                cpu::grouped_linear_forward(u.data(), x.data(), Wa.data(), N, g, in_g, dg);
                cpu::grouped_linear_backward(dx.data(), dWa.data(), du.data(), x.data(), Wa.data(), N, g, in_g, dg);
                return outputs{u, dx, dWa};
            },
            det::fixed_threads);
    }
    {
        const vector<float> logits = rf(N * V, 17, 2.0);
        std::mt19937 g(18);
        vector<int32_t> labels(N);
        for (auto& l : labels) l = g() % 5 == 0 ? -1 : (int32_t)(g() % V);
        expect_thread_invariant("cross_entropy_fused / forward / backward", [&] {
            vector<float> z = logits, dl(N * V);
            int64_t nv = 0;
            const double loss = cpu::cross_entropy_fused(z.data(), &nv, labels.data(), N, V, 1.0 / 400);
            const double loss2 = cpu::cross_entropy_forward(&nv, logits.data(), labels.data(), N, V);
            cpu::cross_entropy_backward(dl.data(), logits.data(), labels.data(), N, V, 1.0 / 400);
            return outputs{z, dl, {(float)loss, (float)(loss - (double)(float)loss), (float)loss2}};
        });
    }
}

TEST(KernelsCpuDeterminism, Mhc) {
    const int64_t N = 512;
    const mhc_dims dm = mdims();
    const int n = dm.n, rows = dm.rows();
    const int64_t d = dm.d, nd = n * d;
    const vector<float> X = rf(N * nd, 20, 1.5), fn = rf(rows * nd, 21, 1.0 / 32), base = rf(rows, 22, 0.5),
                        scale = rf(3, 23, 0.3, 1.0), dy = rf(N * d, 24), dpost = rf(N * n, 25),
                        dcomb = rf(N * n * n, 26), F = rf(N * d, 27), dXo = rf(N * nd, 28);
    const vector<float> jX = rf(N * nd, 29), jfn = rf(rows * nd, 30), jb = rf(rows, 31), js = rf(3, 32);
    expect_thread_invariant(
        "hc_pre forward + backward",
        [&] {
            vector<float> y(N * d), post(N * n), comb(N * n * n), mix(N * rows), rho(N);
            cpu::hc_pre_forward(y.data(), post.data(), comb.data(), mix.data(), rho.data(), X.data(), fn.data(),
                                base.data(), scale.data(), N, dm);
            vector<float> dX = jX, dfn = jfn, db = jb, ds = js;
            cpu::hc_pre_backward(dX.data(), dfn.data(), db.data(), ds.data(), dy.data(), dpost.data(), dcomb.data(),
                                 X.data(), fn.data(), base.data(), scale.data(), mix.data(), rho.data(), N, dm);
            return outputs{y, post, comb, mix, rho, dX, dfn, db, ds};
        },
        det::fixed_threads);
    expect_thread_invariant("hc_post forward + backward", [&] {
        vector<float> Xo(N * nd), dF(N * d), dXi(N * nd), dp(N * n), dc(N * n * n);
        const vector<float> post = rf(N * n, 33, 0.5, 1.0), comb = rf(N * n * n, 34, 0.2, 0.25);
        cpu::hc_post_forward(Xo.data(), F.data(), X.data(), post.data(), comb.data(), N, dm);
        cpu::hc_post_backward(dF.data(), dXi.data(), dp.data(), dc.data(), dXo.data(), F.data(), X.data(), post.data(),
                              comb.data(), N, dm);
        return outputs{Xo, dF, dXi, dp, dc};
    });
    expect_thread_invariant(
        "hc_head forward + backward",
        [&] {
            vector<float> y(N * d), mix(N * n), rho(N), dX(N * nd), dfn(jfn.begin(), jfn.begin() + n * nd),
                db(jb.begin(), jb.begin() + n), ds(js.begin(), js.begin() + 1);
            cpu::hc_head_forward(y.data(), mix.data(), rho.data(), X.data(), fn.data(), base.data(), scale.data(), N,
                                 dm);
            cpu::hc_head_backward(dX.data(), dfn.data(), db.data(), ds.data(), dy.data(), X.data(), fn.data(),
                                  base.data(), scale.data(), mix.data(), rho.data(), N, dm);
            return outputs{y, mix, rho, dX, dfn, db, ds};
        },
        det::fixed_threads);
}

TEST(KernelsCpuDeterminism, AttentionSide) {
    const doc_layout L(tiny_docs());
    const int64_t N = L.N;
    for (int m : {4, 16}) {
        const auto C = L.compressed(m);
        const int64_t c = 128, w = (m == 4 ? 2 : 1) * c, Nc = C.n_entries;
        const vector<float> kvp = rf(N * w, 40), gp = rf(N * w, 41), ape = rf(m * w, 42, 0.5), dout = rf(Nc * c, 43),
                            jape = rf(m * w, 44);
        expect_thread_invariant("compressor forward + backward m=" + std::to_string(m), [&] {
            vector<float> out(Nc * c), dkvp(N * w), dgp(N * w), dape = jape;
            cpu::compressor_forward(out.data(), kvp.data(), gp.data(), ape.data(), L.docs.data(), C.entry_offset.data(),
                                    (int64_t)L.docs.size(), m, c, m == 4);
            cpu::compressor_backward(dkvp.data(), dgp.data(), dape.data(), dout.data(), kvp.data(), gp.data(),
                                     ape.data(), L.docs.data(), C.entry_offset.data(), (int64_t)L.docs.size(), m, c,
                                     m == 4);
            return outputs{out, dkvp, dgp, dape};
        });
    }
    // indexer: scores, top-k, loss, scores backward
    const auto C = L.compressed(4);
    const int HI = 4, k = 16;
    const int64_t cI = 128, ld = C.max_entries, Nc = C.n_entries;
    const vector<float> qI = rf(N * HI * cI, 50), KI = rf(Nc * cI, 51), wI = rf(N * HI, 52, 1.0 / std::sqrt(512.0)),
                        jK = rf(Nc * cI, 53);
    vector<float> p(N * k);
    {
        std::mt19937 g(54);
        for (int64_t t = 0; t < N; t++) {
            float s = 0;
            for (int a = 0; a < k; a++) s += (p[t * k + a] = (float)(g() % 100));
            for (int a = 0; a < k; a++) p[t * k + a] /= std::max(s, 1.0f);
        }
    }
    vector<int32_t> sel_keep(N * k), nsel_keep(N);
    expect_thread_invariant(
        "indexer scores + topk + loss + scores backward",
        [&] {
            vector<float> sc(N * ld, 0.0f), dsc(N * ld), dq(N * HI * cI), dK = jK, dw(N * HI);
            vector<int32_t> sel(N * k), nsel(N);
            cpu::indexer_scores_forward(sc.data(), qI.data(), KI.data(), wI.data(), L.doc_of.data(), L.pos.data(),
                                        C.entry_offset.data(), N, HI, cI, 4, ld);
            cpu::indexer_topk(sel.data(), nsel.data(), sc.data(), L.pos.data(), N, 4, k, ld, false);
            // nsel may cut the target short: p is only read on the first nsel slots
            const double loss = cpu::indexer_loss(dsc.data(), sc.data(), p.data(), sel.data(), nsel.data(), N, k, ld);
            cpu::indexer_scores_backward(dq.data(), dK.data(), dw.data(), dsc.data(), qI.data(), KI.data(), wI.data(),
                                         L.doc_of.data(), L.pos.data(), C.entry_offset.data(), N, HI, cI, 4, ld);
            sel_keep = sel;
            nsel_keep = nsel;
            vector<float> selv(sel.begin(), sel.end()), nselv(nsel.begin(), nsel.end());
            return outputs{sc, selv, nselv, {(float)loss}, dsc, dq, dK, dw};
        },
        det::fixed_threads);
    // attention over window + CSA keys
    const int H = 4;
    const int64_t c = 128, win = 32;
    vector<int64_t> koff{0};
    vector<int32_t> kidx;
    for (int64_t t = 0; t < N; t++) {
        const int64_t nw = std::min<int64_t>(L.pos[t] + 1, win);
        for (int64_t j = 0; j < nw; j++) kidx.push_back((int32_t)(t - nw + 1 + j));
        for (int64_t j = 0; j < nsel_keep[t]; j++)
            kidx.push_back((int32_t)(N + C.entry_offset[L.doc_of[t]] + sel_keep[t * k + j]));
        koff.push_back((int64_t)kidx.size());
    }
    const int64_t Nk = N + Nc;
    const vector<float> q = rf(N * H * c, 60), kv = rf(Nk * c, 61), sink = rf(H, 62), dout = rf(N * H * c, 63),
                        js = rf(H, 64);
    expect_thread_invariant("attention forward + backward", [&] {
        vector<float> o(N * H * c), P(koff.back() * H), dq(N * H * c), dkv(Nk * c), ds = js;
        cpu::attention_forward(o.data(), P.data(), q.data(), kv.data(), sink.data(), koff.data(), kidx.data(), N, H, c,
                               1.0 / std::sqrt(128.0));
        cpu::attention_backward(dq.data(), dkv.data(), ds.data(), dout.data(), q.data(), kv.data(), sink.data(),
                                o.data(), P.data(), koff.data(), kidx.data(), N, Nk, H, c, 1.0 / std::sqrt(128.0));
        return outputs{o, P, dq, dkv, ds};
    });
}

TEST(KernelsCpuDeterminism, Moe) {
    const int64_t N = 512, d = 256, I = 256;
    const int E = 8, K = 2;
    const vector<float> logits = rf(N * E, 70), bias = rf(E, 71, 0.1), dwt = rf(N * K, 72), dse = rf(N * E, 73, 0.1);
    vector<int32_t> sel(N * K);
    vector<float> weight(N * K), s(N * E);
    expect_thread_invariant("router forward + backward", [&] {
        vector<float> dl(N * E);
        cpu::router_forward(sel.data(), weight.data(), s.data(), logits.data(), bias.data(), nullptr, N, E, K, 1.5);
        cpu::router_backward(dl.data(), dwt.data(), dse.data(), logits.data(), s.data(), sel.data(), weight.data(), N,
                             E, K, 1.5);
        vector<float> selv(sel.begin(), sel.end());
        return outputs{selv, weight, s, dl};
    });
    const vector<float> a13 = rf(N * K * 2 * I, 74, 8.0), dh = rf(N * K * I, 75);
    expect_thread_invariant("swiglu forward + backward", [&] {
        vector<float> h(N * K * I), da(N * K * 2 * I);
        cpu::swiglu_forward(h.data(), a13.data(), N * K, I, 10.0);
        cpu::swiglu_backward(da.data(), dh.data(), a13.data(), N * K, I, 10.0);
        return outputs{h, da};
    });
    vector<vector<float>> w13(E), w2(E), j13(E), j2(E);
    vector<const float*> p13, p2;
    for (int e = 0; e < E; e++) {
        w13[e] = rf(2 * I * d, 80 + e, 0.075);
        w2[e] = rf(d * I, 90 + e, 0.0625);
        j13[e] = rf(2 * I * d, 100 + e);
        j2[e] = rf(d * I, 110 + e);
        p13.push_back(w13[e].data());
        p2.push_back(w2[e].data());
    }
    const vector<float> x = rf(N * d, 76), dy = rf(N * d, 77);
    expect_thread_invariant(
        "moe_experts forward + backward",
        [&] {
            vector<float> y(N * d), dx(N * d), dw(N * K);
            vector<vector<float>> d13 = j13, d2 = j2;
            vector<float*> pd13, pd2;
            for (int e = 0; e < E; e++) {
                pd13.push_back(d13[e].data());
                pd2.push_back(d2[e].data());
            }
            moe_routing_storage buffers;
            cpu::moe_state st = buffers.view(N, E, K, I);
            cpu::moe_experts_forward(y.data(), st, x.data(), sel.data(), weight.data(), p13.data(), p2.data(), N, d, E,
                                     K, I, 2.0);
            cpu::moe_experts_backward(dx.data(), dw.data(), pd13.data(), pd2.data(), dy.data(), st, x.data(),
                                      weight.data(), p13.data(), p2.data(), N, d, E, K, I, 2.0);
            outputs r{y, dx, dw};
            for (int e = 0; e < E; e++) {
                r.push_back(d13[e]);
                r.push_back(d2[e]);
            }
            return r;
        },
        det::fixed_threads);
    const vector<float> jds = rf(N * E, 78);
    expect_thread_invariant("balance_loss forward + backward", [&] {
        vector<float> ds = jds;
        const double L = cpu::balance_loss_forward(s.data(), sel.data(), 2, 256, E, K, 1e-4);
        cpu::balance_loss_backward(ds.data(), s.data(), sel.data(), 2, 256, E, K, 1e-4);
        return outputs{ds, {(float)L, (float)(L - (double)(float)L)}};
    });
}
