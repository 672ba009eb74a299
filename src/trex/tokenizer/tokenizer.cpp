#include "trex/tokenizer/tokenizer.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>

#include "trex/base/error.hpp"
#include "trex/tokenizer/utf8.hpp"

namespace trex::tok {

namespace {

std::atomic<uint64_t> next_serial{1};

inline uint32_t at(const uint32_t* map, size_t i) {
    return map ? map[i] : (uint32_t)i;
}

// Word character of Rust's regex crate (\w, Unicode): what HF's single_word check uses.
bool is_word_char(uint32_t cp) {
    if (cp < 0x80) return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_';
    static const regex re = [] {
        regex r;
        std::string err;
        r.compile("\\A[\\p{L}\\p{Nl}\\p{M}\\p{Nd}\\p{Pc}\\x{200C}\\x{200D}]", &err);
        return r;
    }();
    std::string ch;
    utf8_append(ch, cp);
    size_t s, e;
    return re.search(ch.data(), ch.size(), 0, &s, &e);
}

// Code point of the last character of s[0..end) (valid UTF-8).
uint32_t last_char(const unsigned char* s, size_t end) {
    size_t i = end - 1;
    while (i > 0 && (s[i] & 0xC0) == 0x80) i--;
    uint32_t cp = 0;
    utf8_next(s + i, end - i, &cp);
    return cp;
}

}  // namespace

const char* split_behavior_name(split_behavior b) {
    switch (b) {
        case split_behavior::removed:
            return "Removed";
        case split_behavior::isolated:
            return "Isolated";
        case split_behavior::merged_with_previous:
            return "MergedWithPrevious";
        case split_behavior::merged_with_next:
            return "MergedWithNext";
        case split_behavior::contiguous:
            return "Contiguous";
    }
    return "?";
}

// ---------------------------------------------------------------------------------------------------------------
// added-token matcher

void token_matcher::build(const std::vector<added_token>& tokens, const std::vector<int>& which) {
    nodes_.assign(1, node{});
    std::fill(std::begin(first_), std::end(first_), false);
    n_tokens_ = 0;
    for (int t : which) {
        const std::string& c = tokens[t].content;
        if (c.empty()) continue;
        int32_t cur = 0;
        for (unsigned char b : c) {
            auto& nx = nodes_[cur].next;
            auto it = std::lower_bound(nx.begin(), nx.end(), std::make_pair(b, (int32_t)-1));
            if (it != nx.end() && it->first == b) {
                cur = it->second;
            } else {
                const int32_t id = (int32_t)nodes_.size();
                nx.insert(it, {b, id});
                nodes_.push_back(node{});
                cur = id;
            }
        }
        if (nodes_[cur].token < 0) nodes_[cur].token = t;  // a repeated content keeps its first entry
        first_[(unsigned char)c[0]] = true;
        n_tokens_++;
    }
}

bool token_matcher::find(const unsigned char* text, size_t n, size_t pos, size_t* s, size_t* e, int* token) const {
    if (n_tokens_ == 0) return false;
    for (size_t i = pos; i < n; i++) {
        if (!first_[text[i]]) continue;
        int32_t cur = 0, best = -1;
        size_t best_end = 0;
        for (size_t j = i; j < n; j++) {
            const auto& nx = nodes_[cur].next;
            auto it = std::lower_bound(nx.begin(), nx.end(), std::make_pair(text[j], (int32_t)-1));
            if (it == nx.end() || it->first != text[j]) break;
            cur = it->second;
            if (nodes_[cur].token >= 0) {
                best = nodes_[cur].token;
                best_end = j + 1;
            }
        }
        if (best >= 0) {
            *s = i;
            *e = best_end;
            *token = best;
            return true;
        }
    }
    return false;
}

// ---------------------------------------------------------------------------------------------------------------
// per-thread scratch

// Word cache: piece bytes -> ids, open addressing over flat arrays (one probe touches one 16-byte slot; keys and
// ids live in arenas). Grows to max_slots, then starts over empty (bounded memory for any input).
class word_cache {
   public:
    static constexpr size_t max_slots = size_t(1) << 21;
    // ids of the piece, or nullptr (n_ids set on a hit)
    const int32_t* find(const unsigned char* p, size_t n, uint64_t h, uint32_t* n_ids) const {
        if (slots_.empty()) return nullptr;
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            const slot& s = slots_[i];
            if (s.key_len == 0) return nullptr;
            if (s.hash == (uint32_t)(h >> 32) && s.key_len == n && std::memcmp(keys_.data() + s.key_off, p, n) == 0) {
                *n_ids = s.n_ids;
                return ids_.data() + s.ids_off;
            }
        }
    }
    void insert(const unsigned char* p, size_t n, uint64_t h, const int32_t* ids, size_t n_ids) {
        if (n == 0 || n > 0xFFFF || n_ids > 0xFFFF) return;
        if ((used_ + 1) * 2 > slots_.size()) {
            if (slots_.size() >= max_slots) {
                clear();
            }
            rehash(slots_.empty() ? 4096 : slots_.size() * 2);
        }
        size_t i = h & mask_;
        while (slots_[i].key_len != 0) i = (i + 1) & mask_;
        slot& s = slots_[i];
        s.hash = (uint32_t)(h >> 32);
        s.key_off = (uint32_t)keys_.size();
        s.key_len = (uint16_t)n;
        s.n_ids = (uint16_t)n_ids;
        s.ids_off = (uint32_t)ids_.size();
        keys_.append((const char*)p, n);
        ids_.insert(ids_.end(), ids, ids + n_ids);
        used_++;
    }
    void clear() {
        slots_.clear();
        keys_.clear();
        ids_.clear();
        used_ = 0;
        mask_ = 0;
    }

