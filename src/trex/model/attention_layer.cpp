// The attention sub-layer (docs/model.md §3.4): projections, KV compressor, lightning indexer (CSA), sparse
// attention with sink over window + compressed keys, inverse RoPE and the grouped output projection.
#include <cmath>
#include <cstring>

#include "trex/base/error.hpp"
#include "trex/model/model.hpp"

namespace trex {

namespace {

// Unweighted RMS backward from the normalised output: dx = rstd·(dy − ŷ·mean(dy·ŷ)). yhat, dy, dx [R, D].
void rms_unweighted_backward_from_output(float* dx, const float* dy, const float* yhat, const float* rstd, int64_t R,
                                         int64_t D) {
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < R; r++) {
        const float* g = dy + r * D;
        const float* y = yhat + r * D;
        float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
        for (int64_t j = 0; j < D; j++) dot += g[j] * y[j];
        const float m = dot / (float)D, s = rstd[r];
        float* o = dx + r * D;
#pragma omp simd
        for (int64_t j = 0; j < D; j++) o[j] = s * (g[j] - y[j] * m);
    }
}

}  // namespace

// Key lists: for query t the window keys (same document, positions p−n_win < pos ≤ p, ascending), then the
// compressed entries it attends to (HCA: all visible; CSA: the indexer's selection), as rows of kv_all.
void dsv4_model::build_keys(block_acts& A, const layer_ctx& ctx) {
    const model_config& cfg = config();
    const int64_t N = N_, win = cfg.sliding_window;
    const int m = ctx.ratio;
    const compressed_layout* cl = m > 0 ? &geo_.comp.at(m) : nullptr;
    A.key_offset[0] = 0;
    for (int64_t t = 0; t < N; t++) {
        const int64_t p = geo_.pos[t];
        const int64_t nw = std::min<int64_t>(p + 1, win);
        int64_t nc = 0;
        if (m == 4)
            nc = A.nsel[t];
        else if (m > 0)
            nc = (p + 1) / m;
        A.n_window[t] = (int32_t)nw;
        A.key_offset[t + 1] = A.key_offset[t] + nw + nc;
    }
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++) {
        int32_t* out = A.key_idx.data() + A.key_offset[t];
        const int64_t nw = A.n_window[t];
        for (int64_t j = 0; j < nw; j++) out[j] = (int32_t)(t - nw + 1 + j);
        if (m == 0) continue;
        const int64_t base = N + cl->entry_offset[geo_.doc_of[t]];
        const int64_t nc = A.key_offset[t + 1] - A.key_offset[t] - nw;
        for (int64_t j = 0; j < nc; j++) out[nw + j] = (int32_t)(base + (m == 4 ? A.sel[t * A.kw + j] : j));
    }
}

