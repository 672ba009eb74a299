// Reference manifold-constrained hyper-connections (docs/model.md §3.3, spec §2.2, backward spec §2.11).
// Parameter grads +=, activation grads = — except hc_pre_backward, whose dX ACCUMULATES (the residual stream also
// receives hc_post's gradient).
#include <algorithm>
#include <cmath>
#include <vector>

#include "trex/kernels/ref/detail.hpp"
#include "trex/kernels/ref/ops.hpp"

namespace trex::ref {

using detail::sigmoid;

namespace {

// All iterates of the Sinkhorn projection of one n×n matrix R, in double, in the code order of §3.3:
//   S = softmax_row(R); P = S + eps; P /= colsum(P) + eps; (iters−1)× { P /= rowsum + eps; P /= colsum + eps }.
// in[s] is the input matrix of normalisation step s, is_col[s] tells whether step s normalises columns.
struct sinkhorn_trace {
    int n = 0;
    std::vector<double> S;                // row softmax [n,n]
    std::vector<std::vector<double>> in;  // input matrix of each normalisation step
    std::vector<bool> is_col;             // step normalises columns (true) or rows (false)
    std::vector<double> out;              // final matrix
};

sinkhorn_trace sinkhorn_run(const double* R, int n, int iters, double eps) {
    sinkhorn_trace tr;
    tr.n = n;
    tr.S.assign((size_t)n * n, 0.0);
    for (int j = 0; j < n; j++) {
        double mx = R[j * n];
        for (int k = 1; k < n; k++) mx = std::max(mx, R[j * n + k]);
        double se = 0;
        for (int k = 0; k < n; k++) se += std::exp(R[j * n + k] - mx);
        for (int k = 0; k < n; k++) tr.S[j * n + k] = std::exp(R[j * n + k] - mx) / se;
    }
    std::vector<double> P(tr.S);
    for (double& v : P) v += eps;
    // steps: col, then (row, col) × (iters−1)
    std::vector<bool> steps{true};
    for (int it = 1; it < iters; it++) {
        steps.push_back(false);
        steps.push_back(true);
    }
    for (bool col : steps) {
        tr.in.push_back(P);
        tr.is_col.push_back(col);
        if (col) {
            for (int k = 0; k < n; k++) {
                double s = 0;
                for (int j = 0; j < n; j++) s += P[j * n + k];
                for (int j = 0; j < n; j++) P[j * n + k] /= (s + eps);
            }
        } else {
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int k = 0; k < n; k++) s += P[j * n + k];
                for (int k = 0; k < n; k++) P[j * n + k] /= (s + eps);
            }
        }
    }
    tr.out = P;
    return tr;
}

// dR [n,n] from dcomb [n,n], reversing the trace. For Y = P/(s+eps) along a row (or column) with s = Σ P:
//   dP = dY/(s+eps) − (Σ dY⊙P)/(s+eps)²; for S = softmax_row(R): dR = S ⊙ (dS − rowsum(dS ⊙ S)).
void sinkhorn_back(double* dR, const double* dcomb, const sinkhorn_trace& tr, double eps) {
    const int n = tr.n;
    std::vector<double> g(dcomb, dcomb + (size_t)n * n);
    for (int s = (int)tr.in.size() - 1; s >= 0; s--) {
        const std::vector<double>& P = tr.in[s];
        std::vector<double> gp((size_t)n * n);
        for (int a = 0; a < n; a++) {  // a = the normalised line (column k if is_col, row j otherwise)
            double sum = 0, dot = 0;
            for (int b = 0; b < n; b++) {
                int idx = tr.is_col[s] ? b * n + a : a * n + b;
                sum += P[idx];
                dot += g[idx] * P[idx];
            }
            double den = sum + eps;
            for (int b = 0; b < n; b++) {
                int idx = tr.is_col[s] ? b * n + a : a * n + b;
                gp[idx] = g[idx] / den - dot / (den * den);
            }
        }
        g = gp;
    }
    // P0 = S + eps: dS = g
    for (int j = 0; j < n; j++) {
        double dot = 0;
        for (int k = 0; k < n; k++) dot += g[j * n + k] * tr.S[j * n + k];
        for (int k = 0; k < n; k++) dR[j * n + k] = tr.S[j * n + k] * (g[j * n + k] - dot);
    }
}

}  // namespace

