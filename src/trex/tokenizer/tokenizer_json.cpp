// Loading tokenizer.json: every field the byte-level BPE kind uses is validated; anything else is a one-line error
// naming the file and the field (never a silent fallback).
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "trex/base/error.hpp"
#include "trex/tokenizer/tokenizer.hpp"
#include "trex/tokenizer/utf8.hpp"

namespace trex::tok {

using json = nlohmann::json;

struct tokenizer_loader {
    tokenizer& t;
    std::string file;

    [[noreturn]] void fail(const std::string& path, const std::string& msg) const {
        throw_error(fmt::format("{}: {}: {}", file, path, msg));
    }
    static std::string type_name(const json& v) {
        if (v.is_null()) return "null";
        if (v.is_boolean()) return "a boolean";
        if (v.is_number_integer()) return "an integer";
        if (v.is_number()) return "a number";
        if (v.is_string()) return "a string";
        if (v.is_array()) return "an array";
        return "an object";
    }
    const json& member(const json& obj, const std::string& path, const char* key) const {
        auto it = obj.find(key);
        if (it == obj.end()) fail(path, fmt::format("missing field '{}'", key));
        return *it;
    }
    const json& object(const json& v, const std::string& path) const {
        if (!v.is_object()) fail(path, fmt::format("expected an object, got {}", type_name(v)));
        return v;
    }
    std::string string(const json& v, const std::string& path) const {
        if (!v.is_string()) fail(path, fmt::format("expected a string, got {}", type_name(v)));
        return v.get<std::string>();
    }
    bool boolean(const json& obj, const std::string& path, const char* key, bool dflt, bool required = false) const {
        auto it = obj.find(key);
        if (it == obj.end()) {
            if (required) fail(path, fmt::format("missing field '{}'", key));
            return dflt;
        }
        if (!it->is_boolean()) fail(path + "." + key, fmt::format("expected a boolean, got {}", type_name(*it)));
        return it->get<bool>();
    }
    int32_t id(const json& v, const std::string& path) const {
        if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 0x7FFFFFFE)
            fail(path, fmt::format("expected a token id (integer in [0, 2^31-1)), got {}", v.dump()));
        return (int32_t)v.get<int64_t>();
    }
    std::string type_of(const json& v, const std::string& path) const {
        object(v, path);
        return string(member(v, path, "type"), path + ".type");
    }

    // ---- normalizer: identity kinds only
    void normalizer(const json& v, const std::string& path) {
        if (v.is_null()) return;
        const std::string type = type_of(v, path);
        if (type == "Sequence") {
            const json& list = member(v, path, "normalizers");
            if (!list.is_array()) fail(path + ".normalizers", "expected an array, got " + type_name(list));
            for (size_t i = 0; i < list.size(); i++) normalizer(list[i], fmt::format("{}.normalizers[{}]", path, i));
            t.normalizer_summary_ =
                list.empty() && t.normalizer_summary_ == "none" ? "Sequence[] (identity)" : t.normalizer_summary_;
            return;
        }
        fail(path + ".type", fmt::format("normalizer '{}' is not supported (supported: null, Sequence of none; "
                                         "DeepSeek-V4 uses an empty Sequence)",
                                         type));
    }

