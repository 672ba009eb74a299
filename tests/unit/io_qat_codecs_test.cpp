// The release's QAT simulation kernels (kernels/cpu/qat.cpp, kernels/ref/qat.cpp) against the checkpoint codecs
// (io/codecs.hpp), which encode and decode the release's FP8 E4M3 / FP4 E2M1 / UE8M0 files: a fake-quantised block is
// bit for bit decode(encode(x / s))·s with s the codecs' power-of-two scale, for blocks at every magnitude, exact
// rounding ties, saturation, the amax floors and amax exactly at a scale boundary. The Hadamard rotation against the
// matrix product, and torch.topk's tie choices (recorded from torch by tests/reference/torch_topk_cases.py) against
// topk_torch.hpp and both backends' indexer_topk.
// (An io test: the codecs live in trex_io, the kernels in the engine below it.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/cpu_compare.hpp"
#include "support/test_support.hpp"
#include "trex/io/codecs.hpp"
#include "trex/kernels/cpu/ops.hpp"
#include "trex/kernels/ref/ops.hpp"
#include "trex/kernels/topk_torch.hpp"

using std::vector;

namespace {

enum class fmt { fp8, fp4 };

// What the checkpoint codecs make of one block: scale 2^e with e = ceil(log2(max(amax, floor)/qmax)), then each
// value encoded (round to nearest even, saturating) and decoded.
vector<float> codec_round_trip(const vector<float>& x, int64_t block, fmt f) {
    vector<float> y(x.size());
    const float qmax = f == fmt::fp8 ? trex::kFp8Max : trex::kFp4Max;
    const float floor = f == fmt::fp8 ? trex::kFp8AmaxFloor : trex::kFp4AmaxFloor;
    for (size_t b0 = 0; b0 < x.size(); b0 += (size_t)block) {
        float amax = 0;
        for (int64_t j = 0; j < block; j++) amax = std::max(amax, std::fabs(x[b0 + j]));
        const int e = trex::pow2_scale_exponent(amax, qmax, floor);
        for (int64_t j = 0; j < block; j++) {
            const float q = std::ldexp(x[b0 + j], -e);
            const float r = f == fmt::fp8 ? trex::fp8_e4m3_to_f32(trex::f32_to_fp8_e4m3(q))
                                          : trex::fp4_e2m1_to_f32(trex::f32_to_fp4_e2m1(q));
            y[b0 + j] = std::ldexp(r, e);
        }
    }
    return y;
}

// Blocks that reach every case: random values at magnitudes 2^−30 .. 2^30, values exactly halfway between two
// representable ones (ties), blocks below the amax floor, zeros, and amax = qmax·2^k and its neighbours (where a
// scale computed as amax·(1/qmax) in float could round differently from the exact quotient).
vector<float> hard_blocks(int64_t block, float qmax, const vector<float>& grid, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    vector<float> x;
    auto add_block = [&](float amax, auto fill) {
        const size_t b0 = x.size();
        x.resize(b0 + (size_t)block);
        for (int64_t j = 0; j < block; j++) x[b0 + j] = fill(j);
        x[b0 + (size_t)(rng() % block)] = (rng() % 2 ? 1.0f : -1.0f) * amax;
    };
    for (int k = -30; k <= 30; k++) {
        const float amax = std::ldexp(1.0f + 0.5f * std::fabs(u(rng)), k);
        add_block(amax, [&](int64_t) { return amax * u(rng); });
        // ties: midpoints of the grid scaled to this block's scale (amax = qmax·2^k makes the scale exactly 2^k)
        const float top = std::ldexp(qmax, k);
        add_block(top, [&](int64_t j) {
            const size_t g = (size_t)(j % (int64_t)(grid.size() - 1));
            return std::ldexp(0.5f * (grid[g] + grid[g + 1]), k) * (j % 2 ? -1.0f : 1.0f);
        });
        for (float nb : {std::nextafter(top, 0.0f), std::nextafter(top, 1e30f)})
            add_block(nb, [&](int64_t) { return nb * u(rng); });
    }
    add_block(0.0f, [](int64_t) { return 0.0f; });                                    // all zero: the floor's scale
    add_block(1e-6f, [&](int64_t) { return 1e-6f * u(rng); });                        // below the FP8 floor
    add_block(1e-38f, [&](int64_t) { return 1e-38f * u(rng); });                      // near the FP4 floor
    add_block(1000.0f, [&](int64_t j) { return j % 3 ? 1000.0f * u(rng) : 1e-3f; });  // tiny values flush to 0
    return x;
}

vector<float> grid_of(fmt f) {
    vector<float> g;
    if (f == fmt::fp4) return {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    for (int c = 0; c < 127; c++) g.push_back(trex::fp8_e4m3_to_f32((uint8_t)c));
    return g;
}

void expect_bitwise(const vector<float>& got, const vector<float>& want, const char* what) {
    ASSERT_EQ(got.size(), want.size());
    int64_t diff = 0, first = -1;
    for (size_t i = 0; i < got.size(); i++)
        if (std::memcmp(&got[i], &want[i], 4) != 0 && !(got[i] == 0 && want[i] == 0)) {
            if (first < 0) first = (int64_t)i;
            diff++;
        }
    EXPECT_EQ(diff, 0) << what << ": " << diff << " values differ, first at " << first << " (got "
                       << (first >= 0 ? got[first] : 0) << ", want " << (first >= 0 ? want[first] : 0) << ")";
}

}  // namespace

namespace {

using fake_quant_fn = void (*)(float*, int64_t, int64_t, int64_t, int64_t);

// cpu and ref on the hard blocks of format f, each bit for bit the codecs' round trip; returns the cpu result.
vector<float> check_against_codecs(fmt f, int64_t block, uint64_t seed, fake_quant_fn cpu_fn, fake_quant_fn ref_fn) {
    const vector<float> x = hard_blocks(block, f == fmt::fp8 ? trex::kFp8Max : trex::kFp4Max, grid_of(f), seed);
    const vector<float> want = codec_round_trip(x, block, f);
    vector<float> cpu = x, ref = x;
    cpu_fn(cpu.data(), (int64_t)x.size() / block, block, block, block);
    ref_fn(ref.data(), (int64_t)x.size() / block, block, block, block);
    expect_bitwise(cpu, want, f == fmt::fp8 ? "cpu fake_quant_fp8" : "cpu fake_quant_fp4");
    expect_bitwise(ref, want, f == fmt::fp8 ? "ref fake_quant_fp8" : "ref fake_quant_fp4");
    int changed = 0;
    for (size_t i = 0; i < x.size(); i++) changed += cpu[i] != x[i];
    EXPECT_GT(changed, (int)x.size() / 2) << "the quantisation must change most values";
    return cpu;
}

}  // namespace

TEST(QatKernels, Fp8FakeQuantIsTheCodecsRoundTripBitForBit) {
    check_against_codecs(fmt::fp8, 64, 1, trex::cpu::fake_quant_fp8, trex::ref::fake_quant_fp8<float>);
}

TEST(QatKernels, Fp4FakeQuantIsTheCodecsRoundTripBitForBit) {
    check_against_codecs(fmt::fp4, 32, 2, trex::cpu::fake_quant_fp4, trex::ref::fake_quant_fp4<float>);
}

// Only columns [0, n) of each row are touched (the KV's RoPE dims stay as they are); rows have stride ld.
TEST(QatKernels, Fp8LeavesTheColumnsPastNUntouched) {
    const int64_t rows = 5, ld = 96, n = 64;
    vector<float> x = trex::test::to_f(trex::test::randn((size_t)(rows * ld), 3, 2.0));
    vector<float> cpu = x, ref = x;
    trex::cpu::fake_quant_fp8(cpu.data(), rows, ld, n, 64);
    trex::ref::fake_quant_fp8(ref.data(), rows, ld, n, 64);
    expect_bitwise(cpu, ref, "cpu vs ref");
    for (int64_t r = 0; r < rows; r++) {
        vector<float> head(x.begin() + r * ld, x.begin() + r * ld + n);
        vector<float> want = codec_round_trip(head, 64, fmt::fp8);
        expect_bitwise(vector<float>(cpu.begin() + r * ld, cpu.begin() + r * ld + n), want, "row head");
        for (int64_t j = n; j < ld; j++) EXPECT_EQ(cpu[r * ld + j], x[r * ld + j]) << "row " << r << " col " << j;
    }
}

// The butterflies equal the Sylvester matrix product (ref, in double) to float rounding; the rotation is orthogonal
// and its own inverse; a unit vector becomes a row of ±1/√n.
TEST(QatKernels, HadamardIsTheNormalisedSylvesterRotation) {
    for (int64_t n : {32, 128}) {
        const int64_t rows = 7;
        vector<double> xd = trex::test::randn((size_t)(rows * n), 10 + n);
        vector<float> x = trex::test::to_f(xd), cpu = x;
        trex::cpu::hadamard_rows(cpu.data(), rows, n);
        trex::ref::hadamard_rows(xd.data(), rows, n);
        double num = 0, den = 0, in2 = 0, out2 = 0;
        for (size_t i = 0; i < x.size(); i++) {
            num += (cpu[i] - xd[i]) * (cpu[i] - xd[i]);
            den += xd[i] * xd[i];
            in2 += (double)x[i] * x[i];
            out2 += (double)cpu[i] * cpu[i];
        }
        EXPECT_LT(std::sqrt(num / den), 1e-6) << "n = " << n;
        EXPECT_NEAR(out2 / in2, 1.0, 1e-6) << "n = " << n;
        vector<float> twice = cpu;
        trex::cpu::hadamard_rows(twice.data(), rows, n);
        for (size_t i = 0; i < x.size(); i++) EXPECT_NEAR(twice[i], x[i], 1e-5) << "n = " << n;
        vector<float> e(n, 0.0f);
        e[3] = 1.0f;
        trex::cpu::hadamard_rows(e.data(), 1, n);
        for (int64_t j = 0; j < n; j++)
            EXPECT_FLOAT_EQ(std::fabs(e[j]), (float)(1.0 / std::sqrt((double)n))) << "n = " << n << " j = " << j;
    }
}

namespace {

struct topk_case {
    int64_t n = 0, k = 0;
    vector<float> values;
    std::set<int32_t> torch;
};

vector<topk_case> read_torch_cases() {
    const std::string path = trex::test::source_path("tests/golden/torch_topk_cases.txt");
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << path;
    vector<topk_case> cases;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream is(line);
        topk_case c;
        is >> c.n >> c.k;
        for (int64_t j = 0; j < c.n; j++) {
            std::string v;
            is >> v;
            c.values.push_back(v == "-inf" ? -std::numeric_limits<float>::infinity() : std::stof(v));
        }
        std::string bar;
        is >> bar;
        EXPECT_EQ(bar, "|") << line.substr(0, 40);
        for (int64_t j = 0; j < c.k; j++) {
            int32_t i;
            is >> i;
            c.torch.insert(i);
        }
        cases.push_back(std::move(c));
    }
    return cases;
}

}  // namespace

