// Errors and checks. Every user-facing failure is a trex::error whose message is one line naming the culprit
// (file, key, tensor); the CLI prints it and exits non-zero. Internal invariants use TREX_ASSERT.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace trex {

class error : public std::runtime_error {
   public:
    explicit error(const std::string& what) : std::runtime_error(what) {}
};

[[noreturn]] void throw_error(const std::string& msg);
[[noreturn]] void assert_fail(const char* expr, const char* file, int line);

}  // namespace trex

// TREX_CHECK(cond, "fmt {}", args...): throws trex::error with the formatted message when cond is false.
#define TREX_CHECK(cond, ...)                                         \
    do {                                                              \
        if (!(cond)) ::trex::throw_error(::fmt::format(__VA_ARGS__)); \
    } while (0)

// TREX_ASSERT(cond): an internal invariant (a bug if it fails), reported with file:line.
#define TREX_ASSERT(cond)                                            \
    do {                                                             \
        if (!(cond)) ::trex::assert_fail(#cond, __FILE__, __LINE__); \
    } while (0)
