#include "trex/tokenizer/train.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <queue>
#include <unordered_map>

#include "trex/base/error.hpp"
#include "trex/tokenizer/tokenizer.hpp"
#include "trex/tokenizer/utf8.hpp"

namespace trex::tok {

using ojson = nlohmann::ordered_json;

std::vector<std::string> default_special_tokens() {
    return {"<｜begin▁of▁sentence｜>",
            "<｜end▁of▁sentence｜>",
            "<｜▁pad▁｜>",
            "<｜User｜>",
            "<｜Assistant｜>",
            "<think>",
            "</think>"};
}

ojson trained_pre_tokenizer(bool split_digits) {
    // The three Split steps of DeepSeek-V4's tokenizer.json (digits, CJK runs, words/punctuation/whitespace).
    const char* main_re =
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
        "?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";
    auto split = [](const std::string& re) {
        return ojson{{"type", "Split"}, {"pattern", {{"Regex", re}}}, {"behavior", "Isolated"}, {"invert", false}};
    };
    ojson steps = ojson::array();
    steps.push_back(split(split_digits ? "\\p{N}" : "\\p{N}{1,3}"));
    steps.push_back(split("[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"));
    steps.push_back(split(main_re));
    steps.push_back({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}});
    return {{"type", "Sequence"}, {"pretokenizers", steps}};
}

namespace {

ojson byte_level_block(bool add_prefix_space, bool trim_offsets) {
    return {{"type", "ByteLevel"},
            {"add_prefix_space", add_prefix_space},
            {"trim_offsets", trim_offsets},
            {"use_regex", true}};
}

ojson tokenizer_document(const std::vector<std::string>& specials, const ojson& pre, const ojson& vocab,
                         const ojson& merges) {
    ojson added = ojson::array();
    for (size_t i = 0; i < specials.size(); i++)
        added.push_back({{"id", i},
                         {"content", specials[i]},
                         {"single_word", false},
                         {"lstrip", false},
                         {"rstrip", false},
                         {"normalized", false},
                         {"special", true}});
    ojson model = {{"type", "BPE"},
                   {"dropout", nullptr},
                   {"unk_token", nullptr},
                   {"continuing_subword_prefix", nullptr},
                   {"end_of_word_suffix", nullptr},
                   {"fuse_unk", false},
                   {"byte_fallback", false},
                   {"ignore_merges", false},
                   {"vocab", vocab},
                   {"merges", merges}};
    return {{"version", "1.0"},
            {"truncation", nullptr},
            {"padding", nullptr},
            {"added_tokens", added},
            {"normalizer", {{"type", "Sequence"}, {"normalizers", ojson::array()}}},
            {"pre_tokenizer", pre},
            {"post_processor", byte_level_block(true, false)},
            {"decoder", byte_level_block(true, true)},
            {"model", model}};
}

inline uint64_t pair_key(int32_t a, int32_t b) {
    return ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
}

void check_train_options(const train_options& opt) {
    const std::vector<std::string>& specials = opt.special_tokens;
    TREX_CHECK(opt.vocab_size >= specials.size() + 256,
               "train: --vocab-size {} is smaller than the {} special tokens + 256 byte tokens", opt.vocab_size,
               specials.size());
    TREX_CHECK(opt.vocab_size <= 0x7FFFFFF0u, "train: --vocab-size {} is too large", opt.vocab_size);
    for (const auto& s : specials) TREX_CHECK(!s.empty(), "train: empty special token");
}

// Initial vocabulary: special tokens, then the 256 byte tokens in byte order (byte-level strings by id).
std::vector<std::string> initial_vocabulary(const std::vector<std::string>& specials) {
    std::vector<std::string> tokens(specials.begin(), specials.end());
    for (int b = 0; b < 256; b++) {
        std::string ch;
        utf8_append(ch, byte_to_char((uint8_t)b));
        tokens.push_back(ch);
    }
    return tokens;
}

// Large documents are counted in chunks (parallel), cut where no piece can span the cut: after '\n' followed by
// a byte that is not ASCII whitespace and starts a character (none of the Split patterns match across it, and
// \s*[\r\n]+ ends the whitespace run at the newline either way). Not done if a special token holds '\n'.
std::vector<std::string_view> chunk_documents(const std::vector<std::string_view>& docs, const train_options& opt) {
    bool can_chunk = opt.chunk_bytes > 0;
    for (const auto& s : opt.special_tokens) can_chunk = can_chunk && s.find('\n') == std::string::npos;
    std::vector<std::string_view> chunks;
    for (auto d : docs) {
        size_t s = 0;
        while (can_chunk && d.size() - s > opt.chunk_bytes) {
            size_t cut = std::string_view::npos;
            for (size_t i = s + opt.chunk_bytes; i + 1 < d.size(); i++) {
                const unsigned char c = (unsigned char)d[i + 1];
                if (d[i] == '\n' && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f' &&
                    (c < 0x80 || c >= 0xC0) && c != 0xC2 && c != 0xE1 && c != 0xE2 && c != 0xE3) {
                    cut = i + 1;  // (0xC2/0xE1/0xE2/0xE3 may start U+0085, U+00A0, U+1680, U+2000.., U+3000: skip)
                    break;
                }
            }
            if (cut == std::string_view::npos) break;
            chunks.push_back(d.substr(s, cut - s));
            s = cut;
        }
        chunks.push_back(d.substr(s));
    }
    return chunks;
}

// The words of every chunk (nt threads, one map each, then summed) with their counts, sorted by word so that the
// order is independent of hashing and threads.
std::vector<std::pair<std::string, uint64_t>> count_words(const tokenizer& pt,
                                                          const std::vector<std::string_view>& chunks, int nt) {
    std::vector<std::unordered_map<std::string, uint64_t, sv_hash, std::equal_to<>>> local((size_t)nt);
    std::exception_ptr err;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (size_t i = 0; i < chunks.size(); i++) {
        auto& m = local[(size_t)omp_get_thread_num()];
        try {
            pt.pre_tokenize(chunks[i], [&](std::string_view w) {
                auto it = m.find(w);
                if (it == m.end())
                    m.emplace(std::string(w), 1);
                else
                    it->second++;
            });
        } catch (...) {
#pragma omp critical(trex_train_error)
            if (!err) err = std::current_exception();
        }
    }
    if (err) std::rethrow_exception(err);
    for (size_t t = 1; t < local.size(); t++) {
        for (auto& [w, c] : local[t]) local[0][w] += c;
        local[t].clear();
    }
    std::vector<std::pair<std::string, uint64_t>> counted(local[0].begin(), local[0].end());
    local.clear();
    std::sort(counted.begin(), counted.end());  // word order independent of hashing and threads
    return counted;
}

// An entry of the merge heap: a pair and its count when pushed.
struct merge_entry {
    int64_t count;
    uint64_t key;
    bool operator<(const merge_entry& o) const {  // priority_queue pops the largest
        if (count != o.count) return count < o.count;
        return key > o.key;  // smaller (left id, right id) first
    }
};

// The BPE merges: words as symbol sequences, the count of every adjacent pair and the words it occurs in, and a
// max-heap of (count, pair) with lazy updates.
struct bpe_trainer {
    std::vector<std::string> tokens;  // byte-level strings by id
    std::vector<std::vector<int32_t>> words;
    std::vector<uint64_t> freq;
    std::unordered_map<uint64_t, int64_t> count;
    std::unordered_map<uint64_t, std::vector<uint32_t>> where;
    std::priority_queue<merge_entry> heap;
    std::unordered_map<std::string, int32_t> token_id;
    std::vector<uint32_t> stamp;  // the merge round that last visited each word
    uint32_t round = 0;
    std::unordered_map<uint64_t, int64_t> delta;

