// `trex data rewrite`: the LLM-in-the-loop stage of the OR data (the paper's recipe), through any OpenAI-compatible
// endpoint (`trex serve`, vLLM, a hosted API).
//
// For each DP sample of a build (sft.jsonl), the instance is generated again from its meta (family, seed,
// difficulty, status; its canonical hash must match) and
//   1. back-translated: the model is shown the indexed formulation and the instance's data (not our text) and writes
//      the word problem;
//   2. gated: every number of the data is told, no number is told that the data lacks (set sizes and numbers inside
//      member names aside), the optimum is not given away;
//   3. formalised forward: the model gets only the new statement and writes an LP file (or a Python program), which
//      is run by the eval executor and judged against the sample's label (relative 1e-6; "no solution" labels need
//      an infeasible / unbounded report). A failed formalisation gets `repair_rounds` more tries, each told what
//      running the previous one gave, never the label.
// A kept statement replaces the sample's problem statement (the task request and the verified answer stay); every
// drop is counted by reason. Output: DIR/sft.jsonl (kept samples, meta.rewrite), DIR/drops.jsonl (id, stage,
// reason, detail) and DIR/report.json, written to a temporary directory renamed into place at the end.
#pragma once

#include <map>
#include <string>

#include "trex/eval/backend.hpp"
#include "trex/eval/execute.hpp"

namespace trex::eval {

struct rewrite_options {
    std::string build_dir;   // a `trex data build` output (sft.jsonl)
    std::string output_dir;  // must not exist unless force
    bool force = false;
    long limit = 0;                            // at most this many DP samples (0: all)
    int repair_rounds = 1;                     // extra formalisation tries after a failed one
    gen_params params = {0.7, 1.0, 4096, 42};  // sampling of both stages
    int concurrency = 4;                       // samples in flight (each with its own executor)
    bool show_progress = false;
};

struct rewrite_report {
    long samples = 0;                   // DP samples considered
    long kept = 0;                      // statements kept
    long kept_first = 0;                // ... whose first formalisation was right
    long kept_repair = 0;               // ... right after a repair round
    std::map<std::string, long> drops;  // reason -> count (the reasons are listed in rewrite.cpp)
    long requests = 0, prompt_tokens = 0, completion_tokens = 0;
    double seconds = 0;
};

rewrite_report run_rewrite(const rewrite_options& opt, backend& b, const exec_config& exec);

// The checks of step 2 on a statement (exposed for tests): "" when it passes, else the drop reason
// ("numbers_missing", "numbers_extra", "leaks_optimum", "empty") with the numbers concerned in *detail.
std::string gate_statement(const std::string& text, const nlohmann::ordered_json& data, bool has_optimum,
                           double optimum, std::string* detail);

}  // namespace trex::eval
