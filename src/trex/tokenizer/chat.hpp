// DeepSeek-V4 chat encoding of OpenAI-style messages (system / user / assistant, with or without
// reasoning_content) and the SFT loss mask. The rules follow the release's encoding/encoding_dsv4.py
// (encode_messages with thinking_mode "chat" or "thinking"); docs/tokenizer.md §6 states them and the mask.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "trex/tokenizer/tokenizer.hpp"

namespace trex::tok {

struct chat_message {
    std::string role;  // "system", "user" or "assistant"
    std::string content;
    std::optional<std::string> reasoning_content;
};

struct chat_options {
    bool thinking = false;         // thinking_mode "thinking" (else "chat")
    bool drop_thinking = true;     // drop the reasoning of assistant turns before the last user message
    bool add_bos = true;           // add_default_bos_token
    bool train_last_only = false;  // the mask trains only the last assistant message (else every assistant one)
};

struct chat_encoding {
    std::string text;           // the rendered prompt string (what encoding_dsv4.encode_messages returns)
    std::vector<int32_t> ids;   // the tokenizer's ids of text
    std::vector<uint8_t> mask;  // 1 on tokens SFT trains on
    std::vector<std::pair<size_t, size_t>> trained;  // byte ranges of text the mask covers
};

// Messages from JSON: an array, or an object with "messages". Unsupported roles or fields that change the
// official rendering (tools, tool_calls, task, ...) are one-line errors naming the message and field.
std::vector<chat_message> parse_chat_messages(const nlohmann::json& j, const std::string& where);

// The rendered string and the byte ranges of the trained assistant parts.
std::string render_dsv4_chat(const std::vector<chat_message>& msgs, const chat_options& opt,
                             std::vector<std::pair<size_t, size_t>>* trained = nullptr);

// Renders, encodes (special-token strings in the rendered text are matched, as the release's tokenizer does) and
// builds the mask: a token is trained when the piece it comes from starts inside a trained range.
chat_encoding encode_dsv4_chat(const tokenizer& t, const std::vector<chat_message>& msgs, const chat_options& opt);

namespace dsv4 {
inline constexpr const char* bos = "<｜begin▁of▁sentence｜>";
inline constexpr const char* eos = "<｜end▁of▁sentence｜>";
inline constexpr const char* user = "<｜User｜>";
inline constexpr const char* assistant = "<｜Assistant｜>";
inline constexpr const char* think_start = "<think>";
inline constexpr const char* think_end = "</think>";
}  // namespace dsv4

}  // namespace trex::tok
