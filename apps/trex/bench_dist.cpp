// trex bench dist: per layout, step time split into compute and exposed communication, EP overlap off and on
// (run under mpirun: `mpirun -n 2 trex bench dist`; docs/distributed.md).
#include <cstdio>

#include <fmt/format.h>

#include "commands.hpp"
#include "trex/base/files.hpp"
#include "trex/bench/bench_dist.hpp"

namespace trex::cli {

void register_bench_dist(CLI::App* bench) {
    auto* cmd = bench->add_subcommand("dist", "distributed step time: compute vs exposed communication, per layout");
    auto o = std::make_shared<bench::dist_bench_options>();
    cmd->add_option("--config", o->config, "model config.json (default: the embedded configs/v4-tiny.json)");
    cmd->add_option("--batch", o->batch, "rows per rank and step")->capture_default_str();
    cmd->add_option("--seq", o->seq, "tokens per row")->capture_default_str();
    cmd->add_option("--steps", o->steps, "timed steps (the median is reported)")->capture_default_str();
    cmd->add_option("--warmup", o->warmup, "untimed steps before")->capture_default_str();
    cmd->add_option("--rounds", o->rounds, "times every layout runs, in turn (rows: medians over rounds)")
        ->capture_default_str();
    cmd->add_option("--ep", o->eps, "EP sizes to run (default: 1 and every size the world and experts allow)");
    cmd->add_option("--tp", o->tps, "TP sizes to run as well, with ep 1 (default: none)");
    cmd->add_option("--pp", o->pps, "pipeline sizes to run, 1F1B and interleaved (default: the world size)");
    cmd->add_option("--micro", o->micro, "micro-batches per step and pipeline (pipeline layouts)")
        ->capture_default_str();
    cmd->add_option("--pp-layers", o->pp_layers, "blocks per stage for an extra 1F1B row (like dist.pp_layers)");
    auto json = std::make_shared<bool>(false);
    auto out = std::make_shared<std::string>();
    cmd->add_flag("--json", *json, "print one JSON object (the input of `trex plan compare`)");
    cmd->add_option("--out", *out, "also write that JSON object to this file");
    cmd->callback([o, json, out]() {
        std::unique_ptr<parallel::communicator> world = parallel::make_world_communicator();
        try {
            const auto rows = bench::run_dist_bench(*world, *o);
            if (world->rank() == 0) {
                const std::string j = bench::dist_bench_json(rows, world->size(), *o);
                if (!out->empty()) write_file_atomic(*out, j);
                std::printf("%s", *json ? j.c_str() : bench::format_dist_bench(rows, world->size(), *o).c_str());
            }
        } catch (const std::exception& e) {
            if (world->size() == 1) throw;
            world->abort(fmt::format("rank {}: {}", world->rank(), e.what()));
        }
    });
}

}  // namespace trex::cli
