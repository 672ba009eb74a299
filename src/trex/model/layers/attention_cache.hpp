// The decoding state of one attention layer for one sequence (docs/model.md §3.7): what the layer's decode reads
// instead of recomputing the prefix. Its size is the formula of model/cache_size.hpp.
//
// Contract:
// - After `len` tokens (positions 0..len-1): the window ring holds the window kv (normed, roped) of positions
//   max(0, len − n_win)..len-1, position p at row p % n_win; `entries` the floor(len/m) compressed kv entries
//   (ratio m > 0), entry i at RoPE position i·m; `index_keys` the indexer's floor(len/4) compressed keys (CSA).
// - The compressors' pending rows: the projections (kv, gate; coff·c wide, coff = 2 for CSA) of the tokens from
//   `pending_from` to len-1 — the incomplete block, and for CSA also the last complete block, whose first halves the
//   next entry pools. The indexer's compressor keeps its own (2·cI wide) from the same position.
// - attention_layer::decode appends to every part and advances len; nothing else writes a cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "trex/model/config.hpp"

namespace trex {

struct attention_cache {
    int64_t len = 0;                          // tokens appended so far
    int64_t window_rows = 0;                  // n_win: the ring's capacity
    std::vector<float> window;                // [min(len, n_win), c]
    std::vector<float> entries;               // [floor(len/m), c]
    std::vector<float> index_keys;            // [floor(len/4), cI] (CSA)
    int64_t pending_from = 0;                 // first position whose compressor rows are still kept
    std::vector<float> pend_kv, pend_gate;    // [len − pending_from, coff·c]
    std::vector<float> ipend_kv, ipend_gate;  // [len − pending_from, 2·cI] (CSA)

    // An empty cache for `layer` of `cfg` (the ring allocated, nothing appended).
    static attention_cache for_layer(const model_config& cfg, int layer);
    // Bytes held for the tokens appended so far (the vectors' sizes, not their capacities).
    size_t bytes() const;
};

// The cache of one sequence over the model: a layer's at index l (0..L-1), the MTP block's at L when the config has
// one. len is the sequence's length: every layer cache of the main model holds that many tokens.
struct sequence_cache {
    std::vector<attention_cache> layers;
    int64_t len = 0;

    static sequence_cache for_model(const model_config& cfg, bool with_mtp);
    size_t bytes() const;
};

}  // namespace trex
