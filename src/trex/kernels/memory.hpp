// A backend's memory: the buffers its kernels read and write — the parameter and gradient arenas, the activation
// arena, the workspace — are allocated through it (kernel_table::memory), so a device backend places them on the
// device with no change to the model. The CPU backend's is host memory.
#pragma once

#include <cstddef>

namespace trex {

struct device_allocator {
    // `bytes` bytes (at least 1), 64-byte aligned, zero-filled; throws std::bad_alloc when it cannot.
    void* (*allocate)(size_t bytes) = nullptr;
    // Frees a pointer allocate returned (nullptr: nothing).
    void (*release)(void* p) = nullptr;
};

// Host memory (aligned_alloc, zero-filled; free): the CPU and reference backends'.
const device_allocator& host_memory();

}  // namespace trex
