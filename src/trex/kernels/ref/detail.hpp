// Small helpers shared by the reference kernels (not part of the kernel API).
#pragma once

#include <cmath>

namespace trex::ref::detail {

inline double sigmoid(double x) {
    return 1.0 / (1.0 + std::exp(-x));
}
inline double silu(double x) {
    return x * sigmoid(x);
}
// d/dx silu(x) = σ(x)(1 + x(1 − σ(x)))
inline double silu_grad(double x) {
    double s = sigmoid(x);
    return s * (1.0 + x * (1.0 - s));
}
// softplus(x) = log(1 + e^x), computed without overflow
inline double softplus(double x) {
    return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

}  // namespace trex::ref::detail
