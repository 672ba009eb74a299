// Counter-based random numbers (SplitMix64 / Philox-free, deterministic): a value depends only on
// (seed, stream, index), never on call order or thread count.
#pragma once

#include <cstdint>
#include <string_view>

namespace trex {

// 64-bit mix of one word (SplitMix64 finaliser).
inline uint64_t mix64(uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// FNV-1a hash of a name: used to give every tensor its own random stream.
inline uint64_t hash_name(std::string_view s) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
}

// Uniform double in (0,1) from (seed, stream, index).
inline double uniform01(uint64_t seed, uint64_t stream, uint64_t index) {
    uint64_t r = mix64(mix64(seed ^ mix64(stream)) + index);
    return ((r >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

// Standard normal from (seed, stream, index) by Box-Muller on two uniforms.
double normal01(uint64_t seed, uint64_t stream, uint64_t index);

}  // namespace trex
