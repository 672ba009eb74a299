#include "trex/model/cache_size.hpp"

#include <algorithm>

namespace trex {

namespace {

// The partial block of a compressor of width w and ratio m: (m−1) pending tokens; CSA's rows are both halves wide and
// the completed previous block's m tokens are kept with them (see the header).
double pending_values(int m, double w) {
    if (m == 0) return 0;
    if (m == 4) return (2 * m - 1) * 4.0 * w;
    return (m - 1) * 2.0 * w;
}

}  // namespace

cache_size inference_cache_size(const model_config& cfg, int64_t context) {
    cache_size s;
    s.context = context;
    const double S = (double)context, c = cfg.head_dim, cI = cfg.index_head_dim;
    const double window = (double)std::min<int64_t>(context, cfg.sliding_window) * c;
    for (int l = 0; l < cfg.n_layers(); l++) {
        const int m = cfg.ratio(l);
        s.window += window;
        if (m == 0) continue;
        s.compressed += (double)(context / m) * c;
        s.pending += pending_values(m, c);
        if (m == 4) {
            s.indexer += (double)(context / 4) * cI;
            s.pending += pending_values(4, cI);
        }
    }
    const int depth = cfg.has_mtp() ? cfg.num_nextn_predict_layers : 0;
    s.mtp = depth * (window + (double)cfg.hc_mult * cfg.hidden_size);
    s.uncompressed = (double)(cfg.n_layers() + depth) * S * c;
    return s;
}

}  // namespace trex
