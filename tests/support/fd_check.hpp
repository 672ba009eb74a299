// Finite-difference gradient checking for the reference kernels (double precision).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace trex::test {

// n normal(0, sd) values + mean from a fixed seed.
inline std::vector<double> randn(size_t n, uint64_t seed, double sd = 1.0, double mean = 0.0) {
    std::mt19937_64 g(seed);
    std::normal_distribution<double> dist(mean, sd);
    std::vector<double> v(n);
    for (auto& x : v) x = dist(g);
    return v;
}

inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); i++) s += a[i] * b[i];
    return s;
}

// Central differences of f w.r.t. every element of x (x is perturbed in place and restored):
// returns ||fd − grad|| / ||fd|| (the relative error) and records it on stdout as "[FD] name rel=...".
inline double fd_rel_error(const std::string& name, std::vector<double>& x, const std::vector<double>& grad,
                           const std::function<double()>& f, double eps = 1e-6) {
    EXPECT_EQ(x.size(), grad.size()) << name;
    double num = 0, den = 0, max_abs = 0;
    for (size_t i = 0; i < x.size(); i++) {
        const double x0 = x[i];
        x[i] = x0 + eps;
        const double fp = f();
        x[i] = x0 - eps;
        const double fm = f();
        x[i] = x0;
        const double fd = (fp - fm) / (2 * eps);
        num += (fd - grad[i]) * (fd - grad[i]);
        den += fd * fd;
        max_abs = std::max(max_abs, std::fabs(fd - grad[i]));
    }
    const double rel = std::sqrt(num) / std::max(std::sqrt(den), 1e-300);
    std::printf("[FD] %-40s n=%4zu |g|=%.3e rel=%.3e max_abs=%.3e\n", name.c_str(), x.size(), std::sqrt(den), rel,
                max_abs);
    EXPECT_GT(std::sqrt(den), 1e-8) << name << ": gradient is (nearly) zero, the check proves nothing";
    return rel;
}

// Default tolerance for the relative FD error in double precision.
constexpr double kFdTol = 1e-7;

// a − b elementwise (to read a += gradient out of a prefilled buffer).
inline std::vector<double> minus(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> r(a.size());
    for (size_t i = 0; i < a.size(); i++) r[i] = a[i] - b[i];
    return r;
}

}  // namespace trex::test
