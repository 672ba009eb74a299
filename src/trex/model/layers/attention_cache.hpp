// The decoding state of one attention layer for one sequence (docs/model.md §3.7): what the layer's decode reads
// instead of recomputing the prefix. Its size is the formula of model/cache_size.hpp.
//
// Contract:
// - After `len` tokens (positions 0..len-1): the window ring holds the window kv (normed, roped) of positions
//   max(0, len − n_win)..len-1, position p at row p % n_win; `entries` the floor(len/m) compressed kv entries
//   (ratio m > 0), entry i at RoPE position i·m; `index_keys` the indexer's floor(len/4) compressed keys (CSA).
// - The compressors' pending rows: the projections (kv, gate; coff·c wide, coff = 2 for CSA) of the tokens from
//   `pending_from` to len-1 — the incomplete block, and for CSA also the last complete block, whose first halves the
//   next entry pools (pending_start(len)). The indexer's compressor keeps its own (2·cI wide) from the same position.
//   While a mark holds the cache (hold_from ≥ 0), rows from hold_from on are kept too, so that a rewind can cut the
//   tokens appended since the mark at any length.
// - attention_layer::decode appends to every part and advances len; nothing else writes a cache except rewind and
//   release.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "trex/model/config.hpp"

namespace trex {

// What attention_cache::rewind needs to put a cache back to a length between the mark's and now (speculative
// decoding drops the tokens of a rejected draft, keeping the token it verified): the length, and the window rows the
// next `ahead` tokens will overwrite in the ring. The pending rows are not copied: the mark holds them in the cache.
struct attention_cache_mark {
    int64_t len = 0, window_floats = 0;
    std::vector<float> ring_rows;  // rows of the ring slots of positions len+1 … len+ahead−1, as they were
};

struct attention_cache {
    int64_t len = 0;                          // tokens appended so far
    int64_t window_rows = 0;                  // n_win: the ring's capacity
    int ratio = 0;                            // m: the layer's compression (0: window only, 4: CSA)
    int64_t width = 0, index_width = 0;       // c (kv and entries), cI (index keys)
    std::vector<float> window;                // [min(len, n_win), c]
    std::vector<float> entries;               // [floor(len/m), c]
    std::vector<float> index_keys;            // [floor(len/4), cI] (CSA)
    int64_t pending_from = 0;                 // first position whose compressor rows are still kept
    int64_t hold_from = -1;                   // ≥ 0 while a mark holds rows from there on (see the contract)
    std::vector<float> pend_kv, pend_gate;    // [len − pending_from, coff·c]
    std::vector<float> ipend_kv, ipend_gate;  // [len − pending_from, 2·cI] (CSA)

    // An empty cache for `layer` of `cfg` (the ring allocated, nothing appended).
    static attention_cache for_layer(const model_config& cfg, int layer);
    // Bytes held for the tokens appended so far (the vectors' sizes, not their capacities).
    size_t bytes() const;

    // The first position whose compressor rows the cache needs after `n` tokens: the incomplete block's first, and
    // with overlapping windows (CSA) the last complete block's first. 0 for a window-only layer.
    int64_t pending_start(int64_t n) const;
    // The first position whose rows the decode keeps after `n` tokens: pending_start(n), or hold_from when a mark
    // holds earlier rows.
    int64_t keep_from(int64_t n) const;

    // The state now, for a rewind after at most `ahead` more tokens; the cache keeps the pending rows a rewind needs
    // until rewind or release.
    attention_cache_mark mark(int64_t ahead);
    // Back to m.len + keep tokens (keep ≤ the tokens appended since the mark): the cache is as if only those had been
    // appended. (The ring slot of the first position cut is not restored: the row it held, n_win positions earlier,
    // is outside every later query's window.) Ends the hold.
    void rewind(const attention_cache_mark& m, int64_t keep = 0);
    // Ends the hold, keeping every token: the rows no later token needs are dropped.
    void release();
};

// The cache of one sequence over the model: a layer's at index l (0..L-1), the MTP block's at L when the config has
// one. len is the sequence's length: every layer cache of the main model holds that many tokens.
struct sequence_cache {
    std::vector<attention_cache> layers;
    int64_t len = 0;

    static sequence_cache for_model(const model_config& cfg, bool with_mtp);
    size_t bytes() const;

    // Marks of the main model's layers (not the MTP block's) and the length, for a rewind after ≤ `ahead` tokens;
    // rewind and release as attention_cache's, over those layers.
    struct mark_t {
        int64_t len = 0;
        std::vector<attention_cache_mark> layers;
    };
    mark_t mark(int n_layers, int64_t ahead);
    void rewind(const mark_t& m, int64_t keep = 0);
    void release(const mark_t& m);
};

}  // namespace trex
