// A vocabulary head (docs/model.md §3.6, §4): hc_head mixes the n streams into one, the final RMSNorm, then
// logits = xn·headᵀ and the cross-entropy against the labels. The main head and the MTP module's each have their own
// hc_head and norm and share head.weight.
//
// The [N,V] logits are never kept: forward works by chunks of tokens (only a chunk's logits exist at a time, ~16 MiB)
// and, when a backward follows, turns each chunk's logits into their gradient right away, leaving dL/dxn in the saved
// views and head.weight's gradient summed, transposed, in a head_grad. Chunks are fixed by V, so the sums' order is
// the same run to run. Under tensor parallelism head.weight is this rank's vocabulary rows (layers/vocab.hpp): the
// logits are this rank's columns, the cross-entropy is reduced over TP and so is dL/dxn.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trex/model/activations.hpp"
#include "trex/model/layers/env.hpp"
#include "trex/model/layers/weights.hpp"

namespace trex {

// The saved tensors of one head: x [N,d] (hc_head's output), xn [N,d], xrstd [N], mix [N,n], rho [N], and dxn [N,d]
// (the gradient of the loss w.r.t. xn, left by forward).
struct head_saved {
    std::span<float> x, xn, xrstd, mix, rho, dxn;
};
head_saved main_head_saved(head_acts& K);
head_saved mtp_head_saved(head_acts& K);

// head.weight's gradient of a step's chunks (both heads), transposed [d,Vr] (the fast orientation of that GEMM; Vr:
// this rank's vocabulary rows, V without TP).
struct head_grad {
    float* gT = nullptr;  // nullptr: no backward
    bool used = false;    // false: nothing summed yet (the first chunk assigns)
};

class lm_head {
   public:
    explicit lm_head(const model_config& cfg) : md_(mhc_dims_of(cfg)) {}

    // From the state h [N,n,d]: S.x, S.xn; then by chunks the logits (copied to *logits_out when not null, [N,V]),
    // Σ CE over labels ≥ 0 (returned; labels == nullptr: no loss) and its count *n_valid. When hg.gT is set, S.dxn =
    // d(scale·Σ CE)/dxn and hg += head.weightᵀ's gradient.
    double forward(const head_saved& S, int64_t* n_valid, const float* h, const int32_t* labels, double scale,
                   std::vector<float>* logits_out, head_grad& hg, const head_weights& W, const layer_env& env) const;
    // dh [N,n,d] assigned from S.dxn through the norm and hc_head; G's hc and norm +=
    void backward(float* dh, const float* h, const head_saved& S, const head_weights& W, const head_weights& G,
                  const layer_env& env) const;
    // head.weight's gradient g_head [Vr,d] += hg.gTᵀ (nothing when no chunk was summed)
    static void add_grad(float* g_head, const head_grad& hg, const layer_env& env);

   private:
    double vocab(float* dxn, int64_t* n_valid, const float* xn, const int32_t* labels, double scale,
                 std::vector<float>* logits_out, head_grad& hg, const float* head, const layer_env& env) const;
    mhc_dims md_;
};

}  // namespace trex