void dsv4_model::attention_forward(block_acts& A, const block_weights& W, const layer_ctx& ctx) {
    workspace::scope ws(ws_);
    const model_config& cfg = config();
    const int64_t N = N_, d = cfg.hidden_size, H = cfg.num_attention_heads, c = cfg.head_dim;
    const int64_t dc = cfg.q_lora_rank, g = cfg.o_groups, dg = cfg.o_lora_rank;
    const int m = ctx.ratio;
    const double eps = cfg.rms_norm_eps;
    const rope_table_t<float> rope = geo_.rope_for_ratio(m);
    const int64_t Nc = m > 0 ? geo_.comp.at(m).n_entries : 0;
    // tensor parallelism: this rank's heads [h0, h0 + Hl) and output groups [g0, g0 + gl) (all without TP)
    const tp_slice hs = tp_local(tp_, H), gs = tp_local(tp_, g);
    const int64_t h0 = hs.first, Hl = hs.count, g0 = gs.first, gl = gs.count, cg = H * c / g;

    // a = attn_norm(y)
    section_timer timer(prof_, kernels_, "fwd.attn.proj");
    kernels_.rmsnorm_forward(A.a1.data(), A.a1_rstd.data(), A.y1.data(), W.attn_norm, N, d, eps);
    const float* a = A.a1.data();
    // queries: qr = q_norm(wq_a a); q = rope(rms_heads(wq_b qr))
    kernels_.linear_fwd(A.qa.data(), a, W.wq_a, N, d, dc, false);
    kernels_.rmsnorm_forward(A.qr.data(), A.qa_rstd.data(), A.qa.data(), W.q_norm, N, dc, eps);
    kernels_.linear_fwd(A.q.data(), A.qr.data(), W.wq_b + h0 * c * dc, N, dc, Hl * c, false);  // column-parallel
    kernels_.rmsnorm_forward(A.q.data(), A.q_rstd.data(), A.q.data(), nullptr, N * Hl, c, eps);
    kernels_.rope_forward(A.q.data(), geo_.pos.data(), rope, N, Hl, c, false);
    // window kv = rope(kv_norm(wkv a)) in rows [0, N) of kv_all
    kernels_.linear_fwd(A.kv_pre.data(), a, W.wkv, N, d, c, false);
    kernels_.rmsnorm_forward(A.kv_all.data(), A.kv_rstd.data(), A.kv_pre.data(), W.kv_norm, N, c, eps);
    kernels_.rope_forward(A.kv_all.data(), geo_.pos.data(), rope, N, 1, c, false);
    // compressed kv in rows [N, N + Nc)
    timer.next("fwd.attn.compress");
    if (m > 0) {
        const compressed_layout& cl = geo_.comp.at(m);
        const int64_t coff = m == 4 ? 2 : 1;
        kernels_.linear_fwd(A.ckv.data(), a, W.c_wkv, N, d, coff * c, false);
        kernels_.linear_fwd(A.cg.data(), a, W.c_wgate, N, d, coff * c, false);
        kernels_.compressor_forward(A.cpool.data(), A.ckv.data(), A.cg.data(), W.c_ape, geo_.docs.data(),
                                    cl.entry_offset.data(), (int64_t)geo_.docs.size(), m, c, m == 4);
        float* kvc = A.kv_all.data() + N * c;
        kernels_.rmsnorm_forward(kvc, A.cpool_rstd.data(), A.cpool.data(), W.c_norm, Nc, c, eps);
        kernels_.rope_forward(kvc, cl.entry_pos.data(), rope, Nc, 1, c, false);
    }
    timer.next("fwd.attn.indexer");
    if (m == 4) indexer_forward(A, W, ctx);
    timer.next("fwd.attn.keys");
    build_keys(A, ctx);
    timer.next("fwd.attn.core");

    // attention (the local heads)
    kernels_.attention_forward(A.o.data(), A.P.data(), A.q.data(), A.kv_all.data(), W.sink + h0, A.key_offset.data(),
                               A.key_idx.data(), N, (int)Hl, c, 1.0 / std::sqrt((double)c));
    // output: inverse rope, grouped projection (the local groups), wo_b
    timer.next("fwd.attn.out");
    float* orot = ws.floats(N * Hl * c);
    std::memcpy(orot, A.o.data(), sizeof(float) * N * Hl * c);
    kernels_.rope_forward(orot, geo_.pos.data(), rope, N, Hl, c, true);
    kernels_.grouped_linear_forward(A.u.data(), orot, W.wo_a + g0 * dg * cg, N, (int)gl, cg, dg);
    if (!tp_) {
        kernels_.linear_fwd(A.F1.data(), A.u.data(), W.wo_b, N, g * dg, d, false);
    } else {
        // row-parallel: the local groups' columns of wo_b [d, g·dg] give a partial [N,d], summed over TP
        float* wob = ws.floats(d * gl * dg);
        tp_copy::cols(wob, W.wo_b, d, g * dg, g0 * dg, gl * dg);
        kernels_.linear_fwd(A.F1.data(), A.u.data(), wob, N, gl * dg, d, false);
        tp_->all_reduce_sum(A.F1.data(), N * d);
    }

    // indexer KL loss: target = main attention probabilities of the selected entries, summed over heads
    timer.next("fwd.attn.indexer_loss");
    A.idx = 0.0;
    if (m == 4 && ctx.opts->lambda_idx != 0.0) {
        const int64_t kw = A.kw;
        float* p = ws.floats(std::max<int64_t>(N * kw, 1));
        // Σ over this rank's heads (in double); under TP the sum over every head is the sum of the ranks' sums
        std::vector<double> head_sum(tp_ ? N * kw : 0);
        if (tp_) {
#pragma omp parallel for schedule(static)
            for (int64_t t = 0; t < N; t++) {
                const int64_t k0 = A.key_offset[t], nk = A.key_offset[t + 1] - k0, nw = A.n_window[t];
                for (int64_t j = 0; j < A.nsel[t]; j++) {
                    double acc = 0.0;
                    for (int64_t h = 0; h < Hl; h++) acc += A.P[k0 * Hl + h * nk + nw + j];
                    head_sum[t * kw + j] = acc;
                }
            }
            tp_->all_reduce_sum(head_sum.data(), N * kw);
        }
#pragma omp parallel for schedule(static)
        for (int64_t t = 0; t < N; t++) {
            const int64_t k0 = A.key_offset[t], nk = A.key_offset[t + 1] - k0, nw = A.n_window[t];
            const int64_t ns = A.nsel[t];
            double sum = 0.0;
            for (int64_t j = 0; j < ns; j++) {
                double acc = 0.0;
                if (tp_)
                    acc = head_sum[t * kw + j];
                else
                    for (int64_t h = 0; h < H; h++) acc += A.P[k0 * H + h * nk + nw + j];
                p[t * kw + j] = (float)acc;
                sum += acc;
            }
            for (int64_t j = 0; j < ns; j++) p[t * kw + j] = sum > 0.0 ? (float)(p[t * kw + j] / sum) : 0.0f;
        }
        // iscores becomes dL_idx/dscores (already divided by the number of queries), scaled by λ_idx
        float* dscores = ws.floats(A.iscores.size());
        A.idx = kernels_.indexer_loss(dscores, A.iscores.data(), p, A.sel.data(), A.nsel.data(), N, (int)kw, A.ld);
        const float lam = (float)(ctx.opts->lambda_idx * ctx.opts->loss_scale);
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < (int64_t)A.iscores.size(); i++) A.iscores[i] = lam * dscores[i];
    }
}