   private:
    struct slot {
        uint32_t hash = 0, key_off = 0, ids_off = 0;
        uint16_t key_len = 0, n_ids = 0;
    };
    void rehash(size_t cap) {
        std::vector<slot> old;
        old.swap(slots_);
        slots_.assign(cap, slot{});
        mask_ = cap - 1;
        for (const slot& s : old) {
            if (s.key_len == 0) continue;
            const uint64_t h = sv_hash{}(std::string_view(keys_.data() + s.key_off, s.key_len));
            size_t i = h & mask_;
            while (slots_[i].key_len != 0) i = (i + 1) & mask_;
            slots_[i] = s;
        }
    }
    std::vector<slot> slots_;
    std::string keys_;
    std::vector<int32_t> ids_;
    size_t used_ = 0, mask_ = 0;
};

struct encode_scratch {
    uint64_t owner = 0;
    std::vector<std::vector<std::pair<std::pair<size_t, size_t>, bool>>> levels;  // matches per split level
    std::vector<std::pair<size_t, size_t>> gpt2_cuts;
    std::vector<int32_t> sym, word;
    std::string subj, subj_orig, shadow;
    std::vector<uint32_t> subj_map, shadow_map;
    word_cache cache;
    const std::function<void(std::string_view)>* sink = nullptr;  // pre_tokenize(): pieces go here, not to BPE
};

encode_scratch& tokenizer::scratch() const {
    thread_local std::unique_ptr<encode_scratch> sc;
    if (!sc || sc->owner != serial_) {
        sc = std::make_unique<encode_scratch>();
        sc->owner = serial_;
        sc->levels.resize(splits_.size() + 1);
    }
    return *sc;
}

tokenizer::tokenizer() : serial_(next_serial++), model_(std::make_unique<bpe_model>()) {}
tokenizer::~tokenizer() = default;
tokenizer::tokenizer(tokenizer&&) noexcept = default;
tokenizer& tokenizer::operator=(tokenizer&&) noexcept = default;

// ---------------------------------------------------------------------------------------------------------------
// encode

void tokenizer::bpe_piece(const unsigned char* p, size_t n, uint32_t start, std::vector<int32_t>& ids,
                          std::vector<uint32_t>* starts, encode_scratch& sc) const {
    if (sc.sink) {
        (*sc.sink)(std::string_view((const char*)p, n));
        return;
    }
    const size_t before = ids.size();
    if (n <= 4096) {
        const uint64_t h = sv_hash{}(std::string_view((const char*)p, n));
        uint32_t k = 0;
        if (const int32_t* hit = sc.cache.find(p, n, h, &k)) {
            ids.insert(ids.end(), hit, hit + k);
        } else {
            model_->encode_word(p, n, ids, sc.sym);
            sc.cache.insert(p, n, h, ids.data() + before, ids.size() - before);
        }
    } else {
        model_->encode_word(p, n, ids, sc.sym);
    }
    if (starts) starts->resize(ids.size(), start);
}

