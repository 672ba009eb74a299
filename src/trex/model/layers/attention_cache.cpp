#include "trex/model/layers/attention_cache.hpp"

#include <algorithm>

#include "trex/base/error.hpp"

namespace trex {

attention_cache attention_cache::for_layer(const model_config& cfg, int layer) {
    attention_cache c;
    TREX_CHECK(layer >= 0 && layer <= cfg.n_layers(), "attention cache: layer {} outside [0, {}]", layer,
               cfg.n_layers());
    c.window_rows = cfg.sliding_window;  // the ring grows to it as tokens arrive
    return c;
}

size_t attention_cache::bytes() const {
    const size_t n = window.size() + entries.size() + index_keys.size() + pend_kv.size() + pend_gate.size() +
                     ipend_kv.size() + ipend_gate.size();
    return n * sizeof(float);
}

attention_cache_mark attention_cache::mark(int64_t ahead, int64_t c) const {
    attention_cache_mark m;
    m.len = len;
    m.entries = (int64_t)entries.size();
    m.index_keys = (int64_t)index_keys.size();
    m.pending_from = pending_from;
    m.window_floats = (int64_t)window.size();
    m.pend_kv = pend_kv;
    m.pend_gate = pend_gate;
    m.ipend_kv = ipend_kv;
    m.ipend_gate = ipend_gate;
    for (int64_t p = len + 1; p < len + ahead; p++) {
        const int64_t slot = p % window_rows;
        if ((slot + 1) * c <= (int64_t)window.size())
            m.ring_rows.insert(m.ring_rows.end(), window.begin() + slot * c, window.begin() + (slot + 1) * c);
        else
            m.ring_rows.insert(m.ring_rows.end(), (size_t)c, 0.0f);  // not yet in the ring: nothing to restore
    }
    return m;
}

void attention_cache::rewind(const attention_cache_mark& m, int64_t c) {
    TREX_CHECK(m.len <= len, "attention cache: rewind to {} tokens from {}", m.len, len);
    const int64_t saved = (int64_t)m.ring_rows.size() / c;
    TREX_CHECK(len - m.len <= saved + 1, "attention cache: rewind over {} tokens, the mark saved the ring for {}",
               len - m.len, saved + 1);
    for (int64_t k = 0; k < saved && m.len + 1 + k < len; k++) {
        const int64_t slot = (m.len + 1 + k) % window_rows;
        if ((slot + 1) * c <= m.window_floats) std::copy_n(m.ring_rows.begin() + k * c, c, window.begin() + slot * c);
    }
    window.resize((size_t)m.window_floats);
    entries.resize((size_t)m.entries);
    index_keys.resize((size_t)m.index_keys);
    pending_from = m.pending_from;
    pend_kv = m.pend_kv;
    pend_gate = m.pend_gate;
    ipend_kv = m.ipend_kv;
    ipend_gate = m.ipend_gate;
    len = m.len;
}

sequence_cache::mark_t sequence_cache::mark(int n_layers, int64_t ahead, int64_t c) const {
    mark_t m;
    m.len = len;
    for (int l = 0; l < n_layers; l++) m.layers.push_back(layers[(size_t)l].mark(ahead, c));
    return m;
}

void sequence_cache::rewind(const mark_t& m, int64_t c) {
    for (size_t l = 0; l < m.layers.size(); l++) layers[l].rewind(m.layers[l], c);
    len = m.len;
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
