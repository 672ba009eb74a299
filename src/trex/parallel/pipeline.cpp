#include "trex/parallel/pipeline.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "trex/base/error.hpp"

namespace trex::parallel {

const char* pp_op_name(pp_op op) {
    switch (op) {
        case pp_op::recv_forward:
            return "recv_forward";
        case pp_op::forward:
            return "forward";
        case pp_op::send_forward:
            return "send_forward";
        case pp_op::recv_backward:
            return "recv_backward";
        case pp_op::backward:
            return "backward";
        case pp_op::send_backward:
            return "send_backward";
    }
    return "?";
}

pp_schedule_kind parse_pp_schedule(const std::string& s) {
    if (s == "1f1b") return pp_schedule_kind::one_f_one_b;
    if (s == "interleaved") return pp_schedule_kind::interleaved;
    throw error(fmt::format("dist.pp_schedule = \"{}\": must be \"1f1b\" or \"interleaved\"", s));
}

namespace {

// The k-th forward (or backward) of a rank in the interleaved order: micro-batches in groups of pp, each group
// through the chunks in turn (ascending for forwards, descending for backwards).
pp_action virtual_step(int k, int pp, int v, bool forward) {
    const int group = k / (pp * v), in_group = k % (pp * v);
    const int c = in_group / pp;
    pp_action a;
    a.mb = group * pp + in_group % pp;
    a.chunk = forward ? c : v - 1 - c;
    return a;
}

}  // namespace

std::vector<pp_action> pipeline_schedule(pp_schedule_kind kind, int pp, int v, int m, int rank) {
    TREX_CHECK(pp >= 1 && rank >= 0 && rank < pp && m >= 1 && v >= 1, "pipeline: bad schedule pp {} v {} m {} rank {}",
               pp, v, m, rank);
    if (kind == pp_schedule_kind::one_f_one_b)
        TREX_CHECK(v == 1, "dist.pp_virtual = {}: virtual stages need dist.pp_schedule = \"interleaved\"", v);
    else
        TREX_CHECK(m % pp == 0, "--pp {} with dist.pp_schedule = \"interleaved\" needs data.grad_accum divisible by {}",
                   pp, pp);
    const int chunks = pp * v;
    std::vector<pp_action> out;
    auto fwd = [&](pp_action a) {
        const int mc = a.chunk * pp + rank;
        if (mc > 0) out.push_back({pp_op::recv_forward, a.mb, a.chunk});
        out.push_back({pp_op::forward, a.mb, a.chunk});
        if (mc < chunks - 1) out.push_back({pp_op::send_forward, a.mb, a.chunk});
    };
    auto bwd = [&](pp_action a) {
        const int mc = a.chunk * pp + rank;
        if (mc < chunks - 1) out.push_back({pp_op::recv_backward, a.mb, a.chunk});
        out.push_back({pp_op::backward, a.mb, a.chunk});
        if (mc > 0) out.push_back({pp_op::send_backward, a.mb, a.chunk});
    };
    // total (micro-batch, chunk) pairs of this rank and its warm-up forwards
    const int total = m * v;
    int warmup = 0;
    if (kind == pp_schedule_kind::one_f_one_b)
        warmup = std::min(pp - rank - 1, m);
    else
        warmup = m == pp ? total : std::min((pp - rank - 1) * 2 + (v - 1) * pp, total);
    auto step_of = [&](int k, bool forward) {
        if (kind == pp_schedule_kind::one_f_one_b) return pp_action{pp_op::forward, k, 0};
        return virtual_step(k, pp, v, forward);
    };
    for (int k = 0; k < warmup; k++) fwd(step_of(k, true));
    for (int k = 0; k < total - warmup; k++) {
        fwd(step_of(warmup + k, true));
        bwd(step_of(k, false));
    }
    for (int k = total - warmup; k < total; k++) bwd(step_of(k, false));
    return out;
}

int peak_in_flight(const std::vector<pp_action>& steps) {
    int now = 0, peak = 0;
    for (const pp_action& a : steps) {
        if (a.op == pp_op::forward) peak = std::max(peak, ++now);
        if (a.op == pp_op::backward) now--;
    }
    return peak;
}

double theoretical_bubble(pp_schedule_kind kind, int pp, int v, int m) {
    const double work = kind == pp_schedule_kind::interleaved ? (double)v * m : (double)m;
    return (double)(pp - 1) / (work + pp - 1);
}

std::vector<int> pipeline_partition(const model_config& cfg, int pp, int v, const std::vector<int>& layers) {
    const int L = cfg.n_layers(), C = pp * v;
    const int hash = std::min(cfg.num_hash_layers, L);
    if (!layers.empty()) {
        TREX_CHECK((int)layers.size() == C, "dist.pp_layers has {} entries; --pp {} x dist.pp_virtual {} needs {}",
                   layers.size(), pp, v, C);
        int sum = 0;
        for (int n : layers) {
            TREX_CHECK(n >= 1, "dist.pp_layers: every model chunk needs at least one block, got {}", n);
            sum += n;
        }
        TREX_CHECK(sum == L, "dist.pp_layers sums to {} blocks; the model has {}", sum, L);
        TREX_CHECK(layers[0] >= hash, "dist.pp_layers: the first stage must hold the {} hash-routed layer(s), got {}",
                   hash, layers[0]);
        return layers;
    }
    TREX_CHECK(L >= C, "--pp {} x dist.pp_virtual {} = {} model chunks exceed the model's {} layers", pp, v, C, L);
    std::vector<int> out(C, L / C);
    for (int c = 0; c < L % C; c++) out[c]++;
    if (out[0] < hash) {
        // the hash-routed layers stay on the first chunk; the rest is balanced over the others
        TREX_CHECK(L - hash >= C - 1,
                   "--pp {} x dist.pp_virtual {}: the first stage must hold the {} hash-routed "
                   "layers, leaving too few for the other {} model chunks",
                   pp, v, hash, C - 1);
        out[0] = hash;
        const int rest = L - hash;
        for (int c = 1; c < C; c++) out[c] = rest / (C - 1) + (c - 1 < rest % (C - 1) ? 1 : 0);
    }
    return out;
}

int pipeline_layout::chunk_of_block(int l) const {
    int first = 0;
    for (int c = 0; c < chunks(); c++) {
        if (l < first + blocks[c]) return c;
        first += blocks[c];
    }
    return chunks() - 1;  // the MTP block
}

int pipeline_layout::chunk_of(const tensor_spec& spec) const {
    if (spec.layer >= 0) return chunk_of_block(spec.layer);
    return spec.is_embedding ? 0 : chunks() - 1;
}

bool pipeline_layout::holds(const tensor_spec& spec) const {
    return rank_of_chunk(chunk_of(spec)) == rank;
}

bool pipeline_layout::stores(const tensor_spec& spec, bool has_mtp) const {
    return holds(spec) || (spec.is_embedding && has_mtp && rank_of_chunk(chunks() - 1) == rank);
}

std::string pipeline_layout::describe(int m) const {
    std::string s = fmt::format(
        "pp: {}, {} stages x {} chunk(s) per stage, {} micro-batches per step and pipeline; "
        "theoretical bubble {:.3f}\n",
        kind == pp_schedule_kind::interleaved ? "interleaved 1F1B" : "1F1B", pp, v, m,
        theoretical_bubble(kind, pp, v, m));
    const int C = chunks();
    for (int r = 0; r < pp; r++) {
        s += fmt::format("pp:   stage {}:", r);
        for (int c = 0; c < v; c++) {
            const int mc = c * pp + r;
            int first = 0;
            for (int k = 0; k < mc; k++) first += blocks[k];
            s += fmt::format("{} chunk {}: {}blocks {}-{}{}", c ? " |" : "", mc, mc == 0 ? "embed + " : "", first,
                             first + blocks[mc] - 1, mc == C - 1 ? " + head + MTP" : "");
        }
        s += "\n";
    }
    return s;
}

pipeline_layout make_pipeline_layout(const model_config& cfg, pp_schedule_kind kind, int pp, int v, int rank,
                                     const std::vector<int>& layers) {
    pipeline_layout p;
    p.kind = kind;
    p.pp = pp;
    p.v = v;
    p.rank = rank;
    TREX_CHECK(v >= 1, "dist.pp_virtual must be at least 1, got {}", v);
    TREX_CHECK(kind == pp_schedule_kind::interleaved || v == 1,
               "dist.pp_virtual = {}: virtual stages need dist.pp_schedule = \"interleaved\"", v);
    p.blocks = pipeline_partition(cfg, pp, v, layers);
    for (int c = 0; c < v; c++) {
        const int mc = c * pp + rank;
        int first = 0;
        for (int k = 0; k < mc; k++) first += p.blocks[k];
        p.ranges.push_back({first, first + p.blocks[mc]});
    }
    return p;
}

}  // namespace trex::parallel
