// `trex bench serve`: a bounded loopback load generator against `trex serve` (started in-process on a free port over
// the same model): at each concurrency, that many client threads send streaming /v1/completions requests until the
// request budget is spent. Reports requests/s, aggregate decode tokens/s, time to first token and inter-token
// latency (p50/p99), errors; and the two ratios of the targets (aggregate decode at the highest concurrency
// against concurrency 1; p99 inter-token latency at 8 against 1).
//
// Inter-token latency: the gap between a stream's consecutive chunks divided by the tokens the later one carries
// (the server holds text back over a possible stop string or a cut character, so a chunk can carry several; each
// chunk's logprobs list its tokens).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trex/eval/backend.hpp"
#include "trex/model/model.hpp"
#include "trex/serve/server.hpp"

namespace trex::bench {

struct bench_serve_options {
    std::vector<int> concurrency{1, 8, 32};
    int64_t requests = 64;    // per concurrency level
    int64_t prompt_len = 64;  // bytes of prompt text
    int64_t max_tokens = 32;  // per request (the end of sequence ignored)
    uint64_t seed = 1;
    int64_t prefill_chunk = serve::server_options{}.prefill_chunk;  // prompt tokens per prefill chunk
    bool interleave_prefill = true;  // the server's prefill inside its decoding steps (false: before them)
    bool speculative = false;        // the server decodes with MTP drafts
    bool keep_alive = true;          // a client's requests on one connection, as the OpenAI SDKs' clients send them
};

struct serve_level {
    int concurrency = 0;
    int64_t requests = 0, errors = 0, tokens = 0;
    std::string first_error;  // the first failed request's reason (empty without errors)
    double seconds = 0, requests_per_s = 0, decode_tokens_per_s = 0;
    double ttft_p50 = 0, ttft_p99 = 0, itl_p50 = 0, itl_p99 = 0;  // seconds
};

struct bench_serve_result {
    std::string model_name;
    std::string prefill;  // "interleaved" | "separate" (bench_serve_options::interleave_prefill)
    bool speculative = false;
    double mtp_acceptance = 0;  // speculative: drafts accepted ÷ verified, over every level
    std::vector<serve_level> levels;
    double decode_scaling = 0;   // decode tokens/s at the highest concurrency ÷ at the lowest
    double itl_p99_ratio_8 = 0;  // p99 inter-token latency at concurrency 8 ÷ at 1 (0 when either is not run)
};

bench_serve_result run_bench_serve(dsv4_model& model, const eval::text_codec& codec, const std::string& model_name,
                                   const bench_serve_options& opt);
nlohmann::json bench_serve_json(const bench_serve_result& r);
std::string format_bench_serve(const bench_serve_result& r);

}  // namespace trex::bench
