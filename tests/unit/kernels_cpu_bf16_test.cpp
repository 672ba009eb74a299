// The bf16 matmul precision (kernels/precision.hpp): the rounding against the hardware's conversion, the CPU GEMM and
// Linear entries under bf16 against the reference table's (the same products of rounded operands, summed in double),
// the bf16 peak against oneDNN's bf16 matmul rate, and the refusal on a CPU without AVX512_BF16.
#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "support/test_support.hpp"
#include "trex/kernels/cpu/gemm.hpp"
#include "trex/kernels/cpu/gemm_bf16.hpp"
#include "trex/kernels/cpu/peak.hpp"
#include "trex/kernels/kernel_table.hpp"
#include "trex/kernels/precision.hpp"

using namespace trex;
using std::vector;

namespace {

#define SKIP_WITHOUT_BF16() \
    if (!cpu_has_bf16()) GTEST_SKIP() << "this CPU has no AVX512_BF16"

uint32_t bits(float x) {
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}

float from_bits(uint32_t u) {
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}

vector<float> random_vector(int64_t n, uint64_t seed, float scale = 1.0f) {
    std::mt19937_64 g(seed);
    std::normal_distribution<float> d(0.0f, scale);
    vector<float> v((size_t)n);
    for (auto& x : v) x = d(g);
    return v;
}

// max |a − b| / max |b|
double rel_max_diff(const vector<float>& a, const vector<float>& b) {
    double diff = 0, ref = 0;
    for (size_t i = 0; i < a.size(); i++) {
        diff = std::max(diff, (double)std::fabs(a[i] - b[i]));
        ref = std::max(ref, (double)std::fabs(b[i]));
    }
    return diff / std::max(ref, 1e-30);
}

TEST(RoundToBf16, KnownValues) {
    EXPECT_EQ(bits(round_to_bf16(1.0f)), 0x3F800000u);
    EXPECT_EQ(bits(round_to_bf16(from_bits(0x3F808000u))), 0x3F800000u);  // a tie: to the even code (…80)
    EXPECT_EQ(bits(round_to_bf16(from_bits(0x3F818000u))), 0x3F820000u);  // a tie: to the even code (…82)
    EXPECT_EQ(bits(round_to_bf16(from_bits(0x3F808001u))), 0x3F810000u);  // above the tie: up
    EXPECT_EQ(bits(round_to_bf16(from_bits(0x7F7FFFFFu))), 0x7F800000u);  // past the largest bf16: inf
    EXPECT_EQ(bits(round_to_bf16(from_bits(0x00000001u))), 0x00000000u);  // a denormal reads as zero
    EXPECT_EQ(bits(round_to_bf16(from_bits(0x807FFFFFu))), 0x80000000u);  // (its sign kept)
    EXPECT_EQ(bits(round_to_bf16(from_bits(0x7F800001u))), 0x7FC00000u);  // a signalling NaN: a quiet NaN
    EXPECT_EQ(bits(round_to_bf16(-INFINITY)), 0xFF800000u);
}

TEST(RoundToBf16, EqualsTheHardwareConversionBitForBit) {
    SKIP_WITHOUT_BF16();
    // random bit patterns (every exponent, denormals, NaNs and infinities among them) and random normal values; odd
    // lengths so that the masked tail is exercised
    std::mt19937_64 g(7);
    for (int64_t n : {1, 15, 17, 4099}) {
        vector<float> x((size_t)n);
        for (int64_t i = 0; i < n; i++) x[(size_t)i] = from_bits((uint32_t)g());
        for (int64_t i = 0; i < n; i += 3)
            x[(size_t)i] = std::ldexp((float)(g() % 100000) / 7.0f, (int)(g() % 40) - 20);
        vector<uint16_t> hw((size_t)n);
        cpu::convert_to_bf16(hw.data(), x.data(), 1, n, n);
        for (int64_t i = 0; i < n; i++)
            ASSERT_EQ((uint32_t)hw[(size_t)i] << 16, bits(round_to_bf16(x[(size_t)i])))
                << "element " << i << " of " << n << ": " << std::hex << bits(x[(size_t)i]);
    }
}

struct gemm_case {
    bool ta, tb;
    int64_t M, N, K;
    float alpha, beta;
    int64_t pad;  // extra row stride of every stored matrix
};

// C = alpha·op(A)·op(B) + beta·C by a table, in the current precision
vector<float> run_gemm(const kernel_table& k, const gemm_case& c, const vector<float>& A, const vector<float>& B,
                       const vector<float>& C0) {
    const int64_t lda = (c.ta ? c.M : c.K) + c.pad, ldb = (c.tb ? c.K : c.N) + c.pad, ldc = c.N + c.pad;
    vector<float> C = C0;
    k.gemm(c.ta, c.tb, c.M, c.N, c.K, c.alpha, A.data(), lda, B.data(), ldb, c.beta, C.data(), ldc);
    return C;
}

TEST(GemmBf16, EqualsTheReferenceOnRoundedOperandsAndIsNotTheFp32Product) {
    SKIP_WITHOUT_BF16();
    const vector<gemm_case> cases = {
        {false, false, 33, 47, 65, 1.0f, 0.0f, 0},   {false, true, 64, 96, 128, 1.0f, 1.0f, 0},
        {true, false, 40, 24, 257, 1.0f, 1.0f, 3},   {true, true, 17, 31, 9, 0.5f, 0.25f, 5},
        {false, true, 128, 256, 256, 1.0f, 0.0f, 0}, {true, false, 256, 64, 512, 1.0f, 1.0f, 0},
    };
    uint64_t seed = 100;
    for (const gemm_case& c : cases) {
        const int64_t a_rows = c.ta ? c.K : c.M, b_rows = c.tb ? c.N : c.K;
        const vector<float> A = random_vector(a_rows * ((c.ta ? c.M : c.K) + c.pad), seed++);
        const vector<float> B = random_vector(b_rows * ((c.tb ? c.K : c.N) + c.pad), seed++);
        const vector<float> C0 = random_vector(c.M * (c.N + c.pad), seed++);
        vector<float> cpu_bf16, ref_bf16;
        {
            const scoped_matmul_precision bf16(matmul_precision::bf16);
            cpu_bf16 = run_gemm(cpu_kernels(), c, A, B, C0);
            ref_bf16 = run_gemm(ref_kernels(), c, A, B, C0);
        }
        const vector<float> ref_fp32 = run_gemm(ref_kernels(), c, A, B, C0);
        const std::string what = "M=" + std::to_string(c.M) + " N=" + std::to_string(c.N) +
                                 " K=" + std::to_string(c.K) + " ta=" + std::to_string(c.ta) +
                                 " tb=" + std::to_string(c.tb);
        // fp32 sums of K products: a few ulps of fp32 on the largest entry
        EXPECT_LT(rel_max_diff(cpu_bf16, ref_bf16), 2e-6) << what;
        // bf16 operands carry 8 bits: the product differs from the fp32 one by ~2^-9 relative, far above the sums'
        // rounding (a path that still computed in fp32 fails here)
        EXPECT_GT(rel_max_diff(cpu_bf16, ref_fp32), 1e-4) << what;
        // the padding past each row of C is untouched
        for (int64_t i = 0; i < c.M; i++)
            for (int64_t j = c.N; j < c.N + c.pad; j++)
                ASSERT_EQ(cpu_bf16[(size_t)(i * (c.N + c.pad) + j)], C0[(size_t)(i * (c.N + c.pad) + j)]) << what;
    }
}

TEST(GemmBf16, TheLinearEntriesFollowThePrecision) {
    SKIP_WITHOUT_BF16();
    const int64_t N = 70, in = 96, out = 80;
    const vector<float> x = random_vector(N * in, 1), W = random_vector(out * in, 2, 0.1f),
                        dy = random_vector(N * out, 3);
    const scoped_matmul_precision bf16(matmul_precision::bf16);
    for (const bool acc : {false, true}) {
        const vector<float> y0 = random_vector(N * out, 4), dx0 = random_vector(N * in, 5);
        vector<float> y_cpu = y0, y_ref = y0, dx_cpu = dx0, dx_ref = dx0;
        cpu_kernels().linear_fwd(y_cpu.data(), x.data(), W.data(), N, in, out, acc);
        ref_kernels().linear_fwd(y_ref.data(), x.data(), W.data(), N, in, out, acc);
        EXPECT_LT(rel_max_diff(y_cpu, y_ref), 2e-6) << "linear_fwd accumulate=" << acc;
        cpu_kernels().linear_bwd_data(dx_cpu.data(), dy.data(), W.data(), N, in, out, acc);
        ref_kernels().linear_bwd_data(dx_ref.data(), dy.data(), W.data(), N, in, out, acc);
        EXPECT_LT(rel_max_diff(dx_cpu, dx_ref), 2e-6) << "linear_bwd_data accumulate=" << acc;
    }
    const vector<float> dW0 = random_vector(out * in, 6);
    vector<float> dW_cpu = dW0, dW_ref = dW0;
    cpu_kernels().linear_bwd_weight(dW_cpu.data(), dy.data(), x.data(), N, in, out);
    ref_kernels().linear_bwd_weight(dW_ref.data(), dy.data(), x.data(), N, in, out);
    EXPECT_LT(rel_max_diff(dW_cpu, dW_ref), 2e-6) << "linear_bwd_weight";
}

TEST(GemmBf16, ACallFromInsideAParallelRegionEqualsTheSameCallOutside) {
    SKIP_WITHOUT_BF16();
    const int64_t M = 48, N = 40, K = 72, blocks = 8;
    const vector<float> A = random_vector(blocks * M * K, 11), B = random_vector(K * N, 12);
    const scoped_matmul_precision bf16(matmul_precision::bf16);
    vector<float> outside((size_t)(blocks * M * N)), inside((size_t)(blocks * M * N));
    for (int64_t b = 0; b < blocks; b++)
        cpu::gemm(false, false, M, N, K, 1.0f, A.data() + b * M * K, K, B.data(), N, 0.0f, outside.data() + b * M * N,
                  N);
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < blocks; b++)
        cpu::gemm(false, false, M, N, K, 1.0f, A.data() + b * M * K, K, B.data(), N, 0.0f, inside.data() + b * M * N,
                  N);
    EXPECT_LT(rel_max_diff(inside, outside), 2e-6);
}