// comb [n,n] = Sinkhorn(R [n,n])
template <typename T>
void sinkhorn_forward(T* comb, const T* R, int n, int iters, double eps) {
    std::vector<double> Rd(R, R + (size_t)n * n);
    sinkhorn_trace tr = sinkhorn_run(Rd.data(), n, iters, eps);
    for (int i = 0; i < n * n; i++) comb[i] = (T)tr.out[i];
}

// dR [n,n] (assigned) from dcomb [n,n]
template <typename T>
void sinkhorn_backward(T* dR, const T* dcomb, const T* R, int n, int iters, double eps) {
    std::vector<double> Rd(R, R + (size_t)n * n), dc(dcomb, dcomb + (size_t)n * n), dr((size_t)n * n);
    sinkhorn_trace tr = sinkhorn_run(Rd.data(), n, iters, eps);
    sinkhorn_back(dr.data(), dc.data(), tr, eps);
    for (int i = 0; i < n * n; i++) dR[i] = (T)dr[i];
}

// Per token t, x̂ = X[t] flattened stream-major [n·d]:
//   rho = (mean(x̂²) + norm_eps)^-1/2;  mix [rows] = rho·(fn x̂);
//   pre_j = σ(mix_j·scale0 + base_j) + hc_eps;  post_j = 2σ(mix_{n+j}·scale1 + base_{n+j});
//   R_jk = mix_{2n+n·j+k}·scale2 + base_{2n+n·j+k};  comb = Sinkhorn(R);  y = Σ_j pre_j X_j.
// y [N,d], post [N,n], comb [N,n,n], mix [N,rows], rho [N]; X [N,n,d], fn [rows,n·d], base [rows], scale [3].
template <typename T>
void hc_pre_forward(T* y, T* post, T* comb, T* mix, T* rho, const T* X, const T* fn, const T* base, const T* scale,
                    int64_t N, mhc_dims dims) {
    const int n = dims.n, rows = dims.rows();
    const int64_t d = dims.d, nd = (int64_t)n * d;
    std::vector<double> mx(rows), R((size_t)n * n);
    for (int64_t t = 0; t < N; t++) {
        const T* x = X + t * nd;
        double ss = 0;
        for (int64_t i = 0; i < nd; i++) ss += (double)x[i] * (double)x[i];
        double r = 1.0 / std::sqrt(ss / (double)nd + dims.norm_eps);
        rho[t] = (T)r;
        for (int q = 0; q < rows; q++) {
            double acc = 0;
            for (int64_t i = 0; i < nd; i++) acc += (double)fn[q * nd + i] * (double)x[i];
            mx[q] = r * acc;
            mix[t * rows + q] = (T)mx[q];
        }
        for (int j = 0; j < n; j++)
            post[t * n + j] = (T)(2.0 * sigmoid(mx[n + j] * (double)scale[1] + (double)base[n + j]));
        for (int q = 0; q < n * n; q++) R[q] = mx[2 * n + q] * (double)scale[2] + (double)base[2 * n + q];
        sinkhorn_trace tr = sinkhorn_run(R.data(), n, dims.iters, dims.hc_eps);
        for (int q = 0; q < n * n; q++) comb[t * n * n + q] = (T)tr.out[q];
        for (int64_t i = 0; i < d; i++) {
            double acc = 0;
            for (int j = 0; j < n; j++)
                acc += (sigmoid(mx[j] * (double)scale[0] + (double)base[j]) + dims.hc_eps) * (double)x[j * d + i];
            y[t * d + i] = (T)acc;
        }
    }
}

