// What a layer needs to know about the running step besides its weights and its saved tensors: the config, the
// backend, the scratch workspace, the batch and its geometry, the options, the profile and the parallel hooks.
// The model builds one per stage forward or backward and hands it to every layer; a test builds one to run a layer
// on its own.
//
// Contract: every reference outlives the call it is passed to. tp == nullptr: no tensor parallelism (the layer holds
// and computes everything); dispatcher == nullptr: the routed experts are computed here.
#pragma once

#include <cstdint>

#include "trex/kernels/kernel_table.hpp"
#include "trex/model/config.hpp"
#include "trex/model/geometry.hpp"
#include "trex/model/step.hpp"
#include "trex/model/tensor_parallel.hpp"
#include "trex/model/workspace.hpp"

namespace trex {

struct layer_env {
    const model_config& cfg;
    const kernel_table& k;
    workspace& ws;              // temporaries: each layer call takes its own in a workspace::scope
    const batch_geometry& geo;  // documents, positions, compressed layouts, RoPE tables of the batch
    const batch_view& batch;    // the token ids (hash routing, embeddings), B and S (the balance loss)
    const step_options& opts;
    step_profile* prof = nullptr;  // sections are timed into it when not null
    tensor_parallel* tp = nullptr;
    expert_dispatcher* dispatcher = nullptr;

    int64_t N() const { return geo.N; }
};

// mHC sizes of a config.
mhc_dims mhc_dims_of(const model_config& cfg);

}  // namespace trex