TEST(MatmulPrecision, ScopesNestAndRestoreAndSyrkStaysFp32) {
    EXPECT_EQ(current_matmul_precision(), matmul_precision::fp32);
    EXPECT_EQ(parse_matmul_precision("bf16", "x"), matmul_precision::bf16);
    EXPECT_NE(test::error_of([] {
                  parse_matmul_precision("fp16", "train.precision");
              }).find("train.precision: precision must be 'fp32' or 'bf16', got 'fp16'"),
              std::string::npos);
    if (!cpu_has_bf16()) return;
    const int64_t n = 24, k = 40;
    const vector<float> X = random_vector(n * k, 21);
    vector<float> fp32((size_t)(n * n)), in_scope((size_t)(n * n));
    cpu::syrk(n, k, 1.0f, X.data(), k, 0.0f, fp32.data(), n);
    {
        const scoped_matmul_precision outer(matmul_precision::bf16);
        {
            const scoped_matmul_precision inner(matmul_precision::fp32);
            EXPECT_EQ(current_matmul_precision(), matmul_precision::fp32);
        }
        EXPECT_EQ(current_matmul_precision(), matmul_precision::bf16);
        cpu::syrk(n, k, 1.0f, X.data(), k, 0.0f, in_scope.data(), n);
        EXPECT_EQ(current_matmul_precision(), matmul_precision::bf16);
    }
    EXPECT_EQ(current_matmul_precision(), matmul_precision::fp32);
    EXPECT_EQ(in_scope, fp32);
}

