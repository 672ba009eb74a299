// The reduction of one optimizer step over the ranks that computed its micro-batches (docs/distributed.md): each rank
// records the losses of its own micro-batches and the expert loads it saw; reduce() gathers the losses and sums them
// in micro-batch order — the order one process running every micro-batch would use, so the result is bitwise that of
// the single process — and sums the expert loads over the world, counting the tensor-parallel copies of a micro-batch
// once. Micro-batch m of the step belongs to DP rank m % dp.
#pragma once

#include <cstdint>
#include <vector>

#include "trex/parallel/communicator.hpp"
#include "trex/model/model.hpp"

namespace trex {

class step_reducer {
   public:
    static constexpr int kLossFields = 5;  // loss, lm, mtp, bal, idx

    // grad_accum micro-batches per DP rank, dp ranks
    step_reducer(int64_t grad_accum, int dp);

    // Clears the losses and loads for the next step.
    void begin_step();
    // The losses and loads of micro-batch m (one this rank computed).
    void add(int64_t m, const step_result& r);
    // What a pipeline fills in directly: [grad_accum × kLossFields] losses of this rank's micro-batches, in the order
    // of add(), and the expert loads of its own blocks.
    std::vector<double>& losses() { return losses_; }
    std::vector<std::vector<int64_t>>& loads() { return loads_; }

    // Every rank's losses gathered over dpc (the ranks that split the global batch) and averaged over the step's
    // dp × grad_accum micro-batches in micro-batch order; the loads summed over world, this rank's counted only when
    // count_loads (tensor-parallel rank 0). The result's expert_load has the loads' shape.
    step_result reduce(parallel::communicator& dpc, parallel::communicator& world, bool count_loads) const;

   private:
    int64_t grad_accum_;
    int dp_;
    std::vector<double> losses_;
    std::vector<std::vector<int64_t>> loads_;
};

}  // namespace trex