// dX [N,n,d] += ; dfn [rows,n·d], dbase [rows], dscale [3] +=. From dy [N,d], dpost [N,n], dcomb [N,n,n]:
//   dpre_j = dy·X_j, dX_j += pre_j dy;  da = dpre ⊙ σ'(a);  dc = dpost ⊙ 2σ'(c);  dR = SinkhornBackward(dcomb);
//   dmix = [da·scale0, dc·scale1, dR·scale2];  dscale_u += Σ d(·)⊙mix_u;  dbase += [da, dc, dR];
//   dfn += rho·dmix ⊗ x̂;  dx̂ += rho·fnᵀ dmix − (rho²/(n·d))·(dmix·mix)·x̂.
template <typename T>
void hc_pre_backward(T* dX, T* dfn, T* dbase, T* dscale, const T* dy, const T* dpost, const T* dcomb, const T* X,
                     const T* fn, const T* base, const T* scale, const T* mix, const T* rho, int64_t N, mhc_dims dims) {
    const int n = dims.n, rows = dims.rows();
    const int64_t d = dims.d, nd = (int64_t)n * d;
    std::vector<double> R((size_t)n * n), dc((size_t)n * n), dR((size_t)n * n), dmix(rows);
    for (int64_t t = 0; t < N; t++) {
        const T* x = X + t * nd;
        const T* mx = mix + t * rows;
        const T* g = dy + t * d;
        T* dx = dX + t * nd;
        double r = rho[t];
        // pre: y = Σ_j pre_j X_j
        for (int j = 0; j < n; j++) {
            double a = (double)mx[j] * (double)scale[0] + (double)base[j];
            double sg = sigmoid(a);
            double pre = sg + dims.hc_eps;
            double dpre = 0;
            for (int64_t i = 0; i < d; i++) {
                dpre += (double)g[i] * (double)x[j * d + i];
                dx[j * d + i] += (T)(pre * (double)g[i]);
            }
            dmix[j] = dpre * sg * (1.0 - sg);  // = da_j (scale0 applied below)
        }
        // post_j = 2σ(c_j)
        for (int j = 0; j < n; j++) {
            double sg = sigmoid((double)mx[n + j] * (double)scale[1] + (double)base[n + j]);
            dmix[n + j] = (double)dpost[t * n + j] * 2.0 * sg * (1.0 - sg);  // = dc_j
        }
        // comb = Sinkhorn(R)
        for (int q = 0; q < n * n; q++) {
            R[q] = (double)mx[2 * n + q] * (double)scale[2] + (double)base[2 * n + q];
            dc[q] = dcomb[t * n * n + q];
        }
        sinkhorn_trace tr = sinkhorn_run(R.data(), n, dims.iters, dims.hc_eps);
        sinkhorn_back(dR.data(), dc.data(), tr, dims.hc_eps);
        for (int q = 0; q < n * n; q++) dmix[2 * n + q] = dR[q];
        // dbase, dscale from the pre-activation gradients; then dmix = dpreact·scale_u
        double ds[3] = {0, 0, 0};
        for (int q = 0; q < rows; q++) {
            int u = q < n ? 0 : (q < 2 * n ? 1 : 2);
            dbase[q] += (T)dmix[q];
            ds[u] += dmix[q] * (double)mx[q];
            dmix[q] *= (double)scale[u];
        }
        for (int u = 0; u < 3; u++) dscale[u] += (T)ds[u];
        // mix = rho·(fn x̂)
        double dm_dot_mix = 0;
        for (int q = 0; q < rows; q++) dm_dot_mix += dmix[q] * (double)mx[q];
        for (int q = 0; q < rows; q++)
            for (int64_t i = 0; i < nd; i++) dfn[q * nd + i] += (T)(r * dmix[q] * (double)x[i]);
        for (int64_t i = 0; i < nd; i++) {
            double acc = 0;
            for (int q = 0; q < rows; q++) acc += (double)fn[q * nd + i] * dmix[q];
            dx[i] += (T)(r * acc - r * r / (double)nd * dm_dot_mix * (double)x[i]);
        }
    }
}

