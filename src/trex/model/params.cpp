#include "trex/model/params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "trex/base/error.hpp"
#include "trex/base/resources.hpp"
#include "trex/base/rng.hpp"

namespace trex {

void float_buffer::allocate(int64_t n, const device_allocator& mem) {
    TREX_CHECK(mem.allocate && mem.release,
               "the backend's kernel table has no memory allocator (kernel_table::memory)");
    size = n;
    void* p = mem.allocate((size_t)std::max<int64_t>(n, 1) * sizeof(float));
    ptr = std::unique_ptr<float, void (*)(void*)>((float*)p, mem.release);
}

param_store::param_store(const model_config& c, bool include_mtp, bool with_grads, tp_layout layout,
                         const holds_fn& holds, const device_allocator& mem)
    : cfg(c),
      specs(build_inventory(c, include_mtp)),
      tp(layout),
      split(specs.size(), tp_split::none),
      held(specs.size(), true) {
    int64_t fo = 0, io = 0;
    offset.resize(specs.size());
    for (size_t i = 0; i < specs.size(); i++) {
        if (tp.size > 1) {
            split[i] = tp_split_of(specs[i], tp.experts_split);
            specs[i].shape = tp_local_shape(specs[i].name, specs[i].shape, split[i], tp.size);
        }
        if (holds && specs[i].role == tensor_role::weight && !holds(specs[i])) {
            held[i] = false;
            specs[i].shape[0] = 0;  // no storage here
        }
        by_name_[specs[i].name] = (int)i;
        if (specs[i].role == tensor_role::hash_table) {
            offset[i] = io;
            io += specs[i].numel();
        } else {
            offset[i] = fo;
            fo += (specs[i].numel() + 15) / 16 * 16;  // 64-byte aligned views
        }
    }
    n_floats = fo;
    // checked before allocating: the arenas are zero-filled, so an over-committed allocation would be answered by the
    // OOM killer in the middle of the memset rather than by an error
    check_fits_in_memory(sizeof(float) * ((double)fo * (with_grads ? 2.0 : 1.0) + (double)io),
                         with_grads ? "the model's fp32 weights and gradients" : "the model's fp32 weights");
    weights.allocate(fo, mem);
    if (with_grads) grads.allocate(fo, mem);
    tables.assign(io, 0);
}

int param_store::index(const std::string& name) const {
    auto it = by_name_.find(name);
    TREX_CHECK(it != by_name_.end(), "tensor '{}' is not part of this model", name);
    return it->second;
}

std::vector<int64_t> param_store::full_shape(int i) const {
    std::vector<int64_t> s = specs[i].shape;
    if (split[i] == tp_split::rows) s[0] *= tp.size;
    if (split[i] == tp_split::cols) s.back() *= tp.size;
    return s;
}

bool param_store::holds_all() const {
    return tp.size == 1 && std::find(held.begin(), held.end(), false) == held.end();
}

void take_shards(param_store& local, const param_store& full) {
    TREX_CHECK(local.specs.size() == full.specs.size() && full.tp.size == 1,
               "internal: take_shards needs a full store of the same model");
    for (size_t i = 0; i < local.specs.size(); i++) {
        if (local.specs[i].role == tensor_role::hash_table) {
            std::memcpy(local.tables.data() + local.offset[i], full.tables.data() + full.offset[i],
                        sizeof(int32_t) * local.specs[i].numel());
            continue;
        }
        if (!local.held[i]) continue;
        tp_take_shard(local.weights.data() + local.offset[i], full.weights.data() + full.offset[i], full.specs[i].shape,
                      local.split[i], local.tp.rank, local.tp.size);
    }
}

void param_store::zero_grads() {
    if (grads.data()) std::memset(grads.data(), 0, sizeof(float) * n_floats);
}

int64_t param_store::trainable_count() const {
    int64_t n = 0;
    for (const auto& s : specs)
        if (s.role == tensor_role::weight) n += s.numel();
    return n;
}

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

void param_store::init(uint64_t seed, double std) {
    for (size_t i = 0; i < specs.size(); i++) {
        const tensor_spec& s = specs[i];
        const int64_t n = s.numel();
        const uint64_t stream = hash_name(s.name);
        if (s.role == tensor_role::hash_table) {
            // K distinct experts per token: partial Fisher-Yates over the E experts, seeded per token.
            const int E = cfg.n_routed_experts, K = (int)s.shape[1];
            int32_t* t = tables.data() + offset[i];
            std::vector<int32_t> perm(E);
            for (int64_t v = 0; v < s.shape[0]; v++) {
                for (int e = 0; e < E; e++) perm[e] = e;
                for (int k = 0; k < K; k++) {
                    const int j = k + (int)(uniform01(seed, stream, (uint64_t)v * K + k) * (E - k));
                    std::swap(perm[k], perm[std::min(j, E - 1)]);
                    t[v * K + k] = perm[k];
                }
            }
            continue;
        }
        float* p = weights.data() + offset[i];
        float fill = 0.0f;
        bool random = false;
        if (s.role == tensor_role::bias_buffer || ends_with(s.name, "attn_sink") || ends_with(s.name, ".ape") ||
            ends_with(s.name, "_base")) {
            fill = 0.0f;
        } else if (ends_with(s.name, "_scale")) {
            fill = 0.01f;
        } else if (s.shape.size() == 1) {  // RMSNorm weights
            fill = 1.0f;
        } else {
            random = true;
        }
        if (random) {
            const std::vector<int64_t> full = full_shape((int)i);
            const tp_split sp = split[i];
#pragma omp parallel for schedule(static)
            for (int64_t k = 0; k < n; k++)
                p[k] = (float)(std * normal01(seed, stream, (uint64_t)tp_full_index(k, full, sp, tp.rank, tp.size)));
        } else {
            for (int64_t k = 0; k < n; k++) p[k] = fill;
        }
    }
}

void check_table_values(const param_store& ps, int spec, std::span<const int64_t> values, const std::string& source) {
    const tensor_spec& s = ps.specs[spec];
    TREX_ASSERT(s.role == tensor_role::hash_table && s.shape.size() == 2 && (int64_t)values.size() == s.numel());
    const int64_t E = ps.cfg.n_routed_experts, K = s.shape[1];
    for (size_t j = 0; j < values.size(); j++) {
        const int64_t v = values[j];
        TREX_CHECK(v >= 0 && v < E,
                   "{}: tensor '{}': element {} = {} (token {}, choice {}) is not an expert id in [0, {})", source,
                   s.name, j, v, (int64_t)j / K, (int64_t)j % K, E);
    }
}

namespace {

// "[i, j]" of element k of a row-major tensor of this shape.
std::string position_of(const std::vector<int64_t>& shape, int64_t k) {
    std::vector<int64_t> idx(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
        idx[d] = shape[d] > 0 ? k % shape[d] : 0;
        k = shape[d] > 0 ? k / shape[d] : 0;
    }
    std::string out = "[";
    for (size_t d = 0; d < idx.size(); d++) out += (d ? ", " : "") + std::to_string(idx[d]);
    return out + "]";
}

int64_t numel_of(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

}  // namespace

void check_finite_values(const std::string& name, const std::vector<int64_t>& shape, const float* values,
                         const std::string& source) {
    const int64_t n = numel_of(shape);
    if (count_nonfinite(values, n) == 0) return;
    int64_t k = 0;
    while (std::isfinite(values[k])) k++;
    const char* what = std::isnan(values[k]) ? "nan" : values[k] > 0 ? "+inf" : "-inf";
    throw_error(fmt::format("{}: tensor '{}': element {} ({}) is {}", source, name, k, position_of(shape, k), what));
}

int64_t count_nonfinite(const float* values, int64_t n) {
    int64_t bad = 0;
#pragma omp simd reduction(+ : bad)
    for (int64_t k = 0; k < n; k++) bad += std::isfinite(values[k]) ? 0 : 1;
    return bad;
}

}  // namespace trex
