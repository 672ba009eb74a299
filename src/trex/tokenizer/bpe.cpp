#include "trex/tokenizer/bpe.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

#include "trex/tokenizer/utf8.hpp"

namespace trex::tok {

size_t sv_hash::operator()(std::string_view s) const noexcept {
    // FNV-1a over 8-byte words (fast for the short keys tokenizers use), finalised with a multiply-shift mix.
    uint64_t h = 0xcbf29ce484222325ull ^ s.size();
    const char* p = s.data();
    size_t n = s.size();
    while (n >= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 32));
}

void merge_table::build(const std::vector<std::pair<uint64_t, std::pair<int32_t, int32_t>>>& entries) {
    size_t cap = 16;
    while (cap < entries.size() * 2) cap <<= 1;
    slots_.assign(cap, slot{});
    mask_ = cap - 1;
    shift_ = 64 - __builtin_ctzll(cap);
    count_ = 0;
    for (const auto& [key, v] : entries) {
        size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> shift_);
        for (;;) {
            slot& s = slots_[h];
            if (s.rank < 0) {
                s.key = key;
                s.rank = v.first;
                s.merged = v.second;
                count_++;
                break;
            }
            if (s.key == key) {  // a repeated merge: the later line wins, as in HF (HashMap collect)
                s.rank = v.first;
                s.merged = v.second;
                break;
            }
            h = (h + 1) & mask_;
        }
    }
}

void bpe_model::initial_symbols(const unsigned char* p, size_t n, std::vector<int32_t>& sym) const {
    sym.clear();
    int32_t pending_unk = -1;  // an unknown character waiting to be pushed (fuse_unk joins consecutive ones)
    for (size_t i = 0; i < n; i++) {
        const int32_t id = byte_id[p[i]];
        if (id >= 0) {
            if (pending_unk >= 0) {
                sym.push_back(pending_unk);
                pending_unk = -1;
            }
            sym.push_back(id);
            continue;
        }
        if (byte_fallback) {
            // HF falls back on the UTF-8 bytes of the (byte-level) character
            std::string ch;
            utf8_append(ch, byte_to_char(p[i]));
            bool all = true;
            for (unsigned char b : ch) all = all && fallback_id[b] >= 0;
            if (all) {
                if (pending_unk >= 0) {
                    sym.push_back(pending_unk);
                    pending_unk = -1;
                }
                for (unsigned char b : ch) sym.push_back(fallback_id[b]);
                continue;
            }
        }
        if (unk_id >= 0) {
            if (pending_unk >= 0 && !fuse_unk) sym.push_back(pending_unk);
            pending_unk = unk_id;
        }
        // no unk token: the character is dropped (HF behaviour)
    }
    if (pending_unk >= 0) sym.push_back(pending_unk);
}

void bpe_model::encode_word(const unsigned char* p, size_t n, std::vector<int32_t>& out, std::vector<int32_t>& sym,
                            bool force_heap) const {
    if (n == 0) return;
    if (ignore_merges) {
        const std::string bl = bytes_to_byte_level(std::string_view((const char*)p, n));
        auto it = vocab.find(std::string_view(bl));
        if (it != vocab.end()) {
            out.push_back(it->second);
            return;
        }
    }
    initial_symbols(p, n, sym);
    const size_t m = sym.size();
    if (m <= 1) {
        out.insert(out.end(), sym.begin(), sym.end());
        return;
    }
    if (m <= 128 && !force_heap) {
        // Short words: ranks of adjacent pairs in an array, rescanned per merge (cache friendly, no heap).
        int32_t rank[128], merged[128];
        size_t len = m;
        for (size_t i = 0; i + 1 < len; i++) rank[i] = merges.find(sym[i], sym[i + 1], &merged[i]);
        for (;;) {
            int32_t best = -1;
            size_t bi = 0;
            for (size_t i = 0; i + 1 < len; i++) {
                const int32_t r = rank[i];
                if (r >= 0 && (best < 0 || r < best)) {
                    best = r;
                    bi = i;
                }
            }
            if (best < 0) break;
            sym[bi] = merged[bi];
            // remove symbol bi+1 and pair bi+1
            for (size_t i = bi + 1; i + 1 < len; i++) sym[i] = sym[i + 1];
            for (size_t i = bi + 1; i + 2 < len; i++) {
                rank[i] = rank[i + 1];
                merged[i] = merged[i + 1];
            }
            len--;
            if (bi + 1 < len) rank[bi] = merges.find(sym[bi], sym[bi + 1], &merged[bi]);
            if (bi > 0) rank[bi - 1] = merges.find(sym[bi - 1], sym[bi], &merged[bi - 1]);
        }
        out.insert(out.end(), sym.begin(), sym.begin() + (ptrdiff_t)len);
        return;
    }
    // Long words: doubly linked symbols and a min-heap of (rank, position); stale entries are skipped.
    // (thread-local buffers: no allocation per word once warm)
    struct entry {
        int32_t rank, pos, left, right;  // the pair (left, right) ids when queued
        bool operator>(const entry& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
    };
    thread_local std::vector<int32_t> prev, next;
    thread_local std::vector<uint8_t> alive;
    thread_local std::vector<entry> heap;
    prev.resize(m);
    next.resize(m);
    alive.assign(m, 1);
    heap.clear();
    for (size_t i = 0; i < m; i++) {
        prev[i] = (int32_t)i - 1;
        next[i] = i + 1 < m ? (int32_t)(i + 1) : -1;
    }
    const auto cmp = std::greater<entry>();
    auto push = [&](const entry& e) {
        heap.push_back(e);
        std::push_heap(heap.begin(), heap.end(), cmp);
    };
    for (size_t i = 0; i + 1 < m; i++) {
        int32_t mid;
        const int32_t r = merges.find(sym[i], sym[i + 1], &mid);
        if (r >= 0) heap.push_back({r, (int32_t)i, sym[i], sym[i + 1]});
    }
    std::make_heap(heap.begin(), heap.end(), cmp);
    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), cmp);
        const entry e = heap.back();
        heap.pop_back();
        if (!alive[e.pos]) continue;
        const int32_t nx = next[e.pos];
        if (nx < 0 || sym[e.pos] != e.left || sym[nx] != e.right) continue;
        int32_t mid = -1;
        merges.find(e.left, e.right, &mid);
        sym[e.pos] = mid;
        alive[nx] = 0;
        next[e.pos] = next[nx];
        if (next[nx] >= 0) prev[next[nx]] = e.pos;
        if (prev[e.pos] >= 0) {
            const int32_t pv = prev[e.pos];
            int32_t tmp;
            const int32_t r = merges.find(sym[pv], mid, &tmp);
            if (r >= 0) push({r, pv, sym[pv], mid});
        }
        if (next[e.pos] >= 0) {
            const int32_t q = next[e.pos];
            int32_t tmp;
            const int32_t r = merges.find(mid, sym[q], &tmp);
            if (r >= 0) push({r, e.pos, mid, sym[q]});
        }
    }
    for (int32_t i = 0; i >= 0; i = next[i]) out.push_back(sym[i]);
}

}  // namespace trex::tok
