// The reference backend's kernel table: every entry is computed by the kernels/ref loops (float instantiation),
// single-threaded. Where the table's contract (that of kernels/cpu/ops.hpp and kernels/cpu/gemm.hpp) differs from the
// reference signature, a small adapter below gives exactly the table's contract; GEMM, SYRK and the MoE permutation
// pieces have no reference kernel and are plain loops here (accumulating in double, like the reference kernels).
#include "trex/kernels/kernel_table.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "trex/base/error.hpp"
#include "trex/kernels/precision.hpp"
#include "trex/kernels/ref/ops.hpp"

namespace trex {

namespace {

// dst[i] += src[i] for the src.size() values of src
void add_into(float* dst, const std::vector<float>& src) {
    for (size_t i = 0; i < src.size(); i++) dst[i] += src[i];
}

// ---------------------------------------------------------------- GEMM

// C [M,N] = alpha·op(A)·op(B) + beta·C, row-major with row strides lda/ldb/ldc; op(A) [M,K] is A [M,K] or, with
// trans_a, Aᵀ of A [K,M] (likewise op(B) [K,N]); beta == 0: C is not read.
// The operands are rounded to bf16 first when the matmul precision is bf16 (kernels/precision.hpp).
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
    const bool bf16 = current_matmul_precision() == matmul_precision::bf16;
    const auto operand = [&](float v) { return (double)(bf16 ? round_to_bf16(v) : v); };
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double acc = 0;
            for (int64_t p = 0; p < K; p++) {
                const double a = operand(trans_a ? A[p * lda + i] : A[i * lda + p]);
                const double b = operand(trans_b ? B[j * ldb + p] : B[p * ldb + j]);
                acc += a * b;
            }
            const double c = beta == 0.0f ? 0.0 : (double)beta * (double)C[i * ldc + j];
            C[i * ldc + j] = (float)((double)alpha * acc + c);
        }
}

// C [n,n] = alpha·X·Xᵀ + beta·C for X [n,k]: the lower triangle computed (only it is read when beta ≠ 0), then
// mirrored, so that C is exactly symmetric.
void syrk(int64_t n, int64_t k, float alpha, const float* X, int64_t ldx, float beta, float* C, int64_t ldc) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j <= i; j++) {
            double acc = 0;
            for (int64_t p = 0; p < k; p++) acc += (double)X[i * ldx + p] * (double)X[j * ldx + p];
            const double c = beta == 0.0f ? 0.0 : (double)beta * (double)C[i * ldc + j];
            C[i * ldc + j] = (float)((double)alpha * acc + c);
        }
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) C[i * ldc + j] = C[j * ldc + i];
}

// A GEMM operand as the current matmul precision reads it: p itself (fp32), or a copy rounded to bf16 in `keep`.
const float* matmul_operand(const float* p, int64_t n, std::vector<float>& keep) {
    if (current_matmul_precision() != matmul_precision::bf16) return p;
    keep.resize((size_t)n);
    for (int64_t i = 0; i < n; i++) keep[(size_t)i] = round_to_bf16(p[i]);
    return keep.data();
}

// y[N,out] = x·Wᵀ (+ y when accumulate)
void linear_fwd(float* y, const float* x, const float* W, int64_t N, int64_t in, int64_t out, bool accumulate) {
    std::vector<float> xk, wk;
    x = matmul_operand(x, N * in, xk);
    W = matmul_operand(W, out * in, wk);
    if (!accumulate) return ref::linear_forward<float>(y, x, W, N, in, out);
    std::vector<float> t((size_t)(N * out));
    ref::linear_forward<float>(t.data(), x, W, N, in, out);
    add_into(y, t);
}

// dx[N,in] = dy·W (+ dx when accumulate)
void linear_bwd_data(float* dx, const float* dy, const float* W, int64_t N, int64_t in, int64_t out, bool accumulate) {
    std::vector<float> dyk, wk;
    dy = matmul_operand(dy, N * out, dyk);
    W = matmul_operand(W, out * in, wk);
    if (!accumulate) return ref::linear_backward<float>(dx, nullptr, dy, nullptr, W, N, in, out);
    std::vector<float> t((size_t)(N * in));
    ref::linear_backward<float>(t.data(), nullptr, dy, nullptr, W, N, in, out);
    add_into(dx, t);
}

