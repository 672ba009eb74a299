// A rank's view of a distributed run: the world communicator, the mesh, the sub-communicators of the expert layout,
// and which tensors this rank holds and with whom it shares them (docs/distributed.md).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "trex/model/params.hpp"
#include "trex/parallel/communicator.hpp"
#include "trex/parallel/mesh.hpp"
#include "trex/parallel/zero_optimizer.hpp"

namespace trex::parallel {

struct dist_context {
    communicator* world = nullptr;  // not owned
    device_mesh mesh;
    std::unique_ptr<communicator> ep_comm;     // the EP ranks of my expert-DP index (token all-to-all), size ep
    std::unique_ptr<communicator> edp_comm;    // the ranks holding my experts (expert gradient reduction), size edp
    std::unique_ptr<communicator> tp_comm;     // the TP ranks sharing my micro-batches (tensor parallelism), size tp
    std::unique_ptr<communicator> dp_comm;     // the DP ranks of my TP index and stage (losses, loads), size dp
    std::unique_ptr<communicator> stage_comm;  // the tp·dp ranks of my pipeline stage (dense ZeRO group under PP)

    dist_context(communicator& world, const mesh_spec& spec, const model_config& cfg);

    // Does this rank hold (compute and update) routed expert e?
    bool holds_expert(const model_config& cfg, int e) const;
    // The replica groups of ZeRO-1: the dense tensors (and, without EP, the experts) on the world (under TP the
    // replicated ones: tp_group::drop_replicated_gradients makes the sum over all ranks count every micro-batch once);
    // under TP this rank's slices of the split tensors on dp_comm (their owners meet on tp_comm); with EP, this
    // rank's experts on edp_comm. Experts held elsewhere are in no group. With pipeline parallelism the dense group is
    // the stage (stage_comm: its tp·dp ranks) and only the tensors `held` says this stage holds are in a group.
    std::vector<replica_group> replica_groups(const param_store& p,
                                              const std::function<bool(const tensor_spec&)>& held = {}) const;
};

}  // namespace trex::parallel
