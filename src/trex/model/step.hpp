// What one training step of the model takes and gives (docs/model.md §1, §4): the batch, the options, the result
// with its losses and expert loads, the pipeline stage range, and the profile of the step's sections. The layers
// (model/layers/) and the composer (model.hpp) share these types.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "trex/kernels/kernel_table.hpp"

namespace trex {

// One step's inputs (docs/model.md §1), all [B,S] row-major.
struct batch_view {
    int64_t B = 0, S = 0;
    const int32_t* input_ids = nullptr;
    const int32_t* labels = nullptr;         // -1 = no loss
    const int32_t* mtp_input_ids = nullptr;  // required when the model has MTP
    const int32_t* mtp_labels = nullptr;     // -1 = no loss; nullptr = no MTP loss
    const int32_t* doc_start = nullptr;      // nullptr = one document per row
};

struct step_options {
    double lambda_mtp = 0.3;   // weight of the MTP loss
    double alpha_bal = 1e-4;   // sequence-wise balance loss weight α
    double lambda_idx = 1.0;   // weight of the lightning-indexer KL loss
    bool dense_csa = false;    // indexer warm-up phase: CSA attends to every visible compressed entry
    bool recompute = false;    // keep only block inputs; recompute each block's activations in backward
    bool keep_logits = false;  // copy the logits out (tests); otherwise the buffer is reused for gradients
    bool backward = true;      // false: forward and losses only
    bool profile = false;      // time every section of the step (step_result::profile)
    double loss_scale = 1.0;   // gradients are those of loss_scale·L (e.g. 1/accumulation steps); losses unscaled
    int64_t head_chunk = 0;    // tokens per chunk of the vocabulary head (logits, loss, backward); 0: ~16 MiB of logits
};

// Wall-clock seconds per section of a step ("fwd.attn.core", "bwd.moe.experts", ...), summed over the layers.
struct step_profile {
    std::map<std::string, double> seconds;
    std::map<std::string, int64_t> calls;
};

struct step_result {
    double loss = 0;  // total: lm + λ_mtp·mtp + bal + λ_idx·idx
    double lm = 0, mtp = 0, bal = 0, idx = 0;
    int64_t n_lm = 0, n_mtp = 0;
    // tokens routed to each expert, per MoE layer (blocks 0..L-1, then MTP): [layer][E]
    std::vector<std::vector<int64_t>> expert_load;
    // per block (0..L-1, then MTP): balance and indexer loss; a pipeline stage fills only its own blocks
    std::vector<double> block_bal, block_idx;
    step_profile profile;  // filled when step_options::profile
};

// Completes a result from its parts: bal = Σ block_bal and idx = Σ block_idx over the L blocks (block order, from
// 0), loss = lm + λ_mtp·mtp + bal + λ_idx·idx. step() ends with it; pipeline parallelism calls it on the stages'
// parts gathered per micro-batch, which gives the single-process numbers bit for bit.
void finish_step_result(step_result& r, const step_options& opts, int n_layers);

// A contiguous part of the model for pipeline parallelism (docs/distributed.md): blocks [first, last). The stage
// with first == 0 embeds the tokens; the one with last == L runs hc_head/norm/head, the LM loss and the MTP block
// with its loss (the MTP block uses the shared embedding and head). What crosses stages is the 4-stream mHC state
// [N,n,d] and, backwards, its gradient.
struct stage_range {
    int first = 0, last = 0;
};

// Adds the wall time of its scope to a profile section (does nothing when the profile is null).
class section_timer {
   public:
    // p == nullptr: no profiling (free); k: the backend whose GEMM accounting follows the open section
    section_timer(step_profile* p, const kernel_table& k, const char* name);
    ~section_timer();
    void next(const char* name);  // closes the current section and opens `name` (nullptr: none)
    section_timer(const section_timer&) = delete;
    section_timer& operator=(const section_timer&) = delete;

   private:
    step_profile* p_;
    const kernel_table& k_;
    const char* name_;
    double t0_ = 0;
};

// The routed experts of a MoE layer computed by someone else: expert parallelism
// (src/trex/parallel/expert_parallel.hpp) sends the tokens to the ranks holding their experts. Same contract as the
// kernel table's moe_experts_forward/backward (y, dx and dweight assigned, dw13/dw2 accumulated); `overlap` is
// independent work the dispatcher may run while tokens travel (the shared expert), and it must run it exactly once.
class expert_dispatcher {
   public:
    virtual ~expert_dispatcher() = default;
    virtual void forward(int layer, float* y, moe_routing& st, const float* x, const int32_t* sel, const float* weight,
                         const float* const* w13, const float* const* w2, int64_t N, int64_t d, int E, int K, int64_t I,
                         double limit, const std::function<void()>& overlap) = 0;
    virtual void backward(int layer, float* dx, float* dweight, float* const* dw13, float* const* dw2, const float* dy,
                          const moe_routing& st, const float* x, const float* weight, const float* const* w13,
                          const float* const* w2, int64_t N, int64_t d, int E, int K, int64_t I, double limit,
                          const std::function<void()>& overlap) = 0;
    // Pipeline parallelism keeps several micro-batches in flight: what the dispatcher keeps from a layer's forward
    // to its backward belongs to the selected slot (one per micro-batch and model chunk).
    virtual void select_slot(int slot) { (void)slot; }
    // Whether forward() fills the routing's a13 (the experts computed in place on the given rows), so that the
    // activation plan sizes it: expert parallelism keeps its own per-layer state and does not.
    virtual bool keeps_routing_activations() const { return true; }
};

}  // namespace trex
