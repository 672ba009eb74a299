#pragma once

#include <chrono>

namespace trex {

// Wall-clock seconds since an arbitrary origin (steady clock).
inline double now_seconds() {
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

}  // namespace trex
