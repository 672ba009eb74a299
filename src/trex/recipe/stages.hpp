// The recipe's stage runner: stages in order, each with the text that defines its inputs (command line, configs
// it was given) and the files it produces. A finished stage leaves state/<name>.json with the hash of its inputs
// (its definition + the output hashes of the stages it reads) and of its outputs; a rerun skips a stage whose
// record matches both, and runs again a stage whose definition, inputs or outputs changed (and, through the hashes,
// everything after it). An interrupted stage (no record) starts again from nothing, or with resume continues
// (trex train from its newest checkpoint, trex eval from its completion cache).
//
// Stages that are trex commands run as child processes of the trex binary (the running one in the CLI), their output in
// logs/<name>.log; a failure is a trex::error naming the stage, the exit status and the log's last lines.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace trex::recipe {

struct stage_context {
    std::string out_dir;                  // the recipe's directory
    bool resume = false;                  // continue an interrupted stage instead of restarting it
    bool interrupted = false;             // set for run(): the stage has no record but left outputs behind
    std::string trex = "/proc/self/exe";  // the trex binary the command stages run
};

struct stage {
    std::string name;
    std::vector<std::string> deps;     // stages whose outputs this one reads
    std::vector<std::string> outputs;  // files or directories (relative to out_dir) hashed as its result
    std::string definition;            // what defines the stage besides its deps (command line, config text)
    std::function<void(const stage_context&)> run;
};

struct stage_result {
    std::string name;
    bool skipped = false;  // done before, unchanged
    double wall_s = 0;     // of the run that produced the outputs (the recorded one when skipped)
};

// Runs the stages in order (each stage's deps must come before it). `on_start(name, skipped)` is called before
// each stage (progress lines).
std::vector<stage_result> run_stages(const std::vector<stage>& stages, const stage_context& ctx,
                                     const std::function<void(const stage&, bool skipped)>& on_start);

// Hash of files or directories (relative paths, sizes and contents; directories walked in sorted order), as 16
// hex digits. Missing paths hash as missing.
std::string hash_outputs(const std::string& root, const std::vector<std::string>& rel_paths);

// Runs the trex binary (ctx.trex) with args (argv[1..]) and waits; stdout and stderr are appended to log_path, or
// stdout goes to stdout_path (written whole: a temporary file renamed on success). Returns the exit status; throws
// trex::error naming `what` on a signal or an exit status not in ok_exits.
int run_trex(const stage_context& ctx, const std::string& what, const std::vector<std::string>& args,
             const std::string& log_path, const std::string& stdout_path = "", const std::vector<int>& ok_exits = {0});

}  // namespace trex::recipe
