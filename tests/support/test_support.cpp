#include "support/test_support.hpp"

#include "trex/base/error.hpp"

#include <sys/wait.h>
#include <cmath>

#include <algorithm>
#include <cstdio>

namespace trex::test {

std::string source_path(const std::string& rel) {
    return std::string(TREX_SOURCE_DIR) + "/" + rel;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const trex::error& e) {
        return e.what();
    }
    return "";
}

std::string trex_binary() {
    return TREX_BINARY;
}

command_result run_command(const std::string& cmd) {
    command_result r;
    std::string full = cmd + " 2>&1";
    FILE* p = popen(full.c_str(), "r");
    if (!p) {
        r.exit_code = -1;
        return r;
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

template <typename A, typename B>
static double rel_error_impl(const A* a, const B* b, long n) {
    double num = 0, den = 0;
    for (long i = 0; i < n; i++) {
        double diff = (double)a[i] - (double)b[i];
        num += diff * diff;
        den += (double)b[i] * (double)b[i];
    }
    return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

double rel_error(const double* a, const double* b, long n) {
    return rel_error_impl(a, b, n);
}
double rel_error(const float* a, const double* b, long n) {
    return rel_error_impl(a, b, n);
}
double rel_error(const float* a, const float* b, long n) {
    return rel_error_impl(a, b, n);
}

}  // namespace trex::test
