// Reference KV compressor pooling: hand-computed values (HCA window = document, CSA overlap layout), FD checks of
// every input for m = 3, 5 (no overlap) and m = 4 (overlap) over several documents, zero gradient of tail tokens.
#include <gtest/gtest.h>

#include <cmath>

#include "support/fd_check.hpp"
#include "trex/kernels/ref/ops.hpp"

using namespace trex;
using namespace trex::test;
using std::vector;

namespace {

struct comp_case {
    int m;
    bool overlap;
    int64_t c;
    vector<doc_span> docs;
    vector<int64_t> entry_offset;
    int64_t N = 0, Nc = 0, w = 0;
};

comp_case make_case(int m, bool overlap, int64_t c, const vector<int64_t>& lens) {
    comp_case cc{m, overlap, c, {}, {}};
    for (int64_t L : lens) {
        cc.docs.push_back({cc.N, L});
        cc.entry_offset.push_back(cc.Nc);
        cc.N += L;
        cc.Nc += L / m;
    }
    cc.w = (overlap ? 2 : 1) * c;
    return cc;
}

// Independent per-entry pooling straight from docs/model.md §3.4: gather the slots' (value, score) pairs of one
// channel, softmax the scores, weight the values.
double pool_by_hand(const comp_case& cc, const vector<double>& kvp, const vector<double>& gp, const vector<double>& ape,
                    int doc, int64_t i, int64_t ch) {
    vector<double> val, score;
    const int64_t s0 = cc.docs[doc].start, m = cc.m, c = cc.c, w = cc.w;
    if (cc.overlap && i > 0)
        for (int64_t p = 0; p < m; p++) {
            int64_t t = s0 + (i - 1) * m + p;
            val.push_back(kvp[t * w + ch]);
            score.push_back(gp[t * w + ch] + ape[p * w + ch]);
        }
    const int64_t off = cc.overlap ? c : 0;
    for (int64_t p = 0; p < m; p++) {
        int64_t t = s0 + i * m + p;
        val.push_back(kvp[t * w + off + ch]);
        score.push_back(gp[t * w + off + ch] + ape[p * w + off + ch]);
    }
    double z = 0, acc = 0;
    for (size_t q = 0; q < val.size(); q++) z += std::exp(score[q]);
    for (size_t q = 0; q < val.size(); q++) acc += std::exp(score[q]) / z * val[q];
    return acc;
}

void run_fd(const comp_case& cc, uint64_t seed) {
    vector<double> kvp = randn(cc.N * cc.w, seed), gp = randn(cc.N * cc.w, seed + 1),
                   ape = randn(cc.m * cc.w, seed + 2, 0.5), out(cc.Nc * cc.c), r = randn(cc.Nc * cc.c, seed + 3);
    auto f = [&] {
        ref::compressor_forward(out.data(), kvp.data(), gp.data(), ape.data(), cc.docs.data(), cc.entry_offset.data(),
                                (int64_t)cc.docs.size(), cc.m, cc.c, cc.overlap);
        return dot(r, out);
    };
    f();
    // forward against the independent pooling
    for (size_t k = 0; k < cc.docs.size(); k++)
        for (int64_t i = 0; i < cc.docs[k].len / cc.m; i++)
            for (int64_t ch = 0; ch < cc.c; ch++)
                EXPECT_NEAR(out[(cc.entry_offset[k] + i) * cc.c + ch], pool_by_hand(cc, kvp, gp, ape, k, i, ch), 1e-13);
    vector<double> dkvp(cc.N * cc.w, 77.0), dgp(cc.N * cc.w, 77.0), ape0 = randn(cc.m * cc.w, seed + 4), dape = ape0;
    ref::compressor_backward(dkvp.data(), dgp.data(), dape.data(), r.data(), kvp.data(), gp.data(), ape.data(),
                             cc.docs.data(), cc.entry_offset.data(), (int64_t)cc.docs.size(), cc.m, cc.c, cc.overlap);
    std::string tag = " m=" + std::to_string(cc.m) + (cc.overlap ? " overlap" : "");
    EXPECT_LT(fd_rel_error("compressor dkvp" + tag, kvp, dkvp, f), kFdTol);
    EXPECT_LT(fd_rel_error("compressor dgp" + tag, gp, dgp, f), kFdTol);
    EXPECT_LT(fd_rel_error("compressor dape" + tag, ape, minus(dape, ape0), f), kFdTol);
    // tail tokens (< m at the end of a document) get exactly 0 in every channel; with overlap, the previous-window
    // channels [0,c) of the last complete window get 0 too (no later entry uses them)
    for (const doc_span& dsp : cc.docs) {
        const int64_t n_ent = dsp.len / cc.m;
        for (int64_t t = dsp.start; t < dsp.start + dsp.len; t++) {
            const int64_t p = t - dsp.start;
            const bool tail = p >= n_ent * cc.m;
            const bool last_window = p >= (n_ent - 1) * cc.m && !tail;
            for (int64_t j = 0; j < cc.w; j++) {
                const bool zero = tail || (cc.overlap && last_window && j < cc.c);
                if (zero) {
                    EXPECT_EQ(dkvp[t * cc.w + j], 0.0) << t << "," << j;
                    EXPECT_EQ(dgp[t * cc.w + j], 0.0) << t << "," << j;
                } else {
                    EXPECT_NE(dkvp[t * cc.w + j], 0.0) << t << "," << j;
                }
            }
        }
    }
}

}  // namespace

