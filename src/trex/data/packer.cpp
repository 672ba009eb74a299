#include "trex/data/packer.hpp"

#include "trex/base/error.hpp"

namespace trex {

batch_view train_batch::view() const {
    batch_view v;
    v.B = B;
    v.S = S;
    v.input_ids = ids.data();
    v.labels = labels.data();
    v.mtp_input_ids = mtp_ids.data();
    v.mtp_labels = mtp_labels.data();
    v.doc_start = doc_start.data();
    return v;
}

packer::packer(std::unique_ptr<document_source> source, std::string mode, int32_t pad_id)
    : source_(std::move(source)), mode_(std::move(mode)), pad_id_(pad_id) {
    TREX_CHECK(mode_ == "cpt" || mode_ == "sft", "data: mode must be 'cpt' or 'sft', got '{}'", mode_);
}

void packer::fill(size_t n) {
    document doc;
    while (buf_.size() < n) {
        source_->next(doc);
        if (doc.tokens.empty()) continue;
        TREX_CHECK(doc.mask.empty() || doc.mask.size() == doc.tokens.size(),
                   "data: a document's loss mask has {} entries for {} tokens", doc.mask.size(), doc.tokens.size());
        for (size_t i = 0; i < doc.tokens.size(); i++)
            buf_.push_back({doc.tokens[i], (uint8_t)(doc.mask.empty() ? 1 : doc.mask[i]), (uint8_t)(i == 0)});
    }
}

// Row r of b from the stream: slot j holds item j; its label is item j+1 if that item continues the document and is
// a target; MTP input is item j+1 (any), MTP label item j+2 under the same rule. The row consumes S items.
void packer::pack_cpt_row(train_batch& b, int64_t r, int64_t S) {
    fill((size_t)S + 2);
    for (int64_t j = 0; j < S; j++) {
        const item& a = buf_[j];
        const item& n1 = buf_[j + 1];
        const item& n2 = buf_[j + 2];
        const int64_t k = r * S + j;
        b.ids[k] = a.token;
        b.doc_start[k] = j == 0 || a.doc_start;
        b.labels[k] = (!n1.doc_start && n1.target) ? n1.token : -1;
        b.mtp_ids[k] = n1.token;
        b.mtp_labels[k] = (!n1.doc_start && !n2.doc_start && n2.target) ? n2.token : -1;
    }
    buf_.erase(buf_.begin(), buf_.begin() + S);
}

// SFT: whole samples per row, padding after the last one that fits.
void packer::pack_sft_row(train_batch& b, int64_t r, int64_t S) {
    int64_t j = 0;
    for (;;) {
        fill(1);
        // length of the sample at the head of the buffer
        size_t len = 1;
        for (;;) {
            fill(len + 1);
            if (buf_[len].doc_start) break;
            len++;
        }
        const int64_t take = (int64_t)std::min<size_t>(len, (size_t)S);
        if (j > 0 && j + take > S) break;  // does not fit: next row
        for (int64_t i = 0; i < take; i++) {
            const int64_t k = r * S + j + i;
            const bool has1 = i + 1 < take, has2 = i + 2 < take;
            b.ids[k] = buf_[i].token;
            b.doc_start[k] = i == 0;
            b.labels[k] = has1 && buf_[i + 1].target ? buf_[i + 1].token : -1;
            b.mtp_ids[k] = has1 ? buf_[i + 1].token : pad_id_;
            b.mtp_labels[k] = has2 && buf_[i + 2].target ? buf_[i + 2].token : -1;
        }
        buf_.erase(buf_.begin(), buf_.begin() + len);  // a truncated sample drops its tail
        j += take;
        if (j == S) return;
    }
    for (int64_t k = r * S + j; k < (r + 1) * S; k++) {  // padding: one document of pad tokens, no loss
        b.ids[k] = pad_id_;
        b.doc_start[k] = k == r * S + j;
        b.labels[k] = -1;
        b.mtp_ids[k] = pad_id_;
        b.mtp_labels[k] = -1;
    }
}

void packer::next(train_batch& b, int64_t B, int64_t S) {
    b.B = B;
    b.S = S;
    const int64_t N = B * S;
    b.ids.assign(N, 0);
    b.labels.assign(N, -1);
    b.mtp_ids.assign(N, 0);
    b.mtp_labels.assign(N, -1);
    b.doc_start.assign(N, 0);
    for (int64_t r = 0; r < B; r++) {
        if (mode_ == "cpt")
            pack_cpt_row(b, r, S);
        else
            pack_sft_row(b, r, S);
    }
    b.target_tokens = 0;
    for (int64_t k = 0; k < N; k++) b.target_tokens += b.labels[k] >= 0;
}

nlohmann::json packer::state() const {
    nlohmann::json j;
    j["source"] = source_->state();
    std::vector<int32_t> tok, tgt, st;
    for (const item& it : buf_) {
        tok.push_back(it.token);
        tgt.push_back(it.target);
        st.push_back(it.doc_start);
    }
    j["pending_tokens"] = tok;
    j["pending_target"] = tgt;
    j["pending_doc_start"] = st;
    return j;
}

void packer::restore(const nlohmann::json& j) {
    source_->restore(j.at("source"));
    const auto tok = j.at("pending_tokens").get<std::vector<int32_t>>();
    const auto tgt = j.at("pending_target").get<std::vector<int32_t>>();
    const auto st = j.at("pending_doc_start").get<std::vector<int32_t>>();
    TREX_CHECK(tok.size() == tgt.size() && tok.size() == st.size(), "checkpoint: data cursor is inconsistent");
    buf_.clear();
    for (size_t i = 0; i < tok.size(); i++) buf_.push_back({tok[i], (uint8_t)tgt[i], (uint8_t)st[i]});
}

}  // namespace trex
