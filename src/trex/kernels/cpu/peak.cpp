#include "trex/kernels/cpu/peak.hpp"

#include <immintrin.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "trex/base/error.hpp"
#include "trex/base/timer.hpp"
#include "trex/kernels/cpu/gemm.hpp"
#include "trex/kernels/precision.hpp"

namespace trex {

namespace {

// Twelve independent accumulator chains, each a named variable so that the compiler keeps it in a register: an array
// of accumulators was left on the stack by GCC 12 (the loop became `vfmadd132ps mem, ...`, bound by store-to-load
// forwarding) and measured ~200 instead of ~683 GFLOP/s on two Zen 5 threads, which made every MFU ~3x too high.
// Twelve chains cover FMA latency x FMA ports (4 x 2) on current x86 cores; with the two constants they use 14 of the
// 16 ymm (AVX2) or 32 zmm (AVX-512) registers.
constexpr int chains = 12;

__attribute__((target("avx512f"))) float fma_chains_avx512(int64_t iters) {
    const __m512 mul = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(1e-6f);
    __m512 a0 = _mm512_set1_ps(1.000f), a1 = _mm512_set1_ps(1.001f), a2 = _mm512_set1_ps(1.002f);
    __m512 a3 = _mm512_set1_ps(1.003f), a4 = _mm512_set1_ps(1.004f), a5 = _mm512_set1_ps(1.005f);
    __m512 a6 = _mm512_set1_ps(1.006f), a7 = _mm512_set1_ps(1.007f), a8 = _mm512_set1_ps(1.008f);
    __m512 a9 = _mm512_set1_ps(1.009f), a10 = _mm512_set1_ps(1.010f), a11 = _mm512_set1_ps(1.011f);
    for (int64_t i = 0; i < iters; i++) {
        a0 = _mm512_fmadd_ps(a0, mul, add), a1 = _mm512_fmadd_ps(a1, mul, add), a2 = _mm512_fmadd_ps(a2, mul, add);
        a3 = _mm512_fmadd_ps(a3, mul, add), a4 = _mm512_fmadd_ps(a4, mul, add), a5 = _mm512_fmadd_ps(a5, mul, add);
        a6 = _mm512_fmadd_ps(a6, mul, add), a7 = _mm512_fmadd_ps(a7, mul, add), a8 = _mm512_fmadd_ps(a8, mul, add);
        a9 = _mm512_fmadd_ps(a9, mul, add), a10 = _mm512_fmadd_ps(a10, mul, add), a11 = _mm512_fmadd_ps(a11, mul, add);
    }
    const __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                                   _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)),
                                                 _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11))));
    alignas(64) float lanes[16];  // (not _mm512_reduce_add_ps: GCC 12's header warns inside it)
    _mm512_store_ps(lanes, s);
    float total = 0.0f;
    for (float v : lanes) total += v;
    return total;
}

__attribute__((target("avx2,fma"))) float fma_chains_avx2(int64_t iters) {
    const __m256 mul = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(1e-6f);
    __m256 a0 = _mm256_set1_ps(1.000f), a1 = _mm256_set1_ps(1.001f), a2 = _mm256_set1_ps(1.002f);
    __m256 a3 = _mm256_set1_ps(1.003f), a4 = _mm256_set1_ps(1.004f), a5 = _mm256_set1_ps(1.005f);
    __m256 a6 = _mm256_set1_ps(1.006f), a7 = _mm256_set1_ps(1.007f), a8 = _mm256_set1_ps(1.008f);
    __m256 a9 = _mm256_set1_ps(1.009f), a10 = _mm256_set1_ps(1.010f), a11 = _mm256_set1_ps(1.011f);
    for (int64_t i = 0; i < iters; i++) {
        a0 = _mm256_fmadd_ps(a0, mul, add), a1 = _mm256_fmadd_ps(a1, mul, add), a2 = _mm256_fmadd_ps(a2, mul, add);
        a3 = _mm256_fmadd_ps(a3, mul, add), a4 = _mm256_fmadd_ps(a4, mul, add), a5 = _mm256_fmadd_ps(a5, mul, add);
        a6 = _mm256_fmadd_ps(a6, mul, add), a7 = _mm256_fmadd_ps(a7, mul, add), a8 = _mm256_fmadd_ps(a8, mul, add);
        a9 = _mm256_fmadd_ps(a9, mul, add), a10 = _mm256_fmadd_ps(a10, mul, add), a11 = _mm256_fmadd_ps(a11, mul, add);
    }
    const __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                                   _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)),
                                                 _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11))));
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}

