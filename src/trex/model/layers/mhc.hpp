// One manifold-constrained hyper-connection unit (docs/model.md §3.3) around a sub-layer F:
//   y = hc_pre(h_in)                 the n streams [N,n,d] mixed into the sub-layer's input [N,d]
//   h_out = post·F(y) + comb·h_in    the sub-layer's output spread back over the streams, plus the mixed residual
// Forward saves y and the mixing (post, comb, mix, rho) in the unit's views of block_acts; backward is the two
// halves in reverse order, with the sub-layer's backward between them.
#pragma once

#include <cstdint>
#include <span>

#include "trex/model/activations.hpp"
#include "trex/model/layers/env.hpp"
#include "trex/model/layers/weights.hpp"

namespace trex {

// The saved tensors of one unit: y [N,d], post [N,n], comb [N,n,n], mix [N,rows], rho [N].
struct mhc_saved {
    std::span<float> y, post, comb, mix, rho;
};
mhc_saved attn_unit_saved(block_acts& A);  // y1, post1, comb1, mix1, rho1
mhc_saved ffn_unit_saved(block_acts& A);   // y2, …

class mhc_unit {
   public:
    explicit mhc_unit(const model_config& cfg) : md_(mhc_dims_of(cfg)) {}

    // S.y and the mixing from h_in [N,n,d]
    void pre_forward(const mhc_saved& S, const float* h_in, const mhc_weights& W, const layer_env& env) const;
    // h_out [N,n,d] = post·F + comb·h_in; F [N,d]
    void post_forward(float* h_out, const float* F, const float* h_in, const mhc_saved& S, const layer_env& env) const;
    // dF [N,d], dpost [N,n], dcomb [N,n,n] assigned from dh_out [N,n,d] (the residual's gradient comb·dh_out is left
    // to pre_backward, which adds it: one pass less)
    void post_backward(float* dF, float* dpost, float* dcomb, const float* dh_out, const float* F, const float* h_in,
                       const mhc_saved& S, const layer_env& env) const;
    // dh_in [N,n,d] assigned = the gradient through hc_pre from dy [N,d] + the post/comb gradients + the residual
    // comb·dh_out; G += the unit's parameter gradients
    void pre_backward(float* dh_in, const mhc_weights& G, const float* dy, const float* dpost, const float* dcomb,
                      const float* h_in, const mhc_weights& W, const mhc_saved& S, const float* dh_out,
                      const layer_env& env) const;

   private:
    mhc_dims md_;
};

}  // namespace trex
