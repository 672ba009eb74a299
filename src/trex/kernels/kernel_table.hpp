// The backend seam: the kernels the model and expert parallelism call, as a table of functions. The model reaches
// kernels only through a kernel_table (dsv4_model::kernels()); the CPU backend's table (cpu_kernels()) forwards to
// kernels/cpu. A second backend (CUDA) implements the same table over device pointers and passes the same tests
// against the reference kernels (kernels/ref), with no change to the model.
//
// Contract of every entry: exactly that of the kernel of the same name in kernels/cpu/ops.hpp and
// kernels/cpu/gemm.hpp (layouts, shapes, +=/= conventions, determinism), stated there once. Entries take every
// argument explicitly (no defaults: a table entry is a function pointer).
//
// The optimizer (optim/, parallel/zero_optimizer) reaches its GEMMs (Muon's Newton-Schulz) through the same table.
// The layers touch no tensor element themselves: copies, zero fills, elementwise passes and the layers' bookkeeping
// (key lists, the indexer's target, hash routing, expert loads) are entries too, and the model's memory (the parameter
// arenas, the activation arena, the workspace) is allocated through `memory`. What the seam does not cover yet: the
// batch geometry and the token ids are host arrays the kernels read, and the stage reads losses and expert loads back
// on the host.
#pragma once

#include <cstdint>

#include "trex/kernels/memory.hpp"
#include "trex/kernels/types.hpp"

namespace trex {

struct kernel_table {
    const char* name = nullptr;  // the backend ("cpu")

    // ---- GEMM (Linear convention: W [out, in], y = x·Wᵀ)
    void (*gemm)(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                 const float* B, int64_t ldb, float beta, float* C, int64_t ldc) = nullptr;
    // C [n,n] = alpha·X·Xᵀ + beta·C, exactly symmetric (Muon's Newton-Schulz)
    void (*syrk)(int64_t n, int64_t k, float alpha, const float* X, int64_t ldx, float beta, float* C,
                 int64_t ldc) = nullptr;
    void (*linear_fwd)(float* y, const float* x, const float* W, int64_t N, int64_t in, int64_t out,
                       bool accumulate) = nullptr;
    // linear_fwd for the few rows of a decoding step (cpu::linear_fwd_decode: up to 64 rows, a row's result
    // independent of the other rows within each of two row-count classes); larger N as linear_fwd.
    // decoding_kernels() puts it in linear_fwd's place.
    void (*linear_fwd_decode)(float* y, const float* x, const float* W, int64_t N, int64_t in, int64_t out,
                              bool accumulate) = nullptr;
    void (*linear_bwd_data)(float* dx, const float* dy, const float* W, int64_t N, int64_t in, int64_t out,
                            bool accumulate) = nullptr;
    void (*linear_bwd_weight)(float* dW, const float* dy, const float* x, int64_t N, int64_t in, int64_t out) = nullptr;
    void (*add_transposed)(float* dst, const float* src, int64_t rows, int64_t cols) = nullptr;
    // the profile section open at the following GEMMs (nullptr: none); for `trex bench step --profile`
    void (*gemm_stats_section)(const char* name) = nullptr;

    // ---- embedding, RMSNorm, RoPE
    void (*embedding_forward)(float* out, const int32_t* ids, const float* table, int64_t N, int64_t d) = nullptr;
    void (*embedding_backward)(float* dtable, const float* dout, const int32_t* ids, int64_t N, int64_t d,
                               int64_t V) = nullptr;
    void (*rmsnorm_forward)(float* y, float* rstd, const float* x, const float* w, int64_t N, int64_t D,
                            double eps) = nullptr;
    void (*rmsnorm_backward)(float* dx, float* dw, const float* dy, const float* x, const float* w, const float* rstd,
                             int64_t N, int64_t D) = nullptr;
    void (*rope_forward)(float* x, const int32_t* pos, rope_table_t<float> table, int64_t N, int64_t nvec, int64_t c,
                         bool inverse) = nullptr;

    // ---- mHC
    void (*hc_pre_forward)(float* y, float* post, float* comb, float* mix, float* rho, const float* X, const float* fn,
                           const float* base, const float* scale, int64_t N, mhc_dims dims) = nullptr;
    void (*hc_pre_backward)(float* dX, float* dfn, float* dbase, float* dscale, const float* dy, const float* dpost,
                            const float* dcomb, const float* X, const float* fn, const float* base, const float* scale,
                            const float* mix, const float* rho, int64_t N, mhc_dims dims,
                            const float* dX_out) = nullptr;
    void (*hc_post_forward)(float* X_out, const float* F, const float* X_in, const float* post, const float* comb,
                            int64_t N, mhc_dims dims) = nullptr;
    void (*hc_post_backward)(float* dF, float* dX_in, float* dpost, float* dcomb, const float* dX_out, const float* F,
                             const float* X_in, const float* post, const float* comb, int64_t N,
                             mhc_dims dims) = nullptr;
    void (*hc_head_forward)(float* y, float* mix, float* rho, const float* X, const float* fn, const float* base,
                            const float* scale, int64_t N, mhc_dims dims) = nullptr;
    void (*hc_head_backward)(float* dX, float* dfn, float* dbase, float* dscale, const float* dy, const float* X,
                             const float* fn, const float* base, const float* scale, const float* mix, const float* rho,
                             int64_t N, mhc_dims dims) = nullptr;