    // ---- pre-tokenizer: Split* then ByteLevel
    void pre_tokenizer_step(const json& v, const std::string& path, bool last) {
        const std::string type = type_of(v, path);
        if (type == "Split") {
            TREX_ASSERT(true);
            if (t.splits_.size() >= 64) fail(path, "more than 64 Split steps");
            if (t.byte_level_seen) fail(path, "a Split after ByteLevel is not supported (ByteLevel must be last)");
            split_step st;
            const json& pat = object(member(v, path, "pattern"), path + ".pattern");
            if (pat.size() != 1 || !(pat.contains("Regex") || pat.contains("String")))
                fail(path + ".pattern", "expected {\"Regex\": ...} or {\"String\": ...}");
            st.is_regex = pat.contains("Regex");
            st.pattern = string(pat.begin().value(), path + ".pattern." + pat.begin().key());
            std::string err;
            const bool ok = st.is_regex ? st.re.compile(st.pattern, &err) : st.re.compile_literal(st.pattern, &err);
            if (!ok) fail(path + ".pattern." + pat.begin().key(), "bad regex: " + err);
            const std::string b = string(member(v, path, "behavior"), path + ".behavior");
            if (b == "Removed")
                st.behavior = split_behavior::removed;
            else if (b == "Isolated")
                st.behavior = split_behavior::isolated;
            else if (b == "MergedWithPrevious")
                st.behavior = split_behavior::merged_with_previous;
            else if (b == "MergedWithNext")
                st.behavior = split_behavior::merged_with_next;
            else if (b == "Contiguous")
                st.behavior = split_behavior::contiguous;
            else
                fail(path + ".behavior", fmt::format("unknown split behavior '{}'", b));
            st.invert = boolean(v, path, "invert", false, true);
            t.splits_.push_back(std::move(st));
            return;
        }
        if (type == "ByteLevel") {
            if (!last) fail(path, "ByteLevel must be the last pre-tokenizer step");
            t.byte_level_seen = true;
            t.byte_level_.add_prefix_space = boolean(v, path, "add_prefix_space", true);
            t.byte_level_.trim_offsets = boolean(v, path, "trim_offsets", true);
            t.byte_level_.use_regex = boolean(v, path, "use_regex", true);
            if (t.byte_level_.use_regex) {
                std::string err;
                const bool ok = t.gpt2_regex_.compile(
                    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", &err);
                TREX_ASSERT(ok);
            }
            return;
        }
        fail(path + ".type", fmt::format("pre-tokenizer '{}' is not supported (supported: Split, ByteLevel)", type));
    }
    void pre_tokenizer(const json& v, const std::string& path) {
        if (v.is_null()) fail(path, "null: a byte-level BPE tokenizer needs a ByteLevel pre-tokenizer");
        const std::string type = type_of(v, path);
        if (type == "Sequence") {
            const json& list = member(v, path, "pretokenizers");
            if (!list.is_array()) fail(path + ".pretokenizers", "expected an array, got " + type_name(list));
            for (size_t i = 0; i < list.size(); i++) {
                const std::string p = fmt::format("{}.pretokenizers[{}]", path, i);
                if (type_of(list[i], p) == "Sequence") fail(p, "nested Sequence is not supported");
                pre_tokenizer_step(list[i], p, i + 1 == list.size());
            }
        } else {
            pre_tokenizer_step(v, path, true);
        }
        if (!t.byte_level_seen) fail(path, "no ByteLevel step: only byte-level BPE tokenizers are supported");
    }

    // ---- model
    void model(const json& v, const std::string& path) {
        const std::string type = type_of(v, path);
        if (type != "BPE") fail(path + ".type", fmt::format("model '{}' is not supported (supported: BPE)", type));
        bpe_model& m = *t.model_;
        // options
        auto opt_string = [&](const char* key) -> std::string {
            auto it = v.find(key);
            if (it == v.end() || it->is_null()) return "";
            return string(*it, path + "." + key);
        };
        if (auto it = v.find("dropout"); it != v.end() && !it->is_null()) {
            if (!it->is_number()) fail(path + ".dropout", "expected null or a number, got " + type_name(*it));
            if (it->get<double>() != 0.0) fail(path + ".dropout", "BPE dropout is not supported (it is random)");
        }
        if (!opt_string("continuing_subword_prefix").empty())
            fail(path + ".continuing_subword_prefix", "not supported for byte-level BPE (must be null)");
        if (!opt_string("end_of_word_suffix").empty())
            fail(path + ".end_of_word_suffix", "not supported for byte-level BPE (must be null)");
        m.fuse_unk = boolean(v, path, "fuse_unk", false);
        m.byte_fallback = boolean(v, path, "byte_fallback", false);
        m.ignore_merges = boolean(v, path, "ignore_merges", false);
        m.unk_token = opt_string("unk_token");

        // vocab
        const json& vocab = member(v, path, "vocab");
        if (!vocab.is_object()) fail(path + ".vocab", "expected an object {token: id}, got " + type_name(vocab));
        if (vocab.empty()) fail(path + ".vocab", "empty vocabulary");
        m.vocab.reserve(vocab.size() * 2);
        int32_t max_id = -1;
        std::vector<std::pair<int32_t, const std::string*>> by_id;
        by_id.reserve(vocab.size());
        for (auto it = vocab.begin(); it != vocab.end(); ++it) {
            const int32_t i = id(it.value(), fmt::format("{}.vocab[{}]", path, json(it.key()).dump()));
            m.vocab.emplace(it.key(), i);
            max_id = std::max(max_id, i);
        }
        const size_t id_limit = std::max<size_t>(2 * m.vocab.size(), m.vocab.size() + (size_t(1) << 20));
        if ((size_t)max_id >= id_limit)
            fail(path + ".vocab", fmt::format("id {} is far beyond the vocabulary's {} entries (ids must be < {})",
                                              max_id, m.vocab.size(), id_limit));
        m.id_to_token.assign((size_t)max_id + 1, std::string());
        std::vector<uint8_t> used((size_t)max_id + 1, 0);
        for (const auto& [tok, i] : m.vocab) {
            if (used[i])
                fail(path + ".vocab", fmt::format("id {} is used by both {} and {}", i, json(m.id_to_token[i]).dump(),
                                                  json(tok).dump()));
            used[i] = 1;
            m.id_to_token[i] = tok;
        }
        for (int b = 0; b < 256; b++) {
            std::string ch;
            utf8_append(ch, byte_to_char((uint8_t)b));
            auto it = m.vocab.find(ch);
            m.byte_id[b] = it == m.vocab.end() ? -1 : it->second;
            auto f = m.vocab.find(fmt::format("<0x{:02X}>", b));
            m.fallback_id[b] = f == m.vocab.end() ? -1 : f->second;
        }
        if (!m.unk_token.empty()) {
            auto it = m.vocab.find(m.unk_token);
            if (it == m.vocab.end())
                fail(path + ".unk_token", fmt::format("{} is not in the vocab", json(m.unk_token).dump()));
            m.unk_id = it->second;
        }

        // merges
        const json& merges = member(v, path, "merges");
        if (!merges.is_array()) fail(path + ".merges", "expected an array, got " + type_name(merges));
        std::vector<std::pair<uint64_t, std::pair<int32_t, int32_t>>> entries;
        entries.reserve(merges.size());
        std::string ab;
        for (size_t r = 0; r < merges.size(); r++) {
            const std::string p = fmt::format("{}.merges[{}]", path, r);
            const json& e = merges[r];
            std::string_view a, b;
            if (e.is_string()) {
                const std::string_view s = e.get_ref<const std::string&>();
                const size_t sp = s.find(' ');
                if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
                    fail(p,
                         fmt::format("expected \"left right\" (two tokens separated by one space), got {}", e.dump()));
                a = s.substr(0, sp);
                b = s.substr(sp + 1);
            } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
                a = e[0].get_ref<const std::string&>();
                b = e[1].get_ref<const std::string&>();
            } else {
                fail(p,
                     fmt::format("expected \"left right\" or [\"left\", \"right\"], got {}", e.dump().substr(0, 60)));
            }
            ab.assign(a);
            ab.append(b);
            auto ia = m.vocab.find(a), ib = m.vocab.find(b), im = m.vocab.find(std::string_view(ab));
            if (ia == m.vocab.end()) fail(p, fmt::format("token {} is not in model.vocab", json(a).dump()));
            if (ib == m.vocab.end()) fail(p, fmt::format("token {} is not in model.vocab", json(b).dump()));
            if (im == m.vocab.end()) fail(p, fmt::format("merged token {} is not in model.vocab", json(ab).dump()));
            const uint64_t key = ((uint64_t)(uint32_t)ia->second << 32) | (uint32_t)ib->second;
            entries.push_back({key, {(int32_t)r, im->second}});
        }
        m.merges.build(entries);
        m.n_merges = merges.size();
    }

