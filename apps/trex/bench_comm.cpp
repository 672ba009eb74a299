// trex bench comm: point-to-point latency/bandwidth, all-to-all-v and all-gather bandwidth, and memory bandwidth per
// rank, through the communicator training uses (run under mpirun: `mpirun -n 2 trex bench comm --out bw.json`;
// the file is the bandwidth input of `trex plan calibrate`, docs/plan.md §9).
#include <cstdio>

#include <fmt/format.h>

#include "commands.hpp"
#include "trex/base/files.hpp"
#include "trex/bench/bench_comm.hpp"

namespace trex::cli {

void register_bench_comm(CLI::App* bench) {
    auto* cmd = bench->add_subcommand("comm", "link latency and bandwidth between ranks, memory bandwidth per rank");
    auto o = std::make_shared<bench::comm_bench_options>();
    auto out = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("--sizes", o->sizes, "ping-pong message sizes in bytes")->capture_default_str();
    cmd->add_option("--bytes", o->collective_bytes, "bytes per rank in the all-to-all-v and all-gather")
        ->capture_default_str();
    cmd->add_option("--triad-bytes", o->triad_bytes, "bytes per rank of the memory triad's three arrays")
        ->capture_default_str();
    cmd->add_option("--reps", o->reps, "ping-pong round trips per size (median)")->capture_default_str();
    cmd->add_option("--out", *out, "write the bandwidth file of `trex plan calibrate --bandwidth` here");
    cmd->add_flag("--json", *json, "print the bandwidth file instead of the table");
    cmd->callback([o, out, json]() {
        std::unique_ptr<parallel::communicator> world = parallel::make_world_communicator();
        try {
            const bench::comm_bench_result r = bench::run_comm_bench(*world, *o);
            if (world->rank() != 0) return;
            const std::string bw = bench::comm_bench_bandwidth_json(r);
            if (!out->empty()) write_file_atomic(*out, bw);
            std::printf("%s", *json ? bw.c_str() : bench::format_comm_bench(r).c_str());
            if (!out->empty() && !*json) std::printf("wrote %s\n", out->c_str());
        } catch (const std::exception& e) {
            if (world->size() == 1) throw;
            world->abort(fmt::format("rank {}: {}", world->rank(), e.what()));
        }
    });
}

}  // namespace trex::cli
