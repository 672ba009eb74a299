#include "trex/optim/optimizer.hpp"

#include <cmath>
#include <cstring>
#include <utility>

#include "trex/base/error.hpp"
#include "trex/base/resources.hpp"
#include "trex/base/scratch.hpp"

namespace trex {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

double sum_squares(const float* x, int64_t n) {
    constexpr int64_t chunk = 1 << 14;
    const int64_t nc = (n + chunk - 1) / chunk;
    std::vector<double> part(nc);
#pragma omp parallel for schedule(static) if (nc > 4)
    for (int64_t c = 0; c < nc; c++) {
        double s = 0.0;
        const int64_t e = std::min(n, (c + 1) * chunk);
        for (int64_t i = c * chunk; i < e; i++) s += (double)x[i] * (double)x[i];
        part[c] = s;
    }
    double total = 0.0;
    for (double s : part) total += s;
    return total;
}

void newton_schulz(float* X, int64_t rows, int64_t cols, int fast, int stable, const kernel_table& k) {
    const bool tr = rows > cols;
    const int64_t n = tr ? cols : rows, m = tr ? rows : cols;  // work on Y [n, m], n ≤ m
    static thread_local std::vector<float> y_buf, a_buf, b_buf, z_buf;
    float* Y = grow(y_buf, (size_t)n * m);
    float* A = grow(a_buf, (size_t)n * n);
    float* B = grow(b_buf, (size_t)n * n);
    float* Z = grow(z_buf, (size_t)n * m);
    if (tr) {
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) Y[j * m + i] = X[i * cols + j];
    } else {
        std::memcpy(Y, X, sizeof(float) * n * m);
    }
    const float inv = (float)(1.0 / (std::sqrt(sum_squares(Y, n * m)) + 1e-7));
    for (int64_t i = 0; i < n * m; i++) Y[i] *= inv;
    // X ← a·X + (b·A + c·A²)·X with A = X·Xᵀ, written as X ← B·X for the symmetric B = a·I + b·A + c·A·Aᵀ: both
    // symmetric products are rank-k updates (syrk, about half a GEMM each) and the update needs no extra pass.
    for (int it = 0; it < fast + stable; it++) {
        const float a = it < fast ? 3.4445f : 2.0f;
        const float b = it < fast ? -4.7750f : -1.5f;
        const float c = it < fast ? 2.0315f : 0.5f;
        k.syrk(n, m, 1.0f, Y, m, 0.0f, A, n);  // A = Y Yᵀ
        std::memcpy(B, A, sizeof(float) * n * n);
        k.syrk(n, n, c, A, n, b, B, n);  // B = b·A + c·A·Aᵀ
        for (int64_t i = 0; i < n; i++) B[i * n + i] += a;
        k.gemm(false, false, n, m, n, 1.0f, B, n, Y, m, 0.0f, Z, m);  // Z = B·Y
        std::swap(Y, Z);
    }
    if (tr) {
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) X[i * cols + j] = Y[j * m + i];
    } else {
        std::memcpy(X, Y, sizeof(float) * n * m);
    }
}

double lr_schedule::at(int64_t step) const {
    if (warmup > 0 && step < warmup) return peak * (double)(step + 1) / (double)warmup;
    const int64_t start = std::max(decay_start, warmup);
    if (total <= 0 || step < start) return peak;
    if (step >= total) return min_lr;
    const double progress = (double)(step - start) / (double)std::max<int64_t>(total - start, 1);
    return min_lr + 0.5 * (peak - min_lr) * (1.0 + std::cos(M_PI * progress));
}

std::vector<muon_matrix> muon_matrices_of(const param_store& p, int i, const optim_config& cfg) {
    std::vector<muon_matrix> out;
    const tensor_spec& s = p.specs[i];
    if (s.role != tensor_role::weight || cfg.kind != "muon" || s.group != optim_group::muon || s.shape.size() != 2)
        return out;
    // wo_a [g·dg, H·c/g] holds g independent matrices (one per head group, spec §3.3 [INF])
    // (a TP rank holds whole groups of it: its local rows are o_lora_rank per group)
    int64_t blocks = 1;
    if (ends_with(s.name, "attn.wo_a.weight")) blocks = s.shape[0] / p.cfg.o_lora_rank;
    const int64_t rows = s.shape[0] / blocks, cols = s.shape[1];
    for (int64_t b = 0; b < blocks; b++) out.push_back({i, p.offset[i] + b * rows * cols, rows, cols});
    return out;
}

bool muon_needs_whole_tensor(const param_store& p, int i) {
    return p.sharded(i) && !ends_with(p.specs[i].name, "attn.wo_a.weight");
}

optimizer::optimizer(param_store& params, const optim_config& cfg, const kernel_table& kernels)
    : p_(params), cfg_(cfg), k_(kernels) {
    TREX_CHECK(cfg.kind == "muon" || cfg.kind == "adamw", "optimizer: kind must be 'muon' or 'adamw', got '{}'",
               cfg.kind);
    // on top of the resident weights and gradients
    check_fits_in_memory(sizeof(float) * 4.0 * (double)p_.n_floats,
                         "the fp32 weights, gradients and optimizer moments (m, v)");
    m_.allocate(p_.n_floats);
    v_.allocate(p_.n_floats);
    is_muon_.assign(p_.specs.size(), false);
    for (size_t i = 0; i < p_.specs.size(); i++) {
        const tensor_spec& s = p_.specs[i];
        if (s.role != tensor_role::weight) continue;
        const std::vector<muon_matrix> mats = muon_matrices_of(p_, (int)i, cfg);
        if (!mats.empty()) {
            is_muon_[i] = true;
            muon_.insert(muon_.end(), mats.begin(), mats.end());
        } else {
            adam_tensors_.push_back((int)i);
        }
    }
}

