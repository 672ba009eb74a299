#include "trex/kernels/memory.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

namespace trex {

namespace {

void* host_allocate(size_t bytes) {
    const size_t n = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, n == 0 ? 64 : n);
    if (!p) throw std::bad_alloc();
    std::memset(p, 0, n == 0 ? 64 : n);
    return p;
}

void host_release(void* p) {
    std::free(p);
}

}  // namespace

const device_allocator& host_memory() {
    static const device_allocator m{host_allocate, host_release};
    return m;
}

}  // namespace trex
