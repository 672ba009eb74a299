// A learnable synthetic corpus for tests and smoke runs: a fixed random permutation f of the vocabulary (ids ≥ 2;
// 0 and 1 are BOS/EOS) defines a "successor language": a document starts at a random token t and continues
// f(t), f(f(t)), ... So every token but the first of a document is determined by the previous one: a model that
// learns f reaches an LM loss of about ln(V)/(mean document length) (the unpredictable first tokens), against ln(V)
// for a uniform guess. Document k depends only on (seed, k).
#pragma once

#include <cstdint>
#include <vector>

#include "trex/data/packer.hpp"

namespace trex {

class synthetic_chain_source : public document_source {
   public:
    synthetic_chain_source(int vocab_size, uint64_t seed, int min_len = 32, int max_len = 160);
    void next(document& doc) override;
    nlohmann::json state() const override;
    void restore(const nlohmann::json& state) override;
    std::string describe() const override;

   private:
    int V_;
    uint64_t seed_;
    int min_len_, max_len_;
    uint64_t next_doc_ = 0;
    std::vector<int32_t> succ_;  // f
};

}  // namespace trex
