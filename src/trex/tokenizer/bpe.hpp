// The BPE model of a byte-level tokenizer.json: vocab, ranked merges, and the merge loop (lowest rank first,
// leftmost among equal ranks — the order HF tokenizers' Word::merge_all produces).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace trex::tok {

struct sv_hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept;
};
using string_id_map = std::unordered_map<std::string, int32_t, sv_hash, std::equal_to<>>;

// (a, b) -> (rank, merged id), open addressing.
class merge_table {
   public:
    void build(const std::vector<std::pair<uint64_t, std::pair<int32_t, int32_t>>>& entries);
    // rank of the merge of (a, b) and the merged id, or -1 when (a, b) is not a merge.
    int32_t find(int32_t a, int32_t b, int32_t* merged) const {
        if (mask_ == 0) return -1;
        const uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
        size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> shift_);
        for (;;) {
            const slot& s = slots_[h];
            if (s.key == key) {
                *merged = s.merged;
                return s.rank;
            }
            if (s.rank < 0) return -1;
            h = (h + 1) & mask_;
        }
    }
    size_t size() const { return count_; }

   private:
    struct slot {
        uint64_t key = ~0ull;
        int32_t rank = -1;
        int32_t merged = -1;
    };
    std::vector<slot> slots_;
    size_t mask_ = 0;
    int shift_ = 64;
    size_t count_ = 0;
};

struct bpe_model {
    string_id_map vocab;                   // byte-level token string -> id
    std::vector<std::string> id_to_token;  // by id ("" where an id is not in the vocab); size = max id + 1
    merge_table merges;
    size_t n_merges = 0;
    int32_t byte_id[256];      // id of the one-character token of each byte, -1 when absent
    int32_t fallback_id[256];  // id of "<0xXX>" (byte_fallback), -1 when absent
    int32_t unk_id = -1;
    std::string unk_token;
    bool fuse_unk = false;
    bool byte_fallback = false;
    bool ignore_merges = false;

    // Appends the ids of one pre-token piece (raw bytes) to out. tmp is scratch.
    void encode_word(const unsigned char* p, size_t n, std::vector<int32_t>& out, std::vector<int32_t>& tmp,
                     bool force_heap = false) const;
    // Symbols of the piece before merges (bytes -> ids, with unk / byte_fallback as HF applies them).
    void initial_symbols(const unsigned char* p, size_t n, std::vector<int32_t>& sym) const;
};

}  // namespace trex::tok