// dW[out,in] += dyᵀ·x
void linear_bwd_weight(float* dW, const float* dy, const float* x, int64_t N, int64_t in, int64_t out) {
    std::vector<float> dyk, xk;
    dy = matmul_operand(dy, N * out, dyk);
    x = matmul_operand(x, N * in, xk);
    ref::linear_backward<float>(nullptr, dW, dy, x, nullptr, N, in, out);
}

// dst[rows,cols] += srcᵀ for src [cols,rows]
void add_transposed(float* dst, const float* src, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) dst[r * cols + c] += src[c * rows + r];
}

// Profiling bookkeeping of the CPU GEMM counter (`trex bench step --profile`): the reference backend counts nothing,
// so doing nothing is its exact contract.
void gemm_stats_section(const char*) {}

// ---------------------------------------------------------------- embedding, mHC

// dtable[v] += Σ_{n: ids[n]=v} dout[n], n ascending (V only sizes the table; ref does not need it)
void embedding_backward(float* dtable, const float* dout, const int32_t* ids, int64_t N, int64_t d, int64_t V) {
    (void)V;
    ref::embedding_backward<float>(dtable, dout, ids, N, d);
}

// dX [N,n,d] = combᵀ·dX_out (assigned), comb recomputed from mix by the Sinkhorn of the forward (hc_post's residual
// branch X_out_k = … + Σ_j comb_jk X_j)
void hc_residual_backward(float* dX, const float* dX_out, const float* mix, const float* base, const float* scale,
                          int64_t N, mhc_dims dims) {
    const int n = dims.n, rows = dims.rows();
    const int64_t d = dims.d;
    std::vector<float> R((size_t)n * n), comb((size_t)n * n);
    for (int64_t t = 0; t < N; t++) {
        for (int q = 0; q < n * n; q++) R[q] = mix[t * rows + 2 * n + q] * scale[2] + base[2 * n + q];
        ref::sinkhorn_forward<float>(comb.data(), R.data(), n, dims.iters, dims.hc_eps);
        for (int j = 0; j < n; j++)
            for (int64_t i = 0; i < d; i++) {
                double acc = 0;
                for (int k = 0; k < n; k++) acc += (double)comb[j * n + k] * (double)dX_out[(t * n + k) * d + i];
                dX[(t * n + j) * d + i] = (float)acc;
            }
    }
}

// dX += the unit's gradient, or with dX_out: dX = combᵀ·dX_out + the unit's gradient; dfn, dbase, dscale +=
void hc_pre_backward(float* dX, float* dfn, float* dbase, float* dscale, const float* dy, const float* dpost,
                     const float* dcomb, const float* X, const float* fn, const float* base, const float* scale,
                     const float* mix, const float* rho, int64_t N, mhc_dims dims, const float* dX_out) {
    if (dX_out) hc_residual_backward(dX, dX_out, mix, base, scale, N, dims);
    ref::hc_pre_backward<float>(dX, dfn, dbase, dscale, dy, dpost, dcomb, X, fn, base, scale, mix, rho, N, dims);
}

// all assigned; dX_in may be null (not written then)
void hc_post_backward(float* dF, float* dX_in, float* dpost, float* dcomb, const float* dX_out, const float* F,
                      const float* X_in, const float* post, const float* comb, int64_t N, mhc_dims dims) {
    std::vector<float> unused(dX_in ? 0 : (size_t)(N * dims.n * dims.d));
    ref::hc_post_backward<float>(dF, dX_in ? dX_in : unused.data(), dpost, dcomb, dX_out, F, X_in, post, comb, N, dims);
}

// ---------------------------------------------------------------- MoE

// h [n,I] = swiglu(a13), row r multiplied by row_scale[r] when row_scale is given
void swiglu_forward(float* h, const float* a13, int64_t n, int64_t I, double limit, const float* row_scale) {
    ref::swiglu_forward<float>(h, a13, n, I, limit);
    if (!row_scale) return;
    for (int64_t r = 0; r < n; r++)
        for (int64_t i = 0; i < I; i++) h[r * I + i] *= row_scale[r];
}

