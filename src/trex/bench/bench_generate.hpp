// `trex bench generate`: prefill and decode throughput of the cached decoder (infer/generator.hpp), at batch 1 and
// at a batch, on a config with seeded random weights or a checkpoint; the batch-1 decode rate against the bound the
// memory bandwidth measured in the same run sets (bytes of weights and cache read per decoded token ÷ GB/s); the
// cache parity (decode logits against a full recompute of the same prefix by the training forward); and with --peer
// HF transformers' cached `generate` on the same weights (tests/reference/peer_generate.py), greedy tokens compared
// one by one.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trex/model/model.hpp"

namespace trex::bench {

struct bench_generate_options {
    int64_t batch = 8;         // sequences decoded together (the batched measurement)
    int64_t prompt_len = 128;  // tokens per prompt
    int64_t new_tokens = 64;   // tokens generated per sequence
    int64_t prefill_chunk = 512;
    uint64_t seed = 1;  // prompts (and the weights of a --config model)
    bool peer = false;
    std::string python;       // "" = <source>/.venv/bin/python
    std::string peer_script;  // "" = <source>/tests/reference/peer_generate.py
    std::string peer_threads = "auto";
    bool speculative = false;  // also time MTP speculative decoding at batch 1 (greedy, against plain)
    bool profile = false;      // decode again at batch 1 and at the batch, section by section (untimed runs)
};

// Where a decoding step's time goes: milliseconds per step by section (dsv4_model::set_decode_profile's names), the
// rest of the step (sampling, the generator's bookkeeping) as "other".
struct decode_profile {
    int64_t batch = 0, steps = 0;
    double step_ms = 0;
    std::map<std::string, double> section_ms;
};

struct bench_generate_result {
    std::string model_name;
    int threads = 0;
    int64_t batch = 0, prompt_len = 0, new_tokens = 0;
    double prefill_tokens_per_s = 0;  // the batch's prompts, chunked prefill
    double decode_tokens_per_s = 0;   // aggregate at decode_batch
    int64_t decode_batch = 0;
    double decode_tokens_per_s_batch1 = 0;  // one sequence
    double batch_speedup = 0;               // decode_tokens_per_s / decode_tokens_per_s_batch1
    // the physical bound of batch-1 decoding at the mean context (prompt + new/2): every byte read once per token
    double weight_bytes_per_token = 0, cache_bytes_per_token = 0;
    double bandwidth_gbps = 0;  // measured read bandwidth
    double llc_bytes = 0;       // last-level cache: a model that fits is not bound by DRAM bandwidth
    double bandwidth_bound_tokens_per_s = 0;
    double fraction_of_bound = 0;  // decode_tokens_per_s_batch1 / bandwidth_bound_tokens_per_s
    // the same bound for a step of the batch: the expert weights of E·(1 − (1 − K/E)^B) distinct experts per MoE
    // layer (uniform routing) read once for the B tokens, the rest once; its ratio to the batch-1 bound is the most
    // batching can give
    double bandwidth_bound_tokens_per_s_batch = 0, bound_batch_speedup = 0;
    double cache_parity_max_rel = 0;     // max over positions of max|decode − forward| / max|forward| per logits row
    std::vector<int32_t> greedy_tokens;  // batch-1 greedy output (compared with the peer's)
    // --speculative: batch-1 greedy decoding with MTP drafts
    bool has_speculative = false;
    // medians of `speculative_reps` runs alternated with as many plain ones (speedup: the medians' ratio)
    int speculative_reps = 0;
    double speculative_decode_tokens_per_s = 0, speculative_speedup = 0, mtp_acceptance = 0;
    double plain_decode_tokens_per_s = 0;  // the plain runs alternated with the speculative ones
    // per decoding step (medians): plain, speculative (verification + draft), and the MTP draft within it; the
    // speedup if verifying two tokens cost one plain step: (1 + acceptance) · plain / (plain + draft)
    double plain_step_ms = 0, speculative_step_ms = 0, mtp_draft_ms = 0, speculative_ceiling = 0;
    bool speculative_identical = false;  // its tokens are the plain greedy ones
    // peer
    bool has_peer = false;
    double peer_decode_tokens_per_s = 0, peer_prefill_tokens_per_s = 0;
    double ratio_vs_peer = 0;  // decode_tokens_per_s_batch1 / peer_decode_tokens_per_s
    double greedy_match = 0;   // leading tokens equal to the peer's ÷ new_tokens (1: identical)
    int64_t greedy_first_mismatch = -1;
    std::string peer_version, peer_threads;
    // --profile: batch 1, then the batch
    std::vector<decode_profile> profiles;
};

bench_generate_result run_bench_generate(dsv4_model& model, const std::string& model_name,
                                         const bench_generate_options& opt);
nlohmann::json bench_generate_json(const bench_generate_result& r);
std::string format_bench_generate(const bench_generate_result& r);

}  // namespace trex::bench
