// From documents on disk to token shards (`trex data tokenize`, and the trainer's text / jsonl / messages sources).
//
// Inputs are files or directories (walked recursively, files sorted by path). Each file has a format:
//   text      the whole file is one document (.txt, .md, .markdown, and anything not .jsonl/.json under "auto")
//   jsonl     one JSON object per line; the document is the string field `text_key` ("text" by default)
//   messages  one JSON object per line with "messages" (OpenAI style: system/user/assistant, optional
//             reasoning_content): rendered with the DeepSeek-V4 chat encoding, and the loss mask covers the
//             assistant tokens only (src/trex/tokenizer/chat.hpp, docs/tokenizer.md §6)
//   auto      by extension; a .jsonl file is `messages` when its first record has "messages", else `jsonl`
//
// Text documents are encoded without the post-processor and framed explicitly: BOS + ids + EOS (the DeepSeek-V4
// special tokens, when the tokenizer has them and the options ask for them), every token a target. Chat documents
// come from encode_dsv4_chat, which adds BOS itself and carries the SFT mask.
//
// Output: a directory with shard-00000.tshard, ... (at most shard_tokens tokens each, documents never split) and
// manifest.json (inputs, options, tokenizer checksum, counts). It is built in a temporary sibling directory and
// renamed into place at the end: an interrupted or failed run leaves nothing half-written under the output name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trex/tokenizer/chat.hpp"

namespace trex {

struct tokenize_options {
    std::vector<std::string> inputs;  // files or directories
    std::string format = "auto";      // auto | text | jsonl | messages
    std::string text_key = "text";    // the field of a jsonl record that holds the document
    std::string tokenizer;            // tokenizer.json path ("" = the default DeepSeek-V4 one)
    std::string out_dir;
    int64_t shard_tokens = 16 << 20;  // tokens per shard file (a larger document gets a shard of its own)
    bool add_bos = true, add_eos = true;  // framing of text documents
    tok::chat_options chat;               // rendering and mask of messages documents
    uint32_t max_vocab = 0;               // when > 0: the tokenizer's ids must fit a model of this vocabulary
    bool force = false;                   // replace an existing output directory
    bool show_progress = false;
};

struct tokenize_summary {
    int64_t files = 0, documents = 0, skipped_empty = 0;
    int64_t tokens = 0, target_tokens = 0;  // target: tokens the loss mask trains on
    int64_t bytes = 0;                      // document bytes read (text, or the rendered chat string)
    std::vector<std::string> shards;        // file names in out_dir
    uint32_t vocab_size = 0;                // the tokenizer's id space (the shards' vocabulary)
    double seconds = 0;
    nlohmann::ordered_json to_json() const;
};

// Tokenizes the inputs into out_dir (see the top of this file). Errors name the file and line.
tokenize_summary tokenize_to_shards(const tokenize_options& opt);

// A fingerprint of everything that determines the shards (input paths, sizes and mtimes, the tokenizer's checksum,
// the options): the trainer re-tokenizes a source only when it changes.
std::string tokenize_fingerprint(const tokenize_options& opt);

}  // namespace trex
