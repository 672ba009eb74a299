#include "trex/data/shards.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "trex/base/error.hpp"
#include "trex/base/files.hpp"

namespace trex {

namespace {

constexpr char kMagic[8] = {'T', 'R', 'E', 'X', 'T', 'O', 'K', '1'};
constexpr size_t kHeader = 64;

struct header {
    char magic[8];
    uint32_t version;
    uint32_t flags;
    uint64_t n_tokens;
    uint64_t n_docs;
    uint32_t vocab_size;
    uint32_t reserved0;
    uint64_t payload_xxh64;
    uint8_t reserved[16];
};
static_assert(sizeof(header) == kHeader, "shard header is 64 bytes");

}  // namespace

void shard_writer::add(const std::vector<int32_t>& tokens, const std::vector<uint8_t>& mask) {
    TREX_CHECK(mask.empty() || mask.size() == tokens.size(), "shard: a document's mask has {} entries for {} tokens",
               mask.size(), tokens.size());
    for (int32_t t : tokens) {
        TREX_CHECK(t >= 0 && (uint32_t)t < vocab_, "shard: token id {} is outside the vocabulary ({})", t, vocab_);
        tokens_.push_back((uint32_t)t);
    }
    if (!mask.empty() && !has_mask_) {  // the first masked document: earlier ones were all targets
        has_mask_ = true;
        mask_.assign(tokens_.size() - tokens.size(), 1);
    }
    if (has_mask_) {
        if (mask.empty())
            mask_.insert(mask_.end(), tokens.size(), 1);
        else
            mask_.insert(mask_.end(), mask.begin(), mask.end());
    }
    offsets_.push_back(tokens_.size());
}

void shard_writer::write(const std::string& path) const {
    std::string payload;
    payload.append((const char*)offsets_.data(), offsets_.size() * sizeof(uint64_t));
    payload.append((const char*)tokens_.data(), tokens_.size() * sizeof(uint32_t));
    if (has_mask_) payload.append((const char*)mask_.data(), mask_.size());
    header h{};
    std::memcpy(h.magic, kMagic, 8);
    h.version = 1;
    h.flags = has_mask_ ? 1u : 0u;
    h.n_tokens = tokens_.size();
    h.n_docs = offsets_.size() - 1;
    h.vocab_size = vocab_;
    h.payload_xxh64 = XXH64(payload.data(), payload.size(), 0);
    std::string data((const char*)&h, kHeader);
    data += payload;
    write_file_atomic(path, data);
}

shard_file::shard_file(const std::string& path, bool verify) : path_(path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    TREX_CHECK(fd >= 0, "{}: cannot open: {}", path, std::strerror(errno));
    struct stat st;
    if (::fstat(fd, &st) != 0) {
        ::close(fd);
        throw error(fmt::format("{}: cannot stat", path));
    }
    size_ = (uint64_t)st.st_size;
    if (size_ < kHeader) {
        ::close(fd);
        throw error(fmt::format("{}: not a token shard ({} bytes, shorter than the 64-byte header)", path, size_));
    }
    void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    TREX_CHECK(m != MAP_FAILED, "{}: mmap failed: {}", path, std::strerror(errno));
    map_ = (const uint8_t*)m;
    try {
        header h;
        std::memcpy(&h, map_, kHeader);
        TREX_CHECK(std::memcmp(h.magic, kMagic, 8) == 0, "{}: not a token shard (bad magic)", path);
        TREX_CHECK(h.version == 1, "{}: unsupported shard version {}", path, h.version);
        TREX_CHECK(h.n_docs < (1ull << 40) && h.n_tokens < (1ull << 45), "{}: header counts out of range", path);
        const uint64_t want = kHeader + (h.n_docs + 1) * 8 + h.n_tokens * 4 + ((h.flags & 1) ? h.n_tokens : 0);
        TREX_CHECK(size_ == want, "{}: size {} does not match its header ({} documents, {} tokens need {} bytes)",
                   path, size_, h.n_docs, h.n_tokens, want);
        if (verify)
            TREX_CHECK(XXH64(map_ + kHeader, size_ - kHeader, 0) == h.payload_xxh64, "{}: checksum mismatch", path);
        n_docs_ = (int64_t)h.n_docs;
        n_tokens_ = (int64_t)h.n_tokens;
        vocab_ = h.vocab_size;
        offsets_ = (const uint64_t*)(map_ + kHeader);
        tokens_ = (const uint32_t*)(map_ + kHeader + (h.n_docs + 1) * 8);
        mask_ = (h.flags & 1) ? map_ + kHeader + (h.n_docs + 1) * 8 + h.n_tokens * 4 : nullptr;
        TREX_CHECK(offsets_[0] == 0 && offsets_[n_docs_] == (uint64_t)n_tokens_,
                   "{}: document offsets do not span the tokens", path);
        for (int64_t i = 0; i < n_docs_; i++)
            TREX_CHECK(offsets_[i] <= offsets_[i + 1], "{}: document offsets decrease at document {}", path, i);
        for (int64_t i = 0; i < n_tokens_; i++)
            TREX_CHECK(tokens_[i] < vocab_, "{}: token {} = {} is outside the vocabulary ({})", path, i, tokens_[i],
                       vocab_);
    } catch (...) {
        ::munmap((void*)map_, size_);
        map_ = nullptr;
        throw;
    }
}

shard_file::~shard_file() {
    if (map_) ::munmap((void*)map_, size_);
}

void shard_file::get(int64_t i, std::vector<int32_t>& tokens, std::vector<uint8_t>& mask) const {
    TREX_ASSERT(i >= 0 && i < n_docs_);
    const uint64_t a = offsets_[i], b = offsets_[i + 1];
    tokens.assign(tokens_ + a, tokens_ + b);
    if (mask_)
        mask.assign(mask_ + a, mask_ + b);
    else
        mask.clear();
}

}  // namespace trex
