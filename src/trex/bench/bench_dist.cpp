#include "trex/bench/bench_dist.hpp"

#include <omp.h>

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trex/base/error.hpp"
#include "trex/base/timer.hpp"
#include "trex/model/embedded_config.hpp"
#include "trex/model/model.hpp"
#include "trex/parallel/context.hpp"
#include "trex/parallel/expert_parallel.hpp"
#include "trex/parallel/parallelize.hpp"
#include "trex/parallel/pipeline_runner.hpp"
#include "trex/parallel/tensor_parallel.hpp"
#include "trex/train/synthetic_batch.hpp"

namespace trex::bench {

using namespace trex::parallel;

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

dist_bench_row bench_layout(communicator& world, const model_config& mc, int tp, int ep, bool overlap,
                            const dist_bench_options& opt) {
    dist_context dc(world, {tp, 1, ep}, mc);
    dsv4_model model(mc);
    const parallel_bindings bound = parallelize(model, dc, overlap);
    param_store& P = model.params();
    P.init(7);
    optim_config oc;
    zero_optimizer zo(P, oc, world, dc.replica_groups(P));
    // the TP ranks of a DP index share its batch
    const synthetic_batch batch = make_synthetic_batch(opt.batch, opt.seq, mc.vocab_size, 100 + dc.mesh.dp_rank);
    step_options so;
    std::vector<double> step_t, exposed_t, ep_t, tp_t, sync_t;
    auto sync_wait = [&] { return world.stats.wait_seconds + dc.edp_comm->stats.wait_seconds; };
    for (int s = 0; s < opt.warmup + opt.steps; s++) {
        world.barrier();
        const double w0 = sync_wait();
        const double e0 = dc.ep_comm->stats.wait_seconds, p0 = dc.tp_comm->stats.wait_seconds;
        const double t0 = now_seconds();
        P.zero_grads();
        model.step(batch.view(), so);
        if (bound.tp) bound.tp->drop_replicated_gradients(P);
        zo.reduce_gradients();
        const double gn = zo.grad_norm();
        zo.step(1e-4, gn);
        const double t1 = now_seconds();
        const double sync = sync_wait() - w0;
        const double epw = dc.ep_comm->stats.wait_seconds - e0;
        const double tpw = dc.tp_comm->stats.wait_seconds - p0;
        if (s < opt.warmup) continue;
        step_t.push_back(t1 - t0);
        sync_t.push_back(sync);
        ep_t.push_back(epw);
        tp_t.push_back(tpw);
        exposed_t.push_back(sync + epw + tpw);
    }
    constexpr double MiB = 1024.0 * 1024.0;
    double v[7] = {median(step_t),
                   median(exposed_t),
                   median(ep_t),
                   median(sync_t),
                   median(tp_t),
                   2.0 * sizeof(float) * (double)P.n_floats / MiB,
                   2.0 * sizeof(float) * (double)zo.owned_floats() / MiB};
    world.all_reduce(v, 7, dtype::f64, reduce_op::max);
    dist_bench_row r;
    r.layout = dc.mesh.layout();
    r.tp = dc.mesh.tp, r.pp = dc.mesh.pp, r.dp = dc.mesh.dp, r.ep_size = dc.mesh.ep;
    r.ep = ep > 1;
    r.overlap = overlap;
    r.step = v[0];
    r.exposed = v[1];
    r.compute = v[0] - v[1];
    r.ep_exposed = v[2];
    r.sync_exposed = v[3];
    r.tp_exposed = v[4];
    r.weights_grads_mib = v[5];
    r.optimizer_mib = v[6];
    return r;
}

// A pipeline layout: pp stages (dp = world / pp), `micro` micro-batches per step through the schedule, then the
// ZeRO-1 gradient reduction and optimizer inside each stage.
dist_bench_row bench_pipeline(communicator& world, const model_config& mc, int pp, pp_schedule_kind kind, int v,
                              const std::vector<int>& layers, const dist_bench_options& opt) {
    dist_context dc(world, {1, pp, 1}, mc);
    dsv4_model model(mc);
    const pipeline_layout pl = make_pipeline_layout(mc, kind, pp, v, dc.mesh.pp_rank, layers);
    model.hold_only([&pl, &mc](const tensor_spec& s) { return pl.stores(s, mc.has_mtp()); });  // the stage's tensors
    param_store& P = model.params();
    P.init(7);
    optim_config oc;
    zero_optimizer zo(P, oc, world, dc.replica_groups(P, [&pl](const tensor_spec& s) { return pl.holds(s); }));
    pipeline_runner runner(model, world, dc.mesh, pl, nullptr);
    std::vector<synthetic_batch> batches;
    std::vector<batch_view> views;
    for (int k = 0; k < opt.micro; k++)
        batches.push_back(
            make_synthetic_batch(opt.batch, opt.seq, mc.vocab_size, 100 + k * dc.mesh.dp + dc.mesh.dp_rank));
    for (const auto& b : batches) views.push_back(b.view());
    step_options so;
    so.loss_scale = 1.0 / opt.micro;
    std::vector<double> step_t, exposed_t, pipe_t, bubble_t, sync_t;
    for (int s = 0; s < opt.warmup + opt.steps; s++) {
        world.barrier();
        const double t0 = now_seconds();
        P.zero_grads();
        runner.run(views, so, nullptr);
        const double w1 = world.stats.wait_seconds + dc.stage_comm->stats.wait_seconds;
        zo.reduce_gradients();
        const double gn = zo.grad_norm();
        zo.step(1e-4, gn);
        const double t1 = now_seconds();
        const double sync = world.stats.wait_seconds + dc.stage_comm->stats.wait_seconds - w1;
        // the pipeline's time is the slowest rank's (every rank starts after the barrier); a rank's bubble is the
        // part of it in which it did not compute: waiting for a neighbour, or done while the pipeline drains
        double T = runner.run_seconds();
        world.all_reduce(&T, 1, dtype::f64, reduce_op::max);
        if (s < opt.warmup) continue;
        step_t.push_back(t1 - t0);
        pipe_t.push_back(T);
        bubble_t.push_back(1.0 - (runner.run_seconds() - runner.wait_seconds()) / T);
        sync_t.push_back(sync);
        exposed_t.push_back(sync + runner.wait_seconds());
    }
    double mx[5] = {median(step_t), median(exposed_t), median(sync_t), median(pipe_t), median(bubble_t)};
    const double my_bubble = mx[4];
    std::vector<double> per_rank(world.size());
    world.all_gather(&my_bubble, per_rank.data(), std::vector<int64_t>(world.size(), 1), dtype::f64);
    world.all_reduce(mx, 5, dtype::f64, reduce_op::max);
    double mean_bubble = 0;
    for (double b : per_rank) mean_bubble += b;
    dist_bench_row r;
    r.layout = dc.mesh.layout();
    r.pipelined = true;
    r.tp = dc.mesh.tp, r.pp = dc.mesh.pp, r.dp = dc.mesh.dp, r.ep_size = dc.mesh.ep;
    r.schedule = kind == pp_schedule_kind::interleaved ? "interleaved" : "1F1B";
    r.v = v;
    r.micro = opt.micro;
    r.step = mx[0];
    r.exposed = mx[1];
    r.compute = mx[0] - mx[1];
    r.sync_exposed = mx[2];
    r.pipeline = mx[3];
    r.bubble_max = mx[4];
    r.bubble_rank = per_rank;
    for (size_t c = 0; c < pl.blocks.size(); c++) r.split += fmt::format("{}{}", c ? "+" : "", pl.blocks[c]);
    r.bubble = mean_bubble / world.size();
    r.bubble_theory = theoretical_bubble(kind, pp, v, opt.micro);
    return r;
}

}  // namespace

