// Measured compute peaks of this machine, the denominators of our MFU figures.
#pragma once

#include <string>

namespace trex {

struct peak_measurement {
    double gflops = 0;  // best of the repetitions, all threads
    int threads = 0;
    std::string isa;  // "avx512f" or "avx2-fma" or "scalar"
};

// fp32 FMA throughput: every OpenMP thread runs independent chains of vector FMAs (widest ISA the CPU reports).
peak_measurement measure_fma_peak(double seconds = 0.3);
// oneDNN sgemm on a large square problem (a practical ceiling for the GEMM-bound parts).
peak_measurement measure_sgemm_peak(int n = 2048, int reps = 3);

}  // namespace trex
