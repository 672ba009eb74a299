// The DeepSeek-V4 optimizer recipe (spec §3): Muon with the hybrid Newton-Schulz iteration for matrices, AdamW for
// embedding, head, RMSNorm weights, mHC base/scale, attention sink and compressor position bias; or pure AdamW.
// Learning-rate schedule (linear warm-up, constant, cosine decay to a minimum) and global-norm gradient clipping.
//
// State lives in flat arenas with the weights' layout (momentum for Muon matrices, m and v for AdamW tensors), so a
// checkpoint saves them with offset arithmetic like the weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trex/kernels/kernel_table.hpp"
#include "trex/model/params.hpp"

namespace trex {

struct optim_config {
    std::string kind = "muon";  // "muon" (Muon + AdamW as spec §3.3) or "adamw" (every tensor with AdamW)
    double weight_decay = 0.1;  // decoupled: W ← W·(1 − lr·wd)
    // Muon
    double muon_momentum = 0.95;    // μ
    bool muon_nesterov = true;      // NS input μ·M + G (spec §3.1)
    double muon_update_rms = 0.18;  // γ: the update is rescaled to RMS γ (O · sqrt(max(n, m)) · γ)
    int ns_fast_steps = 8;          // (3.4445, −4.7750, 2.0315)
    int ns_stable_steps = 2;        // (2, −1.5, 0.5)
    // AdamW
    double beta1 = 0.9, beta2 = 0.95, eps = 1e-20;
    // clipping of the global gradient norm (0 = off)
    double clip_grad_norm = 1.0;
};

// One matrix as Muon sees it: a row block of a tensor (wo_a holds o_groups independent matrices; a routed expert's
// w1/w3/w2 are separate tensors already).
struct muon_matrix {
    int tensor = 0;      // index into param_store::specs
    int64_t offset = 0;  // float offset of the block in the arena
    int64_t rows = 0, cols = 0;
};

struct optim_step_stats {
    double grad_norm = 0;   // global L2 norm before clipping
    double clip_scale = 1;  // factor applied to the gradients (1 when not clipped)
    double lr = 0;
};

class optimizer {
   public:
    // Muon's GEMMs run through `kernels` (the model's table: kernels/kernel_table.hpp).
    optimizer(param_store& params, const optim_config& cfg, const kernel_table& kernels = cpu_kernels());

    // One update of every trainable tensor from the accumulated gradients, with learning rate lr. The gradients are
    // read (and scaled in place when clipped). Buffers (gate.bias, tid2eid) are not touched.
    optim_step_stats step(double lr);

    const optim_config& config() const { return cfg_; }
    const std::vector<muon_matrix>& muon_matrices() const { return muon_; }
    bool uses_muon(int tensor) const { return is_muon_[tensor]; }
    int64_t adam_steps() const { return adam_t_; }

    // State for checkpoints: momentum (Muon) and m, v (AdamW) in the weights' layout; the AdamW step count.
    float_buffer& state_m() { return m_; }
    float_buffer& state_v() { return v_; }
    void set_adam_steps(int64_t t) { adam_t_ = t; }

    // Global L2 norm of the gradients of the trainable tensors (fixed summation order).
    double grad_norm() const;

   private:
    param_store& p_;
    optim_config cfg_;
    const kernel_table& k_;
    std::vector<muon_matrix> muon_;
    std::vector<bool> is_muon_;
    std::vector<int> adam_tensors_;
    float_buffer m_, v_;
    int64_t adam_t_ = 0;
};

// The Muon matrices of tensor i under cfg (empty when the tensor is updated with AdamW or is not a trainable weight):
// one per tensor, or o_groups row blocks for attn.wo_a.
std::vector<muon_matrix> muon_matrices_of(const param_store& p, int i, const optim_config& cfg);

// Σ x² in double over n values, summed in fixed chunks (independent of the thread count).
double sum_squares(const float* x, int64_t n);

// Is tensor i a TP slice of one Muon matrix (Newton-Schulz needs the whole matrix: the slices are gathered)? wo_a's
// slices are whole groups, each its own Muon matrix.
bool muon_needs_whole_tensor(const param_store& p, int i);

// One Muon update of a [rows, cols] matrix: M ← μM + G; U = NS(μM + G) (Nesterov) or NS(M);
// W ← W·(1 − lr·wd) − lr·γ·sqrt(max(rows, cols))·U. The three parts below, in this order.
void muon_step_matrix(float* W, float* M, const float* G, int64_t rows, int64_t cols, double lr,
                      const optim_config& cfg, const kernel_table& k = cpu_kernels());
// Elementwise over n values: M ← μM + G; U = μM + G (Nesterov) or M.
void muon_momentum(float* M, float* U, const float* G, int64_t n, const optim_config& cfg);
// W ← W·(1 − lr·wd) − lr·γ·sqrt(max(rows, cols))·U over n values of a [rows, cols] matrix (or a slice of it).
void muon_apply(float* W, const float* U, int64_t n, int64_t rows, int64_t cols, double lr, const optim_config& cfg);
// One AdamW update (PyTorch's formula, bias-corrected, step count t ≥ 1) of n values:
// m ← β1 m + (1−β1) g; v ← β2 v + (1−β2) g²; W ← W·(1 − lr·wd) − (lr/bc1)·m / (sqrt(v)/sqrt(bc2) + ε).
void adamw_step_tensor(float* W, float* m, float* v, const float* G, int64_t n, double lr, int64_t t,
                       const optim_config& cfg);

// Hybrid Newton-Schulz orthogonalisation (spec §3.2) of X [rows, cols] in place: X ← X/‖X‖_F, then `fast` steps with
// (3.4445, −4.7750, 2.0315) and `stable` steps with (2, −1.5, 0.5) of X ← aX + b(XXᵀ)X + c(XXᵀ)²X, iterating on Xᵀ
// when rows > cols (so the Gram matrix is the smaller one). The products run through k.syrk and k.gemm.
void newton_schulz(float* X, int64_t rows, int64_t cols, int fast, int stable, const kernel_table& k = cpu_kernels());

// Learning-rate schedule: linear warm-up from 0 over `warmup` steps, constant `peak` until `decay_start`, cosine
// decay to `min_lr` at `total` (and `min_lr` after).
struct lr_schedule {
    double peak = 2.7e-4;
    double min_lr = 2.7e-5;
    int64_t warmup = 0;
    int64_t decay_start = 0;        // 0 = decay starts right after the warm-up
    int64_t total = 0;              // 0 = no decay (constant after warm-up)
    double at(int64_t step) const;  // step counts from 0
};

}  // namespace trex
