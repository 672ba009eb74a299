#include "trex/model/layers/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "trex/base/error.hpp"

namespace trex {

namespace {

// The number of heads Hl and output groups gl this rank computes (all without tensor parallelism; under it the weights
// bound are this rank's slices: wq_b's and attn_sink's Hl heads, wo_a's gl groups, wo_b's gl·dg columns), and the
// width cg of an output group's input.
struct head_split {
    int64_t Hl, gl, cg;
};
head_split split_heads(const layer_env& env) {
    const int64_t H = env.cfg.num_attention_heads, g = env.cfg.o_groups;
    return {tp_local(env.tp, H).count, tp_local(env.tp, g).count, H * env.cfg.head_dim / g};
}

}  // namespace

void qat_kv(const kernel_table& k, float* kv, int64_t rows, const model_config& cfg) {
    const int64_t c = cfg.head_dim;
    k.fake_quant_fp8(kv, rows, c, c - cfg.qk_rope_head_dim, 64);
}

void qat_index(const kernel_table& k, float* x, int64_t rows, int64_t cI) {
    k.hadamard_rows(x, rows, cI);
    k.fake_quant_fp4(x, rows, cI, cI, 32);
}

int32_t* document_rows(int32_t* rows, const batch_geometry& geo, int m) {
    for (int64_t t = 0; t < geo.N; t++) rows[t] = (int32_t)(geo.docs[(size_t)geo.doc_of[(size_t)t]].len / m);
    return rows;
}

void attention_layer::forward(block_acts& A, const attention_weights& W, const layer_env& env) const {
    const int64_t N = env.N(), c = env.cfg.head_dim;
    const head_split hs = split_heads(env);
    section_timer timer(env.prof, env.k, "fwd.attn.proj");
    project(A, W, env);
    timer.next("fwd.attn.compress");
    if (ratio_ > 0) compress(A, W, env);
    timer.next("fwd.attn.indexer");
    if (ratio_ == 4) indexer_forward(A, W, env);
    timer.next("fwd.attn.keys");
    build_keys(A, env);
    timer.next("fwd.attn.core");
    // attention (the local heads)
    env.k.attention_forward(A.o.data(), A.P.data(), A.q.data(), A.kv_all.data(), W.sink, A.key_offset.data(),
                            A.key_idx.data(), N, (int)hs.Hl, c, 1.0 / std::sqrt((double)c));
    timer.next("fwd.attn.out");
    output_forward(A, W, env);
    timer.next("fwd.attn.indexer_loss");
    A.idx = 0.0;
    if (ratio_ == 4 && env.opts.lambda_idx != 0.0) indexer_loss(A, env);
}

// a1 = attn_norm(y1); queries q = rope(rms_heads(wq_b · q_norm(wq_a · a1))) (this rank's heads, column-parallel);
// the window kv = rope(kv_norm(wkv · a1)) in rows [0, N) of kv_all
void attention_layer::project(block_acts& A, const attention_weights& W, const layer_env& env) const {
    const model_config& cfg = env.cfg;
    const kernel_table& k = env.k;
    const batch_geometry& geo = env.geo;
    const int64_t N = env.N(), d = cfg.hidden_size, c = cfg.head_dim, dc = cfg.q_lora_rank;
    const double eps = cfg.rms_norm_eps;
    const rope_table_t<float> rope = geo.rope_for_ratio(ratio_);
    const head_split hs = split_heads(env);
    k.rmsnorm_forward(A.a1.data(), A.a1_rstd.data(), A.y1.data(), W.norm, N, d, eps);
    const float* a = A.a1.data();
    k.linear_fwd(A.qa.data(), a, W.wq_a, N, d, dc, false);
    k.rmsnorm_forward(A.qr.data(), A.qa_rstd.data(), A.qa.data(), W.q_norm, N, dc, eps);
    k.linear_fwd(A.q.data(), A.qr.data(), W.wq_b, N, dc, hs.Hl * c, false);
    k.rmsnorm_forward(A.q.data(), A.q_rstd.data(), A.q.data(), nullptr, N * hs.Hl, c, eps);
    k.rope_forward(A.q.data(), geo.pos.data(), rope, N, hs.Hl, c, false);
    k.linear_fwd(A.kv_pre.data(), a, W.wkv, N, d, c, false);
    k.rmsnorm_forward(A.kv_all.data(), A.kv_rstd.data(), A.kv_pre.data(), W.kv_norm, N, c, eps);
    k.rope_forward(A.kv_all.data(), geo.pos.data(), rope, N, 1, c, false);
    if (cfg.qat_release()) qat_kv(k, A.kv_all.data(), N, cfg);
}

// The compressed kv in rows [N, N + Nc) of kv_all: gated pooling of the compressor's projections per document
// (CSA: overlapping windows), then norm and RoPE at the entries' positions.
void attention_layer::compress(block_acts& A, const attention_weights& W, const layer_env& env) const {
    const model_config& cfg = env.cfg;
    const kernel_table& k = env.k;
    const batch_geometry& geo = env.geo;
    const int m = ratio_;
    const int64_t N = env.N(), d = cfg.hidden_size, c = cfg.head_dim;
    const compressed_layout& cl = geo.comp.at(m);
    const int64_t Nc = cl.n_entries, coff = m == 4 ? 2 : 1;
    const rope_table_t<float> rope = geo.rope_for_ratio(m);
    const float* a = A.a1.data();
    k.linear_fwd(A.ckv.data(), a, W.c_wkv, N, d, coff * c, false);
    k.linear_fwd(A.cg.data(), a, W.c_wgate, N, d, coff * c, false);
    k.compressor_forward(A.cpool.data(), A.ckv.data(), A.cg.data(), W.c_ape, geo.docs.data(), cl.entry_offset.data(),
                         (int64_t)geo.docs.size(), m, c, m == 4);
    float* kvc = A.kv_all.data() + N * c;
    k.rmsnorm_forward(kvc, A.cpool_rstd.data(), A.cpool.data(), W.c_norm, Nc, c, cfg.rms_norm_eps);
    k.rope_forward(kvc, cl.entry_pos.data(), rope, Nc, 1, c, false);
    if (cfg.qat_release()) qat_kv(k, kvc, Nc, cfg);
}

// F1 = wo_b · grouped(wo_a, rope⁻¹(o)): the local groups; under TP wo_b is row-parallel (the local groups' columns
// give a partial [N,d], summed over TP)
void attention_layer::output_forward(block_acts& A, const attention_weights& W, const layer_env& env) const {
    workspace::scope ws(env.ws);
    const model_config& cfg = env.cfg;
    const kernel_table& k = env.k;
    const int64_t N = env.N(), d = cfg.hidden_size, c = cfg.head_dim, dg = cfg.o_lora_rank;
    const head_split hs = split_heads(env);
    const rope_table_t<float> rope = env.geo.rope_for_ratio(ratio_);
    float* orot = ws.floats(N * hs.Hl * c);
    k.copy(orot, A.o.data(), N * hs.Hl * c);
    k.rope_forward(orot, env.geo.pos.data(), rope, N, hs.Hl, c, true);
    k.grouped_linear_forward(A.u.data(), orot, W.wo_a, N, (int)hs.gl, hs.cg, dg);
    k.linear_fwd(A.F1.data(), A.u.data(), W.wo_b, N, hs.gl * dg, d, false);
    if (env.tp) env.tp->all_reduce_sum(A.F1.data(), N * d);
}

// The indexer KL loss: target = the main attention's probabilities of the selected entries, summed over the heads
// (in double; under TP the sum over every head is the sum of the ranks' sums) and normalised. A.iscores becomes
// dL_idx/dscores (already divided by the number of queries), scaled by λ_idx·loss_scale.
void attention_layer::indexer_loss(block_acts& A, const layer_env& env) const {
    workspace::scope ws(env.ws);
    const kernel_table& k = env.k;
    const int64_t N = env.N(), kw = A.kw;
    double* head_sum = ws.doubles(std::max<int64_t>(N * kw, 1));
    k.indexer_head_sums(head_sum, A.P.data(), A.key_offset.data(), A.n_window.data(), A.nsel.data(), N,
                        (int)split_heads(env).Hl, kw);
    if (env.tp) env.tp->all_reduce_sum(head_sum, N * kw);
    float* p = ws.floats(std::max<int64_t>(N * kw, 1));
    k.indexer_target(p, head_sum, A.nsel.data(), N, kw);
    float* dscores = ws.floats(A.iscores.size());
    A.idx = k.indexer_loss(dscores, A.iscores.data(), p, A.sel.data(), A.nsel.data(), N, (int)kw, A.ld);
    k.scale(A.iscores.data(), dscores, (float)(env.opts.lambda_idx * env.opts.loss_scale), (int64_t)A.iscores.size());
}

// Key lists: for query t the window keys (same document, positions p−n_win < pos ≤ p, ascending), then the
// compressed entries it attends to (HCA: all visible; CSA: the indexer's selection), as rows of kv_all. Their count is
// the plan's (activations.hpp): a list longer than planned is a bug, reported as one.
void attention_layer::build_keys(block_acts& A, const layer_env& env) const {
    const batch_geometry& geo = env.geo;
    const int m = ratio_;
    const int64_t keys = env.k.attention_keys(A.key_offset.data(), A.key_idx.data(), A.n_window.data(), geo.pos.data(),
                                              geo.doc_of.data(), m > 0 ? geo.comp.at(m).entry_offset.data() : nullptr,
                                              A.sel.data(), A.nsel.data(), A.kw, env.N(), env.cfg.sliding_window, m);
    TREX_CHECK(keys == (int64_t)A.key_idx.size(), "layer {}: {} attention keys, {} planned", layer_, keys,
               A.key_idx.size());
}

// The lightning indexer (CSA): queries from qr, keys from its own compressor over a1 (detached: the indexer loss
// never reaches the main graph), head weights; scores over the visible compressed entries and the top-k selection.
void attention_layer::indexer_forward(block_acts& A, const attention_weights& W, const layer_env& env) const {
    const model_config& cfg = env.cfg;
    const kernel_table& k = env.k;
    const batch_geometry& geo = env.geo;
    const int64_t N = env.N(), d = cfg.hidden_size, dc = cfg.q_lora_rank;
    const int64_t HI = cfg.index_n_heads, cI = cfg.index_head_dim;
    const compressed_layout& cl = geo.comp.at(4);
    const int64_t Nc = cl.n_entries;
    const rope_table_t<float> rope = geo.rope_for_ratio(4);
    const float* a = A.a1.data();

    k.linear_fwd(A.iq.data(), A.qr.data(), W.i_wq_b, N, dc, HI * cI, false);
    k.rope_forward(A.iq.data(), geo.pos.data(), rope, N, HI, cI, false);
    if (cfg.qat_release()) qat_index(k, A.iq.data(), N * HI, cI);
    k.linear_fwd(A.ikv.data(), a, W.i_wkv, N, d, 2 * cI, false);
    k.linear_fwd(A.ig.data(), a, W.i_wgate, N, d, 2 * cI, false);
    k.compressor_forward(A.ipool.data(), A.ikv.data(), A.ig.data(), W.i_ape, geo.docs.data(), cl.entry_offset.data(),
                         (int64_t)geo.docs.size(), 4, cI, true);
    k.rmsnorm_forward(A.ik.data(), A.ipool_rstd.data(), A.ipool.data(), W.i_norm, Nc, cI, cfg.rms_norm_eps);
    k.rope_forward(A.ik.data(), cl.entry_pos.data(), rope, Nc, 1, cI, false);
    if (cfg.qat_release()) qat_index(k, A.ik.data(), Nc, cI);
    k.linear_fwd(A.iw.data(), a, W.i_wp, N, d, HI, false);
    const float wscale = (float)(1.0 / std::sqrt((double)cI * (double)HI));
    k.scale(A.iw.data(), A.iw.data(), wscale, (int64_t)A.iw.size());

    k.fill_zero(A.iscores.data(), (int64_t)A.iscores.size());  // ld, kw and the sizes: the activation plan
    k.indexer_scores_forward(A.iscores.data(), A.iq.data(), A.ik.data(), A.iw.data(), geo.doc_of.data(), geo.pos.data(),
                             cl.entry_offset.data(), N, (int)HI, cI, 4, A.ld);
    workspace::scope ws(env.ws);
    const int32_t* rows = cfg.torch_ties() ? document_rows(ws.ints(std::max<int64_t>(N, 1)), geo, 4) : nullptr;
    k.indexer_topk(A.sel.data(), A.nsel.data(), A.iscores.data(), geo.pos.data(), N, 4, (int)A.kw, A.ld,
                   env.opts.dense_csa, rows);
}

void attention_layer::backward(block_acts& A, float* dy, const float* dF, const attention_weights& W,
                               const attention_weights& G, const layer_env& env) const {
    workspace::scope ws(env.ws);
    const model_config& cfg = env.cfg;
    const int64_t N = env.N(), d = cfg.hidden_size, c = cfg.head_dim;
    const int64_t Nc = ratio_ > 0 ? env.geo.comp.at(ratio_).n_entries : 0;
    const head_split hs = split_heads(env);

    section_timer timer(env.prof, env.k, "bwd.attn.out");
    float* dO = ws.floats(N * hs.Hl * c);
    output_backward(dO, A, dF, W, G, env);
    // attention core (the local heads; under TP dkv is this rank's part, summed over TP in query_backward)
    timer.next("bwd.attn.core");
    float* dq = ws.floats(N * hs.Hl * c);
    float* dkv = ws.floats((N + Nc) * c);
    env.k.attention_backward(dq, dkv, G.sink, dO, A.q.data(), A.kv_all.data(), W.sink, A.o.data(), A.P.data(),
                             A.key_offset.data(), A.key_idx.data(), N, N + Nc, (int)hs.Hl, c,
                             1.0 / std::sqrt((double)c));
    timer.next("bwd.attn.proj");
    float* da = ws.floats(N * d);
    query_backward(da, dkv, A, dq, W, G, env);
    window_kv_backward(da, dkv, A, W, G, env);
    timer.next("bwd.attn.compress");
    if (ratio_ > 0) compress_backward(da, dkv + N * c, A, W, G, env);
    timer.next("bwd.attn.indexer");
    if (ratio_ == 4 && env.opts.lambda_idx != 0.0) indexer_backward(A, W, G, env);
    // attn_norm
    timer.next("bwd.attn.proj");
    env.k.rmsnorm_backward(dy, G.norm, da, A.y1.data(), W.norm, A.a1_rstd.data(), N, d);
}

// dO [N,Hl,c] = dL/do from dF through wo_b, the grouped wo_a and the inverse RoPE; wo_b's and wo_a's gradients
// (row-parallel wo_b under TP: dF is whole on every rank, the local columns' gradient goes into their slice)
void attention_layer::output_backward(float* dO, const block_acts& A, const float* dF, const attention_weights& W,
                                      const attention_weights& G, const layer_env& env) const {
    workspace::scope ws(env.ws);
    const model_config& cfg = env.cfg;
    const kernel_table& k = env.k;
    const int64_t N = env.N(), d = cfg.hidden_size, c = cfg.head_dim, dg = cfg.o_lora_rank;
    const head_split hs = split_heads(env);
    const rope_table_t<float> rope = env.geo.rope_for_ratio(ratio_);
    float* du = ws.floats(N * hs.gl * dg);
    k.linear_bwd_data(du, dF, W.wo_b, N, hs.gl * dg, d, false);
    k.linear_bwd_weight(G.wo_b, dF, A.u.data(), N, hs.gl * dg, d);
    float* orot = ws.floats(N * hs.Hl * c);
    k.copy(orot, A.o.data(), N * hs.Hl * c);
    k.rope_forward(orot, env.geo.pos.data(), rope, N, hs.Hl, c, true);
    k.grouped_linear_backward(dO, G.wo_a, du, orot, W.wo_a, N, (int)hs.gl, hs.cg, dg);
    k.rope_forward(dO, env.geo.pos.data(), rope, N, hs.Hl, c, false);  // backward of the inverse rotation
}

// The query path from dq [N,Hl,c]: rope⁻¹, per-head RMS, wq_b, q_norm, wq_a; da [N,d] assigned. Under TP the
// replicated part (q_norm, wq_a, and — through dkv — the shared KV head and compressor) continues from the sums over
// all heads: dqr and dkv are all-reduced here.
void attention_layer::query_backward(float* da, float* dkv, const block_acts& A, float* dq, const attention_weights& W,
                                     const attention_weights& G, const layer_env& env) const {
    workspace::scope ws(env.ws);
    const model_config& cfg = env.cfg;
    const kernel_table& k = env.k;
    const int64_t N = env.N(), d = cfg.hidden_size, c = cfg.head_dim, dc = cfg.q_lora_rank;
    const int64_t Nc = ratio_ > 0 ? env.geo.comp.at(ratio_).n_entries : 0;
    const head_split hs = split_heads(env);
    const rope_table_t<float> rope = env.geo.rope_for_ratio(ratio_);
    const int32_t* pos = env.geo.pos.data();
    k.rope_forward(dq, pos, rope, N, hs.Hl, c, true);
    float* qhat = ws.floats(N * hs.Hl * c);
    k.copy(qhat, A.q.data(), N * hs.Hl * c);
    k.rope_forward(qhat, pos, rope, N, hs.Hl, c, true);
    float* dqpre = ws.floats(N * hs.Hl * c);
    k.rms_unweighted_backward(dqpre, dq, qhat, A.q_rstd.data(), N * hs.Hl, c);
    float* dqr = ws.floats(N * dc);
    k.linear_bwd_data(dqr, dqpre, W.wq_b, N, dc, hs.Hl * c, false);
    k.linear_bwd_weight(G.wq_b, dqpre, A.qr.data(), N, dc, hs.Hl * c);
    if (env.tp) {
        env.tp->all_reduce_sum(dqr, N * dc);
        env.tp->all_reduce_sum(dkv, (N + Nc) * c);
    }
    float* dqa = ws.floats(N * dc);
    k.rmsnorm_backward(dqa, G.q_norm, dqr, A.qa.data(), W.q_norm, A.qa_rstd.data(), N, dc);
    k.linear_bwd_data(da, dqa, W.wq_a, N, d, dc, false);
    k.linear_bwd_weight(G.wq_a, dqa, A.a1.data(), N, d, dc);
}

// The window kv path from rows [0, N) of dkv: rope⁻¹, kv_norm, wkv; da [N,d] +=.
void attention_layer::window_kv_backward(float* da, float* dkv, const block_acts& A, const attention_weights& W,
                                         const attention_weights& G, const layer_env& env) const {
    workspace::scope ws(env.ws);
    const kernel_table& k = env.k;
    const int64_t N = env.N(), d = env.cfg.hidden_size, c = env.cfg.head_dim;
    k.rope_forward(dkv, env.geo.pos.data(), env.geo.rope_for_ratio(ratio_), N, 1, c, true);
    float* dkvpre = ws.floats(N * c);
    k.rmsnorm_backward(dkvpre, G.kv_norm, dkv, A.kv_pre.data(), W.kv_norm, A.kv_rstd.data(), N, c);
    k.linear_bwd_data(da, dkvpre, W.wkv, N, d, c, true);
    k.linear_bwd_weight(G.wkv, dkvpre, A.a1.data(), N, d, c);
}

// The compressed kv path from dkvc [Nc,c] (rows [N, N + Nc) of dkv): rope⁻¹, norm, pooling, projections; da +=.
void attention_layer::compress_backward(float* da, float* dkvc, const block_acts& A, const attention_weights& W,
                                        const attention_weights& G, const layer_env& env) const {
    workspace::scope ws(env.ws);
    const kernel_table& k = env.k;
    const batch_geometry& geo = env.geo;
    const int m = ratio_;
    const int64_t N = env.N(), d = env.cfg.hidden_size, c = env.cfg.head_dim;
    const compressed_layout& cl = geo.comp.at(m);
    const int64_t Nc = cl.n_entries, coff = m == 4 ? 2 : 1;
    const float* a = A.a1.data();
    k.rope_forward(dkvc, cl.entry_pos.data(), geo.rope_for_ratio(m), Nc, 1, c, true);
    float* dcp = ws.floats(std::max<int64_t>(Nc, 1) * c);
    k.rmsnorm_backward(dcp, G.c_norm, dkvc, A.cpool.data(), W.c_norm, A.cpool_rstd.data(), Nc, c);
    float* dckv = ws.floats(N * coff * c);
    float* dcg = ws.floats(N * coff * c);
    k.compressor_backward(dckv, dcg, G.c_ape, dcp, A.ckv.data(), A.cg.data(), W.c_ape, geo.docs.data(),
                          cl.entry_offset.data(), (int64_t)geo.docs.size(), m, c, m == 4);
    k.linear_bwd_data(da, dckv, W.c_wkv, N, d, coff * c, true);
    k.linear_bwd_data(da, dcg, W.c_wgate, N, d, coff * c, true);
    k.linear_bwd_weight(G.c_wkv, dckv, a, N, d, coff * c);
    k.linear_bwd_weight(G.c_wgate, dcg, a, N, d, coff * c);
}

// Gradients of λ_idx·L_idx w.r.t. the indexer's own weights (its inputs are detached).
void attention_layer::indexer_backward(block_acts& A, const attention_weights& W, const attention_weights& G,
                                       const layer_env& env) const {
    workspace::scope ws(env.ws);
    const model_config& cfg = env.cfg;
    const kernel_table& k = env.k;
    const batch_geometry& geo = env.geo;
    const int64_t N = env.N(), d = cfg.hidden_size, dc = cfg.q_lora_rank;
    const int64_t HI = cfg.index_n_heads, cI = cfg.index_head_dim;
    const compressed_layout& cl = geo.comp.at(4);
    const int64_t Nc = cl.n_entries;
    const rope_table_t<float> rope = geo.rope_for_ratio(4);
    const float* a = A.a1.data();

    float* diq = ws.floats(N * HI * cI);
    float* dik = ws.floats(std::max<int64_t>(Nc, 1) * cI);
    float* diw = ws.floats(N * HI);
    k.fill_zero(dik, std::max<int64_t>(Nc, 1) * cI);
    k.indexer_scores_backward(diq, dik, diw, A.iscores.data(), A.iq.data(), A.ik.data(), A.iw.data(), geo.doc_of.data(),
                              geo.pos.data(), cl.entry_offset.data(), N, (int)HI, cI, 4, A.ld);
    if (cfg.qat_release()) {  // straight through the fake quantisation; the rotation is its own backward
        k.hadamard_rows(diq, N * HI, cI);
        k.hadamard_rows(dik, Nc, cI);
    }
    // head weights: iw = wscale·(weights_proj a)
    const float wscale = (float)(1.0 / std::sqrt((double)cI * (double)HI));
    k.scale(diw, diw, wscale, N * HI);
    k.linear_bwd_weight(G.i_wp, diw, a, N, d, HI);
    // queries
    k.rope_forward(diq, geo.pos.data(), rope, N, HI, cI, true);
    k.linear_bwd_weight(G.i_wq_b, diq, A.qr.data(), N, dc, HI * cI);
    // keys: rope⁻¹, norm, pooling, projections
    k.rope_forward(dik, cl.entry_pos.data(), rope, Nc, 1, cI, true);
    float* dip = ws.floats(std::max<int64_t>(Nc, 1) * cI);
    k.rmsnorm_backward(dip, G.i_norm, dik, A.ipool.data(), W.i_norm, A.ipool_rstd.data(), Nc, cI);
    float* dikv = ws.floats(N * 2 * cI);
    float* dig = ws.floats(N * 2 * cI);
    k.compressor_backward(dikv, dig, G.i_ape, dip, A.ikv.data(), A.ig.data(), W.i_ape, geo.docs.data(),
                          cl.entry_offset.data(), (int64_t)geo.docs.size(), 4, cI, true);
    k.linear_bwd_weight(G.i_wkv, dikv, a, N, d, 2 * cI);
    k.linear_bwd_weight(G.i_wgate, dig, a, N, d, 2 * cI);
}

}  // namespace trex
