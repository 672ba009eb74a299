// Reference lightning indexer (docs/model.md §3.4, §4; spec §2.7): scores, top-k selection and the KL loss.
// Activation grads =, except dKI which ACCUMULATES (entries are shared by many queries).
//
// Visibility: a query at document position p sees the entries i < floor((p+1)/m) of its own document, i.e. rows
// entry_offset[doc] + i of KI, and columns i of its row of scores [N, ld].
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "trex/kernels/ref/ops.hpp"
#include "trex/kernels/topk_torch.hpp"

namespace trex::ref {

// scores[t,i] = Σ_h w[t,h]·ReLU(qI[t,h]·KI[entry_offset[doc_of[t]] + i]) for i < visible(t).
// qI [N,HI,cI], KI [Nc,cI], w [N,HI]; the columns ≥ visible(t) are not written.
template <typename T>
void indexer_scores_forward(T* scores, const T* qI, const T* KI, const T* w, const int32_t* doc_of, const int32_t* pos,
                            const int64_t* entry_offset, int64_t N, int HI, int64_t cI, int m, int64_t ld) {
    for (int64_t t = 0; t < N; t++) {
        const int64_t vis = (pos[t] + 1) / m;
        const T* K0 = KI + entry_offset[doc_of[t]] * cI;
        for (int64_t i = 0; i < vis; i++) {
            double acc = 0;
            for (int h = 0; h < HI; h++) {
                double dot = 0;
                for (int64_t e = 0; e < cI; e++) dot += (double)qI[(t * HI + h) * cI + e] * (double)K0[i * cI + e];
                acc += (double)w[t * HI + h] * std::max(dot, 0.0);
            }
            scores[t * ld + i] = (T)acc;
        }
    }
}

// With dot = qI_h·K_i and g = dscores[t,i]: where dot > 0 (ReLU' = 0 at 0):
//   dw[t,h] += g·dot,  dqI[t,h] += g·w[t,h]·K_i,  dKI[i] += g·w[t,h]·qI_h.
// dqI, dw assigned; dKI += (queries in ascending order).
template <typename T>
void indexer_scores_backward(T* dqI, T* dKI, T* dw, const T* dscores, const T* qI, const T* KI, const T* w,
                             const int32_t* doc_of, const int32_t* pos, const int64_t* entry_offset, int64_t N, int HI,
                             int64_t cI, int m, int64_t ld) {
    std::vector<double> dq((size_t)HI * cI), dwt(HI);
    for (int64_t t = 0; t < N; t++) {
        const int64_t vis = (pos[t] + 1) / m;
        const int64_t e0 = entry_offset[doc_of[t]];
        std::fill(dq.begin(), dq.end(), 0.0);
        std::fill(dwt.begin(), dwt.end(), 0.0);
        for (int64_t i = 0; i < vis; i++) {
            const double g = dscores[t * ld + i];
            const T* K = KI + (e0 + i) * cI;
            for (int h = 0; h < HI; h++) {
                const T* q = qI + (t * HI + h) * cI;
                double dot = 0;
                for (int64_t e = 0; e < cI; e++) dot += (double)q[e] * (double)K[e];
                if (!(dot > 0)) continue;
                const double wh = w[t * HI + h];
                dwt[h] += g * dot;
                for (int64_t e = 0; e < cI; e++) {
                    dq[h * cI + e] += g * wh * (double)K[e];
                    dKI[(e0 + i) * cI + e] += (T)(g * wh * (double)q[e]);
                }
            }
        }
        for (int h = 0; h < HI; h++) {
            dw[t * HI + h] = (T)dwt[h];
            for (int64_t e = 0; e < cI; e++) dqI[(t * HI + h) * cI + e] = (T)dq[h * cI + e];
        }
    }
}

namespace {

// The release's selection for one query: torch.topk over its row of `row` entries, entries ≥ vis at −inf.
template <typename T>
std::vector<int32_t> torch_choice(const T* scores, int64_t vis, int64_t row, int k) {
    std::vector<float> v((size_t)row, -std::numeric_limits<float>::infinity());
    for (int64_t i = 0; i < vis; i++) v[(size_t)i] = (float)scores[i];
    const int64_t kt = std::min<int64_t>(k, row);
    std::vector<int32_t> picked((size_t)kt), chosen;
    std::vector<std::pair<float, int64_t>> queue;
    if (kt > 0) torch_topk_indices(picked.data(), v.data(), row, kt, queue);
    for (int32_t i : picked)
        if (i < vis) chosen.push_back(i);
    std::sort(chosen.begin(), chosen.end());
    return chosen;
}

}  // namespace

// sel [N,k]: the min(k, visible) visible columns with the largest score (ties: lower index first; with torch_rows
// torch.topk's choice, torch_choice), sorted ascending, padded with −1; dense: all visible columns (k ≥ visible
// required). nsel [N].
template <typename T>
void indexer_topk(int32_t* sel, int32_t* nsel, const T* scores, const int32_t* pos, int64_t N, int m, int k, int64_t ld,
                  bool dense, const int32_t* torch_rows) {
    for (int64_t t = 0; t < N; t++) {
        const int64_t vis = (pos[t] + 1) / m;
        std::vector<int32_t> chosen;
        if (dense) {
            for (int64_t i = 0; i < vis; i++) chosen.push_back((int32_t)i);
        } else if (torch_rows) {
            chosen = torch_choice(scores + t * ld, vis, std::max<int64_t>(torch_rows[t], vis), k);
        } else {
            std::vector<bool> taken(vis, false);
            const int64_t want = std::min<int64_t>(k, vis);
            for (int64_t s = 0; s < want; s++) {
                int64_t best = -1;
                for (int64_t i = 0; i < vis; i++)
                    if (!taken[i] && (best < 0 || scores[t * ld + i] > scores[t * ld + best])) best = i;
                taken[best] = true;
                chosen.push_back((int32_t)best);
            }
            std::sort(chosen.begin(), chosen.end());
        }
        nsel[t] = (int32_t)chosen.size();
        for (int s = 0; s < k; s++) sel[t * k + s] = s < (int)chosen.size() ? chosen[s] : -1;
    }
}

// Per query t with n = nsel[t] > 0: q = softmax over the selected scores, p = p_target[t, 0..n),
// KL_t = Σ_{p>0} p (log p − log q). Returns Σ_t KL_t / n_q (0 when n_q = 0).
// dscores[t, sel] = ((Σ p)·q − p)/n_q (exactly the gradient of the returned value; = (q − p)/n_q when Σ p = 1),
// 0 on every other column of [0, ld).
template <typename T>
double indexer_loss(T* dscores, const T* scores, const T* p_target, const int32_t* sel, const int32_t* nsel, int64_t N,
                    int k, int64_t ld) {
    int64_t n_q = 0;
    for (int64_t t = 0; t < N; t++) n_q += nsel[t] > 0;
    for (int64_t t = 0; t < N; t++)
        for (int64_t i = 0; i < ld; i++) dscores[t * ld + i] = 0;
    if (n_q == 0) return 0.0;
    double total = 0;
    std::vector<double> lq(k);
    for (int64_t t = 0; t < N; t++) {
        const int n = nsel[t];
        if (n <= 0) continue;
        double mx = -INFINITY;
        for (int s = 0; s < n; s++) mx = std::max(mx, (double)scores[t * ld + sel[t * k + s]]);
        double se = 0;
        for (int s = 0; s < n; s++) se += std::exp((double)scores[t * ld + sel[t * k + s]] - mx);
        double psum = 0;
        for (int s = 0; s < n; s++) {
            lq[s] = (double)scores[t * ld + sel[t * k + s]] - mx - std::log(se);  // log q
            double p = p_target[t * k + s];
            psum += p;
            if (p > 0) total += p * (std::log(p) - lq[s]);
        }
        for (int s = 0; s < n; s++)
            dscores[t * ld + sel[t * k + s]] =
                (T)((psum * std::exp(lq[s]) - (double)p_target[t * k + s]) / (double)n_q);
    }
    return total / (double)n_q;
}

#define TREX_INDEXER_INSTANTIATE(T)                                                                                \
    template void indexer_scores_forward<T>(T*, const T*, const T*, const T*, const int32_t*, const int32_t*,      \
                                            const int64_t*, int64_t, int, int64_t, int, int64_t);                  \
    template void indexer_scores_backward<T>(T*, T*, T*, const T*, const T*, const T*, const T*, const int32_t*,   \
                                             const int32_t*, const int64_t*, int64_t, int, int64_t, int, int64_t); \
    template void indexer_topk<T>(int32_t*, int32_t*, const T*, const int32_t*, int64_t, int, int, int64_t, bool,  \
                                  const int32_t*);                                                                 \
    template double indexer_loss<T>(T*, const T*, const T*, const int32_t*, const int32_t*, int64_t, int, int64_t);
TREX_INDEXER_INSTANTIATE(float)
TREX_INDEXER_INSTANTIATE(double)

}  // namespace trex::ref
