// `trex serve`: an OpenAI-compatible HTTP server over the generator (infer/generator.hpp) with continuous batching.
//
//   POST /v1/chat/completions  DeepSeek-V4 chat encoding (thinking: reasoning_content before </think>, content after;
//                              or chat mode), stream as server-sent events ending in `data: [DONE]`, n, temperature,
//                              top_p, top_k, max_tokens, stop, seed, logprobs/top_logprobs, usage
//   POST /v1/completions       raw text after the BOS id
//   GET  /v1/models, /health, /metrics (Prometheus text)
//
// Contract:
// - One engine (run()'s thread) owns the generator: requests join the running decode batch between steps (each prompt
// is
//   prefilled in chunks when it is admitted), finished samples are handed back, streamed tokens are pushed as they
//   are chosen. HTTP handlers only queue requests and wait on their own channel.
// - Admission by cache memory: each request reserves the cache its prompt + max_tokens can reach (n samples, the
//   formula of model/cache_size.hpp); past --max-kv-mb it is answered 429 with Retry-After.
// - Errors are OpenAI error objects: 400 naming the field, 404 for another model, 401 for a wrong API key, 503 while
//   shutting down. A streaming client that disconnects cancels its samples (their caches freed).
// - stop(): no new requests (503); in-flight ones finish, or after the deadline are cancelled; run() then returns.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "trex/eval/backend.hpp"
#include "trex/infer/generator.hpp"
#include "trex/model/model.hpp"

namespace trex::serve {

struct server_options {
    std::string host = "127.0.0.1";
    int port = 8000;      // 0: any free port (bound_port() says which)
    std::string api_key;  // "" = no authentication
    std::string model_name = "trex";
    int64_t max_batch = 8;
    double max_kv_mb = 0;  // 0: no cache-memory admission limit
    int64_t max_context = 4096;
    int64_t prefill_chunk = 64;      // interleaved: the most prompt tokens a decoding step adds (docs/inference.md)
    bool interleave_prefill = true;  // prompts prefilled inside the decoding steps (generator_options)
    bool thinking = true;            // DeepSeek-V4 thinking mode (else chat mode)
    bool speculative = false;        // MTP speculative decoding
    double shutdown_deadline_s = 30;
    int http_threads = 96;  // concurrent connections served
};

class server {
   public:
    server(dsv4_model& model, const eval::text_codec& codec, server_options opt);
    ~server();
    // Binds (throws naming the address when it cannot) — bound_port() is valid after it.
    void bind();
    int bound_port() const;
    // Serves until stop(); returns when every request has finished. The engine runs on the calling thread (call it
    // from the thread the model's kernels have run on: OpenMP keeps one team per thread).
    void run();
    void stop();  // thread-safe, idempotent (a signal handler's thread may call it)
    // The engine's counts (tokens, seconds, MTP drafts); read after run() has returned.
    infer::generation_stats engine_stats() const;

   private:
    struct impl;
    std::unique_ptr<impl> p_;
};

}  // namespace trex::serve
