#include "trex/parallel/parallelize.hpp"

namespace trex::parallel {

parallel_bindings parallelize(dsv4_model& model, dist_context& dc, bool overlap,
                              const param_store::holds_fn& stage_holds) {
    parallel_bindings b;
    param_store::holds_fn holds = stage_holds;
    if (dc.mesh.ep > 1) {
        b.ep = std::make_unique<expert_parallel>(*dc.ep_comm, model.config(), overlap, model.kernels());
        model.set_expert_dispatcher(b.ep.get());
        // the arenas hold this rank's routed experts only
        const int first = dc.mesh.expert_first(model.config()), count = dc.mesh.expert_count(model.config());
        holds = [first, count, stage_holds](const tensor_spec& s) {
            return (s.expert < 0 || (s.expert >= first && s.expert < first + count)) &&
                   (!stage_holds || stage_holds(s));
        };
    }
    if (holds) model.hold_only(holds);
    if (dc.mesh.tp > 1) {
        b.tp = std::make_unique<tp_group>(*dc.tp_comm);
        model.set_tensor_parallel(b.tp.get(), /*experts_split=*/dc.mesh.ep == 1);
    }
    return b;
}

}  // namespace trex::parallel
