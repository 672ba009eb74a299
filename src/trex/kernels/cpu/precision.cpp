#include "trex/kernels/precision.hpp"

#include <atomic>
#include <cstdlib>

#include "trex/base/error.hpp"

namespace trex {

namespace {

std::atomic<matmul_precision> g_precision{matmul_precision::fp32};

}  // namespace

matmul_precision current_matmul_precision() {
    return g_precision.load(std::memory_order_relaxed);
}

scoped_matmul_precision::scoped_matmul_precision(matmul_precision p) : previous_(current_matmul_precision()) {
    if (p == matmul_precision::bf16) require_bf16("bf16 matmul precision");
    g_precision.store(p, std::memory_order_relaxed);
}

scoped_matmul_precision::~scoped_matmul_precision() {
    g_precision.store(previous_, std::memory_order_relaxed);
}

matmul_precision parse_matmul_precision(const std::string& s, const std::string& what) {
    if (s == "fp32") return matmul_precision::fp32;
    if (s == "bf16") return matmul_precision::bf16;
    throw error(fmt::format("{}: precision must be 'fp32' or 'bf16', got '{}'", what, s));
}

const char* matmul_precision_name(matmul_precision p) {
    return p == matmul_precision::bf16 ? "bf16" : "fp32";
}

bool cpu_has_bf16() {
    const char* assume_no = std::getenv("TREX_ASSUME_NO_BF16");
    if (assume_no && std::string(assume_no) == "1") return false;
    return __builtin_cpu_supports("avx512bf16");
}

void require_bf16(const std::string& what) {
    TREX_CHECK(cpu_has_bf16(),
               "{}: this CPU has no AVX512_BF16 instructions (bf16 products would be emulated far slower than fp32); "
               "use --precision fp32",
               what);
}

}  // namespace trex
