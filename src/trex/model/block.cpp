// One DeepSeek-V4 block (docs/model.md §3): mHC around attention, mHC around the MoE.
#include "trex/model/model.hpp"

namespace trex {

mhc_dims mhc_dims_of(const model_config& cfg) {
    mhc_dims d;
    d.n = cfg.hc_mult;
    d.d = cfg.hidden_size;
    d.iters = cfg.hc_sinkhorn_iters;
    d.hc_eps = cfg.hc_eps;
    d.norm_eps = cfg.rms_norm_eps;
    return d;
}

// h_in, h_out [N,n,d]
void dsv4_model::block_forward(block_acts& A, float* h_out, const float* h_in, const block_weights& W,
                               const layer_ctx& ctx) {
    const model_config& cfg = config();
    const mhc_dims md = mhc_dims_of(cfg);
    const int64_t N = N_;
    section_timer timer(prof_, kernels_, "fwd.mhc");
    kernels_.hc_pre_forward(A.y1.data(), A.post1.data(), A.comb1.data(), A.mix1.data(), A.rho1.data(), h_in,
                            W.hc_attn_fn, W.hc_attn_base, W.hc_attn_scale, N, md);
    timer.next(nullptr);
    attention_forward(A, W, ctx);
    timer.next("fwd.mhc");
    kernels_.hc_post_forward(A.h_mid.data(), A.F1.data(), h_in, A.post1.data(), A.comb1.data(), N, md);

    kernels_.hc_pre_forward(A.y2.data(), A.post2.data(), A.comb2.data(), A.mix2.data(), A.rho2.data(), A.h_mid.data(),
                            W.hc_ffn_fn, W.hc_ffn_base, W.hc_ffn_scale, N, md);
    timer.next(nullptr);
    moe_forward(A, W, ctx);
    timer.next("fwd.mhc");
    kernels_.hc_post_forward(h_out, A.F2.data(), A.h_mid.data(), A.post2.data(), A.comb2.data(), N, md);
}

// dh_in assigned from dh_out; parameter gradients into G.
void dsv4_model::block_backward(block_acts& A, float* dh_in, const float* dh_out, const float* h_in,
                                const block_weights& W, const block_weights& G, const layer_ctx& ctx) {
    workspace::scope ws(ws_);
    const model_config& cfg = config();
    const mhc_dims md = mhc_dims_of(cfg);
    const int64_t N = N_, d = cfg.hidden_size, n = cfg.hc_mult;
    float* dF = ws.floats(N * d);
    float* dy = ws.floats(N * d);
    float* dpost = ws.floats(N * n);
    float* dcomb = ws.floats(N * n * n);
    float* dh_mid = ws.floats(N * n * d);

    // ffn unit (hc_post's residual gradient, comb2ᵀ·dh_out, is added inside hc_pre_backward: one pass less)
    section_timer timer(prof_, kernels_, "bwd.mhc");
    kernels_.hc_post_backward(dF, nullptr, dpost, dcomb, dh_out, A.F2.data(), A.h_mid.data(), A.post2.data(),
                              A.comb2.data(), N, md);
    timer.next(nullptr);
    moe_backward(A, dy, dF, W, G, ctx);
    timer.next("bwd.mhc");
    kernels_.hc_pre_backward(dh_mid, G.hc_ffn_fn, G.hc_ffn_base, G.hc_ffn_scale, dy, dpost, dcomb, A.h_mid.data(),
                             W.hc_ffn_fn, W.hc_ffn_base, W.hc_ffn_scale, A.mix2.data(), A.rho2.data(), N, md, dh_out);
    // attention unit
    kernels_.hc_post_backward(dF, nullptr, dpost, dcomb, dh_mid, A.F1.data(), h_in, A.post1.data(), A.comb1.data(), N,
                              md);
    timer.next(nullptr);
    attention_backward(A, dy, dF, W, G, ctx);
    timer.next("bwd.mhc");
    kernels_.hc_pre_backward(dh_in, G.hc_attn_fn, G.hc_attn_base, G.hc_attn_scale, dy, dpost, dcomb, h_in, W.hc_attn_fn,
                             W.hc_attn_base, W.hc_attn_scale, A.mix1.data(), A.rho1.data(), N, md, dh_mid);
}

}  // namespace trex
