#include "commands.hpp"

namespace trex::cli {

void register_all(CLI::App& app) {
    register_info(app);
}

}  // namespace trex::cli