// The expert-sorted permutation of the N·K slots (stable: ascending slot inside each expert) into st's views
void moe_build_permutation(moe_routing& st, const int32_t* sel, int64_t N, int E, int K) {
    const int64_t NK = N * K;
    TREX_CHECK((int64_t)st.expert_offset.size() == E + 1 && (int64_t)st.row_slot.size() == NK &&
                   (int64_t)st.slot_row.size() == NK,
               "moe routing: buffers sized for {} experts and {} slots, the layer has {} and {}",
               st.expert_offset.size() - 1, st.row_slot.size(), E, NK);
    int64_t r = 0;
    for (int e = 0; e < E; e++) {
        st.expert_offset[e] = r;
        for (int64_t a = 0; a < NK; a++)
            if (sel[a] == e) {
                st.row_slot[r] = (int32_t)a;
                st.slot_row[a] = (int32_t)r++;
            }
    }
    st.expert_offset[E] = r;
    TREX_CHECK(r == NK, "moe routing: {} of the {} slots select an expert outside [0, {})", NK - r, NK, E);
}

// rows [N·K, d]: row r holds x[token of slot row_slot[r]]
void moe_gather_rows(float* rows, const float* x, const moe_routing& st, int64_t d, int K) {
    const int64_t NK = (int64_t)st.row_slot.size();
    for (int64_t r = 0; r < NK; r++)
        for (int64_t i = 0; i < d; i++) rows[r * d + i] = x[(int64_t)(st.row_slot[r] / K) * d + i];
}

// y [N,d] = Σ_k rows[slot_row[t·K+k]] (assigned, k ascending)
void moe_combine_rows(float* y, const float* rows, const moe_routing& st, int64_t N, int64_t d, int K) {
    for (int64_t t = 0; t < N; t++)
        for (int64_t i = 0; i < d; i++) {
            double acc = 0;
            for (int k = 0; k < K; k++) acc += rows[(int64_t)st.slot_row[t * K + k] * d + i];
            y[t * d + i] = (float)acc;
        }
}

// st.a13 [N·K, 2I] = w13_e·x[t] in permuted row order (row r: slot row_slot[r] of token t, expert e = sel[slot])
void moe_fill_a13(moe_routing& st, const float* x, const int32_t* sel, const float* const* w13, int64_t d, int K,
                  int64_t I) {
    const int64_t NK = (int64_t)st.row_slot.size();
    TREX_CHECK((int64_t)st.a13.size() == NK * 2 * I, "moe routing: a13 holds {} floats, the experts need {}",
               st.a13.size(), NK * 2 * I);
    for (int64_t r = 0; r < NK; r++) {
        const int32_t slot = st.row_slot[r];
        ref::linear_forward<float>(st.a13.data() + r * 2 * I, x + (int64_t)(slot / K) * d, w13[sel[slot]], 1, d, 2 * I);
    }
}

// y assigned; st filled (the permutation, and a13 when st.a13 is non-empty)
void moe_experts_forward(float* y, moe_routing& st, const float* x, const int32_t* sel, const float* weight,
                         const float* const* w13, const float* const* w2, int64_t N, int64_t d, int E, int K, int64_t I,
                         double limit) {
    moe_build_permutation(st, sel, N, E, K);
    if (!st.a13.empty()) moe_fill_a13(st, x, sel, w13, d, K, I);
    ref::moe_experts_forward<float>(y, x, sel, weight, w13, w2, N, d, K, I, limit);
}

// dx, dweight assigned; dw13[e], dw2[e] +=. sel is recovered from the permutation (the pre-activations are
// recomputed by the reference from x, st.a13 is not read).
void moe_experts_backward(float* dx, float* dweight, float* const* dw13, float* const* dw2, const float* dy,
                          const moe_routing& st, const float* x, const float* weight, const float* const* w13,
                          const float* const* w2, int64_t N, int64_t d, int E, int K, int64_t I, double limit) {
    std::vector<int32_t> sel((size_t)(N * K), -1);
    for (int e = 0; e < E; e++)
        for (int64_t r = st.expert_offset[e]; r < st.expert_offset[e + 1]; r++) sel[st.row_slot[r]] = e;
    ref::moe_experts_backward<float>(dx, dweight, dw13, dw2, dy, x, sel.data(), weight, w13, w2, N, d, K, I, limit);
}