TEST(KernelsRefCompressor, HcaWindowEqualsDocumentIsSoftmaxPooledAverage) {
    // one document of exactly m = 5 tokens → one entry = per-channel softmax(gp + ape)-weighted mean of kvp
    comp_case cc = make_case(5, false, 3, {5});
    vector<double> kvp = randn(5 * 3, 1), gp = randn(5 * 3, 2), ape = randn(5 * 3, 3), out(3);
    ref::compressor_forward(out.data(), kvp.data(), gp.data(), ape.data(), cc.docs.data(), cc.entry_offset.data(), 1, 5,
                            3, false);
    for (int ch = 0; ch < 3; ch++) {
        double z = 0, acc = 0;
        for (int p = 0; p < 5; p++) z += std::exp(gp[p * 3 + ch] + ape[p * 3 + ch]);
        for (int p = 0; p < 5; p++) acc += std::exp(gp[p * 3 + ch] + ape[p * 3 + ch]) / z * kvp[p * 3 + ch];
        EXPECT_NEAR(out[ch], acc, 1e-14);
    }
    // equal scores → the plain average
    vector<double> g0(15, 0.0), a0(15, 0.0);
    ref::compressor_forward(out.data(), kvp.data(), g0.data(), a0.data(), cc.docs.data(), cc.entry_offset.data(), 1, 5,
                            3, false);
    for (int ch = 0; ch < 3; ch++) {
        double mean = 0;
        for (int p = 0; p < 5; p++) mean += kvp[p * 3 + ch] / 5;
        EXPECT_NEAR(out[ch], mean, 1e-14);
    }
}

TEST(KernelsRefCompressor, CsaOverlapLayoutByHand) {
    // m = 4, c = 2, one document of 8 tokens → entries 0 and 1; zero scores → plain averages over the slots
    const int64_t c = 2, w = 4;
    comp_case cc = make_case(4, true, c, {8});
    vector<double> kvp(8 * w), gp(8 * w, 0.0), ape(4 * w, 0.0), out(2 * c);
    for (int t = 0; t < 8; t++)
        for (int j = 0; j < w; j++) kvp[t * w + j] = 100 * t + j;
    ref::compressor_forward(out.data(), kvp.data(), gp.data(), ape.data(), cc.docs.data(), cc.entry_offset.data(), 1, 4,
                            c, true);
    // entry 0: own window tokens 0..3, channels [c,2c) only: mean(100t) + c + ch
    for (int ch = 0; ch < c; ch++) EXPECT_NEAR(out[ch], 150 + c + ch, 1e-12);
    // entry 1: tokens 0..3 channels [0,c) and tokens 4..7 channels [c,2c): (mean over 8 slots)
    for (int ch = 0; ch < c; ch++) EXPECT_NEAR(out[c + ch], ((150 + ch) + (550 + c + ch)) / 2.0, 1e-12);
    // the gate of the previous-window slot for entry 1 is gp[t, ch] + ape[p, ch]: make token 2's first half dominate
    gp[2 * w + 0] = 50;
    ref::compressor_forward(out.data(), kvp.data(), gp.data(), ape.data(), cc.docs.data(), cc.entry_offset.data(), 1, 4,
                            c, true);
    EXPECT_NEAR(out[c + 0], 200.0, 1e-9);
    EXPECT_NEAR(out[0], 150 + c, 1e-12);  // entry 0 does not see the first half at all
    // ape[p] is indexed by position in window: ape[1, c+1] large → entry k's own token k·4+1, channel c+1 dominates
    gp[2 * w + 0] = 0;
    ape[1 * w + c + 1] = 60;
    ref::compressor_forward(out.data(), kvp.data(), gp.data(), ape.data(), cc.docs.data(), cc.entry_offset.data(), 1, 4,
                            c, true);
    EXPECT_NEAR(out[1], 100 + c + 1, 1e-9);
    EXPECT_NEAR(out[c + 1], 500 + c + 1, 1e-9);
}

TEST(KernelsRefCompressor, FdNoOverlapM3) {
    run_fd(make_case(3, false, 4, {11, 7, 2}), 10);
}
TEST(KernelsRefCompressor, FdNoOverlapM5) {
    run_fd(make_case(5, false, 3, {11, 7}), 20);
}
TEST(KernelsRefCompressor, FdOverlapM4) {
    run_fd(make_case(4, true, 3, {11, 9, 3}), 30);
}