// X_out[t,k] = post[t,k]·F[t] + Σ_j comb[t,j,k]·X_in[t,j]       X_out, X_in [N,n,d], F [N,d]
template <typename T>
void hc_post_forward(T* X_out, const T* F, const T* X_in, const T* post, const T* comb, int64_t N, mhc_dims dims) {
    const int n = dims.n;
    const int64_t d = dims.d;
    for (int64_t t = 0; t < N; t++)
        for (int k = 0; k < n; k++)
            for (int64_t i = 0; i < d; i++) {
                double acc = (double)post[t * n + k] * (double)F[t * d + i];
                for (int j = 0; j < n; j++)
                    acc += (double)comb[(t * n + j) * n + k] * (double)X_in[(t * n + j) * d + i];
                X_out[(t * n + k) * d + i] = (T)acc;
            }
}

// dF = Σ_k post_k dX_out_k; dX_in_j = Σ_k comb_jk dX_out_k; dpost_k = dX_out_k·F; dcomb_jk = dX_out_k·X_in_j
// (all assigned)
template <typename T>
void hc_post_backward(T* dF, T* dX_in, T* dpost, T* dcomb, const T* dX_out, const T* F, const T* X_in, const T* post,
                      const T* comb, int64_t N, mhc_dims dims) {
    const int n = dims.n;
    const int64_t d = dims.d;
    for (int64_t t = 0; t < N; t++) {
        const T* g = dX_out + t * n * d;
        for (int64_t i = 0; i < d; i++) {
            double acc = 0;
            for (int k = 0; k < n; k++) acc += (double)post[t * n + k] * (double)g[k * d + i];
            dF[t * d + i] = (T)acc;
        }
        for (int j = 0; j < n; j++)
            for (int64_t i = 0; i < d; i++) {
                double acc = 0;
                for (int k = 0; k < n; k++) acc += (double)comb[(t * n + j) * n + k] * (double)g[k * d + i];
                dX_in[(t * n + j) * d + i] = (T)acc;
            }
        for (int k = 0; k < n; k++) {
            double acc = 0;
            for (int64_t i = 0; i < d; i++) acc += (double)g[k * d + i] * (double)F[t * d + i];
            dpost[t * n + k] = (T)acc;
        }
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++) {
                double acc = 0;
                for (int64_t i = 0; i < d; i++) acc += (double)g[k * d + i] * (double)X_in[(t * n + j) * d + i];
                dcomb[(t * n + j) * n + k] = (T)acc;
            }
    }
}

// rho = (mean(x̂²)+norm_eps)^-1/2; mix [N,n] = rho·(fn x̂); pre_j = σ(mix_j·scale0 + base_j) + hc_eps;
// y [N,d] = Σ_j pre_j X_j.   fn [n, n·d], base [n], scale [1].
template <typename T>
void hc_head_forward(T* y, T* mix, T* rho, const T* X, const T* fn, const T* base, const T* scale, int64_t N,
                     mhc_dims dims) {
    const int n = dims.n;
    const int64_t d = dims.d, nd = (int64_t)n * d;
    std::vector<double> pre(n);
    for (int64_t t = 0; t < N; t++) {
        const T* x = X + t * nd;
        double ss = 0;
        for (int64_t i = 0; i < nd; i++) ss += (double)x[i] * (double)x[i];
        double r = 1.0 / std::sqrt(ss / (double)nd + dims.norm_eps);
        rho[t] = (T)r;
        for (int j = 0; j < n; j++) {
            double acc = 0;
            for (int64_t i = 0; i < nd; i++) acc += (double)fn[j * nd + i] * (double)x[i];
            mix[t * n + j] = (T)(r * acc);
            pre[j] = sigmoid(r * acc * (double)scale[0] + (double)base[j]) + dims.hc_eps;
        }
        for (int64_t i = 0; i < d; i++) {
            double acc = 0;
            for (int j = 0; j < n; j++) acc += pre[j] * (double)x[j * d + i];
            y[t * d + i] = (T)acc;
        }
    }
}

