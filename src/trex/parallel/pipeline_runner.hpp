// Executes a pipeline schedule (pipeline.hpp) on one rank for one optimizer step (docs/distributed.md §9).
//
// Each (micro-batch, local chunk) in flight has its own forward_state (the model's activations, swapped in for its
// forward and its backward) and its own EP slot; states return to a pool after their backward, so a rank holds
// at most peak_in_flight(schedule) activation sets. Between neighbours travel, per micro-batch and model chunk, the
// mHC state [N,n,d] forwards and its gradient [N,n,d] backwards; the last chunk also sends the first the gradient of
// the MTP block's embedding lookup [N,d]. All receives of a step are posted when it starts; sends are asynchronous
// and completed at the end of the step. Every wait is the communicator's checked wait with its timeout (a dead
// neighbour ends the job).
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "trex/parallel/communicator.hpp"
#include "trex/parallel/mesh.hpp"
#include "trex/parallel/pipeline.hpp"
#include "trex/model/model.hpp"

namespace trex::parallel {

class pipeline_runner {
   public:
    // world: the job's communicator (neighbours are the ranks with the same tp and dp coordinates); ep: the
    // model's expert dispatcher or nullptr.
    pipeline_runner(dsv4_model& model, communicator& world, const device_mesh& mesh, pipeline_layout layout,
                    expert_dispatcher* ep);

    // Runs the schedule over this pipeline's micro-batches (batches[mb], all of the same B×S). after_backward(mb,
    // chunk) is called after each backward (gradient accumulation). Returns, per micro-batch, this rank's part of the
    // step result (lm/mtp if it holds the last chunk; block_bal, block_idx, expert_load of its blocks).
    std::vector<step_result> run(const std::vector<batch_view>& batches, const step_options& opts,
                                 const std::function<void(int mb, int chunk)>& after_backward);

    const pipeline_layout& layout() const { return layout_; }
    // Of the last run: seconds blocked waiting for a neighbour (activation, gradient, send completion), and in all.
    double wait_seconds() const { return wait_; }
    double run_seconds() const { return run_; }
    // Activation sets allocated (the peak in flight of the schedule).
    int states_allocated() const { return allocated_; }

   private:
    int neighbour(int model_chunk) const;  // world rank holding a model chunk (same tp, dp)
    int tag(int kind, int mb, int model_chunk) const;
    void wait(handle& h);

    dsv4_model& model_;
    communicator& world_;
    device_mesh mesh_;
    pipeline_layout layout_;
    expert_dispatcher* ep_;
    std::vector<forward_state> pool_;
    int allocated_ = 0;
    double wait_ = 0, run_ = 0;
};

}  // namespace trex::parallel
