// What a stage's forward keeps for its backward, planned up front (llm.c's fill_in_activation_sizes): the block
// inputs, every block's saved tensors and the heads' live as views into one arena whose size the plan computes from
// the batch geometry before the forward runs. No layer resizes a saved tensor, and the byte count `trex bench step`
// prints is the plan's, not a list kept in step with the members by hand.
//
// Contract:
// - block_act_shape gives the element count of every saved tensor of a block: exact, from the config, the batch
//   geometry, the block's compression ratio, this rank's tensor-parallel share, the tokens routed from here and
//   whether the routed experts run here. The key lists of the sparse attention (key_idx, P) are sized by what every
//   query attends to: its window, then every visible compressed entry (HCA) or min(top-k, visible) of them (CSA,
//   the indexer's selection; every visible one in the dense warm-up).
// - layout_block_acts / layout_head_acts place a block's / the heads' tensors one after another, each 64-byte aligned.
//   On a counting layout (no memory) they give the bytes; on the arena they bind the views.
// - stage_activations::plan(p) sizes the arena for the stage (growing it, zeroed, only when the plan needs more; views
//   taken before are invalid after a growth) and binds the states, the heads and, without recompute, every block.
//   Under recompute one block's tensors exist at a time: block(i) binds the one entry to block i's shape.
// - Views hold uninitialised data (what an earlier step left): layers assign every element they later read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

#include "trex/base/sanitizer.hpp"
#include "trex/kernels/memory.hpp"
#include "trex/kernels/types.hpp"

namespace trex {

// Saved activations of one block (attention + MoE sub-layers and their mHC units). Shapes in the legend of model.hpp;
// H and g are this rank's heads and output groups, Is its shared-expert share, R the slots routed from here.
struct block_acts {
    // mHC (attn unit, ffn unit)
    std::span<float> y1, post1, comb1, mix1, rho1;  // [N,d] [N,n] [N,n,n] [N,rows] [N]
    std::span<float> h_mid;                         // [N,n,d] state between the two sub-layers
    std::span<float> y2, post2, comb2, mix2, rho2;
    std::span<float> F1, F2;  // [N,d] sub-layer outputs
    // attention
    std::span<float> a1, a1_rstd;            // [N,d] attn_norm(y1), [N]
    std::span<float> qa, qa_rstd, qr;        // [N,dc], [N], [N,dc]
    std::span<float> q, q_rstd;              // [N,H,c] normalised + roped, [N·H]
    std::span<float> kv_pre, kv_rstd;        // [N,c], [N]
    std::span<float> kv_all;                 // [N + Nc, c] window kv then compressed kv (normed, roped)
    std::span<float> ckv, cg;                // [N, coff·c] compressor projections (ratio > 0; coff 2 for CSA)
    std::span<float> cpool, cpool_rstd;      // [max(Nc,1), c] pooled (pre-norm), [max(Nc,1)]
    std::span<float> iq;                     // [N, HI, cI] indexer queries (roped)      (indexer: ratio 4)
    std::span<float> ikv, ig;                // [N, 2cI]
    std::span<float> ipool, ipool_rstd, ik;  // [max(Nc,1), cI], [max(Nc,1)], [max(Nc,1), cI] (normed, roped)
    std::span<float> iw;                     // [N, HI] scaled head weights
    std::span<float> iscores;                // [N, ld] scores; after the loss: dL_idx/dscores
    std::span<int32_t> sel, nsel;            // [N, kw], [N]
    int64_t ld = 0, kw = 0;                  // score row length, selection width (ratio 4)
    std::span<int64_t> key_offset;           // [N+1]
    std::span<int32_t> key_idx;              // [keys]
    std::span<int32_t> n_window;             // [N] window keys at the head of each list
    std::span<float> P;                      // [keys · H]
    std::span<float> o;                      // [N,H,c] attention output before the inverse RoPE
    std::span<float> u;                      // [N, g·dg]
    // MoE
    std::span<float> a2, a2_rstd;        // [N,d], [N]
    std::span<float> logits, s, weight;  // [N,E], [N,E], [N,K]
    std::span<int32_t> sel_e;            // [N,K]
    moe_routing moe;                     // [E+1], [R], [R], [R, 2I] (a13 empty when a dispatcher keeps its own)
    std::span<float> sh13;    // [N, 2·Is] shared expert pre-activations (swiglu(sh13) is recomputed in backward)
    std::span<int64_t> load;  // [E] tokens routed to each expert this step
    // losses of this block
    double bal = 0, idx = 0;
};

// Element counts behind a block's saved tensors (see the contract above).
struct block_act_shape {
    int ratio = 0;                           // 0 (window only), 4 (CSA: compressor + indexer), else HCA
    int64_t N = 0, d = 0, n = 0, rows = 0;   // tokens, hidden, mHC streams, hc_fn rows
    int64_t dc = 0, H = 0, c = 0;            // q_lora_rank, this rank's heads, head_dim
    int64_t groups = 0, dg = 0;              // this rank's output groups, o_lora_rank
    int64_t Nc = 0;                          // compressed entries (ratio > 0)
    int64_t HI = 0, cI = 0, ld = 0, kw = 0;  // indexer heads and dim, score row length, selection width (ratio 4)
    int64_t keys = 0;                        // Σ over queries of the keys each attends to
    int64_t E = 0, K = 0, Is = 0;            // experts, per token, this rank's shared-expert intermediate size
    int64_t routed = 0;                      // R: slots routed from here (N·K; under TP with EP this rank's tokens')
    int64_t a13_width = 0;                   // 2·I of the experts computed in place; 0 when a dispatcher keeps them
};

// The heads' saved tensors (the last stage): main head, then the MTP input and head. The [N,V] logits are not kept
// (vocab_head works by chunks); dxn / dxn2 are the gradients of the heads' inputs, left by the forward.
struct head_acts {
    std::span<float> x, xn, xrstd, hmix, hrho, dxn;        // [N,d] [N,d] [N] [N,n] [N] [N,d]: hc_head, norm
    std::span<float> en, erstd, hn, hrstd;                 // MTP input: [N,d] [N] [N,n,d] [N,n]
    std::span<float> x2, xn2, x2rstd, h2mix, h2rho, dxn2;  // MTP head
};

struct head_act_shape {
    int64_t N = 0, d = 0, n = 0;
    bool head = false, mtp = false;  // the stage runs the main head / the MTP block and head
};

// Everything a stage forward keeps, sized from the geometry.
struct stage_plan {
    int64_t states = 0;                   // floats of the block inputs (+ the MTP output)
    int64_t mtp_in = 0;                   // floats of the MTP block's input
    head_act_shape head;                  //
    std::vector<block_act_shape> blocks;  // the stage's blocks in order, the MTP block last
    bool recompute = false;               // one block's tensors at a time
};

// A tensor's place in the arena: byte offset and size.
struct act_place {
    size_t offset = 0, bytes = 0;
};

// Places tensors one after another, each 64-byte aligned. base == nullptr: counts bytes only. With `record`, every
// placement is appended to it (offsets from `origin`). In ASan builds every tensor is followed by a 64-byte red zone
// that stage_activations poisons, so a layer that runs past a planned size is reported.
class act_layout {
   public:
    explicit act_layout(std::byte* base = nullptr, std::vector<act_place>* record = nullptr, size_t origin = 0)
        : base_(base), record_(record), origin_(origin) {}
    template <class T>
    void place(std::span<T>& v, int64_t n) {
        if (base_) v = std::span<T>(reinterpret_cast<T*>(base_ + used_), (size_t)n);
        if (record_) record_->push_back({origin_ + used_, (size_t)n * sizeof(T)});
        used_ += round_up((size_t)n * sizeof(T)) + (kAddressSanitizer ? 64 : 0);
    }
    size_t bytes() const { return used_; }

