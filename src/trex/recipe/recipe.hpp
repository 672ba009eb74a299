// `trex recipe`: the T-Rex result in miniature, one command from data to the Pass@1 table (docs/recipe.md).
//
//   data, transfer-data   trex data build: SFT set, CPT documents, held-out instances of the training families;
//                         held-out test items of families the SFT set never contains
//   corpus                general text from Debian's documentation, decontaminated against every benchmark used
//   tokenizer             byte-level BPE (DeepSeek-V4's pre-tokenizer and special tokens) on the mixture
//   base                  pre-training of a V4-architecture model on the general text
//   cpt                   continued pre-training on the OR documents with a replay share of general text
//   sft-only, cpt-sft     SFT on the verified samples, from the base and from the CPT model
//   eval-<model>-<form>   trex eval on the held-out sets (and --bench files) for base, sft-only and cpt-sft
//   perplexity            general-text perplexity of every model (forgetting)
//   report                report.md / report.html with SVG charts, summary.json
//
// Every file the stages need (data build configs, the model config, training TOML, prompt templates) is written
// under <out>/configs/ first; the stage runner (stages.hpp) skips what is done and resumes what was interrupted.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trex::recipe {

struct recipe_options {
    std::string profile = "demo";
    std::string out_dir;                          // "" = runs/recipe-<profile>
    bool resume = false;                          // continue an interrupted stage
    std::vector<std::string> benches;             // extra benchmark files, NAME=FILE or FILE
    std::vector<std::string> corpus_roots;        // "" = the Debian documentation found on this machine
    std::string source_dir;                       // the source tree (configs/, .venv); "" = the build's
    std::string trex_binary;                      // the binary the command stages run; "" = this process's
    std::string cluster_run = "v4-flash-a3-cpt";  // profile cluster: the planner run file (cluster.hpp)
};

struct recipe_outcome {
    nlohmann::ordered_json summary;  // what summary.json holds
    std::string report_md;           // path of report.md
};

// Runs (or resumes) the recipe; the cluster profile plans and writes launch scripts instead (cluster.hpp). Progress
// lines go to stderr; throws trex::error naming the failing stage.
recipe_outcome run_recipe(const recipe_options& opt);

}  // namespace trex::recipe
