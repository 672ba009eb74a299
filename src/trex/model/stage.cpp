// A stage of the model (docs/model.md §3–4, docs/distributed.md): blocks [first, last) of one micro-batch, with the
// embedding on the first stage and hc_head + norm + head, the losses and the MTP block on the last. step() is one
// stage over the whole model.
#include <cmath>
#include <cstring>

#include "trex/base/error.hpp"
#include "trex/model/layers/vocab.hpp"
#include "trex/model/model.hpp"

namespace trex {

void finish_step_result(step_result& r, const step_options& opts, int n_layers) {
    r.bal = 0.0;
    r.idx = 0.0;
    for (double b : r.block_bal) r.bal += b;
    for (int l = 0; l < n_layers && l < (int)r.block_idx.size(); l++) r.idx += r.block_idx[l];
    r.loss = r.lm + opts.lambda_mtp * r.mtp + r.bal + opts.lambda_idx * r.idx;
}

void dsv4_model::swap_state(forward_state& s) {
    std::swap(range_, s.range);
    std::swap(N_, s.N);
    std::swap(geo_, s.geo);
    std::swap(acts_, s.acts);
}

void dsv4_model::check_batch(const batch_view& batch, bool mtp) const {
    const int64_t N = batch.B * batch.S, V = config().vocab_size;
    TREX_CHECK(config().num_attention_heads <= 256, "num_attention_heads > 256 is not supported by the CPU attention");
    for (int64_t t = 0; t < N; t++) {
        TREX_CHECK(batch.input_ids[t] >= 0 && batch.input_ids[t] < V, "input_ids[{}] = {} is outside the vocabulary", t,
                   batch.input_ids[t]);
        TREX_CHECK(batch.labels[t] >= -1 && batch.labels[t] < V, "labels[{}] = {} is outside the vocabulary", t,
                   batch.labels[t]);
        if (mtp) {
            TREX_CHECK(batch.mtp_input_ids[t] >= 0 && batch.mtp_input_ids[t] < V,
                       "mtp_input_ids[{}] = {} is outside the vocabulary", t, batch.mtp_input_ids[t]);
            TREX_CHECK(!batch.mtp_labels || (batch.mtp_labels[t] >= -1 && batch.mtp_labels[t] < V),
                       "mtp_labels[{}] is outside the vocabulary", t);
        }
    }
}

step_result dsv4_model::stage_forward(const stage_range& r, const batch_view& batch, const step_options& opts,
                                      const float* h_in, float* h_out) {
    const model_config& cfg = config();
    const int L = cfg.n_layers();
    TREX_CHECK(r.first >= 0 && r.first < r.last && r.last <= L, "stage: bad block range [{}, {}) of {} blocks", r.first,
               r.last, L);
    const bool mtp = cfg.has_mtp() && batch.mtp_input_ids != nullptr;
    const int64_t N = batch.B * batch.S, nd = (int64_t)cfg.hc_mult * cfg.hidden_size;
    check_batch(batch, mtp);
    N_ = N;
    range_ = r;
    geo_ = make_geometry(cfg, batch.B, batch.S, batch.doc_start);
    if (opts.profile) profile_ = step_profile{};
    prof_ = opts.profile ? &profile_ : nullptr;
    const layer_env e = env(batch, opts);
    acts_.plan(plan_stage(r, mtp, e), kernels_.memory);
    // H(l) = input of block l (l in [first, last]); H(last + 1) = MTP output
    auto H = [&](int l) { return acts_.states.data() + (int64_t)(l - r.first) * N * nd; };

    step_result res;
    const int nblocks = L + (mtp ? 1 : 0);
    res.expert_load.resize(nblocks);
    res.block_bal.assign(nblocks, 0.0);
    res.block_idx.assign(nblocks, 0.0);

    // embedding broadcast to the n streams (first stage), or the previous stage's state
    if (r.first == 0)
        embed_forward(H(0), e);
    else
        kernels_.copy(H(r.first), h_in, N * nd);
    for (int l = r.first; l < r.last; l++) {
        block_acts& A = acts_.block(l - r.first);
        blocks_[l].forward(A, H(l + 1), H(l), wblocks_[l], e);
        res.block_bal[l] = A.bal;
        res.block_idx[l] = A.idx;
        res.expert_load[l].assign(A.load.begin(), A.load.end());
    }
    if (r.last == L)
        head_forward(res, batch, opts, H(L));
    else
        kernels_.copy(h_out, H(r.last), N * nd);
    return res;
}

// h0 [N,n,d]: the token embeddings copied into the n streams
void dsv4_model::embed_forward(float* h0, const layer_env& env) {
    workspace::scope ws(ws_);
    const int64_t N = N_, d = config().hidden_size, n = config().hc_mult;
    section_timer timer(prof_, kernels_, "fwd.embed");
    float* e = ws.floats(N * d);
    vocab_embedding_forward(e, env.batch.input_ids, params_.w("embed.weight"), env);
    kernels_.broadcast_streams(h0, e, N, n, d, false);
}

// The last stage after its blocks: the main head and its LM loss, then the MTP module and its loss. h_last [N,n,d] =
// H(L); the MTP output goes to the next slot of the states. head.weight's gradient is summed over the chunks of both
// heads in its transposed layout and added once at the end.
void dsv4_model::head_forward(step_result& res, const batch_view& batch, const step_options& opts, float* h_last) {
    workspace::scope ws(ws_);
    const model_config& cfg = config();
    const int L = cfg.n_layers();
    const bool mtp = cfg.has_mtp() && batch.mtp_input_ids != nullptr;
    const int64_t N = N_, nd = (int64_t)cfg.hc_mult * cfg.hidden_size;
    const layer_env e = env(batch, opts);
    head_grad hg{opts.backward ? ws.floats((int64_t)cfg.hidden_size * vocab_rows(e).count) : nullptr};
    int64_t n_lm = 0;
    for (int64_t t = 0; t < N; t++) n_lm += batch.labels[t] >= 0;
    const double lm_sum = head_.forward(main_head_saved(acts_.head), &res.n_lm, h_last, batch.labels,
                                        n_lm > 0 ? opts.loss_scale / (double)n_lm : 0.0,
                                        opts.keep_logits ? &logits_out_ : nullptr, hg, whead_, e);
    res.lm = n_lm > 0 ? lm_sum / (double)n_lm : 0.0;
    if (mtp) {
        int64_t n_mtp = 0;
        for (int64_t t = 0; batch.mtp_labels && t < N; t++) n_mtp += batch.mtp_labels[t] >= 0;
        const double scale = n_mtp > 0 ? opts.loss_scale * opts.lambda_mtp / (double)n_mtp : 0.0;
        block_acts& A = acts_.block(L - range_.first);  // the MTP block is the stage's last
        const double mtp_sum = mtp_->forward(A, acts_.head, acts_.mtp_in, h_last + N * nd, h_last, &res.n_mtp, scale,
                                             opts.keep_logits ? &mtp_logits_out_ : nullptr, hg, wmtp_, e);
        res.block_bal[L] = A.bal;
        res.expert_load[L].assign(A.load.begin(), A.load.end());
        res.mtp = n_mtp > 0 ? mtp_sum / (double)n_mtp : 0.0;
    }
    lm_head::add_grad(ghead_.head, hg, e);
}

// dh [N,n,d] = dL/d h_L from the main head and the MTP module; de_mtp [N,d] = the gradient of the MTP embedding lookup.
void dsv4_model::head_backward(float* dh, const batch_view& batch, const step_options& opts, float* h_last,
                               float* de_mtp) {
    const model_config& cfg = config();
    const int L = cfg.n_layers();
    const int64_t nd = (int64_t)cfg.hc_mult * cfg.hidden_size;
    const layer_env e = env(batch, opts);
    {
        section_timer timer(prof_, kernels_, "bwd.head");
        head_.backward(dh, h_last, main_head_saved(acts_.head), whead_, ghead_, e);
    }
    if (!(cfg.has_mtp() && batch.mtp_input_ids != nullptr)) return;
    mtp_->backward(dh, de_mtp, acts_.block(L - range_.first), acts_.head, acts_.mtp_in, h_last + N_ * nd, h_last, wmtp_,
                   gmtp_, e);
}

void dsv4_model::stage_backward(const stage_range& r, const batch_view& batch, const step_options& opts,
                                const float* dh_out, float* dh_in, float* de_mtp) {
    workspace::scope ws(ws_);
    const model_config& cfg = config();
    const int L = cfg.n_layers();
    TREX_CHECK(r.first == range_.first && r.last == range_.last,
               "stage: backward of blocks [{}, {}) after a forward of [{}, {})", r.first, r.last, range_.first,
               range_.last);
    const bool mtp = cfg.has_mtp() && batch.mtp_input_ids != nullptr;
    const int64_t N = N_, nd = (int64_t)cfg.hc_mult * cfg.hidden_size;
    auto H = [&](int l) { return acts_.states.data() + (int64_t)(l - r.first) * N * nd; };
    // the MTP embedding gradient: produced by the last stage, applied by the first
    float* de_mtp_buf = r.first == 0 && r.last == L ? ws.floats(N * cfg.hidden_size) : de_mtp;
    TREX_CHECK(!mtp || de_mtp_buf || (r.first > 0 && r.last < L),
               "stage: blocks [{}, {}) need the MTP embedding gradient buffer (de_mtp)", r.first, r.last);
    const layer_env e = env(batch, opts);

    float* dh = ws.floats(N * nd);  // gradient w.r.t. H(l), l from last down to first
    if (r.last == L)
        head_backward(dh, batch, opts, H(L), de_mtp_buf);
    else
        kernels_.copy(dh, dh_out, N * nd);
    section_timer timer(prof_, kernels_, nullptr);
    float* dh_prev = ws.floats(N * nd);
    for (int l = r.last - 1; l >= r.first; l--) {
        block_acts& A = acts_.block(l - r.first);
        timer.next("bwd.recompute");
        if (opts.recompute) blocks_[l].forward(A, H(l + 1), H(l), wblocks_[l], e);
        timer.next(nullptr);
        blocks_[l].backward(A, dh_prev, dh, H(l), wblocks_[l], gblocks_[l], e);
        std::swap(dh, dh_prev);
    }
    timer.next(nullptr);
    if (r.first > 0)
        kernels_.copy(dh_in, dh, N * nd);
    else
        embed_backward(dh, e, mtp ? de_mtp_buf : nullptr);
}

// embed.weight's gradient: the MTP lookup's first (as one process adds it during the MTP backward), then the n
// streams', which are copies of the embedding
void dsv4_model::embed_backward(const float* dh, const layer_env& env, const float* de_mtp) {
    workspace::scope ws(ws_);
    const int64_t N = N_, d = config().hidden_size, n = config().hc_mult;
    section_timer timer(prof_, kernels_, "bwd.embed");
    float* gembed = params_.g("embed.weight");
    if (de_mtp) vocab_embedding_backward(gembed, de_mtp, env.batch.mtp_input_ids, env);
    float* de = ws.floats(N * d);
    kernels_.sum_streams(de, dh, N, n, d);
    vocab_embedding_backward(gembed, de, env.batch.input_ids, env);
}

}  // namespace trex