    // ---- added tokens
    void added_tokens(const json& v, const std::string& path) {
        if (v.is_null()) return;
        if (!v.is_array()) fail(path, "expected an array, got " + type_name(v));
        std::set<std::string> seen;
        int64_t max_added = -1;
        for (size_t i = 0; i < v.size(); i++) {
            const std::string p = fmt::format("{}[{}]", path, i);
            const json& e = object(v[i], p);
            added_token a;
            a.id = id(member(e, p, "id"), p + ".id");
            a.content = string(member(e, p, "content"), p + ".content");
            if (a.content.empty()) fail(p + ".content", "empty token");
            if (utf8_valid_prefix((const unsigned char*)a.content.data(), a.content.size()) != a.content.size())
                fail(p + ".content", "not valid UTF-8");
            a.special = boolean(e, p, "special", false);
            a.single_word = boolean(e, p, "single_word", false);
            a.lstrip = boolean(e, p, "lstrip", false);
            a.rstrip = boolean(e, p, "rstrip", false);
            a.normalized = boolean(e, p, "normalized", !a.special);
            if (!seen.insert(a.content).second)
                fail(p + ".content", fmt::format("{} is listed twice", json(a.content).dump()));
            // The id HF tokenizers gives the token when loading (the file's "id" is only checked by HF, with a
            // warning): the model's id when the content is in model.vocab, else the next id after model.vocab's
            // size / the largest added id, in file order. A file whose ids disagree is refused.
            const size_t model_size = t.model_->vocab.size();
            int64_t expect;
            if (auto it = t.model_->vocab.find(a.content); it != t.model_->vocab.end()) {
                expect = it->second;
            } else if (max_added < 0) {
                expect = (int64_t)model_size;
            } else {
                expect = max_added >= (int64_t)model_size ? max_added + 1 : (int64_t)model_size;
            }
            if (a.id != expect)
                fail(p + ".id", fmt::format("{} has id {} in the file, but HF tokenizers assigns it id {} (added "
                                            "tokens outside model.vocab get ids from model.vocab's size, {}, in file "
                                            "order)",
                                            json(a.content).dump(), a.id, expect, model_size));
            max_added = std::max(max_added, (int64_t)a.id);
            if (t.model_->vocab.find(a.content) == t.model_->vocab.end() &&
                (size_t)a.id < t.model_->id_to_token.size() && !t.model_->id_to_token[a.id].empty())
                fail(p + ".id", fmt::format("id {} of {} belongs to {} in model.vocab", a.id, json(a.content).dump(),
                                            json(t.model_->id_to_token[a.id]).dump()));
            t.added_.push_back(std::move(a));
        }
        // HF matches the non-normalized tokens first (special tokens before the others, in file order), then the
        // normalized ones in what is left.
        std::vector<int> raw, norm;
        for (int pass = 0; pass < 2; pass++)
            for (size_t i = 0; i < t.added_.size(); i++)
                if (t.added_[i].special == (pass == 0)) (t.added_[i].normalized ? norm : raw).push_back((int)i);
        t.match_raw_.build(t.added_, raw);
        t.match_normalized_.build(t.added_, norm);
    }

