// Reference kernels: plain loops, one obvious way, templated on the scalar (instantiated for float and double).
// They are the oracle for the fast kernels in kernels/cpu and are gradient-checked by finite differences in double.
// The math of every op is docs/model.md; shapes are in the comments ([N,d] = N rows of d).
// Conventions: see kernels/types.hpp (parameter grads +=, activation grads =).
#pragma once

#include <cstdint>

#include "trex/kernels/types.hpp"

namespace trex::ref {

// ---------------------------------------------------------------- embedding (embedding.cpp)
// out[n,:] = table[ids[n],:], 0 when ids[n] < 0  out [N,d], table [V,d]
template <typename T>
void embedding_forward(T* out, const int32_t* ids, const T* table, int64_t N, int64_t d);
// dtable[ids[n],:] += dout[n,:] (n ascending, ids[n] < 0 skipped)    dtable [V,d]
template <typename T>
void embedding_backward(T* dtable, const T* dout, const int32_t* ids, int64_t N, int64_t d);

// ---------------------------------------------------------------- linear (linear.cpp)
// y = x W^T                                      y [N,out], x [N,in], W [out,in]
template <typename T>
void linear_forward(T* y, const T* x, const T* W, int64_t N, int64_t in, int64_t out);
// dx = dy W (assigned; skipped when dx == nullptr), dW += dy^T x (skipped when dW == nullptr)
template <typename T>
void linear_backward(T* dx, T* dW, const T* dy, const T* x, const T* W, int64_t N, int64_t in, int64_t out);

// ---------------------------------------------------------------- rmsnorm (rmsnorm.cpp)
// y = w ⊙ x·rstd, rstd = (mean(x²)+eps)^-1/2 per row; w == nullptr: unweighted.   y,x [N,D], rstd [N], w [D]
template <typename T>
void rmsnorm_forward(T* y, T* rstd, const T* x, const T* w, int64_t N, int64_t D, double eps);
// dx assigned, dw += (dw ignored when w == nullptr)
template <typename T>
void rmsnorm_backward(T* dx, T* dw, const T* dy, const T* x, const T* w, const T* rstd, int64_t N, int64_t D);

// ---------------------------------------------------------------- rope (rope.cpp)
// Inverse frequencies θ_i (i < r/2) with optional YaRN exactly as docs/model.md §3.2 (double precision).
void rope_inv_freq(double* theta, int r, double base, bool yarn, double factor, int64_t original_len, double beta_fast,
                   double beta_slow);
// In place on the last r = 2*table.half dims of every vector: x [N, nvec, c] (vector length c), pos [N].
// Rotates by +pos (inverse == false) or −pos (inverse == true). The backward of a rotation by +pos is the
// rotation by −pos, so rope_forward(…, !inverse) is the backward.
template <typename T>
void rope_forward(T* x, const int32_t* pos, rope_table_t<T> table, int64_t N, int64_t nvec, int64_t c, bool inverse);

// ---------------------------------------------------------------- mHC (mhc.cpp)
// Sinkhorn projection of one n×n matrix R (row-major) in the code order of docs/model.md §3.3.
template <typename T>
void sinkhorn_forward(T* comb, const T* R, int n, int iters, double eps);
// dR assigned from dcomb (recomputes the iterates from R).
template <typename T>
void sinkhorn_backward(T* dR, const T* dcomb, const T* R, int n, int iters, double eps);

// hc_pre: y [N,d], post [N,n], comb [N,n,n] (comb[t][j][k]: stream j → output stream k), mix [N,rows], rho [N]
// from X [N,n,d] with fn [rows, n·d], base [rows], scale [3].
template <typename T>
void hc_pre_forward(T* y, T* post, T* comb, T* mix, T* rho, const T* X, const T* fn, const T* base, const T* scale,
                    int64_t N, mhc_dims dims);
// dX += (accumulates: the residual stream also receives hc_post's gradient), dfn/dbase/dscale +=.
template <typename T>
void hc_pre_backward(T* dX, T* dfn, T* dbase, T* dscale, const T* dy, const T* dpost, const T* dcomb, const T* X,
                     const T* fn, const T* base, const T* scale, const T* mix, const T* rho, int64_t N, mhc_dims dims);
// X_out[k] = post_k F + Σ_j comb[j,k] X_in[j]       X_out, X_in [N,n,d], F [N,d]
template <typename T>
void hc_post_forward(T* X_out, const T* F, const T* X_in, const T* post, const T* comb, int64_t N, mhc_dims dims);
// dF, dX_in, dpost, dcomb all assigned.
template <typename T>
void hc_post_backward(T* dF, T* dX_in, T* dpost, T* dcomb, const T* dX_out, const T* F, const T* X_in, const T* post,
                      const T* comb, int64_t N, mhc_dims dims);
// hc_head: y [N,d], mix [N,n], rho [N] from X [N,n,d], fn [n, n·d], base [n], scale [1].
template <typename T>
void hc_head_forward(T* y, T* mix, T* rho, const T* X, const T* fn, const T* base, const T* scale, int64_t N,
                     mhc_dims dims);
// dX assigned, dfn/dbase/dscale +=.
template <typename T>
void hc_head_backward(T* dX, T* dfn, T* dbase, T* dscale, const T* dy, const T* X, const T* fn, const T* base,
                      const T* scale, const T* mix, const T* rho, int64_t N, mhc_dims dims);

// ---------------------------------------------------------------- KV compressor (compressor.cpp)
// Pooling of docs/model.md §3.4 before the compressor's norm and RoPE. kvp, gp [N, coff·c] are the outputs of the
// compressor's wkv / wgate (coff = 2 when overlap, i.e. ratio 4, else 1); ape [m, coff·c].
// Document k produces floor(docs[k].len / m) entries, written from row entry_offset[k] of out [Nc, c].
template <typename T>
void compressor_forward(T* out, const T* kvp, const T* gp, const T* ape, const doc_span* docs,
                        const int64_t* entry_offset, int64_t n_docs, int m, int64_t c, bool overlap);
// dkvp, dgp assigned over the token rows of the documents (rows of tail tokens get 0); dape +=.
template <typename T>
void compressor_backward(T* dkvp, T* dgp, T* dape, const T* dout, const T* kvp, const T* gp, const T* ape,
                         const doc_span* docs, const int64_t* entry_offset, int64_t n_docs, int m, int64_t c,
                         bool overlap);

// ---------------------------------------------------------------- lightning indexer (indexer.cpp)
// Number of compressed entries visible to a query at document position p: floor((p+1)/m).
// scores [N, ld]: scores[t, i] = Σ_h w[t,h]·ReLU(qI[t,h]·KI[entry_offset[doc(t)] + i]) for i < visible(t); the
// rest of the row is left untouched. qI [N,HI,cI], KI [Nc,cI], w [N,HI] (already scaled by (cI·HI)^-1/2).
// doc_of [N]: document index of each token; pos [N]: document position.
template <typename T>
void indexer_scores_forward(T* scores, const T* qI, const T* KI, const T* w, const int32_t* doc_of, const int32_t* pos,
                            const int64_t* entry_offset, int64_t N, int HI, int64_t cI, int m, int64_t ld);
// dqI, dw assigned; dKI += (entries are shared by many queries). dscores has the layout of scores; only the
// visible entries are read.
template <typename T>
void indexer_scores_backward(T* dqI, T* dKI, T* dw, const T* dscores, const T* qI, const T* KI, const T* w,
                             const int32_t* doc_of, const int32_t* pos, const int64_t* entry_offset, int64_t N, int HI,
                             int64_t cI, int m, int64_t ld);
// Selection: sel [N,k] = the min(k, visible(t)) visible entries with the largest score (ties: lower index first),
// sorted ascending, padded with −1; nsel [N]. dense: every visible entry (then sel must have room: k ≥ max visible).
// torch_rows (not dense; nullptr: the rule above): the release's choice instead — torch.topk (topk_torch.hpp) of
// min(k, torch_rows[t]) over a row of torch_rows[t] ≥ visible(t) entries whose invisible ones score −inf, the
// invisible picks dropped (k must be min(k_I, the longest row), as the activation plan's kw is).
template <typename T>
void indexer_topk(int32_t* sel, int32_t* nsel, const T* scores, const int32_t* pos, int64_t N, int m, int k, int64_t ld,
                  bool dense, const int32_t* torch_rows = nullptr);
// KL loss of docs/model.md §4 for one layer. p_target [N,k] = target distribution over each query's selected
// entries (sums to 1 over the first nsel[t] slots). Returns Σ_t KL_t / n_q (n_q = queries with nsel > 0) and
// writes dscores (the gradient of that value w.r.t. scores) on the selected entries, 0 on the others (the first
// `ld` columns of every row are written).
template <typename T>
double indexer_loss(T* dscores, const T* scores, const T* p_target, const int32_t* sel, const int32_t* nsel, int64_t N,
                    int k, int64_t ld);

// ---------------------------------------------------------------- the release's QAT simulation (qat.cpp)
// In place, per row of x [rows, ld], columns [0, n) in blocks of `block` (n % block == 0): s = 2^ceil(log2(p)) with
// p = max(amax, floor)·(1/qmax) rounded to float (the release's UE8M0 scale), x ← round(clamp(x/s, ±qmax))·s.
// fake_quant_fp8: E4M3 (qmax 448, floor 1e−4); fake_quant_fp4: E2M1 (qmax 6, floor 6·2^−126). round: the nearest
// value of the format, ties to the even code.
template <typename T>
void fake_quant_fp8(T* x, int64_t rows, int64_t ld, int64_t n, int64_t block);
template <typename T>
void fake_quant_fp4(T* x, int64_t rows, int64_t ld, int64_t n, int64_t block);
// x [rows, n] ← x·H/√n, H the Sylvester-Hadamard matrix (H[i][j] = (−1)^popcount(i&j), n a power of two). H/√n is
// symmetric and orthogonal: the transform is its own inverse and its own backward.
template <typename T>
void hadamard_rows(T* x, int64_t rows, int64_t n);

// ---------------------------------------------------------------- sparse attention with sink (attention.cpp)
// Query t attends to the keys key_idx[key_offset[t] .. key_offset[t+1]) (rows of kv [Nk,c]), all H heads sharing
// them (single K=V head). s_j = scale·q[t,h]·kv[j]; p_j = exp(s_j)/(Σ exp(s_j') + exp(sink[h])); o = Σ p_j kv[j].
// o [N,H,c], P [Σ_t nk(t)·H] laid out per query as [h][j] from offset key_offset[t]·H; q [N,H,c]; sink [H].
template <typename T>
void attention_forward(T* o, T* P, const T* q, const T* kv, const T* sink, const int64_t* key_offset,
                       const int32_t* key_idx, int64_t N, int H, int64_t c, double scale);
// dq assigned, dkv assigned (over all Nk rows), dsink +=.
template <typename T>
void attention_backward(T* dq, T* dkv, T* dsink, const T* dout, const T* q, const T* kv, const T* sink, const T* o,
                        const T* P, const int64_t* key_offset, const int32_t* key_idx, int64_t N, int64_t Nk, int H,
                        int64_t c, double scale);

// ---------------------------------------------------------------- grouped output projection (grouped_linear.cpp)
// u[t,k,:] = Wa_k · x[t,k,:], Wa_k = rows [k·dg, (k+1)·dg) of Wa [g·dg, in_g]; x [N,g,in_g], u [N,g,dg].
template <typename T>
void grouped_linear_forward(T* u, const T* x, const T* Wa, int64_t N, int g, int64_t in_g, int64_t dg);
// dx assigned, dWa +=.
template <typename T>
void grouped_linear_backward(T* dx, T* dWa, const T* du, const T* x, const T* Wa, int64_t N, int g, int64_t in_g,
                             int64_t dg);

// ---------------------------------------------------------------- MoE (moe.cpp)
// Router: s = sqrt(softplus(logits)) [N,E]; selection sel [N,K] = top-K of s + bias (ties: lower expert id first,
// slots in descending order of s + bias) or, when hash_sel != nullptr, hash_sel (the tid2eid rows of the tokens);
// weight [N,K] = route_scale·s_sel/Σ_sel s. bias may be nullptr (zero).
template <typename T>
void router_forward(int32_t* sel, T* weight, T* s, const T* logits, const T* bias, const int32_t* hash_sel, int64_t N,
                    int E, int K, double route_scale);
// dlogits assigned from dweight [N,K] and ds_extra [N,E] (an extra gradient w.r.t. s, e.g. the balance loss;
// nullptr = none).
template <typename T>
void router_backward(T* dlogits, const T* dweight, const T* ds_extra, const T* logits, const T* s, const int32_t* sel,
                     const T* weight, int64_t N, int E, int K, double route_scale);
// Clamped SwiGLU on the concatenated [a1 | a3] pre-activations: h = silu(min(a1,L)) ⊙ clamp(a3,−L,L) [n,I];
// a13 [n,2I]; limit L <= 0 disables the clamp.
template <typename T>
void swiglu_forward(T* h, const T* a13, int64_t n, int64_t I, double limit);
// da13 assigned; the clamps pass the gradient where a1 ≤ L and |a3| ≤ L (torch.clamp convention).
template <typename T>
void swiglu_backward(T* da13, const T* dh, const T* a13, int64_t n, int64_t I, double limit);
// Routed experts: y[t] = Σ_k weight[t,k]·w2_e·swiglu(w13_e·x[t]), e = sel[t,k] (k ascending).
// w13[e] [2I,d] (w1 rows then w3 rows), w2[e] [d,I]. y, x [N,d].
template <typename T>
void moe_experts_forward(T* y, const T* x, const int32_t* sel, const T* weight, const T* const* w13, const T* const* w2,
                         int64_t N, int64_t d, int K, int64_t I, double limit);
// dx, dweight assigned; dw13[e], dw2[e] +=.
template <typename T>
void moe_experts_backward(T* dx, T* dweight, T* const* dw13, T* const* dw2, const T* dy, const T* x, const int32_t* sel,
                          const T* weight, const T* const* w13, const T* const* w2, int64_t N, int64_t d, int K,
                          int64_t I, double limit);
// Sequence-wise balance loss of one layer (docs/model.md §4) over B rows of S tokens:
// returns alpha·(1/B)·Σ_b Σ_i f_i P_i.
template <typename T>
double balance_loss_forward(const T* s, const int32_t* sel, int64_t B, int64_t S, int E, int K, double alpha);
// ds += gradient w.r.t. s.
template <typename T>
void balance_loss_backward(T* ds, const T* s, const int32_t* sel, int64_t B, int64_t S, int E, int K, double alpha);

// ---------------------------------------------------------------- cross-entropy (cross_entropy.cpp)
// Returns Σ_{labels[n] ≥ 0} −log softmax(logits[n])[labels[n]] and writes the count of valid labels.
template <typename T>
double cross_entropy_forward(int64_t* n_valid, const T* logits, const int32_t* labels, int64_t N, int64_t V);
// dlogits = scale·(softmax − onehot) on valid rows, 0 on the others (assigned).
template <typename T>
void cross_entropy_backward(T* dlogits, const T* logits, const int32_t* labels, int64_t N, int64_t V, double scale);

}  // namespace trex::ref