    // ---- attention: KV compressor, lightning indexer, sparse attention with sink, grouped output projection
    void (*compressor_forward)(float* out, const float* kvp, const float* gp, const float* ape, const doc_span* docs,
                               const int64_t* entry_offset, int64_t n_docs, int m, int64_t c, bool overlap) = nullptr;
    void (*compressor_backward)(float* dkvp, float* dgp, float* dape, const float* dout, const float* kvp,
                                const float* gp, const float* ape, const doc_span* docs, const int64_t* entry_offset,
                                int64_t n_docs, int m, int64_t c, bool overlap) = nullptr;
    void (*indexer_scores_forward)(float* scores, const float* qI, const float* KI, const float* w,
                                   const int32_t* doc_of, const int32_t* pos, const int64_t* entry_offset, int64_t N,
                                   int HI, int64_t cI, int m, int64_t ld) = nullptr;
    void (*indexer_scores_backward)(float* dqI, float* dKI, float* dw, const float* dscores, const float* qI,
                                    const float* KI, const float* w, const int32_t* doc_of, const int32_t* pos,
                                    const int64_t* entry_offset, int64_t N, int HI, int64_t cI, int m,
                                    int64_t ld) = nullptr;
    void (*indexer_topk)(int32_t* sel, int32_t* nsel, const float* scores, const int32_t* pos, int64_t N, int m, int k,
                         int64_t ld, bool dense, const int32_t* torch_rows) = nullptr;
    double (*indexer_loss)(float* dscores, const float* scores, const float* p_target, const int32_t* sel,
                           const int32_t* nsel, int64_t N, int k, int64_t ld) = nullptr;
    void (*attention_forward)(float* o, float* P, const float* q, const float* kv, const float* sink,
                              const int64_t* key_offset, const int32_t* key_idx, int64_t N, int H, int64_t c,
                              double scale) = nullptr;
    void (*attention_backward)(float* dq, float* dkv, float* dsink, const float* dout, const float* q, const float* kv,
                               const float* sink, const float* o, const float* P, const int64_t* key_offset,
                               const int32_t* key_idx, int64_t N, int64_t Nk, int H, int64_t c, double scale) = nullptr;
    void (*grouped_linear_forward)(float* u, const float* x, const float* Wa, int64_t N, int g, int64_t in_g,
                                   int64_t dg) = nullptr;
    void (*grouped_linear_backward)(float* dx, float* dWa, const float* du, const float* x, const float* Wa, int64_t N,
                                    int g, int64_t in_g, int64_t dg) = nullptr;

    // ---- the release's QAT simulation (model.qat = release): in-place block fake quantisation of columns [0, n) of
    // rows of stride ld (FP8 E4M3 / FP4 E2M1, UE8M0 scales) and the normalised Walsh-Hadamard rotation of rows of n
    void (*fake_quant_fp8)(float* x, int64_t rows, int64_t ld, int64_t n, int64_t block) = nullptr;
    void (*fake_quant_fp4)(float* x, int64_t rows, int64_t ld, int64_t n, int64_t block) = nullptr;
    void (*hadamard_rows)(float* x, int64_t rows, int64_t n) = nullptr;

    // ---- MoE: router, SwiGLU, routed experts, the balance loss
    void (*router_forward)(int32_t* sel, float* weight, float* s, const float* logits, const float* bias,
                           const int32_t* hash_sel, int64_t N, int E, int K, double route_scale) = nullptr;
    void (*router_backward)(float* dlogits, const float* dweight, const float* ds_extra, const float* logits,
                            const float* s, const int32_t* sel, const float* weight, int64_t N, int E, int K,
                            double route_scale) = nullptr;
    void (*swiglu_forward)(float* h, const float* a13, int64_t n, int64_t I, double limit,
                           const float* row_scale) = nullptr;
    void (*swiglu_backward)(float* da13, const float* dh, const float* a13, int64_t n, int64_t I,
                            double limit) = nullptr;
    void (*moe_build_permutation)(moe_routing& st, const int32_t* sel, int64_t N, int E, int K) = nullptr;
    void (*moe_gather_rows)(float* rows, const float* x, const moe_routing& st, int64_t d, int K) = nullptr;
    void (*moe_combine_rows)(float* y, const float* rows, const moe_routing& st, int64_t N, int64_t d, int K) = nullptr;
    void (*moe_experts_forward)(float* y, moe_routing& st, const float* x, const int32_t* sel, const float* weight,
                                const float* const* w13, const float* const* w2, int64_t N, int64_t d, int E, int K,
                                int64_t I, double limit) = nullptr;
    void (*moe_experts_backward)(float* dx, float* dweight, float* const* dw13, float* const* dw2, const float* dy,
                                 const moe_routing& st, const float* x, const float* weight, const float* const* w13,
                                 const float* const* w2, int64_t N, int64_t d, int E, int K, int64_t I,
                                 double limit) = nullptr;
    void (*moe_route_weight_backward)(float* dh, float* dyp, float* dw, const float* h, const float* w,
                                      const int32_t* slot, int64_t n, int64_t I, int64_t d) = nullptr;
    double (*balance_loss_forward)(const float* s, const int32_t* sel, int64_t B, int64_t S, int E, int K,
                                   double alpha) = nullptr;
    void (*balance_loss_backward)(float* ds, const float* s, const int32_t* sel, int64_t B, int64_t S, int E, int K,
                                  double alpha) = nullptr;

