// Number formats of the DeepSeek-V4 release checkpoints (spec §4.1, §4.2) and the block quantisers that produce
// them. Scales are multiplied to dequantise: w = decode(code) · scale.
//
//  * FP8 E4M3FN (`F8_E4M3`): 1 sign, 4 exponent bits (bias 7), 3 mantissa bits, subnormals, no infinities, max ±448,
//    NaN = S.1111.111. Encoding rounds to nearest even and saturates to ±448 (±inf too); NaN → 0x7F / 0xFF.
//  * UE8M0 (`F8_E8M0`): an unsigned power of two, value = 2^(byte − 127); 0xFF is NaN.
//  * FP4 E2M1: code → value table (nibble 0..15) 0, 0.5, 1, 1.5, 2, 3, 4, 6, −0, −0.5, …, −6. Encoding rounds to the
//    nearest value, ties to the even code, and saturates to ±6. Two codes per byte along the input dimension:
//    low nibble = even column 2k, high nibble = odd column 2k+1; stored as `I8` [out, in/2].
//  * FP8 weights: 128×128 blocks, scale = 2^ceil(log2(amax/448)), shape [ceil(out/128), ceil(in/128)].
//  * FP4 experts: 1×32 blocks along the input dimension, scale = 2^ceil(log2(amax/6)), shape [out, ceil(in/32)].
//    amax is floored (weights whose block is all zero still get a finite scale): FP8 at 1e−4 (as the activation
//    quantiser of the reference, spec §4.3), FP4 at 6·2^−126.
//  * F32 block scales (Flash-Base checkpoints) are accepted on import in place of UE8M0.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace trex {

// ---- scalars
float fp8_e4m3_to_f32(uint8_t code);
uint8_t f32_to_fp8_e4m3(float x);  // round to nearest even, saturate to ±448, NaN → 0x7F|sign
float ue8m0_to_f32(uint8_t code);  // 2^(code − 127); 0xFF → NaN; 0 → 2^−127 (a subnormal float)
// The UE8M0 byte of a power of two 2^e, e in [−127, 127]. Throws trex::error for anything else.
uint8_t ue8m0_from_exponent(int e);
float fp4_e2m1_to_f32(uint8_t nibble);  // nibble & 0xF
uint8_t f32_to_fp4_e2m1(float x);       // round to nearest, ties to even code, saturate to ±6; NaN → 0

extern const float kFp4Table[16];  // the code table of spec §4.1

// Smallest e with amax / 2^e <= qmax, i.e. ceil(log2(amax / qmax)) computed exactly (amax floored at `floor`,
// result clamped to [−127, 127]).
int pow2_scale_exponent(float amax, float qmax, float floor);

constexpr float kFp8Max = 448.0f;
constexpr float kFp4Max = 6.0f;
constexpr float kFp8AmaxFloor = 1e-4f;
constexpr float kFp4AmaxFloor = 6.0f * 1.1754943508222875e-38f;  // 6·2^−126

// ---- FP8 128×128 block quantisation of a row-major [rows, cols] matrix.
struct fp8_blocks {
    int64_t rows = 0, cols = 0;
    static constexpr int64_t block = 128;
    int64_t scale_rows() const { return (rows + block - 1) / block; }
    int64_t scale_cols() const { return (cols + block - 1) / block; }
};
// codes: rows·cols bytes; scales: scale_rows·scale_cols UE8M0 bytes. Throws naming `name` on a non-finite value.
void quantize_fp8_block(const float* w, int64_t rows, int64_t cols, uint8_t* codes, uint8_t* scales,
                        const char* name = "");
// Dequantise with UE8M0 scales or with F32 scales (exactly one of scales_e8m0 / scales_f32 is non-null).
void dequantize_fp8_block(const uint8_t* codes, int64_t rows, int64_t cols, const uint8_t* scales_e8m0,
                          const float* scales_f32, float* out);

// ---- FP4 1×32 quantisation of a row-major [rows, cols] matrix, cols even.
constexpr int64_t kFp4Block = 32;
inline int64_t fp4_scale_cols(int64_t cols) {
    return (cols + kFp4Block - 1) / kFp4Block;
}
// packed: rows·cols/2 bytes (low nibble = even column); scales: rows·ceil(cols/32) UE8M0 bytes.
void quantize_fp4_1x32(const float* w, int64_t rows, int64_t cols, uint8_t* packed, uint8_t* scales,
                       const char* name = "");
void dequantize_fp4_1x32(const uint8_t* packed, int64_t rows, int64_t cols, const uint8_t* scales_e8m0,
                         const float* scales_f32, float* out);

// ---- BF16 (round to nearest even; the scalar helpers live in safetensors.hpp)
void f32_to_bf16_array(const float* x, int64_t n, uint16_t* out);
void bf16_to_f32_array(const uint8_t* bytes, int64_t n, float* out);  // unaligned little-endian input

}  // namespace trex
