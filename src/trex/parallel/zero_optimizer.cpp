#include "trex/parallel/zero_optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "trex/base/error.hpp"

namespace trex::parallel {

std::vector<int> balanced_assignment(const std::vector<double>& cost, int bins, std::vector<double> load) {
    std::vector<int> idx(cost.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return cost[a] > cost[b]; });
    load.resize(bins, 0.0);
    std::vector<int> owner(cost.size(), 0);
    for (int i : idx) {
        const int b = (int)(std::min_element(load.begin(), load.end()) - load.begin());
        owner[i] = b;
        load[b] += cost[i];
    }
    return owner;
}

double update_cost(const param_store& p, int tensor, const optim_config& cfg) {
    std::vector<muon_matrix> mats = muon_matrices_of(p, tensor, cfg);
    if (mats.empty()) return 10.0 * (double)p.specs[tensor].numel();
    if (muon_needs_whole_tensor(p, tensor)) {  // a TP slice: its owner runs Newton-Schulz on the whole matrix
        const std::vector<int64_t> full = p.full_shape(tensor);
        mats = {{tensor, 0, full[0], full[1]}};
    }
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
    std::vector<double> sliced_cost;  // per owned tensor: its update cost when it is a TP slice, else −1
    for (const replica_group& g : groups) {
        TREX_CHECK(!g.tp || !tp_ || g.tp == tp_, "zero: at most one TP group");
        if (g.tp) tp_ = g.tp;
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
            o.tp = g.tp;
            o.muon_whole = g.tp && !o.muon.empty() && muon_needs_whole_tensor(p_, t);
            TREX_CHECK(!g.tp || p_.sharded(t), "zero: tensor '{}' is in a TP group but not split", p_.specs[t].name);
            owned_.push_back(o);
            sliced_cost.push_back(g.tp ? cost[std::find(g.tensors.begin(), g.tensors.end(), t) - g.tensors.begin()]
                                       : -1.0);
        }
        state += gp.my_count;
        max_total = std::max(max_total, gp.total);
        plans_.push_back(std::move(gp));
    }
    assign_workers(sliced_cost);
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

void zero_optimizer::assign_workers(const std::vector<double>& sliced_cost) {
    if (!tp_) return;
    std::vector<double> cost;
    for (double c : sliced_cost)
        if (c >= 0) cost.push_back(c);
    // balanced together with what each TP peer updates already (its whole tensors of the other groups)
    double mine = 0;
    for (size_t k = 0; k < owned_.size(); k++)
        if (sliced_cost[k] < 0) mine += update_cost(p_, owned_[k].tensor, cfg_);
    std::vector<double> load(tp_->size(), 0.0);
    tp_->all_gather(&mine, load.data(), std::vector<int64_t>(tp_->size(), 1), dtype::f64);
    const std::vector<int> worker = balanced_assignment(cost, tp_->size(), load);  // the same on every TP owner
    size_t k = 0;
    for (owned& o : owned_)
        if (o.tp) o.worker = worker[k++];
}

namespace {

// The all-to-all counts between a rank's TP slices and the workers' whole tensors, per peer (floats and offsets):
// slices[q] = this rank's slices of the tensors peer q works on; wholes[r] = peer r's slices of the tensors this rank
// works on.
struct worker_counts_t {
    std::vector<int64_t> slices, slices_at, wholes, wholes_at;
    int64_t slices_total = 0, wholes_total = 0;
};

template <class Owned>
worker_counts_t worker_counts(const std::vector<const Owned*>& list, int T, int me) {
    worker_counts_t c;
    c.slices.assign(T, 0), c.slices_at.assign(T, 0), c.wholes.assign(T, 0), c.wholes_at.assign(T, 0);
    for (const Owned* o : list) {
        c.slices[o->worker] += o->numel;
        if (o->worker == me)
            for (int r = 0; r < T; r++) c.wholes[r] += o->numel;
    }
    for (int q = 1; q < T; q++) {
        c.slices_at[q] = c.slices_at[q - 1] + c.slices[q - 1];
        c.wholes_at[q] = c.wholes_at[q - 1] + c.wholes[q - 1];
    }
    c.slices_total = c.slices_at[T - 1] + c.slices[T - 1];
    c.wholes_total = c.wholes_at[T - 1] + c.wholes[T - 1];
    return c;
}

}  // namespace

void zero_optimizer::to_workers(const std::vector<const owned*>& list, const std::vector<const float*>& x,
                                std::vector<std::vector<float>>& whole) {
    const int T = tp_->size(), me = tp_->rank();
    const worker_counts_t c = worker_counts(list, T, me);  // to the workers: a rank's slices, a worker's whole
    const std::vector<int64_t>&sc = c.slices, &sd = c.slices_at, &rc = c.wholes, &rd = c.wholes_at;
    std::vector<float> send((size_t)c.slices_total), recv((size_t)c.wholes_total);
    std::vector<int64_t> at = sd;
    for (size_t k = 0; k < list.size(); k++) {  // per worker, in list order
        std::memcpy(send.data() + at[list[k]->worker], x[k], sizeof(float) * list[k]->numel);
        at[list[k]->worker] += list[k]->numel;
    }
    tp_->all_to_all_v(send.data(), sc, sd, recv.data(), rc, rd, dtype::f32);
    whole.assign(list.size(), {});
    at = rd;
    for (size_t k = 0; k < list.size(); k++) {
        const owned& o = *list[k];
        if (o.worker != me) continue;
        whole[k].resize((size_t)(o.numel * T));
        const std::vector<int64_t> shape = p_.full_shape(o.tensor);
        for (int r = 0; r < T; r++) {
            tp_put_shard(whole[k].data(), recv.data() + at[r], shape, p_.split[o.tensor], r, T);
            at[r] += o.numel;
        }
    }
}

