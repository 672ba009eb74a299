#include "trex/model/layers/attention_cache.hpp"

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
