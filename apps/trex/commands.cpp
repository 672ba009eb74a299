#include "commands.hpp"

namespace trex::cli {

void register_all(CLI::App& app) {
    register_info(app);
    register_bench(app);
    register_train(app);
    register_convert(app);
    register_data(app);
    register_eval(app);
    register_plan(app);
    register_tokenizer(app);
    register_score(app);
    register_generate(app);
    register_serve(app);
    register_recipe(app);
}

void add_numerics_options(CLI::App* cmd, std::string& qat, std::string& indexer_ties, const std::string& prefix) {
    cmd->add_option("--qat", qat, prefix + "numerics instead of the checkpoint config's: none | release")
        ->check(CLI::IsMember({"none", "release"}));
    cmd->add_option("--indexer-ties", indexer_ties,
                    prefix + "indexer top-k ties instead of the checkpoint config's: stable | torch")
        ->check(CLI::IsMember({"stable", "torch"}));
}

}  // namespace trex::cli
