// From documents to training rows (docs/model.md §1): the packer turns a stream of tokenized documents into [B,S]
// batches of input ids, next-token labels, MTP inputs/labels and document starts.
//
//  * cpt: documents are concatenated and cut into rows of S tokens; a row's labels look two tokens ahead into the
//    stream. A label is −1 where its target lies in the next document or is not a training target (mask 0).
//  * sft: samples are never split: a sample that does not fit in the rest of a row starts the next row, the rest is
//    padding (token pad_id, no loss); samples longer than the row are truncated.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trex/model/model.hpp"

namespace trex {

// One tokenized document. mask[i] = 1 when token i is a training target (SFT: assistant tokens); empty = all are.
struct document {
    std::vector<int32_t> tokens;
    std::vector<uint8_t> mask;
};

// A deterministic, resumable stream of documents.
class document_source {
   public:
    virtual ~document_source() = default;
    virtual void next(document& doc) = 0;          // never runs dry (sources cycle through epochs)
    virtual nlohmann::json state() const = 0;      // enough to continue exactly where it is
    virtual void restore(const nlohmann::json& state) = 0;
    virtual std::string describe() const = 0;
};

struct train_batch {
    int64_t B = 0, S = 0;
    std::vector<int32_t> ids, labels, mtp_ids, mtp_labels, doc_start;
    int64_t target_tokens = 0;  // labels ≥ 0
    batch_view view() const;
};

class packer {
   public:
    packer(std::unique_ptr<document_source> source, std::string mode, int32_t pad_id);
    void next(train_batch& batch, int64_t B, int64_t S);
    nlohmann::json state() const;  // source state + the tokens already pulled but not yet packed
    void restore(const nlohmann::json& state);
    const document_source& source() const { return *source_; }

   private:
    struct item {
        int32_t token;
        uint8_t target;     // a training target
        uint8_t doc_start;  // first token of its document
    };
    void fill(size_t n);  // ensures buf_ holds at least n items
    void pack_cpt_row(train_batch& b, int64_t r, int64_t S);
    void pack_sft_row(train_batch& b, int64_t r, int64_t S);

    std::unique_ptr<document_source> source_;
    std::string mode_;
    int32_t pad_id_;
    std::deque<item> buf_;
};

}  // namespace trex