// Over n permuted rows r with s = slot[r] (or r when slot is null): dw[s] = dh_r·h_r (assigned), then
// dh_r ← w[s]·dh_r and dyp_r ← w[s]·dyp_r
void moe_route_weight_backward(float* dh, float* dyp, float* dw, const float* h, const float* w, const int32_t* slot,
                               int64_t n, int64_t I, int64_t d) {
    for (int64_t r = 0; r < n; r++) {
        const int64_t s = slot ? slot[r] : r;
        double acc = 0;
        for (int64_t i = 0; i < I; i++) acc += (double)dh[r * I + i] * (double)h[r * I + i];
        dw[s] = (float)acc;
        for (int64_t i = 0; i < I; i++) dh[r * I + i] *= w[s];
        for (int64_t i = 0; i < d; i++) dyp[r * d + i] *= w[s];
    }
}

// ---------------------------------------------------------------- loss

// Returns Σ_valid CE, writes n_valid, overwrites the logits with scale·(softmax − onehot) (0 on rows with label < 0)
double cross_entropy_fused(float* logits_to_grad, int64_t* n_valid, const int32_t* labels, int64_t N, int64_t V,
                           double scale) {
    const std::vector<float> logits(logits_to_grad, logits_to_grad + N * V);
    const double loss = ref::cross_entropy_forward<float>(n_valid, logits.data(), labels, N, V);
    ref::cross_entropy_backward<float>(logits_to_grad, logits.data(), labels, N, V, scale);
    return loss;
}

// The vocabulary-parallel steps (cpu::cross_entropy_shard_*), in double within a row.
void cross_entropy_shard_stats(float* mx, float* target, const float* logits, const int32_t* labels, int64_t first,
                               int64_t N, int64_t V) {
    for (int64_t n = 0; n < N; n++) {
        const float* row = logits + n * V;
        float m = row[0];
        for (int64_t v = 1; v < V; v++) m = std::max(m, row[v]);
        mx[n] = m;
        const int64_t local = (int64_t)labels[n] - first;
        target[n] = labels[n] >= 0 && local >= 0 && local < V ? row[local] : 0.0f;
    }
}

void cross_entropy_shard_exp(float* sum, float* logits, const float* mx, int64_t N, int64_t V) {
    for (int64_t n = 0; n < N; n++) {
        float* row = logits + n * V;
        double s = 0;
        for (int64_t v = 0; v < V; v++) {
            row[v] = (float)std::exp((double)row[v] - (double)mx[n]);
            s += row[v];
        }
        sum[n] = (float)s;
    }
}

double cross_entropy_shard_grad(float* logits, int64_t* n_valid, const float* mx, const float* sum, const float* target,
                                const int32_t* labels, int64_t first, int64_t N, int64_t V, double scale) {
    double total = 0;
    int64_t count = 0;
    for (int64_t n = 0; n < N; n++) {
        float* row = logits + n * V;
        const int64_t local = (int64_t)labels[n] - first;
        for (int64_t v = 0; v < V; v++)
            row[v] =
                labels[n] < 0 ? 0.0f : (float)(scale * ((double)row[v] / (double)sum[n] - (v == local ? 1.0 : 0.0)));
        if (labels[n] < 0) continue;
        total += (double)mx[n] + std::log((double)sum[n]) - (double)target[n];
        count++;
    }
    *n_valid = count;
    return total;
}

// ---------------------------------------------------------------- copies, elementwise passes, bookkeeping

void copy(float* dst, const float* src, int64_t n) {
    for (int64_t i = 0; i < n; i++) dst[i] = src[i];
}

void fill_zero(float* x, int64_t n) {
    for (int64_t i = 0; i < n; i++) x[i] = 0.0f;
}

