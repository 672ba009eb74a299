// Helpers for the fast-kernel tests (tests/unit/kernels_cpu_*): the fast fp32 kernel (kernels/cpu) and the
// reference kernel in double (kernels/ref, the oracle) run on the same values, and every output / gradient is
// compared by the relative error ||fast − ref|| / ||ref||.
//
// Every comparison prints one line "[CPU] <name> rel=<error>" (grep the test output for the per-op maxima).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "support/fd_check.hpp"
#include "support/test_support.hpp"
#include "trex/kernels/types.hpp"

namespace trex::test {

// Default bound on ||fast − ref|| / ||ref|| (fp32 against fp64).
constexpr double kCpuTol = 1e-5;

// n normal(mean, sd) values rounded to float (so that the float and the double kernels see identical inputs).
inline std::vector<double> randf(size_t n, uint64_t seed, double sd = 1.0, double mean = 0.0) {
    std::vector<double> v = randn(n, seed, sd, mean);
    for (auto& x : v) x = (double)(float)x;
    return v;
}

inline std::vector<float> to_f(const std::vector<double>& v) {
    return std::vector<float>(v.begin(), v.end());
}
inline std::vector<double> to_d(const std::vector<float>& v) {
    return std::vector<double>(v.begin(), v.end());
}

inline double rms(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x * x;
    return v.empty() ? 0.0 : std::sqrt(s / (double)v.size());
}

// Junk to pre-fill an accumulated (+=) output: float values with the RMS of the expected increment (so that an
// assigning kernel would be caught, and the junk does not swamp the increment). Exactly zero increments get
// junk of size 1.
inline std::vector<double> junk_like(const std::vector<double>& increment, uint64_t seed) {
    const double s = rms(increment);
    return randf(increment.size(), seed, s > 0 ? s : 1.0);
}

// rel error of fast (float) against ref (double) over n values; prints it and expects it ≤ tol.
inline double expect_close(const std::string& name, const float* fast, const double* ref, size_t n,
                           double tol = kCpuTol) {
    double num = 0, den = 0;
    bool finite = true;
    for (size_t i = 0; i < n; i++) {
        if (!std::isfinite(fast[i])) finite = false;
        const double d = (double)fast[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    const double rel = std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
    std::printf("[CPU] %-52s n=%8zu |ref|=%.3e rel=%.3e\n", name.c_str(), n, std::sqrt(den), rel);
    EXPECT_TRUE(finite) << name << ": non-finite fast output";
    EXPECT_GT(std::sqrt(den), 0.0) << name << ": the reference is all zero, the comparison proves little";
    EXPECT_LE(rel, tol) << name;
    return rel;
}
inline double expect_close(const std::string& name, const std::vector<float>& fast, const std::vector<double>& ref,
                           double tol = kCpuTol) {
    EXPECT_EQ(fast.size(), ref.size()) << name;
    return expect_close(name, fast.data(), ref.data(), std::min(fast.size(), ref.size()), tol);
}
// An accumulated output: the fast kernel ran on `before` (junk) and left `after`; ref_inc is the reference's
// increment (it ran on zeros). Compares after − before with ref_inc.
inline double expect_close_acc(const std::string& name, const std::vector<float>& after,
                               const std::vector<double>& before, const std::vector<double>& ref_inc,
                               double tol = kCpuTol) {
    std::vector<double> inc(after.size());
    for (size_t i = 0; i < after.size(); i++) inc[i] = (double)after[i] - before[i];
    double num = 0, den = 0;
    for (size_t i = 0; i < inc.size(); i++) {
        num += (inc[i] - ref_inc[i]) * (inc[i] - ref_inc[i]);
        den += ref_inc[i] * ref_inc[i];
    }
    const double rel = std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
    std::printf("[CPU] %-52s n=%8zu |ref|=%.3e rel=%.3e (+=)\n", name.c_str(), inc.size(), std::sqrt(den), rel);
    EXPECT_GT(std::sqrt(den), 0.0) << name;
    EXPECT_LE(rel, tol) << name;
    return rel;
}
inline double expect_close_scalar(const std::string& name, double fast, double ref, double tol = kCpuTol) {
    const double rel = std::fabs(fast - ref) / std::max(std::fabs(ref), 1e-30);
    std::printf("[CPU] %-52s fast=%.9e ref=%.9e rel=%.3e\n", name.c_str(), fast, ref, rel);
    EXPECT_LE(rel, tol) << name;
    return rel;
}

// Packed documents of the given lengths: doc spans, doc_of and pos per token, and per ratio m the compressed
// layout (entry offsets per document, entry count, largest per-document count), as model/geometry.cpp builds them.
struct doc_layout {
    std::vector<doc_span> docs;
    std::vector<int32_t> doc_of, pos;
    int64_t N = 0;
    explicit doc_layout(const std::vector<int64_t>& lens) {
        for (size_t k = 0; k < lens.size(); k++) {
            docs.push_back({N, lens[k]});
            for (int64_t p = 0; p < lens[k]; p++) {
                doc_of.push_back((int32_t)k);
                pos.push_back((int32_t)p);
            }
            N += lens[k];
        }
    }
    struct comp {
        std::vector<int64_t> entry_offset;
        std::vector<int32_t> entry_pos;
        int64_t n_entries = 0, max_entries = 0;
    };
    comp compressed(int m) const {
        comp c;
        for (const auto& d : docs) {
            c.entry_offset.push_back(c.n_entries);
            for (int64_t i = 0; i < d.len / m; i++) c.entry_pos.push_back((int32_t)(i * m));
            c.n_entries += d.len / m;
            c.max_entries = std::max(c.max_entries, d.len / m);
        }
        return c;
    }
};

// The two sizes every test runs at: a small odd one and one like v4-tiny (configs/v4-tiny.json).
// Small: 13 tokens in documents of 9, 3 (shorter than the ratio 4) and 1 token.
// Tiny : 512 tokens in documents of 300, 150, 3 and 59 (lengths not multiples of 4 or 16).
inline std::vector<int64_t> small_docs() {
    return {9, 3, 1};
}
inline std::vector<int64_t> tiny_docs() {
    return {300, 150, 3, 59};
}

}  // namespace trex::test
