#include "trex/io/codecs.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "trex/base/error.hpp"
#include "trex/base/float_bits.hpp"
#include "trex/io/safetensors.hpp"

namespace trex {

const float kFp4Table[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                             -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

namespace {

std::array<float, 256> make_fp8_table() {
    std::array<float, 256> t{};
    for (int c = 0; c < 256; c++) {
        const int e = (c >> 3) & 0xF, m = c & 7;
        float v;
        if (e == 15 && m == 7)
            v = std::numeric_limits<float>::quiet_NaN();
        else if (e == 0)
            v = std::ldexp((float)m, -9);  // subnormal: m/8 · 2^−6
        else
            v = std::ldexp(1.0f + (float)m / 8.0f, e - 7);
        t[c] = (c & 0x80) ? -v : v;
    }
    return t;
}

std::array<float, 256> make_ue8m0_table() {
    std::array<float, 256> t{};
    for (int c = 0; c < 255; c++) t[c] = std::ldexp(1.0f, c - 127);
    t[255] = std::numeric_limits<float>::quiet_NaN();
    return t;
}

const std::array<float, 256> fp8_table = make_fp8_table();
const std::array<float, 256> ue8m0_table = make_ue8m0_table();

// Below this many elements a tensor is converted on one thread (a parallel region costs more than it saves,
// especially on a loaded machine).
constexpr int64_t kParallelMin = 1 << 18;

// 2^e as a float (e in [−149, 127]).
inline float pow2f(int e) {
    return std::ldexp(1.0f, e);
}

}  // namespace

float fp8_e4m3_to_f32(uint8_t code) {
    return fp8_table[code];
}

uint8_t f32_to_fp8_e4m3(float x) {
    const uint32_t u = bits_of(x);
    const uint8_t sign = (uint8_t)((u >> 24) & 0x80u);
    const uint32_t ua = u & 0x7fffffffu;
    if (ua > 0x7f800000u) return sign | 0x7F;                   // NaN
    if (ua >= 0x43e00000u) return sign | 0x7E;                  // |x| >= 448 (and inf): saturate
    if (ua < 0x3c800000u) {                                     // |x| < 2^−6: subnormal range, code = rint(|x|·2^9)
        const float q = std::nearbyint(float_of(ua) * 512.0f);  // exact scaling; ties to even
        return sign | (uint8_t)q;                               // q = 8 is the smallest normal 0x08
    }
    // normal: keep 3 mantissa bits with round-to-nearest-even, rebias the exponent 127 → 7
    const uint32_t r = (ua + 0x7ffffu + ((ua >> 20) & 1u)) >> 20;
    uint32_t code = r - (120u << 3);
    if (code > 0x7Eu) code = 0x7Eu;
    return sign | (uint8_t)code;
}

float ue8m0_to_f32(uint8_t code) {
    return ue8m0_table[code];
}

uint8_t ue8m0_from_exponent(int e) {
    TREX_CHECK(e >= -127 && e <= 127, "UE8M0 scale exponent {} is outside [-127, 127]", e);
    return (uint8_t)(e + 127);
}

float fp4_e2m1_to_f32(uint8_t nibble) {
    return kFp4Table[nibble & 0xF];
}

uint8_t f32_to_fp4_e2m1(float x) {
    if (std::isnan(x)) return 0;
    const uint8_t sign = std::signbit(x) ? 8 : 0;
    const float a = std::fabs(x);
    // the number of code midpoints below |x|; at a midpoint the comparison picks the even code
    // (0.25 → 0, 0.75 → 2, 1.25 → 2, 1.75 → 4, 2.5 → 4, 3.5 → 6, 5 → 6)
    const uint8_t c =
        (uint8_t)((a > 0.25f) + (a >= 0.75f) + (a > 1.25f) + (a >= 1.75f) + (a > 2.5f) + (a >= 3.5f) + (a > 5.0f));
    return sign | c;
}

int pow2_scale_exponent(float amax, float qmax, float floor) {
    const double a = std::max((double)amax, (double)floor);
    int ex = 0;
    const double m = std::frexp(a / (double)qmax, &ex);  // a/qmax = m·2^ex, m in [0.5, 1)
    int e = m == 0.5 ? ex - 1 : ex;                      // ceil(log2(a/qmax)), up to the rounding of a/qmax
    // make it exact: the smallest e with a <= qmax·2^e (ldexp of a double is exact here)
    while (a > std::ldexp((double)qmax, e)) e++;
    while (a <= std::ldexp((double)qmax, e - 1)) e--;
    return std::clamp(e, -127, 127);
}

void quantize_fp8_block(const float* w, int64_t rows, int64_t cols, uint8_t* codes, uint8_t* scales, const char* name) {
    const fp8_blocks g{rows, cols};
    const int64_t B = fp8_blocks::block, sr = g.scale_rows(), sc = g.scale_cols();
#pragma omp parallel for schedule(dynamic, 1) if (rows * cols >= kParallelMin)
    for (int64_t bi = 0; bi < sr; bi++) {
        const int64_t r0 = bi * B, r1 = std::min(rows, r0 + B);
        for (int64_t bj = 0; bj < sc; bj++) {
            const int64_t c0 = bj * B, c1 = std::min(cols, c0 + B);
            float amax = 0.0f;
            bool finite = true;
            for (int64_t r = r0; r < r1; r++)
                for (int64_t c = c0; c < c1; c++) {
                    const float v = w[r * cols + c];
                    finite &= std::isfinite(v);
                    amax = std::max(amax, std::fabs(v));
                }
            if (!finite) {
                // report outside the parallel region would need a flag; a message naming the block suffices
                scales[bi * sc + bj] = 0xFF;
                continue;
            }
            const int e = pow2_scale_exponent(amax, kFp8Max, kFp8AmaxFloor);
            scales[bi * sc + bj] = (uint8_t)(e + 127);
            const float inv = pow2f(-e);
            for (int64_t r = r0; r < r1; r++)
                for (int64_t c = c0; c < c1; c++) codes[r * cols + c] = f32_to_fp8_e4m3(w[r * cols + c] * inv);
        }
    }
    for (int64_t k = 0; k < sr * sc; k++)
        TREX_CHECK(scales[k] != 0xFF, "tensor '{}': non-finite value in 128x128 block ({}, {}); cannot quantise to FP8",
                   name, k / sc, k % sc);
}

void dequantize_fp8_block(const uint8_t* codes, int64_t rows, int64_t cols, const uint8_t* scales_e8m0,
                          const float* scales_f32, float* out) {
    const fp8_blocks g{rows, cols};
    const int64_t B = fp8_blocks::block, sc = g.scale_cols();
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelMin)
    for (int64_t r = 0; r < rows; r++) {
        const int64_t bi = r / B;
        for (int64_t bj = 0; bj < sc; bj++) {
            const float s = scales_e8m0 ? ue8m0_table[scales_e8m0[bi * sc + bj]] : scales_f32[bi * sc + bj];
            const int64_t c0 = bj * B, c1 = std::min(cols, c0 + B);
            const uint8_t* q = codes + r * cols;
            float* o = out + r * cols;
            for (int64_t c = c0; c < c1; c++) o[c] = fp8_table[q[c]] * s;
        }
    }
}

void quantize_fp4_1x32(const float* w, int64_t rows, int64_t cols, uint8_t* packed, uint8_t* scales, const char* name) {
    TREX_CHECK(cols % 2 == 0, "tensor '{}': FP4 packing needs an even number of columns (got {})", name, cols);
    const int64_t sc = fp4_scale_cols(cols);
    bool finite = true;
#pragma omp parallel for schedule(static) reduction(&& : finite) if (rows * cols >= kParallelMin)
    for (int64_t r = 0; r < rows; r++) {
        const float* x = w + r * cols;
        uint8_t* p = packed + r * (cols / 2);
        for (int64_t bj = 0; bj < sc; bj++) {
            const int64_t c0 = bj * kFp4Block, c1 = std::min(cols, c0 + kFp4Block);
            float amax = 0.0f;
            for (int64_t c = c0; c < c1; c++) {
                finite &= std::isfinite(x[c]);
                amax = std::max(amax, std::fabs(x[c]));
            }
            const int e = pow2_scale_exponent(amax, kFp4Max, kFp4AmaxFloor);
            scales[r * sc + bj] = (uint8_t)(e + 127);
            const float inv = pow2f(-e);
            for (int64_t c = c0; c < c1; c += 2) {
                const uint8_t lo = f32_to_fp4_e2m1(x[c] * inv), hi = f32_to_fp4_e2m1(x[c + 1] * inv);
                p[c / 2] = (uint8_t)(lo | (hi << 4));
            }
        }
    }
    TREX_CHECK(finite, "tensor '{}': non-finite value; cannot quantise to FP4", name);
}

void dequantize_fp4_1x32(const uint8_t* packed, int64_t rows, int64_t cols, const uint8_t* scales_e8m0,
                         const float* scales_f32, float* out) {
    const int64_t sc = fp4_scale_cols(cols);
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelMin)
    for (int64_t r = 0; r < rows; r++) {
        const uint8_t* p = packed + r * (cols / 2);
        float* o = out + r * cols;
        for (int64_t bj = 0; bj < sc; bj++) {
            const float s = scales_e8m0 ? ue8m0_table[scales_e8m0[r * sc + bj]] : scales_f32[r * sc + bj];
            const int64_t c0 = bj * kFp4Block, c1 = std::min(cols, c0 + kFp4Block);
            for (int64_t c = c0; c < c1; c += 2) {
                const uint8_t b = p[c / 2];
                o[c] = kFp4Table[b & 0xF] * s;
                o[c + 1] = kFp4Table[b >> 4] * s;
            }
        }
    }
}

void f32_to_bf16_array(const float* x, int64_t n, uint16_t* out) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; i++) out[i] = f32_to_bf16(x[i]);
}

void bf16_to_f32_array(const uint8_t* bytes, int64_t n, float* out) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; i++) {
        uint16_t b;
        std::memcpy(&b, bytes + 2 * i, 2);
        out[i] = bf16_to_f32(b);
    }
}

}  // namespace trex