// bf16 dot-product throughput: the same twelve register chains of vdpbf16ps, each instruction 16 lanes x 2 products
// x 2 FLOPs = 64 FLOPs (the fp32 FMA's 32).
__attribute__((target("avx512f,avx512bf16"))) float bf16_chains_avx512(int64_t iters) {
    const __m512bh x = (__m512bh)_mm512_set1_epi16((short)0x3F80), y = (__m512bh)_mm512_set1_epi16((short)0x3380);
    __m512 a0 = _mm512_set1_ps(1.000f), a1 = _mm512_set1_ps(1.001f), a2 = _mm512_set1_ps(1.002f);
    __m512 a3 = _mm512_set1_ps(1.003f), a4 = _mm512_set1_ps(1.004f), a5 = _mm512_set1_ps(1.005f);
    __m512 a6 = _mm512_set1_ps(1.006f), a7 = _mm512_set1_ps(1.007f), a8 = _mm512_set1_ps(1.008f);
    __m512 a9 = _mm512_set1_ps(1.009f), a10 = _mm512_set1_ps(1.010f), a11 = _mm512_set1_ps(1.011f);
    for (int64_t i = 0; i < iters; i++) {
        a0 = _mm512_dpbf16_ps(a0, x, y), a1 = _mm512_dpbf16_ps(a1, x, y), a2 = _mm512_dpbf16_ps(a2, x, y);
        a3 = _mm512_dpbf16_ps(a3, x, y), a4 = _mm512_dpbf16_ps(a4, x, y), a5 = _mm512_dpbf16_ps(a5, x, y);
        a6 = _mm512_dpbf16_ps(a6, x, y), a7 = _mm512_dpbf16_ps(a7, x, y), a8 = _mm512_dpbf16_ps(a8, x, y);
        a9 = _mm512_dpbf16_ps(a9, x, y), a10 = _mm512_dpbf16_ps(a10, x, y), a11 = _mm512_dpbf16_ps(a11, x, y);
    }
    const __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                                   _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)),
                                                 _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11))));
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, s);
    float total = 0.0f;
    for (float v : lanes) total += v;
    return total;
}

// Best GFLOP/s of `kernel` (flops_per_iter FLOPs per iteration on one thread) run by every OpenMP thread at once,
// its iteration count calibrated on one thread to take about seconds/4.
double chains_gflops(float (*kernel)(int64_t), double flops_per_iter, double seconds) {
    int64_t iters = 1 << 16;
    volatile float sink = 0;
    for (;;) {
        double t0 = now_seconds();
        sink = sink + kernel(iters);
        if (now_seconds() - t0 > seconds / 4 || iters > (1ll << 32)) break;
        iters *= 2;
    }
    const int threads = omp_get_max_threads();
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now_seconds();
#pragma omp parallel
        {
            float r = kernel(iters);
            if (r == 12345.0f) sink = sink + r;
        }
        const double dt = now_seconds() - t0;
        best = std::max(best, flops_per_iter * (double)iters * threads / dt / 1e9);
    }
    return best;
}

}  // namespace

