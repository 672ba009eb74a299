// Training checkpoints for exact resume (issue 4): weights (incl. expert biases and hash tables), optimizer state,
// step, data cursor and run counters, written atomically under <run>/checkpoints/step-NNNNNNNN/ with a manifest of
// file sizes and xxHash64 checksums. Tensors are stored by their checkpoint names, so a checkpoint does not depend
// on how the run was laid out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trex/model/params.hpp"
#include "trex/optim/optimizer.hpp"

namespace trex {

struct checkpoint_state {
    int64_t step = 0;        // optimizer steps completed
    int64_t adam_steps = 0;  // AdamW bias-correction counter
    nlohmann::json data;     // data cursor (packer state)
    nlohmann::json run;      // counters and anything else the trainer restores (skipped steps, tokens seen, ...)
};

// Optimizer state in the weights' layout (full-size m and v arenas), whoever holds it (the single-process optimizer,
// or the ranks of a ZeRO-1 run gathered on one rank).
struct optim_state_ref {
    std::string kind;  // optim_config::kind
    float* m = nullptr;
    float* v = nullptr;
};

// Writes a checkpoint; keeps the newest `keep_last` (≥ 1) and deletes older ones. Returns the directory.
std::string save_checkpoint(const std::string& run_dir, const param_store& params, const optimizer* opt,
                            const checkpoint_state& state, int keep_last);
std::string save_checkpoint_state(const std::string& run_dir, const param_store& params, const optim_state_ref* opt,
                            const checkpoint_state& state, int keep_last);

// Reads a checkpoint directory into params (and optimizer state when opt is given) after verifying its manifest and
// checksums; throws trex::error naming the file or tensor on any mismatch, and naming the tensor, element, value and
// valid range for an integer table entry out of range (check_table_values: a tid2eid value not in [0, E)).
checkpoint_state load_checkpoint(const std::string& dir, param_store& params, optimizer* opt);
// The same into full-size state arenas (opt->kind must match the checkpoint's); the AdamW step count is in the result.
checkpoint_state load_checkpoint_state(const std::string& dir, param_store& params, const optim_state_ref* opt);

// Verifies a checkpoint directory (manifest, sizes, checksums) without loading it; returns "" if valid, otherwise
// the reason.
std::string verify_checkpoint(const std::string& dir);

// The newest valid checkpoint of a run ("" if none); invalid or partial ones are skipped and described in `skipped`.
std::string find_latest_checkpoint(const std::string& run_dir, std::vector<std::string>* skipped);

}  // namespace trex