    // 2. Words as symbol sequences; pair counts and where each pair occurs.
    void index_words(const std::vector<std::pair<std::string, uint64_t>>& counted, int32_t byte0) {
        const size_t n_words = counted.size();
        words.resize(n_words);
        freq.resize(n_words);
        for (size_t w = 0; w < n_words; w++) {
            const std::string& s = counted[w].first;
            freq[w] = counted[w].second;
            words[w].reserve(s.size());
            for (unsigned char b : s) words[w].push_back(byte0 + b);
            for (size_t i = 0; i + 1 < words[w].size(); i++) {
                const uint64_t k = pair_key(words[w][i], words[w][i + 1]);
                count[k] += (int64_t)freq[w];
                auto& v = where[k];
                if (v.empty() || v.back() != w) v.push_back((uint32_t)w);
            }
        }
    }

    // 3. Merge loop, until the vocabulary is full or the best pair is rarer than the minimum; returns the merges.
    ojson merge(const train_options& opt) {
        for (const auto& [k, c] : count) heap.push({c, k});
        for (size_t i = 0; i < tokens.size(); i++) token_id.emplace(tokens[i], (int32_t)i);
        ojson merges = ojson::array();
        stamp.assign(words.size(), 0);
        while (tokens.size() < opt.vocab_size && !heap.empty()) {
            const merge_entry top = heap.top();
            heap.pop();
            auto cit = count.find(top.key);
            const int64_t cur = cit == count.end() ? 0 : cit->second;
            if (cur != top.count) {  // stale: requeue with the current count
                if (cur > 0) heap.push({cur, top.key});
                continue;
            }
            if (cur < (int64_t)std::max<size_t>(opt.min_frequency, 1)) break;
            const int32_t a = (int32_t)(top.key >> 32), b = (int32_t)(uint32_t)top.key;
            const int32_t c = merged_token(a, b);
            merges.push_back(ojson::array({tokens[a], tokens[b]}));
            apply_merge(top.key, a, b, c);
        }
        return merges;
    }

