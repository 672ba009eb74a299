#include "trex/infer/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "trex/base/error.hpp"

namespace trex::infer {

namespace {

int32_t argmax(const float* logits, int64_t V) {
    int64_t best = 0;
    for (int64_t i = 1; i < V; i++)
        if (logits[i] > logits[best]) best = i;
    return (int32_t)best;
}

// log Σ exp(logits), in double
double log_sum_exp(const float* logits, int64_t V) {
    double mx = -INFINITY;
    for (int64_t i = 0; i < V; i++) mx = std::max(mx, (double)logits[i]);
    double s = 0;
    for (int64_t i = 0; i < V; i++) s += std::exp((double)logits[i] - mx);
    return mx + std::log(s);
}

// Token ids ordered by logit, highest first (ties: lower id first); only the first `n` are ordered.
std::vector<int32_t> leading_ids(const float* logits, int64_t V, int64_t n) {
    std::vector<int32_t> ids((size_t)V);
    std::iota(ids.begin(), ids.end(), 0);
    auto before = [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
    n = std::min(n, V);
    std::partial_sort(ids.begin(), ids.begin() + n, ids.end(), before);
    ids.resize((size_t)n);
    return ids;
}

// A draw from softmax(logits / T) restricted to top-k, then top-p.
int32_t draw(const float* logits, int64_t V, const sampling_params& p, token_rng& rng) {
    const int64_t k = p.top_k > 0 ? std::min<int64_t>(p.top_k, V) : V;
    const std::vector<int32_t> ids = leading_ids(logits, V, k);
    const double mx = logits[ids[0]];
    std::vector<double> w(ids.size());
    double z = 0;
    for (size_t i = 0; i < ids.size(); i++) z += w[i] = std::exp(((double)logits[ids[i]] - mx) / p.temperature);
    size_t keep = ids.size();
    if (p.top_p < 1.0) {
        double acc = 0;
        for (size_t i = 0; i < ids.size(); i++) {
            acc += w[i] / z;
            if (acc >= p.top_p) {
                keep = i + 1;
                break;
            }
        }
    }
    double kept = 0;
    for (size_t i = 0; i < keep; i++) kept += w[i];
    const double u = rng.uniform() * kept;
    double acc = 0;
    for (size_t i = 0; i < keep; i++) {
        acc += w[i];
        if (u < acc) return ids[i];
    }
    return ids[keep - 1];
}

}  // namespace

double token_rng::uniform() {
    state_ += 0x9E3779B97F4A7C15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);  // 53 bits
}

void validate(const sampling_params& p) {
    TREX_CHECK(std::isfinite(p.temperature) && p.temperature >= 0, "sampling: temperature {} must be ≥ 0",
               p.temperature);
    TREX_CHECK(p.top_p > 0 && p.top_p <= 1, "sampling: top_p {} must be in (0, 1]", p.top_p);
    TREX_CHECK(p.top_k >= 0, "sampling: top_k {} must be ≥ 0", p.top_k);
    TREX_CHECK(p.top_logprobs >= 0 && p.top_logprobs <= 20, "sampling: top_logprobs {} must be in [0, 20]",
               p.top_logprobs);
}

double token_logprob(const float* logits, int64_t V, int32_t id) {
    return (double)logits[id] - log_sum_exp(logits, V);
}

token_choice sample_token(const float* logits, int64_t V, const sampling_params& p, token_rng& rng) {
    token_choice c;
    c.id = p.temperature <= 0 ? argmax(logits, V) : draw(logits, V, p, rng);
    const double lse = log_sum_exp(logits, V);
    c.logprob = (double)logits[c.id] - lse;
    if (p.top_logprobs > 0)
        for (int32_t id : leading_ids(logits, V, p.top_logprobs)) c.top.emplace_back(id, (double)logits[id] - lse);
    return c;
}

}  // namespace trex::infer
