// Copies and elementwise passes the layers make over tensors between the math kernels (ops.hpp states each
// contract), and the layers' bookkeeping kernels: attention key lists, the indexer's target, hash routing, expert
// loads. Every loop writes disjoint outputs, so results do not depend on the thread count.
#include <algorithm>
#include <cstring>

#include "trex/kernels/cpu/ops.hpp"

namespace trex::cpu {

void copy(float* dst, const float* src, int64_t n) {
    if (n > 0) std::memcpy(dst, src, sizeof(float) * n);
}

void fill_zero(float* x, int64_t n) {
    if (n > 0) std::memset(x, 0, sizeof(float) * n);
}

void scale(float* y, const float* x, float a, int64_t n) {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; i++) y[i] = a * x[i];
}

void add(float* y, const float* x, int64_t n) {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; i++) y[i] += x[i];
}

void broadcast_streams(float* out, const float* x, int64_t N, int64_t n, int64_t d, bool accumulate) {
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++)
        for (int64_t j = 0; j < n; j++) {
            float* o = out + (t * n + j) * d;
            const float* s = x + t * d;
            if (!accumulate) {
                std::memcpy(o, s, sizeof(float) * d);
                continue;
            }
            for (int64_t i = 0; i < d; i++) o[i] += s[i];
        }
}

void sum_streams(float* out, const float* in, int64_t N, int64_t n, int64_t d) {
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++) {
        float* o = out + t * d;
        std::memcpy(o, in + t * n * d, sizeof(float) * d);
        for (int64_t j = 1; j < n; j++) {
            const float* s = in + (t * n + j) * d;
#pragma omp simd
            for (int64_t i = 0; i < d; i++) o[i] += s[i];
        }
    }
}

void rms_unweighted_backward(float* dx, const float* dy, const float* yhat, const float* rstd, int64_t R, int64_t D) {
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < R; r++) {
        const float* g = dy + r * D;
        const float* y = yhat + r * D;
        float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
        for (int64_t j = 0; j < D; j++) dot += g[j] * y[j];
        const float m = dot / (float)D, s = rstd[r];
        float* o = dx + r * D;
#pragma omp simd
        for (int64_t j = 0; j < D; j++) o[j] = s * (g[j] - y[j] * m);
    }
}

int64_t attention_keys(int64_t* key_offset, int32_t* key_idx, int32_t* n_window, const int32_t* pos,
                       const int32_t* doc_of, const int64_t* entry_offset, const int32_t* sel, const int32_t* nsel,
                       int64_t kw, int64_t N, int64_t window, int m) {
    key_offset[0] = 0;
    for (int64_t t = 0; t < N; t++) {
        const int64_t p = pos[t];
        const int64_t nw = std::min<int64_t>(p + 1, window);
        const int64_t nc = m == 4 ? nsel[t] : (m > 0 ? (p + 1) / m : 0);
        n_window[t] = (int32_t)nw;
        key_offset[t + 1] = key_offset[t] + nw + nc;
    }
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++) {
        int32_t* out = key_idx + key_offset[t];
        const int64_t nw = n_window[t];
        for (int64_t j = 0; j < nw; j++) out[j] = (int32_t)(t - nw + 1 + j);
        if (m == 0) continue;
        const int64_t base = N + entry_offset[doc_of[t]];
        const int64_t nc = key_offset[t + 1] - key_offset[t] - nw;
        for (int64_t j = 0; j < nc; j++) out[nw + j] = (int32_t)(base + (m == 4 ? sel[t * kw + j] : j));
    }
    return key_offset[N];
}

void indexer_head_sums(double* sums, const float* P, const int64_t* key_offset, const int32_t* n_window,
                       const int32_t* nsel, int64_t N, int H, int64_t kw) {
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++) {
        const int64_t k0 = key_offset[t], nk = key_offset[t + 1] - k0, nw = n_window[t];
        for (int64_t j = 0; j < kw; j++) {
            double acc = 0.0;
            if (j < nsel[t])
                for (int64_t h = 0; h < H; h++) acc += P[k0 * H + h * nk + nw + j];
            sums[t * kw + j] = acc;
        }
    }
}

void indexer_target(float* p, const double* sums, const int32_t* nsel, int64_t N, int64_t kw) {
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++) {
        const int64_t ns = nsel[t];
        double sum = 0.0;
        for (int64_t j = 0; j < ns; j++) {
            p[t * kw + j] = (float)sums[t * kw + j];
            sum += sums[t * kw + j];
        }
        for (int64_t j = 0; j < ns; j++) p[t * kw + j] = sum > 0.0 ? (float)(p[t * kw + j] / sum) : 0.0f;
    }
}

void hash_select(int32_t* sel, const int32_t* tid2eid, const int32_t* ids, int64_t N, int K) {
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++) std::memcpy(sel + t * K, tid2eid + (int64_t)ids[t] * K, K * sizeof(int32_t));
}

void expert_load(int64_t* load, const int32_t* sel, int64_t n_slots, int E) {
    std::memset(load, 0, sizeof(int64_t) * E);
    for (int64_t i = 0; i < n_slots; i++) load[sel[i]]++;
}

}  // namespace trex::cpu