void scale(float* y, const float* x, float a, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = a * x[i];
}

void add(float* y, const float* x, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] += x[i];
}

void broadcast_streams(float* out, const float* x, int64_t N, int64_t n, int64_t d, bool accumulate) {
    for (int64_t t = 0; t < N; t++)
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < d; i++) {
                float& o = out[(t * n + j) * d + i];
                o = accumulate ? o + x[t * d + i] : x[t * d + i];
            }
}

void sum_streams(float* out, const float* in, int64_t N, int64_t n, int64_t d) {
    for (int64_t t = 0; t < N; t++)
        for (int64_t i = 0; i < d; i++) {
            float acc = in[t * n * d + i];
            for (int64_t j = 1; j < n; j++) acc += in[(t * n + j) * d + i];
            out[t * d + i] = acc;
        }
}

// dx = rstd·(dy − ŷ·mean(dy·ŷ)), the mean in double
void rms_unweighted_backward(float* dx, const float* dy, const float* yhat, const float* rstd, int64_t R, int64_t D) {
    for (int64_t r = 0; r < R; r++) {
        double dot = 0;
        for (int64_t j = 0; j < D; j++) dot += (double)dy[r * D + j] * yhat[r * D + j];
        const double m = dot / (double)D;
        for (int64_t j = 0; j < D; j++)
            dx[r * D + j] = (float)(rstd[r] * ((double)dy[r * D + j] - (double)yhat[r * D + j] * m));
    }
}

// Each query's list built on its own: the window (same document: the rows of the positions before it, at most
// `window` of them, itself last), then its compressed entries.
int64_t attention_keys(int64_t* key_offset, int32_t* key_idx, int32_t* n_window, const int32_t* pos,
                       const int32_t* doc_of, const int64_t* entry_offset, const int32_t* sel, const int32_t* nsel,
                       int64_t kw, int64_t N, int64_t window, int m) {
    int64_t k = 0;
    for (int64_t t = 0; t < N; t++) {
        key_offset[t] = k;
        int64_t first = t;
        while (first > t - window + 1 && first > 0 && doc_of[first - 1] == doc_of[t]) first--;
        n_window[t] = (int32_t)(t - first + 1);
        for (int64_t r = first; r <= t; r++) key_idx[k++] = (int32_t)r;
        if (m == 0) continue;
        const int64_t base = N + entry_offset[doc_of[t]];
        if (m == 4) {
            for (int64_t j = 0; j < nsel[t]; j++) key_idx[k++] = (int32_t)(base + sel[t * kw + j]);
        } else {
            for (int64_t j = 0; j < (pos[t] + 1) / m; j++) key_idx[k++] = (int32_t)(base + j);
        }
    }
    key_offset[N] = k;
    return k;
}

void indexer_head_sums(double* sums, const float* P, const int64_t* key_offset, const int32_t* n_window,
                       const int32_t* nsel, int64_t N, int H, int64_t kw) {
    for (int64_t t = 0; t < N; t++) {
        const int64_t nk = key_offset[t + 1] - key_offset[t];
        for (int64_t j = 0; j < kw; j++) {
            double acc = 0;
            for (int h = 0; h < H && j < nsel[t]; h++) acc += P[key_offset[t] * H + h * nk + n_window[t] + j];
            sums[t * kw + j] = acc;
        }
    }
}

void indexer_target(float* p, const double* sums, const int32_t* nsel, int64_t N, int64_t kw) {
    for (int64_t t = 0; t < N; t++) {
        double total = 0;
        for (int64_t j = 0; j < nsel[t]; j++) total += sums[t * kw + j];
        for (int64_t j = 0; j < nsel[t]; j++)
            p[t * kw + j] = total > 0 ? (float)((float)sums[t * kw + j] / total) : 0.0f;
    }
}

void hash_select(int32_t* sel, const int32_t* tid2eid, const int32_t* ids, int64_t N, int K) {
    for (int64_t t = 0; t < N; t++)
        for (int k = 0; k < K; k++) sel[t * K + k] = tid2eid[(int64_t)ids[t] * K + k];
}

