#include "trex/train/peak.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <vector>

#include "trex/base/timer.hpp"
#include "trex/kernels/cpu/gemm.hpp"

namespace trex {

namespace {

// Independent accumulator chains: more than FMA latency × FMA ports on current x86 cores, and few enough to stay
// in registers with the two constants (AVX2 has 16 ymm registers, AVX-512 32 zmm).
constexpr int chains_avx512 = 24;
constexpr int chains_avx2 = 12;

__attribute__((target("avx512f"))) float fma_chains_avx512(int64_t iters) {
    constexpr int chains = chains_avx512;
    __m512 acc[chains];
    for (int k = 0; k < chains; k++) acc[k] = _mm512_set1_ps(1.0f + 0.001f * k);
    const __m512 mul = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(1e-6f);
    for (int64_t i = 0; i < iters; i++)
        for (int k = 0; k < chains; k++) acc[k] = _mm512_fmadd_ps(acc[k], mul, add);
    __m512 s = acc[0];
    for (int k = 1; k < chains; k++) s = _mm512_add_ps(s, acc[k]);
    alignas(64) float lanes[16];  // (not _mm512_reduce_add_ps: GCC 12's header warns inside it)
    _mm512_store_ps(lanes, s);
    float total = 0.0f;
    for (float v : lanes) total += v;
    return total;
}

__attribute__((target("avx2,fma"))) float fma_chains_avx2(int64_t iters) {
    constexpr int chains = chains_avx2;
    __m256 acc[chains];
    for (int k = 0; k < chains; k++) acc[k] = _mm256_set1_ps(1.0f + 0.001f * k);
    const __m256 mul = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(1e-6f);
    for (int64_t i = 0; i < iters; i++)
        for (int k = 0; k < chains; k++) acc[k] = _mm256_fmadd_ps(acc[k], mul, add);
    __m256 s = acc[0];
    for (int k = 1; k < chains; k++) s = _mm256_add_ps(s, acc[k]);
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}

}  // namespace

peak_measurement measure_fma_peak(double seconds) {
    peak_measurement pm;
    int lanes = 1, chains = 0;
    float (*kernel)(int64_t) = nullptr;
    if (__builtin_cpu_supports("avx512f")) {
        kernel = fma_chains_avx512;
        lanes = 16;
        chains = chains_avx512;
        pm.isa = "avx512f";
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        kernel = fma_chains_avx2;
        lanes = 8;
        chains = chains_avx2;
        pm.isa = "avx2-fma";
    }
    pm.threads = omp_get_max_threads();
    if (!kernel) {
        pm.isa = "scalar";
        return pm;
    }
    // calibrate the iteration count on one thread, then run on all threads at once
    int64_t iters = 1 << 16;
    volatile float sink = 0;
    for (;;) {
        double t0 = now_seconds();
        sink = sink + kernel(iters);
        if (now_seconds() - t0 > seconds / 4 || iters > (1ll << 32)) break;
        iters *= 2;
    }
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now_seconds();
#pragma omp parallel
        {
            float r = kernel(iters);
            if (r == 12345.0f) sink = sink + r;
        }
        const double dt = now_seconds() - t0;
        const double flops = 2.0 * lanes * chains * (double)iters * pm.threads;
        best = std::max(best, flops / dt / 1e9);
    }
    pm.gflops = best;
    return pm;
}

peak_measurement measure_sgemm_peak(int n, int reps) {
    peak_measurement pm;
    pm.threads = omp_get_max_threads();
    pm.isa = "onednn-sgemm";
    std::vector<float> A((size_t)n * n, 0.5f), B((size_t)n * n, 0.25f), C((size_t)n * n);
    cpu::gemm(false, false, n, n, n, 1.0f, A.data(), n, B.data(), n, 0.0f, C.data(), n);  // warm-up
    double best = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now_seconds();
        cpu::gemm(false, false, n, n, n, 1.0f, A.data(), n, B.data(), n, 0.0f, C.data(), n);
        best = std::max(best, 2.0 * n * n * (double)n / (now_seconds() - t0) / 1e9);
    }
    pm.gflops = best;
    return pm;
}

}  // namespace trex
