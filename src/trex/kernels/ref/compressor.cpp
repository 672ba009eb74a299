// Reference KV compressor pooling (docs/model.md §3.4, spec §2.6): per-channel softmax pooling of m-token windows,
// per document. Parameter grads +=, activation grads = (kernels/types.hpp).
//
// Layout: kvp, gp [N, coff·c] (coff = 2 when overlap, else 1), ape [m, coff·c], out [Nc, c].
// Entry i of document k (0 ≤ i < floor(len/m)) is written to row entry_offset[k] + i. For channel ch < c its slots are
//   overlap == false: tokens t = start + i·m + p (p < m), value kvp[t,ch], score gp[t,ch] + ape[p,ch];
//   overlap == true : previous window (only when i > 0): t = start + (i−1)·m + p, value kvp[t,ch],
//                     score gp[t,ch] + ape[p,ch];  own window: t = start + i·m + p, value kvp[t,c+ch],
//                     score gp[t,c+ch] + ape[p,c+ch].
// out[entry,ch] = Σ_slots softmax(score)·value, the softmax taken per channel over the slots.
#include <algorithm>
#include <cmath>
#include <vector>

#include "trex/kernels/ref/ops.hpp"

namespace trex::ref {

namespace {

struct slot {
    int64_t row;  // token row of kvp / gp
    int64_t col;  // column in kvp / gp / ape
    int p;        // position in window (row of ape)
};

// The slots of channel ch of entry i of a document starting at `start`.
std::vector<slot> entry_slots(int64_t start, int64_t i, int64_t ch, int m, int64_t c, bool overlap) {
    std::vector<slot> s;
    if (overlap && i > 0)
        for (int p = 0; p < m; p++) s.push_back({start + (i - 1) * m + p, ch, p});
    for (int p = 0; p < m; p++) s.push_back({start + i * m + p, overlap ? c + ch : ch, p});
    return s;
}

}  // namespace

template <typename T>
void compressor_forward(T* out, const T* kvp, const T* gp, const T* ape, const doc_span* docs,
                        const int64_t* entry_offset, int64_t n_docs, int m, int64_t c, bool overlap) {
    const int64_t w = (overlap ? 2 : 1) * c;  // row width of kvp, gp, ape
    for (int64_t k = 0; k < n_docs; k++) {
        const int64_t n_entries = docs[k].len / m;
        for (int64_t i = 0; i < n_entries; i++)
            for (int64_t ch = 0; ch < c; ch++) {
                std::vector<slot> sl = entry_slots(docs[k].start, i, ch, m, c, overlap);
                std::vector<double> z(sl.size());
                double mx = -INFINITY;
                for (size_t q = 0; q < sl.size(); q++) {
                    z[q] = (double)gp[sl[q].row * w + sl[q].col] + (double)ape[sl[q].p * w + sl[q].col];
                    mx = std::max(mx, z[q]);
                }
                double se = 0, acc = 0;
                for (size_t q = 0; q < sl.size(); q++) {
                    double e = std::exp(z[q] - mx);
                    se += e;
                    acc += e * (double)kvp[sl[q].row * w + sl[q].col];
                }
                out[(entry_offset[k] + i) * c + ch] = (T)(acc / se);
            }
    }
}

// Per channel of an entry with slot weights a_σ = softmax(z)_σ and pooled value o = Σ a_σ C_σ:
//   dC_σ = a_σ·dout,  dz_σ = a_σ·dout·(C_σ − o)  → dgp and dape[p].
// dkvp, dgp are assigned over all token rows of the documents (tail tokens and, with overlap, the first-half
// channels of the last complete window receive 0); dape +=.
template <typename T>
void compressor_backward(T* dkvp, T* dgp, T* dape, const T* dout, const T* kvp, const T* gp, const T* ape,
                         const doc_span* docs, const int64_t* entry_offset, int64_t n_docs, int m, int64_t c,
                         bool overlap) {
    const int64_t w = (overlap ? 2 : 1) * c;
    for (int64_t k = 0; k < n_docs; k++)
        for (int64_t t = docs[k].start; t < docs[k].start + docs[k].len; t++)
            for (int64_t j = 0; j < w; j++) {
                dkvp[t * w + j] = 0;
                dgp[t * w + j] = 0;
            }
    std::vector<double> dape_acc((size_t)m * w, 0.0);
    for (int64_t k = 0; k < n_docs; k++) {
        const int64_t n_entries = docs[k].len / m;
        for (int64_t i = 0; i < n_entries; i++)
            for (int64_t ch = 0; ch < c; ch++) {
                std::vector<slot> sl = entry_slots(docs[k].start, i, ch, m, c, overlap);
                std::vector<double> a(sl.size());
                double mx = -INFINITY;
                for (size_t q = 0; q < sl.size(); q++) {
                    a[q] = (double)gp[sl[q].row * w + sl[q].col] + (double)ape[sl[q].p * w + sl[q].col];
                    mx = std::max(mx, a[q]);
                }
                double se = 0;
                for (size_t q = 0; q < sl.size(); q++) {
                    a[q] = std::exp(a[q] - mx);
                    se += a[q];
                }
                double o = 0;
                for (size_t q = 0; q < sl.size(); q++) {
                    a[q] /= se;
                    o += a[q] * (double)kvp[sl[q].row * w + sl[q].col];
                }
                const double g = dout[(entry_offset[k] + i) * c + ch];
                for (size_t q = 0; q < sl.size(); q++) {
                    const int64_t idx = sl[q].row * w + sl[q].col;
                    const double dz = a[q] * g * ((double)kvp[idx] - o);
                    dkvp[idx] += (T)(a[q] * g);  // every (row, col) belongs to exactly one slot of one entry
                    dgp[idx] += (T)dz;
                    dape_acc[sl[q].p * w + sl[q].col] += dz;
                }
            }
    }
    for (int64_t j = 0; j < m * w; j++) dape[j] += (T)dape_acc[j];
}

#define TREX_COMPRESSOR_INSTANTIATE(T)                                                                              \
    template void compressor_forward<T>(T*, const T*, const T*, const T*, const doc_span*, const int64_t*, int64_t, \
                                        int, int64_t, bool);                                                        \
    template void compressor_backward<T>(T*, T*, T*, const T*, const T*, const T*, const T*, const doc_span*,       \
                                         const int64_t*, int64_t, int, int64_t, bool);
TREX_COMPRESSOR_INSTANTIATE(float)
TREX_COMPRESSOR_INSTANTIATE(double)

}  // namespace trex::ref
