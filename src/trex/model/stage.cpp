// A stage of the model (docs/model.md §3–4, docs/distributed.md): blocks [first, last) of one micro-batch, with the
// embedding on the first stage and hc_head + norm + head, the losses and the MTP block on the last. step() is one
// stage over the whole model.
#include <cmath>
#include <cstring>

#include "trex/base/error.hpp"
#include "trex/model/model.hpp"

namespace trex {

namespace {

// out [N,d] = Σ_j in[:, j, :] over the n streams of in [N,n,d] (the backward of copying a vector into n streams)
void sum_streams(float* out, const float* in, int64_t N, int64_t n, int64_t d) {
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++) {
        float* o = out + t * d;
        std::memcpy(o, in + t * n * d, sizeof(float) * d);
        for (int64_t j = 1; j < n; j++) {
            const float* s = in + (t * n + j) * d;
#pragma omp simd
            for (int64_t i = 0; i < d; i++) o[i] += s[i];
        }
    }
}

float* sized(std::vector<float>& v, size_t n) {
    if (v.size() < n) v.resize(n);
    return v.data();
}

}  // namespace

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
    workspace::scope ws(ws_);
    const model_config& cfg = config();
    const int L = cfg.n_layers();
    TREX_CHECK(r.first >= 0 && r.first < r.last && r.last <= L, "stage: bad block range [{}, {}) of {} blocks", r.first,
               r.last, L);
    const bool mtp = cfg.has_mtp() && batch.mtp_input_ids != nullptr;
    const bool last = r.last == L;
    const int64_t N = batch.B * batch.S, d = cfg.hidden_size, n = cfg.hc_mult;
    const int64_t nd = n * d;
    check_batch(batch, mtp);
    N_ = N;
    range_ = r;
    geo_ = make_geometry(cfg, batch.B, batch.S, batch.doc_start);
    acts_.plan(plan_stage(r, mtp, opts));
    // H(l) = input of block l (l in [first, last]); H(last + 1) = MTP output
    auto H = [&](int l) { return acts_.states.data() + (int64_t)(l - r.first) * N * nd; };

    step_result res;
    const int nblocks = L + (mtp ? 1 : 0);
    res.expert_load.resize(nblocks);
    res.block_bal.assign(nblocks, 0.0);
    res.block_idx.assign(nblocks, 0.0);
    if (opts.profile) profile_ = step_profile{};
    prof_ = opts.profile ? &profile_ : nullptr;

    // ---- forward: embedding broadcast to the n streams (first stage), or the previous stage's state
    if (r.first == 0) {
        section_timer timer(prof_, kernels_, "fwd.embed");
        float* e = ws.floats(N * d);
        kernels_.embedding_forward(e, batch.input_ids, params_.w("embed.weight"), N, d);
        float* h0 = H(0);
#pragma omp parallel for schedule(static)
        for (int64_t t = 0; t < N; t++)
            for (int64_t j = 0; j < n; j++) std::memcpy(h0 + t * nd + j * d, e + t * d, sizeof(float) * d);
    } else {
        std::memcpy(H(r.first), h_in, sizeof(float) * N * nd);
    }
    for (int l = r.first; l < r.last; l++) {
        layer_ctx c;
        c.batch = &batch;
        c.opts = &opts;
        c.layer = l;
        c.ratio = cfg.ratio(l);
        block_acts& A = acts_.block(l - r.first);
        block_forward(A, H(l + 1), H(l), wblocks_[l], c);
        res.block_bal[l] = A.bal;
        res.block_idx[l] = A.idx;
        res.expert_load[l].assign(A.load.begin(), A.load.end());
    }
    if (last)
        head_forward(res, batch, opts, H(L));
    else
        std::memcpy(h_out, H(r.last), sizeof(float) * N * nd);
    return res;
}

