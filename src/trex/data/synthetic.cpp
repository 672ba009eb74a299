#include "trex/data/synthetic.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "trex/base/error.hpp"
#include "trex/base/rng.hpp"

namespace trex {

synthetic_chain_source::synthetic_chain_source(int vocab_size, uint64_t seed, int min_len, int max_len)
    : V_(vocab_size), seed_(seed), min_len_(min_len), max_len_(max_len) {
    TREX_CHECK(vocab_size > 16, "synthetic data: vocabulary too small ({})", vocab_size);
    TREX_CHECK(min_len >= 8 && max_len >= min_len, "synthetic data: bad document lengths {}..{}", min_len, max_len);
    // f: a seeded Fisher-Yates permutation of the ids 2..V-1
    const int n = V_ - 2;
    succ_.resize(V_);
    std::vector<int32_t> perm(n);
    for (int i = 0; i < n; i++) perm[i] = 2 + i;
    for (int i = n - 1; i > 0; i--) {
        const int j = (int)(uniform01(seed_, 0xc4a1ull, (uint64_t)i) * (i + 1));
        std::swap(perm[i], perm[std::min(j, i)]);
    }
    succ_[0] = succ_[1] = 2;
    for (int i = 0; i < n; i++) succ_[2 + i] = perm[i];
}

void synthetic_chain_source::next(document& doc) {
    const uint64_t k = next_doc_++;
    const int len = min_len_ + (int)(uniform01(seed_, 0x5eed5eedull, 2 * k) * (max_len_ - min_len_ + 1));
    int32_t t = 2 + (int32_t)(uniform01(seed_, 0x5eed5eedull, 2 * k + 1) * (V_ - 2));
    doc.tokens.resize(len);
    doc.mask.clear();
    for (int i = 0; i < len; i++) {
        doc.tokens[i] = t;
        t = succ_[t];
    }
}

nlohmann::json synthetic_chain_source::state() const { return {{"kind", "synthetic-chain"}, {"next_doc", next_doc_}}; }

void synthetic_chain_source::restore(const nlohmann::json& s) {
    TREX_CHECK(s.value("kind", "") == "synthetic-chain", "checkpoint: data cursor is not for the synthetic source");
    next_doc_ = s.at("next_doc").get<uint64_t>();
}

std::string synthetic_chain_source::describe() const {
    return fmt::format("synthetic successor chains (documents of {}-{} tokens, vocab {})", min_len_, max_len_, V_);
}

}  // namespace trex
