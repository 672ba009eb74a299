// Reference QAT simulation of the release (docs/model.md §3.4, spec §4.3): block fake quantisation to FP8 E4M3 and
// FP4 E2M1 with power-of-two (UE8M0) scales, and the normalised Walsh-Hadamard rotation. Written the plain way: the
// rounding picks the nearest value of the format's value list (ties to the even code), the rotation is the matrix
// product with the Sylvester matrix; kernels/cpu/qat.cpp does the same with bit arithmetic and butterflies.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "trex/kernels/ref/ops.hpp"

namespace trex::ref {

namespace {

// The non-negative values of a format in code order (code c has value values[c]; even codes have mantissa bit 0).
std::vector<double> fp8_e4m3_values() {
    std::vector<double> v;
    for (int c = 0; c < 127; c++) {  // 0x7F is NaN
        const int e = c >> 3, m = c & 7;
        v.push_back(e == 0 ? std::ldexp((double)m, -9) : std::ldexp(1.0 + m / 8.0, e - 7));
    }
    return v;
}

std::vector<double> fp4_e2m1_values() {
    return {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};
}

// The nearest entry of `values` (ascending) to |x| ≤ values.back(), ties to the even code; sign kept.
double round_to(double x, const std::vector<double>& values) {
    const double a = std::fabs(x);
    size_t best = 0;
    for (size_t c = 1; c < values.size(); c++) {
        const double d = std::fabs(values[c] - a), db = std::fabs(values[best] - a);
        if (d < db || (d == db && c % 2 == 0)) best = c;
    }
    return std::copysign(values[best], x);
}

// The release's scale: 2^ceil(log2(p)), p = max(amax, floor)·(1/qmax) rounded to float (fast_round_scale: the
// exponent of the float product, plus one when its mantissa is not zero).
double release_scale(double amax, float qmax, float floor) {
    const float a = std::max((float)amax, floor);
    const float p = a * (1.0f / qmax);
    int e = 0;
    const double frac = std::frexp((double)p, &e);  // p = frac·2^e, frac in [0.5, 1)
    return frac == 0.5 ? std::ldexp(1.0, e - 1) : std::ldexp(1.0, e);
}

template <typename T>
void fake_quant(T* x, int64_t rows, int64_t ld, int64_t n, int64_t block, float qmax, float floor,
                const std::vector<double>& values) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t b0 = 0; b0 < n; b0 += block) {
            T* v = x + r * ld + b0;
            double amax = 0;
            for (int64_t j = 0; j < block; j++) amax = std::max(amax, std::fabs((double)v[j]));
            const double s = release_scale(amax, qmax, floor);
            for (int64_t j = 0; j < block; j++) {
                const double q = std::min(std::max((double)v[j] / s, -(double)qmax), (double)qmax);
                v[j] = (T)(round_to(q, values) * s);
            }
        }
}

}  // namespace

template <typename T>
void fake_quant_fp8(T* x, int64_t rows, int64_t ld, int64_t n, int64_t block) {
    static const std::vector<double> values = fp8_e4m3_values();
    fake_quant(x, rows, ld, n, block, 448.0f, 1e-4f, values);
}

template <typename T>
void fake_quant_fp4(T* x, int64_t rows, int64_t ld, int64_t n, int64_t block) {
    static const std::vector<double> values = fp4_e2m1_values();
    fake_quant(x, rows, ld, n, block, 6.0f, 6.0f * std::ldexp(1.0f, -126), values);
}

template <typename T>
void hadamard_rows(T* x, int64_t rows, int64_t n) {
    std::vector<double> y(n);
    const double scale = 1.0 / std::sqrt((double)n);
    for (int64_t r = 0; r < rows; r++) {
        T* v = x + r * n;
        for (int64_t i = 0; i < n; i++) {
            double acc = 0;
            for (int64_t j = 0; j < n; j++) acc += (__builtin_popcountll((uint64_t)(i & j)) % 2 ? -1.0 : 1.0) * v[j];
            y[i] = acc * scale;
        }
        for (int64_t i = 0; i < n; i++) v[i] = (T)y[i];
    }
}

#define TREX_QAT_INSTANTIATE(T)                                              \
    template void fake_quant_fp8<T>(T*, int64_t, int64_t, int64_t, int64_t); \
    template void fake_quant_fp4<T>(T*, int64_t, int64_t, int64_t, int64_t); \
    template void hadamard_rows<T>(T*, int64_t, int64_t);
TREX_QAT_INSTANTIATE(float)
TREX_QAT_INSTANTIATE(double)

}  // namespace trex::ref
