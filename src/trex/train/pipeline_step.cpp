#include "trex/train/pipeline_step.hpp"

#include <cstring>

#include "trex/base/error.hpp"

namespace trex {

pipeline_step::pipeline_step(dsv4_model& model, parallel::communicator& world, const parallel::dist_context& dc,
                             parallel::pipeline_layout layout, expert_dispatcher* ep, int64_t grad_accum,
                             std::vector<float>& grad_acc)
    : model_(model),
      world_(world),
      mesh_(dc.mesh),
      runner_(model, world, dc.mesh, std::move(layout), ep),
      pipe_comm_(world.split(dc.mesh.dp_rank * dc.mesh.tp + dc.mesh.tp_rank, dc.mesh.pp_rank)),
      grad_accum_(grad_accum),
      grad_acc_(grad_acc) {
    const parallel::pipeline_layout& pl = runner_.layout();
    const param_store& P = model.params();
    chunk_spans_.resize(pl.v);
    for (size_t i = 0; i < P.specs.size(); i++) {
        const tensor_spec& s = P.specs[i];
        if (s.role != tensor_role::weight) continue;
        const int mc = pl.chunk_of(s);
        if (pl.rank_of_chunk(mc) != pl.rank) continue;
        std::vector<span>& spans = chunk_spans_[mc / pl.pp];
        if (!spans.empty() && spans.back().offset + spans.back().count == P.offset[i])
            spans.back().count += s.numel();  // adjacent in the arena: one range
        else
            spans.push_back({P.offset[i], s.numel()});
    }
}

void pipeline_step::run(const std::vector<train_batch>& batches, const step_options& so, std::vector<double>& fields,
                        std::vector<std::vector<int64_t>>& load) {
    param_store& P = model_.params();
    const model_config& cfg = model_.config();
    std::vector<batch_view> views;
    for (const train_batch& b : batches) views.push_back(b.view());
    // Each chunk's gradients: G_0 copied, then G_1, G_2, ... added in micro-batch order (a chunk's backwards run in
    // micro-batch order in both schedules), then cleared for the next micro-batch: the single-process order.
    std::vector<char> started(runner_.layout().v, 0);
    auto after_backward = [&](int, int chunk) {
        if (grad_accum_ == 1) return;
        float* G = P.grads.data();
        float* A = grad_acc_.data();
        for (const span& s : chunk_spans_[chunk]) {
            float* g = G + s.offset;
            float* a = A + s.offset;
            const int64_t n = s.count;
            if (!started[chunk]) {
                std::memcpy(a, g, sizeof(float) * n);
            } else {
#pragma omp parallel for schedule(static) if (n > (1 << 16))
                for (int64_t i = 0; i < n; i++) a[i] += g[i];
            }
            std::memset(g, 0, sizeof(float) * n);
        }
        started[chunk] = 1;
    };
    const std::vector<step_result> parts = runner_.run(views, so, after_backward);

    // The stages' parts per micro-batch: [lm, mtp, bal per block, idx per block]. Every value comes from one stage
    // (the others hold 0), so the sum over the pipeline is exact; the totals are then formed in block order.
    const int64_t m = (int64_t)batches.size();
    const int nb = (int)parts[0].block_bal.size();
    const int64_t F = 2 + 2 * (int64_t)nb;
    std::vector<double> x(m * F, 0.0);
    for (int64_t k = 0; k < m; k++) {
        double* f = x.data() + k * F;
        f[0] = parts[k].lm;
        f[1] = parts[k].mtp;
        for (int l = 0; l < nb; l++) {
            f[2 + l] = parts[k].block_bal[l];
            f[2 + nb + l] = parts[k].block_idx[l];
        }
    }
    // (pipe_comm_ holds the stages of my (dp, tp) index: each value has one contributor there, under TP as well)
    pipe_comm_->all_reduce(x.data(), (int64_t)x.size(), parallel::dtype::f64, parallel::reduce_op::sum);
    fields.assign(5 * m, 0.0);
    for (int64_t k = 0; k < m; k++) {
        const double* f = x.data() + k * F;
        step_result r;
        r.lm = f[0];
        r.mtp = f[1];
        r.block_bal.assign(f + 2, f + 2 + nb);
        r.block_idx.assign(f + 2 + nb, f + 2 + 2 * nb);
        finish_step_result(r, so, cfg.n_layers());
        double* o = fields.data() + 5 * k;
        o[0] = r.loss, o[1] = r.lm, o[2] = r.mtp, o[3] = r.bal, o[4] = r.idx;
    }
    load.assign(nb, std::vector<int64_t>(cfg.n_routed_experts, 0));
    for (const step_result& r : parts)
        for (int l = 0; l < nb; l++)
            for (size_t e = 0; e < r.expert_load[l].size(); e++) load[l][e] += r.expert_load[l][e];
}

void pipeline_step::sync_embedding() {
    if (mesh_.pp == 1 || !model_.config().has_mtp()) return;
    param_store& P = model_.params();
    const int t = P.index("embed.weight");
    const int64_t n = P.specs[t].numel();
    if (mesh_.pp_rank == 0)
        pipe_comm_->send(P.w(t), n, parallel::dtype::f32, mesh_.pp - 1, 1);
    else if (mesh_.pp_rank == mesh_.pp - 1)
        pipe_comm_->recv(P.w(t), n, parallel::dtype::f32, 0, 1);
}

}  // namespace trex
