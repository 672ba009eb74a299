#include "trex/parallel/expert_parallel.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "trex/base/error.hpp"
#include "trex/base/timer.hpp"

namespace trex::parallel {

namespace {

std::vector<int64_t> per_peer(const std::vector<int64_t>& rows, int peers, int per, int64_t width) {
    std::vector<int64_t> c(peers, 0);
    for (int q = 0; q < peers; q++)
        for (int j = 0; j < per; j++) c[q] += rows[q * per + j] * width;
    return c;
}

std::vector<int64_t> displs(const std::vector<int64_t>& counts) {
    std::vector<int64_t> d(counts.size(), 0);
    for (size_t i = 1; i < counts.size(); i++) d[i] = d[i - 1] + counts[i - 1];
    return d;
}

}  // namespace

int64_t ep_route::sent() const {
    int64_t s = 0;
    for (int64_t r : send_rows) s += r;
    return s;
}
int64_t ep_route::received() const {
    int64_t s = 0;
    for (int64_t r : recv_rows) s += r;
    return s;
}
std::vector<int64_t> ep_route::send_counts(int64_t width) const {
    return per_peer(send_rows, peers, experts_per_rank, width);
}
std::vector<int64_t> ep_route::recv_counts(int64_t width) const {
    return per_peer(recv_rows, peers, experts_per_rank, width);
}

ep_route route_of(std::span<const int64_t> expert_offset, int peers, int experts_per_rank) {
    ep_route r;
    r.peers = peers;
    r.experts_per_rank = experts_per_rank;
    const int E = r.peers * experts_per_rank;
    TREX_CHECK((int)expert_offset.size() == E + 1, "expert parallelism: {} experts routed, {} expected",
               expert_offset.size() - 1, E);
    r.send_rows.resize(E);
    r.recv_rows.assign(E, 0);
    for (int e = 0; e < E; e++) r.send_rows[e] = expert_offset[e + 1] - expert_offset[e];
    return r;
}

handle start_route_exchange(communicator& ep, ep_route& route) {
    const std::vector<int64_t> c(route.peers, route.experts_per_rank);
    return ep.all_to_all_v_async(route.send_rows.data(), c, displs(c), route.recv_rows.data(), c, displs(c),
                                 dtype::i64);
}

ep_route make_route(communicator& ep, const std::vector<int64_t>& expert_offset, int experts_per_rank) {
    ep_route r = route_of(expert_offset, ep.size(), experts_per_rank);
    start_route_exchange(ep, r)->wait();
    return r;
}

handle start_dispatch(communicator& ep, const ep_route& route, const float* rows, float* out, int64_t width) {
    const auto sc = route.send_counts(width), rc = route.recv_counts(width);
    return ep.all_to_all_v_async(rows, sc, displs(sc), out, rc, displs(rc), dtype::f32);
}

handle start_combine(communicator& ep, const ep_route& route, const float* rows, float* out, int64_t width) {
    const auto sc = route.recv_counts(width), rc = route.send_counts(width);
    return ep.all_to_all_v_async(rows, sc, displs(sc), out, rc, displs(rc), dtype::f32);
}

expert_parallel::expert_parallel(communicator& ep, const model_config& cfg, bool overlap, const kernel_table& kernels)
    : kernels_(kernels), ep_(ep), experts_per_rank_(cfg.n_routed_experts / ep.size()), overlap_(overlap) {
    TREX_CHECK(cfg.n_routed_experts % ep.size() == 0, "--ep {} does not divide the model's {} routed experts",
               ep.size(), cfg.n_routed_experts);
}

std::vector<expert_parallel::block> expert_parallel::source_blocks(const layer_state& L) const {
    std::vector<block> out;
    const int P = experts_per_rank_;
    for (int j = 0; j < P; j++) {
        int64_t r0 = L.expert_rows[j];
        for (int q = 0; q < L.route.peers; q++) {
            const int64_t n = L.route.recv_rows[q * P + j];
            if (n > 0) out.push_back({j, q, r0, n});
            r0 += n;
        }
    }
    return out;
}

void expert_parallel::run_overlapped(handle& first, const std::function<void()>& work,
                                     const std::function<void()>& then, handle& second) {
    if (!ep_.helper_thread_ok()) {
        work();
        return;
    }
    // MPI progresses a transfer only inside MPI calls: a helper thread tests `first` while this thread computes,
    // starts `then` (which sets `second`) once it completes, and tests `second`. This thread makes no MPI call until
    // the helper has stopped, as MPI_THREAD_SERIALIZED requires.
    std::atomic<bool> stop{false};
    std::thread helper([&] {
        auto idle = [] { std::this_thread::sleep_for(std::chrono::microseconds(50)); };
        while (!stop.load(std::memory_order_acquire) && !first->test()) idle();
        if (stop.load(std::memory_order_acquire) || !then) return;
        then();
        while (!stop.load(std::memory_order_acquire) && !second->test()) idle();
    });
    work();
    stop.store(true, std::memory_order_release);
    helper.join();
}

void expert_parallel::wait(handle& h) {
    const double t0 = now_seconds();
    h->wait();
    exposed_ += now_seconds() - t0;
}

int64_t expert_parallel::self_row(const ep_route& route, int j) const {
    const int P = experts_per_rank_, me = ep_.rank();
    int64_t r = 0;
    for (int e = 0; e < me * P + j; e++) r += route.send_rows[e];
    return r;
}

int64_t expert_parallel::self_rows(const ep_route& route, int j) const {
    return route.send_rows[ep_.rank() * experts_per_rank_ + j];
}

// Overlap (dist.overlap): forward — while the other ranks' rows travel (dispatch), this rank runs its experts on
// the rows it sends to itself; while the outputs travel back (combine), the shared expert runs. Backward — the same
// with the gradients: the self rows' expert backward during the dispatch, the shared expert's backward during the
// combine. Every (expert, source) block keeps the GEMM shapes one process uses, and weight gradients are still added
// in source order, so the results do not depend on the overlap.
void expert_parallel::forward(int layer, float* y, moe_routing& st, const float* x, const int32_t* sel,
                              const float* weight, const float* const* w13, const float* const* w2, int64_t N,
                              int64_t d, int E, int K, int64_t I, double limit, const std::function<void()>& overlap) {
    (void)E;
    const int64_t NK = N * K, width = d + 1;
    const int P = experts_per_rank_, first = ep_.rank() * P, me = ep_.rank();
    kernels_.moe_build_permutation(st, sel, N, E, K);
    layer_state& L = layers_[{slot_, layer}];
    L.route = route_of(st.expert_offset, ep_.size(), P);
    // dispatch: expert-sorted rows of x with their routing weight in the last column
    send_.resize(NK * width);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < NK; r++) {
        const int32_t slot = st.row_slot[r];
        std::memcpy(send_.data() + r * width, x + (int64_t)(slot / K) * d, d * sizeof(float));
        send_[r * width + d] = weight[slot];
    }
    // one (expert, source) block: a13 = x·w13ᵀ, h = swiglu(a13), out = (w·h)·w2ᵀ, rows contiguous
    auto expert_block = [&](int j, int64_t n, const float* xb, const float* wb, float* a13, float* h, float* out) {
        kernels_.linear_fwd(a13, xb, w13[first + j], n, d, 2 * I, false);
        kernels_.swiglu_forward(h, a13, n, I, limit, nullptr);
        std::vector<float> hw(n * I);
#pragma omp parallel for schedule(static)
        for (int64_t m = 0; m < n; m++)
            for (int64_t i = 0; i < I; i++) hw[m * I + i] = wb[m] * h[m * I + i];
        kernels_.linear_fwd(out, hw.data(), w2[first + j], n, I, d, false);
    };
    // the self rows, computed while the others travel (into their own buffers: the layout is known only later)
    std::vector<int64_t> self0(P + 1, 0);
    for (int j = 0; j < P; j++) self0[j + 1] = self0[j] + self_rows(L.route, j);
    const int64_t S = self0[P];
    std::vector<float> sx(S * d), sw(S), sa13(S * 2 * I), sh(S * I), sout(S * d);
    auto self_work = [&] {
        for (int j = 0; j < P; j++) {
            const int64_t n = self_rows(L.route, j), r0 = self_row(L.route, j);
            for (int64_t k = 0; k < n; k++) {
                std::memcpy(sx.data() + (self0[j] + k) * d, send_.data() + (r0 + k) * width, d * sizeof(float));
                sw[self0[j] + k] = send_[(r0 + k) * width + d];
            }
            if (n > 0)
                expert_block(j, n, sx.data() + self0[j] * d, sw.data() + self0[j], sa13.data() + self0[j] * 2 * I,
                             sh.data() + self0[j] * I, sout.data() + self0[j] * d);
        }
    };
    if (!overlap_) overlap();
    handle counts = start_route_exchange(ep_, L.route);
    handle h;
    auto start_rows = [&] {
        recv_.resize(L.route.received() * width);
        h = start_dispatch(ep_, L.route, send_.data(), recv_.data(), width);
    };
    if (overlap_) run_overlapped(counts, self_work, start_rows, h);
    if (!h) {
        wait(counts);
        start_rows();
    }
    wait(h);
    const int64_t M = L.route.received();
    // received rows are peer-major; the experts want them expert-major
    L.expert_rows.assign(P + 1, 0);
    for (int j = 0; j < P; j++) {
        L.expert_rows[j + 1] = L.expert_rows[j];
        for (int q = 0; q < L.route.peers; q++) L.expert_rows[j + 1] += L.route.recv_rows[q * P + j];
    }
    L.to_recv.resize(M);
    {
        std::vector<int64_t> fill(L.expert_rows.begin(), L.expert_rows.end() - 1);
        int64_t src = 0;
        for (int q = 0; q < L.route.peers; q++)
            for (int j = 0; j < P; j++)
                for (int64_t k = 0; k < L.route.recv_rows[q * P + j]; k++) L.to_recv[fill[j]++] = src++;
    }
    L.x.resize(M * d);
    L.w.resize(M);
    L.a13.resize(M * 2 * I);
    L.h.resize(M * I);
#pragma omp parallel for schedule(static)
    for (int64_t m = 0; m < M; m++) {
        std::memcpy(L.x.data() + m * d, recv_.data() + L.to_recv[m] * width, d * sizeof(float));
        L.w[m] = recv_[L.to_recv[m] * width + d];
    }
    // the local experts, one GEMM per (expert, source rank): the shapes one process uses for each micro-batch, so
    // every row comes out bitwise the same; the self blocks were computed during the dispatch (or are now)
    if (!overlap_) self_work();
    std::vector<float> out(M * d);
    for (const block& b : source_blocks(L)) {
        if (b.q == me) {
            const int64_t s0 = self0[b.j];
            std::memcpy(L.a13.data() + b.r0 * 2 * I, sa13.data() + s0 * 2 * I, b.n * 2 * I * sizeof(float));
            std::memcpy(L.h.data() + b.r0 * I, sh.data() + s0 * I, b.n * I * sizeof(float));
            std::memcpy(out.data() + b.r0 * d, sout.data() + s0 * d, b.n * d * sizeof(float));
            continue;
        }
        expert_block(b.j, b.n, L.x.data() + b.r0 * d, L.w.data() + b.r0, L.a13.data() + b.r0 * 2 * I,
                     L.h.data() + b.r0 * I, out.data() + b.r0 * d);
    }
    // combine: back to the sources in their dispatch order, while the shared expert runs
    back_.resize(M * d);
#pragma omp parallel for schedule(static)
    for (int64_t m = 0; m < M; m++) std::memcpy(back_.data() + L.to_recv[m] * d, out.data() + m * d, d * sizeof(float));
    std::vector<float> yp(NK * d);
    handle c = start_combine(ep_, L.route, back_.data(), yp.data(), d);
    handle none;
    if (overlap_) run_overlapped(c, overlap, nullptr, none);
    wait(c);
    kernels_.moe_combine_rows(y, yp.data(), st, N, d, K);
}

