// A model with its weights from disk, for inference (scoring, generation, the eval `local` backend): the one place
// that decides what a checkpoint directory is.
//   - an HF release-layout directory (model.safetensors.index.json + config.json): load_hf_checkpoint;
//   - a `trex train` checkpoint (state.json): load_checkpoint, its config.json;
//   - a `trex train` run directory: its newest valid checkpoint.
// Errors are one line naming the directory (nothing else is read when the directory is none of these).
#pragma once

#include <memory>
#include <string>

#include "trex/model/model.hpp"

namespace trex {

struct model_load_options {
    std::string config;            // a config.json used instead of the checkpoint's ("" = the checkpoint's)
    bool allow_nonfinite = false;  // HF layout: accept NaN/Inf weights (a diagnostic run)
    // the numerics (docs/model.md §3.4) instead of the config's: "none" | "release", "stable" | "torch" ("" = keep)
    std::string qat, indexer_ties;
};

struct loaded_model {
    std::unique_ptr<dsv4_model> model;
    std::string dir;  // the checkpoint actually read (a run directory resolves to its newest checkpoint)
};

loaded_model load_model_for_inference(const std::string& dir, const model_load_options& opt = {});

}  // namespace trex
