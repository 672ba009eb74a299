// The DeepSeek-V4 model: forward, losses and backward of one step (docs/model.md), composed of the layer modules of
// model/layers/ (transformer_block = mHC + attention + mHC + MoE, lm_head, mtp_block) over the kernel table it was
// built with. The model owns the parameters, the activation arena and the workspace, and runs the stage: the
// embedding, the blocks in order, the heads and the losses, and the backward in reverse.
//
// Layout legend: N = B·S token slots, d hidden, n = hc_mult streams, H heads, c head_dim, dc q_lora_rank,
// g o_groups, dg o_lora_rank, HI/cI indexer heads/dim, Nc compressed entries, E experts, K experts per token,
// I expert intermediate size, V vocab.
//
// Gradient convention: parameter gradients accumulate into param_store::grads (call zero_grads() to start a new
// accumulation); activation gradients are assigned.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "trex/kernels/kernel_table.hpp"
#include "trex/model/activations.hpp"
#include "trex/model/geometry.hpp"
#include "trex/model/layers/attention_cache.hpp"
#include "trex/model/layers/block.hpp"
#include "trex/model/layers/env.hpp"
#include "trex/model/layers/head.hpp"
#include "trex/model/layers/mtp.hpp"
#include "trex/model/layers/weights.hpp"
#include "trex/model/params.hpp"
#include "trex/model/step.hpp"
#include "trex/model/tensor_parallel.hpp"
#include "trex/model/workspace.hpp"

namespace trex {

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
    // Attention heads/groups and expert intermediate dimension split over TP ranks (tensor_parallel.hpp): the
    // parameters are laid out again as this rank's slices (param_store with a tp_layout; the routed experts split
    // unless experts_split is false — expert parallelism, whose dispatcher keeps them whole). The values start at
    // zero: call it before the weights are initialised or loaded. nullptr = everything computed here (full tensors).
    void set_tensor_parallel(tensor_parallel* tp, bool experts_split = true);
    // Lays the parameters out again with storage only for the weights `holds` accepts (expert parallelism: this EP
    // rank's routed experts; param_store::held). Like set_tensor_parallel, before the weights are initialised or
    // loaded; a step must not reach a weight that is not held.
    void hold_only(param_store::holds_fn holds);
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
    // Cached decoding (docs/model.md §3.7): counts[b] ≥ 1 new tokens of sequence b, one sequence after another in
    // ids, run through the main model over the sequences' caches (sequence_cache::for_model), which advance by them.
    // The arithmetic of a full forward over each sequence's prefix: chunked prefill (many tokens) and decoding (one
    // per sequence, the sequences of different lengths) are the same call. logits [rows, V] is assigned: every new
    // token's row (all_logits) or each sequence's last. final_states (when not null) gets the main model's last
    // 4-stream state of every new token [N,n,d], what the MTP module drafts from. On a whole model only (no tensor,
    // expert or pipeline parallelism).
    void decode(std::span<sequence_cache* const> seqs, std::span<const int32_t> ids, std::span<const int64_t> counts,
                std::vector<float>& logits, bool all_logits = false, std::vector<float>* final_states = nullptr);
    // The MTP module over its cache (the sequences' layer L, sequence_cache::for_model(cfg, true)): for counts[b]
    // positions of sequence b after the ones its MTP cache holds, the main model's final states h_last [N,n,d] at
    // those positions and the tokens that follow them (next_ids [N]); logits [rows, V] of the token after each next
    // one (all_logits: every position's; else each sequence's last). Equals the training forward's MTP logits.
    void decode_mtp(std::span<sequence_cache* const> seqs, std::span<const float> h_last,
                    std::span<const int32_t> next_ids, std::span<const int64_t> counts, std::vector<float>& logits,
                    bool all_logits = false);
    // decode and decode_mtp with the logits of each sequence's last rows_wanted[b] new tokens (0 ≤ rows_wanted[b] ≤
    // counts[b]; 0: none): logits [Σ rows_wanted, V], sequence after sequence (empty when no row is wanted).
    void decode_rows(std::span<sequence_cache* const> seqs, std::span<const int32_t> ids,
                     std::span<const int64_t> counts, std::span<const int64_t> rows_wanted, std::vector<float>& logits,
                     std::vector<float>* final_states = nullptr);
    void decode_mtp_rows(std::span<sequence_cache* const> seqs, std::span<const float> h_last,
                         std::span<const int32_t> next_ids, std::span<const int64_t> counts,
                         std::span<const int64_t> rows_wanted, std::vector<float>& logits);
    // Decoding calls time their sections into *prof (section name -> seconds, calls) while it is set; nullptr: off.
    void set_decode_profile(step_profile* prof) { decode_prof_ = prof; }

