// Sparse multi-query attention with an attention sink (docs/model.md §3.4). Every query has its own key list (the
// window, HCA entries or the indexer's CSA picks), shared by all heads; keys are rows of kv (K = V).
//
// forward : query-parallel; P is stored for the backward (layout per query [h][j]).
// backward: pass 1 (query-parallel) computes dS = P ⊙ (dP − D) and dq; pass 2 (key-parallel, over an inverse index
//           built by a stable counting sort) sums dkv over the queries that used each key in ascending query order,
//           so the result does not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "trex/kernels/cpu/ops.hpp"
#include "trex/kernels/cpu/scratch.hpp"
#include "trex/kernels/cpu/vec_math.hpp"

namespace trex::cpu {

namespace {

inline float dotf(const float* a, const float* b, int64_t c) {
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < c; i++) s += a[i] * b[i];
    return s;
}

}  // namespace

// o [N,H,c], P [Σ nk·H], q [N,H,c], kv [Nk,c], sink [H]
void attention_forward(float* o, float* P, const float* q, const float* kv, const float* sink,
                       const int64_t* key_offset, const int32_t* key_idx, int64_t N, int H, int64_t c, double scale) {
    const float sc = (float)scale;
#pragma omp parallel for schedule(dynamic, 8)
    for (int64_t t = 0; t < N; t++) {
        const int64_t k0 = key_offset[t];
        const int64_t nk = key_offset[t + 1] - k0;
        const int32_t* keys = key_idx + k0;
        float* Pt = P + k0 * H;
        // scores, key-major so each kv row is read once for all heads
        for (int64_t j = 0; j < nk; j++) {
            const float* kj = kv + (int64_t)keys[j] * c;
            for (int h = 0; h < H; h++) Pt[h * nk + j] = sc * dotf(q + (t * H + h) * c, kj, c);
        }
        for (int h = 0; h < H; h++) {
            float* p = Pt + h * nk;
            float mx = sink[h];
            for (int64_t j = 0; j < nk; j++) mx = std::max(mx, p[j]);
            float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
            for (int64_t j = 0; j < nk; j++) {
                p[j] = exp_fast(p[j] - mx);
                sum += p[j];
            }
            sum += exp_fast(sink[h] - mx);
            const float inv = 1.0f / sum;
#pragma omp simd
            for (int64_t j = 0; j < nk; j++) p[j] *= inv;
        }
        float* ot = o + t * H * c;
        std::memset(ot, 0, sizeof(float) * H * c);
        for (int64_t j = 0; j < nk; j++) {
            const float* kj = kv + (int64_t)keys[j] * c;
            for (int h = 0; h < H; h++) {
                const float pj = Pt[h * nk + j];
                float* oh = ot + h * c;
#pragma omp simd
                for (int64_t i = 0; i < c; i++) oh[i] += pj * kj[i];
            }
        }
    }
}

void attention_backward(float* dq, float* dkv, float* dsink, const float* dout, const float* q, const float* kv,
                        const float* sink, const float* o, const float* P, const int64_t* key_offset,
                        const int32_t* key_idx, int64_t N, int64_t Nk, int H, int64_t c, double scale) {
    const float sc = (float)scale;
    const int64_t total = key_offset[N];
    static thread_local std::vector<float> dS_buf, dsink_buf;
    float* dS = grow(dS_buf, (size_t)total * H);
    float* dsink_t = grow(dsink_buf, (size_t)N * H);
    // pass 1: per query
#pragma omp parallel for schedule(dynamic, 8)
    for (int64_t t = 0; t < N; t++) {
        const int64_t k0 = key_offset[t];
        const int64_t nk = key_offset[t + 1] - k0;
        const int32_t* keys = key_idx + k0;
        const float* Pt = P + k0 * H;
        float* dSt = dS + k0 * H;
        float D[256];  // H <= 256 (checked by the caller)
        float* dqt = dq + t * H * c;
        for (int h = 0; h < H; h++) {
            D[h] = dotf(dout + (t * H + h) * c, o + (t * H + h) * c, c);
            float psum = 0.0f;
            for (int64_t j = 0; j < nk; j++) psum += Pt[h * nk + j];
            dsink_t[t * H + h] = -(1.0f - psum) * D[h];
        }
        for (int64_t j = 0; j < nk; j++) {
            const float* kj = kv + (int64_t)keys[j] * c;
            for (int h = 0; h < H; h++) {
                const float dp = dotf(dout + (t * H + h) * c, kj, c);
                dSt[h * nk + j] = Pt[h * nk + j] * (dp - D[h]);
            }
        }
        std::memset(dqt, 0, sizeof(float) * H * c);
        for (int64_t j = 0; j < nk; j++) {
            const float* kj = kv + (int64_t)keys[j] * c;
            for (int h = 0; h < H; h++) {
                const float g = sc * dSt[h * nk + j];
                float* dqh = dqt + h * c;
#pragma omp simd
                for (int64_t i = 0; i < c; i++) dqh[i] += g * kj[i];
            }
        }
    }
    for (int h = 0; h < H; h++) {
        float acc = 0.0f;
        for (int64_t t = 0; t < N; t++) acc += dsink_t[t * H + h];
        dsink[h] += acc;
    }
    // inverse index: for each key, the (query, position in its list) pairs in ascending query order
    std::vector<int64_t> kstart(Nk + 1, 0);
    for (int64_t a = 0; a < total; a++) kstart[key_idx[a] + 1]++;
    for (int64_t r = 0; r < Nk; r++) kstart[r + 1] += kstart[r];
    std::vector<int64_t> fill(kstart.begin(), kstart.end() - 1);
    static thread_local std::vector<int32_t> use_query_buf;
    static thread_local std::vector<int64_t> use_pos_buf;
    int32_t* use_query = grow(use_query_buf, (size_t)total);
    int64_t* use_pos = grow(use_pos_buf, (size_t)total);
    for (int64_t t = 0; t < N; t++)
        for (int64_t a = key_offset[t]; a < key_offset[t + 1]; a++) {
            const int64_t slot = fill[key_idx[a]]++;
            use_query[slot] = (int32_t)t;
            use_pos[slot] = a;
        }
        // pass 2: per key
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t r = 0; r < Nk; r++) {
        float* dk = dkv + r * c;
        std::memset(dk, 0, sizeof(float) * c);
        for (int64_t u = kstart[r]; u < kstart[r + 1]; u++) {
            const int64_t t = use_query[u];
            const int64_t k0 = key_offset[t];
            const int64_t nk = key_offset[t + 1] - k0;
            const int64_t j = use_pos[u] - k0;
            for (int h = 0; h < H; h++) {
                const float g = sc * dS[k0 * H + h * nk + j];
                const float p = P[k0 * H + h * nk + j];
                const float* qh = q + (t * H + h) * c;
                const float* gh = dout + (t * H + h) * c;
#pragma omp simd
                for (int64_t i = 0; i < c; i++) dk[i] += g * qh[i] + p * gh[i];
            }
        }
    }
}

}  // namespace trex::cpu