void dsv4_model::indexer_forward(block_acts& A, const block_weights& W, const layer_ctx& ctx) {
    const model_config& cfg = config();
    const int64_t N = N_, d = cfg.hidden_size, dc = cfg.q_lora_rank;
    const int64_t HI = cfg.index_n_heads, cI = cfg.index_head_dim;
    const double eps = cfg.rms_norm_eps;
    const compressed_layout& cl = geo_.comp.at(4);
    const int64_t Nc = cl.n_entries;
    const rope_table_t<float> rope = geo_.rope_for_ratio(4);
    const float* a = A.a1.data();  // detached: the indexer loss never reaches the main graph

    kernels_.linear_fwd(A.iq.data(), A.qr.data(), W.i_wq_b, N, dc, HI * cI, false);
    kernels_.rope_forward(A.iq.data(), geo_.pos.data(), rope, N, HI, cI, false);
    kernels_.linear_fwd(A.ikv.data(), a, W.i_wkv, N, d, 2 * cI, false);
    kernels_.linear_fwd(A.ig.data(), a, W.i_wgate, N, d, 2 * cI, false);
    kernels_.compressor_forward(A.ipool.data(), A.ikv.data(), A.ig.data(), W.i_ape, geo_.docs.data(),
                                cl.entry_offset.data(), (int64_t)geo_.docs.size(), 4, cI, true);
    kernels_.rmsnorm_forward(A.ik.data(), A.ipool_rstd.data(), A.ipool.data(), W.i_norm, Nc, cI, eps);
    kernels_.rope_forward(A.ik.data(), cl.entry_pos.data(), rope, Nc, 1, cI, false);
    kernels_.linear_fwd(A.iw.data(), a, W.i_wp, N, d, HI, false);
    const float wscale = (float)(1.0 / std::sqrt((double)cI * (double)HI));
    for (auto& v : A.iw) v *= wscale;

    std::fill(A.iscores.begin(), A.iscores.end(), 0.0f);  // ld, kw and the sizes: the activation plan
    kernels_.indexer_scores_forward(A.iscores.data(), A.iq.data(), A.ik.data(), A.iw.data(), geo_.doc_of.data(),
                                    geo_.pos.data(), cl.entry_offset.data(), N, (int)HI, cI, 4, A.ld);
    kernels_.indexer_topk(A.sel.data(), A.nsel.data(), A.iscores.data(), geo_.pos.data(), N, 4, (int)A.kw, A.ld,
                          ctx.opts->dense_csa);
}

