#include "trex/parallel/zero_optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "trex/base/error.hpp"

namespace trex::parallel {

std::vector<int> balanced_assignment(const std::vector<double>& cost, int bins) {
    std::vector<int> idx(cost.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return cost[a] > cost[b]; });
    std::vector<double> load(bins, 0.0);
    std::vector<int> owner(cost.size(), 0);
    for (int i : idx) {
        const int b = (int)(std::min_element(load.begin(), load.end()) - load.begin());
        owner[i] = b;
        load[b] += cost[i];
    }
    return owner;
}

double update_cost(const param_store& p, int tensor, const optim_config& cfg) {
    const std::vector<muon_matrix> mats = muon_matrices_of(p, tensor, cfg);
    if (mats.empty()) return 10.0 * (double)p.specs[tensor].numel();
    double c = 0.0;
    const int iters = cfg.ns_fast_steps + cfg.ns_stable_steps;
    for (const muon_matrix& m : mats) {
        const double n = (double)std::min(m.rows, m.cols), k = (double)std::max(m.rows, m.cols);
        // per iteration: X·Xᵀ and A·Aᵀ as rank-k updates (syrk, ~half a GEMM each), then B·X (newton_schulz)
        c += iters * (3.0 * n * n * k + n * n * n) + 10.0 * n * k;
    }
    return c;
}

zero_optimizer::zero_optimizer(param_store& params, const optim_config& cfg, communicator& world,
                               std::vector<replica_group> groups, const kernel_table& kernels)
    : p_(params), cfg_(cfg), k_(kernels), world_(world) {
    TREX_CHECK(cfg.kind == "muon" || cfg.kind == "adamw", "optimizer: kind must be 'muon' or 'adamw', got '{}'",
               cfg.kind);
    int64_t state = 0;
    int64_t max_total = 0;
    for (const replica_group& g : groups) {
        group_plan gp;
        gp.comm = g.comm;
        const int R = g.comm->size();
        std::vector<double> cost;
        for (int t : g.tensors) {
            TREX_CHECK(p_.specs[t].role == tensor_role::weight, "zero: tensor '{}' is not trainable", p_.specs[t].name);
            cost.push_back(update_cost(p_, t, cfg));
        }
        const std::vector<int> owner = balanced_assignment(cost, R);
        gp.counts.assign(R, 0);
        gp.cost.assign(R, 0.0);
        for (int r = 0; r < R; r++)
            for (size_t k = 0; k < g.tensors.size(); k++) {
                if (owner[k] != r) continue;
                const int t = g.tensors[k];
                if (r == g.comm->rank() && gp.my_n == 0) {
                    gp.my_first = (int64_t)gp.order.size();
                    gp.my_begin = gp.total;
                }
                gp.order.push_back(t);
                gp.pack_off.push_back(gp.total);
                gp.total += p_.specs[t].numel();
                gp.counts[r] += p_.specs[t].numel();
                gp.cost[r] += cost[k];
                if (r == g.comm->rank()) gp.my_n++;
            }
        gp.my_count = gp.counts[g.comm->rank()];
        gp.state_off = state;
        for (int k = 0; k < gp.my_n; k++) {
            const int t = gp.order[gp.my_first + k];
            owned o;
            o.tensor = t;
            o.numel = p_.specs[t].numel();
            o.arena = p_.offset[t];
            o.state = state + (gp.pack_off[gp.my_first + k] - gp.my_begin);
            o.muon = muon_matrices_of(p_, t, cfg);
            owned_.push_back(o);
        }
        state += gp.my_count;
        max_total = std::max(max_total, gp.total);
        plans_.push_back(std::move(gp));
    }
    send_.resize(max_total);
    recv_.resize(max_total);
    g_.resize(state);
    m_.assign(state, 0.0f);
    v_.assign(state, 0.0f);
}

