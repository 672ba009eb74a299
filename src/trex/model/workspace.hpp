// Scratch memory of a step, handed out in nested scopes: a bump allocator in place of numbered scratch slots.
//
// A function that needs temporaries opens a scope on the model's workspace and takes its buffers from it:
//
//     workspace::scope ws(ws_);
//     float* dq = ws.floats(N * H * c);  // [N,H,c]
//
// Contract:
// - floats(n) returns n floats, 64-byte aligned and uninitialised (they hold whatever an earlier scope left there).
//   Buffers that are live at the same time never overlap.
// - A buffer lives until the scope that handed it out closes. Scopes nest strictly (RAII, one thread at a time),
//   and only the innermost open scope hands out buffers: taking one from an outer scope while an inner one is open
//   is a bug, and is reported as one.
// - Memory is one block. What does not fit in it goes to overflow blocks (no buffer ever moves); when the outermost
//   scope closes after an overflow, the blocks are replaced by one block of the high-water size, so every step after
//   the first of a geometry takes its buffers without allocating.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "trex/kernels/memory.hpp"

namespace trex {

static_assert(sizeof(int32_t) == sizeof(float) && alignof(int32_t) <= alignof(float));

class workspace {
   public:
    class scope {
       public:
        explicit scope(workspace& ws);
        ~scope();
        scope(const scope&) = delete;
        scope& operator=(const scope&) = delete;

        float* floats(size_t n);  // n floats, live until this scope closes
        // n int32 values (the same memory as n floats: same size and alignment), live until this scope closes
        int32_t* ints(size_t n) { return reinterpret_cast<int32_t*>(floats(n)); }
        // n doubles (the memory of 2n floats; buffers are 64-byte aligned), live until this scope closes
        double* doubles(size_t n) { return reinterpret_cast<double*>(floats(2 * n)); }

       private:
        friend class workspace;
        workspace& ws_;
        size_t depth_;                        // this scope's nesting level (1 = outermost)
        size_t block_, block_used_, in_use_;  // where the workspace stood when this scope opened
    };

    // mem: where the blocks live (the model's backend: kernel_table::memory)
    explicit workspace(const device_allocator& mem = host_memory()) : mem_(&mem) {}
    workspace(const workspace&) = delete;
    workspace& operator=(const workspace&) = delete;

    size_t capacity_bytes() const;    // held now
    size_t high_water_bytes() const;  // the most in use at once so far
    size_t open_scopes() const { return depth_; }

   private:
    struct block {
        std::unique_ptr<float, void (*)(void*)> data{nullptr, nullptr};
        size_t size = 0, used = 0;  // floats
    };

    float* take(size_t n);
    void close(const scope& s);
    block make_block(size_t n) const;
    const device_allocator* mem_;

    std::vector<block> blocks_;
    size_t current_ = 0;     // the block buffers are taken from
    size_t in_use_ = 0;      // floats handed out to open scopes (block tails skipped over not counted)
    size_t high_water_ = 0;  // the most in_use_ has been
    size_t depth_ = 0;       // open scopes
};

}  // namespace trex
