// Reference lightning indexer: scores by hand and their FD check over two documents (queries with 0 and with fewer
// visible entries than k), top-k tie-break / −1 padding / dense mode, and the KL loss against a hand computation
// plus its FD check.
#include <gtest/gtest.h>

#include <cmath>

#include "support/fd_check.hpp"
#include "trex/kernels/ref/ops.hpp"

using namespace trex;
using namespace trex::test;
using std::vector;

namespace {
struct idx_case {
    int m;
    vector<int32_t> doc_of, pos;
    vector<int64_t> entry_offset;
    int64_t N = 0, Nc = 0, ld = 0;
};
idx_case make_case(int m, const vector<int64_t>& lens) {
    idx_case ic{m, {}, {}, {}};
    for (size_t k = 0; k < lens.size(); k++) {
        ic.entry_offset.push_back(ic.Nc);
        for (int64_t p = 0; p < lens[k]; p++) {
            ic.doc_of.push_back((int32_t)k);
            ic.pos.push_back((int32_t)p);
        }
        ic.N += lens[k];
        ic.Nc += lens[k] / m;
        ic.ld = std::max(ic.ld, lens[k] / m);
    }
    return ic;
}
}  // namespace

TEST(KernelsRefIndexer, ScoresByHandAndFd) {
    idx_case ic = make_case(4, {10, 7});  // entries 2 + 1; visible 0,0,0,1,1,1,1,2,2,2 | 0,0,0,1,1,1,1
    const int HI = 3;
    const int64_t cI = 5, N = ic.N, Nc = ic.Nc, ld = ic.ld;
    vector<double> qI = randn(N * HI * cI, 1), KI = randn(Nc * cI, 2), w = randn(N * HI, 3);
    // ReLU margins: no q·k within 1e-3 of the kink
    double min_abs = 1e9;
    int n_neg = 0, n_pos = 0;
    for (int64_t t = 0; t < N; t++)
        for (int64_t i = 0; i < (ic.pos[t] + 1) / ic.m; i++)
            for (int h = 0; h < HI; h++) {
                double dd = 0;
                for (int64_t e = 0; e < cI; e++)
                    dd += qI[(t * HI + h) * cI + e] * KI[(ic.entry_offset[ic.doc_of[t]] + i) * cI + e];
                min_abs = std::min(min_abs, std::fabs(dd));
                (dd > 0 ? n_pos : n_neg)++;
            }
    ASSERT_GT(min_abs, 1e-3);
    ASSERT_GT(n_neg, 0);
    ASSERT_GT(n_pos, 0);
    vector<double> scores(N * ld, 42.0);
    ref::indexer_scores_forward(scores.data(), qI.data(), KI.data(), w.data(), ic.doc_of.data(), ic.pos.data(),
                                ic.entry_offset.data(), N, HI, cI, ic.m, ld);
    for (int64_t t = 0; t < N; t++) {
        const int64_t vis = (ic.pos[t] + 1) / 4;
        for (int64_t i = 0; i < ld; i++) {
            if (i >= vis) {
                EXPECT_EQ(scores[t * ld + i], 42.0) << "untouched beyond visible";
                continue;
            }
            double want = 0;
            for (int h = 0; h < HI; h++) {
                double dd = 0;
                for (int64_t e = 0; e < cI; e++)
                    dd += qI[(t * HI + h) * cI + e] * KI[(ic.entry_offset[ic.doc_of[t]] + i) * cI + e];
                want += w[t * HI + h] * std::max(dd, 0.0);
            }
            EXPECT_NEAR(scores[t * ld + i], want, 1e-13);
        }
    }
    // second document's query at position 4 sees its own entry (row 2 of KI), not the first document's
    EXPECT_EQ(ic.doc_of[14], 1);
    {
        double want = 0;
        for (int h = 0; h < HI; h++) {
            double dd = 0;
            for (int64_t e = 0; e < cI; e++) dd += qI[(14 * HI + h) * cI + e] * KI[2 * cI + e];
            want += w[14 * HI + h] * std::max(dd, 0.0);
        }
        EXPECT_NEAR(scores[14 * ld + 0], want, 1e-13);
    }
    vector<double> r = randn(N * ld, 4);  // non-zero also on invisible columns: they must not be read
    auto f = [&] {
        vector<double> s(N * ld, 0.0);
        ref::indexer_scores_forward(s.data(), qI.data(), KI.data(), w.data(), ic.doc_of.data(), ic.pos.data(),
                                    ic.entry_offset.data(), N, HI, cI, ic.m, ld);
        return dot(r, s);
    };
    vector<double> dqI(N * HI * cI, 9.0), dw(N * HI, 9.0), K0 = randn(Nc * cI, 5), dKI = K0;
    ref::indexer_scores_backward(dqI.data(), dKI.data(), dw.data(), r.data(), qI.data(), KI.data(), w.data(),
                                 ic.doc_of.data(), ic.pos.data(), ic.entry_offset.data(), N, HI, cI, ic.m, ld);
    EXPECT_LT(fd_rel_error("indexer dqI", qI, dqI, f), kFdTol);
    EXPECT_LT(fd_rel_error("indexer dKI", KI, minus(dKI, K0), f), kFdTol);
    EXPECT_LT(fd_rel_error("indexer dw", w, dw, f), kFdTol);
    // queries with no visible entry get 0
    for (int64_t t : {0, 1, 2, 10, 11, 12}) {
        for (int h = 0; h < HI; h++) EXPECT_EQ(dw[t * HI + h], 0.0);
        for (int64_t e = 0; e < HI * cI; e++) EXPECT_EQ(dqI[t * HI * cI + e], 0.0);
    }
}

