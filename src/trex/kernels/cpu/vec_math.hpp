// Elementwise math that GCC vectorises inside `#pragma omp simd` loops (a libm call would keep them scalar).
#pragma once

#include <cstdint>
#include <cstring>

namespace trex::cpu {

// e^x for float: Cephes' range reduction x = n·ln2 + r (ln2 split in two) and degree-6 polynomial, then 2^n through
// the exponent bits. Relative error < 2e-7 on [−87.3, 88.7]; inputs are clamped to that range, so very negative
// inputs give ~1e-38 instead of 0 and large ones a finite ~1.7e38 (softmax inputs here are always max-shifted).
inline float exp_fast(float x) {
    // two independent selects (a nested conditional would be turned into branches and block vectorisation)
    x = x < -87.3365f ? -87.3365f : x;
    x = x > 88.7228f ? 88.7228f : x;
    // n = round(x·log2 e) by the 1.5·2^23 trick (exact for |·| < 2^22; ties go to even): unlike floorf it is two
    // adds on every x86-64 target, so the loops vectorise without SSE4.1's roundps too. (Not folded away: the build
    // has no -ffast-math / -fassociative-math.)
    constexpr float round_magic = 12582912.0f;  // 1.5·2^23
    const float n = (x * 1.44269504088896341f + round_magic) - round_magic;
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

// std::max / std::min on values, for loops meant to vectorise: the std versions return references, and GCC then
// gives up on the loop ("data ref analysis failed", "control flow in loop"); these become vmaxps/vminps. Same
// results as std::max/std::min, NaN included (the first argument is returned when the two are unordered).
inline float max_v(float a, float b) {
    return a < b ? b : a;
}
inline float min_v(float a, float b) {
    return b < a ? b : a;
}

inline float sigmoid_fast(float x) {
    return 1.0f / (1.0f + exp_fast(-x));
}

}  // namespace trex::cpu
