// Partial interleaved RoPE on the last 2·half dims of each vector, in place.
#include "trex/kernels/cpu/ops.hpp"

namespace trex::cpu {

// x [N, nvec, c]; pair i of vector v of token n is (x[c−r+2i], x[c−r+2i+1]) rotated by ±pos[n]·θ_i.
void rope_forward(float* x, const int32_t* pos, rope_table_t<float> table, int64_t N, int64_t nvec, int64_t c,
                  bool inverse) {
    const int half = table.half;
    const int64_t off = c - 2 * half;
    const float sgn = inverse ? -1.0f : 1.0f;
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < N; n++) {
        const float* cs = table.cos + (int64_t)pos[n] * half;
        const float* sn = table.sin + (int64_t)pos[n] * half;
        for (int64_t v = 0; v < nvec; v++) {
            float* p = x + (n * nvec + v) * c + off;
#pragma omp simd
            for (int i = 0; i < half; i++) {
                float a = p[2 * i], b = p[2 * i + 1];
                float cc = cs[i], ss = sgn * sn[i];
                p[2 * i] = a * cc - b * ss;
                p[2 * i + 1] = a * ss + b * cc;
            }
        }
    }
}

}  // namespace trex::cpu
