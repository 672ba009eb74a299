// The bf16 path of cpu::gemm (kernels/precision.hpp): the operands rounded to bfloat16 into thread-local buffers, then
// oneDNN's matmul with bf16 source and weights and an fp32 destination (brgemm kernels on AVX512_BF16, AMX where the
// CPU has it). Same contract as cpu::gemm (gemm.hpp); callable from inside a parallel region (it then runs on the
// calling thread). Requires cpu_has_bf16().
#pragma once

#include <cstdint>

namespace trex::cpu {

void gemm_bf16(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
               const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

// dst[r·cols + c] = the bf16 bits of src[r·ld + c] rounded to nearest even (round_to_bf16's), for r < rows, c < cols
void convert_to_bf16(uint16_t* dst, const float* src, int64_t rows, int64_t cols, int64_t ld);

}  // namespace trex::cpu
