// The tensor inventory of a DeepSeek-V4 model: every tensor with its official checkpoint name (spec §4.4.1),
// logical shape, how it is trained, and how the release checkpoint stores it. Built from the config alone, so
// counting parameters never allocates weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trex/model/config.hpp"

namespace trex {

enum class tensor_role {
    weight,       // trainable fp32 parameter
    bias_buffer,  // ffn.gate.bias: fp32, updated by the aux-loss-free rule, no gradient
    hash_table,   // ffn.gate.tid2eid: integer table, frozen
};

enum class optim_group {
    muon,   // matrices (spec §3.3)
    adamw,  // embedding, head, norms, mHC base/scale, attn_sink, ape
    none,   // buffers
};

// How the HF release stores the tensor (spec §4.2, §4.4.1).
enum class release_format {
    bf16,
    f32,
    fp8_block,  // F8_E4M3 weight + F8_E8M0 128x128 block scale tensor `.scale`
    fp4_1x32,   // I8 packed FP4 weight [out, in/2] + F8_E8M0 1x32 scale tensor `.scale`
    i64,
};

struct tensor_spec {
    std::string name;            // e.g. "layers.3.attn.wq_a.weight"
    std::vector<int64_t> shape;  // logical shape, row-major; Linear weights are [out, in]
    tensor_role role = tensor_role::weight;
    optim_group group = optim_group::muon;
    release_format format = release_format::bf16;
    int layer = -1;   // -1: top level; 0..L-1: block; L: the MTP block
    int expert = -1;  // routed expert id, -1 otherwise
    bool is_mtp = false;
    bool is_indexer = false;    // attn.indexer.*: trained only by the indexer loss
    bool is_embedding = false;  // embed.weight
    bool is_head = false;       // head.weight
    int64_t numel() const;
};

// All tensors in a fixed order (top level, then layers 0..L-1, then MTP). Within a routed expert the order is
// w1, w3, w2 so that w1 and w3 are adjacent in the arena (one [2I, d] GEMM).
std::vector<tensor_spec> build_inventory(const model_config& cfg, bool include_mtp = true);

// Number of tensors the HF release layout holds for these specs (each fp8/fp4 tensor also has a `.scale`).
int64_t release_tensor_count(const std::vector<tensor_spec>& specs);

}  // namespace trex
