// Scratch memory that keeps its pages between calls: a kernel's (or the optimizer's) large temporaries live in
// function-local `static thread_local` vectors grown on demand, so a training step does not page-fault on fresh
// allocations. Contents are NOT cleared between calls: callers write before they read. Take the pointer on the calling
// thread: inside an OpenMP region a worker thread's `thread_local` vector is a different (empty) one.
#pragma once

#include <cstddef>
#include <vector>

namespace trex {

template <typename T>
T* grow(std::vector<T>& v, size_t n) {
    if (v.size() < n) v.resize(n);
    return v.data();
}

}  // namespace trex
