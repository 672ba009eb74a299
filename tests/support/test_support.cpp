#include "support/test_support.hpp"

#include "trex/base/error.hpp"

#include <sys/wait.h>
#include <unistd.h>
#include <cmath>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>

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

namespace {

// The scratch directories of this process, removed at its exit. A child forked by a test (the eval sandbox) inherits
// the list and exits too: only the process that made the directories removes them.
struct scratch_registry {
    std::mutex mu;
    std::vector<std::string> dirs;
    pid_t owner = getpid();
    ~scratch_registry() {
        const char* keep = std::getenv("TREX_KEEP_TEST_DIRS");
        if (getpid() != owner || (keep && *keep && std::string(keep) != "0")) return;
        for (const std::string& d : dirs) {
            std::error_code ec;  // (best effort: a failure to clean up does not fail the test)
            std::filesystem::remove_all(d, ec);
        }
    }
};

scratch_registry& registry() {
    static scratch_registry r;
    return r;
}

}  // namespace

std::string scratch_dir(const std::string& name) {
    namespace fs = std::filesystem;
    const std::string d = (fs::temp_directory_path() / ("trex_" + name + "_" + std::to_string(getpid()))).string();
    scratch_registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    if (std::find(r.dirs.begin(), r.dirs.end(), d) != r.dirs.end()) return d;  // (made earlier by this process)
    fs::remove_all(d);
    fs::create_directories(d);
    r.dirs.push_back(d);
    return d;
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
