// Deterministic synthetic batches (random tokens, next-token labels) for benchmarks and tests.
#pragma once

#include <cstdint>
#include <vector>

#include "trex/data/packer.hpp"

namespace trex {

// The same [B,S] rows as the packer's batches (docs/model.md §1).
using synthetic_batch = train_batch;

struct synthetic_batch_options {
    bool packed = false;           // rows after the first hold several documents (lengths 3, 20, rest)
    double masked_fraction = 0.0;  // share of LM labels set to −1 (like SFT prompt tokens)
};

// Rows draw S+2 random tokens t; labels[i] = t[i+1], mtp_input_ids[i] = t[i+1], mtp_labels[i] = t[i+2].
synthetic_batch make_synthetic_batch(int64_t B, int64_t S, int V, uint64_t seed,
                                     const synthetic_batch_options& opt = {});

}  // namespace trex
