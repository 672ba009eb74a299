#include "trex/data/sources.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "trex/base/error.hpp"
#include "trex/base/rng.hpp"

namespace fs = std::filesystem;

namespace trex {

std::vector<std::string> expand_shard_paths(const std::vector<std::string>& paths) {
    std::vector<std::string> out;
    for (const auto& p : paths) {
        TREX_CHECK(fs::exists(p), "data: {} does not exist", p);
        if (fs::is_directory(p)) {
            std::vector<std::string> files;
            for (const auto& e : fs::directory_iterator(p))
                if (e.path().extension() == ".tshard") files.push_back(e.path().string());
            std::sort(files.begin(), files.end());
            TREX_CHECK(!files.empty(), "data: directory {} holds no *.tshard files", p);
            out.insert(out.end(), files.begin(), files.end());
        } else {
            out.push_back(p);
        }
    }
    return out;
}

shard_source::shard_source(const std::vector<std::string>& paths, uint64_t seed, uint64_t source_id,
                           uint32_t vocab_size)
    : seed_(seed), id_(source_id) {
    for (const auto& p : expand_shard_paths(paths)) {
        shards_.push_back(std::make_unique<shard_file>(p));
        TREX_CHECK(shards_.back()->vocab_size() <= vocab_size,
                   "data: {} was tokenized for a vocabulary of {} ids, the model has {}", p,
                   shards_.back()->vocab_size(), vocab_size);
        for (int64_t d = 0; d < shards_.back()->docs(); d++) index_.push_back({(int32_t)shards_.size() - 1, d});
        tokens_ += shards_.back()->tokens();
    }
    TREX_CHECK(!index_.empty(), "data: the shards {} hold no documents", paths.empty() ? "" : paths[0]);
    shuffle_epoch();
}

void shard_source::shuffle_epoch() {
    const int64_t n = (int64_t)index_.size();
    order_.resize(n);
    for (int64_t i = 0; i < n; i++) order_[i] = i;
    const uint64_t stream = mix64(id_ * 0x9e37ull + (uint64_t)epoch_);
    for (int64_t i = n - 1; i > 0; i--) {
        const int64_t j = std::min<int64_t>(i, (int64_t)(uniform01(seed_, stream, (uint64_t)i) * (double)(i + 1)));
        std::swap(order_[i], order_[j]);
    }
}

void shard_source::next(document& doc) {
    if (pos_ == (int64_t)order_.size()) {
        epoch_++;
        pos_ = 0;
        shuffle_epoch();
    }
    const auto [s, d] = index_[order_[pos_++]];
    shards_[s]->get(d, doc.tokens, doc.mask);
}

nlohmann::json shard_source::state() const { return {{"kind", "shards"}, {"epoch", epoch_}, {"pos", pos_}}; }

void shard_source::restore(const nlohmann::json& s) {
    TREX_CHECK(s.value("kind", "") == "shards", "checkpoint: data cursor is not for a shard source");
    epoch_ = s.at("epoch").get<int64_t>();
    pos_ = s.at("pos").get<int64_t>();
    TREX_CHECK(pos_ >= 0 && pos_ <= (int64_t)index_.size(),
               "checkpoint: data cursor position {} is beyond the {} documents of the shards (did the data change?)",
               pos_, index_.size());
    shuffle_epoch();
}

std::string shard_source::describe() const {
    return fmt::format("{} shard(s), {} documents, {} tokens", shards_.size(), index_.size(), tokens_);
}

mixture_source::mixture_source(std::vector<std::unique_ptr<document_source>> sources, std::vector<double> weights,
                               uint64_t seed)
    : sources_(std::move(sources)), seed_(seed) {
    TREX_CHECK(!sources_.empty() && sources_.size() == weights.size(), "data: a mixture needs one weight per source");
    double total = 0;
    for (double w : weights) {
        TREX_CHECK(w > 0, "data: mixture weights must be positive");
        total += w;
    }
    double acc = 0;
    for (double w : weights) cumulative_.push_back(acc += w / total);
    cumulative_.back() = 1.0;
}

void mixture_source::next(document& doc) {
    const double u = uniform01(seed_, 0x313aull, draws_++);
    size_t i = 0;
    while (i + 1 < cumulative_.size() && u > cumulative_[i]) i++;
    sources_[i]->next(doc);
}

nlohmann::json mixture_source::state() const {
    nlohmann::json j = {{"kind", "mixture"}, {"draws", draws_}};
    for (const auto& s : sources_) j["sources"].push_back(s->state());
    return j;
}

void mixture_source::restore(const nlohmann::json& s) {
    TREX_CHECK(s.value("kind", "") == "mixture" && s.at("sources").size() == sources_.size(),
               "checkpoint: data cursor does not match the configured mixture of {} sources", sources_.size());
    draws_ = s.at("draws").get<uint64_t>();
    for (size_t i = 0; i < sources_.size(); i++) sources_[i]->restore(s["sources"][i]);
}

std::string mixture_source::describe() const {
    std::string d = "mixture of";
    double prev = 0;
    for (size_t i = 0; i < sources_.size(); i++) {
        d += fmt::format(" [{:.0f}%: {}]", 100.0 * (cumulative_[i] - prev), sources_[i]->describe());
        prev = cumulative_[i];
    }
    return d;
}

}  // namespace trex