    // After step(): indexer selection of a CSA layer, [N, kw] (−1 padded) and kw. Not kept under recompute.
    std::span<const int32_t> csa_selection(int layer, int64_t* kw) const;

   private:
    void bind_weights();
    void lay_out(const tp_layout& layout);
    layer_env env(const batch_view& batch, const step_options& opts);  // the running step's, for the layers
    // The activation plan of a stage forward over the current geometry, from its layers' shapes (memory.cpp).
    stage_plan plan_stage(const stage_range& r, bool mtp, const layer_env& env) const;
    void check_batch(const batch_view& batch, bool mtp) const;
    // decode's checks (a sequence count, token ids, caches of the right depth and length); returns the lengths
    std::vector<int64_t> check_decode(std::span<sequence_cache* const> seqs, std::span<const int32_t> ids,
                                      std::span<const int64_t> counts, int layer0, int layer1) const;
    // decode_rows' rows: checks 0 ≤ rows_wanted[b] ≤ counts[b] and returns their sum; the wanted rows of states
    int64_t check_rows(std::span<const int64_t> counts, std::span<const int64_t> rows_wanted) const;
    const float* last_rows(float* scratch, const float* src, std::span<const int64_t> rows_wanted, int64_t N,
                           int64_t w) const;
    void embed_forward(float* h0, const layer_env& env);
    void head_forward(step_result& res, const batch_view& batch, const step_options& opts, float* h_last);
    void head_backward(float* dh, const batch_view& batch, const step_options& opts, float* h_last, float* de_mtp);
    void embed_backward(const float* dh, const layer_env& env, const float* de_mtp);

    param_store params_;
    // the layers: blocks 0..L-1, the main head, the MTP module (when the config has one)
    std::vector<transformer_block> blocks_;
    lm_head head_;
    std::unique_ptr<mtp_block> mtp_;
    // views into the weights / grads: blocks 0..L-1, the main head, the MTP module
    std::vector<block_weights> wblocks_, gblocks_;
    head_weights whead_, ghead_;
    mtp_weights wmtp_, gmtp_;
    stage_activations acts_;  // the last forward's saved tensors: block inputs, blocks, heads (activations.hpp)
    std::vector<float> logits_out_, mtp_logits_out_;
    stage_range range_;             // the range of the last stage_forward
    step_profile* prof_ = nullptr;  // &profile_ while profiling (step_options::profile)
    step_profile profile_;          // sections of the running step (cleared by a first-stage forward)
    const kernel_table& kernels_;
    const kernel_table decode_kernels_;  // decoding_kernels(kernels_): what decode() runs on
    expert_dispatcher* dispatcher_ = nullptr;
    tensor_parallel* tp_ = nullptr;
    param_store::holds_fn holds_;  // hold_only's predicate (empty: every tensor)
    // Temporaries of forward and backward: each function takes its own in a workspace::scope of ws_.
    workspace ws_;
    batch_geometry geo_;
    int64_t N_ = 0;
    // cached decoding: its tensors (one block's at a time, the two states, the head's) and its geometry
    stage_activations decode_acts_;
    batch_geometry decode_geo_;
    step_profile* decode_prof_ = nullptr;
};

// "activations kept for backward X MiB (Y KiB/token[, recompute: one block's])" for bytes over `tokens` tokens.
std::string describe_activation_memory(double bytes, int64_t tokens, bool recompute);

}  // namespace trex