void tokenizer::byte_level_piece(const char* s, size_t a, size_t b, const char* orig, const uint32_t* map,
                                 std::vector<int32_t>& ids, std::vector<uint32_t>* starts, encode_scratch& sc) const {
    const uint32_t oa = at(map, a), ob = at(map, b);
    const bool prefix = byte_level_.add_prefix_space && s[a] != ' ';
    if (!prefix && !byte_level_.use_regex) {
        bpe_piece((const unsigned char*)orig + oa, ob - oa, oa, ids, starts, sc);
        return;
    }
    // General path: the piece with its optional leading space, split by the GPT-2 regex when use_regex.
    const size_t pf = prefix ? 1 : 0;
    sc.subj.assign(prefix ? " " : "");
    sc.subj.append(s + a, b - a);
    sc.subj_orig.assign(prefix ? " " : "");
    sc.subj_orig.append(orig + oa, ob - oa);
    sc.subj_map.resize(sc.subj.size() + 1);
    if (prefix) sc.subj_map[0] = 0;
    for (size_t p = 0; p <= b - a; p++) sc.subj_map[p + pf] = at(map, a + p) - oa + (uint32_t)pf;
    auto emit = [&](size_t x, size_t y) {
        if (x == y) return;
        const uint32_t mx = sc.subj_map[x], my = sc.subj_map[y];
        const uint32_t start = oa + (mx >= pf ? mx - (uint32_t)pf : 0);
        bpe_piece((const unsigned char*)sc.subj_orig.data() + mx, my - mx, start, ids, starts, sc);
    };
    if (!byte_level_.use_regex) {
        emit(0, sc.subj.size());
        return;
    }
    std::vector<std::pair<size_t, size_t>>& cuts = sc.gpt2_cuts;
    cuts.clear();
    size_t prev = 0;
    gpt2_regex_.for_each_match(sc.subj.data(), sc.subj.size(), [&](size_t ms, size_t me) {
        if (prev != ms) cuts.push_back({prev, ms});
        cuts.push_back({ms, me});
        prev = me;
    });
    if (prev != sc.subj.size()) cuts.push_back({prev, sc.subj.size()});
    for (const auto& [x, y] : cuts) emit(x, y);
}

void tokenizer::split_level(size_t level, const char* s, size_t a, size_t b, const char* orig, const uint32_t* map,
                            std::vector<int32_t>& ids, std::vector<uint32_t>* starts, encode_scratch& sc) const {
    if (level == splits_.size()) {
        byte_level_piece(s, a, b, orig, map, ids, starts, sc);
        return;
    }
    const split_step& st = splits_[level];
    auto& m = sc.levels[level];
    m.clear();
    const char* subj = s + a;
    const size_t len = b - a;
    size_t prev = 0;
    st.re.for_each_match(subj, len, [&](size_t ms, size_t me) {
        if (prev != ms) m.push_back({{prev, ms}, false});
        m.push_back({{ms, me}, true});
        prev = me;
    });
    if (prev != len) m.push_back({{prev, len}, false});
    if (st.invert)
        for (auto& x : m) x.second = !x.second;
    // Apply the delimiter behaviour in place: entries become (offsets, keep).
    switch (st.behavior) {
        case split_behavior::isolated:
            for (auto& x : m) x.second = true;
            break;
        case split_behavior::removed:
            for (auto& x : m) x.second = !x.second;
            break;
        case split_behavior::contiguous:
        case split_behavior::merged_with_previous: {
            const bool contiguous = st.behavior == split_behavior::contiguous;
            size_t w = 0;
            bool previous_match = false;
            for (size_t i = 0; i < m.size(); i++) {
                const bool is_match = m[i].second;
                const bool join = contiguous ? is_match == previous_match : (is_match && !previous_match);
                if (join && w > 0) {
                    m[w - 1].first.second = m[i].first.second;
                } else {
                    m[w++] = {m[i].first, true};
                }
                previous_match = is_match;
            }
            m.resize(w);
            break;
        }
        case split_behavior::merged_with_next: {
            size_t w = m.size();  // build from the back
            bool previous_match = false;
            for (size_t i = m.size(); i-- > 0;) {
                const bool is_match = m[i].second;
                if (is_match && !previous_match && w < m.size()) {
                    m[w].first.first = m[i].first.first;
                } else {
                    m[--w] = {m[i].first, true};
                }
                previous_match = is_match;
            }
            m.erase(m.begin(), m.begin() + (ptrdiff_t)w);
            break;
        }
    }
    for (size_t i = 0; i < m.size(); i++) {
        const auto [x, y] = m[i].first;
        if (m[i].second && y > x) split_level(level + 1, s, a + x, a + y, orig, map, ids, starts, sc);
    }
}

