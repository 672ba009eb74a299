// `trex data build`: generate, verify, render and package OR data (SFT samples, CPT documents, held-out test sets)
// from a JSON config. Work is spread over forked worker processes (Cbc keeps static state, so one solver per
// process); results are assembled in slot order, so the output bytes depend only on the config.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trex/optmodel/solvers/verify.hpp"

namespace trex::optmodel {

struct build_config {
    std::string source;  // the config file (for messages)
    uint64_t seed = 1;
    std::string output_dir;
    // SFT samples
    long sft_count = 0;
    std::vector<std::pair<std::string, double>> families;         // name -> weight (all families, weight 1: balanced)
    std::vector<std::pair<std::string, double>> representations;  // "DP"/"DT"/"DPS" -> weight
    std::vector<std::pair<std::string, double>> categories;       // "formulation"/"formulation_code"/"code"/"lp_file"
    std::vector<std::pair<std::string, double>> dialects;         // "pulp"/"gurobipy" -> weight
    int difficulty_lo = 1, difficulty_hi = 3;
    bool reasoned = true;  // "answer": "reasoned" (<think> first) or "direct" (the artefact alone; render_answer)
    double infeasible_share = 0.04, unbounded_share = 0.02;
    // held-out test sets (never used for training: distinct canonical hashes)
    long test_count = 0;
    // CPT documents
    long cpt_count = 0;
    bool cpt_resources = true;
    verify_options verify;
    int workers = 0;              // 0: number of cores
    std::string python = "auto";  // "auto" (project venv / TREX_PYTHON), "off" (code answers not re-executed), path
    nlohmann::ordered_json echo;  // the config as parsed (written to the manifest)
};

// Parses and validates a config; errors are one line "FILE: key 'k': what".
build_config parse_build_config(const std::string& path);

struct build_report {
    double seconds = 0;
    long sft = 0, test = 0, cpt = 0, resources = 0;
    long attempts = 0;
    std::map<std::string, long> drops;  // gate -> count
    // the drops that mean two of our own components disagreed (solvers, re-executed answers) or a solver crashed,
    // per family: "family gate" -> count. Design drops (few_binding, trivial, design_status, duplicate) are not here.
    std::map<std::string, long> faults;
    std::vector<std::string> warnings;  // what the build could not do as configured (a design share no family has)
};

// Runs the build. Output goes to a temporary directory next to output_dir that is renamed into place at the end;
// on any error it is removed (nothing half-written). An existing output_dir is an error unless `force`.
build_report run_build(const build_config& cfg, bool force, bool show_progress);

}  // namespace trex::optmodel