void zero_optimizer::reduce_gradients() {
    for (group_plan& gp : plans_) {
        const float* G = p_.grads.data();
#pragma omp parallel for schedule(dynamic, 1)
        for (int64_t k = 0; k < (int64_t)gp.order.size(); k++) {
            const int t = gp.order[k];
            std::memcpy(send_.data() + gp.pack_off[k], G + p_.offset[t], sizeof(float) * p_.specs[t].numel());
        }
        // Deterministic reduce-scatter: every owner receives each rank's block and sums them in rank order
        // (g = ((G_0 + G_1) + G_2) + ...), the order in which one process sums micro-batch gradients; an MPI
        // reduce-scatter would add in an implementation-defined tree order. Same volume as a direct reduce-scatter.
        const int R = gp.comm->size();
        std::vector<int64_t> sc = gp.counts, sd(R, 0), rc(R, gp.my_count), rd(R, 0);
        for (int q = 1; q < R; q++) sd[q] = sd[q - 1] + sc[q - 1];
        for (int q = 1; q < R; q++) rd[q] = rd[q - 1] + gp.my_count;
        recv_.resize(std::max<size_t>(recv_.size(), (size_t)(R * gp.my_count)));
        gp.comm->all_to_all_v(send_.data(), sc, sd, recv_.data(), rc, rd, dtype::f32);
        float* g = g_.data() + gp.state_off;
        const int64_t n = gp.my_count;
        std::memcpy(g, recv_.data(), sizeof(float) * n);
        for (int q = 1; q < R; q++) {
            const float* x = recv_.data() + q * n;
#pragma omp parallel for schedule(static) if (n > (1 << 16))
            for (int64_t i = 0; i < n; i++) g[i] += x[i];
        }
    }
}

double zero_optimizer::grad_norm() {
    std::vector<double> sq(p_.specs.size(), 0.0);
    for (const owned& o : owned_) sq[o.tensor] = sum_squares(g_.data() + o.state, o.numel);
    world_.all_reduce(sq.data(), (int64_t)sq.size(), dtype::f64, reduce_op::sum);
    double total = 0.0;
    for (size_t i = 0; i < p_.specs.size(); i++)
        if (p_.specs[i].role == tensor_role::weight) total += sq[i];
    return std::sqrt(total);
}

optim_step_stats zero_optimizer::step(double lr, double grad_norm) {
    optim_step_stats st;
    st.lr = lr;
    st.grad_norm = grad_norm;
    if (cfg_.clip_grad_norm > 0.0 && grad_norm > cfg_.clip_grad_norm) {
        st.clip_scale = cfg_.clip_grad_norm / (grad_norm + 1e-6);
        const float s = (float)st.clip_scale;
        for (const owned& o : owned_) {
            float* g = g_.data() + o.state;
            const int64_t n = o.numel;
#pragma omp parallel for schedule(static) if (n > (1 << 16))
            for (int64_t k = 0; k < n; k++) g[k] *= s;
        }
    }
    adam_t_++;
    // As the single-process optimizer: small Muon matrices one per thread, large ones on threaded GEMMs.
    struct job {
        const owned* o;
        const muon_matrix* mm;
    };
    constexpr int64_t small = 1 << 19;
    std::vector<job> small_jobs, large_jobs;
    for (const owned& o : owned_)
        for (const muon_matrix& mm : o.muon) (mm.rows * mm.cols < small ? small_jobs : large_jobs).push_back({&o, &mm});
    float* W = p_.weights.data();
    auto run = [&](const job& j) {
        const int64_t s = j.o->state + (j.mm->offset - j.o->arena);
        muon_step_matrix(W + j.mm->offset, m_.data() + s, g_.data() + s, j.mm->rows, j.mm->cols, lr, cfg_, k_);
    };
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t q = 0; q < (int64_t)small_jobs.size(); q++) run(small_jobs[q]);
    for (const job& j : large_jobs) run(j);
    for (const owned& o : owned_)
        if (o.muon.empty())
            adamw_step_tensor(W + o.arena, m_.data() + o.state, v_.data() + o.state, g_.data() + o.state, o.numel, lr,
                              adam_t_, cfg_);
    // all-gather the updated weights inside every group
    for (group_plan& gp : plans_) {
        for (int k = 0; k < gp.my_n; k++) {
            const int t = gp.order[gp.my_first + k];
            std::memcpy(send_.data() + (gp.pack_off[gp.my_first + k] - gp.my_begin), W + p_.offset[t],
                        sizeof(float) * p_.specs[t].numel());
        }
        gp.comm->all_gather(send_.data(), recv_.data(), gp.counts, dtype::f32);
#pragma omp parallel for schedule(dynamic, 1)
        for (int64_t k = 0; k < (int64_t)gp.order.size(); k++) {
            const int t = gp.order[k];
            std::memcpy(W + p_.offset[t], recv_.data() + gp.pack_off[k], sizeof(float) * p_.specs[t].numel());
        }
    }
    return st;
}