std::vector<dist_bench_row> run_dist_bench(communicator& world, const dist_bench_options& opt) {
    const model_config mc =
        opt.config.empty() ? config_from_json(nlohmann::json::parse(embedded_tiny_config_json()), "<embedded v4-tiny>")
                           : load_config(opt.config);
    std::vector<int> eps = opt.eps;
    if (eps.empty())
        for (int ep = 1; ep <= world.size(); ep++)
            if (world.size() % ep == 0 && mc.n_routed_experts % ep == 0) eps.push_back(ep);
    std::vector<int> pps = opt.pps;
    if (pps.empty() && world.size() > 1 && mc.n_layers() >= world.size()) pps.push_back(world.size());
    // the layouts run in turn, `rounds` times (so that a burst of load on a shared machine hits them alike); each
    // row is the median over the rounds of the per-round medians
    std::vector<std::vector<dist_bench_row>> runs;
    for (int round = 0; round < std::max(opt.rounds, 1); round++) {
        std::vector<dist_bench_row> rows;
        for (int ep : eps) {
            if (ep == 1) {
                rows.push_back(bench_layout(world, mc, 1, 1, false, opt));
                continue;
            }
            rows.push_back(bench_layout(world, mc, 1, ep, false, opt));
            rows.push_back(bench_layout(world, mc, 1, ep, true, opt));
        }
        for (int tp : opt.tps)
            if (tp > 1) rows.push_back(bench_layout(world, mc, tp, 1, false, opt));
        for (int pp : pps) {
            rows.push_back(bench_pipeline(world, mc, pp, pp_schedule_kind::one_f_one_b, 1, {}, opt));
            if (!opt.pp_layers.empty())
                rows.push_back(bench_pipeline(world, mc, pp, pp_schedule_kind::one_f_one_b, 1, opt.pp_layers, opt));
            if (mc.n_layers() >= 2 * pp && opt.micro % pp == 0)
                rows.push_back(bench_pipeline(world, mc, pp, pp_schedule_kind::interleaved, 2, {}, opt));
        }
        runs.push_back(rows);
    }
    std::vector<dist_bench_row> rows = runs[0];
    for (size_t i = 0; i < rows.size(); i++) {
        auto med = [&](double dist_bench_row::*f) {
            std::vector<double> v;
            for (const auto& r : runs) v.push_back(r[i].*f);
            return median(v);
        };
        rows[i].step = med(&dist_bench_row::step);
        rows[i].compute = med(&dist_bench_row::compute);
        rows[i].exposed = med(&dist_bench_row::exposed);
        rows[i].ep_exposed = med(&dist_bench_row::ep_exposed);
        rows[i].sync_exposed = med(&dist_bench_row::sync_exposed);
        rows[i].tp_exposed = med(&dist_bench_row::tp_exposed);
        rows[i].pipeline = med(&dist_bench_row::pipeline);
        rows[i].bubble = med(&dist_bench_row::bubble);
        rows[i].bubble_max = med(&dist_bench_row::bubble_max);
        for (size_t q = 0; q < rows[i].bubble_rank.size(); q++) {
            std::vector<double> v;
            for (const auto& r : runs) v.push_back(r[i].bubble_rank[q]);
            rows[i].bubble_rank[q] = median(v);
        }
    }
    return rows;
}

