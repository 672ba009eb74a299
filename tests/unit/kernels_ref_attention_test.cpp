// Reference sparse attention with sink: single key + sink by hand, the P layout, FD of q, kv and sink with shared
// keys across queries, a query with no keys and a kv row that nobody reads.
#include <gtest/gtest.h>

#include <cmath>

#include "support/fd_check.hpp"
#include "trex/kernels/ref/ops.hpp"

using namespace trex;
using namespace trex::test;
using std::vector;

TEST(KernelsRefAttention, SingleKeyWithSinkByHand) {
    const int H = 2;
    const int64_t c = 3;
    vector<double> q{1, 2, -1, 0.5, 0, 1}, kv{0.3, -0.2, 0.7}, sink{0.4, -3}, o(H * c), P(H);
    vector<int64_t> off{0, 1};
    vector<int32_t> idx{0};
    const double scale = 0.6;
    ref::attention_forward(o.data(), P.data(), q.data(), kv.data(), sink.data(), off.data(), idx.data(), 1, H, c,
                           scale);
    for (int h = 0; h < H; h++) {
        double s = scale * (q[h * c] * kv[0] + q[h * c + 1] * kv[1] + q[h * c + 2] * kv[2]);
        double p = std::exp(s) / (std::exp(s) + std::exp(sink[h]));  // the sink is not scaled
        EXPECT_NEAR(P[h], p, 1e-15);
        for (int e = 0; e < c; e++) EXPECT_NEAR(o[h * c + e], p * kv[e], 1e-15);
    }
    // huge logits stay finite (max over scores and sink)
    vector<double> big_sink{800, -800};
    ref::attention_forward(o.data(), P.data(), q.data(), kv.data(), big_sink.data(), off.data(), idx.data(), 1, H, c,
                           scale);
    EXPECT_NEAR(P[0], 0.0, 1e-300);
    EXPECT_NEAR(P[1], 1.0, 1e-15);
}

TEST(KernelsRefAttention, PLayoutAndFd) {
    const int H = 3;
    const int64_t c = 8, N = 6, Nk = 9;
    // key lists: query 2 has none, query 3 one key; rows 0, 4 shared by several queries; row 8 unused
    vector<vector<int32_t>> keys{{0, 1}, {0, 1, 2, 4}, {}, {4}, {3, 4, 5, 0, 6}, {7, 6, 5, 4, 3, 2}};
    vector<int64_t> off{0};
    vector<int32_t> idx;
    for (auto& kl : keys) {
        for (int32_t j : kl) idx.push_back(j);
        off.push_back((int64_t)idx.size());
    }
    const double scale = 1.0 / std::sqrt((double)c);
    vector<double> q = randn(N * H * c, 1, 1.5), kv = randn(Nk * c, 2, 1.5), sink = randn(H, 3), o(N * H * c),
                   P(off.back() * H);
    ref::attention_forward(o.data(), P.data(), q.data(), kv.data(), sink.data(), off.data(), idx.data(), N, H, c,
                           scale);
    // P of query 4, head 2, key slot 3 (row 0) at off[4]·H + 2·nk + 3
    {
        const int64_t t = 4, h = 2, nk = 5;
        vector<double> s(nk);
        double Z = std::exp(sink[h]);
        for (int64_t j = 0; j < nk; j++) {
            double dd = 0;
            for (int64_t e = 0; e < c; e++) dd += q[(t * H + h) * c + e] * kv[keys[t][j] * c + e];
            s[j] = scale * dd;
            Z += std::exp(s[j]);
        }
        EXPECT_NEAR(P[off[t] * H + h * nk + 3], std::exp(s[3]) / Z, 1e-14);
    }
    for (int h = 0; h < H; h++)
        for (int64_t e = 0; e < c; e++) EXPECT_EQ(o[(2 * H + h) * c + e], 0.0);  // no keys → 0
    vector<double> r = randn(N * H * c, 4);
    auto f = [&] {
        vector<double> oo(N * H * c), pp(off.back() * H);
        ref::attention_forward(oo.data(), pp.data(), q.data(), kv.data(), sink.data(), off.data(), idx.data(), N, H, c,
                               scale);
        return dot(r, oo);
    };
    vector<double> dq(N * H * c, 7.0), dkv(Nk * c, 7.0), s0 = randn(H, 5), dsink = s0;
    ref::attention_backward(dq.data(), dkv.data(), dsink.data(), r.data(), q.data(), kv.data(), sink.data(), o.data(),
                            P.data(), off.data(), idx.data(), N, Nk, H, c, scale);
    EXPECT_LT(fd_rel_error("attention dq", q, dq, f), kFdTol);
    EXPECT_LT(fd_rel_error("attention dkv", kv, dkv, f), kFdTol);
    EXPECT_LT(fd_rel_error("attention dsink", sink, minus(dsink, s0), f), kFdTol);
    for (int64_t e = 0; e < c; e++) EXPECT_EQ(dkv[8 * c + e], 0.0);  // assigned over all Nk rows
    for (int64_t e = 0; e < H * c; e++) EXPECT_EQ(dq[2 * H * c + e], 0.0);
}
