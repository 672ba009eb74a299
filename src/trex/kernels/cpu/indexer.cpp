// Lightning indexer (docs/model.md §3.4): scores I[t,i] = Σ_h w[t,h]·ReLU(qI[t,h]·KI[i]) over the compressed entries
// of the query's document that it may see (i < floor((pos+1)/m)), top-k selection and the KL training loss.
// The q·k products of a document are one GEMM [L·HI, cI] × [cI, n_entries]; the causal half is computed and ignored.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "trex/base/scratch.hpp"
#include "trex/kernels/cpu/gemm.hpp"
#include "trex/kernels/cpu/ops.hpp"
#include "trex/kernels/cpu/vec_math.hpp"
#include "trex/kernels/topk_torch.hpp"

namespace trex::cpu {

namespace {

// Documents as runs of equal doc_of; entry counts from the visibility of the last token.
struct doc_run {
    int64_t start, len;
    int32_t doc;
};

std::vector<doc_run> doc_runs(const int32_t* doc_of, int64_t N) {
    std::vector<doc_run> runs;
    for (int64_t t = 0; t < N;) {
        int64_t e = t;
        while (e < N && doc_of[e] == doc_of[t]) e++;
        runs.push_back({t, e - t, doc_of[t]});
        t = e;
    }
    return runs;
}

}  // namespace

void indexer_scores_forward(float* scores, const float* qI, const float* KI, const float* w, const int32_t* doc_of,
                            const int32_t* pos, const int64_t* entry_offset, int64_t N, int HI, int64_t cI, int m,
                            int64_t ld) {
    static thread_local std::vector<float> Z;
    for (const auto& r : doc_runs(doc_of, N)) {
        const int64_t ne = (pos[r.start + r.len - 1] + 1) / m;  // entries visible to the last token
        if (ne == 0) continue;
        const float* K = KI + entry_offset[r.doc] * cI;
        float* Zd = grow(Z, (size_t)r.len * HI * ne);  // (a pointer: worker threads must not touch Z itself)
        // Z [len·HI, ne] = qI_doc [len·HI, cI] · Kᵀ
        gemm(false, true, r.len * HI, ne, cI, 1.0f, qI + r.start * HI * cI, cI, K, cI, 0.0f, Zd, ne);
#pragma omp parallel for schedule(static)
        for (int64_t j = 0; j < r.len; j++) {
            const int64_t t = r.start + j;
            const int64_t vis = (pos[t] + 1) / m;
            float* out = scores + t * ld;
            for (int64_t i = 0; i < vis; i++) out[i] = 0.0f;
            for (int h = 0; h < HI; h++) {
                const float wh = w[t * HI + h];
                const float* z = Zd + (j * HI + h) * ne;
#pragma omp simd
                for (int64_t i = 0; i < vis; i++) out[i] += wh * max_v(z[i], 0.0f);
            }
        }
    }
}

void indexer_scores_backward(float* dqI, float* dKI, float* dw, const float* dscores, const float* qI, const float* KI,
                             const float* w, const int32_t* doc_of, const int32_t* pos, const int64_t* entry_offset,
                             int64_t N, int HI, int64_t cI, int m, int64_t ld) {
    static thread_local std::vector<float> Z;
    for (const auto& r : doc_runs(doc_of, N)) {
        const int64_t ne = (pos[r.start + r.len - 1] + 1) / m;
        if (ne == 0) {
            std::memset(dqI + r.start * HI * cI, 0, sizeof(float) * r.len * HI * cI);
            std::memset(dw + r.start * HI, 0, sizeof(float) * r.len * HI);
            continue;
        }
        const float* K = KI + entry_offset[r.doc] * cI;
        float* Zd = grow(Z, (size_t)r.len * HI * ne);  // (a pointer: worker threads must not touch Z itself)
        gemm(false, true, r.len * HI, ne, cI, 1.0f, qI + r.start * HI * cI, cI, K, cI, 0.0f, Zd, ne);
        // Z becomes dZ in place: dZ[t,h,i] = dscores[t,i]·w[t,h]·1[Z>0] for visible i, 0 otherwise.
#pragma omp parallel for schedule(static)
        for (int64_t j = 0; j < r.len; j++) {
            const int64_t t = r.start + j;
            const int64_t vis = (pos[t] + 1) / m;
            const float* g = dscores + t * ld;
            for (int h = 0; h < HI; h++) {
                float* z = Zd + (j * HI + h) * ne;
                const float wh = w[t * HI + h];
                float acc = 0.0f;
#pragma omp simd reduction(+ : acc)
                for (int64_t i = 0; i < vis; i++) {
                    acc += g[i] * max_v(z[i], 0.0f);
                    z[i] = z[i] > 0.0f ? g[i] * wh : 0.0f;
                }
                for (int64_t i = vis; i < ne; i++) z[i] = 0.0f;
                dw[t * HI + h] = acc;
            }
        }
        // dqI_doc = dZ · K ; dK += dZᵀ · qI_doc
        gemm(false, false, r.len * HI, cI, ne, 1.0f, Zd, ne, K, cI, 0.0f, dqI + r.start * HI * cI, cI);
        gemm(true, false, ne, cI, r.len * HI, 1.0f, Zd, ne, qI + r.start * HI * cI, cI, 1.0f,
             dKI + entry_offset[r.doc] * cI, cI);
    }
}

void indexer_topk(int32_t* sel, int32_t* nsel, const float* scores, const int32_t* pos, int64_t N, int m, int k,
                  int64_t ld, bool dense, const int32_t* torch_rows) {
#pragma omp parallel
    {
        std::vector<int32_t> idx;
        std::vector<float> row;
        std::vector<std::pair<float, int64_t>> queue;
#pragma omp for schedule(static)
        for (int64_t t = 0; t < N; t++) {
            const int64_t vis = (pos[t] + 1) / m;
            const float* s = scores + t * ld;
            int32_t* out = sel + t * k;
            int64_t keep = dense ? vis : std::min<int64_t>(k, vis);
            if (!dense && torch_rows) {  // the release's choice: torch.topk over the row, invisible entries at −inf
                const int64_t n_row = std::max<int64_t>(torch_rows[t], vis), kt = std::min<int64_t>(k, n_row);
                row.assign((size_t)n_row, -std::numeric_limits<float>::infinity());
                std::copy(s, s + vis, row.begin());
                idx.resize((size_t)kt);
                if (kt > 0) torch_topk_indices(idx.data(), row.data(), n_row, kt, queue);
                idx.erase(std::remove_if(idx.begin(), idx.end(), [vis](int32_t i) { return i >= vis; }), idx.end());
                std::sort(idx.begin(), idx.end());
                keep = (int64_t)idx.size();
                std::copy(idx.begin(), idx.end(), out);
            } else if (keep == vis) {
                for (int64_t i = 0; i < vis; i++) out[i] = (int32_t)i;
            } else {
                idx.resize(vis);
                std::iota(idx.begin(), idx.end(), 0);
                std::nth_element(idx.begin(), idx.begin() + keep, idx.end(),
                                 [s](int32_t a, int32_t b) { return s[a] > s[b] || (s[a] == s[b] && a < b); });
                std::sort(idx.begin(), idx.begin() + keep);
                std::copy(idx.begin(), idx.begin() + keep, out);
            }
            for (int64_t i = keep; i < k; i++) out[i] = -1;
            nsel[t] = (int32_t)keep;
        }
    }
}

double indexer_loss(float* dscores, const float* scores, const float* p_target, const int32_t* sel, const int32_t* nsel,
                    int64_t N, int k, int64_t ld) {
    int64_t nq = 0;
    for (int64_t t = 0; t < N; t++) nq += nsel[t] > 0;
    std::vector<double> kl(N, 0.0);
    const float inv_nq = nq > 0 ? 1.0f / (float)nq : 0.0f;
#pragma omp parallel
    {
        std::vector<float> q;
#pragma omp for schedule(static)
        for (int64_t t = 0; t < N; t++) {
            float* g = dscores + t * ld;
            std::memset(g, 0, sizeof(float) * ld);
            const int n = nsel[t];
            if (n == 0) continue;
            const float* s = scores + t * ld;
            const int32_t* js = sel + t * k;
            const float* p = p_target + t * k;
            float mx = s[js[0]];
            for (int a = 1; a < n; a++) mx = std::max(mx, s[js[a]]);
            q.resize(n);
            double sum = 0.0;
            for (int a = 0; a < n; a++) {
                q[a] = std::exp(s[js[a]] - mx);
                sum += q[a];
            }
            const double log_sum = std::log(sum);
            // dKL/ds = (Σp)·q − p: the exact gradient also when the target does not sum to 1 (all-zero rows)
            double psum = 0.0;
            for (int a = 0; a < n; a++) psum += (double)p[a];
            const float ps = (float)psum;
            double acc = 0.0;
            for (int a = 0; a < n; a++) {
                const double logq = (double)s[js[a]] - mx - log_sum;
                if (p[a] > 0.0f) acc += (double)p[a] * (std::log((double)p[a]) - logq);
                g[js[a]] = (ps * (float)std::exp(logq) - p[a]) * inv_nq;
            }
            kl[t] = acc;
        }
    }
    double total = 0.0;
    for (int64_t t = 0; t < N; t++) total += kl[t];
    return nq > 0 ? total / (double)nq : 0.0;
}

}  // namespace trex::cpu
