// The bits of an IEEE-754 binary32 and back (memcpy, no aliasing games): for code that rounds or scales by editing
// exponents and mantissas (the checkpoint codecs, the QAT simulation kernels).
#pragma once

#include <cstdint>
#include <cstring>

namespace trex {

inline uint32_t bits_of(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
}

inline float float_of(uint32_t u) {
    float x;
    std::memcpy(&x, &u, 4);
    return x;
}

}  // namespace trex
