// The parallel plan bound to a model once (docs/distributed.md): the rank's place in the mesh decides, before the
// weights are initialised or loaded, what it holds and how its layers communicate.
//   - expert parallelism (ep > 1): an expert_parallel dispatcher on ep_comm (the routed experts stay whole), and
//     storage for this rank's routed experts only (dsv4_model::hold_only);
//   - tensor parallelism (tp > 1): a tp_group on tp_comm, and the model's parameters laid out again as this rank's
//     slices (param_store with a tp_layout: TP ranks hold only their weight and gradient shards);
//   - pipeline parallelism (stage_holds set): storage for the tensors of this rank's model chunks only
//     (pipeline_layout::holds, plus the embedding on the rank of the last chunk when the MTP block looks it up).
// The layer math keeps only its communication points (the all-reduces of tensor_parallel, the dispatcher's calls).
#pragma once

#include <memory>

#include "trex/model/model.hpp"
#include "trex/parallel/context.hpp"
#include "trex/parallel/expert_parallel.hpp"
#include "trex/parallel/tensor_parallel.hpp"

namespace trex::parallel {

// What parallelize binds to the model; it must outlive the model's steps.
struct parallel_bindings {
    std::unique_ptr<expert_parallel> ep;  // null when ep == 1
    std::unique_ptr<tp_group> tp;         // null when tp == 1
};

// Binds the mesh of dc to a freshly built model (its weights are laid out again under TP: initialise or load them
// afterwards). overlap: the dispatcher's communication overlaps the shared expert (dist.overlap).
// stage_holds: under pipeline parallelism, which tensors this rank keeps (empty: all).
parallel_bindings parallelize(dsv4_model& model, dist_context& dc, bool overlap,
                              const param_store::holds_fn& stage_holds = {});

}  // namespace trex::parallel
