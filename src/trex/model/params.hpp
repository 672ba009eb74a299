// Parameters, gradients and integer tables of a model in flat arenas. Every tensor is a view at an offset, named by
// its official checkpoint name (spec §4.4.1), so sharding, checkpointing and import/export are offset arithmetic.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "trex/kernels/memory.hpp"
#include "trex/model/config.hpp"
#include "trex/model/inventory.hpp"
#include "trex/model/tensor_parallel.hpp"

namespace trex {

// 64-byte aligned float array in a backend's memory (host memory by default).
struct float_buffer {
    std::unique_ptr<float, void (*)(void*)> ptr{nullptr, nullptr};
    int64_t size = 0;
    void allocate(int64_t n, const device_allocator& mem = host_memory());  // zero-filled
    float* data() { return ptr.get(); }
    const float* data() const { return ptr.get(); }
};

// Under tensor parallelism (tp.size > 1) the store holds this rank's slices of the split tensors: specs[i].shape is
// the local shape, full_shape(i) the checkpoint's; split[i] says how tensor i is split (tensor_parallel.hpp). A
// tensor the `holds` predicate excludes (a routed expert another EP rank holds) has no storage here: held[i] is false
// and specs[i].shape[0] is 0.
struct param_store {
    model_config cfg;
    std::vector<tensor_spec> specs;
    tp_layout tp;
    std::vector<tp_split> split;  // [specs.size()]
    std::vector<bool> held;       // [specs.size()]
    std::vector<int64_t> offset;  // float offset of specs[i] in weights/grads; int offset in tables for hash tables
    float_buffer weights;         // trainable weights and fp32 buffers (gate.bias)
    float_buffer grads;           // same layout as weights (buffers keep zero gradient)
    std::vector<int32_t> tables;  // tid2eid tables
    int64_t n_floats = 0;

    // with_grads = false leaves `grads` unallocated (import/export, inference): half the memory.
    // mem: where the weight and gradient arenas live (the model's backend: kernel_table::memory)
    using holds_fn = std::function<bool(const tensor_spec&)>;
    explicit param_store(const model_config& c, bool include_mtp = true, bool with_grads = true, tp_layout tp = {},
                         const holds_fn& holds = {}, const device_allocator& mem = host_memory());
    bool holds_all() const;  // every tensor has its storage here (no TP slices, nothing held elsewhere)

    int index(const std::string& name) const;  // throws trex::error naming the tensor when absent
    bool has(const std::string& name) const { return by_name_.count(name) > 0; }
    float* w(const std::string& name) { return weights.data() + offset[index(name)]; }
    float* g(const std::string& name) { return grads.data() + offset[index(name)]; }
    int32_t* table(const std::string& name) { return tables.data() + offset[index(name)]; }
    float* w(int i) { return weights.data() + offset[i]; }
    float* g(int i) { return grads.data() + offset[i]; }
    const float* w(int i) const { return weights.data() + offset[i]; }
    const float* g(int i) const { return grads.data() + offset[i]; }

    bool sharded(int i) const { return split[i] != tp_split::none; }
    std::vector<int64_t> full_shape(int i) const;  // (of a held tensor)

    void zero_grads();
    // Fresh initialisation (docs/model.md §5): every value depends only on (seed, tensor name, element index of the
    // full tensor), so a TP rank's slices hold the values a single process has there.
    void init(uint64_t seed, double std = 0.006);
    int64_t trainable_count() const;  // number of trainable scalars

   private:
    std::unordered_map<std::string, int> by_name_;
};

// A TP-sharded store's weights and tables from a full one of the same model (every rank loads the same checkpoint
// into a full store, then keeps its slices).
void take_shards(param_store& local, const param_store& full);

// Checks on values read from files, shared by every loader (docs/checkpoints.md §3): a trex::error
// "<source>: tensor '<name>': element <j> ..." for the first bad value, with its position and the valid range.
//
// The integer table specs[spec] (tid2eid [vocab, experts_per_tok]): every value an expert id in
// [0, n_routed_experts), e.g. "...: element 15 = 99 (token 7, choice 1) is not an expert id in [0, 4)".
void check_table_values(const param_store& ps, int spec, std::span<const int64_t> values, const std::string& source);
// A float tensor (a weight, or a block scale) of this shape: every value finite, e.g.
// "...: tensor 'embed.weight': element 197 ([3, 5]) is +inf".
void check_finite_values(const std::string& name, const std::vector<int64_t>& shape, const float* values,
                         const std::string& source);
// How many of values[0, n) are NaN or infinite.
int64_t count_nonfinite(const float* values, int64_t n);

}  // namespace trex