// The last stage after its blocks: logits = head(norm(hc_head(h_L))), the LM loss, then the MTP block and its loss.
// h_last [N,n,d] = H(L); the MTP output goes to the next slot of the states.
void dsv4_model::head_forward(step_result& res, const batch_view& batch, const step_options& opts, float* h_last) {
    workspace::scope ws(ws_);
    const model_config& cfg = config();
    const int L = cfg.n_layers();
    const bool mtp = cfg.has_mtp() && batch.mtp_input_ids != nullptr;
    const int64_t N = N_, d = cfg.hidden_size, n = cfg.hc_mult;
    const int64_t nd = n * d;
    const mhc_dims md = mhc_dims_of(cfg);
    const double eps = cfg.rms_norm_eps;
    head_acts& K = acts_.head;
    section_timer timer(prof_, kernels_, "fwd.head");
    float* x = K.x.data();
    float* xn = K.xn.data();
    float* xrstd = K.xrstd.data();
    float* hmix = K.hmix.data();
    float* hrho = K.hrho.data();
    kernels_.hc_head_forward(x, hmix, hrho, h_last, params_.w("hc_head_fn"), params_.w("hc_head_base"),
                             params_.w("hc_head_scale"), N, md);
    kernels_.rmsnorm_forward(xn, xrstd, x, params_.w("norm.weight"), N, d, eps);
    timer.next(nullptr);  // vocab_head times its own sections
    int64_t n_lm = 0;
    for (int64_t t = 0; t < N; t++) n_lm += batch.labels[t] >= 0;
    // head.weight's gradient is summed over the chunks of both heads in its transposed layout [d,V] (the fast
    // orientation of that GEMM) and added once at the end
    head_grad_t hg{opts.backward ? ws.floats(d * config().vocab_size) : nullptr};
    const double lm_sum =
        vocab_head(K.dxn.data(), &res.n_lm, xn, batch.labels, n_lm > 0 ? opts.loss_scale / (double)n_lm : 0.0, opts,
                   opts.keep_logits ? &logits_out_ : nullptr, hg);
    res.lm = n_lm > 0 ? lm_sum / (double)n_lm : 0.0;
    if (!mtp) {
        add_head_grad(hg);
        return;
    }

    // MTP: z = e_proj(enorm(embed[t+1])) + h_proj(hnorm(h_L)) → block → hc_head → norm → head
    timer.next("fwd.mtp_in");
    const std::string p = "mtp.0.";
    float* e2 = ws.floats(N * d);
    kernels_.embedding_forward(e2, batch.mtp_input_ids, params_.w("embed.weight"), N, d);
    float* en = K.en.data();
    float* erstd = K.erstd.data();
    kernels_.rmsnorm_forward(en, erstd, e2, params_.w(p + "enorm.weight"), N, d, eps);
    float* hn = K.hn.data();
    float* hrstd = K.hrstd.data();
    kernels_.rmsnorm_forward(hn, hrstd, h_last, params_.w(p + "hnorm.weight"), N * n, d, eps);
    std::span<float> z = acts_.mtp_in;
    kernels_.linear_fwd(z.data(), hn, params_.w(p + "h_proj.weight"), N * n, d, d, false);
    float* ep = ws.floats(N * d);
    kernels_.linear_fwd(ep, en, params_.w(p + "e_proj.weight"), N, d, d, false);
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++)
        for (int64_t j = 0; j < n; j++) {
            float* zz = z.data() + t * nd + j * d;
            const float* ee = ep + t * d;
            for (int64_t i = 0; i < d; i++) zz[i] += ee[i];
        }
    block_acts& A = acts_.block(L - range_.first);  // the MTP block is the stage's last
    layer_ctx c;
    c.batch = &batch;
    c.opts = &opts;
    c.layer = L;
    c.ratio = cfg.ratio(L);
    float* h_mtp = h_last + N * nd;  // H(L + 1)
    timer.next(nullptr);             // blocks time their own sections
    block_forward(A, h_mtp, z.data(), wblocks_[L], c);
    timer.next("fwd.head");
    res.block_bal[L] = A.bal;
    res.expert_load[L].assign(A.load.begin(), A.load.end());
    float* x2 = K.x2.data();
    float* xn2 = K.xn2.data();
    float* x2rstd = K.x2rstd.data();
    float* h2mix = K.h2mix.data();
    float* h2rho = K.h2rho.data();
    kernels_.hc_head_forward(x2, h2mix, h2rho, h_mtp, params_.w(p + "hc_head_fn"), params_.w(p + "hc_head_base"),
                             params_.w(p + "hc_head_scale"), N, md);
    kernels_.rmsnorm_forward(xn2, x2rstd, x2, params_.w(p + "norm.weight"), N, d, eps);
    timer.next(nullptr);
    int64_t n_mtp = 0;
    for (int64_t t = 0; batch.mtp_labels && t < N; t++) n_mtp += batch.mtp_labels[t] >= 0;
    const double scale = n_mtp > 0 ? opts.loss_scale * opts.lambda_mtp / (double)n_mtp : 0.0;
    const double mtp_sum = vocab_head(K.dxn2.data(), &res.n_mtp, xn2, batch.mtp_labels, scale, opts,
                                      opts.keep_logits ? &mtp_logits_out_ : nullptr, hg);
    res.mtp = n_mtp > 0 ? mtp_sum / (double)n_mtp : 0.0;
    add_head_grad(hg);
}

