// trex: full-parameter post-training of DeepSeek-V4-family MoE models. One binary, one file per subcommand.
#include <cstdio>
#include <exception>

#include "commands.hpp"
#include "trex/base/error.hpp"

int main(int argc, char** argv) {
    CLI::App app{"trex: DeepSeek-V4 post-training engine and OR data/eval pipeline"};
    app.require_subcommand(1);
    trex::cli::register_all(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    } catch (const trex::error& e) {
        std::fprintf(stderr, "trex: error: %s\n", e.what());
        return 1;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "trex: error: out of memory\n");
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "trex: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
