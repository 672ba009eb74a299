// Reference rotary embedding (docs/model.md §3.2): interleaved pairs on the last r dims of each vector.
#include <algorithm>
#include <cmath>

#include "trex/kernels/ref/ops.hpp"

namespace trex::ref {

// θ_i = base^(−2i/r), i < r/2; with YaRN: θ'_i = θ_i/factor·ramp_i + θ_i·(1−ramp_i),
// ramp_i = clamp((i−low)/(high−low), 0, 1),
// low  = max(floor(r·ln(L0/(β_fast·2π))/(2 ln base)), 0), high = min(ceil(r·ln(L0/(β_slow·2π))/(2 ln base)), r−1),
// high += 0.001 when high == low.
void rope_inv_freq(double* theta, int r, double base, bool yarn, double factor, int64_t original_len, double beta_fast,
                   double beta_slow) {
    const double two_pi = 2.0 * M_PI;
    for (int i = 0; i < r / 2; i++) theta[i] = std::pow(base, -2.0 * i / (double)r);
    if (!yarn) return;
    double L0 = (double)original_len;
    double low = std::floor(r * std::log(L0 / (beta_fast * two_pi)) / (2.0 * std::log(base)));
    double high = std::ceil(r * std::log(L0 / (beta_slow * two_pi)) / (2.0 * std::log(base)));
    low = std::max(low, 0.0);
    high = std::min(high, (double)(r - 1));
    if (high == low) high += 0.001;
    for (int i = 0; i < r / 2; i++) {
        double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);
        theta[i] = theta[i] / factor * ramp + theta[i] * (1.0 - ramp);
    }
}

// x [N,nvec,c] in place; pair i of vector v of token n is (x[c−r+2i], x[c−r+2i+1]), r = 2·half, angle pos[n]·θ_i
// from the table. Forward: (a,b) → (a cos − b sin, a sin + b cos); inverse: rotation by −angle.
template <typename T>
void rope_forward(T* x, const int32_t* pos, rope_table_t<T> table, int64_t N, int64_t nvec, int64_t c, bool inverse) {
    const int half = table.half;
    const int64_t off = c - 2 * half;
    for (int64_t n = 0; n < N; n++) {
        const T* cs = table.cos + (int64_t)pos[n] * half;
        const T* sn = table.sin + (int64_t)pos[n] * half;
        for (int64_t v = 0; v < nvec; v++) {
            T* xv = x + (n * nvec + v) * c + off;
            for (int i = 0; i < half; i++) {
                double a = xv[2 * i], b = xv[2 * i + 1];
                double co = cs[i], si = inverse ? -(double)sn[i] : (double)sn[i];
                xv[2 * i] = (T)(a * co - b * si);
                xv[2 * i + 1] = (T)(a * si + b * co);
            }
        }
    }
}

template void rope_forward<float>(float*, const int32_t*, rope_table_t<float>, int64_t, int64_t, int64_t, bool);
template void rope_forward<double>(double*, const int32_t*, rope_table_t<double>, int64_t, int64_t, int64_t, bool);

}  // namespace trex::ref
