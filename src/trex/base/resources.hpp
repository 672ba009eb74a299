#pragma once

#include <sys/resource.h>

namespace trex {

// The process's peak resident set in bytes (getrusage; child processes are not included).
inline double peak_resident_bytes() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return 1024.0 * (double)u.ru_maxrss;  // KiB on Linux
}

}  // namespace trex