void zero_optimizer::from_workers(const std::vector<const owned*>& list, const std::vector<std::vector<float>>& whole,
                                  const std::vector<float*>& y) {
    const int T = tp_->size(), me = tp_->rank();
    const worker_counts_t c = worker_counts(list, T, me);  // back: a worker's whole, a rank's slices
    const std::vector<int64_t>&sc = c.wholes, &sd = c.wholes_at, &rc = c.slices, &rd = c.slices_at;
    std::vector<float> send((size_t)c.wholes_total), recv((size_t)c.slices_total);
    std::vector<int64_t> at = sd;
    for (size_t k = 0; k < list.size(); k++) {
        const owned& o = *list[k];
        if (o.worker != me) continue;
        const std::vector<int64_t> shape = p_.full_shape(o.tensor);
        for (int r = 0; r < T; r++) {
            tp_take_shard(send.data() + at[r], whole[k].data(), shape, p_.split[o.tensor], r, T);
            at[r] += o.numel;
        }
    }
    tp_->all_to_all_v(send.data(), sc, sd, recv.data(), rc, rd, dtype::f32);
    at = rd;
    for (size_t k = 0; k < list.size(); k++) {
        std::memcpy(y[k], recv.data() + at[list[k]->worker], sizeof(float) * list[k]->numel);
        at[list[k]->worker] += list[k]->numel;
    }
}

double zero_optimizer::grad_norm() {
    std::vector<double> sq(p_.specs.size(), 0.0);
    // TP slices: Σg² of the whole tensor (one process's summation order) by its worker, counted once
    std::vector<const owned*> sliced;
    std::vector<const float*> g;
    for (const owned& o : owned_) {
        if (!o.tp) {
            sq[o.tensor] = sum_squares(g_.data() + o.state, o.numel);
            continue;
        }
        sliced.push_back(&o);
        g.push_back(g_.data() + o.state);
    }
    if (tp_) {
        std::vector<std::vector<float>> whole;
        to_workers(sliced, g, whole);
        for (size_t k = 0; k < sliced.size(); k++)
            if (!whole[k].empty()) sq[sliced[k]->tensor] = sum_squares(whole[k].data(), (int64_t)whole[k].size());
    }
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
    muon_updates(lr);
    float* W = p_.weights.data();
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

void zero_optimizer::muon_updates(double lr) {
    struct job {
        const owned* o;
        const muon_matrix* mm;
        int64_t rows = 0, cols = 0;  // the matrix Newton-Schulz sees (a TP slice's: the whole one)
        float* U = nullptr;          // a TP slice's: the whole μM + G on its worker, orthogonalised in place
    };
    // TP slices of one Muon matrix: momentum on the slice, the whole μM + G to the tensor's worker
    std::vector<const owned*> sliced;
    std::vector<std::vector<float>> u_slice;
    for (const owned& o : owned_)
        if (o.muon_whole) {
            sliced.push_back(&o);
            u_slice.emplace_back((size_t)o.numel);
            muon_momentum(m_.data() + o.state, u_slice.back().data(), g_.data() + o.state, o.numel, cfg_);
        }
    std::vector<std::vector<float>> whole;
    if (tp_) {
        std::vector<const float*> x;
        for (const auto& u : u_slice) x.push_back(u.data());
        to_workers(sliced, x, whole);
    }
    // the Newton-Schulz jobs: whole matrices held here, and the whole TP matrices this rank works on
    std::vector<job> jobs;
    for (const owned& o : owned_)
        if (!o.muon_whole)
            for (const muon_matrix& mm : o.muon) jobs.push_back({&o, &mm, mm.rows, mm.cols, nullptr});
    for (size_t k = 0; k < sliced.size(); k++)
        if (!whole[k].empty()) {
            const std::vector<int64_t> full = p_.full_shape(sliced[k]->tensor);
            jobs.push_back({sliced[k], &sliced[k]->muon[0], full[0], full[1], whole[k].data()});
        }
    float* W = p_.weights.data();
    auto run = [&](const job& j) {
        if (j.U) {
            newton_schulz(j.U, j.rows, j.cols, cfg_.ns_fast_steps, cfg_.ns_stable_steps, k_);
            return;
        }
        const int64_t s = j.o->state + (j.mm->offset - j.o->arena);
        muon_step_matrix(W + j.mm->offset, m_.data() + s, g_.data() + s, j.rows, j.cols, lr, cfg_, k_);
    };
    // As the single-process optimizer: small Muon matrices one per thread, large ones on threaded GEMMs.
    constexpr int64_t small = 1 << 19;
    std::vector<const job*> small_jobs, large_jobs;
    for (const job& j : jobs) (j.rows * j.cols < small ? small_jobs : large_jobs).push_back(&j);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t q = 0; q < (int64_t)small_jobs.size(); q++) run(*small_jobs[q]);
    for (const job* j : large_jobs) run(*j);
    // the TP slices' updates back from their workers, applied to the slices
    if (sliced.empty()) return;
    std::vector<float*> y;
    for (auto& u : u_slice) y.push_back(u.data());
    from_workers(sliced, whole, y);
    for (size_t k = 0; k < sliced.size(); k++) {
        const owned& o = *sliced[k];
        const std::vector<int64_t> full = p_.full_shape(o.tensor);
        muon_apply(W + o.arena, u_slice[k].data(), o.numel, full[0], full[1], lr, cfg_);
    }
}