void expert_load(int64_t* load, const int32_t* sel, int64_t n_slots, int E) {
    for (int e = 0; e < E; e++) {
        load[e] = 0;
        for (int64_t i = 0; i < n_slots; i++) load[e] += sel[i] == e;
    }
}

void set_layer_entries(kernel_table& t) {
    t.copy = copy;
    t.fill_zero = fill_zero;
    t.scale = scale;
    t.add = add;
    t.broadcast_streams = broadcast_streams;
    t.sum_streams = sum_streams;
    t.rms_unweighted_backward = rms_unweighted_backward;
    t.attention_keys = attention_keys;
    t.indexer_head_sums = indexer_head_sums;
    t.indexer_target = indexer_target;
    t.hash_select = hash_select;
    t.expert_load = expert_load;
}

kernel_table make_ref_kernels() {
    kernel_table t;
    t.name = "ref";
    t.memory = host_memory();
    t.gemm = gemm;
    t.syrk = syrk;
    t.linear_fwd = linear_fwd;
    t.linear_fwd_decode = linear_fwd;  // plain loops: every row on its own already
    t.linear_bwd_data = linear_bwd_data;
    t.linear_bwd_weight = linear_bwd_weight;
    t.add_transposed = add_transposed;
    t.gemm_stats_section = gemm_stats_section;
    t.embedding_forward = ref::embedding_forward<float>;
    t.embedding_backward = embedding_backward;
    t.rmsnorm_forward = ref::rmsnorm_forward<float>;
    t.rmsnorm_backward = ref::rmsnorm_backward<float>;
    t.rope_forward = ref::rope_forward<float>;
    t.hc_pre_forward = ref::hc_pre_forward<float>;
    t.hc_pre_backward = hc_pre_backward;
    t.hc_post_forward = ref::hc_post_forward<float>;
    t.hc_post_backward = hc_post_backward;
    t.hc_head_forward = ref::hc_head_forward<float>;
    t.hc_head_backward = ref::hc_head_backward<float>;
    t.compressor_forward = ref::compressor_forward<float>;
    t.compressor_backward = ref::compressor_backward<float>;
    t.indexer_scores_forward = ref::indexer_scores_forward<float>;
    t.indexer_scores_backward = ref::indexer_scores_backward<float>;
    t.indexer_topk = ref::indexer_topk<float>;
    t.indexer_loss = ref::indexer_loss<float>;
    t.attention_forward = ref::attention_forward<float>;
    t.attention_backward = ref::attention_backward<float>;
    t.grouped_linear_forward = ref::grouped_linear_forward<float>;
    t.grouped_linear_backward = ref::grouped_linear_backward<float>;
    t.fake_quant_fp8 = ref::fake_quant_fp8<float>;
    t.fake_quant_fp4 = ref::fake_quant_fp4<float>;
    t.hadamard_rows = ref::hadamard_rows<float>;
    t.router_forward = ref::router_forward<float>;
    t.router_backward = ref::router_backward<float>;
    t.swiglu_forward = swiglu_forward;
    t.swiglu_backward = ref::swiglu_backward<float>;
    t.moe_build_permutation = moe_build_permutation;
    t.moe_gather_rows = moe_gather_rows;
    t.moe_combine_rows = moe_combine_rows;
    t.moe_experts_forward = moe_experts_forward;
    t.moe_experts_backward = moe_experts_backward;
    t.moe_route_weight_backward = moe_route_weight_backward;
    t.balance_loss_forward = ref::balance_loss_forward<float>;
    t.balance_loss_backward = ref::balance_loss_backward<float>;
    t.cross_entropy_fused = cross_entropy_fused;
    t.cross_entropy_shard_stats = cross_entropy_shard_stats;
    t.cross_entropy_shard_exp = cross_entropy_shard_exp;
    t.cross_entropy_shard_grad = cross_entropy_shard_grad;
    set_layer_entries(t);
    return t;
}

}  // namespace

const kernel_table& ref_kernels() {
    static const kernel_table table = make_ref_kernels();
    return table;
}

}  // namespace trex
