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

// What attention_cache::rewind needs to put a cache back to an earlier length (speculative decoding drops the tokens
// of a rejected draft): the sizes that only grow, the pending rows, and the window rows the next `ahead` tokens will
// overwrite in the ring.
struct attention_cache_mark {
    int64_t len = 0, entries = 0, index_keys = 0, pending_from = 0, window_floats = 0;
    std::vector<float> pend_kv, pend_gate, ipend_kv, ipend_gate;
    std::vector<float> ring_rows;  // rows of the ring slots of positions len+1 … len+ahead−1, as they were
};

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

    // The state now, for a rewind after at most `ahead` more tokens (c: head_dim).
    attention_cache_mark mark(int64_t ahead, int64_t c) const;
    // Back to the state `m` saw; the tokens appended since are gone. (The ring slot of position m.len itself is not
    // saved: the row it held, position m.len − n_win, is outside every later query's window.)
    void rewind(const attention_cache_mark& m, int64_t c);
};

// The cache of one sequence over the model: a layer's at index l (0..L-1), the MTP block's at L when the config has
// one. len is the sequence's length: every layer cache of the main model holds that many tokens.
struct sequence_cache {
    std::vector<attention_cache> layers;
    int64_t len = 0;

    static sequence_cache for_model(const model_config& cfg, bool with_mtp);
    size_t bytes() const;

    // Marks of the main model's layers (not the MTP block's) and the length, for a rewind after ≤ `ahead` tokens.
    struct mark_t {
        int64_t len = 0;
        std::vector<attention_cache_mark> layers;
    };
    mark_t mark(int n_layers, int64_t ahead, int64_t c) const;
    void rewind(const mark_t& m, int64_t c);
};

}  // namespace trex
