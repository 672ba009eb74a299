#include "trex/base/resources.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "trex/base/error.hpp"

namespace trex {

double peak_resident_bytes() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return 1024.0 * (double)u.ru_maxrss;  // KiB on Linux
}

namespace {

// A cgroup limit file: a number of bytes, or "max" / absent (no limit: returns 0).
double cgroup_limit(const char* path) {
    std::ifstream f(path);
    std::string s;
    if (!(f >> s) || s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return 0.0;
    return std::stod(s);
}

}  // namespace

double memory_limit_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double limit = pages > 0 && page > 0 ? (double)pages * (double)page : 0.0;
    for (const char* p : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
        const double c = cgroup_limit(p);
        if (c > 0 && (limit == 0 || c < limit)) limit = c;
    }
    return limit;
}

void check_fits_in_memory(double bytes, const char* what) {
    const double limit = memory_limit_bytes();
    TREX_CHECK(limit <= 0 || bytes <= limit, "{} would take {:.1f} GB; this machine has {:.1f} GB of memory", what,
               bytes / 1e9, limit / 1e9);
}

}  // namespace trex
