// attention_layer::decode: the attention of new tokens over the sequences' caches (attention_cache.hpp). The
// projections, the attention kernel and the output projection are forward's; what differs is where the keys come
// from — the window ring, the compressed entries kept so far and the compressors' pending rows.
#include <algorithm>
#include <cmath>

#include "trex/base/error.hpp"
#include "trex/model/layers/attention.hpp"

namespace trex {

namespace {

// The compressor over one sequence's run: the cache's pending rows (positions from..len-1) followed by the T new
// tokens' rows (w = coff·c wide). pooled [n_new, c] = the pre-norm entries the new tokens complete (entries
// len/m .. (len+T)/m − 1); the rows from keep_from on stay in kv/gate. Returns n_new.
int64_t pool_run(float* pooled, std::vector<float>& kv, std::vector<float>& gate, int64_t from, int64_t len,
                 int64_t keep_from, const float* kv_new, const float* gate_new, int64_t T, const float* ape, int m,
                 int64_t c, bool overlap, workspace& wsp, const kernel_table& k) {
    workspace::scope ws(wsp);
    const int64_t w = (overlap ? 2 : 1) * c;
    kv.insert(kv.end(), kv_new, kv_new + T * w);
    gate.insert(gate.end(), gate_new, gate_new + T * w);
    const int64_t R = len + T - from;  // the run's rows; `from` is a block start
    const int64_t n_new = (len + T) / m - len / m;
    if (n_new > 0) {
        const int64_t n_run = R / m, j0 = len / m - from / m;  // the run's first new entry
        float* all = ws.floats(n_run * c);
        const doc_span run{0, R};
        const int64_t offset0 = 0;
        k.compressor_forward(all, kv.data(), gate.data(), ape, &run, &offset0, 1, m, c, overlap);
        k.copy(pooled, all + j0 * c, n_new * c);
    }
    kv.erase(kv.begin(), kv.begin() + (keep_from - from) * w);
    gate.erase(gate.begin(), gate.begin() + (keep_from - from) * w);
    return n_new;
}

// What the release's QAT does to new entries (model_config::qat == "release"): nothing, the compressed KV's
// (qat_kv) or the indexer keys' (qat_index).
enum class entry_qat { none, kv, index };

// Appends n entries to `entries` (width c): rmsnorm(pooled) with the compressor's norm weight, then RoPE at the
// entries' positions (first + i)·m, then the QAT simulation `q`.
void append_entries(std::vector<float>& entries, const float* pooled, int64_t n, int64_t first, int m, int64_t c,
                    const float* norm, double eps, const rope_table_t<float>& rope, entry_qat q,
                    const model_config& cfg, workspace& wsp, const kernel_table& k) {
    if (n == 0) return;
    workspace::scope ws(wsp);
    const size_t old = entries.size();
    entries.resize(old + (size_t)(n * c));
    float* dst = entries.data() + old;
    k.rmsnorm_forward(dst, ws.floats(n), pooled, norm, n, c, eps);
    int32_t* pos = ws.ints(n);
    for (int64_t i = 0; i < n; i++) pos[i] = (int32_t)((first + i) * m);
    k.rope_forward(dst, pos, rope, n, 1, c, false);
    if (q == entry_qat::kv) qat_kv(k, dst, n, cfg);
    if (q == entry_qat::index) qat_index(k, dst, n, c);
}

}  // namespace

// The indexer's choice for one sequence's new tokens: sel [T, kw] entry indices (−1 padded), nsel [T].
struct attention_layer::decode_keys {
    int64_t kw = 0;
    std::vector<int32_t> sel, nsel;
};

// The compressed kv of every sequence: the new tokens' compressor projections joined to the pending rows, the entries
// they complete normed, roped and appended.
void attention_layer::compress_cached(std::span<attention_cache* const> caches, const block_acts& A,
                                      const attention_weights& W, const layer_env& env) const {
    workspace::scope ws(env.ws);
    const kernel_table& k = env.k;
    const int m = ratio_;
    const int64_t N = env.N(), d = env.cfg.hidden_size, c = env.cfg.head_dim, w = (m == 4 ? 2 : 1) * c;
    float* ckv = ws.floats(N * w);
    float* cg = ws.floats(N * w);
    k.linear_fwd(ckv, A.a1.data(), W.c_wkv, N, d, w, false);
    k.linear_fwd(cg, A.a1.data(), W.c_wgate, N, d, w, false);
    for (size_t b = 0; b < caches.size(); b++) {
        attention_cache& C = *caches[b];
        const doc_span s = env.geo.docs[b];
        float* pooled = ws.floats(std::max<int64_t>((C.len + s.len) / m - C.len / m, 1) * c);
        const int64_t n = pool_run(pooled, C.pend_kv, C.pend_gate, C.pending_from, C.len, C.keep_from(C.len + s.len),
                                   ckv + s.start * w, cg + s.start * w, s.len, W.c_ape, m, c, m == 4, env.ws, k);
        append_entries(C.entries, pooled, n, C.len / m, m, c, W.c_norm, env.cfg.rms_norm_eps, env.geo.rope_for_ratio(m),
                       env.cfg.qat_release() ? entry_qat::kv : entry_qat::none, env.cfg, env.ws, k);
    }
}

// The lightning indexer over the cache (CSA): the new tokens' queries and head weights, their compressed keys
// appended to index_keys, then each query's scores over the visible entries and its top-k.
void attention_layer::index_cached(std::vector<decode_keys>& out, std::span<attention_cache* const> caches,
                                   const block_acts& A, const attention_weights& W, const layer_env& env) const {
    workspace::scope ws(env.ws);
    const model_config& cfg = env.cfg;
    const kernel_table& k = env.k;
    const int64_t N = env.N(), d = cfg.hidden_size, dc = cfg.q_lora_rank;
    const int64_t HI = cfg.index_n_heads, cI = cfg.index_head_dim;
    const rope_table_t<float> rope = env.geo.rope_for_ratio(4);
    float* iq = ws.floats(N * HI * cI);
    float* ikv = ws.floats(N * 2 * cI);
    float* ig = ws.floats(N * 2 * cI);
    float* iw = ws.floats(N * HI);
    k.linear_fwd(iq, A.qr.data(), W.i_wq_b, N, dc, HI * cI, false);
    k.rope_forward(iq, env.geo.pos.data(), rope, N, HI, cI, false);
    if (cfg.qat_release()) qat_index(k, iq, N * HI, cI);
    k.linear_fwd(ikv, A.a1.data(), W.i_wkv, N, d, 2 * cI, false);
    k.linear_fwd(ig, A.a1.data(), W.i_wgate, N, d, 2 * cI, false);
    k.linear_fwd(iw, A.a1.data(), W.i_wp, N, d, HI, false);
    k.scale(iw, iw, (float)(1.0 / std::sqrt((double)cI * (double)HI)), N * HI);
    out.assign(caches.size(), decode_keys{});
    for (size_t b = 0; b < caches.size(); b++) {
        workspace::scope wsb(env.ws);
        attention_cache& C = *caches[b];
        const doc_span s = env.geo.docs[b];
        float* pooled = wsb.floats(std::max<int64_t>((C.len + s.len) / 4 - C.len / 4, 1) * cI);
        const int64_t n =
            pool_run(pooled, C.ipend_kv, C.ipend_gate, C.pending_from, C.len, C.keep_from(C.len + s.len),
                     ikv + s.start * 2 * cI, ig + s.start * 2 * cI, s.len, W.i_ape, 4, cI, true, env.ws, k);
        append_entries(C.index_keys, pooled, n, C.len / 4, 4, cI, W.i_norm, cfg.rms_norm_eps, rope,
                       cfg.qat_release() ? entry_qat::index : entry_qat::none, cfg, env.ws, k);
        // scores over the sequence's entries (one document: entry offset 0), then the top-k of each query
        const int64_t n_entries = (int64_t)C.index_keys.size() / cI, ld = std::max<int64_t>(n_entries, 1);
        float* scores = wsb.floats(s.len * ld);
        k.fill_zero(scores, s.len * ld);
        int32_t* doc0 = wsb.ints(s.len);
        std::fill(doc0, doc0 + s.len, 0);
        const int64_t offset0 = 0;
        const int32_t* pos = env.geo.pos.data() + s.start;
        k.indexer_scores_forward(scores, iq + s.start * HI * cI, C.index_keys.data(), iw + s.start * HI, doc0, pos,
                                 &offset0, s.len, (int)HI, cI, 4, ld);
        decode_keys& dk = out[b];
        dk.kw = env.opts.dense_csa ? ld : std::max<int64_t>(std::min<int64_t>(cfg.index_topk, n_entries), 1);
        dk.sel.resize((size_t)(s.len * dk.kw));
        dk.nsel.resize((size_t)s.len);
        // torch ties: the row the release ranks is every entry the sequence has after these tokens
        int32_t* rows = nullptr;
        if (cfg.torch_ties()) {
            rows = wsb.ints(s.len);
            std::fill(rows, rows + s.len, (int32_t)n_entries);
        }
        k.indexer_topk(dk.sel.data(), dk.nsel.data(), scores, pos, s.len, 4, (int)dk.kw, ld, env.opts.dense_csa, rows);
    }
}

// Per sequence, a region of kv rows: the ring's window positions [w0, len), the new tokens, then the compressed
// entries its queries use (HCA: all; CSA: the union of the selections); and every query's key list, as forward
// builds it: the window ascending, then the compressed entries ascending.
struct attention_layer::decode_plan {
    struct region {
        int64_t row0 = 0, w0 = 0, wc = 0, ne = 0;  // first row, first window position, window rows, entry rows
        std::vector<int32_t> row_of;               // CSA: entry → its row after the new tokens (−1: not used)
    };
    std::vector<region> regions;
    std::vector<int64_t> key_offset{0};  // [N + 1]
    std::vector<int32_t> key_idx;
    int64_t rows = 0;
};

void attention_layer::plan_keys(decode_plan& plan, std::span<attention_cache* const> caches,
                                const std::vector<decode_keys>& chosen, const layer_env& env) const {
    const int m = ratio_;
    const int64_t c = env.cfg.head_dim, n_win = env.cfg.sliding_window;
    plan.regions.resize(caches.size());
    for (size_t b = 0; b < caches.size(); b++) {
        const attention_cache& C = *caches[b];
        const doc_span s = env.geo.docs[b];
        decode_plan::region& R = plan.regions[b];
        R.row0 = plan.rows;
        R.w0 = std::max<int64_t>(C.len - n_win + 1, 0);
        R.wc = C.len - R.w0;
        const int64_t n_entries = m > 0 ? (int64_t)C.entries.size() / c : 0;
        R.ne = m == 4 ? 0 : n_entries;
        if (m == 4) {  // the entries some query selected, in entry order
            const decode_keys& dk = chosen[b];
            R.row_of.assign((size_t)n_entries, -1);
            for (int64_t j = 0; j < s.len; j++)
                for (int32_t q = 0; q < dk.nsel[j]; q++) R.row_of[(size_t)dk.sel[(size_t)(j * dk.kw + q)]] = 1;
            for (int32_t& r : R.row_of)
                if (r >= 0) r = (int32_t)R.ne++;
        }
        const int64_t comp0 = R.row0 + R.wc + s.len;
        for (int64_t j = 0; j < s.len; j++) {
            const int64_t p = C.len + j;
            for (int64_t q = std::max<int64_t>(p - n_win + 1, 0); q <= p; q++)
                plan.key_idx.push_back((int32_t)(R.row0 + q - R.w0));
            if (m == 4) {
                const decode_keys& dk = chosen[b];
                for (int32_t q = 0; q < dk.nsel[j]; q++)
                    plan.key_idx.push_back((int32_t)(comp0 + R.row_of[(size_t)dk.sel[(size_t)(j * dk.kw + q)]]));
            } else if (m > 0) {
                for (int64_t i = 0; i < (p + 1) / m; i++) plan.key_idx.push_back((int32_t)(comp0 + i));
            }
            plan.key_offset.push_back((int64_t)plan.key_idx.size());
        }
        plan.rows = comp0 + R.ne;
    }
}

// kv [plan.rows, c]: each region's window rows from the ring, the new tokens' rows, its compressed entries
void attention_layer::gather_kv(float* kv, const decode_plan& plan, std::span<attention_cache* const> caches,
                                const block_acts& A, const layer_env& env) const {
    const int m = ratio_;
    const int64_t c = env.cfg.head_dim, n_win = env.cfg.sliding_window;
    for (size_t b = 0; b < caches.size(); b++) {
        const attention_cache& C = *caches[b];
        const doc_span s = env.geo.docs[b];
        const decode_plan::region& R = plan.regions[b];
        for (int64_t q = R.w0; q < C.len; q++)
            env.k.copy(kv + (R.row0 + q - R.w0) * c, C.window.data() + (q % n_win) * c, c);
        env.k.copy(kv + (R.row0 + R.wc) * c, A.kv_all.data() + s.start * c, s.len * c);
        float* comp = kv + (R.row0 + R.wc + s.len) * c;
        if (m == 4) {
            for (size_t i = 0; i < R.row_of.size(); i++)
                if (R.row_of[i] >= 0) env.k.copy(comp + R.row_of[i] * c, C.entries.data() + i * c, c);
        } else if (m > 0) {
            env.k.copy(comp, C.entries.data(), R.ne * c);
        }
    }
}

// The new tokens' window kv into the rings; the sequences advance.
void attention_layer::advance_caches(std::span<attention_cache* const> caches, const block_acts& A,
                                     const layer_env& env) const {
    const int m = ratio_;
    const int64_t c = env.cfg.head_dim, n_win = env.cfg.sliding_window;
    for (size_t b = 0; b < caches.size(); b++) {
        attention_cache& C = *caches[b];
        const doc_span s = env.geo.docs[b];
        const int64_t end = C.len + s.len;
        C.window.resize((size_t)(std::min(end, n_win) * c));
        for (int64_t p = std::max(C.len, end - n_win); p < end; p++)
            env.k.copy(C.window.data() + (p % n_win) * c, A.kv_all.data() + (s.start + p - C.len) * c, c);
        if (m > 0) C.pending_from = C.keep_from(end);
        C.len = end;
    }
}

void attention_layer::decode(block_acts& A, std::span<attention_cache* const> caches, const attention_weights& W,
                             const layer_env& env) const {
    TREX_CHECK(!env.tp, "layer {}: cached decoding under tensor parallelism is not supported", layer_);
    TREX_CHECK(caches.size() == env.geo.docs.size(), "layer {}: {} caches for {} sequences", layer_, caches.size(),
               env.geo.docs.size());
    workspace::scope ws(env.ws);
    const int64_t N = env.N(), c = env.cfg.head_dim, H = env.cfg.num_attention_heads;
    section_timer timer(env.prof, env.k, "dec.attn.proj");
    project(A, W, env);
    timer.next("dec.attn.compress");
    if (ratio_ > 0) compress_cached(caches, A, W, env);
    timer.next("dec.attn.indexer");
    std::vector<decode_keys> chosen;
    if (ratio_ == 4) index_cached(chosen, caches, A, W, env);
    timer.next("dec.attn.keys");
    decode_plan plan;
    plan_keys(plan, caches, chosen, env);
    float* kv = ws.floats(std::max<int64_t>(plan.rows, 1) * c);
    gather_kv(kv, plan, caches, A, env);
    timer.next("dec.attn.core");
    float* P = ws.floats(std::max<int64_t>((int64_t)plan.key_idx.size() * H, 1));
    env.k.attention_forward(A.o.data(), P, A.q.data(), kv, W.sink, plan.key_offset.data(), plan.key_idx.data(), N,
                            (int)H, c, 1.0 / std::sqrt((double)c));
    timer.next("dec.attn.out");
    output_forward(A, W, env);
    timer.next("dec.attn.keys");
    advance_caches(caches, A, env);
}

}  // namespace trex