// dX [N,n,d] assigned; dfn [n,n·d], dbase [n], dscale [1] +=. Same chain as hc_pre restricted to the pre rows.
template <typename T>
void hc_head_backward(T* dX, T* dfn, T* dbase, T* dscale, const T* dy, const T* X, const T* fn, const T* base,
                      const T* scale, const T* mix, const T* rho, int64_t N, mhc_dims dims) {
    const int n = dims.n;
    const int64_t d = dims.d, nd = (int64_t)n * d;
    std::vector<double> dmix(n);
    for (int64_t t = 0; t < N; t++) {
        const T* x = X + t * nd;
        const T* mx = mix + t * n;
        const T* g = dy + t * d;
        T* dx = dX + t * nd;
        double r = rho[t];
        double ds0 = 0, dm_dot_mix = 0;
        for (int j = 0; j < n; j++) {
            double sg = sigmoid((double)mx[j] * (double)scale[0] + (double)base[j]);
            double pre = sg + dims.hc_eps;
            double dpre = 0;
            for (int64_t i = 0; i < d; i++) {
                dpre += (double)g[i] * (double)x[j * d + i];
                dx[j * d + i] = (T)(pre * (double)g[i]);
            }
            double da = dpre * sg * (1.0 - sg);
            dbase[j] += (T)da;
            ds0 += da * (double)mx[j];
            dmix[j] = da * (double)scale[0];
            dm_dot_mix += dmix[j] * (double)mx[j];
        }
        dscale[0] += (T)ds0;
        for (int j = 0; j < n; j++)
            for (int64_t i = 0; i < nd; i++) dfn[j * nd + i] += (T)(r * dmix[j] * (double)x[i]);
        for (int64_t i = 0; i < nd; i++) {
            double acc = 0;
            for (int j = 0; j < n; j++) acc += (double)fn[j * nd + i] * dmix[j];
            dx[i] += (T)(r * acc - r * r / (double)nd * dm_dot_mix * (double)x[i]);
        }
    }
}

#define TREX_MHC_INSTANTIATE(T)                                                                                     \
    template void sinkhorn_forward<T>(T*, const T*, int, int, double);                                              \
    template void sinkhorn_backward<T>(T*, const T*, const T*, int, int, double);                                   \
    template void hc_pre_forward<T>(T*, T*, T*, T*, T*, const T*, const T*, const T*, const T*, int64_t, mhc_dims); \
    template void hc_pre_backward<T>(T*, T*, T*, T*, const T*, const T*, const T*, const T*, const T*, const T*,    \
                                     const T*, const T*, const T*, int64_t, mhc_dims);                              \
    template void hc_post_forward<T>(T*, const T*, const T*, const T*, const T*, int64_t, mhc_dims);                \
    template void hc_post_backward<T>(T*, T*, T*, T*, const T*, const T*, const T*, const T*, const T*, int64_t,    \
                                      mhc_dims);                                                                    \
    template void hc_head_forward<T>(T*, T*, T*, const T*, const T*, const T*, const T*, int64_t, mhc_dims);        \
    template void hc_head_backward<T>(T*, T*, T*, T*, const T*, const T*, const T*, const T*, const T*, const T*,   \
                                      const T*, int64_t, mhc_dims);
TREX_MHC_INSTANTIATE(float)
TREX_MHC_INSTANTIATE(double)

}  // namespace trex::ref