    // ---- loss
    double (*cross_entropy_fused)(float* logits_to_grad, int64_t* n_valid, const int32_t* labels, int64_t N, int64_t V,
                                  double scale) = nullptr;
    // the vocabulary-parallel form's three steps (the caller reduces over the shards between them)
    void (*cross_entropy_shard_stats)(float* mx, float* target, const float* logits, const int32_t* labels,
                                      int64_t first, int64_t N, int64_t V) = nullptr;
    void (*cross_entropy_shard_exp)(float* sum, float* logits, const float* mx, int64_t N, int64_t V) = nullptr;
    double (*cross_entropy_shard_grad)(float* logits, int64_t* n_valid, const float* mx, const float* sum,
                                       const float* target, const int32_t* labels, int64_t first, int64_t N, int64_t V,
                                       double scale) = nullptr;

    // ---- copies and elementwise passes between the math kernels (a layer touches no tensor element itself)
    void (*copy)(float* dst, const float* src, int64_t n) = nullptr;
    void (*fill_zero)(float* x, int64_t n) = nullptr;
    void (*scale)(float* y, const float* x, float a, int64_t n) = nullptr;
    void (*add)(float* y, const float* x, int64_t n) = nullptr;
    void (*broadcast_streams)(float* out, const float* x, int64_t N, int64_t n, int64_t d, bool accumulate) = nullptr;
    void (*sum_streams)(float* out, const float* in, int64_t N, int64_t n, int64_t d) = nullptr;
    void (*rms_unweighted_backward)(float* dx, const float* dy, const float* yhat, const float* rstd, int64_t R,
                                    int64_t D) = nullptr;

    // ---- the layers' bookkeeping: attention key lists, the indexer loss's target, hash routing, expert loads
    int64_t (*attention_keys)(int64_t* key_offset, int32_t* key_idx, int32_t* n_window, const int32_t* pos,
                              const int32_t* doc_of, const int64_t* entry_offset, const int32_t* sel,
                              const int32_t* nsel, int64_t kw, int64_t N, int64_t window, int m) = nullptr;
    void (*indexer_head_sums)(double* sums, const float* P, const int64_t* key_offset, const int32_t* n_window,
                              const int32_t* nsel, int64_t N, int H, int64_t kw) = nullptr;
    void (*indexer_target)(float* p, const double* sums, const int32_t* nsel, int64_t N, int64_t kw) = nullptr;
    void (*hash_select)(int32_t* sel, const int32_t* tid2eid, const int32_t* ids, int64_t N, int K) = nullptr;
    void (*expert_load)(int64_t* load, const int32_t* sel, int64_t n_slots, int E) = nullptr;

    // ---- memory: where the buffers the entries take live (memory.hpp); last, after the kernels
    device_allocator memory;
};

// The table cached decoding runs on: `k` with linear_fwd_decode in linear_fwd's place (when the backend has one).
inline kernel_table decoding_kernels(const kernel_table& k) {
    kernel_table t = k;
    if (k.linear_fwd_decode) t.linear_fwd = k.linear_fwd_decode;
    return t;
}

// The CPU backend's table (kernels/cpu/kernel_table.cpp): every entry is the kernels/cpu function of its name.
const kernel_table& cpu_kernels();

// The reference backend's table (kernels/ref/kernel_table.cpp): every entry is computed by the plain loops of
// kernels/ref (the float instantiation; GEMM, SYRK and the MoE permutation by plain loops of the same style), with
// small adapters where the table's contract (the +=/= conventions, accumulate flags, row_scale, the fused residual
// of hc_pre_backward, the MoE routing state) differs from the reference signature. Single-threaded and slow: the
// oracle that another backend's table (the CPU one, a future CUDA one) is tested against, entry by entry or as a
// whole model built with it.
const kernel_table& ref_kernels();

}  // namespace trex