void tokenizer::encode_text(const char* s, size_t a, size_t b, const char* orig, const uint32_t* map,
                            std::vector<int32_t>& ids, std::vector<uint32_t>* starts, encode_scratch& sc) const {
    if (b > a) split_level(0, s, a, b, orig, map, ids, starts, sc);
}

// HF AddedVocabulary::find_matches on the sentence s[a..b): calls gap(x, y) for text and tok(x, y, index) for
// added tokens, in order.
template <class Gap, class Tok>
static void for_each_added(const std::vector<added_token>& added, const token_matcher& m, const char* s, size_t a,
                           size_t b, Gap&& gap, Tok&& tok) {
    const auto* t = (const unsigned char*)s + a;
    const size_t n = b - a;
    if (m.empty() || n == 0) {
        if (n) gap(a, b);
        return;
    }
    size_t start_offset = 0, pos = 0, ms, me;
    int k;
    while (pos < n && m.find(t, n, pos, &ms, &me, &k)) {
        pos = me;
        const added_token& at_ = added[k];
        size_t start = ms, stop = me;
        if (at_.single_word) {
            const bool start_space = start == 0 || !is_word_char(last_char(t, start));
            uint32_t cp = 0;
            const bool stop_space = stop == n || (utf8_next(t + stop, n - stop, &cp), !is_word_char(cp));
            if (!start_space || !stop_space) continue;
        }
        if (at_.lstrip) {
            size_t ns = start;
            while (ns > 0) {
                size_t q = ns - 1;
                while (q > 0 && (t[q] & 0xC0) == 0x80) q--;
                uint32_t cp = 0;
                utf8_next(t + q, ns - q, &cp);
                if (!is_white_space(cp)) break;
                ns = q;
            }
            start = std::max(ns, start_offset);
        }
        if (at_.rstrip) {
            while (stop < n) {
                uint32_t cp = 0;
                const int l = utf8_next(t + stop, n - stop, &cp);
                if (l < 0 || !is_white_space(cp)) break;
                stop += (size_t)l;
            }
        }
        if (start_offset < start) gap(a + start_offset, a + start);
        tok(a + start, a + stop, k);
        start_offset = stop;
    }
    if (start_offset < n) gap(a + start_offset, b);
}

void tokenizer::encode_valid(const char* s, size_t n, const char* orig, const uint32_t* map, bool add_special,
                             std::vector<int32_t>& ids, std::vector<uint32_t>* starts, encode_scratch& sc) const {
    if (add_special) {
        ids.insert(ids.end(), prefix_ids_.begin(), prefix_ids_.end());
        if (starts) starts->resize(ids.size(), 0);
    }
    auto on_token = [&](size_t x, size_t, int k) {
        ids.push_back(added_[k].id);
        if (starts) starts->push_back(at(map, x));
    };
    for_each_added(
        added_, match_raw_, s, 0, n,
        [&](size_t x, size_t y) {
            for_each_added(
                added_, match_normalized_, s, x, y,
                [&](size_t x2, size_t y2) { encode_text(s, x2, y2, orig, map, ids, starts, sc); }, on_token);
        },
        on_token);
    if (add_special) {
        ids.insert(ids.end(), suffix_ids_.begin(), suffix_ids_.end());
        if (starts) starts->resize(ids.size(), at(map, n));
    }
}

