// The precision of the GEMMs' products, shared by every backend's table (kernels/ref, kernels/cpu).
//
//   fp32  operands and products in fp32 (oneDNN sgemm on the CPU).
//   bf16  both operands rounded to bfloat16 (to nearest, ties to even: the rounding of vcvtne2ps2bf16), their
//         products summed in fp32, C read and written in fp32. This is the matmul of bf16 mixed-precision training:
//         master weights, gradients, optimizer state, reductions and everything outside the GEMMs stay fp32.
//
// The setting is process-wide and read at the call by the CPU backend's gemm, linear_fwd, linear_bwd_data and
// linear_bwd_weight and by every CPU kernel built on them (grouped_linear, the MoE experts, mHC, the indexer, the
// head); the reference table's gemm and linear entries honour it too (the oracle of the bf16 path), its other kernels
// compute in fp32. Set it with scoped_matmul_precision around a model's forward and backward, never inside a parallel
// region; the optimizer (Muon's Newton-Schulz) runs outside the scope, in fp32, and syrk (only the optimizer's) always
// computes in fp32.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace trex {

enum class matmul_precision { fp32, bf16 };

matmul_precision current_matmul_precision();

// Sets the precision for the scope's lifetime and restores the previous one after. bf16 on a CPU without AVX512_BF16
// is a trex::error (require_bf16).
class scoped_matmul_precision {
   public:
    explicit scoped_matmul_precision(matmul_precision p);
    ~scoped_matmul_precision();
    scoped_matmul_precision(const scoped_matmul_precision&) = delete;
    scoped_matmul_precision& operator=(const scoped_matmul_precision&) = delete;

   private:
    matmul_precision previous_;
};

// "fp32" or "bf16"; anything else is a trex::error naming `what` and the value.
matmul_precision parse_matmul_precision(const std::string& s, const std::string& what);
const char* matmul_precision_name(matmul_precision p);

// Whether this CPU has the AVX512_BF16 instructions bf16 GEMMs run on (TREX_ASSUME_NO_BF16=1 says no, to test the
// refusal on any machine).
bool cpu_has_bf16();
// A one-line trex::error naming `what` when cpu_has_bf16() is false: without the instructions, bf16 products are
// emulated at a fraction of fp32's speed, which no one asks for.
void require_bf16(const std::string& what);

// x rounded to the nearest bfloat16 (ties to even), returned as the float it represents, bit for bit what the
// hardware's vcvtneps2bf16 gives: a NaN becomes a quiet NaN (the top of its payload kept), values that round past the
// largest bf16 become ±inf, and denormal inputs are read as zero (±0, the sign kept).
inline float round_to_bf16(float x) {
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    if ((u & 0x7F800000u) == 0) {
        u &= 0x80000000u;
    } else if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu) != 0) {
        u |= 0x00400000u;  // a quiet NaN, its payload's top kept
    } else {
        u += 0x7FFFu + ((u >> 16) & 1u);
    }
    u &= 0xFFFF0000u;
    float y;
    std::memcpy(&y, &u, sizeof y);
    return y;
}

}  // namespace trex
