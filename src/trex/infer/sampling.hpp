// Choosing the next token from a row of logits (issue 20 item 3): greedy, or a draw from the temperature-scaled
// distribution restricted to the top-k tokens and to the smallest set whose probability reaches top-p; with the
// log-probabilities of the chosen token and of the n most likely ones.
//
// Contract:
// - Greedy (temperature ≤ 0): the highest logit, ties toward the lower id. Otherwise the candidates are ordered by
//   logit (ties toward the lower id), cut to top_k (0: all), then to the shortest prefix whose probability under
//   softmax(logits / temperature) reaches top_p, renormalised; one uniform draw from the request's generator picks
//   one by the cumulative sum in that order. The same seed and logits give the same tokens on every machine (the
//   draw is splitmix64, the sums double). Only as many candidates are sorted as the cut needs: a full vocabulary
//   without top-k and top-p is drawn from in id order (the same distribution), so a 129K vocabulary costs one pass.
// - Log-probabilities (when asked for: logprobs, or top_logprobs > 0) are the model's: log softmax of the raw logits
//   (before temperature, top-k and top-p), in double, as OpenAI's logprobs report them. Not asked for, they are 0.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace trex::infer {

struct sampling_params {
    double temperature = 0.0;  // ≤ 0: greedy
    double top_p = 1.0;        // (0, 1]
    int top_k = 0;             // 0: no cut
    uint64_t seed = 0;         // the request's generator starts from it
    bool logprobs = false;     // report the chosen token's log-probability
    int top_logprobs = 0;      // how many of the most likely tokens to report with each choice (implies logprobs)
};

// A request's random stream (splitmix64): reproducible from its seed.
class token_rng {
   public:
    explicit token_rng(uint64_t seed) : state_(seed) {}
    double uniform();  // in [0, 1)

   private:
    uint64_t state_;
};

struct token_choice {
    int32_t id = -1;
    double logprob = 0;                           // log p(id) under the model
    std::vector<std::pair<int32_t, double>> top;  // the top_logprobs most likely tokens, most likely first
};

// Checks the parameters (a culprit-naming error for a temperature < 0 … top_p outside (0, 1], top_k < 0).
void validate(const sampling_params& p);

token_choice sample_token(const float* logits, int64_t vocab, const sampling_params& p, token_rng& rng);

// Speculative decoding's verification of a draft token d proposed by a deterministic drafter (MTP's argmax): greedy
// (temperature ≤ 0) accepts d when it is the argmax and otherwise chooses the argmax; sampling accepts d with its
// probability under the target distribution (temperature, top-k, top-p as sample_token) and otherwise draws from that
// distribution without d, renormalised — so the emitted token follows the target distribution exactly (Leviathan et
// al. 2023 with a one-hot draft). Returns whether d was accepted; *choice is the emitted token (log-probabilities as
// sample_token).
bool verify_draft(const float* logits, int64_t vocab, const sampling_params& p, int32_t draft, token_rng& rng,
                  token_choice* choice);

// log softmax(logits)[id] in double
double token_logprob(const float* logits, int64_t vocab, int32_t id);

}  // namespace trex::infer