// dy [N,d] assigned from dF [N,d]
void dsv4_model::attention_backward(block_acts& A, float* dy, const float* dF, const block_weights& W,
                                    const block_weights& G, const layer_ctx& ctx) {
    workspace::scope ws(ws_);
    const model_config& cfg = config();
    const int64_t N = N_, d = cfg.hidden_size, H = cfg.num_attention_heads, c = cfg.head_dim;
    const int64_t dc = cfg.q_lora_rank, g = cfg.o_groups, dg = cfg.o_lora_rank;
    const int m = ctx.ratio;
    const rope_table_t<float> rope = geo_.rope_for_ratio(m);
    const int64_t Nc = m > 0 ? geo_.comp.at(m).n_entries : 0;
    const float* a = A.a1.data();
    // tensor parallelism: this rank's heads and output groups (see attention_forward)
    const tp_slice hs = tp_local(tp_, H), gs = tp_local(tp_, g);
    const int64_t h0 = hs.first, Hl = hs.count, g0 = gs.first, gl = gs.count, cg = H * c / g;

    // F = wo_b u ; u = grouped(wo_a, rope⁻¹(o))
    section_timer timer(prof_, kernels_, "bwd.attn.out");
    float* du = ws.floats(N * gl * dg);
    if (!tp_) {
        kernels_.linear_bwd_data(du, dF, W.wo_b, N, g * dg, d, false);
        kernels_.linear_bwd_weight(G.wo_b, dF, A.u.data(), N, g * dg, d);
    } else {
        // row-parallel wo_b: dF is whole on every rank; the local columns' gradient goes into their slice
        float* wob = ws.floats(d * gl * dg);
        tp_copy::cols(wob, W.wo_b, d, g * dg, g0 * dg, gl * dg);
        kernels_.linear_bwd_data(du, dF, wob, N, gl * dg, d, false);
        float* dwob = ws.floats(d * gl * dg);
        std::memset(dwob, 0, sizeof(float) * d * gl * dg);
        kernels_.linear_bwd_weight(dwob, dF, A.u.data(), N, gl * dg, d);
        tp_copy::add_cols(G.wo_b, dwob, d, g * dg, g0 * dg, gl * dg);
    }
    float* orot = ws.floats(N * Hl * c);
    std::memcpy(orot, A.o.data(), sizeof(float) * N * Hl * c);
    kernels_.rope_forward(orot, geo_.pos.data(), rope, N, Hl, c, true);
    float* dO = ws.floats(N * Hl * c);
    kernels_.grouped_linear_backward(dO, G.wo_a + g0 * dg * cg, du, orot, W.wo_a + g0 * dg * cg, N, (int)gl, cg, dg);
    kernels_.rope_forward(dO, geo_.pos.data(), rope, N, Hl, c, false);  // backward of the inverse rotation

    // attention core (the local heads; under TP dkv is this rank's part, summed over TP below)
    timer.next("bwd.attn.core");
    float* dq = ws.floats(N * Hl * c);
    float* dkv = ws.floats((N + Nc) * c);
    kernels_.attention_backward(dq, dkv, G.sink + h0, dO, A.q.data(), A.kv_all.data(), W.sink + h0, A.o.data(),
                                A.P.data(), A.key_offset.data(), A.key_idx.data(), N, N + Nc, (int)Hl, c,
                                1.0 / std::sqrt((double)c));

    // query path: rope⁻¹, per-head RMS, wq_b, q_norm, wq_a
    timer.next("bwd.attn.proj");
    kernels_.rope_forward(dq, geo_.pos.data(), rope, N, Hl, c, true);
    float* qhat = ws.floats(N * Hl * c);
    std::memcpy(qhat, A.q.data(), sizeof(float) * N * Hl * c);
    kernels_.rope_forward(qhat, geo_.pos.data(), rope, N, Hl, c, true);
    float* dqpre = ws.floats(N * Hl * c);
    rms_unweighted_backward_from_output(dqpre, dq, qhat, A.q_rstd.data(), N * Hl, c);
    float* dqr = ws.floats(N * dc);
    kernels_.linear_bwd_data(dqr, dqpre, W.wq_b + h0 * c * dc, N, dc, Hl * c, false);
    kernels_.linear_bwd_weight(G.wq_b + h0 * c * dc, dqpre, A.qr.data(), N, dc, Hl * c);
    if (tp_) {
        // the replicated part (q_norm, wq_a, the shared KV head, compressor) continues from the sums over all heads
        tp_->all_reduce_sum(dqr, N * dc);
        tp_->all_reduce_sum(dkv, (N + Nc) * c);
    }
    float* dqa = ws.floats(N * dc);
    kernels_.rmsnorm_backward(dqa, G.q_norm, dqr, A.qa.data(), W.q_norm, A.qa_rstd.data(), N, dc);
    float* da = ws.floats(N * d);
    kernels_.linear_bwd_data(da, dqa, W.wq_a, N, d, dc, false);
    kernels_.linear_bwd_weight(G.wq_a, dqa, a, N, d, dc);

    // window kv path
    kernels_.rope_forward(dkv, geo_.pos.data(), rope, N, 1, c, true);
    float* dkvpre = ws.floats(N * c);
    kernels_.rmsnorm_backward(dkvpre, G.kv_norm, dkv, A.kv_pre.data(), W.kv_norm, A.kv_rstd.data(), N, c);
    kernels_.linear_bwd_data(da, dkvpre, W.wkv, N, d, c, true);
    kernels_.linear_bwd_weight(G.wkv, dkvpre, a, N, d, c);

    // compressed kv path
    timer.next("bwd.attn.compress");
    if (m > 0) {
        const compressed_layout& cl = geo_.comp.at(m);
        const int64_t coff = m == 4 ? 2 : 1;
        float* dkvc = dkv + N * c;
        kernels_.rope_forward(dkvc, cl.entry_pos.data(), rope, Nc, 1, c, true);
        float* dcp = ws.floats(std::max<int64_t>(Nc, 1) * c);
        kernels_.rmsnorm_backward(dcp, G.c_norm, dkvc, A.cpool.data(), W.c_norm, A.cpool_rstd.data(), Nc, c);
        float* dckv = ws.floats(N * coff * c);
        float* dcg = ws.floats(N * coff * c);
        kernels_.compressor_backward(dckv, dcg, G.c_ape, dcp, A.ckv.data(), A.cg.data(), W.c_ape, geo_.docs.data(),
                                     cl.entry_offset.data(), (int64_t)geo_.docs.size(), m, c, m == 4);
        kernels_.linear_bwd_data(da, dckv, W.c_wkv, N, d, coff * c, true);
        kernels_.linear_bwd_data(da, dcg, W.c_wgate, N, d, coff * c, true);
        kernels_.linear_bwd_weight(G.c_wkv, dckv, a, N, d, coff * c);
        kernels_.linear_bwd_weight(G.c_wgate, dcg, a, N, d, coff * c);
    }
    timer.next("bwd.attn.indexer");
    if (m == 4 && ctx.opts->lambda_idx != 0.0) indexer_backward(A, W, G, ctx);

    // attn_norm
    timer.next("bwd.attn.proj");
    kernels_.rmsnorm_backward(dy, G.attn_norm, da, A.y1.data(), W.attn_norm, A.a1_rstd.data(), N, d);
}

