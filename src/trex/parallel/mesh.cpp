#include "trex/parallel/mesh.hpp"

#include <fmt/format.h>

#include "trex/base/error.hpp"

namespace trex::parallel {

std::string device_mesh::layout() const {
    return fmt::format("tp {} x pp {} x dp {}, experts ep {} x edp {}", tp, pp, dp, ep, edp);
}

std::string device_mesh::describe(const model_config& cfg) const {
    std::string s = fmt::format("dist: world {} = {}\n", world, layout());
    const int E = cfg.n_routed_experts / ep;
    for (int r = 0; r < world; r++) {
        const int tp_r = r % tp, dp_r = (r / tp) % dp, pp_r = r / (tp * dp);
        const int local = dp_r * tp + tp_r;
        const int ep_r = local % ep, edp_r = local / ep;
        s += fmt::format("dist:   rank {}: tp {} pp {} dp {} | ep {} (experts {}..{}) expert-dp {}\n", r, tp_r, pp_r,
                         dp_r, ep_r, ep_r * E, ep_r * E + E - 1, edp_r);
    }
    return s;
}

device_mesh make_mesh(const mesh_spec& spec, int world, int rank, const model_config& cfg) {
    TREX_CHECK(spec.tp >= 1, "--tp must be at least 1, got {}", spec.tp);
    TREX_CHECK(spec.pp >= 1, "--pp must be at least 1, got {}", spec.pp);
    TREX_CHECK(spec.ep >= 1, "--ep must be at least 1, got {}", spec.ep);
    TREX_CHECK(world % (spec.tp * spec.pp) == 0, "--tp {} x --pp {} = {} does not divide the world size {}", spec.tp,
               spec.pp, spec.tp * spec.pp, world);
    device_mesh m;
    m.world = world;
    m.rank = rank;
    m.tp = spec.tp;
    m.pp = spec.pp;
    m.dp = world / (spec.tp * spec.pp);
    m.ep = spec.ep;
    const int stage = m.tp * m.dp;
    TREX_CHECK(stage % spec.ep == 0, "--ep {} does not divide the {} ranks of a pipeline stage (tp {} x dp {})",
               spec.ep, stage, m.tp, m.dp);
    TREX_CHECK(cfg.n_routed_experts % spec.ep == 0, "--ep {} does not divide the model's {} routed experts", spec.ep,
               cfg.n_routed_experts);
    TREX_CHECK(cfg.num_attention_heads % spec.tp == 0 && cfg.o_groups % spec.tp == 0,
               "--tp {} does not divide the model's {} attention heads and {} output groups", spec.tp,
               cfg.num_attention_heads, cfg.o_groups);
    TREX_CHECK(cfg.moe_intermediate_size % spec.tp == 0, "--tp {} does not divide the expert intermediate size {}",
               spec.tp, cfg.moe_intermediate_size);
    TREX_CHECK(spec.pp <= cfg.num_hidden_layers, "--pp {} exceeds the model's {} layers", spec.pp,
               cfg.num_hidden_layers);
    m.edp = stage / spec.ep;
    m.tp_rank = rank % m.tp;
    m.dp_rank = (rank / m.tp) % m.dp;
    m.pp_rank = rank / (m.tp * m.dp);
    const int local = m.dp_rank * m.tp + m.tp_rank;
    m.ep_rank = local % m.ep;
    m.edp_rank = local / m.ep;
    return m;
}

}  // namespace trex::parallel
