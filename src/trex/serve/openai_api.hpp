// The OpenAI HTTP API as `trex serve` speaks it: request bodies of /v1/chat/completions and /v1/completions checked
// field by field into a request the generator can run, and the response objects (whole, or as server-sent-event
// chunks) built from its results.
//
// Contract: parse_* never throws on bad input: it returns an api_error naming the field (HTTP status, OpenAI error
// type, param) — a client sees {"error": {"message", "type", "param", "code"}}. Fields the server does not use are
// ignored, as OpenAI does with unknown ones.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trex/infer/generator.hpp"

namespace trex::serve {

struct api_error {
    int status = 400;
    std::string type = "invalid_request_error";
    std::string message;
    std::string param;  // "" → null
    std::string code;   // "" → null
    nlohmann::json body() const;
};

struct chat_turn {
    std::string role, content;
};

// What a completion request asks for (both endpoints).
struct api_request {
    bool chat = true;
    std::string model;
    std::vector<chat_turn> messages;  // chat
    std::string prompt;               // completions
    int n = 1;
    bool stream = false, include_usage = false;
    int64_t max_tokens = 256;
    double temperature = 1.0, top_p = 1.0;
    int top_k = 0;
    std::optional<uint64_t> seed;
    std::vector<std::string> stop;
    bool logprobs = false;
    int top_logprobs = 0;
    bool ignore_eos = false;  // vLLM's extension: do not stop at the end-of-sequence token
};

// Parses a body; `served_model` is the one model name answered (404 for another; an absent "model" is that one).
std::optional<api_error> parse_request(const std::string& body, bool chat, const std::string& served_model,
                                       api_request* out);

// The generator's sampling for sample i of a request (seed + i when seeded; else a fresh seed from `entropy`).
infer::sampling_params sampling_of(const api_request& r, int i, uint64_t entropy);

// One finished sample as an OpenAI choice; thinking: the text before the first </think> is reasoning_content.
struct sample_out {
    std::string text;
    std::string finish;  // "stop" | "length"
    std::vector<infer::token_choice> choices;
    std::vector<std::string> token_texts;  // for logprobs
};

struct usage_counts {
    int64_t prompt = 0, completion = 0;
};

nlohmann::json response_object(const api_request& r, const std::string& id, int64_t created,
                               const std::vector<sample_out>& samples, const usage_counts& usage, bool thinking);
// A streaming chunk: a text delta (and with finish non-empty, the sample's end) of sample `index`; chat in thinking
// mode sends the reasoning before </think> as reasoning_content deltas.
// With logprobs requested, `tokens` are the sample's tokens this chunk carries (their texts in token_texts).
nlohmann::json chunk_object(const api_request& r, const std::string& id, int64_t created, int index,
                            const std::string& delta, const std::string& finish, bool first,
                            const std::string& reasoning_delta = "", const sample_out* tokens = nullptr);
nlohmann::json usage_chunk(const api_request& r, const std::string& id, int64_t created, const usage_counts& usage);

// The text of a sample, cut before the first stop string.
std::string cut_at_stop(const std::string& text, const std::vector<std::string>& stops);

}  // namespace trex::serve
