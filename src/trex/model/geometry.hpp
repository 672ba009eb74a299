// What a batch looks like to the attention: documents, positions, compressed-entry layouts and RoPE tables.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "trex/kernels/types.hpp"
#include "trex/model/config.hpp"

namespace trex {

// Compressed entries of one ratio m over all documents of a batch.
struct compressed_layout {
    int m = 0;
    std::vector<int64_t> entry_offset;  // [n_docs] first row of each document's entries
    std::vector<int32_t> entry_pos;     // [n_entries] document position i·m of each entry (its RoPE position)
    int64_t n_entries = 0;
    int64_t max_entries = 0;  // largest per-document entry count
};

struct batch_geometry {
    int64_t B = 0, S = 0, N = 0;
    std::vector<doc_span> docs;   // documents in token order
    std::vector<int32_t> doc_of;  // [N] document index
    std::vector<int32_t> pos;     // [N] position inside the document
    int64_t max_doc_len = 0;
    std::map<int, compressed_layout> comp;  // by ratio
    // RoPE angles for positions 0..max_doc_len-1: [pos·half + i]
    std::vector<float> cos_main, sin_main;  // rope_theta, no YaRN (ratio-0 layers)
    std::vector<float> cos_comp, sin_comp;  // compress_rope_theta with YaRN (compressed layers)
    int rope_half = 0;

    rope_table_t<float> rope_for_ratio(int m) const;
};

// doc_start [B,S]: 1 where a document starts (slot 0 of each row always starts one).
batch_geometry make_geometry(const model_config& cfg, int64_t B, int64_t S, const int32_t* doc_start);

// The geometry of a cached-decoding call (dsv4_model::decode): counts[b] new tokens of sequence b at positions
// lens[b] + j, sequence after sequence (docs[b] is sequence b's tokens; no compressed layouts: the caches hold the
// entries). The RoPE tables of `g` are kept and grown (doubling) when a position is past them, so a long generation
// does not rebuild them every token.
void set_decode_geometry(batch_geometry& g, const model_config& cfg, std::span<const int64_t> lens,
                         std::span<const int64_t> counts);

}  // namespace trex