void dsv4_model::add_head_grad(const head_grad_t& hg) {
    if (!hg.used) return;
    section_timer timer(prof_, kernels_, "bwd.head");
    kernels_.add_transposed(params_.g("head.weight"), hg.gT, config().vocab_size, config().hidden_size);
}

// logits = xn·headᵀ [N,V], the summed cross-entropy against labels (−1: no loss; labels == nullptr: none at all),
// and — when a backward follows — the gradient of scale·Σ CE: dxn [N,d] assigned, head.weight's gradient summed in hg.
// By chunks of tokens, so that only a chunk's logits exist at a time ([chunk, V], ~16 MiB): the full [N,V] logits
// would be the largest activation of a step (2·V floats per token with MTP; at V = 129,280, 1 MiB per token).
// Chunks are fixed by V, so the sums' order is the same run to run.
double dsv4_model::vocab_head(float* dxn, int64_t* n_valid, const float* xn, const int32_t* labels, double scale,
                              const step_options& opts, std::vector<float>* logits_out, head_grad_t& hg) {
    workspace::scope ws(ws_);
    const int64_t N = N_, d = config().hidden_size, V = config().vocab_size;
    const int64_t chunk = opts.head_chunk > 0
                              ? opts.head_chunk
                              : std::max<int64_t>(128, (int64_t(16) << 20) / (int64_t)(sizeof(float) * V));
    const float* head = params_.w("head.weight");
    if (logits_out) logits_out->resize((size_t)N * V);
    float* lg = ws.floats(std::min(N, chunk) * V);
    double sum = 0.0;
    *n_valid = 0;
    for (int64_t t0 = 0; t0 < N; t0 += chunk) {
        const int64_t ct = std::min(chunk, N - t0);
        section_timer timer(prof_, kernels_, "fwd.head");
        kernels_.linear_fwd(lg, xn + t0 * d, head, ct, d, V, false);
        if (logits_out) std::memcpy(logits_out->data() + t0 * V, lg, sizeof(float) * ct * V);
        if (!labels) {  // no loss: a zero gradient
            if (opts.backward) std::memset(dxn + t0 * d, 0, sizeof(float) * ct * d);
            continue;
        }
        timer.next("fwd.cross_entropy");
        int64_t nv = 0;
        sum += kernels_.cross_entropy_fused(lg, &nv, labels + t0, ct, V, scale);
        *n_valid += nv;
        if (!opts.backward) continue;
        timer.next("bwd.head");
        kernels_.linear_bwd_data(dxn + t0 * d, lg, head, ct, d, V, false);
        // head.weightᵀ's gradient [d,V] (+)= xnᵀ·dlogits
        kernels_.gemm(true, false, d, V, ct, 1.0f, xn + t0 * d, d, lg, V, hg.used ? 1.0f : 0.0f, hg.gT, V);
        hg.used = true;
    }
    return sum;
}

