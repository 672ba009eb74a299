// Measured compute peaks and memory bandwidth of this machine, the denominators of our MFU and decoding-bound
// figures.
#pragma once

#include <string>

#include "trex/kernels/precision.hpp"

namespace trex {

struct peak_measurement {
    double gflops = 0;  // best of the repetitions, all threads
    int threads = 0;
    std::string isa;  // "avx512f" or "avx2-fma" or "scalar"; "avx512_bf16" for the bf16 peak
};

// fp32 FMA throughput: every OpenMP thread runs independent chains of vector FMAs (widest ISA the CPU reports).
peak_measurement measure_fma_peak(double seconds = 0.3);
// bf16 dot-product throughput (vdpbf16ps: 64 FLOPs an instruction), the same register chains on every thread; the
// denominator of MFU under bf16 mixed precision. A trex::error without AVX512_BF16.
peak_measurement measure_bf16_peak(double seconds = 0.3);
// The MFU denominator of a matmul precision: measure_fma_peak (fp32) or measure_bf16_peak (bf16).
peak_measurement measure_peak(matmul_precision p, double seconds = 0.3);
// Its name in logs and reports: "fp32 FMA" or "bf16 dot-product".
const char* peak_name(matmul_precision p);
// oneDNN sgemm on a large square problem (a practical ceiling for the GEMM-bound parts).
peak_measurement measure_sgemm_peak(int n = 2048, int reps = 3);
// The same problem in the given matmul precision (bf16: oneDNN's bf16 matmul, the check of the bf16 peak).
peak_measurement measure_gemm_peak(matmul_precision precision, int n = 2048, int reps = 3);

// Memory read bandwidth (GB/s = 1e9 bytes/s): every OpenMP thread sums its share of an array far larger than the
// last-level cache (bytes = 0: 4× the cache, at least 512 MiB, at most 4 GiB); best of the repetitions. The rate at
// which decoding can stream weights and caches from DRAM.
struct bandwidth_measurement {
    double gbps = 0;
    int threads = 0;
    double bytes = 0;  // array size
};
bandwidth_measurement measure_read_bandwidth(double bytes = 0, int reps = 5);
// The last-level cache in bytes (sysconf; 0 when the system does not say).
double last_level_cache_bytes();

// The FMA peak (bf16: the bf16 peak, isa "avx512_bf16") is the denominator of every MFU: it must be at least what
// real GEMMs of its precision reach on the same machine. When
// `achieved_gflops` (sgemm, or the GEMMs of a profiled step) exceeds the peak by more than 5 %, the peak is measured
// again (up to three times: a busy neighbour during the first measurement can only have lowered it) and the highest
// kept in `peak`; still below, it is a trex::error naming both figures: the peak measurement is wrong (an earlier
// AVX-512 kernel read its accumulators from memory and measured a fraction of the machine), and no MFU computed from
// it may be printed.
void check_peak_against_gemm(peak_measurement& peak, double achieved_gflops, const char* what);
// An MFU above 100 % is a failed measurement, never a result: a one-line error naming the figures.
void check_mfu(double mfu, const char* what);

}  // namespace trex