// Gradients of λ_idx·L_idx w.r.t. the indexer's own weights (its inputs are detached).
void dsv4_model::indexer_backward(block_acts& A, const block_weights& W, const block_weights& G, const layer_ctx& ctx) {
    workspace::scope ws(ws_);
    const model_config& cfg = config();
    const int64_t N = N_, d = cfg.hidden_size, dc = cfg.q_lora_rank;
    const int64_t HI = cfg.index_n_heads, cI = cfg.index_head_dim;
    const compressed_layout& cl = geo_.comp.at(4);
    const int64_t Nc = cl.n_entries;
    const rope_table_t<float> rope = geo_.rope_for_ratio(4);
    const float* a = A.a1.data();

    float* diq = ws.floats(N * HI * cI);
    float* dik = ws.floats(std::max<int64_t>(Nc, 1) * cI);
    float* diw = ws.floats(N * HI);
    std::memset(dik, 0, sizeof(float) * std::max<int64_t>(Nc, 1) * cI);
    kernels_.indexer_scores_backward(diq, dik, diw, A.iscores.data(), A.iq.data(), A.ik.data(), A.iw.data(),
                                     geo_.doc_of.data(), geo_.pos.data(), cl.entry_offset.data(), N, (int)HI, cI, 4,
                                     A.ld);
    // head weights: iw = wscale·(weights_proj a)
    const float wscale = (float)(1.0 / std::sqrt((double)cI * (double)HI));
    for (int64_t i = 0; i < N * HI; i++) diw[i] *= wscale;
    kernels_.linear_bwd_weight(G.i_wp, diw, a, N, d, HI);
    // queries
    kernels_.rope_forward(diq, geo_.pos.data(), rope, N, HI, cI, true);
    kernels_.linear_bwd_weight(G.i_wq_b, diq, A.qr.data(), N, dc, HI * cI);
    // keys: rope⁻¹, norm, pooling, projections
    kernels_.rope_forward(dik, cl.entry_pos.data(), rope, Nc, 1, cI, true);
    float* dip = ws.floats(std::max<int64_t>(Nc, 1) * cI);
    kernels_.rmsnorm_backward(dip, G.i_norm, dik, A.ipool.data(), W.i_norm, A.ipool_rstd.data(), Nc, cI);
    float* dikv = ws.floats(N * 2 * cI);
    float* dig = ws.floats(N * 2 * cI);
    kernels_.compressor_backward(dikv, dig, G.i_ape, dip, A.ikv.data(), A.ig.data(), W.i_ape, geo_.docs.data(),
                                 cl.entry_offset.data(), (int64_t)geo_.docs.size(), 4, cI, true);
    kernels_.linear_bwd_weight(G.i_wkv, dikv, a, N, d, 2 * cI);
    kernels_.linear_bwd_weight(G.i_wgate, dig, a, N, d, 2 * cI);
}

}  // namespace trex
