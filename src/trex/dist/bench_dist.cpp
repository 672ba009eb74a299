#include "trex/dist/bench_dist.hpp"

#include <omp.h>

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trex/base/error.hpp"
#include "trex/base/timer.hpp"
#include "trex/dist/context.hpp"
#include "trex/dist/expert_parallel.hpp"
#include "trex/dist/tensor_parallel.hpp"
#include "trex/model/embedded_config.hpp"
#include "trex/model/model.hpp"
#include "trex/train/synthetic_batch.hpp"

namespace trex::dist {

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

dist_bench_row bench_layout(communicator& world, const model_config& mc, int tp, int ep, bool overlap,
                            const dist_bench_options& opt) {
    dist_context dc(world, {tp, 1, ep}, mc);
    dsv4_model model(mc);
    param_store& P = model.params();
    P.init(7);
    std::unique_ptr<expert_parallel> epd;
    if (ep > 1) {
        epd = std::make_unique<expert_parallel>(*dc.ep_comm, mc, overlap);
        model.set_expert_dispatcher(epd.get());
    }
    std::unique_ptr<tp_group> tpg;
    if (tp > 1) {
        tpg = std::make_unique<tp_group>(*dc.tp_comm);
        model.set_tensor_parallel(tpg.get());
    }
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
        if (tpg) tpg->drop_replicated_gradients(P);
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
    double v[5] = {median(step_t), median(exposed_t), median(ep_t), median(sync_t), median(tp_t)};
    world.all_reduce(v, 5, dtype::f64, reduce_op::max);
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
    for (const auto& r : rows)
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
                     {"sync_exposed_s", r.sync_exposed}});
    j["rows"] = a;
    return j.dump(2) + "\n";
}

std::string format_dist_bench(const std::vector<dist_bench_row>& rows, int world, const dist_bench_options& opt) {
    std::string s = fmt::format(
        "trex bench dist: {} rank(s), {}x{} tokens per rank, median over {} round(s) of the median of {} steps "
        "(slowest rank); exposed = time blocked in communication waits\n\n",
        world, opt.batch, opt.seq, opt.rounds, opt.steps);
    s += "| layout | EP overlap | step ms | compute ms | exposed comm ms | of which EP all-to-all ms | TP all-reduce "
         "ms | grad sync ms |\n";
    s += "|---|---|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& r : rows)
        s += fmt::format("| {} | {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} |\n", r.layout,
                         r.ep ? (r.overlap ? "on" : "off") : "-", r.step * 1e3, r.compute * 1e3, r.exposed * 1e3,
                         r.ep_exposed * 1e3, r.tp_exposed * 1e3, r.sync_exposed * 1e3);
    for (size_t i = 0; i + 1 < rows.size(); i++)
        if (rows[i].ep && !rows[i].overlap && rows[i + 1].ep && rows[i + 1].overlap &&
            rows[i].layout == rows[i + 1].layout && rows[i].ep_exposed > 0)
            s += fmt::format("\n{}: exposed EP time with overlap on / off = {:.2f}", rows[i].layout,
                             rows[i + 1].ep_exposed / rows[i].ep_exposed);
    s += "\n";
    return s;
}

}  // namespace trex::dist
