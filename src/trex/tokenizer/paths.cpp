#include "trex/tokenizer/paths.hpp"

namespace trex::tok {

std::string source_dir() {
    return TREX_SOURCE_DIR;
}
std::string default_tokenizer_path() {
    return source_dir() + "/data/deepseek-v4/tokenizer.json";
}

}  // namespace trex::tok