bandwidth_measurement measure_read_bandwidth(double bytes, int reps) {
    bandwidth_measurement bm;
    if (bytes <= 0) bytes = std::clamp(4 * last_level_cache_bytes(), 512.0 * (1 << 20), 4096.0 * (1 << 20));
    const int64_t n = (int64_t)(bytes / sizeof(float));
    std::vector<float> a((size_t)n);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) a[(size_t)i] = (float)(i & 7);  // first touch by the thread that reads it
    bm.threads = omp_get_max_threads();
    bm.bytes = (double)n * sizeof(float);
    volatile float sink = 0;
    constexpr int64_t kLanes = 64;  // independent partial sums: the loop waits on memory, not on one add chain
    for (int rep = 0; rep < reps; rep++) {
        const double t0 = now_seconds();
        float total = 0;
#pragma omp parallel reduction(+ : total)
        {
            float acc[kLanes] = {};
#pragma omp for schedule(static)
            for (int64_t b = 0; b < n / kLanes; b++) {
                const float* p = a.data() + b * kLanes;
#pragma omp simd
                for (int64_t j = 0; j < kLanes; j++) acc[j] += p[j];
            }
            for (float x : acc) total += x;
        }
        const double dt = now_seconds() - t0;
        sink = sink + total;
        bm.gbps = std::max(bm.gbps, (double)(n / kLanes * kLanes) * sizeof(float) / dt / 1e9);
    }
    return bm;
}

double last_level_cache_bytes() {
    for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
        const long v = sysconf(name);
        if (v > 0) return (double)v;
    }
    return 0;
}

peak_measurement measure_fma_peak(double seconds) {
    peak_measurement pm;
    int lanes = 1;
    float (*kernel)(int64_t) = nullptr;
    if (__builtin_cpu_supports("avx512f")) {
        kernel = fma_chains_avx512;
        lanes = 16;
        pm.isa = "avx512f";
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        kernel = fma_chains_avx2;
        lanes = 8;
        pm.isa = "avx2-fma";
    }
    pm.threads = omp_get_max_threads();
    if (!kernel) {
        pm.isa = "scalar";
        return pm;
    }
    pm.gflops = chains_gflops(kernel, 2.0 * lanes * chains, seconds);
    return pm;
}

peak_measurement measure_bf16_peak(double seconds) {
    require_bf16("the bf16 peak");
    peak_measurement pm;
    pm.threads = omp_get_max_threads();
    pm.isa = "avx512_bf16";
    pm.gflops = chains_gflops(bf16_chains_avx512, 64.0 * chains, seconds);
    return pm;
}

peak_measurement measure_peak(matmul_precision p, double seconds) {
    return p == matmul_precision::bf16 ? measure_bf16_peak(seconds) : measure_fma_peak(seconds);
}

const char* peak_name(matmul_precision p) {
    return p == matmul_precision::bf16 ? "bf16 dot-product" : "fp32 FMA";
}

peak_measurement measure_gemm_peak(matmul_precision precision, int n, int reps) {
    const scoped_matmul_precision scope(precision);
    peak_measurement pm;
    pm.threads = omp_get_max_threads();
    pm.isa = precision == matmul_precision::bf16 ? "onednn-bf16-matmul" : "onednn-sgemm";
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

peak_measurement measure_sgemm_peak(int n, int reps) {
    return measure_gemm_peak(matmul_precision::fp32, n, reps);
}

void check_peak_against_gemm(peak_measurement& peak, double achieved_gflops, const char* what) {
    const matmul_precision precision = peak.isa == "avx512_bf16" ? matmul_precision::bf16 : matmul_precision::fp32;
    for (int again = 0; again < 3 && achieved_gflops > 1.05 * peak.gflops; again++)
        peak.gflops = std::max(peak.gflops, measure_peak(precision, 0.2).gflops);
    TREX_CHECK(achieved_gflops <= 1.05 * peak.gflops,
               "the measured {} peak ({:.1f} GFLOP/s, {}, {} threads) is below what {} reached ({:.1f} "
               "GFLOP/s): the peak measurement is wrong, so no MFU can be computed from it",
               peak_name(precision), peak.gflops, peak.isa, peak.threads, what, achieved_gflops);
}

void check_mfu(double mfu, const char* what) {
    TREX_CHECK(std::isfinite(mfu) && mfu <= 1.0,
               "{}: MFU {:.1f}% is above 100%: the peak or the time measurement is wrong (the machine was busy while "
               "the peak was measured?); not a result",
               what, 100.0 * mfu);
}

}  // namespace trex
