#include "trex/model/layers/head.hpp"

#include <algorithm>
#include <cstring>

#include "trex/model/layers/vocab.hpp"

namespace trex {

head_saved main_head_saved(head_acts& K) {
    return {K.x, K.xn, K.xrstd, K.hmix, K.hrho, K.dxn};
}

head_saved mtp_head_saved(head_acts& K) {
    return {K.x2, K.xn2, K.x2rstd, K.h2mix, K.h2rho, K.dxn2};
}

double lm_head::forward(const head_saved& S, int64_t* n_valid, const float* h, const int32_t* labels, double scale,
                        std::vector<float>* logits_out, head_grad& hg, const head_weights& W,
                        const layer_env& env) const {
    const int64_t N = env.N(), d = env.cfg.hidden_size;
    section_timer timer(env.prof, env.k, "fwd.head");
    env.k.hc_head_forward(S.x.data(), S.mix.data(), S.rho.data(), h, W.hc.fn, W.hc.base, W.hc.scale, N, md_);
    env.k.rmsnorm_forward(S.xn.data(), S.xrstd.data(), S.x.data(), W.norm, N, d, env.cfg.rms_norm_eps);
    timer.next(nullptr);  // vocab times its own sections
    return vocab(S.dxn.data(), n_valid, S.xn.data(), labels, scale, logits_out, hg, W.head, env);
}

double lm_head::vocab(float* dxn, int64_t* n_valid, const float* xn, const int32_t* labels, double scale,
                      std::vector<float>* logits_out, head_grad& hg, const float* head, const layer_env& env) const {
    workspace::scope ws(env.ws);
    const kernel_table& k = env.k;
    const int64_t N = env.N(), d = env.cfg.hidden_size, V = env.cfg.vocab_size;
    const int64_t Vr = vocab_rows(env).count;  // this rank's vocabulary columns (V without TP)
    const bool backward = env.opts.backward;
    const int64_t chunk = env.opts.head_chunk > 0
                              ? env.opts.head_chunk
                              : std::max<int64_t>(128, (int64_t(16) << 20) / (int64_t)(sizeof(float) * V));
    if (logits_out) logits_out->resize((size_t)N * V);
    float* lg = ws.floats(std::min(N, chunk) * Vr);
    double sum = 0.0;
    *n_valid = 0;
    for (int64_t t0 = 0; t0 < N; t0 += chunk) {
        const int64_t ct = std::min(chunk, N - t0);
        section_timer timer(env.prof, k, "fwd.head");
        k.linear_fwd(lg, xn + t0 * d, head, ct, d, Vr, false);
        if (logits_out) vocab_gather_logits(logits_out->data() + t0 * V, lg, ct, env);
        if (!labels) {  // no loss: a zero gradient
            if (backward) k.fill_zero(dxn + t0 * d, ct * d);
            continue;
        }
        timer.next("fwd.cross_entropy");
        int64_t nv = 0;
        sum += vocab_cross_entropy(lg, &nv, labels + t0, ct, scale, env);
        *n_valid += nv;
        if (!backward) continue;
        timer.next("bwd.head");
        k.linear_bwd_data(dxn + t0 * d, lg, head, ct, d, Vr, false);
        if (env.tp) env.tp->all_reduce_sum(dxn + t0 * d, ct * d);  // each rank's columns' share
        // head.weightᵀ's gradient [d,Vr] (+)= xnᵀ·dlogits
        k.gemm(true, false, d, Vr, ct, 1.0f, xn + t0 * d, d, lg, Vr, hg.used ? 1.0f : 0.0f, hg.gT, Vr);
        hg.used = true;
    }
    return sum;
}

void lm_head::backward(float* dh, const float* h, const head_saved& S, const head_weights& W, const head_weights& G,
                       const layer_env& env) const {
    workspace::scope ws(env.ws);
    const int64_t N = env.N(), d = env.cfg.hidden_size;
    float* dx = ws.floats(N * d);
    env.k.rmsnorm_backward(dx, G.norm, S.dxn.data(), S.x.data(), W.norm, S.xrstd.data(), N, d);
    env.k.hc_head_backward(dh, G.hc.fn, G.hc.base, G.hc.scale, dx, h, W.hc.fn, W.hc.base, W.hc.scale, S.mix.data(),
                           S.rho.data(), N, md_);
}

void lm_head::add_grad(float* g_head, const head_grad& hg, const layer_env& env) {
    if (!hg.used) return;
    section_timer timer(env.prof, env.k, "bwd.head");
    env.k.add_transposed(g_head, hg.gT, vocab_rows(env).count, env.cfg.hidden_size);
}

}  // namespace trex
