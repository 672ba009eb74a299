#include "trex/base/error.hpp"

namespace trex {

void throw_error(const std::string& msg) {
    throw error(msg);
}

void assert_fail(const char* expr, const char* file, int line) {
    throw error(fmt::format("internal error: assertion '{}' failed at {}:{}", expr, file, line));
}

}  // namespace trex