TEST(MatmulPrecision, Bf16WithoutTheInstructionsIsAOneLineError) {
    setenv("TREX_ASSUME_NO_BF16", "1", 1);
    const std::string m = test::error_of([] { scoped_matmul_precision s(matmul_precision::bf16); });
    const std::string p = test::error_of([] { measure_bf16_peak(0.01); });
    unsetenv("TREX_ASSUME_NO_BF16");
    EXPECT_NE(m.find("this CPU has no AVX512_BF16 instructions"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_NE(p.find("the bf16 peak"), std::string::npos) << p;
    EXPECT_EQ(current_matmul_precision(), matmul_precision::fp32);
}

TEST(Bf16Peak, IsAtLeastTheBf16MatmulRateAndTheFp32Peak) {
    SKIP_WITHOUT_BF16();
    // before and after the GEMMs, the higher kept (a busy neighbour can only lower a measurement)
    peak_measurement peak = measure_bf16_peak(0.3);
    const peak_measurement gemm = measure_gemm_peak(matmul_precision::bf16, 1024, 5);
    peak.gflops = std::max(peak.gflops, measure_bf16_peak(0.3).gflops);
    const peak_measurement fma = measure_fma_peak(0.3);
    EXPECT_EQ(peak.isa, "avx512_bf16");
    EXPECT_GE(peak.gflops, 0.95 * gemm.gflops) << "bf16 peak " << peak.gflops << ", bf16 matmul " << gemm.gflops;
    // a dot-product instruction does twice an FMA's FLOPs and runs at half the FMA's rate or better (Zen 5: the
    // same rate, 2x the FLOPs): a peak below the FMA's means the FLOPs per instruction are miscounted
    EXPECT_GE(peak.gflops, 0.9 * fma.gflops) << "bf16 peak " << peak.gflops << ", fp32 FMA peak " << fma.gflops;
    EXPECT_NO_THROW(check_peak_against_gemm(peak, gemm.gflops, "oneDNN bf16 matmul"));
}

}  // namespace
