// Fast attention-side kernels against the reference in double: KV compressor pooling (CSA overlap m = 4, HCA
// m = 5 / 16) over packed documents with tail tokens, the lightning indexer (scores, top-k selection, KL loss) and
// the sparse attention with sink, over key lists built the way model/attention_layer.cpp build_keys does (window +
// compressed rows) and over random key lists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

// ---------------------------------------------------------------- compressor
void check_compressor(const vector<int64_t>& lens, int m, int64_t c, uint64_t seed) {
    const doc_layout L(lens);
    const auto C = L.compressed(m);
    const bool overlap = m == 4;
    const int64_t N = L.N, w = (overlap ? 2 : 1) * c, Nc = C.n_entries, nd = (int64_t)L.docs.size();
    const std::string ex = "m=" + std::to_string(m) + " c=" + std::to_string(c);
    const vector<double> kvp = randf(N * w, seed), gp = randf(N * w, seed + 1), ape = randf(m * w, seed + 2, 0.5);
    const vector<float> kvpf = to_f(kvp), gpf = to_f(gp), apef = to_f(ape);
    vector<double> out(Nc * c);
    vector<float> outf(Nc * c, 3.0f);
    ref::compressor_forward(out.data(), kvp.data(), gp.data(), ape.data(), L.docs.data(), C.entry_offset.data(), nd, m,
                            c, overlap);
    cpu::compressor_forward(outf.data(), kvpf.data(), gpf.data(), apef.data(), L.docs.data(), C.entry_offset.data(), nd,
                            m, c, overlap);
    if (Nc > 0) expect_close(tag("compressor_forward out", N, ex), outf, out);

    const vector<double> dout = randf(Nc * c, seed + 3);
    vector<double> dkvp(N * w), dgp(N * w), dape(m * w, 0.0);
    ref::compressor_backward(dkvp.data(), dgp.data(), dape.data(), dout.data(), kvp.data(), gp.data(), ape.data(),
                             L.docs.data(), C.entry_offset.data(), nd, m, c, overlap);
    const vector<double> dape0 = junk_like(dape, seed + 4);
    vector<float> dkvpf(N * w, 3.0f), dgpf(N * w, 3.0f), dapef = to_f(dape0);
    cpu::compressor_backward(dkvpf.data(), dgpf.data(), dapef.data(), to_f(dout).data(), kvpf.data(), gpf.data(),
                             apef.data(), L.docs.data(), C.entry_offset.data(), nd, m, c, overlap);
    if (Nc > 0) {
        expect_close(tag("compressor_backward dkvp", N, ex), dkvpf, dkvp);
        expect_close(tag("compressor_backward dgp", N, ex), dgpf, dgp);
        expect_close_acc(tag("compressor_backward dape", N, ex), dapef, dape0, dape);
    } else {
        EXPECT_EQ(dapef, to_f(dape0)) << "no entries: dape unchanged";
    }
    // rows of tail tokens (and of documents without an entry) are exactly 0
    for (const auto& d : L.docs)
        for (int64_t t = d.start + (d.len / m) * m; t < d.start + d.len; t++)
            for (int64_t j = 0; j < w; j++) {
                ASSERT_EQ(dkvpf[t * w + j], 0.0f) << ex << " tail token " << t;
                ASSERT_EQ(dgpf[t * w + j], 0.0f) << ex << " tail token " << t;
            }
}

}  // namespace

TEST(KernelsCpuAttention, Compressor) {
    for (int m : {4, 5, 16}) check_compressor(small_docs(), m, 13, 100 + m);
    check_compressor({21, 3, 17, 6}, 5, 7, 120);  // several HCA documents with entries and tails
    check_compressor({21, 3, 17, 6}, 4, 7, 130);
    for (int m : {4, 16}) check_compressor(tiny_docs(), m, 128, 140 + m);
    check_compressor(tiny_docs(), 5, 128, 160);
}

