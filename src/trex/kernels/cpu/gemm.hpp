// Row-major GEMM on oneDNN: C = alpha·op(A)·op(B) + beta·C, C and the operands fp32; the products in the current
// matmul precision (kernels/precision.hpp): fp32 (dnnl_sgemm) or bf16 (operands rounded to bf16, fp32 sums: oneDNN's
// bf16 matmul, gemm_bf16.hpp). op(A) is [M,K], op(B) is [K,N], C is [M,N]; lda/ldb/ldc are row strides of the stored
// matrices. The decoding kernel (linear_fwd_decode) computes in fp32 whatever the precision, up to decode_rows rows.
// Determinism: bitwise reproducible for a fixed OpenMP thread count (oneDNN partitions the product, K included, by
// the thread count, so a different count can change the last bits). A thread-count-independent tiling was measured
// at ~25% lower throughput and is not used (tests/unit/kernels_cpu_determinism_test.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace trex::cpu {

void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

// Accounting of gemm() calls for `trex bench step --profile`: off (and free) unless begun. Calls made outside an
// OpenMP parallel region are timed (wall time of the call); calls from inside one (one-thread GEMMs on a block of
// rows, e.g. mHC's) are only counted, since their time overlaps the other threads' work.
struct gemm_stats {
    int64_t calls = 0;
    double seconds = 0, flops = 0;  // timed calls; flops = 2·M·N·K each
    int64_t nested_calls = 0;
    double nested_flops = 0;                        // calls from inside a parallel region
    std::map<std::string, double> section_seconds;  // timed seconds by the profile section open at the call
};
void gemm_stats_begin();                    // resets and starts counting
gemm_stats gemm_stats_end();                // stops and returns what was counted
void gemm_stats_section(const char* name);  // the profile section now open (nullptr: none; one profiled model at a
                                            // time); the name must outlive the counting

// Symmetric rank-k update: C[n,n] = alpha·X·Xᵀ + beta·C for X [n,k] (row stride ldx). Only the lower triangle is
// computed — recursively: C11 and C22 by halves, C21 = X2·X1ᵀ by one GEMM, blocks of ≤ 64 rows by a full GEMM — and
// then mirrored, so the result is exactly symmetric and costs ~(1/2 + 1/2^depth) of a full GEMM's FLOPs (Muon's
// Newton–Schulz: X·Xᵀ and A·A = A·Aᵀ; measured 1.2–1.4× faster than full GEMMs for n = 256…768, one thread).
// With beta ≠ 0 only C's lower triangle is read (the upper one is overwritten by the mirror). Deterministic as gemm.
void syrk(int64_t n, int64_t k, float alpha, const float* X, int64_t ldx, float beta, float* C, int64_t ldc);

// Helpers in the Linear (W [out,in]) convention.
// y[N,out] = x[N,in]·Wᵀ (+ y when accumulate)
void linear_fwd(float* y, const float* x, const float* W, int64_t N, int64_t in, int64_t out, bool accumulate = false);
// The same for a decoding step's few rows (kernel_table::linear_fwd_decode), row-independent: a row's result is
// bitwise the same whatever other rows share the call, within each of two classes of N.
//   N ≤ decode_dot_rows: W streamed once, each (row, output) a 16-lane dot product summed by halves (the few-tokens
//     case: memory-bound, one pass over W);
//   N ≤ decode_rows: the rows as vector lanes (tokens × 16 per register, W's elements broadcast), each output one
//     chain of FMAs over `in` in order (a batch of sequences: compute-bound, ~4× the dot products' FLOP rate);
//   more rows go to linear_fwd (oneDNN).
// Without AVX-512 there is no lanes kernel: the dot products take up to 16 rows, oneDNN the rest.
#ifdef __AVX512F__
constexpr int64_t decode_dot_rows = 4;
constexpr int64_t decode_rows = 64;
#else
constexpr int64_t decode_dot_rows = 16;
constexpr int64_t decode_rows = 16;
#endif
void linear_fwd_decode(float* y, const float* x, const float* W, int64_t N, int64_t in, int64_t out,
                       bool accumulate = false);
// dx[N,in] = dy[N,out]·W (+ dx when accumulate)
void linear_bwd_data(float* dx, const float* dy, const float* W, int64_t N, int64_t in, int64_t out,
                     bool accumulate = false);
// dW[out,in] += dy[N,out]ᵀ·x[N,in]
void linear_bwd_weight(float* dW, const float* dy, const float* x, int64_t N, int64_t in, int64_t out);
// dst[rows,cols] += srcᵀ for src [cols,rows] (blocked)
void add_transposed(float* dst, const float* src, int64_t rows, int64_t cols);

}  // namespace trex::cpu
