// The whole model step (docs/model.md §3–4): embedding, blocks, hc_head + norm + head, MTP, losses, backward.
#include "trex/model/model.hpp"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "trex/base/error.hpp"
#include "trex/base/timer.hpp"
#include "trex/kernels/cpu/gemm.hpp"

namespace trex {

namespace {

// tmp slots of this file (block.cpp 0..4, attention_layer.cpp 10..30, moe_layer.cpp 40..48)
enum model_tmp : int {
    T_E = 60,
    T_X,
    T_XN,
    T_XRSTD,
    T_HMIX,
    T_HRHO,  // main head (forward, kept for backward)
    T_EN,
    T_ERSTD,
    T_HN,
    T_HRSTD,
    T_EP,
    T_X2,
    T_XN2,
    T_X2RSTD,
    T_H2MIX,
    T_H2RHO,  // MTP (forward, kept)
    T_DXN,
    T_DX,
    T_DXN2,
    T_DX2,
    T_DZOUT,
    T_DZ,
    T_DHN,
    T_DEP,
    T_DEN,
    T_DE,
    T_DHX,
    T_DH,
    T_DHPREV,  // backward
};

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

}  // namespace

section_timer::section_timer(step_profile* p, const char* name) : p_(p), name_(name) {
    if (p_) t0_ = now_seconds();
}

section_timer::~section_timer() {
    next(nullptr);
}

void section_timer::next(const char* name) {
    if (!p_) return;
    const double t = now_seconds();
    if (name_) {
        p_->seconds[name_] += t - t0_;
        p_->calls[name_]++;
    }
    name_ = name;
    t0_ = t;
}

float* dsv4_model::tmp(int slot, size_t n) {
    if ((size_t)slot >= tmp_.size()) tmp_.resize(slot + 1);
    if (tmp_[slot].size() < n) tmp_[slot].resize(n);
    return tmp_[slot].data();
}

dsv4_model::dsv4_model(const model_config& cfg) : params_(cfg) {
    const int nb = cfg.n_layers() + (cfg.has_mtp() ? 1 : 0);
    for (int l = 0; l < nb; l++) {
        wblocks_.push_back(bind_block(l, false));
        gblocks_.push_back(bind_block(l, true));
    }
}

block_weights dsv4_model::bind_block(int l, bool grads) {
    const model_config& cfg = config();
    const std::string p = l < cfg.n_layers() ? fmt::format("layers.{}.", l) : std::string("mtp.0.");
    auto T = [&](const std::string& name) { return grads ? params_.g(p + name) : params_.w(p + name); };
    block_weights b;
    b.layer = l;
    b.ratio = cfg.ratio(l);
    b.hash = l < cfg.n_layers() && cfg.is_hash_layer(l);
    b.attn_norm = T("attn_norm.weight");
    b.ffn_norm = T("ffn_norm.weight");
    b.hc_attn_fn = T("hc_attn_fn");
    b.hc_attn_base = T("hc_attn_base");
    b.hc_attn_scale = T("hc_attn_scale");
    b.hc_ffn_fn = T("hc_ffn_fn");
    b.hc_ffn_base = T("hc_ffn_base");
    b.hc_ffn_scale = T("hc_ffn_scale");
    b.sink = T("attn.attn_sink");
    b.wq_a = T("attn.wq_a.weight");
    b.q_norm = T("attn.q_norm.weight");
    b.wq_b = T("attn.wq_b.weight");
    b.wkv = T("attn.wkv.weight");
    b.kv_norm = T("attn.kv_norm.weight");
    b.wo_a = T("attn.wo_a.weight");
    b.wo_b = T("attn.wo_b.weight");
    if (b.ratio > 0) {
        b.c_wkv = T("attn.compressor.wkv.weight");
        b.c_wgate = T("attn.compressor.wgate.weight");
        b.c_ape = T("attn.compressor.ape");
        b.c_norm = T("attn.compressor.norm.weight");
    }
    if (b.ratio == 4) {
        b.i_wq_b = T("attn.indexer.wq_b.weight");
        b.i_wp = T("attn.indexer.weights_proj.weight");
        b.i_wkv = T("attn.indexer.compressor.wkv.weight");
        b.i_wgate = T("attn.indexer.compressor.wgate.weight");
        b.i_ape = T("attn.indexer.compressor.ape");
        b.i_norm = T("attn.indexer.compressor.norm.weight");
    }
    b.gate = T("ffn.gate.weight");
    if (b.hash) {
        if (!grads) b.tid2eid = params_.table(p + "ffn.gate.tid2eid");
    } else {
        b.gate_bias = T("ffn.gate.bias");
    }
    // w1 and w3 are adjacent in the arena (inventory order w1, w3, w2; both views 64-byte padded, and I·d is a
    // multiple of 16 when d is), so [w1; w3] is one [2I, d] matrix.
    b.sh_w13 = T("ffn.shared_experts.w1.weight");
    b.sh_w2 = T("ffn.shared_experts.w2.weight");
    TREX_CHECK(T("ffn.shared_experts.w3.weight") ==
                   b.sh_w13 + (int64_t)cfg.n_shared_experts * cfg.moe_intermediate_size * cfg.hidden_size,
               "internal layout: shared expert w1/w3 are not adjacent (hidden_size*moe_intermediate_size must be a "
               "multiple of 16)");
    for (int e = 0; e < cfg.n_routed_experts; e++) {
        float* w1 = T(fmt::format("ffn.experts.{}.w1.weight", e));
        TREX_CHECK(
            T(fmt::format("ffn.experts.{}.w3.weight", e)) == w1 + (int64_t)cfg.moe_intermediate_size * cfg.hidden_size,
            "internal layout: expert w1/w3 are not adjacent (hidden_size*moe_intermediate_size must be a "
            "multiple of 16)");
        b.w13.push_back(w1);
        b.w2.push_back(T(fmt::format("ffn.experts.{}.w2.weight", e)));
    }
    return b;
}

int dsv4_model::update_expert_biases(const step_result& result, double gamma) {
    int updated = 0;
    for (size_t l = 0; l < result.expert_load.size() && l < wblocks_.size(); l++) {
        const block_weights& W = wblocks_[l];
        const auto& load = result.expert_load[l];
        if (W.hash || !W.gate_bias || load.empty()) continue;
        double mean = 0.0;
        for (int64_t v : load) mean += (double)v;
        mean /= (double)load.size();
        for (size_t e = 0; e < load.size(); e++) {
            const double diff = mean - (double)load[e];
            W.gate_bias[e] += (float)(gamma * (diff > 0 ? 1.0 : (diff < 0 ? -1.0 : 0.0)));
        }
        updated++;
    }
    return updated;
}

const float* dsv4_model::block_output(int l) const {
    const model_config& cfg = config();
    const int64_t sz = N_ * cfg.hc_mult * cfg.hidden_size;
    return hs_.data() + (int64_t)(l + 1) * sz;
}

const std::vector<int32_t>& dsv4_model::csa_selection(int layer, int64_t* kw) const {
    const block_acts& A = acts_.size() == 1 ? acts_[0] : acts_.at(layer);
    *kw = A.kw;
    return A.sel;
}

step_result dsv4_model::step(const batch_view& batch, const step_options& opts) {
    const model_config& cfg = config();
    const int L = cfg.n_layers();
    const bool mtp = cfg.has_mtp() && batch.mtp_input_ids != nullptr;
    const int64_t N = batch.B * batch.S, d = cfg.hidden_size, n = cfg.hc_mult, V = cfg.vocab_size;
    const int64_t nd = n * d;
    const mhc_dims md = mhc_dims_of(cfg);
    const double eps = cfg.rms_norm_eps;
    TREX_CHECK(cfg.num_attention_heads <= 256, "num_attention_heads > 256 is not supported by the CPU attention");
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
    N_ = N;
    geo_ = make_geometry(cfg, batch.B, batch.S, batch.doc_start);
    const int nblocks = L + (mtp ? 1 : 0);
    acts_.resize(opts.recompute ? 1 : nblocks);
    hs_.resize((size_t)(L + 2) * N * nd);
    auto H = [&](int l) { return hs_.data() + (int64_t)l * N * nd; };  // H(l) = input of block l; H(L+1) = MTP out

    step_result res;
    res.expert_load.resize(nblocks);
    prof_ = opts.profile ? &res.profile : nullptr;
    auto ctx_of = [&](int l, bool count) {
        layer_ctx c;
        c.batch = &batch;
        c.opts = &opts;
        c.layer = l;
        c.ratio = cfg.ratio(l);
        c.count_losses = count;
        return c;
    };
    auto acts_of = [&](int l) -> block_acts& { return opts.recompute ? acts_[0] : acts_[l]; };

    // ---- forward: embedding broadcast to the n streams
    section_timer timer(prof_, "fwd.embed");
    float* e = tmp(T_E, N * d);
    cpu::embedding_forward(e, batch.input_ids, params_.w("embed.weight"), N, d);
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < N; t++)
        for (int64_t j = 0; j < n; j++) std::memcpy(H(0) + t * nd + j * d, e + t * d, sizeof(float) * d);
    timer.next(nullptr);  // blocks time their own sections
    for (int l = 0; l < L; l++) {
        block_acts& A = acts_of(l);
        block_forward(A, H(l + 1), H(l), wblocks_[l], ctx_of(l, true));
        res.bal += A.bal;
        res.idx += A.idx;
        res.expert_load[l] = A.load;
    }
    // head: logits = head(norm(hc_head(h_L)))
    timer.next("fwd.head");
    const float* head = params_.w("head.weight");
    float* x = tmp(T_X, N * d);
    float* xn = tmp(T_XN, N * d);
    float* xrstd = tmp(T_XRSTD, N);
    float* hmix = tmp(T_HMIX, N * n);
    float* hrho = tmp(T_HRHO, N);
    cpu::hc_head_forward(x, hmix, hrho, H(L), params_.w("hc_head_fn"), params_.w("hc_head_base"),
                         params_.w("hc_head_scale"), N, md);
    cpu::rmsnorm_forward(xn, xrstd, x, params_.w("norm.weight"), N, d, eps);
    std::vector<float>& logits = logits_;
    logits.resize((size_t)N * V);
    cpu::linear_fwd(logits.data(), xn, head, N, d, V);
    if (opts.keep_logits) logits_out_ = logits;
    timer.next("fwd.cross_entropy");
    int64_t n_lm = 0;
    for (int64_t t = 0; t < N; t++) n_lm += batch.labels[t] >= 0;
    double lm_sum =
        cpu::cross_entropy_fused(logits.data(), &res.n_lm, batch.labels, N, V, n_lm > 0 ? opts.loss_scale / (double)n_lm : 0.0);
    res.lm = n_lm > 0 ? lm_sum / (double)n_lm : 0.0;

