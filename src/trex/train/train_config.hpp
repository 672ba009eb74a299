// A training run's configuration: a TOML file (configs/train-*.toml) with every field overridable on the command line
// (`--set section.key=value`, the value in TOML syntax). Unknown keys and wrong types are one-line errors naming the
// key.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trex/optim/optimizer.hpp"

namespace trex {

struct data_source_config {
    // "synthetic-chain" (a learnable corpus, no files), "shards" (.tshard files from `trex data tokenize`), or
    // "text" / "jsonl" / "messages" / "documents" (= auto by extension): files tokenized with data.tokenizer into
    // <out_dir>/data/source-<i>/ at start-up (reused while inputs, tokenizer and options are unchanged)
    std::string kind;
    std::string path;  // file or directory (unused by synthetic-chain)
    double weight = 1.0;
};

struct train_config {
    // [run]
    std::string name = "run";
    std::string out_dir = "runs/run";
    std::string mode = "cpt";  // cpt | sft
    uint64_t seed = 1234;
    int64_t steps = 100;
    std::string resume;  // "" | "auto" | a checkpoint directory
    // [model]
    // a config.json path, embedded:v4-tiny, or "" = the config.json of init_from (else embedded:v4-tiny)
    std::string model_config;
    std::string init_from;  // a checkpoint directory: ours, or the HF release layout; empty = fresh init
    double init_std = 0.006;
    bool recompute = false;
    // numerics (docs/model.md §3.4): "auto" takes the model config's, except that a run starting from a release
    // checkpoint (init_from's config.json has quantization_config) takes the release's; else overrides the config.
    std::string qat = "auto";           // auto | none | release
    std::string indexer_ties = "auto";  // auto | stable | torch
    // the precision of the model's GEMMs in forward and backward (kernels/precision.hpp): fp32, or bf16 (AVX512_BF16;
    // master weights, gradients, optimizer state and reductions stay fp32)
    std::string precision = "fp32";  // fp32 | bf16
    // [data]
    int64_t batch = 8, seq = 256, grad_accum = 1;
    int32_t pad_id = 1;
    std::string tokenizer;         // tokenizer.json of text/jsonl/messages sources ("" = the DeepSeek-V4 one)
    std::string train_on = "all";  // messages: train on all assistant messages, or only the last
    bool chat_thinking = false;    // messages: DeepSeek-V4 thinking mode
    std::vector<data_source_config> sources;
    // [optim]
    optim_config optim;
    lr_schedule schedule;
    // [loss]
    double mtp_weight = 0.3, mtp_weight_after_decay = 0.1;  // λ, and λ from the start of LR decay
    double balance_alpha = 1e-4;
    double bias_update_speed = 0.001;  // γ of the aux-loss-free bias update
    double indexer_weight = 1.0;
    int64_t indexer_dense_steps = 0;  // indexer warm-up: dense CSA for the first steps, then sparse
    // [checkpoint]
    int64_t checkpoint_every = 50;
    int keep_last = 3;
    // [log]
    int64_t log_every = 1;
    bool report = true;
    // [guards]
    int max_consecutive_skips = 5;
    double spike_factor = 3.0;  // a loss above spike_factor × its running mean is logged as a spike
    // [dist] (docs/distributed.md): the mesh (DP is what the world size leaves), the wait timeout, EP overlap
    int tp = 1, pp = 1, ep = 1;
    double dist_timeout = 300.0;       // seconds a collective may wait for a peer before the job is aborted
    bool dist_overlap = true;          // overlap the EP all-to-all with the shared expert
    std::string pp_schedule = "1f1b";  // pipeline schedule: "1f1b" or "interleaved" (virtual stages)
    int pp_virtual = 1;                // model chunks per pipeline rank (interleaved)
    std::vector<int> pp_layers;        // blocks per model chunk (pp·pp_virtual entries); empty = balanced
};

// Parses `path` ("" = defaults only) and applies the overrides ("section.key=value"); validates every value's range
// (one line naming the key and the value).
train_config load_train_config(const std::string& path, const std::vector<std::string>& overrides);

// The resolved config as (key, value) pairs in a fixed order, every key of every section ("data.sources[0].path"
// for the sources): what the ranks of a distributed run compare before they start.
std::vector<std::pair<std::string, std::string>> config_entries(const train_config& c);

}  // namespace trex
