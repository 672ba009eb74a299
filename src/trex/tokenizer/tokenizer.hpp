// A byte-level BPE tokenizer loaded from a Hugging Face tokenizer.json (the kind DeepSeek-V4 ships), with the
// exact semantics of HF `tokenizers` for the parts such files use (docs/tokenizer.md):
//   added tokens (matched first: non-normalized ones on the input, normalized ones on the rest; leftmost-longest;
//   single_word / lstrip / rstrip) -> normalizer (identity kinds only) -> pre-tokenizer (Split steps with
//   Oniguruma-compatible regexes on PCRE2 + JIT, then ByteLevel) -> BPE (vocab + ranked merges) ->
//   post-processor (ByteLevel, TemplateProcessing) ; decoder ByteLevel.
// Input is bytes: valid UTF-8 gives exactly HF's ids; invalid UTF-8 is split as if each maximal ill-formed subpart
// were U+FFFD and then encoded from its raw bytes, so decode(encode(x)) == x for every byte string.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "trex/tokenizer/bpe.hpp"
#include "trex/tokenizer/regex.hpp"

namespace trex::tok {

enum class split_behavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };
const char* split_behavior_name(split_behavior b);

struct split_step {
    std::string pattern;   // as written in the file
    bool is_regex = true;  // {"Regex": ...} or {"String": ...}
    split_behavior behavior = split_behavior::isolated;
    bool invert = false;
    regex re;
};

struct byte_level_options {
    bool add_prefix_space = false;
    bool trim_offsets = true;
    bool use_regex = true;
};

struct added_token {
    int32_t id = -1;
    std::string content;
    bool single_word = false, lstrip = false, rstrip = false, normalized = false, special = false;
};

// Leftmost-longest matcher over a set of added tokens (byte trie).
class token_matcher {
   public:
    void build(const std::vector<added_token>& tokens, const std::vector<int>& which);
    bool empty() const { return n_tokens_ == 0; }
    // First match starting at or after pos: true with [*s, *e) and the index (into the added-token list).
    bool find(const unsigned char* text, size_t n, size_t pos, size_t* s, size_t* e, int* token) const;

   private:
    struct node {
        std::vector<std::pair<uint8_t, int32_t>> next;  // sorted by byte
        int32_t token = -1;
    };
    std::vector<node> nodes_;
    bool first_[256] = {};
    size_t n_tokens_ = 0;
};

struct encode_scratch;

class tokenizer {
   public:
    tokenizer();
    ~tokenizer();
    tokenizer(tokenizer&&) noexcept;
    tokenizer& operator=(tokenizer&&) noexcept;

    // Loads a tokenizer.json; every problem is a trex::error with one line naming the file and the field.
    static tokenizer from_file(const std::string& path);
    static tokenizer from_json(const nlohmann::json& j, const std::string& name);

    // Encodes one document (any bytes). add_special_tokens applies the post-processor's template (HF's default is
    // true; DeepSeek's ByteLevel post-processor adds nothing). When starts is given, it receives for every id the
    // byte offset in text of the piece (pre-token or added token) the id comes from.
    void encode(std::string_view text, std::vector<int32_t>& ids, bool add_special_tokens = true,
                std::vector<uint32_t>* starts = nullptr) const;
    std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = true) const;
    // Encodes many documents in parallel (OpenMP; threads <= 0: the OpenMP default). Output i is document i.
    std::vector<std::vector<int32_t>> encode_batch(const std::vector<std::string_view>& docs, int threads = 0,
                                                   bool add_special_tokens = true) const;

    // Calls sink(piece) for every pre-token piece of text (raw bytes, after added-token extraction, splitting and
    // the ByteLevel step; added tokens are skipped): the words BPE training counts.
    void pre_tokenize(std::string_view text, const std::function<void(std::string_view)>& sink) const;

    // The bytes of ids (ByteLevel decoder without the final lossy UTF-8 step, so invalid UTF-8 round-trips).
    // Throws on an id outside the vocabulary.
    std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const;

    // Number of distinct ids (model vocab plus added tokens, as HF get_vocab_size(True)) and max id + 1.
    size_t vocab_size() const;
    int32_t id_space() const { return (int32_t)decoded_.size(); }
    // The id of a token string (added token content or byte-level vocab string), or -1.
    int32_t token_to_id(std::string_view token) const;
    // The token string of an id (added token content or byte-level vocab string); "" when unknown.
    std::string id_to_token(int32_t id) const;
    bool is_special(int32_t id) const;
    const std::vector<added_token>& added_tokens() const { return added_; }
    const bpe_model& model() const { return *model_; }
    const std::vector<split_step>& splits() const { return splits_; }
    const byte_level_options& byte_level() const { return byte_level_; }
    // One-line descriptions for `trex tokenizer info`.
    std::string normalizer_summary() const { return normalizer_summary_; }
    std::string pre_tokenizer_summary() const;
    std::string post_processor_summary() const { return post_summary_; }
    const std::string& name() const { return name_; }

   private:
    friend struct tokenizer_loader;
    void encode_valid(const char* shadow, size_t n, const char* orig, const uint32_t* map, bool add_special,
                      std::vector<int32_t>& ids, std::vector<uint32_t>* starts, encode_scratch& sc) const;
    void encode_text(const char* s, size_t a, size_t b, const char* orig, const uint32_t* map,
                     std::vector<int32_t>& ids, std::vector<uint32_t>* starts, encode_scratch& sc) const;
    void split_level(size_t level, const char* s, size_t a, size_t b, const char* orig, const uint32_t* map,
                     std::vector<int32_t>& ids, std::vector<uint32_t>* starts, encode_scratch& sc) const;
    void byte_level_piece(const char* s, size_t a, size_t b, const char* orig, const uint32_t* map,
                          std::vector<int32_t>& ids, std::vector<uint32_t>* starts, encode_scratch& sc) const;
    void bpe_piece(const unsigned char* p, size_t n, uint32_t start, std::vector<int32_t>& ids,
                   std::vector<uint32_t>* starts, encode_scratch& sc) const;
    void find_added(const char* s, size_t a, size_t b, const token_matcher& m,
                    std::vector<std::pair<size_t, int>>& cuts) const;
    encode_scratch& scratch() const;

    std::string name_;
    uint64_t serial_ = 0;
    std::string normalizer_summary_ = "none";
    bool byte_level_seen = false;
    std::vector<split_step> splits_;
    byte_level_options byte_level_;
    regex gpt2_regex_;  // ByteLevel use_regex
    std::unique_ptr<bpe_model> model_;
    std::vector<added_token> added_;
    token_matcher match_raw_, match_normalized_;
    std::vector<int32_t> prefix_ids_, suffix_ids_;  // TemplateProcessing (single)
    std::string post_summary_ = "none";
    std::vector<std::string> decoded_;  // bytes of each id
    std::vector<uint8_t> kind_;         // 0 unknown id, 1 model token, 2 added, 3 added special
};

}  // namespace trex::tok
