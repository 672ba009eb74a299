#include "trex/bench/peer_process.hpp"

#include <cstdio>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "trex/base/error.hpp"
#include "trex/base/files.hpp"

namespace trex::bench {

namespace {

std::string capture_stdout(const std::string& cmd, int* status) {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    TREX_CHECK(p != nullptr, "cannot run the peer command: {}", cmd);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    *status = ::pclose(p);
    return out;
}

// The tail of a stderr text as one line.
std::string one_line_tail(std::string err, size_t max_err) {
    if (err.size() > max_err) err = "..." + err.substr(err.size() - max_err);
    for (char& c : err)
        if (c == '\n') c = ' ';
    return err;
}

}  // namespace

peer_output run_peer_command(const std::string& command, const std::string& errfile, size_t max_err) {
    peer_output r;
    r.out = capture_stdout(fmt::format("{} 2>'{}'", command, errfile), &r.status);
    std::error_code ec;
    if (std::filesystem::exists(errfile, ec)) {  // a shell that could not even redirect leaves none
        r.err = one_line_tail(read_file(errfile), max_err);
        std::filesystem::remove(errfile, ec);
    }
    return r;
}

}  // namespace trex::bench
