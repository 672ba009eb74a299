// KV compressor pooling (docs/model.md §3.4): per entry and channel, a softmax over the entry's slots of
// (gate + ape) weights the kv values. CSA (overlap, m = 4): 2m slots, previous window with channels [0,c), own window
// with channels [c,2c). HCA: m slots, channels [0,c). Entries are independent, so both passes are entry-parallel and
// every (token, channel) gradient is written by exactly one entry.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "trex/kernels/cpu/ops.hpp"
#include "trex/kernels/cpu/vec_math.hpp"

namespace trex::cpu {

namespace {

struct entry_ref {
    int64_t doc_start;  // first token of the document
    int64_t i;          // entry index inside the document
    int64_t row;        // output row
};

std::vector<entry_ref> list_entries(const doc_span* docs, const int64_t* entry_offset, int64_t n_docs, int m) {
    std::vector<entry_ref> e;
    for (int64_t k = 0; k < n_docs; k++) {
        const int64_t ne = docs[k].len / m;
        for (int64_t i = 0; i < ne; i++) e.push_back({docs[k].start, i, entry_offset[k] + i});
    }
    return e;
}

// Slot σ of an entry: token index and the channel offset it reads (0 or c) and its window position p.
struct slot_ref {
    int64_t token;
    int64_t ch_off;
    int p;
};

int entry_slots(slot_ref* slots, const entry_ref& e, int m, int64_t c, bool overlap) {
    int n = 0;
    if (overlap && e.i > 0)
        for (int p = 0; p < m; p++) slots[n++] = {e.doc_start + (e.i - 1) * m + p, 0, p};
    const int64_t own_off = overlap ? c : 0;
    for (int p = 0; p < m; p++) slots[n++] = {e.doc_start + e.i * m + p, own_off, p};
    return n;
}

// Per-channel softmax pooling of one entry over its ns slots: mx = max of the scores, sum = Σ e^(score − mx),
// pooled = Σ e^(score − mx)·v / sum. Each buffer has c channels.
void pool_entry(float* mx, float* sum, float* pooled, const slot_ref* slots, int ns, const float* kvp, const float* gp,
                const float* ape, int64_t w, int64_t c) {
    std::fill(mx, mx + c, -std::numeric_limits<float>::infinity());
    for (int s = 0; s < ns; s++) {
        const float* g = gp + slots[s].token * w + slots[s].ch_off;
        const float* a = ape + (int64_t)slots[s].p * w + slots[s].ch_off;
#pragma omp simd
        for (int64_t ch = 0; ch < c; ch++) mx[ch] = max_v(mx[ch], g[ch] + a[ch]);
    }
    std::fill(sum, sum + c, 0.0f);
    std::fill(pooled, pooled + c, 0.0f);
    for (int s = 0; s < ns; s++) {
        const float* g = gp + slots[s].token * w + slots[s].ch_off;
        const float* a = ape + (int64_t)slots[s].p * w + slots[s].ch_off;
        const float* v = kvp + slots[s].token * w + slots[s].ch_off;
#pragma omp simd
        for (int64_t ch = 0; ch < c; ch++) {
            const float e = exp_fast(g[ch] + a[ch] - mx[ch]);
            sum[ch] += e;
            pooled[ch] += e * v[ch];
        }
    }
#pragma omp simd
    for (int64_t ch = 0; ch < c; ch++) pooled[ch] /= sum[ch];
}

}  // namespace

// out [Nc, c]; kvp, gp [N, coff·c]; ape [m, coff·c]
void compressor_forward(float* out, const float* kvp, const float* gp, const float* ape, const doc_span* docs,
                        const int64_t* entry_offset, int64_t n_docs, int m, int64_t c, bool overlap) {
    const int64_t w = (overlap ? 2 : 1) * c;
    const auto entries = list_entries(docs, entry_offset, n_docs, m);
#pragma omp parallel
    {
        std::vector<float> mx(c), sum(c);
        std::vector<slot_ref> slots(2 * m);
#pragma omp for schedule(static)
        for (int64_t q = 0; q < (int64_t)entries.size(); q++) {
            const int ns = entry_slots(slots.data(), entries[q], m, c, overlap);
            pool_entry(mx.data(), sum.data(), out + entries[q].row * c, slots.data(), ns, kvp, gp, ape, w, c);
        }
    }
}

void compressor_backward(float* dkvp, float* dgp, float* dape, const float* dout, const float* kvp, const float* gp,
                         const float* ape, const doc_span* docs, const int64_t* entry_offset, int64_t n_docs, int m,
                         int64_t c, bool overlap) {
    const int64_t w = (overlap ? 2 : 1) * c;
    int64_t n_tokens = 0;
    for (int64_t k = 0; k < n_docs; k++) n_tokens = std::max(n_tokens, docs[k].start + docs[k].len);
    std::memset(dkvp, 0, sizeof(float) * n_tokens * w);
    std::memset(dgp, 0, sizeof(float) * n_tokens * w);
    const auto entries = list_entries(docs, entry_offset, n_docs, m);
#pragma omp parallel
    {
        std::vector<float> mx(c), sum(c), pooled(c);
        std::vector<slot_ref> slots(2 * m);
#pragma omp for schedule(static)
        for (int64_t q = 0; q < (int64_t)entries.size(); q++) {
            const int ns = entry_slots(slots.data(), entries[q], m, c, overlap);
            pool_entry(mx.data(), sum.data(), pooled.data(), slots.data(), ns, kvp, gp, ape, w, c);
            const float* go = dout + entries[q].row * c;
            for (int s = 0; s < ns; s++) {
                const int64_t off = slots[s].token * w + slots[s].ch_off;
                const float* g = gp + off;
                const float* a = ape + (int64_t)slots[s].p * w + slots[s].ch_off;
                const float* v = kvp + off;
                float* dv = dkvp + off;
                float* dg = dgp + off;
#pragma omp simd
                for (int64_t ch = 0; ch < c; ch++) {
                    float wt = exp_fast(g[ch] + a[ch] - mx[ch]) / sum[ch];
                    dv[ch] = wt * go[ch];
                    dg[ch] = wt * go[ch] * (v[ch] - pooled[ch]);
                }
            }
        }
    }
    // dape[p, ch] += Σ over tokens at window position p of dgp (tokens ascending; tails contribute 0).
#pragma omp parallel for schedule(static)
    for (int64_t ch = 0; ch < w; ch++) {
        for (int64_t k = 0; k < n_docs; k++) {
            const int64_t ncomp = (docs[k].len / m) * m;
            for (int64_t j = 0; j < ncomp; j++) dape[(j % m) * w + ch] += dgp[(docs[k].start + j) * w + ch];
        }
    }
}

}  // namespace trex::cpu
