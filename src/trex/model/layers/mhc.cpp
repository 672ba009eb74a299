#include "trex/model/layers/mhc.hpp"

namespace trex {

mhc_dims mhc_dims_of(const model_config& cfg) {
    mhc_dims d;
    d.n = cfg.hc_mult;
    d.d = cfg.hidden_size;
    d.iters = cfg.hc_sinkhorn_iters;
    d.hc_eps = cfg.hc_eps;
    d.norm_eps = cfg.rms_norm_eps;
    return d;
}

mhc_saved attn_unit_saved(block_acts& A) {
    return {A.y1, A.post1, A.comb1, A.mix1, A.rho1};
}

mhc_saved ffn_unit_saved(block_acts& A) {
    return {A.y2, A.post2, A.comb2, A.mix2, A.rho2};
}

void mhc_unit::pre_forward(const mhc_saved& S, const float* h_in, const mhc_weights& W, const layer_env& env) const {
    env.k.hc_pre_forward(S.y.data(), S.post.data(), S.comb.data(), S.mix.data(), S.rho.data(), h_in, W.fn, W.base,
                         W.scale, env.N(), md_);
}

void mhc_unit::post_forward(float* h_out, const float* F, const float* h_in, const mhc_saved& S,
                            const layer_env& env) const {
    env.k.hc_post_forward(h_out, F, h_in, S.post.data(), S.comb.data(), env.N(), md_);
}

void mhc_unit::post_backward(float* dF, float* dpost, float* dcomb, const float* dh_out, const float* F,
                             const float* h_in, const mhc_saved& S, const layer_env& env) const {
    env.k.hc_post_backward(dF, nullptr, dpost, dcomb, dh_out, F, h_in, S.post.data(), S.comb.data(), env.N(), md_);
}

void mhc_unit::pre_backward(float* dh_in, const mhc_weights& G, const float* dy, const float* dpost, const float* dcomb,
                            const float* h_in, const mhc_weights& W, const mhc_saved& S, const float* dh_out,
                            const layer_env& env) const {
    env.k.hc_pre_backward(dh_in, G.fn, G.base, G.scale, dy, dpost, dcomb, h_in, W.fn, W.base, W.scale, S.mix.data(),
                          S.rho.data(), env.N(), md_, dh_out);
}

}  // namespace trex