TEST(KernelsRefIndexer, TopkTieBreakPaddingDense) {
    const int m = 1, k = 3;
    const int64_t ld = 5;
    // visible = pos + 1 with m = 1
    vector<int32_t> pos{4, 4, 4, 1, 0, 4};
    vector<double> scores = {
        1, 3, 3,  0, 3,  // ties among three 3s: k = 3 takes all of them → {1,2,4}
        2, 5, 5,  5, 1,  // three 5s, k = 3 → {1,2,3}
        5, 5, 2,  5, 5,  // four 5s, k = 3 → lowest indices {0,1,3}
        7, 8, 0,  0, 0,  // 2 visible < k → {0,1,-1}
        9, 9, 9,  9, 9,  // 1 visible → {0,-1,-1}
        0, 4, -1, 6, 5,  // distinct → {1,3,4}
    };
    vector<int32_t> sel(6 * k), nsel(6);
    ref::indexer_topk(sel.data(), nsel.data(), scores.data(), pos.data(), 6, m, k, ld, false);
    vector<int32_t> want{1, 2, 4, 1, 2, 3, 0, 1, 3, 0, 1, -1, 0, -1, -1, 1, 3, 4};
    EXPECT_EQ(sel, want);
    EXPECT_EQ(nsel, (vector<int32_t>{3, 3, 3, 2, 1, 3}));
    // k = 1 tie → lowest index
    vector<int32_t> s1(6), n1(6);
    ref::indexer_topk(s1.data(), n1.data(), scores.data(), pos.data(), 6, m, 1, ld, false);
    EXPECT_EQ(s1, (vector<int32_t>{1, 1, 0, 1, 0, 3}));
    // m = 4: visible = floor((pos+1)/4) → pos 2 sees nothing
    vector<int32_t> p4{2, 3, 8};
    vector<int32_t> s4(3 * 2), n4(3);
    ref::indexer_topk(s4.data(), n4.data(), scores.data(), p4.data(), 3, 4, 2, ld, false);
    EXPECT_EQ(s4, (vector<int32_t>{-1, -1, 0, -1, 0, 1}));  // pos 3 sees entry 0; pos 8 sees {0,1}
    EXPECT_EQ(n4, (vector<int32_t>{0, 1, 2}));
    // dense: every visible entry, padded to k
    vector<int32_t> sd(6 * 5), nd(6);
    ref::indexer_topk(sd.data(), nd.data(), scores.data(), pos.data(), 6, m, 5, ld, true);
    EXPECT_EQ(nd, (vector<int32_t>{5, 5, 5, 2, 1, 5}));
    EXPECT_EQ(vector<int32_t>(sd.begin() + 15, sd.begin() + 20), (vector<int32_t>{0, 1, -1, -1, -1}));
    EXPECT_EQ(vector<int32_t>(sd.begin() + 20, sd.begin() + 25), (vector<int32_t>{0, -1, -1, -1, -1}));
    EXPECT_EQ(vector<int32_t>(sd.begin() + 25, sd.begin() + 30), (vector<int32_t>{0, 1, 2, 3, 4}));
}

