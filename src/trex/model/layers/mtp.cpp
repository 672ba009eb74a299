#include "trex/model/layers/mtp.hpp"

#include "trex/model/layers/vocab.hpp"

namespace trex {

double mtp_block::forward(block_acts& A, head_acts& K, std::span<float> z, float* h_mtp, const float* h_last,
                          int64_t* n_valid, double scale, std::vector<float>* logits_out, head_grad& hg,
                          const mtp_weights& W, const layer_env& env) const {
    {
        section_timer timer(env.prof, env.k, "fwd.mtp_in");
        input_forward(K, z, h_last, W.in, env);
    }
    block_.forward(A, h_mtp, z.data(), W.block, env);  // blocks time their own sections
    return head_.forward(mtp_head_saved(K), n_valid, h_mtp, env.batch.mtp_labels, scale, logits_out, hg, W.head, env);
}

void mtp_block::decode(block_acts& A, head_acts& K, std::span<float> z, float* h_mtp, const float* h_last,
                       std::span<attention_cache* const> caches, const mtp_weights& W, const layer_env& env) const {
    input_forward(K, z, h_last, W.in, env);
    block_.decode(A, caches, h_mtp, z.data(), W.block, env);
}

void mtp_block::head(head_acts& K, const float* h, std::vector<float>& logits, const mtp_weights& W,
                     const layer_env& env) const {
    head_grad none;
    int64_t n_valid = 0;
    head_.forward(mtp_head_saved(K), &n_valid, h, nullptr, 0.0, &logits, none, W.head, env);
}

// K.en, K.hn and their rstd; z [N,n,d] = h_proj(hn) per stream + e_proj(en) broadcast
void mtp_block::input_forward(head_acts& K, std::span<float> z, const float* h_last, const mtp_input_weights& W,
                              const layer_env& env) const {
    workspace::scope ws(env.ws);
    const kernel_table& k = env.k;
    const int64_t N = env.N(), d = env.cfg.hidden_size, n = env.cfg.hc_mult;
    const double eps = env.cfg.rms_norm_eps;
    float* e2 = ws.floats(N * d);
    vocab_embedding_forward(e2, env.batch.mtp_input_ids, W.embed, env);
    k.rmsnorm_forward(K.en.data(), K.erstd.data(), e2, W.enorm, N, d, eps);
    k.rmsnorm_forward(K.hn.data(), K.hrstd.data(), h_last, W.hnorm, N * n, d, eps);
    k.linear_fwd(z.data(), K.hn.data(), W.h_proj, N * n, d, d, false);
    float* ep = ws.floats(N * d);
    k.linear_fwd(ep, K.en.data(), W.e_proj, N, d, d, false);
    k.broadcast_streams(z.data(), ep, N, n, d, true);
}

void mtp_block::backward(float* dh, float* de_mtp, block_acts& A, head_acts& K, std::span<const float> z, float* h_mtp,
                         const float* h_last, const mtp_weights& W, const mtp_weights& G, const layer_env& env) const {
    workspace::scope ws(env.ws);
    const int64_t N = env.N(), nd = (int64_t)env.cfg.hc_mult * env.cfg.hidden_size;
    section_timer timer(env.prof, env.k, "bwd.head");
    float* dz_out = ws.floats(N * nd);
    head_.backward(dz_out, h_mtp, mtp_head_saved(K), W.head, G.head, env);
    float* dz = ws.floats(N * nd);
    timer.next("bwd.recompute");
    if (env.opts.recompute) block_.forward(A, h_mtp, z.data(), W.block, env);
    timer.next(nullptr);
    block_.backward(A, dz, dz_out, z.data(), W.block, G.block, env);
    timer.next("bwd.mtp_in");
    input_backward(dh, de_mtp, K, dz, h_last, W.in, G.in, env);
}

// From dz [N,n,d]: h_proj's and e_proj's gradients, the norms', de_mtp [N,d] assigned and dh [N,n,d] += the hnorm
// path's gradient.
void mtp_block::input_backward(float* dh, float* de_mtp, const head_acts& K, const float* dz, const float* h_last,
                               const mtp_input_weights& W, const mtp_input_weights& G, const layer_env& env) const {
    workspace::scope ws(env.ws);
    const kernel_table& k = env.k;
    const int64_t N = env.N(), d = env.cfg.hidden_size, n = env.cfg.hc_mult, nd = n * d;
    float* dhn = ws.floats(N * nd);
    k.linear_bwd_data(dhn, dz, W.h_proj, N * n, d, d, false);
    k.linear_bwd_weight(G.h_proj, dz, K.hn.data(), N * n, d, d);
    float* dep = ws.floats(N * d);
    k.sum_streams(dep, dz, N, n, d);
    float* den = ws.floats(N * d);
    k.linear_bwd_data(den, dep, W.e_proj, N, d, d, false);
    k.linear_bwd_weight(G.e_proj, dep, K.en.data(), N, d, d);
    float* e2 = ws.floats(N * d);
    vocab_embedding_forward(e2, env.batch.mtp_input_ids, W.embed, env);
    k.rmsnorm_backward(de_mtp, G.enorm, den, e2, W.enorm, K.erstd.data(), N, d);
    float* dh_extra = ws.floats(N * nd);
    k.rmsnorm_backward(dh_extra, G.hnorm, dhn, h_last, W.hnorm, K.hrstd.data(), N * n, d);
    k.add(dh, dh_extra, N * nd);
}

}  // namespace trex
