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

}  // namespace trex::cli