TEST(TorchTopk, ChoosesAmongTiesAsTorchDoes) {
    const vector<topk_case> cases = read_torch_cases();
    ASSERT_GE(cases.size(), 300u);
    std::vector<std::pair<float, int64_t>> queue;
    int both_paths[2] = {0, 0}, differ_from_stable = 0;
    for (size_t ci = 0; ci < cases.size(); ci++) {
        const topk_case& c = cases[ci];
        vector<int32_t> got((size_t)c.k);
        trex::torch_topk_indices(got.data(), c.values.data(), c.n, c.k, queue);
        EXPECT_EQ(std::set<int32_t>(got.begin(), got.end()), c.torch) << "case " << ci << " n " << c.n << " k " << c.k;
        both_paths[c.k * 64 <= c.n]++;
        // the stable rule (lower index first) would pick the lowest-index ties instead
        vector<int32_t> order((size_t)c.n);
        for (int64_t j = 0; j < c.n; j++) order[(size_t)j] = (int32_t)j;
        std::stable_sort(order.begin(), order.end(),
                         [&](int32_t a, int32_t b) { return c.values[(size_t)a] > c.values[(size_t)b]; });
        differ_from_stable += std::set<int32_t>(order.begin(), order.begin() + c.k) != c.torch;
    }
    EXPECT_GT(both_paths[0], 50) << "rows for nth_element";
    EXPECT_GT(both_paths[1], 50) << "rows for the partial sort";
    EXPECT_GT(differ_from_stable, 50) << "the cases must tell torch's choice from the lower-index rule";
}

