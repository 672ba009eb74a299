#include "trex/parallel/context.hpp"

#include "trex/base/error.hpp"

namespace trex::parallel {

dist_context::dist_context(communicator& w, const mesh_spec& spec, const model_config& cfg)
    : world(&w), mesh(make_mesh(spec, w.size(), w.rank(), cfg)) {
    // every rank takes part in both splits (MPI_Comm_split is collective)
    ep_comm = w.split(mesh.pp_rank * mesh.edp + mesh.edp_rank, mesh.ep_rank);
    edp_comm = w.split(mesh.pp_rank * mesh.ep + mesh.ep_rank, mesh.edp_rank);
    tp_comm = w.split(mesh.pp_rank * mesh.dp + mesh.dp_rank, mesh.tp_rank);
    dp_comm = w.split(mesh.pp_rank * mesh.tp + mesh.tp_rank, mesh.dp_rank);
    stage_comm = w.split(mesh.pp_rank, mesh.dp_rank * mesh.tp + mesh.tp_rank);
    TREX_ASSERT(ep_comm->size() == mesh.ep && edp_comm->size() == mesh.edp);
    TREX_ASSERT(tp_comm->size() == mesh.tp && dp_comm->size() == mesh.dp);
}

bool dist_context::holds_expert(const model_config& cfg, int e) const {
    const int first = mesh.expert_first(cfg);
    return e >= first && e < first + mesh.expert_count(cfg);
}

std::vector<replica_group> dist_context::replica_groups(const param_store& p,
                                                        const std::function<bool(const tensor_spec&)>& held) const {
    TREX_CHECK(p.tp.size == mesh.tp, "internal: the model is laid out for tp {} but the mesh has tp {}", p.tp.size,
               mesh.tp);
    replica_group dense{mesh.pp > 1 ? stage_comm.get() : world, {}}, experts{edp_comm.get(), {}},
        slices{dp_comm.get(), {}, tp_comm.get()};
    for (size_t i = 0; i < p.specs.size(); i++) {
        const tensor_spec& s = p.specs[i];
        if (s.role != tensor_role::weight) continue;
        if (held && !held(s)) continue;
        if (p.sharded((int)i))
            slices.tensors.push_back((int)i);
        else if (s.expert < 0 || mesh.ep == 1)
            dense.tensors.push_back((int)i);
        else if (holds_expert(p.cfg, s.expert))
            experts.tensors.push_back((int)i);
    }
    std::vector<replica_group> g{dense};
    if (!slices.tensors.empty()) g.push_back(slices);
    if (!experts.tensors.empty()) g.push_back(experts);
    return g;
}

}  // namespace trex::parallel