    // The id of tokens[a] + tokens[b], added to the vocabulary when new.
    int32_t merged_token(int32_t a, int32_t b) {
        const std::string merged = tokens[a] + tokens[b];
        int32_t c;
        if (auto it = token_id.find(merged); it != token_id.end()) {
            c = it->second;  // the same string reached by another merge path: reuse its id (as HF does)
        } else {
            c = (int32_t)tokens.size();
            tokens.push_back(merged);
            token_id.emplace(merged, c);
        }
        return c;
    }

    // Apply the merge in every word holding the pair; update pair counts by the difference.
    void apply_merge(uint64_t key, int32_t a, int32_t b, int32_t c) {
        round++;
        delta.clear();
        std::vector<uint32_t> ws = std::move(where[key]);
        where.erase(key);
        for (uint32_t w : ws) {
            if (stamp[w] == round) continue;
            stamp[w] = round;
            merge_in_word(w, a, b, c);
        }
        for (const auto& [k, d] : delta) {
            if (d == 0) continue;
            int64_t& v = count[k];
            v += d;
            if (d > 0) heap.push({v, k});
            if (v <= 0) count.erase(k);
        }
    }

    // Word w with every (a, b) replaced by c: its old pairs leave the counts (delta) and its new ones join, the new
    // ones holding c recorded where they occur.
    void merge_in_word(uint32_t w, int32_t a, int32_t b, int32_t c) {
        std::vector<int32_t>& s = words[w];
        bool has = false;
        for (size_t i = 0; i + 1 < s.size() && !has; i++) has = s[i] == a && s[i + 1] == b;
        if (!has) return;
        const int64_t f = (int64_t)freq[w];
        for (size_t i = 0; i + 1 < s.size(); i++) delta[pair_key(s[i], s[i + 1])] -= f;
        size_t o = 0;
        for (size_t i = 0; i < s.size();) {
            if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
                s[o++] = c;
                i += 2;
            } else {
                s[o++] = s[i++];
            }
        }
        s.resize(o);
        for (size_t i = 0; i + 1 < s.size(); i++) {
            const uint64_t k = pair_key(s[i], s[i + 1]);
            delta[k] += f;
            if (s[i] == c || s[i + 1] == c) {
                auto& v = where[k];
                if (v.empty() || v.back() != w) v.push_back(w);
            }
        }
    }
};

}  // namespace

ojson train_bpe(const std::vector<std::string_view>& docs, const train_options& opt, train_stats* stats) {
    const std::vector<std::string>& specials = opt.special_tokens;
    check_train_options(opt);
    bpe_trainer bpe;
    bpe.tokens = initial_vocabulary(specials);
    const int32_t byte0 = (int32_t)specials.size();
    const ojson pre = trained_pre_tokenizer(opt.split_digits);

    // 1. Count words with the pre-tokenizer of the tokenizer being trained (special tokens are not words).
    ojson init_vocab = ojson::object();
    for (size_t i = 0; i < bpe.tokens.size(); i++) init_vocab[bpe.tokens[i]] = i;
    const tokenizer pt =
        tokenizer::from_json(tokenizer_document(specials, pre, init_vocab, ojson::array()), "<trainer pre-tokenizer>");
    const int nt = opt.threads > 0 ? opt.threads : omp_get_max_threads();
    const std::vector<std::string_view> chunks = chunk_documents(docs, opt);
    size_t total_bytes = 0;
    for (auto d : docs) total_bytes += d.size();
    std::vector<std::pair<std::string, uint64_t>> counted = count_words(pt, chunks, nt);

    // 2. Words as symbol sequences; pair counts and where each pair occurs.
    const size_t n_words = counted.size();
    bpe.index_words(counted, byte0);
    counted.clear();
    counted.shrink_to_fit();

    // 3. Merge loop: a max-heap of (count, pair) with lazy updates.
    const ojson merges = bpe.merge(opt);

    ojson vocab = ojson::object();
    for (size_t i = 0; i < bpe.tokens.size(); i++) vocab[bpe.tokens[i]] = i;
    if (stats) {
        stats->bytes = total_bytes;
        stats->words = n_words;
        stats->merges = merges.size();
        stats->vocab_size = bpe.tokens.size();
    }
    return tokenizer_document(specials, pre, vocab, merges);
}

void write_json_atomic(const std::string& path, const ojson& j) {
    const std::string tmp = fmt::format("{}.tmp.{}", path, (long)getpid());
    {
        FILE* f = std::fopen(tmp.c_str(), "wb");
        TREX_CHECK(f != nullptr, "{}: cannot write: {}", tmp, std::strerror(errno));
        const std::string s = j.dump(1) + "\n";
        const size_t n = std::fwrite(s.data(), 1, s.size(), f);
        const bool ok = n == s.size() && std::fclose(f) == 0;
        if (!ok) {
            std::filesystem::remove(tmp);
            throw_error(fmt::format("{}: write failed", tmp));
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp);
        throw_error(fmt::format("{}: cannot rename into place: {}", path, ec.message()));
    }
}

}  // namespace trex::tok
