// Softmax cross-entropy over the vocabulary (rows with label < 0 are ignored).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "trex/kernels/cpu/ops.hpp"
#include "trex/kernels/cpu/vec_math.hpp"

namespace trex::cpu {

namespace {

// log Σ exp(row) with the max subtracted; fp32 exp, fp64 sum.
double row_logsumexp(const float* row, int64_t V) {
    float mx = row[0];
#pragma omp simd reduction(max : mx)
    for (int64_t v = 1; v < V; v++) mx = max_v(mx, row[v]);
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t v = 0; v < V; v++) sum += exp_fast(row[v] - mx);
    return (double)mx + std::log((double)sum);
}

}  // namespace

double cross_entropy_fused(float* logits, int64_t* n_valid, const int32_t* labels, int64_t N, int64_t V, double scale) {
    std::vector<double> loss(N, 0.0);
    const float s = (float)scale;
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < N; n++) {
        float* row = logits + n * V;
        if (labels[n] < 0) {
            std::memset(row, 0, sizeof(float) * V);
            continue;
        }
        // one exp pass: row ← e^(row − max), then scaled by s/Σ in place
        const float target = row[labels[n]];
        float mx = row[0];
#pragma omp simd reduction(max : mx)
        for (int64_t v = 1; v < V; v++) mx = max_v(mx, row[v]);
        float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
        for (int64_t v = 0; v < V; v++) {
            row[v] = exp_fast(row[v] - mx);
            sum += row[v];
        }
        loss[n] = (double)mx + std::log((double)sum) - (double)target;
        const float k = s / sum;
#pragma omp simd
        for (int64_t v = 0; v < V; v++) row[v] *= k;
        row[labels[n]] -= s;
    }
    double total = 0.0;
    int64_t count = 0;
    for (int64_t n = 0; n < N; n++) {
        total += loss[n];
        count += labels[n] >= 0;
    }
    *n_valid = count;
    return total;
}

void cross_entropy_shard_stats(float* mx, float* target, const float* logits, const int32_t* labels, int64_t first,
                               int64_t N, int64_t V) {
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < N; n++) {
        const float* row = logits + n * V;
        float m = row[0];
#pragma omp simd reduction(max : m)
        for (int64_t v = 1; v < V; v++) m = max_v(m, row[v]);
        mx[n] = m;
        const int64_t local = (int64_t)labels[n] - first;
        target[n] = labels[n] >= 0 && local >= 0 && local < V ? row[local] : 0.0f;
    }
}

void cross_entropy_shard_exp(float* sum, float* logits, const float* mx, int64_t N, int64_t V) {
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < N; n++) {
        float* row = logits + n * V;
        const float m = mx[n];
        float s = 0.0f;
#pragma omp simd reduction(+ : s)
        for (int64_t v = 0; v < V; v++) {
            row[v] = exp_fast(row[v] - m);
            s += row[v];
        }
        sum[n] = s;
    }
}

double cross_entropy_shard_grad(float* logits, int64_t* n_valid, const float* mx, const float* sum, const float* target,
                                const int32_t* labels, int64_t first, int64_t N, int64_t V, double scale) {
    const float s = (float)scale;
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < N; n++) {
        float* row = logits + n * V;
        if (labels[n] < 0) {
            std::memset(row, 0, sizeof(float) * V);
            continue;
        }
        const float k = s / sum[n];
#pragma omp simd
        for (int64_t v = 0; v < V; v++) row[v] *= k;
        const int64_t local = (int64_t)labels[n] - first;
        if (local >= 0 && local < V) row[local] -= s;
    }
    double total = 0.0;
    int64_t count = 0;
    for (int64_t n = 0; n < N; n++) {
        if (labels[n] < 0) continue;
        total += (double)mx[n] + std::log((double)sum[n]) - (double)target[n];
        count++;
    }
    *n_valid = count;
    return total;
}

double cross_entropy_forward(int64_t* n_valid, const float* logits, const int32_t* labels, int64_t N, int64_t V) {
    std::vector<double> loss(N, 0.0);
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < N; n++)
        if (labels[n] >= 0) loss[n] = row_logsumexp(logits + n * V, V) - (double)logits[n * V + labels[n]];
    double total = 0.0;
    int64_t count = 0;
    for (int64_t n = 0; n < N; n++) {
        total += loss[n];
        count += labels[n] >= 0;
    }
    *n_valid = count;
    return total;
}

void cross_entropy_backward(float* dlogits, const float* logits, const int32_t* labels, int64_t N, int64_t V,
                            double scale) {
    std::memcpy(dlogits, logits, sizeof(float) * N * V);
    int64_t n_valid = 0;
    cross_entropy_fused(dlogits, &n_valid, labels, N, V, scale);
}

}  // namespace trex::cpu