void zero_optimizer::gather_full(int root, param_store* full, float* m, float* v) {
    const int R = world_.size();
    std::vector<int64_t> n_ids(R, 0), n_floats(R, 0);
    int64_t mine = 0;
    for (const owned& o : owned_) mine += 3 * o.numel;
    const int64_t my_ids = 2 * (int64_t)owned_.size();
    world_.all_gather(&my_ids, n_ids.data(), std::vector<int64_t>(R, 1), dtype::i64);
    world_.all_gather(&mine, n_floats.data(), std::vector<int64_t>(R, 1), dtype::i64);
    std::vector<int32_t> ids;  // (tensor, TP rank of the slice) per owned tensor
    std::vector<float> payload;
    payload.reserve(mine);
    for (const owned& o : owned_) {
        ids.push_back(o.tensor);
        ids.push_back(o.tp ? p_.tp.rank : 0);
        const float* w = p_.weights.data() + o.arena;
        payload.insert(payload.end(), w, w + o.numel);
        payload.insert(payload.end(), m_.data() + o.state, m_.data() + o.state + o.numel);
        payload.insert(payload.end(), v_.data() + o.state, v_.data() + o.state + o.numel);
    }
    const bool is_root = world_.rank() == root;
    std::vector<int32_t> all_ids(is_root ? std::accumulate(n_ids.begin(), n_ids.end(), (int64_t)0) : 0);
    std::vector<float> all(is_root ? std::accumulate(n_floats.begin(), n_floats.end(), (int64_t)0) : 0);
    world_.gather(ids.data(), all_ids.data(), n_ids, dtype::i32, root);
    world_.gather(payload.data(), all.data(), n_floats, dtype::f32, root);
    if (!is_root) return;
    TREX_CHECK(full && full->tp.size == 1 && full->specs.size() == p_.specs.size(),
               "zero: gather_full needs a store of the whole model");
    std::vector<int> seen(p_.specs.size(), 0);
    int64_t pos = 0;
    for (size_t k = 0; k < all_ids.size(); k += 2) {
        const int t = all_ids[k], r = all_ids[k + 1];
        // the owner's size of it (a tensor root does not hold has no size here)
        const int64_t n = full->specs[t].numel() / (p_.sharded(t) ? p_.tp.size : 1), off = full->offset[t];
        const std::vector<int64_t>& shape = full->specs[t].shape;
        const tp_split sp = p_.split[t];
        tp_put_shard(full->weights.data() + off, all.data() + pos, shape, sp, r, p_.tp.size);
        tp_put_shard(m + off, all.data() + pos + n, shape, sp, r, p_.tp.size);
        tp_put_shard(v + off, all.data() + pos + 2 * n, shape, sp, r, p_.tp.size);
        pos += 3 * n;
        seen[t]++;
    }
    for (size_t i = 0; i < p_.specs.size(); i++) {
        if (p_.specs[i].role == tensor_role::weight) {
            const int want = p_.sharded((int)i) ? p_.tp.size : 1;
            TREX_CHECK(seen[i] == want, "zero: {} of the {} slice(s) of tensor '{}' have an owner", seen[i], want,
                       p_.specs[i].name);
        } else if (p_.specs[i].role != tensor_role::hash_table && full != &p_) {
            std::memcpy(full->weights.data() + full->offset[i], p_.weights.data() + p_.offset[i],
                        sizeof(float) * p_.specs[i].numel());
        }
    }
    if (full != &p_) full->tables = p_.tables;
}

void zero_optimizer::load_full(const param_store& full, const float* m, const float* v) {
    for (const owned& o : owned_) {
        const int64_t off = full.offset[o.tensor];
        const std::vector<int64_t>& shape = full.specs[o.tensor].shape;
        const tp_split sp = p_.split[o.tensor];
        tp_take_shard(m_.data() + o.state, m + off, shape, sp, p_.tp.rank, p_.tp.size);
        tp_take_shard(v_.data() + o.state, v + off, shape, sp, p_.tp.rank, p_.tp.size);
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