    // MTP: z = e_proj(enorm(embed[t+1])) + h_proj(hnorm(h_L)) → block → hc_head → norm → head
    std::vector<float>& mtp_logits = mtp_logits_;
    float *en = nullptr, *erstd = nullptr, *hn = nullptr, *hrstd = nullptr, *x2 = nullptr, *xn2 = nullptr,
          *x2rstd = nullptr, *h2mix = nullptr, *h2rho = nullptr;
    std::vector<float>& z = mtp_in_;
    if (mtp) {
        timer.next("fwd.mtp_in");
        const std::string p = "mtp.0.";
        float* e2 = tmp(T_E, N * d);
        cpu::embedding_forward(e2, batch.mtp_input_ids, params_.w("embed.weight"), N, d);
        en = tmp(T_EN, N * d);
        erstd = tmp(T_ERSTD, N);
        cpu::rmsnorm_forward(en, erstd, e2, params_.w(p + "enorm.weight"), N, d, eps);
        hn = tmp(T_HN, N * nd);
        hrstd = tmp(T_HRSTD, N * n);
        cpu::rmsnorm_forward(hn, hrstd, H(L), params_.w(p + "hnorm.weight"), N * n, d, eps);
        z.resize((size_t)N * nd);
        cpu::linear_fwd(z.data(), hn, params_.w(p + "h_proj.weight"), N * n, d, d);
        float* ep = tmp(T_EP, N * d);
        cpu::linear_fwd(ep, en, params_.w(p + "e_proj.weight"), N, d, d);
#pragma omp parallel for schedule(static)
        for (int64_t t = 0; t < N; t++)
            for (int64_t j = 0; j < n; j++) {
                float* zz = z.data() + t * nd + j * d;
                const float* ee = ep + t * d;
                for (int64_t i = 0; i < d; i++) zz[i] += ee[i];
            }
        block_acts& A = acts_of(L);
        timer.next(nullptr);  // blocks time their own sections
        block_forward(A, H(L + 1), z.data(), wblocks_[L], ctx_of(L, true));
        timer.next("fwd.head");
        res.bal += A.bal;
        res.expert_load[L] = A.load;
        x2 = tmp(T_X2, N * d);
        xn2 = tmp(T_XN2, N * d);
        x2rstd = tmp(T_X2RSTD, N);
        h2mix = tmp(T_H2MIX, N * n);
        h2rho = tmp(T_H2RHO, N);
        cpu::hc_head_forward(x2, h2mix, h2rho, H(L + 1), params_.w(p + "hc_head_fn"), params_.w(p + "hc_head_base"),
                             params_.w(p + "hc_head_scale"), N, md);
        cpu::rmsnorm_forward(xn2, x2rstd, x2, params_.w(p + "norm.weight"), N, d, eps);
        mtp_logits.resize((size_t)N * V);
        cpu::linear_fwd(mtp_logits.data(), xn2, head, N, d, V);
        if (opts.keep_logits) mtp_logits_out_ = mtp_logits;
        timer.next("fwd.cross_entropy");
        if (batch.mtp_labels) {
            int64_t n_mtp = 0;
            for (int64_t t = 0; t < N; t++) n_mtp += batch.mtp_labels[t] >= 0;
            const double scale = n_mtp > 0 ? opts.loss_scale * opts.lambda_mtp / (double)n_mtp : 0.0;
            double mtp_sum = cpu::cross_entropy_fused(mtp_logits.data(), &res.n_mtp, batch.mtp_labels, N, V, scale);
            res.mtp = n_mtp > 0 ? mtp_sum / (double)n_mtp : 0.0;
        } else {
            std::fill(mtp_logits.begin(), mtp_logits.end(), 0.0f);
        }
    }
    res.loss = res.lm + opts.lambda_mtp * res.mtp + res.bal + opts.lambda_idx * res.idx;
    if (!opts.backward) return res;

