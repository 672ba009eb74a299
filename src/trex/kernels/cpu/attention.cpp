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
#include "trex/base/scratch.hpp"
#include "trex/kernels/cpu/vec_math.hpp"

namespace trex::cpu {

namespace {

// o[0:c] = Σ_j w[j]·rows[j][0:c] (assigned)
inline void combine_rows(float* o, const float* w, const float* const* rows, int64_t n, int64_t c) {
    int64_t i = 0;
    if (c % 8 == 0) {
        for (; i + 32 <= c; i += 32) {
            v8f a0 = {}, a1 = {}, a2 = {}, a3 = {};
            for (int64_t j = 0; j < n; j++) {
                const float wj = w[j];
                const float* r = rows[j] + i;
                a0 += wj * load8(r);
                a1 += wj * load8(r + 8);
                a2 += wj * load8(r + 16);
                a3 += wj * load8(r + 24);
            }
            store8(o + i, a0), store8(o + i + 8, a1), store8(o + i + 16, a2), store8(o + i + 24, a3);
        }
        for (; i < c; i += 8) {
            v8f a0 = {};
            for (int64_t j = 0; j < n; j++) a0 += w[j] * load8(rows[j] + i);
            store8(o + i, a0);
        }
        return;
    }
    std::memset(o, 0, sizeof(float) * c);
    for (int64_t j = 0; j < n; j++) {
        const float wj = w[j];
        const float* r = rows[j];
#pragma omp simd
        for (int64_t k = 0; k < c; k++) o[k] += wj * r[k];
    }
}

// o_h[0:c] = Σ_j w_h[j]·rows[j][0:c] for the H heads of one query: o [H, c], w [H, ldw]. Heads in pairs when
// c % 32 == 0, so that each load of a row chunk feeds 8 FMAs into 8 independent accumulators (one head at a time
// gives 4 FMAs per 4 loads on 4 dependent chains); the same sums in the same order as combine_rows.
inline void combine_rows_heads(float* o, const float* w, int64_t ldw, const float* const* rows, int64_t n, int64_t c,
                               int H) {
    int h = 0;
    if (c % 32 == 0)
        for (; h + 2 <= H; h += 2) {
            const float* w0 = w + h * ldw;
            const float* w1 = w0 + ldw;
            float* o0 = o + h * c;
            float* o1 = o0 + c;
            for (int64_t i = 0; i < c; i += 32) {
                v8f a0 = {}, a1 = {}, a2 = {}, a3 = {}, b0 = {}, b1 = {}, b2 = {}, b3 = {};
                for (int64_t j = 0; j < n; j++) {
                    const float* r = rows[j] + i;
                    const v8f x0 = load8(r), x1 = load8(r + 8), x2 = load8(r + 16), x3 = load8(r + 24);
                    const float u = w0[j], v = w1[j];
                    a0 += u * x0, a1 += u * x1, a2 += u * x2, a3 += u * x3;
                    b0 += v * x0, b1 += v * x1, b2 += v * x2, b3 += v * x3;
                }
                store8(o0 + i, a0), store8(o0 + i + 8, a1), store8(o0 + i + 16, a2), store8(o0 + i + 24, a3);
                store8(o1 + i, b0), store8(o1 + i + 8, b1), store8(o1 + i + 16, b2), store8(o1 + i + 24, b3);
            }
        }
    for (; h < H; h++) combine_rows(o + h * c, w + h * ldw, rows, n, c);
}

}  // namespace

// o [N,H,c], P [Σ nk·H], q [N,H,c], kv [Nk,c], sink [H]
void attention_forward(float* o, float* P, const float* q, const float* kv, const float* sink,
                       const int64_t* key_offset, const int32_t* key_idx, int64_t N, int H, int64_t c, double scale) {
    const float sc = (float)scale;
#pragma omp parallel
    {
        std::vector<const float*> rows;
#pragma omp for schedule(dynamic, 8)
        for (int64_t t = 0; t < N; t++) {
            const int64_t k0 = key_offset[t];
            const int64_t nk = key_offset[t + 1] - k0;
            const int32_t* keys = key_idx + k0;
            float* Pt = P + k0 * H;
            rows.resize(nk);
            for (int64_t j = 0; j < nk; j++) rows[j] = kv + (int64_t)keys[j] * c;
            for (int h = 0; h < H; h++) {
                float* p = Pt + h * nk;
                dots(p, q + (t * H + h) * c, rows.data(), nk, c);
                float mx = sink[h];
#pragma omp simd reduction(max : mx)
                for (int64_t j = 0; j < nk; j++) {
                    p[j] *= sc;
                    mx = max_v(mx, p[j]);
                }
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
            combine_rows_heads(o + t * H * c, Pt, nk, rows.data(), nk, c, H);
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
    // pass 1: per query — dP = dO·K, dS = P ⊙ (dP − D), dq = scale·Σ dS·K
#pragma omp parallel
    {
        std::vector<const float*> rows;
        std::vector<float> w;
#pragma omp for schedule(dynamic, 8)
        for (int64_t t = 0; t < N; t++) {
            const int64_t k0 = key_offset[t];
            const int64_t nk = key_offset[t + 1] - k0;
            const int32_t* keys = key_idx + k0;
            const float* Pt = P + k0 * H;
            float* dSt = dS + k0 * H;
            rows.resize(nk);
            w.resize(H * nk);
            for (int64_t j = 0; j < nk; j++) rows[j] = kv + (int64_t)keys[j] * c;
            for (int h = 0; h < H; h++) {
                const float* dOh = dout + (t * H + h) * c;
                const float D = dot_f(dOh, o + (t * H + h) * c, c);
                float* ds = dSt + h * nk;
                const float* p = Pt + h * nk;
                dots(ds, dOh, rows.data(), nk, c);  // dP
                float psum = 0.0f;
                float* wh = w.data() + h * nk;
                for (int64_t j = 0; j < nk; j++) {
                    psum += p[j];
                    ds[j] = p[j] * (ds[j] - D);
                    wh[j] = sc * ds[j];
                }
                dsink_t[t * H + h] = -(1.0f - psum) * D;
            }
            combine_rows_heads(dq + t * H * c, w.data(), nk, rows.data(), nk, c, H);
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
    // pass 2: per key — dkv[r] = Σ over its uses (ascending query) and heads of scale·dS·q + P·dO. Keys go by
    // blocks of `key_block` consecutive rows whose use lists are walked together in ascending query order, so a
    // query's q and dO rows (H·c floats each) are loaded once per block rather than once per key (neighbouring keys
    // share most of their window queries); each key still sums its uses in ascending query order, heads ascending.
    constexpr int64_t key_block = 16;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t rb = 0; rb < Nk; rb += key_block) {
        const int64_t nb = std::min(key_block, Nk - rb);
        int64_t cur[key_block], end[key_block];
        for (int64_t b = 0; b < nb; b++) {
            cur[b] = kstart[rb + b];
            end[b] = kstart[rb + b + 1];
            std::memset(dkv + (rb + b) * c, 0, sizeof(float) * c);
        }
        for (;;) {
            int64_t t = N;  // the next query in ascending order among the block's remaining uses
            for (int64_t b = 0; b < nb; b++)
                if (cur[b] < end[b]) t = std::min<int64_t>(t, use_query[cur[b]]);
            if (t == N) break;
            const int64_t k0 = key_offset[t];
            const int64_t nk = key_offset[t + 1] - k0;
            for (int64_t b = 0; b < nb; b++) {
                if (cur[b] == end[b] || use_query[cur[b]] != t) continue;
                const int64_t j = use_pos[cur[b]++] - k0;
                float* dk = dkv + (rb + b) * c;
                for (int h = 0; h < H; h++) {
                    const float g = sc * dS[k0 * H + h * nk + j];
                    const float p = P[k0 * H + h * nk + j];
                    const float* qh = q + (t * H + h) * c;
                    const float* gh = dout + (t * H + h) * c;
#pragma omp simd
                    for (int64_t k = 0; k < c; k++) dk[k] += g * qh[k] + p * gh[k];
                }
            }
        }
    }
}

}  // namespace trex::cpu
