// Generation over the cached decoder (dsv4_model::decode): prompts prefilled in chunks, then every running sequence
// advanced one token per step in one ragged batch, sequences joining as others finish (continuous batching).
//
// Contract:
// - submit() queues a request (checked first: a bad one throws and nothing is queued) and gives its ticket; step()
//   prefills queued requests into free batch slots, then advances every running sequence by one token;
//   take_finished() hands over the results finished so far. run() is all three over a list of requests.
// - run() takes requests (prompt token ids, sampling, limits) and returns one result each, in order. A request ends
//   at a stop token id (not emitted, finish "stop"), when its text contains a stop string (the text cut before it,
//   finish "stop"; needs options.detokenize), after max_tokens (finish "length") or at options.max_context tokens
//   of prompt + output (finish "length").
// - The tokens of a request depend only on it (its prompt, parameters and seed), not on what shares its batch: the
//   decoder's arithmetic per sequence is the same alone or batched (tests/unit/model_decode_test.cpp) and each
//   request draws from its own generator.
// - on_token (optional) sees every emitted token as it is chosen: streaming.
// - Errors (empty prompt, a prompt at or past max_context, bad parameters) are thrown before anything runs.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "trex/infer/sampling.hpp"
#include "trex/model/model.hpp"

namespace trex::infer {

struct generation_request {
    std::vector<int32_t> prompt;
    sampling_params sampling;
    int64_t max_tokens = 256;
    std::vector<int32_t> stop_ids;
    std::vector<std::string> stop_strings;
};

struct generation_result {
    std::vector<int32_t> tokens;        // emitted tokens (no stop token)
    std::vector<token_choice> choices;  // one per emitted token: its log-probability and the top ones
    std::string text;                   // options.detokenize(tokens), cut before a stop string
    std::string finish = "length";      // "stop" | "length"
    int64_t prompt_tokens = 0;
};

struct generator_options {
    int64_t max_batch = 8;        // sequences advanced together per decoding step
    int64_t prefill_chunk = 512;  // prompt tokens per prefill call
    // Prompts prefilled inside the decoding steps (plain or speculative; the server's choice): an admitted request's
    // prompt goes through in chunks of prefill_chunk, each in the same decode call as the running sequences' next
    // tokens, at most prefill_chunk prompt tokens per step beyond the first chunk (so a long prompt delays each stream
    // by one chunk's work per step, not by its whole prefill). The chunk boundaries are those of a separate prefill.
    // Off: admission prefills whole prompts before the step (stats then time prefill and decoding apart; interleaved, a
    // mixed step's time is decode time).
    bool interleave_prefill = false;
    int64_t max_context = 4096;                                       // prompt + output tokens of one sequence
    std::function<std::string(std::span<const int32_t>)> detokenize;  // text of tokens (stop strings, result text)
    // MTP speculative decoding: each step feeds the chosen token and the MTP module's draft of the next one, verifies
    // the draft against the main model's logits (verify_draft: greedy output identical to plain decoding, sampling
    // keeping the target distribution) and emits one or two tokens; a rejected draft is cut out of the caches.
    bool speculative = false;
    // A draft source in place of the MTP module (prompt-lookup or n-gram drafting; tests): the draft of the token
    // after `emitted` (the request's output so far, its last token the one being fed).
    std::function<int32_t(size_t ticket, std::span<const int32_t> emitted)> drafter;
    // Sees every MTP draft as it is made (tracing, tests): the request's ticket, the drafted token and the MTP
    // module's logits it is the argmax of.
    std::function<void(size_t ticket, int32_t draft, std::span<const float> logits)> on_draft;
};

// Where the time went (wall seconds) and how much was done.
struct generation_stats {
    int64_t prefill_tokens = 0, decode_tokens = 0, decode_steps = 0;
    double prefill_seconds = 0, decode_seconds = 0;
    int64_t drafted = 0, accepted = 0;  // speculative: drafts verified and accepted
    double draft_seconds = 0;           // speculative: the MTP module's share of decode_seconds
    double acceptance() const { return drafted > 0 ? (double)accepted / (double)drafted : 0.0; }
};

class generator {
   public:
    generator(dsv4_model& model, generator_options opt);
    ~generator();
    // (ticket, token): called with every emitted token
    using token_callback = std::function<void(size_t ticket, const token_choice& choice)>;

    // Checks a request against the model and the options (throws naming the culprit).
    void check(const generation_request& q) const;
    size_t submit(generation_request q, token_callback on_token = {});  // returns the ticket (0, 1, … in order)
    bool step();                                                        // false when nothing was queued or running
    std::vector<std::pair<size_t, generation_result>> take_finished();
    bool idle() const;
    // Drops a queued or running request (its cache freed; no result). False when the ticket is not here (finished).
    bool cancel(size_t ticket);
    size_t batch_size() const;    // sequences in the decoding batch
    size_t queue_length() const;  // submitted, not yet prefilled
    size_t cache_bytes() const;   // the running sequences' caches

    // Submits every request (tickets = their indices when the generator was idle and fresh), steps until idle.
    std::vector<generation_result> run(const std::vector<generation_request>& requests,
                                       const token_callback& on_token = {});
    const generation_stats& stats() const { return stats_; }

   private:
    struct running;
    struct mtp_batch;
    // one decoding call's sequences: the running ones fed one token (two when speculating) and prompt chunks
    struct step_batch;
    void admit(running& r);
    void start(running& r);
    bool accept(running& r, const token_choice& c);
    void finish(running& r);
    void plain_step();
    void speculative_step();
    step_batch gather_step(bool speculative);
    // n prompt tokens of r went through (their final states when speculating; the last one's logits when the prompt
    // is through, which choose the first token); the MTP positions they complete join `w`
    void prompt_fed(running& r, int64_t n, const float* states, const float* last_logits, mtp_batch& w);
    // the MTP module over each sequence's positions whose next token is now known; the last logits give the drafts
    void draft(mtp_batch& w);

    dsv4_model& model_;
    generator_options opt_;
    generation_stats stats_;
    size_t next_ticket_ = 0;
    std::vector<running> queued_, active_;
    std::vector<std::pair<size_t, generation_result>> finished_;
    std::vector<float> logits_;  // the last step's [batch, V], kept: a 129K vocabulary is MBs per step
};

}  // namespace trex::infer