   private:
    static size_t round_up(size_t b) { return (b + 63) / 64 * 64; }
    std::byte* base_;
    std::vector<act_place>* record_;
    size_t origin_;
    size_t used_ = 0;
};

void layout_block_acts(act_layout& L, block_acts& A, const block_act_shape& s);
void layout_head_acts(act_layout& L, head_acts& K, const head_act_shape& s);
size_t block_act_bytes(const block_act_shape& s);

class stage_activations {
   public:
    // mem: where the arena lives (the model's backend: kernel_table::memory)
    void plan(const stage_plan& p, const device_allocator& mem = host_memory());
    // The saved tensors of the stage's i-th block (the MTP block last), bound to its shape.
    block_acts& block(int i);
    // Block i's tensors as they stand (under recompute: the one entry, as last bound).
    const block_acts& bound(int i) const { return blocks_.at(recompute_ ? 0 : (size_t)i); }
    bool empty() const { return blocks_.empty(); }
    size_t bytes() const { return capacity_; }  // the arena, as planned so far (its largest plan)
    const std::byte* arena() const { return arena_.get(); }
    // Where the current plan put every tensor (states, heads, then each block's; under recompute each block's shape
    // in the one shared region), offsets from arena().
    std::vector<act_place> placements() const;

    std::span<float> states;  // [(blocks + 2)·N·n·d]: the inputs of the stage's blocks and its output, then MTP's
    std::span<float> mtp_in;  // [N,n,d] the MTP block's input
    head_acts head;

   private:
    std::unique_ptr<std::byte, void (*)(void*)> arena_{nullptr, nullptr};
    size_t capacity_ = 0;
    size_t blocks_at_ = 0;  // byte offset of the blocks' region
    std::vector<block_act_shape> shapes_;
    head_act_shape head_shape_;
    std::vector<size_t> offset_;  // per block, from blocks_at_ (all 0 under recompute)
    std::vector<block_acts> blocks_;
    bool recompute_ = false;
    void expose(size_t from, size_t to, const std::vector<act_place>& places) const;
    static void layout_fixed(act_layout& L, std::span<float>& states, std::span<float>& mtp_in, head_acts& head,
                             int64_t n_states, int64_t n_mtp, const head_act_shape& hs);
    void layout_block(std::byte* base, std::vector<act_place>* rec, size_t i, block_acts& A) const;
};

}  // namespace trex
