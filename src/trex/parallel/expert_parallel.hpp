// Expert parallelism (docs/distributed.md §4): the routed experts of every MoE layer are split over the ranks of the
// EP communicator (rank p holds experts [p·E/P, (p+1)·E/P)). A layer's tokens go to the ranks holding their experts
// and come back with an all-to-all-v pair:
//   dispatch: the expert-sorted rows (and their routing weights) → the owners, grouped by (source rank, expert);
//   combine:  the owners' output rows → back to their source, in the source's expert-sorted order.
// The pair shares one explicit handle (ep_route: the row counts per peer and expert), and the backward of dispatch
// is a combine and vice versa: backward dispatches the output gradients along the same route and combines the input
// gradients and routing-weight gradients back. While tokens travel, the dispatcher runs the independent work the
// model hands it (the shared expert), unless overlap is off (then it runs that work before starting the exchange).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "trex/model/model.hpp"
#include "trex/parallel/communicator.hpp"

namespace trex::parallel {

// The route of one layer's tokens: rows this rank sends to each peer (per expert of the peer) and receives.
struct ep_route {
    int peers = 1, experts_per_rank = 1;
    std::vector<int64_t> send_rows;  // [peers · experts_per_rank]: rows for expert (q, j)
    std::vector<int64_t> recv_rows;  // [peers · experts_per_rank]: rows from peer q for my expert j
    int64_t sent() const;
    int64_t received() const;
    // all-to-all-v counts and displacements in elements for `width` floats per row
    std::vector<int64_t> send_counts(int64_t width) const, recv_counts(int64_t width) const;
};

// The send side of a route from the expert-sorted permutation's offsets [E+1] (recv_rows still zero).
ep_route route_of(std::span<const int64_t> expert_offset, int peers, int experts_per_rank);
// Starts exchanging the per-expert row counts (a small all-to-all) into route.recv_rows.
handle start_route_exchange(communicator& ep, ep_route& route);
// Both, blocking.
ep_route make_route(communicator& ep, const std::vector<int64_t>& expert_offset, int experts_per_rank);
// Starts sending `rows` (route.sent() rows of width floats, peer-major) to the owners; `out` receives
// route.received() rows, peer-major.
handle start_dispatch(communicator& ep, const ep_route& route, const float* rows, float* out, int64_t width);
// The reverse: the owners send route.received() rows back; `out` receives route.sent() rows in the dispatch order.
handle start_combine(communicator& ep, const ep_route& route, const float* rows, float* out, int64_t width);

class expert_parallel : public expert_dispatcher {
   public:
    // kernels: the backend of the experts' GEMMs and permutations (kernel_table.hpp)
    expert_parallel(communicator& ep, const model_config& cfg, bool overlap,
                    const kernel_table& kernels = cpu_kernels());

    void forward(int layer, float* y, moe_routing& st, const float* x, const int32_t* sel, const float* weight,
                 const float* const* w13, const float* const* w2, int64_t N, int64_t d, int E, int K, int64_t I,
                 double limit, const std::function<void()>& overlap) override;
    void backward(int layer, float* dx, float* dweight, float* const* dw13, float* const* dw2, const float* dy,
                  const moe_routing& st, const float* x, const float* weight, const float* const* w13,
                  const float* const* w2, int64_t N, int64_t d, int E, int K, int64_t I, double limit,
                  const std::function<void()>& overlap) override;

    void select_slot(int slot) override { slot_ = slot; }
    bool keeps_routing_activations() const override { return false; }  // its layer_state holds the rows' a13

    bool overlap() const { return overlap_; }
    void set_overlap(bool on) { overlap_ = on; }
    // Seconds blocked waiting for dispatch/combine (exposed EP communication) since the last reset.
    double exposed_seconds() const { return exposed_; }
    void reset_timers() { exposed_ = 0; }

   private:
    const kernel_table& kernels_;
    // What the owner side keeps from forward to backward, per layer.
    struct layer_state {
        ep_route route;
        std::vector<int64_t> expert_rows;  // [experts_per_rank + 1] offsets of each local expert's rows
        std::vector<int64_t> to_recv;      // [M] expert-major row m ← received (peer-major) row to_recv[m];
                                           // inside an expert, rows stay grouped by source rank
        std::vector<float> x, a13, h, w;   // [M,d], [M,2I], [M,I], [M]
    };
    // Rows of one local expert from one source rank, in the expert-major layout (source order inside an expert).
    struct block {
        int j = 0;  // local expert
        int q = 0;  // source rank
        int64_t r0 = 0, n = 0;
    };
    std::vector<block> source_blocks(const layer_state& L) const;
    // Rows this rank sends to itself, per local expert j: the first row in send_ of (me, j) and the count. They are
    // known before any exchange, so their expert work runs while the other ranks' rows travel.
    int64_t self_row(const ep_route& route, int j) const;
    int64_t self_rows(const ep_route& route, int j) const;
    void wait(handle& h);
    // Runs `work` while a helper thread progresses `first`, then (if given) starts `then`, which sets `second`, and
    // progresses that too.
    void run_overlapped(handle& first, const std::function<void()>& work, const std::function<void()>& then,
                        handle& second);

    communicator& ep_;
    int experts_per_rank_ = 1;
    bool overlap_ = true;
    double exposed_ = 0;
    int slot_ = 0;
    std::map<std::pair<int, int>, layer_state> layers_;  // by (slot, layer)
    std::vector<float> send_, recv_, back_;
};

}  // namespace trex::parallel
