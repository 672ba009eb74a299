// Scoring text through the engine (`trex score`): the log-probability the model gives every token of a sequence
// given the tokens before it, the mean negative log-likelihood and the perplexity, and optionally every position's
// logits — so anyone can compare this forward to another implementation without writing C++.
//
// A sequence of n tokens is scored in chunks of at most `chunk` tokens (the model's forward over each chunk alone,
// no context carried across): position t of a chunk predicts token t+1 of the sequence, so every token but the first
// is predicted exactly once. Log-probabilities are log_softmax(logits)[next] in double from the forward's fp32
// logits; the mean NLL of a chunk equals the model's LM loss of that chunk (checked by the tests).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trex/model/model.hpp"

namespace trex::eval {

struct score_options {
    int64_t chunk = 4096;     // tokens per forward
    bool per_token = false;   // keep every predicted token's log-probability
    std::string dump_logits;  // write logits.<seq>.<chunk> [S, V] and input_ids.<seq>.<chunk> [S] here (safetensors)
};

struct sequence_score {
    int64_t tokens = 0;              // tokens predicted (n − 1)
    int64_t chunks = 0;              // forwards run
    double nll = 0;                  // Σ −log p(token | tokens before it in its chunk)
    std::vector<double> logprobs;    // per predicted token, in order (per_token)
    std::vector<int32_t> predicted;  // the tokens those are of (per_token)
};

struct score_result {
    std::vector<sequence_score> sequences;
    int64_t tokens = 0;
    double nll = 0;
    double mean_nll() const { return tokens > 0 ? nll / (double)tokens : 0.0; }
    double perplexity() const;
};

// Every sequence must hold at least 2 tokens, each in [0, vocab_size) (checked: one line naming the sequence).
score_result score_sequences(dsv4_model& model, const std::vector<std::vector<int32_t>>& sequences,
                             const score_options& opt);

// A token file: one sequence per non-empty line, ids separated by spaces or commas, optionally in [ ] (a JSONL
// of arrays reads the same). Errors name the file, the line and the offending text.
std::vector<std::vector<int32_t>> read_token_file(const std::string& path);

// The ids of one such line (errors name `where`).
std::vector<int32_t> parse_token_line(const std::string& line, const std::string& where);

}  // namespace trex::eval