std::string dist_bench_json(const std::vector<dist_bench_row>& rows, int world, const dist_bench_options& opt) {
    nlohmann::ordered_json j;
    j["bench"] = "trex bench dist";
    j["world"] = world;
    j["config"] = opt.config.empty() ? std::string("<embedded v4-tiny>") : opt.config;
    j["batch"] = opt.batch;  // rows per rank and step
    j["seq"] = opt.seq;
    j["steps"] = opt.steps;
    j["rounds"] = opt.rounds;
    j["optimizer"] = "muon";  // the run's default optim_config: Muon + AdamW, ZeRO-1
    j["omp_threads"] = omp_get_max_threads();
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& r : rows) {
        if (r.pipelined) continue;  // pipeline rows (bubble, micro-batches) are in the table only
        a.push_back({{"layout", r.layout},
                     {"tp", r.tp},
                     {"pp", r.pp},
                     {"dp", r.dp},
                     {"ep", r.ep_size},
                     {"ep_overlap", r.ep && r.overlap},
                     {"step_s", r.step},
                     {"compute_s", r.compute},
                     {"exposed_s", r.exposed},
                     {"ep_exposed_s", r.ep_exposed},
                     {"tp_exposed_s", r.tp_exposed},
                     {"sync_exposed_s", r.sync_exposed},
                     {"weights_grads_mib", r.weights_grads_mib},
                     {"optimizer_mib", r.optimizer_mib}});
    }
    j["rows"] = a;
    return j.dump(2) + "\n";
}