// ---------------------------------------------------------------- indexer
namespace {

struct indexer_case {
    doc_layout L;
    doc_layout::comp C;
    int m, HI;
    int64_t cI, ld;
    vector<double> qI, KI, w;
    indexer_case(const vector<int64_t>& lens, int m_, int HI_, int64_t cI_, uint64_t seed)
        : L(lens), C(L.compressed(m_)), m(m_), HI(HI_), cI(cI_) {
        ld = std::max<int64_t>(C.max_entries, 1);
        // unit-RMS keys and queries (the model's keys are RMS-normed), head weights scaled by (cI·HI)^-1/2
        qI = randf(L.N * HI * cI, seed);
        KI = randf(std::max<int64_t>(C.n_entries, 1) * cI, seed + 1);
        w = randf(L.N * HI, seed + 2, 1.0 / std::sqrt((double)(cI * HI)));
    }
    int64_t vis(int64_t t) const { return (L.pos[t] + 1) / m; }
};

// Visible part of a [N, ld] score-shaped array.
template <typename T>
vector<T> visible(const indexer_case& ic, const vector<T>& a) {
    vector<T> r;
    for (int64_t t = 0; t < ic.L.N; t++)
        for (int64_t i = 0; i < ic.vis(t); i++) r.push_back(a[t * ic.ld + i]);
    return r;
}

// Runs the fast forward; returns its scores (junk 42 beyond the visible columns).
vector<float> check_indexer_scores(const indexer_case& ic, uint64_t seed) {
    const int64_t N = ic.L.N, ld = ic.ld, cI = ic.cI;
    const int HI = ic.HI;
    const std::string ex = "m=" + std::to_string(ic.m);
    vector<double> sc(N * ld, 42.0);
    ref::indexer_scores_forward(sc.data(), ic.qI.data(), ic.KI.data(), ic.w.data(), ic.L.doc_of.data(), ic.L.pos.data(),
                                ic.C.entry_offset.data(), N, HI, cI, ic.m, ld);
    const vector<float> qIf = to_f(ic.qI), KIf = to_f(ic.KI), wf = to_f(ic.w);
    vector<float> scf(N * ld, 42.0f);
    cpu::indexer_scores_forward(scf.data(), qIf.data(), KIf.data(), wf.data(), ic.L.doc_of.data(), ic.L.pos.data(),
                                ic.C.entry_offset.data(), N, HI, cI, ic.m, ld);
    expect_close(tag("indexer_scores_forward", N, ex), visible(ic, scf), visible(ic, sc));
    for (int64_t t = 0; t < N; t++)
        for (int64_t i = ic.vis(t); i < ld; i++) EXPECT_EQ(scf[t * ld + i], 42.0f) << "written beyond visible";

    // backward: dscores has junk beyond the visible columns (never read)
    vector<double> dsc = randf(N * ld, seed);
    for (int64_t t = 0; t < N; t++)
        for (int64_t i = ic.vis(t); i < ld; i++) dsc[t * ld + i] = 1e30;
    const int64_t nK = std::max<int64_t>(ic.C.n_entries, 1);
    vector<double> dqI(N * HI * cI), dKI(nK * cI, 0.0), dw(N * HI);
    ref::indexer_scores_backward(dqI.data(), dKI.data(), dw.data(), dsc.data(), ic.qI.data(), ic.KI.data(), ic.w.data(),
                                 ic.L.doc_of.data(), ic.L.pos.data(), ic.C.entry_offset.data(), N, HI, cI, ic.m, ld);
    const vector<double> dKI0 = junk_like(dKI, seed + 1);
    vector<float> dqIf(N * HI * cI, 3.0f), dKIf = to_f(dKI0), dwf(N * HI, 3.0f);
    cpu::indexer_scores_backward(dqIf.data(), dKIf.data(), dwf.data(), to_f(dsc).data(), qIf.data(), KIf.data(),
                                 wf.data(), ic.L.doc_of.data(), ic.L.pos.data(), ic.C.entry_offset.data(), N, HI, cI,
                                 ic.m, ld);
    expect_close(tag("indexer_scores_backward dqI", N, ex), dqIf, dqI);
    expect_close(tag("indexer_scores_backward dw", N, ex), dwf, dw);
    expect_close_acc(tag("indexer_scores_backward dKI", N, ex), dKIf, dKI0, dKI);
    return scf;
}

// Selection on identical scores (the double reference gets the float values): must be the same, bit for bit.
void check_topk(const indexer_case& ic, const vector<float>& scf, int k, bool dense, const std::string& what) {
    const int64_t N = ic.L.N;
    vector<int32_t> sel(N * k, 7), nsel(N, 7), self(N * k, 9), nself(N, 9);
    ref::indexer_topk(sel.data(), nsel.data(), to_d(scf).data(), ic.L.pos.data(), N, ic.m, k, ic.ld, dense);
    cpu::indexer_topk(self.data(), nself.data(), scf.data(), ic.L.pos.data(), N, ic.m, k, ic.ld, dense);
    EXPECT_EQ(nself, nsel) << what;
    EXPECT_EQ(self, sel) << what;
    int64_t n_partial = 0, n_pad = 0;
    for (int64_t t = 0; t < N; t++) {
        n_partial += ic.vis(t) > k;
        n_pad += nsel[t] < k;
    }
    std::printf("[CPU] %-52s selections equal (%ld queries with more visible than k, %ld padded)\n", what.c_str(),
                (long)n_partial, (long)n_pad);
    if (!dense) {
        EXPECT_GT(n_partial, 0) << what << ": no query exercises the selection";
    }
}

void check_indexer_loss(const indexer_case& ic, const vector<float>& scf, int k, bool normalised, uint64_t seed) {
    const int64_t N = ic.L.N, ld = ic.ld;
    vector<int32_t> sel(N * k), nsel(N);
    cpu::indexer_topk(sel.data(), nsel.data(), scf.data(), ic.L.pos.data(), N, ic.m, k, ld, false);
    // target: positive weights with some exact zeros, normalised per query (as the model builds it), or not
    std::mt19937 g(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    vector<double> p(N * k, 0.0);
    for (int64_t t = 0; t < N; t++) {
        double s = 0;
        for (int a = 0; a < nsel[t]; a++) {
            p[t * k + a] = u(g) < 0.2 ? 0.0 : u(g);
            s += p[t * k + a];
        }
        if (normalised && s > 0)
            for (int a = 0; a < nsel[t]; a++) p[t * k + a] /= s;
        if (!normalised && t % 7 == 3)  // some all-zero rows (the model writes 0 when the attention mass is 0)
            for (int a = 0; a < nsel[t]; a++) p[t * k + a] = 0.0;
    }
    p = to_d(to_f(p));
    vector<double> dsc(N * ld, 5.0);
    const vector<double> scd = to_d(scf);
    const double loss = ref::indexer_loss(dsc.data(), scd.data(), p.data(), sel.data(), nsel.data(), N, k, ld);
    vector<float> dscf(N * ld, 5.0f);
    const double lossf = cpu::indexer_loss(dscf.data(), scf.data(), to_f(p).data(), sel.data(), nsel.data(), N, k, ld);
    const std::string ex = std::string(normalised ? "p normalised" : "p unnormalised") + " k=" + std::to_string(k);
    expect_close_scalar(tag("indexer_loss value", N, ex), lossf, loss);
    expect_close(tag("indexer_loss dscores", N, ex), dscf, dsc);
}

}  // namespace

TEST(KernelsCpuIndexer, ScoresTopkLoss) {
    {  // small: m = 4 (the CSA ratio; ≤ 2 entries per query) and m = 2 (more entries than k = 3)
        indexer_case ic(small_docs(), 4, 3, 13, 200);
        const vector<float> sc = check_indexer_scores(ic, 210);
        check_topk(ic, sc, 1, false, "indexer_topk [small] m=4 k=1");
        check_topk(ic, sc, (int)ic.ld, true, "indexer_topk [small] m=4 dense");
        check_indexer_loss(ic, sc, 2, true, 220);
        indexer_case ic2({13, 3, 1, 8}, 2, 2, 7, 230);
        const vector<float> sc2 = check_indexer_scores(ic2, 240);
        check_topk(ic2, sc2, 3, false, "indexer_topk [small] m=2 k=3");
        check_topk(ic2, sc2, (int)ic2.ld, true, "indexer_topk [small] m=2 dense");
        check_indexer_loss(ic2, sc2, 3, true, 250);
        check_indexer_loss(ic2, sc2, (int)ic2.ld, true, 255);
    }
    {  // v4-tiny: HI = 4, cI = 128, top-16 of up to 75 entries
        indexer_case ic(tiny_docs(), 4, 4, 128, 300);
        const vector<float> sc = check_indexer_scores(ic, 310);
        check_topk(ic, sc, 16, false, "indexer_topk [tiny] k=16");
        check_topk(ic, sc, (int)ic.ld, true, "indexer_topk [tiny] dense");
        check_indexer_loss(ic, sc, 16, true, 320);
    }
}

TEST(KernelsCpuIndexer, TopkTies) {
    // scores quantised to a few values: many exact ties, broken toward the lower entry index
    for (int64_t seed : {400, 410, 420}) {
        indexer_case ic(tiny_docs(), 4, 4, 128, (uint64_t)seed);
        vector<float> sc(ic.L.N * ic.ld, 1e30f);  // junk beyond visible: must never be picked
        std::mt19937 g((uint32_t)seed);
        for (int64_t t = 0; t < ic.L.N; t++)
            for (int64_t i = 0; i < ic.vis(t); i++) sc[t * ic.ld + i] = 0.5f * (float)(g() % (seed == 420 ? 2 : 5));
        check_topk(ic, sc, 16, false, "indexer_topk [tiny] ties seed=" + std::to_string(seed));
        check_topk(ic, sc, 1, false, "indexer_topk [tiny] ties k=1 seed=" + std::to_string(seed));
    }
    indexer_case ic({13, 3, 1, 8}, 2, 2, 7, 430);
    vector<float> sc(ic.L.N * ic.ld, 0.0f);  // all equal
    check_topk(ic, sc, 3, false, "indexer_topk [small] all equal");
}

TEST(KernelsCpuIndexer, LossWithUnnormalisedTarget) {
    // The reference's dscores is the exact gradient of the returned value, ((Σp)·q − p)/n_q, also when the target
    // does not sum to 1 (e.g. all-zero rows, which the model writes when a query's attention mass on its selected
    // entries is 0).
    indexer_case ic({13, 3, 1, 8}, 2, 2, 7, 500);
    const vector<float> sc = check_indexer_scores(ic, 510);
    check_indexer_loss(ic, sc, 3, false, 520);
    indexer_case it(tiny_docs(), 4, 4, 128, 530);
    const vector<float> st = check_indexer_scores(it, 540);
    check_indexer_loss(it, st, 16, false, 550);
}

// ---------------------------------------------------------------- attention
namespace {

struct key_lists {
    vector<int64_t> offset;
    vector<int32_t> idx;
    int64_t Nk = 0;
};

// As model/attention_layer.cpp build_keys: the window (same document, p − win < pos ≤ p, ascending), then the
// compressed entries: m = 4 the indexer's selection, other m > 0 every visible entry, as rows N + entry of kv.
key_lists build_keys(const doc_layout& L, int64_t win, int m, const vector<int32_t>& sel, const vector<int32_t>& nsel,
                     int64_t kw) {
    key_lists k;
    const int64_t N = L.N;
    const auto C = m > 0 ? L.compressed(m) : doc_layout::comp{};
    k.Nk = N + C.n_entries;
    k.offset.push_back(0);
    for (int64_t t = 0; t < N; t++) {
        const int64_t p = L.pos[t], nw = std::min<int64_t>(p + 1, win);
        for (int64_t j = 0; j < nw; j++) k.idx.push_back((int32_t)(t - nw + 1 + j));
        if (m > 0) {
            const int64_t base = N + C.entry_offset[L.doc_of[t]];
            const int64_t nc = m == 4 ? nsel[t] : (p + 1) / m;
            for (int64_t j = 0; j < nc; j++) k.idx.push_back((int32_t)(base + (m == 4 ? sel[t * kw + j] : j)));
        }
        k.offset.push_back((int64_t)k.idx.size());
    }
    return k;
}

void check_attention(const key_lists& K, int64_t N, int H, int64_t c, uint64_t seed, const std::string& what) {
    const double scale = 1.0 / std::sqrt((double)c);
    const int64_t Nk = K.Nk, nP = K.offset[N] * H;
    const vector<double> q = randf(N * H * c, seed), kv = randf(Nk * c, seed + 1), sink = randf(H, seed + 2);
    vector<double> o(N * H * c), P(nP);
    ref::attention_forward(o.data(), P.data(), q.data(), kv.data(), sink.data(), K.offset.data(), K.idx.data(), N, H, c,
                           scale);
    const vector<float> qf = to_f(q), kvf = to_f(kv), sinkf = to_f(sink);
    vector<float> of(N * H * c, 3.0f), Pf(nP, 3.0f);
    cpu::attention_forward(of.data(), Pf.data(), qf.data(), kvf.data(), sinkf.data(), K.offset.data(), K.idx.data(), N,
                           H, c, scale);
    expect_close(tag("attention_forward o", N, what), of, o);
    expect_close(tag("attention_forward P", N, what), Pf, P);

    const vector<double> dout = randf(N * H * c, seed + 3);
    vector<double> dq(N * H * c), dkv(Nk * c), dsink(H, 0.0);
    ref::attention_backward(dq.data(), dkv.data(), dsink.data(), dout.data(), q.data(), kv.data(), sink.data(),
                            o.data(), P.data(), K.offset.data(), K.idx.data(), N, Nk, H, c, scale);
    const vector<double> dsink0 = junk_like(dsink, seed + 4);
    vector<float> dqf(N * H * c, 3.0f), dkvf(Nk * c, 3.0f), dsinkf = to_f(dsink0);
    cpu::attention_backward(dqf.data(), dkvf.data(), dsinkf.data(), to_f(dout).data(), qf.data(), kvf.data(),
                            sinkf.data(), of.data(), Pf.data(), K.offset.data(), K.idx.data(), N, Nk, H, c, scale);
    expect_close(tag("attention_backward dq", N, what), dqf, dq);
    expect_close(tag("attention_backward dkv", N, what), dkvf, dkv);
    expect_close_acc(tag("attention_backward dsink", N, what), dsinkf, dsink0, dsink);
}

// Realistic key lists: m = 0 (window only), 4 (window + indexer top-k of random scores) or 16 / 5 (window + HCA).
void check_attention_layer(const vector<int64_t>& lens, int64_t win, int m, int k, int H, int64_t c, uint64_t seed) {
    const doc_layout L(lens);
    vector<int32_t> sel, nsel;
    int64_t kw = 0;
    if (m == 4) {
        const auto C = L.compressed(4);
        const int64_t ld = std::max<int64_t>(C.max_entries, 1);
        kw = std::max<int64_t>(std::min<int64_t>(k, C.max_entries), 1);
        const vector<float> sc = to_f(randf(L.N * ld, seed + 10));
        sel.resize(L.N * kw);
        nsel.resize(L.N);
        cpu::indexer_topk(sel.data(), nsel.data(), sc.data(), L.pos.data(), L.N, 4, (int)kw, ld, false);
    }
    const key_lists K = build_keys(L, win, m, sel, nsel, kw);
    check_attention(K, L.N, H, c, seed, "window=" + std::to_string(win) + " m=" + std::to_string(m));
}

}  // namespace

TEST(KernelsCpuAttention, ModelKeyLists) {
    for (int m : {0, 4, 5}) check_attention_layer(small_docs(), 4, m, 1, 3, 13, 600 + m);
    for (int m : {0, 4, 16}) check_attention_layer(tiny_docs(), 32, m, 16, 4, 128, 620 + m);
}

TEST(KernelsCpuAttention, RandomKeyLists) {
    // random lists: an empty list, repeated keys inside a list, rows nobody reads, long and short lists
    for (int64_t N : {13, 512}) {
        const int64_t Nk = N == 13 ? 20 : 700, maxlen = N == 13 ? 9 : 90;
        std::mt19937 g((uint32_t)(700 + N));
        key_lists K;
        K.Nk = Nk;
        K.offset.push_back(0);
        for (int64_t t = 0; t < N; t++) {
            const int64_t len = t == 2 ? 0 : (int64_t)(g() % (maxlen + 1));
            for (int64_t j = 0; j < len; j++) K.idx.push_back((int32_t)(g() % (Nk - 3)));  // the last 3 rows unused
            if (len >= 2) K.idx.back() = K.idx[K.idx.size() - 2];                          // a repeated key
            K.offset.push_back((int64_t)K.idx.size());
        }
        check_attention(K, N, N == 13 ? 3 : 4, N == 13 ? 13 : 128, 710 + N, "random keys");
    }
}
