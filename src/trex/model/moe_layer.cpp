// The MoE sub-layer (docs/model.md §3.5): ffn_norm, router (hash or score), routed experts, shared expert,
// sequence-wise balance loss.
#include <cstring>

#include "trex/kernels/cpu/gemm.hpp"
#include "trex/model/model.hpp"

namespace trex {

namespace {

// tmp slots of this file (block.cpp uses 0..4, attention_layer.cpp 10..30)
enum moe_tmp : int { T_DA2 = 40, T_DSH, T_DHS, T_DSH13, T_DXR, T_DW, T_DS, T_DLOG };

}  // namespace

void dsv4_model::moe_forward(block_acts& A, const block_weights& W, const layer_ctx& ctx) {
    const model_config& cfg = config();
    const int64_t N = N_, d = cfg.hidden_size, E = cfg.n_routed_experts, K = cfg.num_experts_per_tok;
    const int64_t I = cfg.moe_intermediate_size, Is = (int64_t)cfg.n_shared_experts * I;
    const double eps = cfg.rms_norm_eps, limit = cfg.swiglu_limit;

    section_timer timer(prof_, "fwd.moe.router");
    A.a2.resize(N * d);
    A.a2_rstd.resize(N);
    cpu::rmsnorm_forward(A.a2.data(), A.a2_rstd.data(), A.y2.data(), W.ffn_norm, N, d, eps);
    const float* a = A.a2.data();

    // router
    A.logits.resize(N * E);
    A.s.resize(N * E);
    A.weight.resize(N * K);
    A.sel_e.resize(N * K);
    cpu::linear_fwd(A.logits.data(), a, W.gate, N, d, E);
    const int32_t* hash_sel = nullptr;
    if (W.hash) {
        hash_sel_.resize(N * K);
        for (int64_t t = 0; t < N; t++)
            std::memcpy(hash_sel_.data() + t * K, W.tid2eid + (int64_t)ctx.batch->input_ids[t] * K,
                        K * sizeof(int32_t));
        hash_sel = hash_sel_.data();
    }
    cpu::router_forward(A.sel_e.data(), A.weight.data(), A.s.data(), A.logits.data(), W.hash ? nullptr : W.gate_bias,
                        hash_sel, N, (int)E, (int)K, cfg.routed_scaling_factor);

    // routed experts, then the shared expert added on top (with a dispatcher, its first half runs while the tokens
    // travel: same arithmetic, same order of the sums)
    A.sh13.resize(N * 2 * Is);
    A.sh_h.resize(N * Is);
    auto shared_up = [&] {
        cpu::linear_fwd(A.sh13.data(), a, W.sh_w13, N, d, 2 * Is);
        cpu::swiglu_forward(A.sh_h.data(), A.sh13.data(), N, Is, limit);
    };
    timer.next("fwd.moe.experts");
    if (dispatcher_) {
        dispatcher_->forward(ctx.layer, A.F2.data(), A.moe, a, A.sel_e.data(), A.weight.data(), W.w13.data(),
                             W.w2.data(), N, d, (int)E, (int)K, I, limit, shared_up);
        timer.next("fwd.moe.shared");
    } else {
        cpu::moe_experts_forward(A.F2.data(), A.moe, a, A.sel_e.data(), A.weight.data(), W.w13.data(), W.w2.data(), N,
                                 d, (int)E, (int)K, I, limit);
        timer.next("fwd.moe.shared");
        shared_up();
    }
    cpu::linear_fwd(A.F2.data(), A.sh_h.data(), W.sh_w2, N, Is, d, true);

    // balance loss (score-routed layers only) and the expert load of this step
    timer.next("fwd.moe.router");
    A.bal = 0.0;
    if (!W.hash && ctx.opts->alpha_bal != 0.0)
        A.bal = cpu::balance_loss_forward(A.s.data(), A.sel_e.data(), ctx.batch->B, ctx.batch->S, (int)E, (int)K,
                                          ctx.opts->alpha_bal);
    A.load.assign(E, 0);
    for (int64_t i = 0; i < N * K; i++) A.load[A.sel_e[i]]++;
}

// dy [N,d] assigned from dF [N,d]
void dsv4_model::moe_backward(block_acts& A, float* dy, const float* dF, const block_weights& W, const block_weights& G,
                              const layer_ctx& ctx) {
    const model_config& cfg = config();
    const int64_t N = N_, d = cfg.hidden_size, E = cfg.n_routed_experts, K = cfg.num_experts_per_tok;
    const int64_t I = cfg.moe_intermediate_size, Is = (int64_t)cfg.n_shared_experts * I;
    const double limit = cfg.swiglu_limit;
    const float* a = A.a2.data();
    float* da = tmp(T_DA2, N * d);

    // shared expert (with a dispatcher: while the routed experts' gradients travel)
    section_timer timer(prof_, "bwd.moe.shared");
    float* dhs = tmp(T_DHS, N * Is);
    float* dsh13 = tmp(T_DSH13, N * 2 * Is);
    float* dxr = tmp(T_DXR, N * d);
    float* dw = tmp(T_DW, N * K);
    auto shared = [&] {
        const float* hs = A.sh_h.data();
        cpu::linear_bwd_data(dhs, dF, W.sh_w2, N, Is, d);
        cpu::linear_bwd_weight(G.sh_w2, dF, hs, N, Is, d);
        cpu::swiglu_backward(dsh13, dhs, A.sh13.data(), N, Is, limit);
        cpu::linear_bwd_data(da, dsh13, W.sh_w13, N, d, 2 * Is);
        cpu::linear_bwd_weight(G.sh_w13, dsh13, a, N, d, 2 * Is);
    };
    if (dispatcher_) {
        timer.next("bwd.moe.experts");
        dispatcher_->backward(ctx.layer, dxr, dw, G.w13.data(), G.w2.data(), dF, A.moe, a, A.weight.data(),
                              W.w13.data(), W.w2.data(), N, d, (int)E, (int)K, I, limit, shared);
    } else {
        shared();
        // routed experts
        timer.next("bwd.moe.experts");
        cpu::moe_experts_backward(dxr, dw, G.w13.data(), G.w2.data(), dF, A.moe, a, A.weight.data(), W.w13.data(),
                                  W.w2.data(), N, d, (int)E, (int)K, I, limit);
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < N * d; i++) da[i] += dxr[i];

    // router (+ balance loss gradient on the scores)
    timer.next("bwd.moe.router");
    float* ds = nullptr;
    if (!W.hash && ctx.opts->alpha_bal != 0.0) {
        ds = tmp(T_DS, N * E);
        std::memset(ds, 0, sizeof(float) * N * E);
        cpu::balance_loss_backward(ds, A.s.data(), A.sel_e.data(), ctx.batch->B, ctx.batch->S, (int)E, (int)K,
                                   ctx.opts->alpha_bal * ctx.opts->loss_scale);
    }
    float* dlog = tmp(T_DLOG, N * E);
    cpu::router_backward(dlog, dw, ds, A.logits.data(), A.s.data(), A.sel_e.data(), A.weight.data(), N, (int)E, (int)K,
                         cfg.routed_scaling_factor);
    cpu::linear_bwd_data(da, dlog, W.gate, N, d, E, true);
    cpu::linear_bwd_weight(G.gate, dlog, a, N, d, E);

    // ffn_norm
    cpu::rmsnorm_backward(dy, G.ffn_norm, da, A.y2.data(), W.ffn_norm, A.a2_rstd.data(), N, d);
}

}  // namespace trex
