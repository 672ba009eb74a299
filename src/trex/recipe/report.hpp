// The recipe's report: the paper-style Pass@1 table (per set and form; base vs SFT-only vs CPT+SFT; the average),
// Pass@1 by problem family, general-text perplexity before and after (forgetting), the loss curves of every training
// stage, throughput and MFU, wall time per stage — report.md, report.html (SVG charts inlined, also written as
// files) and summary.json, all read back from what the stages wrote.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trex::recipe {

struct stage_time {
    std::string name;
    bool skipped = false;
    double wall_s = 0;
};

struct report_inputs {
    std::string profile, profile_summary, out_dir;
    std::vector<std::string> models;         // evaluated: base, sft-only, cpt-sft
    std::vector<std::string> training_runs;  // base, cpt, sft-only, cpt-sft
    std::vector<std::string> forms;          // eval prompt forms (lp, pulp)
    std::vector<std::string> sets;           // benchmark names, held-out synthetic ones first
    std::vector<stage_time> stages;
};

// Writes report.md, report.html, charts/*.svg and summary.json into in.out_dir; returns summary.json's content.
// summary.json: pass_at_1_avg {base, sft_only, cpt_sft} (the mean over the synthetic held-out sets and the forms),
// per-set values, real-benchmark values, perplexity per run, training throughput/MFU/losses, stage wall times.
nlohmann::ordered_json write_recipe_report(const report_inputs& in, std::string* report_md_path);

// "sft-only" -> "sft_only" (summary.json keys).
std::string summary_key(const std::string& model);

}  // namespace trex::recipe
