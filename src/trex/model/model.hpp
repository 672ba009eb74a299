// The DeepSeek-V4 model on CPU: forward, losses and backward of one step (docs/model.md), on the fast kernels.
//
// Layout legend: N = B·S token slots, d hidden, n = hc_mult streams, H heads, c head_dim, dc q_lora_rank,
// g o_groups, dg o_lora_rank, HI/cI indexer heads/dim, Nc compressed entries, E experts, K experts per token,
// I expert intermediate size, V vocab.
//
// Gradient convention: parameter gradients accumulate into param_store::grads (call zero_grads() to start a new
// accumulation); activation gradients are assigned.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "trex/kernels/kernel_table.hpp"
#include "trex/model/activations.hpp"
#include "trex/model/geometry.hpp"
#include "trex/model/params.hpp"
#include "trex/model/tensor_parallel.hpp"
#include "trex/model/workspace.hpp"

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

// mHC sizes of a config.
mhc_dims mhc_dims_of(const model_config& cfg);

// Pointers of one block's tensors into the weights (or, for the gradient view, the grads) arena.
struct block_weights {
    int layer = 0, ratio = 0;
    bool hash = false;
    float *attn_norm = nullptr, *ffn_norm = nullptr;
    float *hc_attn_fn = nullptr, *hc_attn_base = nullptr, *hc_attn_scale = nullptr;
    float *hc_ffn_fn = nullptr, *hc_ffn_base = nullptr, *hc_ffn_scale = nullptr;
    float *sink = nullptr, *wq_a = nullptr, *q_norm = nullptr, *wq_b = nullptr, *wkv = nullptr, *kv_norm = nullptr;
    float *wo_a = nullptr, *wo_b = nullptr;
    float *c_wkv = nullptr, *c_wgate = nullptr, *c_ape = nullptr, *c_norm = nullptr;  // compressor (ratio > 0)
    float *i_wq_b = nullptr, *i_wp = nullptr;                                         // indexer (ratio 4)
    float *i_wkv = nullptr, *i_wgate = nullptr, *i_ape = nullptr, *i_norm = nullptr;
    float *gate = nullptr, *gate_bias = nullptr;
    const int32_t* tid2eid = nullptr;
    float *sh_w13 = nullptr, *sh_w2 = nullptr;  // shared expert: w1 and w3 adjacent ([2·Is, d]), w2 [d, Is]
    std::vector<float*> w13, w2;                // routed experts: [2I, d] and [d, I] each
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

// Everything a stage forward keeps for its backward (one micro-batch). Several micro-batches are in flight on a
// pipeline stage: swap_state() exchanges the model's current state with one of these.
struct forward_state {
    stage_range range;
    int64_t N = 0;
    batch_geometry geo;
    stage_activations acts;
};

class dsv4_model {
   public:
    // kernels: the backend every kernel call of the model goes through (kernel_table.hpp)
    explicit dsv4_model(const model_config& cfg, const kernel_table& kernels = cpu_kernels());
    const kernel_table& kernels() const { return kernels_; }  // the backend the model was built with

    param_store& params() { return params_; }
    // Routed experts through a dispatcher (expert parallelism); nullptr = every expert computed here.
    void set_expert_dispatcher(expert_dispatcher* d) { dispatcher_ = d; }
    // Attention heads/groups and expert intermediate dimension split over TP ranks (tensor_parallel.hpp);
    // nullptr = everything computed here.
    void set_tensor_parallel(tensor_parallel* tp) { tp_ = tp; }
    const model_config& config() const { return params_.cfg; }

    // Runs forward, losses and (unless opts.backward is false) backward; parameter gradients accumulate.
    // The same as stage_forward + stage_backward over the whole model (one stage).
    step_result step(const batch_view& batch, const step_options& opts);

    // Forward of blocks [r.first, r.last) for one micro-batch. h_in [N,n,d]: the state entering block r.first
    // (unused on the first stage); h_out [N,n,d]: the state after block r.last-1 (unused on the last stage). Returns
    // this stage's part of the result: lm/mtp on the last stage, block_bal/block_idx/expert_load of its blocks
    // (finish_step_result() combines the parts). The activations stay in the model (see swap_state).
    step_result stage_forward(const stage_range& r, const batch_view& batch, const step_options& opts,
                              const float* h_in, float* h_out);
    // Backward of the last stage_forward (same range, batch and options); parameter gradients accumulate.
    // dh_out [N,n,d] = dL/d h_out (unused on the last stage); dh_in [N,n,d] = dL/d h_in (unused on the first).
    // de_mtp [N,d], the gradient of the MTP block's embedding lookup: written by the last stage, read by the first
    // (which adds it to embed.weight's gradient before its own lookup's, the single-process order); unused when one
    // stage is both, or without MTP.
    void stage_backward(const stage_range& r, const batch_view& batch, const step_options& opts, const float* dh_out,
                        float* dh_in, float* de_mtp);
    // Exchanges the activations of the last forward with `s` (pipeline parallelism: one state per micro-batch in
    // flight). Buffers move, nothing is copied.
    void swap_state(forward_state& s);

    // Aux-loss-free load balancing (docs/model.md §4, spec §2.8): after the optimizer step, every score-routed MoE
    // layer moves its selection bias by bias_e += gamma·sign(mean_load − load_e), load = result.expert_load.
    // Hash-routed layers have no bias. Returns the number of layers updated.
    int update_expert_biases(const step_result& result, double gamma);