std::string format_dist_bench(const std::vector<dist_bench_row>& rows, int world, const dist_bench_options& opt) {
    std::string s = fmt::format(
        "trex bench dist: {} rank(s), {}x{} tokens per rank, median over {} round(s) of the median of {} steps "
        "(slowest rank); exposed = time blocked in communication waits\n\n",
        world, opt.batch, opt.seq, opt.rounds, opt.steps);
    s += "| layout | EP overlap | step ms | compute ms | exposed comm ms | of which EP all-to-all ms | TP all-reduce "
         "ms | grad sync ms | weights + grads MiB/rank | optimizer MiB/rank |\n";
    s += "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& r : rows) {
        if (r.pipelined) continue;
        s += fmt::format("| {} | {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} |\n",
                         r.layout, r.ep ? (r.overlap ? "on" : "off") : "-", r.step * 1e3, r.compute * 1e3,
                         r.exposed * 1e3, r.ep_exposed * 1e3, r.tp_exposed * 1e3, r.sync_exposed * 1e3,
                         r.weights_grads_mib, r.optimizer_mib);
    }
    bool any_pp = false;
    for (const auto& r : rows) any_pp = any_pp || r.pipelined;
    if (any_pp) {
        s += "\nPipeline layouts: forward-backward = the slowest rank's time through the schedule; a rank's bubble = "
             "the share of it in which the rank did not compute (waiting for a neighbour's activation or gradient, or "
             "done while the pipeline drains); theory (pp-1)/(m+pp-1) for 1F1B, (pp-1)/(v*m+pp-1) interleaved, for "
             "stages of equal cost\n\n";
        s += "| layout | schedule | blocks per chunk | v | m | step ms | forward-backward ms | grad sync ms | "
             "bubble per rank | bubble mean | bubble theory |\n";
        s += "|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|\n";
        for (const auto& r : rows) {
            if (!r.pipelined) continue;
            std::string per;
            for (size_t q = 0; q < r.bubble_rank.size(); q++)
                per += fmt::format("{}{:.3f}", q ? " " : "", r.bubble_rank[q]);
            s += fmt::format("| {} | {} | {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {} | {:.3f} | {:.3f} |\n", r.layout,
                             r.schedule, r.split, r.v, r.micro, r.step * 1e3, r.pipeline * 1e3, r.sync_exposed * 1e3,
                             per, r.bubble, r.bubble_theory);
        }
    }
    for (size_t i = 0; i + 1 < rows.size(); i++)
        if (rows[i].ep && !rows[i].overlap && rows[i + 1].ep && rows[i + 1].overlap && !rows[i].pipelined &&
            rows[i].layout == rows[i + 1].layout && rows[i].ep_exposed > 0)
            s += fmt::format("\n{}: exposed EP time with overlap on / off = {:.2f}", rows[i].layout,
                             rows[i + 1].ep_exposed / rows[i].ep_exposed);
    s += "\n";
    return s;
}

}  // namespace trex::bench
