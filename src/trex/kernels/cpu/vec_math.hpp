// Elementwise math that GCC vectorises inside `#pragma omp simd` loops (a libm call would keep them scalar).
#pragma once

#include <algorithm>
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

// ---------------------------------------------------------------- dot products with independent accumulators
// A `#pragma omp simd reduction(+ : s)` dot product keeps ONE vector accumulator, so each FMA waits for the previous
// one (4 cycles on Zen 3): a 256-long dot costs 32 dependent FMAs ≈ 128 cycles instead of ~16. The helpers below
// keep several accumulators in flight (8-float vectors of the GCC/Clang vector extension; two SSE halves on a
// baseline x86-64 target). Their summation order is fixed, so results stay bitwise reproducible.
typedef float v8f __attribute__((vector_size(32)));

inline v8f load8(const float* p) {
    v8f v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline void store8(float* p, v8f v) {
    std::memcpy(p, &v, sizeof v);
}
inline float hsum8(v8f v) {
    return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
}

// a · b over n floats: four accumulators over blocks of 32, then 8-float blocks, then a scalar tail.
inline float dot_f(const float* a, const float* b, int64_t n) {
    v8f s0 = {}, s1 = {}, s2 = {}, s3 = {};
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 += load8(a + i) * load8(b + i);
        s1 += load8(a + i + 8) * load8(b + i + 8);
        s2 += load8(a + i + 16) * load8(b + i + 16);
        s3 += load8(a + i + 24) * load8(b + i + 24);
    }
    for (; i + 8 <= n; i += 8) s0 += load8(a + i) * load8(b + i);
    float s = hsum8((s0 + s1) + (s2 + s3));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

// out[j] = a · rows[j] for 8 rows (one accumulator per row, 8 FMAs per load of a); c % 8 == 0
inline void dots8(float* out, const float* a, const float* const* rows, int64_t c) {
    v8f acc0 = {}, acc1 = {}, acc2 = {}, acc3 = {}, acc4 = {}, acc5 = {}, acc6 = {}, acc7 = {};
    for (int64_t i = 0; i < c; i += 8) {
        const v8f x = load8(a + i);
        acc0 += x * load8(rows[0] + i);
        acc1 += x * load8(rows[1] + i);
        acc2 += x * load8(rows[2] + i);
        acc3 += x * load8(rows[3] + i);
        acc4 += x * load8(rows[4] + i);
        acc5 += x * load8(rows[5] + i);
        acc6 += x * load8(rows[6] + i);
        acc7 += x * load8(rows[7] + i);
    }
    out[0] = hsum8(acc0), out[1] = hsum8(acc1), out[2] = hsum8(acc2), out[3] = hsum8(acc3);
    out[4] = hsum8(acc4), out[5] = hsum8(acc5), out[6] = hsum8(acc6), out[7] = hsum8(acc7);
}

// out[j] = a · rows[j] for j < n: groups of 8 rows by dots8; a last group of 2..7 rows by dots8 on a padded list
// (the padding repeats the group's last row and its results are dropped); a single row, or c % 8 != 0, by dot_f.
inline void dots(float* out, const float* a, const float* const* rows, int64_t n, int64_t c) {
    int64_t j = 0;
    if (c % 8 == 0) {
        for (; j + 8 <= n; j += 8) dots8(out + j, a, rows + j, c);
        if (n - j >= 2) {
            const float* pad[8];
            float res[8];
            for (int k = 0; k < 8; k++) pad[k] = rows[std::min<int64_t>(j + k, n - 1)];
            dots8(res, a, pad, c);
            for (int64_t k = 0; j + k < n; k++) out[j + k] = res[k];
            j = n;
        }
    }
    for (; j < n; j++) out[j] = dot_f(a, rows[j], c);
}

}  // namespace trex::cpu
