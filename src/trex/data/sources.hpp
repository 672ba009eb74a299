// Resumable document sources over token shards, and a weighted mixture of sources.
//
//  * shard_source: the documents of a list of shard files; each epoch visits them in a fresh permutation drawn from
//    (seed, source id, epoch); the cursor is (epoch, position).
//  * mixture_source: each document comes from source i with probability weight_i / Σ weights, the choice drawn from
//    (seed, draw counter): the same seed gives the same stream, and the cursor is the draw counter plus the
//    sources' cursors.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "trex/data/packer.hpp"
#include "trex/data/shards.hpp"

namespace trex {

class shard_source : public document_source {
   public:
    // paths: shard files (a directory is expanded to its *.tshard files, sorted)
    shard_source(const std::vector<std::string>& paths, uint64_t seed, uint64_t source_id, uint32_t vocab_size);
    void next(document& doc) override;
    nlohmann::json state() const override;
    void restore(const nlohmann::json& state) override;
    std::string describe() const override;
    int64_t documents() const { return (int64_t)index_.size(); }

   private:
    void shuffle_epoch();
    std::vector<std::unique_ptr<shard_file>> shards_;
    std::vector<std::pair<int32_t, int64_t>> index_;  // (shard, document) in file order
    std::vector<int64_t> order_;                      // permutation of index_ for the current epoch
    uint64_t seed_, id_;
    int64_t epoch_ = 0, pos_ = 0;
    int64_t tokens_ = 0;
};

class mixture_source : public document_source {
   public:
    mixture_source(std::vector<std::unique_ptr<document_source>> sources, std::vector<double> weights, uint64_t seed);
    void next(document& doc) override;
    nlohmann::json state() const override;
    void restore(const nlohmann::json& state) override;
    std::string describe() const override;

   private:
    std::vector<std::unique_ptr<document_source>> sources_;
    std::vector<double> cumulative_;  // normalised cumulative weights
    uint64_t seed_;
    uint64_t draws_ = 0;
};

// Expands directories to their *.tshard files (sorted) and checks every path exists.
std::vector<std::string> expand_shard_paths(const std::vector<std::string>& paths);

}  // namespace trex