void expert_parallel::backward(int layer, float* dx, float* dweight, float* const* dw13, float* const* dw2,
                               const float* dy, const moe_routing& st, const float* x, const float* weight,
                               const float* const* w13, const float* const* w2, int64_t N, int64_t d, int E, int K,
                               int64_t I, double limit, const std::function<void()>& overlap) {
    (void)x, (void)weight, (void)E;
    const int64_t NK = N * K, width = d + 1;
    const int P = experts_per_rank_, first = ep_.rank() * P, me = ep_.rank();
    auto it = layers_.find({slot_, layer});
    TREX_ASSERT(it != layers_.end());
    layer_state& L = it->second;
    const int64_t M = L.route.received();
    TREX_ASSERT(L.route.sent() == NK);
    // the backward of combine is a dispatch of the output gradients along the same route
    send_.resize(NK * d);
    kernels_.moe_gather_rows(send_.data(), dy, st, d, K);
    recv_.resize(M * d);
    std::vector<float> dyp(M * d), dh(M * I), da13(M * 2 * I), dxp(M * d), dwt(M);
    const auto blocks = source_blocks(L);
    // first row in recv_ of the rows from this rank (the self rows arrive in the order they were sent)
    int64_t recv_self0 = 0;
    for (int e = 0; e < me * P; e++) recv_self0 += L.route.recv_rows[e];
    const int64_t send_self0 = self_row(L.route, 0);
    // per block, everything but the weight gradients: dh = dyp·w2, dweight = dh·h, dh ← w·dh, dyp ← w·dyp,
    // da13 = swiglu'(dh), dxp = da13·w13 (as the kernel table's moe_experts_backward); self blocks read their rows from
    // send_
    auto block_data = [&](const block& b) {
        const float* src = b.q == me ? send_.data() : recv_.data();
        for (int64_t k = 0; k < b.n; k++) {
            const int64_t m = b.r0 + k;
            const int64_t row = b.q == me ? send_self0 + (L.to_recv[m] - recv_self0) : L.to_recv[m];
            std::memcpy(dyp.data() + m * d, src + row * d, d * sizeof(float));
        }
        kernels_.linear_bwd_data(dh.data() + b.r0 * I, dyp.data() + b.r0 * d, w2[first + b.j], b.n, I, d, false);
        kernels_.moe_route_weight_backward(dh.data() + b.r0 * I, dyp.data() + b.r0 * d, dwt.data() + b.r0,
                                           L.h.data() + b.r0 * I, L.w.data() + b.r0, nullptr, b.n, I, d);
        kernels_.swiglu_backward(da13.data() + b.r0 * 2 * I, dh.data() + b.r0 * I, L.a13.data() + b.r0 * 2 * I, b.n, I,
                                 limit);
        kernels_.linear_bwd_data(dxp.data() + b.r0 * d, da13.data() + b.r0 * 2 * I, w13[first + b.j], b.n, d, 2 * I,
                                 false);
    };
    // the self blocks' weight gradients, kept apart until their turn in source order
    std::vector<std::vector<float>> s2(P), s13(P);
    auto self_weight_grads = [&](const block& b) {
        s2[b.j].assign((size_t)d * I, 0.0f);
        s13[b.j].assign((size_t)2 * I * d, 0.0f);
        kernels_.linear_bwd_weight(s2[b.j].data(), dyp.data() + b.r0 * d, L.h.data() + b.r0 * I, b.n, I, d);
        kernels_.linear_bwd_weight(s13[b.j].data(), da13.data() + b.r0 * 2 * I, L.x.data() + b.r0 * d, b.n, d, 2 * I);
    };
    auto self_work = [&] {
        for (const block& b : blocks)
            if (b.q == me) {
                block_data(b);
                self_weight_grads(b);
            }
    };
    if (!overlap_) overlap();
    handle h = start_dispatch(ep_, L.route, send_.data(), recv_.data(), d);
    handle none;
    if (overlap_) run_overlapped(h, self_work, nullptr, none);
    wait(h);
    if (!overlap_) self_work();
    for (const block& b : blocks)
        if (b.q != me) block_data(b);
    // weight gradients: each source's contribution computed on its own and added in source order (the order in
    // which one process sums its micro-batches' gradients)
    std::vector<float> t2((size_t)d * I), t13((size_t)2 * I * d);
    std::vector<bool> started(P, false);
    for (const block& b : blocks) {
        float* g2 = dw2[first + b.j];
        float* g13 = dw13[first + b.j];
        const float* a2 = t2.data();
        const float* a13 = t13.data();
        if (b.q == me) {
            a2 = s2[b.j].data();
            a13 = s13[b.j].data();
        } else if (!started[b.j]) {
            kernels_.linear_bwd_weight(g2, dyp.data() + b.r0 * d, L.h.data() + b.r0 * I, b.n, I, d);
            kernels_.linear_bwd_weight(g13, da13.data() + b.r0 * 2 * I, L.x.data() + b.r0 * d, b.n, d, 2 * I);
            started[b.j] = true;
            continue;
        } else {
            std::fill(t2.begin(), t2.end(), 0.0f);
            std::fill(t13.begin(), t13.end(), 0.0f);
            kernels_.linear_bwd_weight(t2.data(), dyp.data() + b.r0 * d, L.h.data() + b.r0 * I, b.n, I, d);
            kernels_.linear_bwd_weight(t13.data(), da13.data() + b.r0 * 2 * I, L.x.data() + b.r0 * d, b.n, d, 2 * I);
        }
        // g += a (the first block of an expert: g is zero, so g = a exactly as if computed into g)
        for (size_t i = 0; i < t2.size(); i++) g2[i] += a2[i];
        for (size_t i = 0; i < t13.size(); i++) g13[i] += a13[i];
        started[b.j] = true;
    }
    // the backward of dispatch is a combine: input-row gradients and routing-weight gradients go back, while the
    // shared expert's backward runs
    back_.resize(M * width);
#pragma omp parallel for schedule(static)
    for (int64_t m = 0; m < M; m++) {
        std::memcpy(back_.data() + L.to_recv[m] * width, dxp.data() + m * d, d * sizeof(float));
        back_[L.to_recv[m] * width + d] = dwt[m];
    }
    std::vector<float> got(NK * width), rows(NK * d);
    handle c = start_combine(ep_, L.route, back_.data(), got.data(), width);
    if (overlap_) run_overlapped(c, overlap, nullptr, none);
    wait(c);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < NK; r++) {
        std::memcpy(rows.data() + r * d, got.data() + r * width, d * sizeof(float));
        dweight[st.row_slot[r]] = got[r * width + d];
    }
    kernels_.moe_combine_rows(dx, rows.data(), st, N, d, K);
}

}  // namespace trex::parallel