double optimizer::grad_norm() const {
    double total = 0.0;
    for (size_t i = 0; i < p_.specs.size(); i++)
        if (p_.specs[i].role == tensor_role::weight)
            total += sum_squares(p_.grads.data() + p_.offset[i], p_.specs[i].numel());
    return std::sqrt(total);
}

void muon_momentum(float* M, float* U, const float* G, int64_t n, const optim_config& cfg) {
    const float mu = (float)cfg.muon_momentum;
    for (int64_t i = 0; i < n; i++) {
        M[i] = mu * M[i] + G[i];
        U[i] = cfg.muon_nesterov ? mu * M[i] + G[i] : M[i];
    }
}

void muon_apply(float* W, const float* U, int64_t n, int64_t rows, int64_t cols, double lr, const optim_config& cfg) {
    const float decay = (float)(1.0 - lr * cfg.weight_decay);
    const float step = (float)(lr * std::sqrt((double)std::max(rows, cols)) * cfg.muon_update_rms);
#pragma omp parallel for schedule(static) if (n > (1 << 16))
    for (int64_t i = 0; i < n; i++) W[i] = W[i] * decay - step * U[i];
}

void muon_step_matrix(float* W, float* M, const float* G, int64_t rows, int64_t cols, double lr,
                      const optim_config& cfg, const kernel_table& k) {
    const int64_t n = rows * cols;
    static thread_local std::vector<float> u_buf;
    float* U = grow(u_buf, (size_t)n);
    muon_momentum(M, U, G, n, cfg);
    newton_schulz(U, rows, cols, cfg.ns_fast_steps, cfg.ns_stable_steps, k);
    muon_apply(W, U, n, rows, cols, lr, cfg);
}

void adamw_step_tensor(float* W, float* m, float* v, const float* G, int64_t n, double lr, int64_t t,
                       const optim_config& cfg) {
    const double bc1 = 1.0 - std::pow(cfg.beta1, (double)t), bc2 = 1.0 - std::pow(cfg.beta2, (double)t);
    const float fb1 = (float)cfg.beta1, fb2 = (float)cfg.beta2;
    const float decay = (float)(1.0 - lr * cfg.weight_decay);
    const float step = (float)(lr / bc1);
    const float inv_sqrt_bc2 = (float)(1.0 / std::sqrt(bc2));
    const float eps = (float)cfg.eps;
#pragma omp parallel for schedule(static) if (n > (1 << 16))
    for (int64_t i = 0; i < n; i++) {
        m[i] = fb1 * m[i] + (1.0f - fb1) * G[i];
        v[i] = fb2 * v[i] + (1.0f - fb2) * G[i] * G[i];
        W[i] = W[i] * decay - step * m[i] / (std::sqrt(v[i]) * inv_sqrt_bc2 + eps);
    }
}

optim_step_stats optimizer::step(double lr) {
    optim_step_stats st;
    st.lr = lr;
    st.grad_norm = grad_norm();
    if (cfg_.clip_grad_norm > 0.0 && st.grad_norm > cfg_.clip_grad_norm) {
        st.clip_scale = cfg_.clip_grad_norm / (st.grad_norm + 1e-6);
        const float s = (float)st.clip_scale;
        for (size_t i = 0; i < p_.specs.size(); i++) {
            if (p_.specs[i].role != tensor_role::weight) continue;
            float* g = p_.grads.data() + p_.offset[i];
            const int64_t n = p_.specs[i].numel();
#pragma omp parallel for schedule(static) if (n > (1 << 16))
            for (int64_t k = 0; k < n; k++) g[k] *= s;
        }
    }
    adam_t_++;
    // Small matrices (experts, wo_a groups, mHC projections of small models) run one per thread, each Newton-Schulz
    // on single-threaded GEMMs (no fork/join per GEMM); large ones use oneDNN's threading. Which path a matrix takes
    // depends only on its size, so results are reproducible.
    constexpr int64_t small = 1 << 19;
    std::vector<int> small_ids;
    for (int k = 0; k < (int)muon_.size(); k++)
        if (muon_[k].rows * muon_[k].cols < small) small_ids.push_back(k);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t q = 0; q < (int64_t)small_ids.size(); q++) {
        const muon_matrix& mm = muon_[small_ids[q]];
        muon_step_matrix(p_.weights.data() + mm.offset, m_.data() + mm.offset, p_.grads.data() + mm.offset, mm.rows,
                         mm.cols, lr, cfg_, k_);
    }
    for (const muon_matrix& mm : muon_)
        if (mm.rows * mm.cols >= small)
            muon_step_matrix(p_.weights.data() + mm.offset, m_.data() + mm.offset, p_.grads.data() + mm.offset, mm.rows,
                             mm.cols, lr, cfg_, k_);
    for (int t : adam_tensors_) {
        const int64_t off = p_.offset[t];
        adamw_step_tensor(p_.weights.data() + off, m_.data() + off, v_.data() + off, p_.grads.data() + off,
                          p_.specs[t].numel(), lr, adam_t_, cfg_);
    }
    return st;
}

}  // namespace trex
