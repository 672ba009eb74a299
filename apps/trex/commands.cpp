#include "commands.hpp"

namespace trex::cli {

void register_all(CLI::App& app) {
    (void)app;
}

}  // namespace trex::cli