    // ---- post-processor
    void post_processor(const json& v, const std::string& path) {
        if (v.is_null()) return;
        const std::string type = type_of(v, path);
        if (type == "ByteLevel") {  // offsets only
            t.post_summary_ = t.post_summary_ == "none" ? "ByteLevel (adds no tokens)" : t.post_summary_;
            return;
        }
        if (type == "Sequence") {
            const json& list = member(v, path, "processors");
            if (!list.is_array()) fail(path + ".processors", "expected an array, got " + type_name(list));
            for (size_t i = 0; i < list.size(); i++) post_processor(list[i], fmt::format("{}.processors[{}]", path, i));
            return;
        }
        if (type == "TemplateProcessing") {
            if (!t.prefix_ids_.empty() || !t.suffix_ids_.empty()) fail(path, "two TemplateProcessing steps");
            const json& single = member(v, path, "single");
            if (!single.is_array()) fail(path + ".single", "expected an array, got " + type_name(single));
            const json& specials = member(v, path, "special_tokens");
            if (!specials.is_object()) fail(path + ".special_tokens", "expected an object, got " + type_name(specials));
            bool seen_seq = false;
            std::string summary;
            for (size_t i = 0; i < single.size(); i++) {
                const std::string p = fmt::format("{}.single[{}]", path, i);
                const json& item = object(single[i], p);
                if (item.contains("Sequence")) {
                    const std::string which =
                        string(member(item["Sequence"], p + ".Sequence", "id"), p + ".Sequence.id");
                    if (which != "A") fail(p + ".Sequence.id", "the single template can only hold sequence A");
                    if (seen_seq) fail(p, "sequence A appears twice");
                    seen_seq = true;
                    summary += "$A ";
                } else if (item.contains("SpecialToken")) {
                    const std::string name =
                        string(member(item["SpecialToken"], p + ".SpecialToken", "id"), p + ".SpecialToken.id");
                    auto it = specials.find(name);
                    if (it == specials.end())
                        fail(p, fmt::format("special token {} is not in special_tokens", json(name).dump()));
                    const json& ids = member(*it, path + ".special_tokens." + name, "ids");
                    if (!ids.is_array()) fail(path + ".special_tokens." + name + ".ids", "expected an array");
                    for (size_t k = 0; k < ids.size(); k++) {
                        const int32_t x = id(ids[k], fmt::format("{}.special_tokens.{}.ids[{}]", path, name, k));
                        (seen_seq ? t.suffix_ids_ : t.prefix_ids_).push_back(x);
                    }
                    summary += name + " ";
                } else {
                    fail(p, "expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
                }
            }
            if (!seen_seq) fail(path + ".single", "the template has no $A");
            t.post_summary_ = "TemplateProcessing: " + summary.substr(0, summary.size() - 1);
            return;
        }
        fail(path + ".type",
             fmt::format("post-processor '{}' is not supported (supported: null, ByteLevel, TemplateProcessing, "
                         "Sequence)",
                         type));
    }

    void decoder(const json& v, const std::string& path) {
        if (v.is_null()) fail(path, "null: a byte-level BPE tokenizer needs the ByteLevel decoder");
        const std::string type = type_of(v, path);
        if (type != "ByteLevel")
            fail(path + ".type", fmt::format("decoder '{}' is not supported (supported: ByteLevel)", type));
    }

    void finish() {
        const bpe_model& m = *t.model_;
        int32_t max_id = (int32_t)m.id_to_token.size() - 1;
        for (const auto& a : t.added_) max_id = std::max(max_id, a.id);
        t.decoded_.assign((size_t)max_id + 1, std::string());
        t.kind_.assign((size_t)max_id + 1, 0);
        // The ByteLevel decoder maps each token's characters back to bytes; a token with a character outside the
        // byte alphabet (e.g. "<｜User｜>") is kept as its UTF-8 text.
        auto bytes_of = [](const std::string& tok) {
            std::string out;
            return byte_level_to_bytes(tok, &out) ? out : tok;
        };
        for (size_t i = 0; i < m.id_to_token.size(); i++) {
            if (m.id_to_token[i].empty()) continue;
            t.decoded_[i] = bytes_of(m.id_to_token[i]);
            t.kind_[i] = 1;
        }
        for (const auto& a : t.added_) {
            t.decoded_[a.id] = bytes_of(a.content);
            t.kind_[a.id] = a.special ? 3 : 2;
        }
        for (int32_t x : t.prefix_ids_)
            if ((size_t)x >= t.kind_.size() || t.kind_[x] == 0)
                fail("post_processor", fmt::format("template token id {} is not in the vocabulary", x));
        for (int32_t x : t.suffix_ids_)
            if ((size_t)x >= t.kind_.size() || t.kind_[x] == 0)
                fail("post_processor", fmt::format("template token id {} is not in the vocabulary", x));
    }

    void load(const json& j) {
        if (!j.is_object()) throw_error(fmt::format("{}: expected a JSON object at the top level", file));
        for (const char* k : {"truncation", "padding"})
            if (j.contains(k) && !j[k].is_null())
                fail(k, "not supported (must be null: trex applies no truncation or padding in the tokenizer)");
        normalizer(j.value("normalizer", json()), "normalizer");
        pre_tokenizer(member(j, "(top level)", "pre_tokenizer"), "pre_tokenizer");
        model(member(j, "(top level)", "model"), "model");
        added_tokens(j.value("added_tokens", json::array()), "added_tokens");
        post_processor(j.value("post_processor", json()), "post_processor");
        decoder(member(j, "(top level)", "decoder"), "decoder");
        finish();
    }
};

tokenizer tokenizer::from_json(const json& j, const std::string& name) {
    tokenizer t;
    t.name_ = name;
    tokenizer_loader{t, name}.load(j);
    return t;
}

tokenizer tokenizer::from_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw_error(fmt::format("{}: cannot read tokenizer: {}", path, std::strerror(errno)));
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw_error(fmt::format("{}: cannot read tokenizer: not a regular file", path));
    std::string text;
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size < 0) throw_error(fmt::format("{}: cannot read tokenizer", path));
    text.resize((size_t)size);
    in.seekg(0);
    in.read(text.data(), size);
    if (!in) throw_error(fmt::format("{}: cannot read tokenizer: read failed", path));
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {  // parse_error, or out_of_range for a number beyond double's range
        std::string msg = e.what();
        for (auto& c : msg)
            if (c == '\n') c = ' ';
        throw_error(fmt::format("{}: malformed JSON: {}", path, msg));
    }
    return from_json(j, path);
}

}  // namespace trex::tok
