#include "trex/model/layers/attention_cache.hpp"

#include <algorithm>

#include "trex/base/error.hpp"

namespace trex {

attention_cache attention_cache::for_layer(const model_config& cfg, int layer) {
    attention_cache c;
    TREX_CHECK(layer >= 0 && layer <= cfg.n_layers(), "attention cache: layer {} outside [0, {}]", layer,
               cfg.n_layers());
    c.window_rows = cfg.sliding_window;  // the ring grows to it as tokens arrive
    c.ratio = (size_t)layer < cfg.compress_ratios.size() ? cfg.ratio(layer) : 0;
    c.width = cfg.head_dim;
    c.index_width = cfg.index_head_dim;
    return c;
}

size_t attention_cache::bytes() const {
    const size_t n = window.size() + entries.size() + index_keys.size() + pend_kv.size() + pend_gate.size() +
                     ipend_kv.size() + ipend_gate.size();
    return n * sizeof(float);
}

int64_t attention_cache::pending_start(int64_t n) const {
    if (ratio <= 0) return 0;
    const int64_t blocks = n / ratio;
    return (int64_t)ratio * (ratio == 4 ? std::max<int64_t>(blocks - 1, 0) : blocks);
}

int64_t attention_cache::keep_from(int64_t n) const {
    const int64_t start = pending_start(n);
    return hold_from >= 0 ? std::min(start, hold_from) : start;
}

attention_cache_mark attention_cache::mark(int64_t ahead) {
    attention_cache_mark m;
    m.len = len;
    m.window_floats = (int64_t)window.size();
    for (int64_t p = len + 1; p < len + ahead; p++) {
        const int64_t slot = p % window_rows;
        if ((slot + 1) * width <= (int64_t)window.size())
            m.ring_rows.insert(m.ring_rows.end(), window.begin() + slot * width, window.begin() + (slot + 1) * width);
        else
            m.ring_rows.insert(m.ring_rows.end(), (size_t)width, 0.0f);  // not yet in the ring: nothing to restore
    }
    hold_from = pending_from;
    return m;
}

namespace {

// Rows [from, to) of a pending buffer whose rows are positions [first, first + rows) (w floats each) kept, the rest
// dropped.
void keep_rows(std::vector<float>& rows, int64_t first, int64_t from, int64_t to, int64_t w) {
    rows.resize((size_t)((to - first) * w));
    rows.erase(rows.begin(), rows.begin() + (from - first) * w);
}

}  // namespace

void attention_cache::rewind(const attention_cache_mark& m, int64_t keep) {
    const int64_t to = m.len + keep;
    TREX_CHECK(keep >= 0 && to <= len, "attention cache: rewind to {} tokens from {}", to, len);
    TREX_CHECK(hold_from >= 0 || to == len, "attention cache: rewind without a mark holding the pending rows");
    const int64_t saved = (int64_t)m.ring_rows.size() / std::max<int64_t>(width, 1);
    TREX_CHECK(len - to <= saved + 1, "attention cache: rewind over {} tokens, the mark saved the ring for {}",
               len - to, saved + 1);
    for (int64_t p = to + 1; p < len; p++) {
        const int64_t slot = p % window_rows, k = p - (m.len + 1);
        if ((slot + 1) * width <= m.window_floats)
            std::copy_n(m.ring_rows.begin() + k * width, width, window.begin() + slot * width);
    }
    window.resize((size_t)(std::min(to, window_rows) * width));
    if (ratio > 0) {
        entries.resize((size_t)(to / ratio * width));
        const int64_t from = pending_start(to), w = (ratio == 4 ? 2 : 1) * width;
        TREX_CHECK(from >= pending_from, "attention cache: rows from {} needed, kept from {}", from, pending_from);
        keep_rows(pend_kv, pending_from, from, to, w);
        keep_rows(pend_gate, pending_from, from, to, w);
        if (ratio == 4) {
            index_keys.resize((size_t)(to / 4 * index_width));
            keep_rows(ipend_kv, pending_from, from, to, 2 * index_width);
            keep_rows(ipend_gate, pending_from, from, to, 2 * index_width);
        }
        pending_from = from;
    }
    hold_from = -1;
    len = to;
}

void attention_cache::release() {
    if (hold_from < 0) return;
    rewind(attention_cache_mark{len, (int64_t)window.size(), {}}, 0);
}

sequence_cache::mark_t sequence_cache::mark(int n_layers, int64_t ahead) {
    mark_t m;
    m.len = len;
    for (int l = 0; l < n_layers; l++) m.layers.push_back(layers[(size_t)l].mark(ahead));
    return m;
}

void sequence_cache::rewind(const mark_t& m, int64_t keep) {
    for (size_t l = 0; l < m.layers.size(); l++) layers[l].rewind(m.layers[l], keep);
    len = m.len + keep;
}

void sequence_cache::release(const mark_t& m) {
    for (size_t l = 0; l < m.layers.size(); l++) layers[l].release();
}

sequence_cache sequence_cache::for_model(const model_config& cfg, bool with_mtp) {
    sequence_cache s;
    const int L = cfg.n_layers() + (with_mtp && cfg.has_mtp() ? 1 : 0);
    for (int l = 0; l < L; l++) s.layers.push_back(attention_cache::for_layer(cfg, l));
    return s;
}

size_t sequence_cache::bytes() const {
    size_t b = 0;
    for (const attention_cache& c : layers) b += c.bytes();
    return b;
}

}  // namespace trex
