// ZeRO-1 data parallelism for the Muon + AdamW recipe (docs/distributed.md §3).
//
// The trainable tensors are split into replica groups: a group is a communicator whose ranks all hold the tensors
// and compute gradients for them (the dense tensors: every DP rank; a routed expert's tensors: the expert-DP ranks
// of the EP rank that holds the expert). Inside a group every tensor has one owner, chosen by a balanced bucket plan
// (longest-processing-time greedy on the update cost: a Muon tensor costs its Newton-Schulz FLOPs, an AdamW tensor a
// few FLOPs per element), so Muon always sees whole matrices. A step:
//   1. reduce_gradients(): the group's gradients are packed owner by owner and reduce-scattered (sum): each rank
//      receives the summed gradients of the tensors it owns. The reduce-scatter is an all-to-all-v followed by a sum
//      in rank order (deterministic, and the order in which one process adds micro-batch gradients);
//   2. grad_norm(): per-tensor Σg² by the owners, all-reduced over the world, summed in tensor order;
//   3. step(): clipping, the Muon / AdamW update of the owned tensors with the owner's optimizer state (state exists
//      only for owned tensors: sharded), then every group all-gathers the updated weights.
// With one rank this is the single-process optimizer (same functions, same order: bitwise identical).
//
// Tensor parallelism: a group whose `tp` communicator is set holds TP slices (the DP ranks of one TP index, each
// holding that index's slices). The owners of a tensor's slices are the same DP rank in every TP index (the plans are
// equal), so they meet on `tp`. The gradient norm and Newton-Schulz need the whole tensor: one of them, the tensor's
// worker (a balanced assignment of the whole tensors' costs over the TP ranks), receives the slices (an all-to-all
// over `tp`), sums the squares / orthogonalises the whole matrix, and sends each owner its slice of the update back;
// everything else is elementwise on the slice. The result is the single process's, bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trex/model/params.hpp"
#include "trex/optim/optimizer.hpp"
#include "trex/parallel/communicator.hpp"

namespace trex::parallel {

struct replica_group {
    communicator* comm = nullptr;
    std::vector<int> tensors;    // indices into param_store::specs (trainable weights)
    communicator* tp = nullptr;  // set: the tensors are TP slices; the TP ranks holding the other slices
};

// Balanced assignment of items with the given costs to `bins` owners (LPT greedy: heaviest first, to the least
// loaded owner, ties to the lower index). Returns the owner of each item. load: the owners' loads before (default 0).
std::vector<int> balanced_assignment(const std::vector<double>& cost, int bins, std::vector<double> load = {});

// The update cost used by the plan: Newton-Schulz FLOPs of a Muon tensor, ~10 FLOPs per element for AdamW.
double update_cost(const param_store& p, int tensor, const optim_config& cfg);

class zero_optimizer {
   public:
    // world: every rank of the job (grad norm, checkpoint gathers); groups: see above (each trainable tensor this
    // rank holds appears in exactly one group).
    // Muon's GEMMs run through `kernels` (the model's table).
    zero_optimizer(param_store& params, const optim_config& cfg, communicator& world, std::vector<replica_group> groups,
                   const kernel_table& kernels = cpu_kernels());

    // Sums the gradients of every group (reduce-scatter to the owners).
    void reduce_gradients();
    // Global L2 norm of the (summed) gradients, the same on every rank.
    double grad_norm();
    // Clipping with the given norm, update of the owned tensors, all-gather of the updated weights.
    optim_step_stats step(double lr, double grad_norm);

    const optim_config& config() const { return cfg_; }
    int64_t adam_steps() const { return adam_t_; }
    void set_adam_steps(int64_t t) { adam_t_ = t; }

    // Checkpoints in the single-process layout: on `root`, fills `full` (a store of the whole model without TP:
    // every tensor, including experts held elsewhere and other TP ranks' slices) and m, v arenas in its layout from
    // the owners. Every rank must call it; full, m and v are used on root only.
    void gather_full(int root, param_store* full, float* m, float* v);
    // Takes the owned tensors' state (this rank's slices) from m, v arenas in the layout of `full` (a store without
    // TP; every rank loads the same checkpoint).
    void load_full(const param_store& full, const float* m, const float* v);

    // Owned tensors and floats of this rank; the plan for printing.
    int64_t owned_floats() const;
    int owned_tensors() const;
    std::string describe_plan() const;  // per group: tensors and update cost per owner

   private:
    struct group_plan {
        communicator* comm = nullptr;
        std::vector<int> order;                            // the group's tensors, owner-major (packed order)
        std::vector<int64_t> pack_off;                     // [order.size()] float offset in the packed group buffer
        std::vector<int64_t> counts;                       // floats per owner
        std::vector<double> cost;                          // update cost per owner
        int64_t my_first = 0, my_begin = 0, my_count = 0;  // my tensors: order[my_first ..], packed [my_begin, +count)
        int my_n = 0;
        int64_t total = 0;
        int64_t state_off = 0;  // offset of my shard in the state / gradient arenas
    };
    struct owned {
        int tensor = 0;
        int64_t numel = 0, arena = 0, state = 0;  // arena offset, offset in m/v/grad shard
        std::vector<muon_matrix> muon;            // empty: AdamW
        communicator* tp = nullptr;               // set: a TP slice (the other slices' owners)
        bool muon_whole = false;                  // a slice of one Muon matrix: Newton-Schulz on the whole
        int worker = -1;                          // a TP slice: the TP rank that works on the whole tensor
    };
    // TP slices: the whole tensors to their workers. For the owned slices list[k] (the owners' common order) with
    // this rank's values x[k], every worker gets whole[k] of its tensors (empty for the others). One all-to-all.
    void to_workers(const std::vector<const owned*>& list, const std::vector<const float*>& x,
                    std::vector<std::vector<float>>& whole);
    // The reverse: each worker sends every owner its slice of whole[k]; y[k] (numel floats) receives this rank's.
    void from_workers(const std::vector<const owned*>& list, const std::vector<std::vector<float>>& whole,
                      const std::vector<float*>& y);
    communicator* tp_ = nullptr;  // the TP ranks owning the other slices of this rank's (null: no TP group)
    // The Muon updates of the owned tensors (those of whole matrices as the single process; the slices' matrices
    // gathered first).
    void muon_updates(double lr);
    // The workers of the TP slices this rank owns (sliced_cost: per owned tensor, its cost if a slice, else −1).
    void assign_workers(const std::vector<double>& sliced_cost);

    param_store& p_;
    optim_config cfg_;
    const kernel_table& k_;
    communicator& world_;
    std::vector<group_plan> plans_;
    std::vector<owned> owned_;
    std::vector<float> send_, recv_, g_, m_, v_;  // packing buffers; owned gradients and state
    int64_t adam_t_ = 0;
};

}  // namespace trex::parallel
