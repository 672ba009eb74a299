#include "trex/model/activations.hpp"

#include <algorithm>
#include <cstring>
#include <new>

#include "trex/base/error.hpp"

namespace trex {

namespace {

void layout_mhc(act_layout& L, block_acts& A, const block_act_shape& s) {
    const int64_t N = s.N, d = s.d, n = s.n;
    L.place(A.y1, N * d);
    L.place(A.post1, N * n);
    L.place(A.comb1, N * n * n);
    L.place(A.mix1, N * s.rows);
    L.place(A.rho1, N);
    L.place(A.h_mid, N * n * d);
    L.place(A.F1, N * d);
    L.place(A.y2, N * d);
    L.place(A.post2, N * n);
    L.place(A.comb2, N * n * n);
    L.place(A.mix2, N * s.rows);
    L.place(A.rho2, N);
    L.place(A.F2, N * d);
}

// Projections, the compressor (ratio > 0), the key lists and the attention core.
void layout_attention(act_layout& L, block_acts& A, const block_act_shape& s) {
    const int64_t N = s.N, c = s.c, Nc1 = std::max<int64_t>(s.Nc, 1);
    L.place(A.a1, N * s.d);
    L.place(A.a1_rstd, N);
    L.place(A.qa, N * s.dc);
    L.place(A.qa_rstd, N);
    L.place(A.qr, N * s.dc);
    L.place(A.q, N * s.H * c);
    L.place(A.q_rstd, N * s.H);
    L.place(A.kv_pre, N * c);
    L.place(A.kv_rstd, N);
    L.place(A.kv_all, (N + s.Nc) * c);
    const int64_t coff = s.ratio == 0 ? 0 : (s.ratio == 4 ? 2 : 1);
    L.place(A.ckv, N * coff * c);
    L.place(A.cg, N * coff * c);
    L.place(A.cpool, s.ratio == 0 ? 0 : Nc1 * c);
    L.place(A.cpool_rstd, s.ratio == 0 ? 0 : Nc1);
    L.place(A.key_offset, N + 1);
    L.place(A.n_window, N);
    L.place(A.key_idx, s.keys);
    L.place(A.P, s.keys * s.H);
    L.place(A.o, N * s.H * c);
    L.place(A.u, N * s.groups * s.dg);
}

// The lightning indexer (ratio 4 only: empty views elsewhere).
void layout_indexer(act_layout& L, block_acts& A, const block_act_shape& s) {
    const bool on = s.ratio == 4;
    const int64_t N = on ? s.N : 0, cI = s.cI, Nc1 = on ? std::max<int64_t>(s.Nc, 1) : 0;
    L.place(A.iq, N * s.HI * cI);
    L.place(A.ikv, N * 2 * cI);
    L.place(A.ig, N * 2 * cI);
    L.place(A.ipool, Nc1 * cI);
    L.place(A.ipool_rstd, Nc1);
    L.place(A.ik, Nc1 * cI);
    L.place(A.iw, N * s.HI);
    L.place(A.iscores, N * s.ld);
    L.place(A.sel, N * s.kw);
    L.place(A.nsel, N);
    A.ld = on ? s.ld : 0;
    A.kw = on ? s.kw : 0;
}

void layout_moe(act_layout& L, block_acts& A, const block_act_shape& s) {
    const int64_t N = s.N;
    L.place(A.a2, N * s.d);
    L.place(A.a2_rstd, N);
    L.place(A.logits, N * s.E);
    L.place(A.s, N * s.E);
    L.place(A.weight, N * s.K);
    L.place(A.sel_e, N * s.K);
    L.place(A.moe.expert_offset, s.E + 1);
    L.place(A.moe.row_slot, s.routed);
    L.place(A.moe.slot_row, s.routed);
    L.place(A.moe.a13, s.routed * s.a13_width);
    L.place(A.sh13, N * 2 * s.Is);
    L.place(A.load, s.E);
}

}  // namespace

void layout_block_acts(act_layout& L, block_acts& A, const block_act_shape& s) {
    layout_mhc(L, A, s);
    layout_attention(L, A, s);
    layout_indexer(L, A, s);
    layout_moe(L, A, s);
}

void layout_head_acts(act_layout& L, head_acts& K, const head_act_shape& s) {
    const int64_t N = s.head ? s.N : 0, Nm = s.head && s.mtp ? s.N : 0, d = s.d, n = s.n;
    L.place(K.x, N * d);
    L.place(K.xn, N * d);
    L.place(K.xrstd, N);
    L.place(K.hmix, N * n);
    L.place(K.hrho, N);
    L.place(K.dxn, N * d);
    L.place(K.en, Nm * d);
    L.place(K.erstd, Nm);
    L.place(K.hn, Nm * n * d);
    L.place(K.hrstd, Nm * n);
    L.place(K.x2, Nm * d);
    L.place(K.xn2, Nm * d);
    L.place(K.x2rstd, Nm);
    L.place(K.h2mix, Nm * n);
    L.place(K.h2rho, Nm);
    L.place(K.dxn2, Nm * d);
}

size_t block_act_bytes(const block_act_shape& s) {
    block_acts unbound;
    act_layout count;
    layout_block_acts(count, unbound, s);
    return count.bytes();
}

// The stage's fixed part in its order: the states, the MTP input, the heads.
void stage_activations::layout_fixed(act_layout& L, std::span<float>& states, std::span<float>& mtp_in, head_acts& head,
                                     int64_t n_states, int64_t n_mtp, const head_act_shape& hs) {
    L.place(states, n_states);
    L.place(mtp_in, n_mtp);
    layout_head_acts(L, head, hs);
}

// Block i's tensors (shape i) at its place in the blocks' region (base == nullptr: placements recorded only).
void stage_activations::layout_block(std::byte* base, std::vector<act_place>* rec, size_t i, block_acts& A) const {
    const size_t at = blocks_at_ + offset_[i];
    act_layout L(base ? base + at : nullptr, rec, at);
    layout_block_acts(L, A, shapes_[i]);
}

void stage_activations::plan(const stage_plan& p, const device_allocator& mem) {
    // [states][mtp_in][heads][blocks: one region each, or one shared region under recompute]
    act_layout count;
    layout_fixed(count, states, mtp_in, head, p.states, p.mtp_in, p.head);
    blocks_at_ = count.bytes();
    offset_.assign(p.blocks.size(), 0);
    size_t region = 0;
    for (size_t i = 0; i < p.blocks.size(); i++) {
        const size_t b = block_act_bytes(p.blocks[i]);
        if (p.recompute) {
            region = std::max(region, b);
        } else {
            offset_[i] = region;
            region += b;
        }
    }
    const size_t need = std::max<size_t>(blocks_at_ + region, 64);
    if (need > capacity_) {
        arena_ = std::unique_ptr<std::byte, void (*)(void*)>(static_cast<std::byte*>(mem.allocate(need)), mem.release);
        capacity_ = need;
    }
    shapes_ = p.blocks;
    head_shape_ = p.head;
    recompute_ = p.recompute;
    blocks_.assign(p.recompute ? std::min<size_t>(p.blocks.size(), 1) : p.blocks.size(), block_acts{});
    std::vector<act_place> bound;  // ASan builds: what is addressable
    std::vector<act_place>* rec = kAddressSanitizer ? &bound : nullptr;
    act_layout bind(arena_.get(), rec);
    layout_fixed(bind, states, mtp_in, head, p.states, p.mtp_in, p.head);
    for (size_t i = 0; i < blocks_.size(); i++) layout_block(arena_.get(), rec, i, blocks_[i]);
    expose(0, capacity_, bound);
}

// ASan builds: only the bound tensors of [from, to) are addressable.
void stage_activations::expose(size_t from, size_t to, const std::vector<act_place>& places) const {
    if (!kAddressSanitizer) return;
    asan_poison(arena_.get() + from, to - from);
    for (const act_place& p : places) asan_unpoison(arena_.get() + p.offset, p.bytes);
}

std::vector<act_place> stage_activations::placements() const {
    std::vector<act_place> out;
    act_layout L(nullptr, &out);
    std::span<float> unbound_states, unbound_mtp;
    head_acts unbound_head;
    layout_fixed(L, unbound_states, unbound_mtp, unbound_head, (int64_t)states.size(), (int64_t)mtp_in.size(),
                 head_shape_);
    for (size_t i = 0; i < shapes_.size(); i++) {
        block_acts unbound;
        layout_block(nullptr, &out, i, unbound);
    }
    return out;
}

block_acts& stage_activations::block(int i) {
    TREX_ASSERT(i >= 0 && (size_t)i < shapes_.size());
    if (!recompute_) return blocks_[i];
    std::vector<act_place> bound;
    layout_block(arena_.get(), kAddressSanitizer ? &bound : nullptr, (size_t)i, blocks_[0]);  // offset_[i] is 0
    expose(blocks_at_, capacity_, bound);
    return blocks_[0];
}

}  // namespace trex