    // After step(..., keep_logits): [N,V] logits of the LM head and the MTP head.
    const std::vector<float>& logits() const { return logits_out_; }
    const std::vector<float>& mtp_logits() const { return mtp_logits_out_; }
    // After step(): 4-stream state after block l (l = L: the MTP block), [N,n,d].
    const float* block_output(int l) const;
    // Memory of the last forward (bytes): what it keeps for the backward — the activation arena as planned
    // (activations.hpp: every block's saved tensors, one block's under recompute, the block inputs, head and MTP
    // activations; its largest plan so far) —, and the workspace of the forward and backward temporaries (its one
    // block: the most the steps so far held at once). The kernels' per-thread scratch and the parameter arenas are not
    // included.
    size_t activation_bytes() const;
    const stage_activations& activations() const { return acts_; }  // the last forward's (activations.hpp)
    size_t workspace_bytes() const;
    // After step(): indexer selection of a CSA layer, [N, kw] (−1 padded) and kw. Not kept under recompute.
    std::span<const int32_t> csa_selection(int layer, int64_t* kw) const;

   private:
    // What a block needs to know about the step besides its weights.
    struct layer_ctx {
        const batch_view* batch = nullptr;
        const step_options* opts = nullptr;
        int layer = 0;
        int ratio = 0;
        bool count_losses = true;  // false when recomputing activations in backward
    };

    void block_forward(block_acts& A, float* h_out, const float* h_in, const block_weights& W, const layer_ctx& ctx);
    void block_backward(block_acts& A, float* dh_in, const float* dh_out, const float* h_in, const block_weights& W,
                        const block_weights& G, const layer_ctx& ctx);
    void attention_forward(block_acts& A, const block_weights& W, const layer_ctx& ctx);
    void attention_backward(block_acts& A, float* dy, const float* dF, const block_weights& W, const block_weights& G,
                            const layer_ctx& ctx);
    void indexer_forward(block_acts& A, const block_weights& W, const layer_ctx& ctx);
    void indexer_backward(block_acts& A, const block_weights& W, const block_weights& G, const layer_ctx& ctx);
    void moe_forward(block_acts& A, const block_weights& W, const layer_ctx& ctx);
    void moe_backward(block_acts& A, float* dy, const float* dF, const block_weights& W, const block_weights& G,
                      const layer_ctx& ctx);
    void build_keys(block_acts& A, const layer_ctx& ctx);
    // The activation plan of a stage forward over the current geometry (memory.cpp).
    block_act_shape act_shape(int layer, const step_options& opts) const;
    stage_plan plan_stage(const stage_range& r, bool mtp, const step_options& opts) const;
    // Tensor parallelism in the MoE (moe_layer.cpp): this rank's slice of the shared and routed experts.
    struct tp_moe_weights {
        int64_t Is = 0, I = 0;  // local intermediate sizes
        float *sh_w13 = nullptr, *sh_w2 = nullptr;
        std::vector<float*> w13, w2;
    };
    tp_moe_weights tp_moe_slice(const block_weights& W, float* buf) const;  // W without weights: zeroed slices
    int64_t tp_moe_floats() const;
    void tp_moe_add_grads(const block_weights& G, const tp_moe_weights& T) const;
    std::pair<int64_t, int64_t> tp_token_range() const;  // [first, first + count) of the tokens this rank dispatches

    block_weights bind_block(int layer, bool grads);
    void check_batch(const batch_view& batch, bool mtp) const;
    void head_forward(step_result& res, const batch_view& batch, const step_options& opts, float* h_last);
    struct head_grad_t {
        float* gT = nullptr;  // [d, V]: head.weight's gradient of this step's chunks, transposed
        bool used = false;    // false: nothing summed yet (the first chunk assigns)
    };
    double vocab_head(float* dxn, int64_t* n_valid, const float* xn, const int32_t* labels, double scale,
                      const step_options& opts, std::vector<float>* logits_out, head_grad_t& hg);
    void add_head_grad(const head_grad_t& hg);  // head.weight's gradient += hg.gTᵀ
    void head_backward(float* dh, const batch_view& batch, const step_options& opts, float* h_last, float* de_mtp);

    param_store params_;
    std::vector<block_weights> wblocks_, gblocks_;  // views into weights / grads for blocks 0..L (L = MTP)
    stage_activations acts_;  // the last forward's saved tensors: block inputs, blocks, heads (activations.hpp)
    std::vector<float> logits_out_, mtp_logits_out_;
    stage_range range_;              // the range of the last stage_forward
    std::vector<float> de_mtp_;      // [N,d] MTP embedding gradient when one stage holds both ends
    std::vector<int32_t> hash_sel_;  // [N,K] tid2eid rows of the step's tokens
    step_profile* prof_ = nullptr;   // &profile_ while profiling (step_options::profile)
    step_profile profile_;           // sections of the running step (cleared by a first-stage forward)
    const kernel_table& kernels_;
    expert_dispatcher* dispatcher_ = nullptr;
    tensor_parallel* tp_ = nullptr;
    // Temporaries of forward and backward: each function takes its own in a workspace::scope of ws_.
    workspace ws_;
    batch_geometry geo_;
    int64_t N_ = 0;
};

// "activations kept for backward X MiB (Y KiB/token[, recompute: one block's])" for bytes over `tokens` tokens.
std::string describe_activation_memory(double bytes, int64_t tokens, bool recompute);

}  // namespace trex
