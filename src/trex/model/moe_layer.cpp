// The MoE sub-layer (docs/model.md §3.5): ffn_norm, router (hash or score), routed experts, shared expert,
// sequence-wise balance loss.
#include <cstring>

#include "trex/model/model.hpp"

namespace trex {

// Tensor parallelism: this rank's slice [i0, i0 + Il) of the intermediate dimension of the shared expert (Is) and,
// without expert parallelism, of every routed expert (I), copied out of the weights: w13 [2n, d] and w2 [d, n] per
// matrix, shared first. With expert parallelism the routed experts stay whole (expert-TP size 1, see moe_forward).
dsv4_model::tp_moe_weights dsv4_model::tp_moe_slice(const block_weights& W, float* buf) const {
    const model_config& cfg = config();
    const int64_t d = cfg.hidden_size, E = cfg.n_routed_experts, I = cfg.moe_intermediate_size;
    const int64_t Is = (int64_t)cfg.n_shared_experts * I;
    const tp_slice ss = tp_local(tp_, Is), es = tp_local(tp_, I);
    tp_moe_weights t;
    t.Is = ss.count;
    t.I = es.count;
    t.sh_w13 = buf;
    t.sh_w2 = buf + 2 * t.Is * d;
    float* p = t.sh_w2 + d * t.Is;
    for (int64_t e = 0; e < (dispatcher_ ? 0 : E); e++) {
        t.w13.push_back(p);
        t.w2.push_back(p + 2 * t.I * d);
        p += 3 * t.I * d;
    }
    if (W.sh_w13) {  // weights (a gradient slice starts at zero)
        tp_copy::w13(t.sh_w13, W.sh_w13, Is, d, ss.first, t.Is);
        tp_copy::cols(t.sh_w2, W.sh_w2, d, Is, ss.first, t.Is);
        for (int64_t e = 0; e < (int64_t)t.w13.size(); e++) {
            tp_copy::w13(t.w13[e], W.w13[e], I, d, es.first, t.I);
            tp_copy::cols(t.w2[e], W.w2[e], d, I, es.first, t.I);
        }
    } else {
        std::memset(buf, 0, sizeof(float) * tp_moe_floats());
    }
    return t;
}

int64_t dsv4_model::tp_moe_floats() const {
    const model_config& cfg = config();
    const int64_t I = cfg.moe_intermediate_size / tp_->size();
    return 3 * (int64_t)cfg.hidden_size * I * (cfg.n_shared_experts + (dispatcher_ ? 0 : cfg.n_routed_experts));
}

// G's slices += the local gradients T.
void dsv4_model::tp_moe_add_grads(const block_weights& G, const tp_moe_weights& T) const {
    const model_config& cfg = config();
    const int64_t d = cfg.hidden_size, I = cfg.moe_intermediate_size;
    const int64_t Is = (int64_t)cfg.n_shared_experts * I;
    const tp_slice ss = tp_local(tp_, Is), es = tp_local(tp_, I);
    tp_copy::add_w13(G.sh_w13, T.sh_w13, Is, d, ss.first, T.Is);
    tp_copy::add_cols(G.sh_w2, T.sh_w2, d, Is, ss.first, T.Is);
    for (int64_t e = 0; e < (int64_t)T.w13.size(); e++) {
        tp_copy::add_w13(G.w13[e], T.w13[e], I, d, es.first, T.I);
        tp_copy::add_cols(G.w2[e], T.w2[e], d, I, es.first, T.I);
    }
}

// Under TP with expert parallelism the routed experts are not split (expert-TP size 1): the TP ranks, which share the
// step's tokens, dispatch disjoint parts of them, [N·r/T, N·(r+1)/T) on rank r; their outputs are assembled by the
// MoE's all-reduce (zeros elsewhere).
std::pair<int64_t, int64_t> dsv4_model::tp_token_range() const {
    if (!tp_ || !dispatcher_) return {0, N_};
    const int64_t r = tp_->rank(), T = tp_->size();
    return {N_ * r / T, N_ * (r + 1) / T - N_ * r / T};
}

void dsv4_model::moe_forward(block_acts& A, const block_weights& W, const layer_ctx& ctx) {
    workspace::scope ws(ws_);
    const model_config& cfg = config();
    const int64_t N = N_, d = cfg.hidden_size, E = cfg.n_routed_experts, K = cfg.num_experts_per_tok;
    const int64_t I = cfg.moe_intermediate_size, Is = (int64_t)cfg.n_shared_experts * I;
    const double eps = cfg.rms_norm_eps, limit = cfg.swiglu_limit;
    // tensor parallelism: the local slice of every expert's intermediate dimension (tp_moe_slice); partial outputs
    tp_moe_weights tw;
    if (tp_) tw = tp_moe_slice(W, ws.floats(tp_moe_floats()));
    const bool split_experts = tp_ && !dispatcher_;
    const int64_t Il = split_experts ? tw.I : I, Isl = tp_ ? tw.Is : Is;
    const float* sh_w13 = tp_ ? tw.sh_w13 : W.sh_w13;
    const float* sh_w2 = tp_ ? tw.sh_w2 : W.sh_w2;
    const float* const* w13 = split_experts ? tw.w13.data() : W.w13.data();
    const float* const* w2 = split_experts ? tw.w2.data() : W.w2.data();

    section_timer timer(prof_, kernels_, "fwd.moe.router");
    kernels_.rmsnorm_forward(A.a2.data(), A.a2_rstd.data(), A.y2.data(), W.ffn_norm, N, d, eps);
    const float* a = A.a2.data();

    // router
    kernels_.linear_fwd(A.logits.data(), a, W.gate, N, d, E, false);
    const int32_t* hash_sel = nullptr;
    if (W.hash) {
        hash_sel_.resize(N * K);
        for (int64_t t = 0; t < N; t++)
            std::memcpy(hash_sel_.data() + t * K, W.tid2eid + (int64_t)ctx.batch->input_ids[t] * K,
                        K * sizeof(int32_t));
        hash_sel = hash_sel_.data();
    }
    kernels_.router_forward(A.sel_e.data(), A.weight.data(), A.s.data(), A.logits.data(),
                            W.hash ? nullptr : W.gate_bias, hash_sel, N, (int)E, (int)K, cfg.routed_scaling_factor);

    // routed experts, then the shared expert added on top (with a dispatcher, its first half runs while the tokens
    // travel: same arithmetic, same order of the sums)
    float* sh_h = ws.floats(N * Isl);  // swiglu of the shared expert, recomputed in backward
    auto shared_up = [&] {
        kernels_.linear_fwd(A.sh13.data(), a, sh_w13, N, d, 2 * Isl, false);
        kernels_.swiglu_forward(sh_h, A.sh13.data(), N, Isl, limit, nullptr);
    };
    timer.next("fwd.moe.experts");
    if (dispatcher_) {
        const auto [t0, Nl] = tp_token_range();  // all N without TP
        float* y = tp_ ? ws.floats(Nl * d) : A.F2.data();
        dispatcher_->forward(ctx.layer, y, A.moe, a + t0 * d, A.sel_e.data() + t0 * K, A.weight.data() + t0 * K, w13,
                             w2, Nl, d, (int)E, (int)K, Il, limit, shared_up);
        if (tp_) {
            std::memset(A.F2.data(), 0, sizeof(float) * N * d);
            std::memcpy(A.F2.data() + t0 * d, y, sizeof(float) * Nl * d);
        }
        timer.next("fwd.moe.shared");
    } else {
        kernels_.moe_experts_forward(A.F2.data(), A.moe, a, A.sel_e.data(), A.weight.data(), w13, w2, N, d, (int)E,
                                     (int)K, Il, limit);
        timer.next("fwd.moe.shared");
        shared_up();
    }
    kernels_.linear_fwd(A.F2.data(), sh_h, sh_w2, N, Isl, d, true);
    if (tp_) tp_->all_reduce_sum(A.F2.data(), N * d);  // routed + shared partial outputs of the local slices / tokens

    // balance loss (score-routed layers only) and the expert load of this step
    timer.next("fwd.moe.router");
    A.bal = 0.0;
    if (!W.hash && ctx.opts->alpha_bal != 0.0)
        A.bal = kernels_.balance_loss_forward(A.s.data(), A.sel_e.data(), ctx.batch->B, ctx.batch->S, (int)E, (int)K,
                                              ctx.opts->alpha_bal);
    std::fill(A.load.begin(), A.load.end(), 0);
    for (int64_t i = 0; i < N * K; i++) A.load[A.sel_e[i]]++;
}

// dy [N,d] assigned from dF [N,d]
void dsv4_model::moe_backward(block_acts& A, float* dy, const float* dF, const block_weights& W, const block_weights& G,
                              const layer_ctx& ctx) {
    workspace::scope ws(ws_);
    const model_config& cfg = config();
    const int64_t N = N_, d = cfg.hidden_size, E = cfg.n_routed_experts, K = cfg.num_experts_per_tok;
    const int64_t I = cfg.moe_intermediate_size, Is = (int64_t)cfg.n_shared_experts * I;
    const double limit = cfg.swiglu_limit;
    const float* a = A.a2.data();
    float* da = ws.floats(N * d);
    // tensor parallelism: local weight slices, and their gradients in a zeroed buffer added to G's slices at the end
    tp_moe_weights tw, tg;
    if (tp_) {
        tw = tp_moe_slice(W, ws.floats(tp_moe_floats()));
        tg = tp_moe_slice(block_weights{}, ws.floats(tp_moe_floats()));
    }
    const bool split_experts = tp_ && !dispatcher_;  // with EP: whole experts, split tokens (tp_token_range)
    const int64_t Il = split_experts ? tw.I : I, Isl = tp_ ? tw.Is : Is;
    const float* sh_w13 = tp_ ? tw.sh_w13 : W.sh_w13;
    const float* sh_w2 = tp_ ? tw.sh_w2 : W.sh_w2;
    float* gsh_w13 = tp_ ? tg.sh_w13 : G.sh_w13;
    float* gsh_w2 = tp_ ? tg.sh_w2 : G.sh_w2;
    const float* const* w13 = split_experts ? tw.w13.data() : W.w13.data();
    const float* const* w2 = split_experts ? tw.w2.data() : W.w2.data();
    float* const* gw13 = split_experts ? tg.w13.data() : G.w13.data();
    float* const* gw2 = split_experts ? tg.w2.data() : G.w2.data();

    // shared expert (with a dispatcher: while the routed experts' gradients travel)
    section_timer timer(prof_, kernels_, "bwd.moe.shared");
    float* dhs = ws.floats(N * Isl);
    float* dsh13 = ws.floats(N * 2 * Isl);
    float* dxr = ws.floats(N * d);
    float* dw = ws.floats(N * K);
    float* hs = ws.floats(N * Isl);  // the shared expert's swiglu, recomputed
    auto shared = [&] {
        kernels_.swiglu_forward(hs, A.sh13.data(), N, Isl, limit, nullptr);
        kernels_.linear_bwd_data(dhs, dF, sh_w2, N, Isl, d, false);
        kernels_.linear_bwd_weight(gsh_w2, dF, hs, N, Isl, d);
        kernels_.swiglu_backward(dsh13, dhs, A.sh13.data(), N, Isl, limit);
        kernels_.linear_bwd_data(da, dsh13, sh_w13, N, d, 2 * Isl, false);
        kernels_.linear_bwd_weight(gsh_w13, dsh13, a, N, d, 2 * Isl);
    };
    if (dispatcher_) {
        timer.next("bwd.moe.experts");
        const auto [t0, Nl] = tp_token_range();  // all N without TP; under TP the other rows' gradients are zero here
        if (tp_) {
            std::memset(dxr, 0, sizeof(float) * N * d);
            std::memset(dw, 0, sizeof(float) * N * K);
        }
        dispatcher_->backward(ctx.layer, dxr + t0 * d, dw + t0 * K, gw13, gw2, dF + t0 * d, A.moe, a + t0 * d,
                              A.weight.data() + t0 * K, w13, w2, Nl, d, (int)E, (int)K, Il, limit, shared);
    } else {
        shared();
        // routed experts
        timer.next("bwd.moe.experts");
        kernels_.moe_experts_backward(dxr, dw, gw13, gw2, dF, A.moe, a, A.weight.data(), w13, w2, N, d, (int)E, (int)K,
                                      Il, limit);
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < N * d; i++) da[i] += dxr[i];
    if (tp_) {
        // the local slices (or tokens) give partial input and routing-weight gradients: sum them over TP
        tp_moe_add_grads(G, tg);
        tp_->all_reduce_sum(da, N * d);
        tp_->all_reduce_sum(dw, N * K);
    }

    // router (+ balance loss gradient on the scores)
    timer.next("bwd.moe.router");
    float* ds = nullptr;
    if (!W.hash && ctx.opts->alpha_bal != 0.0) {
        ds = ws.floats(N * E);
        std::memset(ds, 0, sizeof(float) * N * E);
        kernels_.balance_loss_backward(ds, A.s.data(), A.sel_e.data(), ctx.batch->B, ctx.batch->S, (int)E, (int)K,
                                       ctx.opts->alpha_bal * ctx.opts->loss_scale);
    }
    float* dlog = ws.floats(N * E);
    kernels_.router_backward(dlog, dw, ds, A.logits.data(), A.s.data(), A.sel_e.data(), A.weight.data(), N, (int)E,
                             (int)K, cfg.routed_scaling_factor);
    kernels_.linear_bwd_data(da, dlog, W.gate, N, d, E, true);
    kernels_.linear_bwd_weight(G.gate, dlog, a, N, d, E);

    // ffn_norm
    kernels_.rmsnorm_backward(dy, G.ffn_norm, da, A.y2.data(), W.ffn_norm, A.a2_rstd.data(), N, d);
}

}  // namespace trex
