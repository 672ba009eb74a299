// Each subcommand lives in its own file and registers itself on the CLI app.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace trex::cli {

void register_info(CLI::App& app);
void register_bench(CLI::App& app);
void register_bench_dist(CLI::App* bench);      // bench_dist.cpp: `trex bench dist`
void register_bench_comm(CLI::App* bench);      // bench_comm.cpp: `trex bench comm`
void register_bench_generate(CLI::App* bench);  // bench.cpp: `trex bench generate`
void register_bench_serve(CLI::App* bench);     // bench.cpp: `trex bench serve`
void register_train(CLI::App& app);
void register_convert(CLI::App& app);
void register_data(CLI::App& app);
void register_data_tokenize(CLI::App* data);  // `data tokenize` (data_tokenize.cpp)
void register_eval(CLI::App& app);
void register_plan(CLI::App& app);
void register_tokenizer(CLI::App& app);
void register_score(CLI::App& app);
void register_generate(CLI::App& app);
void register_serve(CLI::App& app);
void register_recipe(CLI::App& app);

// --qat none|release and --indexer-ties stable|torch (docs/model.md §3.4) on a command that loads a model: overrides
// of the checkpoint config's numerics (model_load_options::qat, indexer_ties; "" = keep). `prefix` goes before each
// description ("local: ").
void add_numerics_options(CLI::App* cmd, std::string& qat, std::string& indexer_ties, const std::string& prefix = "");

// Registers every subcommand (commands.cpp).
void register_all(CLI::App& app);

}  // namespace trex::cli
