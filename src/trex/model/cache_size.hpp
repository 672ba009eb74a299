// What cached incremental decoding keeps per sequence (docs/model.md §3.7): the size of each cache kind as a formula of
// the config and the context length, in values (times the bytes per value of the cache's dtype). `trex info` prints
// it; the decoder's caches are sized by it.
//
// Per attention layer l with compression ratio m = compress_ratios[l] and context S (tokens so far):
//   window      min(S, n_win)·c                 the sliding-window KV ring (K = V, one shared head of width c)
//   compressed  floor(S/m)·c                    the CSA (m = 4) or HCA entries (m > 4); none for m = 0
//   indexer     floor(S/4)·c_I                  CSA only: the lightning indexer's compressed keys
//   pending     at most (m−1) tokens of the compressor's partial block: their kv and gate rows (2c each); CSA's
//               overlapping windows: rows 4c wide, and the completed previous block's m tokens kept too (the next
//               entry pools their first halves), (2m−1)·4c; the same for the indexer's own compressor at c_I
// MTP (depth 1, ratio 0): its block's window, and the main model's last 4-stream state (hc_mult·d) it drafts from.
// Uncompressed, for comparison: every token's KV entry cached at every layer (L + MTP)·S·c, the V3-style cache of this
// KV head.
#pragma once

#include <cstdint>

#include "trex/model/config.hpp"

namespace trex {

struct cache_size {
    int64_t context = 0;
    double window = 0, compressed = 0, indexer = 0, pending = 0, mtp = 0;  // values
    double uncompressed = 0;                                               // values
    double total() const { return window + compressed + indexer + pending + mtp; }
};

cache_size inference_cache_size(const model_config& cfg, int64_t context);

}  // namespace trex
