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

// The n highest-logit ids, highest first (ties: lower id first).
std::vector<int32_t> leading_ids(const float* logits, int64_t V, int64_t n) {
    std::vector<int32_t> ids((size_t)V);
    std::iota(ids.begin(), ids.end(), 0);
    auto before = [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
    n = std::min(n, V);
    std::partial_sort(ids.begin(), ids.begin() + n, ids.end(), before);
    ids.resize((size_t)n);
    return ids;
}

// Picks from weights w (in the order of ids) by the cumulative sum reaching u·Σw.
int32_t pick(const std::vector<int32_t>& ids, const std::vector<double>& w, size_t keep, token_rng& rng) {
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

// A draw from softmax(logits / T) restricted to top-k, then top-p. The candidates are sorted only as far as the cut
// needs: top_k of them, or for top-p a growing prefix (64, 512, … ids) until its mass reaches top_p.
int32_t draw(const float* logits, int64_t V, const sampling_params& p, token_rng& rng) {
    double mx = logits[0];
    for (int64_t i = 1; i < V; i++) mx = std::max(mx, (double)logits[i]);
    auto weight = [&](int32_t id) { return std::exp(((double)logits[id] - mx) / p.temperature); };
    if (p.top_k == 0 && p.top_p >= 1.0) {  // the whole vocabulary in id order
        std::vector<int32_t> ids((size_t)V);
        std::iota(ids.begin(), ids.end(), 0);
        std::vector<double> w((size_t)V);
        for (int64_t i = 0; i < V; i++) w[(size_t)i] = weight((int32_t)i);
        return pick(ids, w, (size_t)V, rng);
    }
    const int64_t cap = p.top_k > 0 ? std::min<int64_t>(p.top_k, V) : V;
    double z = 0;  // the mass of the top_k candidates (all of them without top-k)
    std::vector<int32_t> ids;
    if (p.top_k > 0) {
        ids = leading_ids(logits, V, cap);
        for (int32_t id : ids) z += weight(id);
    } else {
        for (int64_t i = 0; i < V; i++) z += weight((int32_t)i);
    }
    for (int64_t n = std::min<int64_t>(64, cap);; n = std::min(cap, n * 8)) {
        if ((int64_t)ids.size() < n) ids = leading_ids(logits, V, n);
        std::vector<double> w(ids.size());
        double acc = 0;
        size_t keep = 0;
        for (size_t i = 0; i < ids.size(); i++) {
            w[i] = weight(ids[i]);
            acc += w[i];
            if (keep == 0 && acc >= p.top_p * z) keep = i + 1;
        }
        if (keep > 0 || n == cap) return pick(ids, w, keep > 0 ? keep : ids.size(), rng);
    }
}

// The target distribution of draw(): ids and unnormalised weights, in the order draw() accumulates them.
void target_distribution(const float* logits, int64_t V, const sampling_params& p, std::vector<int32_t>& ids,
                         std::vector<double>& w) {
    double mx = logits[0];
    for (int64_t i = 1; i < V; i++) mx = std::max(mx, (double)logits[i]);
    auto weight = [&](int32_t id) { return std::exp(((double)logits[id] - mx) / p.temperature); };
    if (p.top_k == 0 && p.top_p >= 1.0) {
        ids.resize((size_t)V);
        std::iota(ids.begin(), ids.end(), 0);
    } else {
        ids = leading_ids(logits, V, p.top_k > 0 ? p.top_k : V);
    }
    w.resize(ids.size());
    double z = 0;
    for (size_t i = 0; i < ids.size(); i++) z += w[i] = weight(ids[i]);
    if (p.top_p >= 1.0) return;
    double acc = 0;
    for (size_t i = 0; i < ids.size(); i++) {
        acc += w[i];
        if (acc >= p.top_p * z) {
            ids.resize(i + 1);
            w.resize(i + 1);
            return;
        }
    }
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

bool verify_draft(const float* logits, int64_t V, const sampling_params& p, int32_t draft, token_rng& rng,
                  token_choice* choice) {
    bool accepted = false;
    if (p.temperature <= 0) {
        const int32_t best = argmax(logits, V);
        accepted = best == draft;
        choice->id = best;
    } else {
        std::vector<int32_t> ids;
        std::vector<double> w;
        target_distribution(logits, V, p, ids, w);
        double z = 0, wd = 0;
        for (size_t i = 0; i < ids.size(); i++) {
            z += w[i];
            if (ids[i] == draft) wd = w[i];
        }
        accepted = rng.uniform() * z < wd;
        if (accepted) {
            choice->id = draft;
        } else {  // the target without the draft
            for (size_t i = 0; i < ids.size(); i++)
                if (ids[i] == draft) w[i] = 0;
            choice->id = pick(ids, w, ids.size(), rng);
        }
    }
    choice->top.clear();
    choice->logprob = 0;
    if (p.logprobs || p.top_logprobs > 0) {
        const double lse = log_sum_exp(logits, V);
        choice->logprob = (double)logits[choice->id] - lse;
        for (int32_t id : leading_ids(logits, V, p.top_logprobs))
            choice->top.emplace_back(id, (double)logits[id] - lse);
    }
    return accepted;
}

double token_logprob(const float* logits, int64_t V, int32_t id) {
    return (double)logits[id] - log_sum_exp(logits, V);
}

token_choice sample_token(const float* logits, int64_t V, const sampling_params& p, token_rng& rng) {
    token_choice c;
    c.id = p.temperature <= 0 ? argmax(logits, V) : draw(logits, V, p, rng);
    if (!p.logprobs && p.top_logprobs == 0) return c;
    const double lse = log_sum_exp(logits, V);
    c.logprob = (double)logits[c.id] - lse;
    if (p.top_logprobs > 0)
        for (int32_t id : leading_ids(logits, V, p.top_logprobs)) c.top.emplace_back(id, (double)logits[id] - lse);
    return c;
}

}  // namespace trex::infer
