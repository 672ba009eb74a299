#include "trex/train/synthetic_batch.hpp"

#include <random>

namespace trex {

synthetic_batch make_synthetic_batch(int64_t B, int64_t S, int V, uint64_t seed, const synthetic_batch_options& opt) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    synthetic_batch b;
    b.B = B;
    b.S = S;
    const int64_t N = B * S;
    b.ids.resize(N);
    b.labels.resize(N);
    b.mtp_ids.resize(N);
    b.mtp_labels.resize(N);
    b.doc_start.assign(N, 0);
    std::vector<int32_t> tok(S + 2);
    for (int64_t r = 0; r < B; r++) {
        for (auto& t : tok) t = (int32_t)(rng() % (uint64_t)V);
        for (int64_t s = 0; s < S; s++) {
            b.ids[r * S + s] = tok[s];
            b.labels[r * S + s] = u01(rng) < opt.masked_fraction ? -1 : tok[s + 1];
            b.mtp_ids[r * S + s] = tok[s + 1];
            b.mtp_labels[r * S + s] = tok[s + 2];
        }
        b.doc_start[r * S] = 1;
        if (opt.packed && r >= 1) {
            if (S > 3) b.doc_start[r * S + 3] = 1;
            if (S > 23) b.doc_start[r * S + 23] = 1;
        }
    }
    for (int32_t l : b.labels) b.target_tokens += l >= 0;
    return b;
}

}  // namespace trex
