#include "trex/base/rng.hpp"

#include <cmath>

namespace trex {

double normal01(uint64_t seed, uint64_t stream, uint64_t index) {
    double u1 = uniform01(seed, stream, 2 * index);
    double u2 = uniform01(seed, stream, 2 * index + 1);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace trex
