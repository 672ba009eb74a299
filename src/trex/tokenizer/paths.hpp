// Where scripts/setup.sh --with-tokenizers puts the DeepSeek-V4 tokenizer files.
#pragma once

#include <string>

namespace trex::tok {

// <source>/data/deepseek-v4/tokenizer.json (may not exist: check before use).
std::string default_tokenizer_path();
// <source>, for scripts and data.
std::string source_dir();

}  // namespace trex::tok
