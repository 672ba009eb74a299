#include "trex/model/layers/moe.hpp"

#include <algorithm>
#include <cstring>

namespace trex {

namespace {

// The expert weights this rank computes with: the whole tensors, or under TP the local slices the model was built
// with (rows of w1/w3, columns of w2 of the shared expert, and of the routed experts without expert parallelism:
// with it they stay whole and the TP ranks dispatch disjoint tokens instead).
struct expert_view {
    int64_t Il = 0, Isl = 0;  // routed and shared intermediate sizes computed here
    const float *sh_w13 = nullptr, *sh_w2 = nullptr;
    const float* const* w13 = nullptr;
    const float* const* w2 = nullptr;
};

expert_view view_of(const moe_weights& W, const layer_env& env) {
    const int64_t I = env.cfg.moe_intermediate_size, Is = (int64_t)env.cfg.n_shared_experts * I;
    expert_view v;
    v.Il = env.dispatcher ? I : tp_local(env.tp, I).count;
    v.Isl = tp_local(env.tp, Is).count;
    v.sh_w13 = W.sh_w13;
    v.sh_w2 = W.sh_w2;
    v.w13 = W.w13.data();
    v.w2 = W.w2.data();
    return v;
}

}  // namespace

std::pair<int64_t, int64_t> moe_layer::token_range(int64_t N, const tensor_parallel* tp,
                                                   const expert_dispatcher* dispatcher) {
    if (!tp || !dispatcher) return {0, N};
    const int64_t r = tp->rank(), T = tp->size();
    return {N * r / T, N * (r + 1) / T - N * r / T};
}

void moe_layer::forward(block_acts& A, const moe_weights& W, const layer_env& env) const {
    workspace::scope ws(env.ws);
    const model_config& cfg = env.cfg;
    const kernel_table& k = env.k;
    const int64_t N = env.N(), d = cfg.hidden_size, E = cfg.n_routed_experts, K = cfg.num_experts_per_tok;
    const double limit = cfg.swiglu_limit;
    // tensor parallelism: the local slice of every expert's intermediate dimension; partial outputs
    const expert_view x = view_of(W, env);

    section_timer timer(env.prof, k, "fwd.moe.router");
    route(A, W, env);
    const float* a = A.a2.data();

    // routed experts, then the shared expert added on top (with a dispatcher, its first half runs while the tokens
    // travel: same arithmetic, same order of the sums)
    float* sh_h = ws.floats(N * x.Isl);  // swiglu of the shared expert, recomputed in backward
    auto shared_up = [&] {
        k.linear_fwd(A.sh13.data(), a, x.sh_w13, N, d, 2 * x.Isl, false);
        k.swiglu_forward(sh_h, A.sh13.data(), N, x.Isl, limit, nullptr);
    };
    timer.next("fwd.moe.experts");
    if (env.dispatcher) {
        const auto [t0, Nl] = token_range(N, env.tp, env.dispatcher);  // all N without TP
        float* y = env.tp ? ws.floats(Nl * d) : A.F2.data();
        env.dispatcher->forward(layer_, y, A.moe, a + t0 * d, A.sel_e.data() + t0 * K, A.weight.data() + t0 * K, x.w13,
                                x.w2, Nl, d, (int)E, (int)K, x.Il, limit, shared_up);
        if (env.tp) {
            k.fill_zero(A.F2.data(), N * d);
            k.copy(A.F2.data() + t0 * d, y, Nl * d);
        }
        timer.next("fwd.moe.shared");
    } else {
        k.moe_experts_forward(A.F2.data(), A.moe, a, A.sel_e.data(), A.weight.data(), x.w13, x.w2, N, d, (int)E, (int)K,
                              x.Il, limit);
        timer.next("fwd.moe.shared");
        shared_up();
    }
    k.linear_fwd(A.F2.data(), sh_h, x.sh_w2, N, x.Isl, d, true);
    if (env.tp) env.tp->all_reduce_sum(A.F2.data(), N * d);  // routed + shared partial outputs of the slices/tokens
    timer.next("fwd.moe.router");
    balance_and_load(A, env);
}

// a2 = ffn_norm(y2); router logits, the selection (score + bias, or the tid2eid rows of the tokens) and weights
void moe_layer::route(block_acts& A, const moe_weights& W, const layer_env& env) const {
    workspace::scope ws(env.ws);
    const model_config& cfg = env.cfg;
    const kernel_table& k = env.k;
    const int64_t N = env.N(), d = cfg.hidden_size, E = cfg.n_routed_experts, K = cfg.num_experts_per_tok;
    k.rmsnorm_forward(A.a2.data(), A.a2_rstd.data(), A.y2.data(), W.norm, N, d, cfg.rms_norm_eps);
    k.linear_fwd(A.logits.data(), A.a2.data(), W.gate, N, d, E, false);
    int32_t* hash_sel = nullptr;
    if (hash_) {
        hash_sel = ws.ints(N * K);
        k.hash_select(hash_sel, W.tid2eid, env.batch.input_ids, N, (int)K);
    }
    k.router_forward(A.sel_e.data(), A.weight.data(), A.s.data(), A.logits.data(), hash_ ? nullptr : W.gate_bias,
                     hash_sel, N, (int)E, (int)K, cfg.routed_scaling_factor);
}

// The balance loss (score-routed layers only) and the expert load of this step
void moe_layer::balance_and_load(block_acts& A, const layer_env& env) const {
    const int64_t E = env.cfg.n_routed_experts, K = env.cfg.num_experts_per_tok, N = env.N();
    A.bal = 0.0;
    if (!hash_ && env.opts.alpha_bal != 0.0)
        A.bal = env.k.balance_loss_forward(A.s.data(), A.sel_e.data(), env.batch.B, env.batch.S, (int)E, (int)K,
                                           env.opts.alpha_bal);
    env.k.expert_load(A.load.data(), A.sel_e.data(), N * K, (int)E);
}

void moe_layer::backward(block_acts& A, float* dy, const float* dF, const moe_weights& W, const moe_weights& G,
                         const layer_env& env) const {
    workspace::scope ws(env.ws);
    const model_config& cfg = env.cfg;
    const kernel_table& k = env.k;
    const int64_t N = env.N(), d = cfg.hidden_size, E = cfg.n_routed_experts, K = cfg.num_experts_per_tok;
    const double limit = cfg.swiglu_limit;
    const float* a = A.a2.data();
    float* da = ws.floats(N * d);
    // tensor parallelism: the local slices (with EP: whole experts, split tokens, token_range) and their gradients
    const expert_view x = view_of(W, env);
    float* gsh_w13 = G.sh_w13;
    float* gsh_w2 = G.sh_w2;
    float* const* gw13 = G.w13.data();
    float* const* gw2 = G.w2.data();

    // shared expert (with a dispatcher: while the routed experts' gradients travel)
    section_timer timer(env.prof, k, "bwd.moe.shared");
    float* dhs = ws.floats(N * x.Isl);
    float* dsh13 = ws.floats(N * 2 * x.Isl);
    float* dxr = ws.floats(N * d);
    float* dw = ws.floats(N * K);
    float* hs = ws.floats(N * x.Isl);  // the shared expert's swiglu, recomputed
    auto shared = [&] {
        k.swiglu_forward(hs, A.sh13.data(), N, x.Isl, limit, nullptr);
        k.linear_bwd_data(dhs, dF, x.sh_w2, N, x.Isl, d, false);
        k.linear_bwd_weight(gsh_w2, dF, hs, N, x.Isl, d);
        k.swiglu_backward(dsh13, dhs, A.sh13.data(), N, x.Isl, limit);
        k.linear_bwd_data(da, dsh13, x.sh_w13, N, d, 2 * x.Isl, false);
        k.linear_bwd_weight(gsh_w13, dsh13, a, N, d, 2 * x.Isl);
    };
    if (env.dispatcher) {
        timer.next("bwd.moe.experts");
        const auto [t0, Nl] = token_range(
            N, env.tp, env.dispatcher);  // all N without TP; under TP the other rows' gradients are zero here
        if (env.tp) {
            k.fill_zero(dxr, N * d);
            k.fill_zero(dw, N * K);
        }
        env.dispatcher->backward(layer_, dxr + t0 * d, dw + t0 * K, gw13, gw2, dF + t0 * d, A.moe, a + t0 * d,
                                 A.weight.data() + t0 * K, x.w13, x.w2, Nl, d, (int)E, (int)K, x.Il, limit, shared);
    } else {
        shared();
        timer.next("bwd.moe.experts");
        k.moe_experts_backward(dxr, dw, gw13, gw2, dF, A.moe, a, A.weight.data(), x.w13, x.w2, N, d, (int)E, (int)K,
                               x.Il, limit);
    }
    k.add(da, dxr, N * d);
    if (env.tp) {
        // the local slices (or tokens) give partial input and routing-weight gradients: sum them over TP
        env.tp->all_reduce_sum(da, N * d);
        env.tp->all_reduce_sum(dw, N * K);
    }
    timer.next("bwd.moe.router");
    router_backward(da, A, dw, W, G, env);
    // ffn_norm
    k.rmsnorm_backward(dy, G.norm, da, A.y2.data(), W.norm, A.a2_rstd.data(), N, d);
}

// The router from the routing weights' gradient dw [N,K] (+ the balance loss's gradient on the scores): gate's
// gradient, da [N,d] +=.
void moe_layer::router_backward(float* da, const block_acts& A, const float* dw, const moe_weights& W,
                                const moe_weights& G, const layer_env& env) const {
    workspace::scope ws(env.ws);
    const model_config& cfg = env.cfg;
    const kernel_table& k = env.k;
    const int64_t N = env.N(), d = cfg.hidden_size, E = cfg.n_routed_experts, K = cfg.num_experts_per_tok;
    float* ds = nullptr;
    if (!hash_ && env.opts.alpha_bal != 0.0) {
        ds = ws.floats(N * E);
        k.fill_zero(ds, N * E);
        k.balance_loss_backward(ds, A.s.data(), A.sel_e.data(), env.batch.B, env.batch.S, (int)E, (int)K,
                                env.opts.alpha_bal * env.opts.loss_scale);
    }
    float* dlog = ws.floats(N * E);
    k.router_backward(dlog, dw, ds, A.logits.data(), A.s.data(), A.sel_e.data(), A.weight.data(), N, (int)E, (int)K,
                      cfg.routed_scaling_factor);
    k.linear_bwd_data(da, dlog, W.gate, N, d, E, true);
    k.linear_bwd_weight(G.gate, dlog, A.a2.data(), N, d, E);
}

}  // namespace trex