// Both backends' indexer_topk with torch_rows: one query per case, its visible entries the row's finite prefix,
// the row the case's n entries (the invisible ones at −inf, as the release masks them).
TEST(TorchTopk, IndexerTopkWithTorchRowsMatchesTorch) {
    const vector<topk_case> cases = read_torch_cases();
    int checked = 0;
    for (size_t ci = 0; ci < cases.size(); ci++) {
        const topk_case& c = cases[ci];
        int64_t vis = 0;
        while (vis < c.n && std::isfinite(c.values[(size_t)vis])) vis++;
        if (vis == 0) continue;
        bool finite_prefix = true;  // the rows the indexer builds have −inf only past the visible entries
        for (int64_t j = vis; j < c.n; j++) finite_prefix = finite_prefix && !std::isfinite(c.values[(size_t)j]);
        if (!finite_prefix) continue;
        std::set<int32_t> want;
        for (int32_t i : c.torch)
            if (i < vis) want.insert(i);
        const int32_t pos = (int32_t)(vis - 1), row = (int32_t)c.n;
        const int k = (int)c.k;
        for (int backend = 0; backend < 2; backend++) {
            vector<int32_t> sel((size_t)k), nsel(1);
            if (backend == 0)
                trex::cpu::indexer_topk(sel.data(), nsel.data(), c.values.data(), &pos, 1, 1, k, c.n, false, &row);
            else
                trex::ref::indexer_topk(sel.data(), nsel.data(), c.values.data(), &pos, 1, 1, k, c.n, false, &row);
            std::set<int32_t> got;
            for (int j = 0; j < nsel[0]; j++) got.insert(sel[(size_t)j]);
            EXPECT_EQ(got, want) << (backend ? "ref" : "cpu") << " case " << ci;
            for (int j = nsel[0]; j < k; j++) EXPECT_EQ(sel[(size_t)j], -1);
            for (int j = 1; j < nsel[0]; j++) EXPECT_LT(sel[(size_t)j - 1], sel[(size_t)j]) << "ascending";
        }
        checked++;
    }
    EXPECT_GT(checked, 200);
}