void zero_optimizer::gather_full(int root, float* weights, float* m, float* v) {
    const int R = world_.size();
    std::vector<int64_t> n_owned(R, 0), n_floats(R, 0);
    int64_t mine = 0;
    for (const owned& o : owned_) mine += 3 * o.numel;
    const int64_t my_n = (int64_t)owned_.size();
    world_.all_gather(&my_n, n_owned.data(), std::vector<int64_t>(R, 1), dtype::i64);
    world_.all_gather(&mine, n_floats.data(), std::vector<int64_t>(R, 1), dtype::i64);
    std::vector<int32_t> ids;
    std::vector<float> payload;
    payload.reserve(mine);
    for (const owned& o : owned_) {
        ids.push_back(o.tensor);
        const float* w = p_.weights.data() + o.arena;
        payload.insert(payload.end(), w, w + o.numel);
        payload.insert(payload.end(), m_.data() + o.state, m_.data() + o.state + o.numel);
        payload.insert(payload.end(), v_.data() + o.state, v_.data() + o.state + o.numel);
    }
    const bool is_root = world_.rank() == root;
    std::vector<int32_t> all_ids(is_root ? std::accumulate(n_owned.begin(), n_owned.end(), (int64_t)0) : 0);
    std::vector<float> all(is_root ? std::accumulate(n_floats.begin(), n_floats.end(), (int64_t)0) : 0);
    world_.gather(ids.data(), all_ids.data(), n_owned, dtype::i32, root);
    world_.gather(payload.data(), all.data(), n_floats, dtype::f32, root);
    if (!is_root) return;
    std::vector<bool> seen(p_.specs.size(), false);
    int64_t pos = 0;
    for (int32_t t : all_ids) {
        const int64_t n = p_.specs[t].numel(), off = p_.offset[t];
        std::memcpy(weights + off, all.data() + pos, sizeof(float) * n);
        std::memcpy(m + off, all.data() + pos + n, sizeof(float) * n);
        std::memcpy(v + off, all.data() + pos + 2 * n, sizeof(float) * n);
        pos += 3 * n;
        seen[t] = true;
    }
    for (size_t i = 0; i < p_.specs.size(); i++) {
        if (p_.specs[i].role == tensor_role::weight) {
            TREX_CHECK(seen[i], "zero: no rank owns tensor '{}'", p_.specs[i].name);
        } else if (p_.specs[i].role != tensor_role::hash_table) {
            std::memcpy(weights + p_.offset[i], p_.weights.data() + p_.offset[i], sizeof(float) * p_.specs[i].numel());
        }
    }
}

void zero_optimizer::load_full(const float* m, const float* v) {
    for (const owned& o : owned_) {
        std::memcpy(m_.data() + o.state, m + o.arena, sizeof(float) * o.numel);
        std::memcpy(v_.data() + o.state, v + o.arena, sizeof(float) * o.numel);
    }
}

int64_t zero_optimizer::owned_floats() const {
    return (int64_t)g_.size();
}
int zero_optimizer::owned_tensors() const {
    return (int)owned_.size();
}

std::string zero_optimizer::describe_plan() const {
    std::string s;
    for (size_t g = 0; g < plans_.size(); g++) {
        const group_plan& gp = plans_[g];
        s += fmt::format("zero: group {} ({} ranks, {} tensors): floats per owner [", g, gp.comm->size(),
                         gp.order.size());
        for (size_t r = 0; r < gp.counts.size(); r++) s += fmt::format("{}{}", r ? " " : "", gp.counts[r]);
        s += "], update GFLOP per owner [";
        for (size_t r = 0; r < gp.cost.size(); r++) s += fmt::format("{}{:.3f}", r ? " " : "", gp.cost[r] * 1e-9);
        s += "]\n";
    }
    return s;
}

}  // namespace trex::parallel
