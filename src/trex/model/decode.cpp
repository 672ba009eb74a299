// dsv4_model::decode: the new tokens of several sequences through the blocks' decode entry points and the main head.
#include <algorithm>
#include <utility>

#include "trex/base/error.hpp"
#include "trex/model/model.hpp"

namespace trex {

namespace {

// A block's tensors for N decoded tokens: the mHC units, the projections (no compressed rows and no key lists: the
// caches hold those) and the MoE with every expert computed here.
block_act_shape decode_block_shape(const model_config& cfg, int64_t N) {
    block_act_shape s;
    s.ratio = 0;
    s.N = N;
    s.d = cfg.hidden_size;
    s.n = cfg.hc_mult;
    s.rows = mhc_dims_of(cfg).rows();
    s.dc = cfg.q_lora_rank;
    s.H = cfg.num_attention_heads;
    s.c = cfg.head_dim;
    s.groups = cfg.o_groups;
    s.dg = cfg.o_lora_rank;
    s.E = cfg.n_routed_experts;
    s.K = cfg.num_experts_per_tok;
    s.Is = (int64_t)cfg.n_shared_experts * cfg.moe_intermediate_size;
    s.routed = N * s.K;
    s.a13_width = 2 * (int64_t)cfg.moe_intermediate_size;
    return s;
}

// A decoding call's options: forward only, no losses.
step_options decode_options() {
    step_options o;
    o.backward = false;
    o.alpha_bal = 0.0;
    o.lambda_idx = 0.0;
    return o;
}

// The head rows of each sequence: all its new tokens', or its last.
std::vector<int64_t> head_rows(std::span<const int64_t> counts, bool all_logits) {
    std::vector<int64_t> rows(counts.begin(), counts.end());
    if (!all_logits) std::fill(rows.begin(), rows.end(), 1);
    return rows;
}

}  // namespace

// Checks the call and returns each sequence's length in the caches of layers [layer0, layer1) (which must agree).
std::vector<int64_t> dsv4_model::check_decode(std::span<sequence_cache* const> seqs, std::span<const int32_t> ids,
                                              std::span<const int64_t> counts, int layer0, int layer1) const {
    const int64_t V = config().vocab_size;
    TREX_CHECK(!tp_ && !dispatcher_ && params_.holds_all(),
               "decode: the model is laid out for parallel training; cached decoding runs on a whole model");
    TREX_CHECK(!seqs.empty() && seqs.size() == counts.size(), "decode: {} sequences and {} token counts", seqs.size(),
               counts.size());
    int64_t N = 0;
    std::vector<int64_t> lens;
    for (size_t b = 0; b < seqs.size(); b++) {
        const sequence_cache& s = *seqs[b];
        TREX_CHECK(counts[b] >= 1, "decode: sequence {} has {} new tokens", b, counts[b]);
        TREX_CHECK((int)s.layers.size() >= layer1, "decode: sequence {} has a cache of {} layers, {} are needed", b,
                   s.layers.size(), layer1);
        const int64_t len = s.layers[(size_t)layer0].len;
        for (int l = layer0; l < layer1; l++)
            TREX_CHECK(s.layers[(size_t)l].len == len, "decode: sequence {}: layer {} holds {} tokens, not {}", b, l,
                       s.layers[(size_t)l].len, len);
        lens.push_back(len);
        N += counts[b];
    }
    TREX_CHECK((int64_t)ids.size() == N, "decode: {} token ids for {} new tokens", ids.size(), N);
    for (int64_t t = 0; t < N; t++)
        TREX_CHECK(ids[(size_t)t] >= 0 && ids[(size_t)t] < V, "decode: token id {} is outside the vocabulary",
                   ids[(size_t)t]);
    return lens;
}

void dsv4_model::decode(std::span<sequence_cache* const> seqs, std::span<const int32_t> ids,
                        std::span<const int64_t> counts, std::vector<float>& logits, bool all_logits,
                        std::vector<float>* final_states) {
    decode_rows(seqs, ids, counts, head_rows(counts, all_logits), logits, final_states);
}

void dsv4_model::decode_rows(std::span<sequence_cache* const> seqs, std::span<const int32_t> ids,
                             std::span<const int64_t> counts, std::span<const int64_t> rows_wanted,
                             std::vector<float>& logits, std::vector<float>* final_states) {
    const model_config& cfg = config();
    const int L = cfg.n_layers();
    const int64_t d = cfg.hidden_size, n = cfg.hc_mult, nd = n * d;
    const std::vector<int64_t> lens = check_decode(seqs, ids, counts, 0, L);
    const int64_t rows = check_rows(counts, rows_wanted);
    for (size_t b = 0; b < seqs.size(); b++)
        TREX_CHECK(seqs[b]->len == lens[b], "decode: sequence {} says {} tokens, its layers hold {}", b, seqs[b]->len,
                   lens[b]);
    const int64_t N = (int64_t)ids.size();

    set_decode_geometry(decode_geo_, cfg, lens, counts);
    batch_view batch;
    batch.B = 1;
    batch.S = N;
    batch.input_ids = ids.data();
    const step_options opts = decode_options();
    const layer_env e{cfg, decode_kernels_, ws_, decode_geo_, batch, opts, decode_prof_};
    stage_plan plan;
    plan.states = 2 * N * nd;
    plan.head = {rows, d, n, true, false};
    plan.blocks = {decode_block_shape(cfg, N)};
    plan.recompute = true;  // one block's tensors, reused by every block
    decode_acts_.plan(plan, decode_kernels_.memory);
    float* h = decode_acts_.states.data();
    float* h_next = h + N * nd;
    {
        section_timer timer(decode_prof_, decode_kernels_, "dec.embed");
        workspace::scope ws(ws_);
        float* x = ws.floats(N * d);
        decode_kernels_.embedding_forward(x, ids.data(), params_.w("embed.weight"), N, d);
        decode_kernels_.broadcast_streams(h, x, N, n, d, false);
    }
    std::vector<attention_cache*> layer_caches(seqs.size());
    for (int l = 0; l < L; l++) {
        for (size_t b = 0; b < seqs.size(); b++) layer_caches[b] = &seqs[b]->layers[(size_t)l];
        blocks_[(size_t)l].decode(decode_acts_.block(0), layer_caches, h_next, h, wblocks_[(size_t)l], e);
        std::swap(h, h_next);
    }
    for (size_t b = 0; b < seqs.size(); b++) seqs[b]->len += counts[b];
    if (final_states) final_states->assign(h, h + N * nd);

    // the head over each sequence's last rows_wanted[b] tokens (gathered into the free state when not all of them)
    const float* hr = last_rows(h_next, h, rows_wanted, N, nd);
    if (!hr) {
        logits.clear();
        return;
    }
    batch_geometry head_geo;
    head_geo.N = rows;
    const layer_env he{cfg, decode_kernels_, ws_, head_geo, batch, opts, decode_prof_};
    head_grad no_grad;
    int64_t n_valid = 0;
    head_.forward(main_head_saved(decode_acts_.head), &n_valid, hr, nullptr, 0.0, &logits, no_grad, whead_, he);
}

void dsv4_model::decode_mtp(std::span<sequence_cache* const> seqs, std::span<const float> h_last,
                            std::span<const int32_t> next_ids, std::span<const int64_t> counts,
                            std::vector<float>& logits, bool all_logits) {
    decode_mtp_rows(seqs, h_last, next_ids, counts, head_rows(counts, all_logits), logits);
}

void dsv4_model::decode_mtp_rows(std::span<sequence_cache* const> seqs, std::span<const float> h_last,
                                 std::span<const int32_t> next_ids, std::span<const int64_t> counts,
                                 std::span<const int64_t> rows_wanted, std::vector<float>& logits) {
    const model_config& cfg = config();
    const int L = cfg.n_layers();
    const int64_t d = cfg.hidden_size, n = cfg.hc_mult, nd = n * d;
    TREX_CHECK(cfg.has_mtp() && mtp_, "decode: the model has no MTP module");
    const std::vector<int64_t> lens = check_decode(seqs, next_ids, counts, L, L + 1);
    const int64_t rows = check_rows(counts, rows_wanted);
    const int64_t N = (int64_t)next_ids.size();
    TREX_CHECK((int64_t)h_last.size() == N * nd, "decode: {} state values for {} positions of {} each", h_last.size(),
               N, nd);

    set_decode_geometry(decode_geo_, cfg, lens, counts);
    batch_view batch;
    batch.B = 1;
    batch.S = N;
    batch.input_ids = next_ids.data();
    batch.mtp_input_ids = next_ids.data();
    const step_options opts = decode_options();
    const layer_env e{cfg, decode_kernels_, ws_, decode_geo_, batch, opts, decode_prof_};
    stage_plan plan;
    plan.states = 2 * N * nd;
    plan.head = {N, d, n, true, true};
    plan.blocks = {decode_block_shape(cfg, N)};
    plan.recompute = true;
    decode_acts_.plan(plan, decode_kernels_.memory);
    std::span<float> z = decode_acts_.states.subspan(0, (size_t)(N * nd));
    float* h_mtp = decode_acts_.states.data() + N * nd;
    std::vector<attention_cache*> caches(seqs.size());
    for (size_t b = 0; b < seqs.size(); b++) caches[b] = &seqs[b]->layers[(size_t)L];
    mtp_->decode(decode_acts_.block(0), decode_acts_.head, z, h_mtp, h_last.data(), caches, wmtp_, e);
    // the head over each sequence's last rows_wanted[b] positions (gathered into z, free after the block)
    const float* hr = last_rows(z.data(), h_mtp, rows_wanted, N, nd);
    if (!hr) {
        logits.clear();
        return;
    }
    batch_geometry head_geo;
    head_geo.N = rows;
    const layer_env he{cfg, decode_kernels_, ws_, head_geo, batch, opts, decode_prof_};
    mtp_->head(decode_acts_.head, hr, logits, wmtp_, he);
}

// Checks 0 ≤ rows_wanted[b] ≤ counts[b]; returns their sum.
int64_t dsv4_model::check_rows(std::span<const int64_t> counts, std::span<const int64_t> rows_wanted) const {
    TREX_CHECK(rows_wanted.size() == counts.size(), "decode: {} row counts for {} sequences", rows_wanted.size(),
               counts.size());
    int64_t rows = 0;
    for (size_t b = 0; b < counts.size(); b++) {
        TREX_CHECK(rows_wanted[b] >= 0 && rows_wanted[b] <= counts[b],
                   "decode: sequence {} wants logits of {} of its {} new tokens", b, rows_wanted[b], counts[b]);
        rows += rows_wanted[b];
    }
    return rows;
}

// The last rows_wanted[b] rows of each sequence's span in src [N, w] (decode_geo_'s docs), one after another: src
// itself when every row is wanted, else gathered into scratch [Σ rows_wanted, w]; nullptr when no row is.
const float* dsv4_model::last_rows(float* scratch, const float* src, std::span<const int64_t> rows_wanted, int64_t N,
                                   int64_t w) const {
    int64_t rows = 0;
    for (const int64_t r : rows_wanted) rows += r;
    if (rows == 0) return nullptr;
    if (rows == N) return src;
    float* dst = scratch;
    int64_t at = 0;
    for (size_t b = 0; b < rows_wanted.size(); b++) {
        const doc_span s = decode_geo_.docs[b];
        decode_kernels_.copy(dst + at * w, src + (s.start + s.len - rows_wanted[b]) * w, rows_wanted[b] * w);
        at += rows_wanted[b];
    }
    return scratch;
}

}  // namespace trex
