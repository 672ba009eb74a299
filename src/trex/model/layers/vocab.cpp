#include "trex/model/layers/vocab.hpp"

namespace trex {

namespace {

// ids → rows of this rank's table: id − first where this rank holds it, −1 (a zero row / no update) elsewhere.
std::vector<int32_t> local_ids(const int32_t* ids, int64_t N, tp_slice rows) {
    std::vector<int32_t> local((size_t)N);
    for (int64_t n = 0; n < N; n++) {
        const int64_t r = (int64_t)ids[n] - rows.first;
        local[n] = r >= 0 && r < rows.count ? (int32_t)r : -1;
    }
    return local;
}

}  // namespace

tp_slice vocab_rows(const layer_env& env) {
    return tp_local(env.tp, env.cfg.vocab_size);
}

void vocab_embedding_forward(float* out, const int32_t* ids, const float* table, const layer_env& env) {
    const int64_t N = env.N(), d = env.cfg.hidden_size;
    if (!env.tp) return env.k.embedding_forward(out, ids, table, N, d);
    const std::vector<int32_t> local = local_ids(ids, N, vocab_rows(env));
    env.k.embedding_forward(out, local.data(), table, N, d);
    env.tp->all_reduce_sum(out, N * d);
}

void vocab_embedding_backward(float* dtable, const float* dout, const int32_t* ids, const layer_env& env) {
    const int64_t N = env.N(), d = env.cfg.hidden_size;
    const tp_slice rows = vocab_rows(env);
    if (!env.tp) return env.k.embedding_backward(dtable, dout, ids, N, d, rows.count);
    const std::vector<int32_t> local = local_ids(ids, N, rows);
    env.k.embedding_backward(dtable, dout, local.data(), N, d, rows.count);
}

double vocab_cross_entropy(float* lg, int64_t* n_valid, const int32_t* labels, int64_t ct, double scale,
                           const layer_env& env) {
    const kernel_table& k = env.k;
    const tp_slice cols = vocab_rows(env);
    if (!env.tp) return k.cross_entropy_fused(lg, n_valid, labels, ct, cols.count, scale);
    workspace::scope ws(env.ws);
    float* mx = ws.floats(ct);   // [ct] row max, then over all ranks
    float* tgt = ws.floats(ct);  // [ct] the label's logit (held by one rank)
    float* sum = ws.floats(ct);  // [ct] Σ exp(logit − max), then over all ranks
    k.cross_entropy_shard_stats(mx, tgt, lg, labels, cols.first, ct, cols.count);
    env.tp->all_reduce_max(mx, ct);
    env.tp->all_reduce_sum(tgt, ct);
    k.cross_entropy_shard_exp(sum, lg, mx, ct, cols.count);
    env.tp->all_reduce_sum(sum, ct);
    return k.cross_entropy_shard_grad(lg, n_valid, mx, sum, tgt, labels, cols.first, ct, cols.count, scale);
}

void vocab_gather_logits(float* dst, const float* lg, int64_t ct, const layer_env& env) {
    const int64_t V = env.cfg.vocab_size;
    const tp_slice cols = vocab_rows(env);
    if (!env.tp) return env.k.copy(dst, lg, ct * V);
    env.k.fill_zero(dst, ct * V);
    for (int64_t t = 0; t < ct; t++) env.k.copy(dst + t * V + cols.first, lg + t * cols.count, cols.count);
    env.tp->all_reduce_sum(dst, ct * V);
}

}  // namespace trex
