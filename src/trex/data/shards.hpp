// Token shards: packed binary files of tokenized documents (ids, document boundaries, optional loss mask), written
// atomically and read through mmap with a validated header and an xxHash64 of the payload.
//
// Layout (little-endian):
//   header, 64 bytes: magic "TREXTOK1", u32 version (1), u32 flags (bit 0: loss mask present), u64 n_tokens,
//                     u64 n_docs, u32 vocab_size (every id is < it), u32 reserved, u64 xxh64 of the payload,
//                     16 reserved bytes (0)
//   payload:          u64 doc_offsets[n_docs + 1] (token offsets, 0 … n_tokens, non-decreasing),
//                     u32 tokens[n_tokens], u8 mask[n_tokens] (when flagged)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trex {

class shard_writer {
   public:
    explicit shard_writer(uint32_t vocab_size) : vocab_(vocab_size) {}
    // mask: empty = every token is a target
    void add(const std::vector<int32_t>& tokens, const std::vector<uint8_t>& mask = {});
    int64_t docs() const { return (int64_t)offsets_.size() - 1; }
    int64_t tokens() const { return (int64_t)tokens_.size(); }
    void write(const std::string& path) const;  // atomically

   private:
    uint32_t vocab_;
    std::vector<uint64_t> offsets_{0};
    std::vector<uint32_t> tokens_;
    std::vector<uint8_t> mask_;
    bool has_mask_ = false;
};

class shard_file {
   public:
    // Maps and validates `path` (header, sizes, offsets, ids < vocab_size, and the checksum when verify).
    explicit shard_file(const std::string& path, bool verify = true);
    ~shard_file();
    shard_file(const shard_file&) = delete;
    shard_file& operator=(const shard_file&) = delete;

    const std::string& path() const { return path_; }
    int64_t docs() const { return n_docs_; }
    int64_t tokens() const { return n_tokens_; }
    uint32_t vocab_size() const { return vocab_; }
    bool has_mask() const { return mask_ != nullptr; }
    // Document i: its tokens (and mask, empty when the shard has none).
    void get(int64_t i, std::vector<int32_t>& tokens, std::vector<uint8_t>& mask) const;

   private:
    std::string path_;
    const uint8_t* map_ = nullptr;
    uint64_t size_ = 0;
    int64_t n_docs_ = 0, n_tokens_ = 0;
    uint32_t vocab_ = 0;
    const uint64_t* offsets_ = nullptr;
    const uint32_t* tokens_ = nullptr;
    const uint8_t* mask_ = nullptr;
};

}  // namespace trex
