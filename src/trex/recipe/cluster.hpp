// `trex recipe --profile cluster`: runs nothing. For a planner run file (model, hardware, device count, setup and a
// reference layout: by default the T-Rex V4-Flash CPT launcher, configs/plan/runs/v4-flash-a3-cpt.json) it asks
// `trex plan search` for the best fitting layouts, shows the planner's choice next to the reference layout, and
// writes launch scripts with that choice for the recipe's training stages (CPT, SFT): Slurm/mpirun for `trex train`
// and the Megatron-Core / MindSpeed-LLM argument lists with the same TP/PP/EP/ETP/CP/VPP, micro-batch, recompute and
// sequence choices (docs/recipe.md §4).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace trex::recipe {

struct cluster_options {
    std::string run = "v4-flash-a3-cpt";  // configs/plan/runs/<name>.json or a path
    std::string out_dir;                  // where plan.json, cluster.md and launch/ go
    std::string trex_binary;              // "" = this process
};

// Writes the outputs and returns {best, reference, scripts}. Throws trex::error when the planner fails (its message)
// or finds no fitting layout.
nlohmann::ordered_json run_cluster_profile(const cluster_options& opt);

// The Megatron-Core argument list of a planner layout (exposed for tests).
std::string megatron_arguments(const nlohmann::ordered_json& layout, const nlohmann::ordered_json& setup,
                               int num_layers);

}  // namespace trex::recipe
