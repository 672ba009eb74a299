// Import and export of the DeepSeek-V4 HF release layout (spec §4.4; docs/checkpoints.md): a directory with
// `config.json`, `model.safetensors.index.json` and shards `model-0000k-of-0000n.safetensors` (or one
// `model.safetensors`), tensors under their native names (`embed.weight`, `layers.{i}.…`, `mtp.0.…`).
//
// Import reads every inventory tensor of a param_store into its fp32 arena (tid2eid into the int32 tables),
// shard by shard through mmap, accepting per tensor:
//   * plain BF16 / F32 / F16 (any float tensor);
//   * F8_E4M3 + a 128×128 block scale `<base>.scale` (or legacy `<base>.weight_scale_inv`), F8_E8M0 or F32, for
//     tensors the release stores as FP8 (and for routed experts);
//   * I8 packed FP4 E2M1 [out, in/2] + a 1×32 scale [out, ceil(in/32)], F8_E8M0 or F32, for routed experts;
//   * I64 (or I32) tid2eid with values in [0, n_routed_experts).
// Non-finite values are refused unless hf_load_options::allow_nonfinite: a NaN or infinite block scale (UE8M0 0xFF
// is NaN) is an error naming the scale tensor, a weight that decodes to NaN / ±inf (a NaN or inf BF16/F16/F32 value,
// an FP8 NaN code, or finite codes times a scale that overflow) one naming the weight, both with the first bad
// element.
// Every inventory tensor must be present exactly once with its shape; a tensor the model does not have is an error,
// except the MTP embedding/head duplicates (`mtp.*emb*`, `mtp.*head*`) and, for a store built without MTP, all of
// `mtp.*` (reported as ignored). All headers are validated before any weight is written. Errors are one line
// naming the file and the tensor.
//
// Export writes the same layout into a temporary sibling directory (every file fsynced), then renames it to the
// destination: BF16 by default (F32 tensors stay F32, tid2eid I64), or re-quantised to FP8 (128×128, UE8M0) for
// the tensors the release stores as FP8 and, with fp4, FP4 (1×32, UE8M0) for the routed experts.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trex/model/params.hpp"

namespace trex {

enum class hf_dtype {
    bf16,  // everything BF16 except the release's F32 tensors and I64 tid2eid
    fp8,   // + FP8 E4M3 128×128 block weights (experts too: the Base layout)
    fp4,   // + FP8 for the release's FP8 tensors, FP4 E2M1 1×32 for routed experts (the instruct layout)
};
const char* hf_dtype_name(hf_dtype d);
hf_dtype hf_dtype_from_name(const std::string& name);  // "bf16" | "fp8" | "fp4"; throws otherwise

struct hf_save_options {
    hf_dtype dtype = hf_dtype::bf16;
    uint64_t max_shard_bytes = 5ull << 30;  // data bytes per shard (a tensor larger than this gets its own shard)
    bool overwrite = false;                 // replace an existing non-empty destination
};

struct hf_load_options {
    bool allow_nonfinite = false;  // accept NaN / inf weights and scales (counted in hf_io_report::nonfinite)
};

struct hf_io_report {
    int64_t tensors = 0;  // safetensors entries read/written (scales included)
    int64_t files = 0;    // shards
    uint64_t bytes = 0;   // tensor data bytes read/written
    double seconds = 0;
    std::vector<std::string> ignored;          // tensors skipped on import
    std::map<std::string, int64_t> encodings;  // "BF16", "F32", "F8_E4M3+F8_E8M0", "I8(FP4)+F8_E8M0", ... → count
    int64_t nonfinite = 0;                     // imported weights that are NaN or ±inf (with allow_nonfinite)
};

// The config of a checkpoint directory (its config.json).
model_config load_hf_config(const std::string& dir);

// Reads `dir` into `ps` (weights, gate biases and tid2eid tables). When `dir` has a config.json its tensor
// inventory must match the store's (same names and shapes). On error the store's contents are unspecified.
hf_io_report load_hf_checkpoint(param_store& ps, const std::string& dir, const hf_load_options& opts = {});

// Writes `ps` to `dir` (config.json, index, shards), atomically.
hf_io_report save_hf_checkpoint(const param_store& ps, const std::string& dir, const hf_save_options& opts = {});

// The config.json an export of `cfg` in `dtype` carries (quantization_config and expert_dtype set accordingly,
// torch_dtype bfloat16).
model_config hf_export_config(const model_config& cfg, hf_dtype dtype);

}  // namespace trex
