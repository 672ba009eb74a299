// The release's QAT simulation (docs/model.md §3.4, spec §4.3): block fake quantisation with UE8M0 scales and the
// normalised Walsh-Hadamard rotation. Bit arithmetic as the release's kernels do it (fast_round_scale: the exponent
// of the float product amax·(1/qmax), plus one unless it is a power of two), rounding by nearbyint on the format's
// grid (ties to even = ties to the even code). Rows run in parallel; a row's result does not depend on the others.
#include <algorithm>
#include <cmath>

#include "trex/base/float_bits.hpp"
#include "trex/kernels/cpu/ops.hpp"

namespace trex::cpu {

namespace {

// ceil(log2(p)) of a positive normal float, from its bits
inline int ceil_log2(float p) {
    const uint32_t u = bits_of(p);
    return (int)((u >> 23) & 0xFF) - 127 + ((u & 0x7FFFFF) != 0 ? 1 : 0);
}

inline float pow2(int e) {  // e in [−126, 127]
    return float_of((uint32_t)(e + 127) << 23);
}

// |q| ≤ 448 to the nearest E4M3 value: steps of 2^−9 below 2^−6 (subnormals), else 2^(E−3) in binade 2^E
inline float round_e4m3(float q) {
    const float a = std::fabs(q);
    const float step = a < 0.015625f ? 0.001953125f : pow2(((int)(bits_of(a) >> 23) & 0xFF) - 127 - 3);
    return std::nearbyint(q / step) * step;
}

// |q| ≤ 6 to the nearest E2M1 value: steps of 0.5 below 2, 1 in [2, 4), 2 in [4, 6]
inline float round_e2m1(float q) {
    const float a = std::fabs(q);
    const float step = a < 2.0f ? 0.5f : a < 4.0f ? 1.0f : 2.0f;
    return std::nearbyint(q / step) * step;
}

template <float (*round)(float)>
void fake_quant_rows(float* x, int64_t rows, int64_t ld, int64_t n, int64_t block, float qmax, float floor) {
    const float inv_qmax = 1.0f / qmax;
#pragma omp parallel for schedule(static) if (rows * n >= 4096)
    for (int64_t r = 0; r < rows; r++)
        for (int64_t b0 = 0; b0 < n; b0 += block) {
            float* v = x + r * ld + b0;
            float amax = 0.0f;
            for (int64_t j = 0; j < block; j++) amax = std::max(amax, std::fabs(v[j]));
            const int e = ceil_log2(std::max(amax, floor) * inv_qmax);
            const float s = pow2(e), inv_s = pow2(-e);  // x·2^−e is x/s exactly
            for (int64_t j = 0; j < block; j++) v[j] = round(std::clamp(v[j] * inv_s, -qmax, qmax)) * s;
        }
}

}  // namespace

void fake_quant_fp8(float* x, int64_t rows, int64_t ld, int64_t n, int64_t block) {
    fake_quant_rows<round_e4m3>(x, rows, ld, n, block, 448.0f, 1e-4f);
}

void fake_quant_fp4(float* x, int64_t rows, int64_t ld, int64_t n, int64_t block) {
    fake_quant_rows<round_e2m1>(x, rows, ld, n, block, 6.0f, 6.0f * pow2(-126));
}

// In-place butterflies (h = 1, 2, 4, …: (a, b) → (a + b, a − b)), then the scale 1/√n once.
void hadamard_rows(float* x, int64_t rows, int64_t n) {
    const float scale = (float)(1.0 / std::sqrt((double)n));
#pragma omp parallel for schedule(static) if (rows * n >= 4096)
    for (int64_t r = 0; r < rows; r++) {
        float* v = x + r * n;
        for (int64_t h = 1; h < n; h *= 2)
            for (int64_t i = 0; i < n; i += 2 * h)
#pragma omp simd
                for (int64_t j = i; j < i + h; j++) {
                    const float a = v[j], b = v[j + h];
                    v[j] = a + b;
                    v[j + h] = a - b;
                }
        for (int64_t i = 0; i < n; i++) v[i] *= scale;
    }
}

}  // namespace trex::cpu