TEST(KernelsRefIndexer, LossByHandAndFd) {
    // m = 2, documents of 9 and 5 tokens: visible 0..4 and 0..2; k = 3 → some queries see 0, some fewer than k
    idx_case ic = make_case(2, {9, 5});
    const int k = 3;
    const int64_t N = ic.N, ld = ic.ld;
    vector<double> scores = randn(N * ld, 60, 1.5);
    vector<int32_t> sel(N * k), nsel(N);
    ref::indexer_topk(sel.data(), nsel.data(), scores.data(), ic.pos.data(), N, ic.m, k, ld, false);
    // target: a random distribution over the selected slots, one zero entry where there are 3 slots
    vector<double> pt(N * k, 0.0), raw = randn(N * k, 61);
    int64_t n_q = 0;
    for (int64_t t = 0; t < N; t++) {
        if (nsel[t] == 0) continue;
        n_q++;
        double z = 0;
        for (int s = 0; s < nsel[t]; s++) z += (pt[t * k + s] = (s == 2 ? 0.0 : std::exp(raw[t * k + s])));
        for (int s = 0; s < nsel[t]; s++) pt[t * k + s] /= z;
    }
    EXPECT_EQ(n_q, 8 + 4);  // only position 0 of each document sees nothing (floor(1/2) = 0)
    vector<double> ds(N * ld, 5.0);
    double loss = ref::indexer_loss(ds.data(), scores.data(), pt.data(), sel.data(), nsel.data(), N, k, ld);
    double want = 0;
    for (int64_t t = 0; t < N; t++) {
        if (nsel[t] == 0) continue;
        double z = 0;
        for (int s = 0; s < nsel[t]; s++) z += std::exp(scores[t * ld + sel[t * k + s]]);
        for (int s = 0; s < nsel[t]; s++) {
            double p = pt[t * k + s], q = std::exp(scores[t * ld + sel[t * k + s]]) / z;
            if (p > 0) want += p * std::log(p / q);
        }
    }
    EXPECT_NEAR(loss, want / n_q, 1e-13);
    for (int64_t t = 0; t < N; t++)
        for (int64_t i = 0; i < ld; i++) {
            bool selected = false;
            for (int s = 0; s < nsel[t]; s++) selected |= sel[t * k + s] == i;
            if (!selected) {
                EXPECT_EQ(ds[t * ld + i], 0.0);
            }
        }
    auto f = [&] {
        vector<double> tmp(N * ld);
        return ref::indexer_loss(tmp.data(), scores.data(), pt.data(), sel.data(), nsel.data(), N, k, ld);
    };
    EXPECT_LT(fd_rel_error("indexer_loss dscores", scores, ds, f), kFdTol);
    // no query with a selection → 0 and all-zero gradient
    vector<int32_t> none(N, 0);
    EXPECT_EQ(ref::indexer_loss(ds.data(), scores.data(), pt.data(), sel.data(), none.data(), N, k, ld), 0.0);
    for (double v : ds) EXPECT_EQ(v, 0.0);
}