// dh [N,n,d] = dL/d h_L from the main head and the MTP block; de_mtp [N,d] = the gradient of the MTP embedding lookup.
void dsv4_model::head_backward(float* dh, const batch_view& batch, const step_options& opts, float* h_last,
                               float* de_mtp) {
    workspace::scope ws(ws_);
    const model_config& cfg = config();
    const int L = cfg.n_layers();
    const bool mtp = cfg.has_mtp() && batch.mtp_input_ids != nullptr;
    const int64_t N = N_, d = cfg.hidden_size, n = cfg.hc_mult;
    const int64_t nd = n * d;
    const mhc_dims md = mhc_dims_of(cfg);
    const head_acts& K = acts_.head;
    section_timer timer(prof_, kernels_, "bwd.head");
    {
        float* dx = ws.floats(N * d);
        kernels_.rmsnorm_backward(dx, params_.g("norm.weight"), K.dxn.data(), K.x.data(), params_.w("norm.weight"),
                                  K.xrstd.data(), N, d);
        kernels_.hc_head_backward(dh, params_.g("hc_head_fn"), params_.g("hc_head_base"), params_.g("hc_head_scale"),
                                  dx, h_last, params_.w("hc_head_fn"), params_.w("hc_head_base"),
                                  params_.w("hc_head_scale"), K.hmix.data(), K.hrho.data(), N, md);
    }
    if (!mtp) return;
    const std::string p = "mtp.0.";
    float* h_mtp = h_last + N * nd;
    float* dx2 = ws.floats(N * d);
    kernels_.rmsnorm_backward(dx2, params_.g(p + "norm.weight"), K.dxn2.data(), K.x2.data(),
                              params_.w(p + "norm.weight"), K.x2rstd.data(), N, d);
    float* dz_out = ws.floats(N * nd);
    kernels_.hc_head_backward(dz_out, params_.g(p + "hc_head_fn"), params_.g(p + "hc_head_base"),
                              params_.g(p + "hc_head_scale"), dx2, h_mtp, params_.w(p + "hc_head_fn"),
                              params_.w(p + "hc_head_base"), params_.w(p + "hc_head_scale"), K.h2mix.data(),
                              K.h2rho.data(), N, md);
    float* dz = ws.floats(N * nd);
    block_acts& A = acts_.block(L - range_.first);
    layer_ctx c;
    c.batch = &batch;
    c.opts = &opts;
    c.layer = L;
    c.ratio = cfg.ratio(L);
    c.count_losses = false;
    timer.next("bwd.recompute");
    if (opts.recompute) block_forward(A, h_mtp, acts_.mtp_in.data(), wblocks_[L], c);
    timer.next(nullptr);
    block_backward(A, dz, dz_out, acts_.mtp_in.data(), wblocks_[L], gblocks_[L], c);
    timer.next("bwd.mtp_in");
    // z = h_proj(hn) (per stream) + e_proj(en) (broadcast)
    float* dhn = ws.floats(N * nd);
    kernels_.linear_bwd_data(dhn, dz, params_.w(p + "h_proj.weight"), N * n, d, d, false);
    kernels_.linear_bwd_weight(params_.g(p + "h_proj.weight"), dz, K.hn.data(), N * n, d, d);
    float* dep = ws.floats(N * d);
    sum_streams(dep, dz, N, n, d);
    float* den = ws.floats(N * d);
    kernels_.linear_bwd_data(den, dep, params_.w(p + "e_proj.weight"), N, d, d, false);
    kernels_.linear_bwd_weight(params_.g(p + "e_proj.weight"), dep, K.en.data(), N, d, d);
    float* e2 = ws.floats(N * d);
    kernels_.embedding_forward(e2, batch.mtp_input_ids, params_.w("embed.weight"), N, d);
    kernels_.rmsnorm_backward(de_mtp, params_.g(p + "enorm.weight"), den, e2, params_.w(p + "enorm.weight"),
                              K.erstd.data(), N, d);
    float* dh_extra = ws.floats(N * nd);
    kernels_.rmsnorm_backward(dh_extra, params_.g(p + "hnorm.weight"), dhn, h_last, params_.w(p + "hnorm.weight"),
                              K.hrstd.data(), N * n, d);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < N * nd; i++) dh[i] += dh_extra[i];
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
    const int64_t N = N_, d = cfg.hidden_size, n = cfg.hc_mult, V = cfg.vocab_size;
    const int64_t nd = n * d;
    auto H = [&](int l) { return acts_.states.data() + (int64_t)(l - r.first) * N * nd; };
    // the MTP embedding gradient: produced by the last stage, applied by the first
    float* de_mtp_buf = r.first == 0 && r.last == L ? sized(de_mtp_, N * d) : de_mtp;
    TREX_CHECK(!mtp || de_mtp_buf || (r.first > 0 && r.last < L),
               "stage: blocks [{}, {}) need the MTP embedding gradient buffer (de_mtp)", r.first, r.last);

    float* dh = ws.floats(N * nd);  // gradient w.r.t. H(l), l from last down to first
    if (r.last == L)
        head_backward(dh, batch, opts, H(L), de_mtp_buf);
    else
        std::memcpy(dh, dh_out, sizeof(float) * N * nd);
    section_timer timer(prof_, kernels_, nullptr);
    float* dh_prev = ws.floats(N * nd);
    for (int l = r.last - 1; l >= r.first; l--) {
        layer_ctx c;
        c.batch = &batch;
        c.opts = &opts;
        c.layer = l;
        c.ratio = cfg.ratio(l);
        c.count_losses = false;
        block_acts& A = acts_.block(l - r.first);
        timer.next("bwd.recompute");
        if (opts.recompute) block_forward(A, H(l + 1), H(l), wblocks_[l], c);
        timer.next(nullptr);
        block_backward(A, dh_prev, dh, H(l), wblocks_[l], gblocks_[l], c);
        std::swap(dh, dh_prev);
    }
    if (r.first > 0) {
        std::memcpy(dh_in, dh, sizeof(float) * N * nd);
        return;
    }
    // embedding: the MTP lookup's gradient first (as one process adds it during the MTP backward), then the n
    // streams, which are copies of e
    timer.next("bwd.embed");
    float* gembed = params_.g("embed.weight");
    if (mtp && de_mtp_buf) kernels_.embedding_backward(gembed, de_mtp_buf, batch.mtp_input_ids, N, d, V);
    float* de = ws.floats(N * d);
    sum_streams(de, dh, N, n, d);
    kernels_.embedding_backward(gembed, de, batch.input_ids, N, d, V);
}

}  // namespace trex
