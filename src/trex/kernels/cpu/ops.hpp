// Fast CPU kernels (fp32; oneDNN GEMM, OpenMP over tokens, loops written for AVX-512 auto-vectorisation).
// Same semantics, layouts and +=/= conventions as the reference kernels in kernels/ref/ops.hpp, which are their
// oracle (tests/unit/kernels_cpu_*). Where a fast kernel keeps state between forward and backward (the MoE token
// permutation, attention probabilities) the state is an explicit struct.
//
// Determinism: every reduction has a fixed order that does not depend on the thread count: token-parallel loops
// write disjoint outputs, and sums over tokens into shared buffers (parameter gradients, shared keys) are done by
// GEMMs or by loops parallel over the output, iterating tokens in ascending order.
#pragma once

#include <cstdint>
#include <vector>

#include "trex/kernels/types.hpp"

namespace trex::cpu {

// ---------------------------------------------------------------- embedding
// out [N,d] = table[ids[n]] (table [V,d]); a negative id gives a zero row (a token whose row another vocabulary
// shard holds, docs/distributed.md §5).
void embedding_forward(float* out, const int32_t* ids, const float* table, int64_t N, int64_t d);
// dtable[v] += Σ_{n: ids[n]=v} dout[n], n ascending (parallel over rows of the table); negative ids are skipped.
void embedding_backward(float* dtable, const float* dout, const int32_t* ids, int64_t N, int64_t d, int64_t V);

// ---------------------------------------------------------------- rmsnorm (w == nullptr: unweighted)
void rmsnorm_forward(float* y, float* rstd, const float* x, const float* w, int64_t N, int64_t D, double eps);
// dx assigned; dw += (parallel over columns, tokens ascending).
void rmsnorm_backward(float* dx, float* dw, const float* dy, const float* x, const float* w, const float* rstd,
                      int64_t N, int64_t D);

// ---------------------------------------------------------------- rope (in place, last 2·half dims of each vector)
void rope_forward(float* x, const int32_t* pos, rope_table_t<float> table, int64_t N, int64_t nvec, int64_t c,
                  bool inverse);

// ---------------------------------------------------------------- mHC
void hc_pre_forward(float* y, float* post, float* comb, float* mix, float* rho, const float* X, const float* fn,
                    const float* base, const float* scale, int64_t N, mhc_dims dims);
// dX += ; dfn, dbase, dscale +=. With dX_out (the gradient of hc_post's output X_out, whose residual branch reads
// the same X): dX = combᵀ·dX_out + this unit's gradient, i.e. hc_post_backward's dX_in fused in (pass it a null
// dX_in then); comb is recomputed, bitwise as in the forward.
void hc_pre_backward(float* dX, float* dfn, float* dbase, float* dscale, const float* dy, const float* dpost,
                     const float* dcomb, const float* X, const float* fn, const float* base, const float* scale,
                     const float* mix, const float* rho, int64_t N, mhc_dims dims, const float* dX_out = nullptr);
void hc_post_forward(float* X_out, const float* F, const float* X_in, const float* post, const float* comb, int64_t N,
                     mhc_dims dims);
// all assigned; dX_in may be null (hc_pre_backward then adds the residual branch's gradient)
void hc_post_backward(float* dF, float* dX_in, float* dpost, float* dcomb, const float* dX_out, const float* F,
                      const float* X_in, const float* post, const float* comb, int64_t N, mhc_dims dims);
void hc_head_forward(float* y, float* mix, float* rho, const float* X, const float* fn, const float* base,
                     const float* scale, int64_t N, mhc_dims dims);
// dX assigned; dfn, dbase, dscale +=
void hc_head_backward(float* dX, float* dfn, float* dbase, float* dscale, const float* dy, const float* X,
                      const float* fn, const float* base, const float* scale, const float* mix, const float* rho,
                      int64_t N, mhc_dims dims);

// ---------------------------------------------------------------- KV compressor pooling
void compressor_forward(float* out, const float* kvp, const float* gp, const float* ape, const doc_span* docs,
                        const int64_t* entry_offset, int64_t n_docs, int m, int64_t c, bool overlap);
// dkvp, dgp assigned (tail rows 0); dape +=
void compressor_backward(float* dkvp, float* dgp, float* dape, const float* dout, const float* kvp, const float* gp,
                         const float* ape, const doc_span* docs, const int64_t* entry_offset, int64_t n_docs, int m,
                         int64_t c, bool overlap);

// ---------------------------------------------------------------- lightning indexer
void indexer_scores_forward(float* scores, const float* qI, const float* KI, const float* w, const int32_t* doc_of,
                            const int32_t* pos, const int64_t* entry_offset, int64_t N, int HI, int64_t cI, int m,
                            int64_t ld);
// dqI, dw assigned; dKI +=
void indexer_scores_backward(float* dqI, float* dKI, float* dw, const float* dscores, const float* qI, const float* KI,
                             const float* w, const int32_t* doc_of, const int32_t* pos, const int64_t* entry_offset,
                             int64_t N, int HI, int64_t cI, int m, int64_t ld);
// torch_rows: the release's torch.topk choice (kernels/ref/ops.hpp); nullptr: ties to the lower index
void indexer_topk(int32_t* sel, int32_t* nsel, const float* scores, const int32_t* pos, int64_t N, int m, int k,
                  int64_t ld, bool dense, const int32_t* torch_rows = nullptr);
double indexer_loss(float* dscores, const float* scores, const float* p_target, const int32_t* sel, const int32_t* nsel,
                    int64_t N, int k, int64_t ld);

// ---------------------------------------------------------------- the release's QAT simulation (qat.cpp)
// Contracts of kernels/ref/ops.hpp (fake_quant_fp8, fake_quant_fp4, hadamard_rows); the fake quantisations equal the
// reference bit for bit, the rotation to float rounding (butterflies, then the 1/√n scale).
void fake_quant_fp8(float* x, int64_t rows, int64_t ld, int64_t n, int64_t block);
void fake_quant_fp4(float* x, int64_t rows, int64_t ld, int64_t n, int64_t block);
void hadamard_rows(float* x, int64_t rows, int64_t n);

// ---------------------------------------------------------------- sparse attention with sink
void attention_forward(float* o, float* P, const float* q, const float* kv, const float* sink,
                       const int64_t* key_offset, const int32_t* key_idx, int64_t N, int H, int64_t c, double scale);
// dq, dkv assigned; dsink +=
void attention_backward(float* dq, float* dkv, float* dsink, const float* dout, const float* q, const float* kv,
                        const float* sink, const float* o, const float* P, const int64_t* key_offset,
                        const int32_t* key_idx, int64_t N, int64_t Nk, int H, int64_t c, double scale);

// ---------------------------------------------------------------- grouped output projection
void grouped_linear_forward(float* u, const float* x, const float* Wa, int64_t N, int g, int64_t in_g, int64_t dg);
void grouped_linear_backward(float* dx, float* dWa, const float* du, const float* x, const float* Wa, int64_t N, int g,
                             int64_t in_g, int64_t dg);

// ---------------------------------------------------------------- MoE
void router_forward(int32_t* sel, float* weight, float* s, const float* logits, const float* bias,
                    const int32_t* hash_sel, int64_t N, int E, int K, double route_scale);
void router_backward(float* dlogits, const float* dweight, const float* ds_extra, const float* logits, const float* s,
                     const int32_t* sel, const float* weight, int64_t N, int E, int K, double route_scale);
// row_scale [n] (optional): row r of h is multiplied by row_scale[r] (the routed experts' weights, w·swiglu(a13)).
void swiglu_forward(float* h, const float* a13, int64_t n, int64_t I, double limit, const float* row_scale = nullptr);
void swiglu_backward(float* da13, const float* dh, const float* a13, int64_t n, int64_t I, double limit);

// Token permutation of the routed experts, kept from forward to backward (the backend-neutral type of types.hpp).
using moe_state = moe_routing;
// The expert-sorted permutation of the N·K routing slots (stable, ascending slot inside each expert): expert_offset,
// row_slot, slot_row.
void moe_build_permutation(moe_state& st, const int32_t* sel, int64_t N, int E, int K);
// rows [N·K, d]: row r holds x[token of slot row_slot[r]].
void moe_gather_rows(float* rows, const float* x, const moe_state& st, int64_t d, int K);
// y [N, d] = Σ_k rows[slot_row[t·K+k]] (assigned, k ascending).
void moe_combine_rows(float* y, const float* rows, const moe_state& st, int64_t N, int64_t d, int K);
// y assigned. Tokens are permuted by expert (stable: ascending slot), each expert runs two GEMMs, outputs are
// summed back per token in slot order.
void moe_experts_forward(float* y, moe_state& st, const float* x, const int32_t* sel, const float* weight,
                         const float* const* w13, const float* const* w2, int64_t N, int64_t d, int E, int K, int64_t I,
                         double limit);
// dx, dweight assigned; dw13[e], dw2[e] +=
void moe_experts_backward(float* dx, float* dweight, float* const* dw13, float* const* dw2, const float* dy,
                          const moe_state& st, const float* x, const float* weight, const float* const* w13,
                          const float* const* w2, int64_t N, int64_t d, int E, int K, int64_t I, double limit);
// The routing-weight step of the expert backward over n permuted rows r (one per routing slot), before SwiGLU's
// backward: dw[slot(r)] = dh_r·h_r (assigned), then dh_r ← w[slot(r)]·dh_r and dyp_r ← w[slot(r)]·dyp_r, where dh
// [n, I] is d(w·h) and h the unweighted activations; slot(r) = slot[r], or r when slot is null. Shared by
// moe_experts_backward and expert parallelism, whose bitwise equality with the single process depends on it.
void moe_route_weight_backward(float* dh, float* dyp, float* dw, const float* h, const float* w, const int32_t* slot,
                               int64_t n, int64_t I, int64_t d);
double balance_loss_forward(const float* s, const int32_t* sel, int64_t B, int64_t S, int E, int K, double alpha);
void balance_loss_backward(float* ds, const float* s, const int32_t* sel, int64_t B, int64_t S, int E, int K,
                           double alpha);

// ---------------------------------------------------------------- cross-entropy
// Fused: returns Σ_valid −log softmax(logits)[label], writes n_valid, and overwrites logits in place with
// scale·(softmax − onehot) on valid rows and 0 on the others (the gradient of scale·Σ CE).
double cross_entropy_fused(float* logits_to_grad, int64_t* n_valid, const int32_t* labels, int64_t N, int64_t V,
                           double scale);
// Vocabulary-parallel form, in three steps around the caller's reductions over the shards (docs/distributed.md §5).
// logits [N,V] are the columns [first, first + V) of the full [N,Vfull] logits; labels are full-vocabulary ids.
//   stats: mx[n] = max of the shard's row; target[n] = the row's logit at labels[n] when this shard holds it, else 0.
//          The caller takes the max of mx and the sum of target over the shards.
//   exp:   each row ← exp(row − mx[n]) in place (mx: the max over all shards); sum[n] = Σ of the row. The caller
//          sums sum over the shards.
//   grad:  valid rows (labels ≥ 0) ← scale·(row / sum[n] − onehot), the others 0; returns Σ_valid (mx + log sum −
//          target) and writes n_valid. With one shard the three equal cross_entropy_fused bit for bit.
void cross_entropy_shard_stats(float* mx, float* target, const float* logits, const int32_t* labels, int64_t first,
                               int64_t N, int64_t V);
void cross_entropy_shard_exp(float* sum, float* logits, const float* mx, int64_t N, int64_t V);
double cross_entropy_shard_grad(float* logits, int64_t* n_valid, const float* mx, const float* sum, const float* target,
                                const int32_t* labels, int64_t first, int64_t N, int64_t V, double scale);
// Separate forms with the reference semantics (for tests and for callers that keep the logits).
double cross_entropy_forward(int64_t* n_valid, const float* logits, const int32_t* labels, int64_t N, int64_t V);
void cross_entropy_backward(float* dlogits, const float* logits, const int32_t* labels, int64_t N, int64_t V,
                            double scale);

// ---------------------------------------------------------------- copies and elementwise passes (elementwise.cpp)
void copy(float* dst, const float* src, int64_t n);        // dst = src (n floats, not overlapping)
void fill_zero(float* x, int64_t n);                       // x = 0
void scale(float* y, const float* x, float a, int64_t n);  // y = a·x (y == x allowed)
void add(float* y, const float* x, int64_t n);             // y += x
// out [N,n,d]: out[t,j,:] = x[t,:] (accumulate: +=) for the n streams; x [N,d]
void broadcast_streams(float* out, const float* x, int64_t N, int64_t n, int64_t d, bool accumulate);
// out [N,d] = Σ_j in[t,j,:] (j ascending; the backward of broadcast_streams); in [N,n,d]
void sum_streams(float* out, const float* in, int64_t N, int64_t n, int64_t d);
// The backward of an unweighted RMSNorm from its output: dx = rstd·(dy − ŷ·mean(dy·ŷ)) per row; yhat, dy, dx [R,D].
void rms_unweighted_backward(float* dx, const float* dy, const float* yhat, const float* rstd, int64_t R, int64_t D);

// ---------------------------------------------------------------- the layers' bookkeeping (elementwise.cpp)
// Key lists of the sparse attention: for query t (position pos[t] in document doc_of[t]) its window keys — rows
// t−nw+1 .. t, nw = min(pos+1, window) —, then the compressed entries it attends to, as rows of [window kv; compressed
// kv]: every visible one (m > 0, m ≠ 4: (pos+1)/m of them, row N + entry_offset[doc] + j) or the indexer's selection
// (m == 4: sel [N,kw], nsel [N]). key_offset [N+1], key_idx [keys], n_window [N] assigned; returns the key count.
int64_t attention_keys(int64_t* key_offset, int32_t* key_idx, int32_t* n_window, const int32_t* pos,
                       const int32_t* doc_of, const int64_t* entry_offset, const int32_t* sel, const int32_t* nsel,
                       int64_t kw, int64_t N, int64_t window, int m);
// The indexer loss's target, first half: sums [N,kw] = Σ over the H heads (in double, h ascending) of the attention
// probabilities P (attention_forward's layout) of each query's selected entries; 0 past nsel[t].
void indexer_head_sums(double* sums, const float* P, const int64_t* key_offset, const int32_t* n_window,
                       const int32_t* nsel, int64_t N, int H, int64_t kw);
// Second half: p [N,kw] = the sums normalised over each query's nsel entries (0 when they sum to 0); p past nsel[t]
// is not written.
void indexer_target(float* p, const double* sums, const int32_t* nsel, int64_t N, int64_t kw);
// Hash routing: sel [N,K] = the tid2eid rows [V,K] of the tokens ids [N].
void hash_select(int32_t* sel, const int32_t* tid2eid, const int32_t* ids, int64_t N, int K);
// load [E] = how many of the n_slots selections sel name each expert (assigned).
void expert_load(int64_t* load, const int32_t* sel, int64_t n_slots, int E);

}  // namespace trex::cpu