    // ---- backward
    timer.next("bwd.head");
    float* ghead = params_.g("head.weight");
    float* dh = tmp(T_DH, N * nd);  // gradient w.r.t. H(L)
    {
        float* dxn = tmp(T_DXN, N * d);
        cpu::linear_bwd_data(dxn, logits.data(), head, N, d, V);
        cpu::linear_bwd_weight(ghead, logits.data(), xn, N, d, V);
        float* dx = tmp(T_DX, N * d);
        cpu::rmsnorm_backward(dx, params_.g("norm.weight"), dxn, x, params_.w("norm.weight"), xrstd, N, d);
        cpu::hc_head_backward(dh, params_.g("hc_head_fn"), params_.g("hc_head_base"), params_.g("hc_head_scale"), dx,
                              H(L), params_.w("hc_head_fn"), params_.w("hc_head_base"), params_.w("hc_head_scale"),
                              hmix, hrho, N, md);
    }
    if (mtp) {
        const std::string p = "mtp.0.";
        float* dxn2 = tmp(T_DXN2, N * d);
        cpu::linear_bwd_data(dxn2, mtp_logits.data(), head, N, d, V);
        cpu::linear_bwd_weight(ghead, mtp_logits.data(), xn2, N, d, V);
        float* dx2 = tmp(T_DX2, N * d);
        cpu::rmsnorm_backward(dx2, params_.g(p + "norm.weight"), dxn2, x2, params_.w(p + "norm.weight"), x2rstd, N, d);
        float* dz_out = tmp(T_DZOUT, N * nd);
        cpu::hc_head_backward(dz_out, params_.g(p + "hc_head_fn"), params_.g(p + "hc_head_base"),
                              params_.g(p + "hc_head_scale"), dx2, H(L + 1), params_.w(p + "hc_head_fn"),
                              params_.w(p + "hc_head_base"), params_.w(p + "hc_head_scale"), h2mix, h2rho, N, md);
        float* dz = tmp(T_DZ, N * nd);
        block_acts& A = acts_of(L);
        timer.next("bwd.recompute");
        if (opts.recompute) block_forward(A, H(L + 1), z.data(), wblocks_[L], ctx_of(L, false));
        timer.next(nullptr);
        block_backward(A, dz, dz_out, z.data(), wblocks_[L], gblocks_[L], ctx_of(L, false));
        timer.next("bwd.mtp_in");
        // z = h_proj(hn) (per stream) + e_proj(en) (broadcast)
        float* dhn = tmp(T_DHN, N * nd);
        cpu::linear_bwd_data(dhn, dz, params_.w(p + "h_proj.weight"), N * n, d, d);
        cpu::linear_bwd_weight(params_.g(p + "h_proj.weight"), dz, hn, N * n, d, d);
        float* dep = tmp(T_DEP, N * d);
        sum_streams(dep, dz, N, n, d);
        float* den = tmp(T_DEN, N * d);
        cpu::linear_bwd_data(den, dep, params_.w(p + "e_proj.weight"), N, d, d);
        cpu::linear_bwd_weight(params_.g(p + "e_proj.weight"), dep, en, N, d, d);
        float* de = tmp(T_DE, N * d);
        float* e2 = tmp(T_E, N * d);
        cpu::embedding_forward(e2, batch.mtp_input_ids, params_.w("embed.weight"), N, d);
        cpu::rmsnorm_backward(de, params_.g(p + "enorm.weight"), den, e2, params_.w(p + "enorm.weight"), erstd, N, d);
        cpu::embedding_backward(params_.g("embed.weight"), de, batch.mtp_input_ids, N, d, V);
        float* dh_extra = tmp(T_DHX, N * nd);
        cpu::rmsnorm_backward(dh_extra, params_.g(p + "hnorm.weight"), dhn, H(L), params_.w(p + "hnorm.weight"), hrstd,
                              N * n, d);
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < N * nd; i++) dh[i] += dh_extra[i];
    }
    float* dh_prev = tmp(T_DHPREV, N * nd);
    for (int l = L - 1; l >= 0; l--) {
        block_acts& A = acts_of(l);
        timer.next("bwd.recompute");
        if (opts.recompute) block_forward(A, H(l + 1), H(l), wblocks_[l], ctx_of(l, false));
        timer.next(nullptr);
        block_backward(A, dh_prev, dh, H(l), wblocks_[l], gblocks_[l], ctx_of(l, false));
        std::swap(dh, dh_prev);
    }
    // embedding: the n streams are copies of e
    timer.next("bwd.embed");
    float* de = tmp(T_DE, N * d);
    sum_streams(de, dh, N, n, d);
    cpu::embedding_backward(params_.g("embed.weight"), de, batch.input_ids, N, d, V);
    return res;
}

}  // namespace trex