void tokenizer::encode(std::string_view text, std::vector<int32_t>& ids, bool add_special_tokens,
                       std::vector<uint32_t>* starts) const {
    TREX_CHECK(text.size() < 0xFFFFFFF0ull, "tokenizer: a document of {} bytes exceeds the 4 GiB limit", text.size());
    encode_scratch& sc = scratch();
    const auto* p = (const unsigned char*)text.data();
    const size_t n = text.size();
    size_t bad = utf8_valid_prefix(p, n);
    if (bad == n) {
        encode_valid(text.data(), n, text.data(), nullptr, add_special_tokens, ids, starts, sc);
        return;
    }
    // Invalid UTF-8: split on a shadow text where each maximal ill-formed subpart is U+FFFD, encode raw bytes.
    std::string& sh = sc.shadow;
    std::vector<uint32_t>& mp = sc.shadow_map;
    sh.assign(text.data(), bad);
    mp.resize(bad);
    for (size_t i = 0; i < bad; i++) mp[i] = (uint32_t)i;
    size_t i = bad;
    while (i < n) {
        uint32_t cp;
        const int k = utf8_next(p + i, n - i, &cp);
        if (k > 0) {
            for (int j = 0; j < k; j++) {
                sh += (char)p[i + j];
                mp.push_back((uint32_t)(i + j));
            }
            i += (size_t)k;
        } else {
            sh += "\xEF\xBF\xBD";
            for (int j = 0; j < 3; j++) mp.push_back((uint32_t)i);
            i += (size_t)(-k);
        }
    }
    mp.push_back((uint32_t)n);
    // encode_valid reuses scratch buffers other than shadow/shadow_map only
    encode_valid(sh.data(), sh.size(), text.data(), mp.data(), add_special_tokens, ids, starts, sc);
}

void tokenizer::pre_tokenize(std::string_view text, const std::function<void(std::string_view)>& sink) const {
    encode_scratch& sc = scratch();
    std::vector<int32_t> ids;
    sc.sink = &sink;
    try {
        encode(text, ids, false);
    } catch (...) {
        sc.sink = nullptr;
        throw;
    }
    sc.sink = nullptr;
}

std::vector<int32_t> tokenizer::encode(std::string_view text, bool add_special_tokens) const {
    std::vector<int32_t> ids;
    encode(text, ids, add_special_tokens);
    return ids;
}

std::vector<std::vector<int32_t>> tokenizer::encode_batch(const std::vector<std::string_view>& docs, int threads,
                                                          bool add_special_tokens) const {
    std::vector<std::vector<int32_t>> out(docs.size());
    const int nt = threads > 0 ? threads : omp_get_max_threads();
    std::exception_ptr err;
    std::atomic<bool> failed{false};
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (size_t i = 0; i < docs.size(); i++) {
        if (failed.load(std::memory_order_relaxed)) continue;
        try {
            out[i].reserve(docs[i].size() / 3 + 16);  // ~4 bytes per token on text: few reallocations
            encode(docs[i], out[i], add_special_tokens);
        } catch (...) {
#pragma omp critical(trex_tok_batch_error)
            {
                if (!err) err = std::current_exception();
            }
            failed = true;
        }
    }
    if (err) std::rethrow_exception(err);
    return out;
}

// ---------------------------------------------------------------------------------------------------------------
// decode and queries

std::string tokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
    std::string out;
    for (int32_t id : ids) {
        TREX_CHECK(id >= 0 && (size_t)id < decoded_.size() && kind_[id] != 0,
                   "decode: id {} is not in the vocabulary of {} (ids 0..{})", id, name_, decoded_.size() - 1);
        if (skip_special_tokens && kind_[id] == 3) continue;
        out += decoded_[id];
    }
    return out;
}

size_t tokenizer::vocab_size() const {
    size_t n = 0;
    for (uint8_t k : kind_) n += k != 0;
    return n;
}

int32_t tokenizer::token_to_id(std::string_view token) const {
    for (const auto& a : added_)
        if (a.content == token) return a.id;
    auto it = model_->vocab.find(token);
    return it == model_->vocab.end() ? -1 : it->second;
}

std::string tokenizer::id_to_token(int32_t id) const {
    if (id < 0 || (size_t)id >= kind_.size() || kind_[id] == 0) return "";
    if (kind_[id] >= 2)
        for (const auto& a : added_)
            if (a.id == id) return a.content;
    return (size_t)id < model_->id_to_token.size() ? model_->id_to_token[id] : "";
}

bool tokenizer::is_special(int32_t id) const {
    return id >= 0 && (size_t)id < kind_.size() && kind_[id] == 3;
}

std::string tokenizer::pre_tokenizer_summary() const {
    std::string s;
    for (const auto& st : splits_)
        s += fmt::format("Split({} {}, {}{}) -> ", st.is_regex ? "Regex" : "String", nlohmann::json(st.pattern).dump(),
                         split_behavior_name(st.behavior), st.invert ? ", invert" : "");
    s += fmt::format("ByteLevel(add_prefix_space={}, use_regex={})", byte_level_.add_prefix_space,
                     byte_level_.use_regex);
    return s;
}

}  // namespace trex::tok
