// The trainer's side of pipeline parallelism (docs/distributed.md §9): one optimizer step's micro-batches through
// this rank's model chunks (parallel::pipeline_runner), the gradients accumulated per chunk in micro-batch order, and the
// losses combined over the stages.
#pragma once

#include <memory>
#include <vector>

#include "trex/data/packer.hpp"
#include "trex/parallel/context.hpp"
#include "trex/parallel/pipeline_runner.hpp"
#include "trex/model/model.hpp"

namespace trex {

class pipeline_step {
   public:
    // grad_acc: the trainer's accumulation arena (P.n_floats floats; unused when grad_accum == 1). Collective: every
    // rank constructs it (it splits the world into pipelines).
    pipeline_step(dsv4_model& model, parallel::communicator& world, const parallel::dist_context& dc,
                  parallel::pipeline_layout layout, expert_dispatcher* ep, int64_t grad_accum,
                  std::vector<float>& grad_acc);

    // Runs this DP rank's micro-batches of a step (batches[k] is its k-th). Afterwards the model's gradients of the
    // tensors this rank holds are the sum over the micro-batches in micro-batch order (grad_accum > 1: in grad_acc,
    // which the trainer copies back, as without PP); for micro-batch k, fields[5k..5k+4] = loss, lm, mtp, bal, idx
    // of the whole model (combined over the stages in block order, as one process computes them); load[l] = the
    // expert loads of this rank's blocks summed over its micro-batches, zeros for the other blocks (the trainer sums
    // loads over the world).
    void run(const std::vector<train_batch>& batches, const step_options& so, std::vector<double>& fields,
             std::vector<std::vector<int64_t>>& load);
    // After the optimizer step: the last stage's copy of embed.weight (read by the MTP block) from the first stage.
    void sync_embedding();

    const parallel::pipeline_runner& runner() const { return runner_; }

   private:
    struct span {
        int64_t offset = 0, count = 0;
    };
    dsv4_model& model_;
    parallel::communicator& world_;
    const parallel::device_mesh& mesh_;
    parallel::pipeline_runner runner_;
    std::unique_ptr<parallel::communicator> pipe_comm_;  // the pp ranks of my pipeline (same tp, dp), by stage
    int64_t grad_accum_;
    std::vector<float>& grad_acc_;
    std::vector<std::vector<span>> chunk_spans_;  // [local chunk] arena ranges of its trainable tensors
};

}  // namespace trex
