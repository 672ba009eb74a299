// Byte-level BPE training that writes the tokenizer.json format DeepSeek-V4 uses (same pre-tokenizer regexes,
// ByteLevel steps, added special tokens), so small models run the same code path (docs/tokenizer.md §5).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace trex::tok {

// The added special tokens a trained tokenizer gets by default: the ones the DeepSeek-V4 chat format needs.
std::vector<std::string> default_special_tokens();

struct train_options {
    size_t vocab_size = 8192;   // total ids: special tokens + 256 byte tokens + merges
    bool split_digits = false;  // digits one by one (\p{N}) instead of runs of up to three (\p{N}{1,3})
    size_t min_frequency = 2;   // stop when the most frequent pair occurs fewer times
    std::vector<std::string> special_tokens = default_special_tokens();
    int threads = 0;  // counting threads (0: OpenMP's default)
    // Documents are counted in chunks of about this many bytes (in parallel), cut after a newline followed by a
    // non-space character: no piece of the trained pre-tokenizer spans such a cut, so the counts are exactly those
    // of the whole document. 0: no chunks.
    size_t chunk_bytes = size_t(1) << 20;
};

struct train_stats {
    size_t bytes = 0, words = 0, merges = 0, vocab_size = 0;
};

// The pre-tokenizer of a trained tokenizer (DeepSeek-V4's Split steps + ByteLevel), as tokenizer.json JSON.
nlohmann::ordered_json trained_pre_tokenizer(bool split_digits);

// Trains on the documents (bytes) and returns the tokenizer.json document. Deterministic: the same documents and
// options give the same file, whatever the thread count. Ties between equally frequent pairs go to the pair
// whose left token id is smaller, then whose right token id is smaller.
nlohmann::ordered_json train_bpe(const std::vector<std::string_view>& docs, const train_options& opt,
                                 train_stats* stats = nullptr);

// Writes JSON (indented) to path via a temporary file and a rename.
void write_json_atomic(const std::string& path, const nlohmann::ordered_json& j);

}  // namespace trex::tok
