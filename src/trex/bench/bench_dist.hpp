// `trex bench dist` (docs/distributed.md §8): for every layout the world size allows (DP, EP over each divisor
// of the expert count, TP over each divisor of the heads, groups and expert intermediate size), the time of one
// training step (forward, backward, TP all-reduces, gradient reduce-scatter, optimizer, all-gather) split into
// compute and exposed communication (time blocked in waits), with the EP overlap off and on.
#pragma once

#include <string>
#include <vector>

#include "trex/parallel/communicator.hpp"

namespace trex::bench {

struct dist_bench_options {
    std::string config;  // "" = the embedded v4-tiny
    int64_t batch = 2, seq = 256;
    int steps = 3, warmup = 1;
    int rounds = 3;              // every layout runs once per round; rows are medians over the rounds
    std::vector<int> eps;        // EP sizes to run (empty: 1 and every EP size the world and the experts allow)
    std::vector<int> tps;        // TP sizes > 1 to run, each with ep 1 (empty: none)
    std::vector<int> pps;        // pipeline sizes to run (empty: the world size when it is > 1 and the layers allow)
    int micro = 4;               // micro-batches per step and pipeline (pipeline layouts)
    std::vector<int> pp_layers;  // blocks per stage for the 1F1B rows (empty: balanced), as dist.pp_layers
};

struct dist_bench_row {
    std::string layout;
    int tp = 1, pp = 1, dp = 1, ep_size = 1;  // the mesh (ep_size: routed experts split over this many ranks)
    bool ep = false, overlap = false;
    // pipeline layouts: schedule, chunks per rank, micro-batches; pipeline = the slowest rank's forward-backward
    // seconds; a rank's bubble = the share of those in which it did not compute (waiting for a neighbour's
    // activation or gradient, or finished while the pipeline drains); mean and max over the ranks, and the theory
    bool pipelined = false;
    std::string schedule;
    int v = 1, micro = 0;
    double pipeline = 0, bubble = 0, bubble_max = 0, bubble_theory = 0;
    std::vector<double> bubble_rank;  // per rank
    std::string split;                // blocks per model chunk, "2+2"
    // medians over the timed steps of the slowest rank, seconds
    double step = 0, compute = 0, exposed = 0, ep_exposed = 0, tp_exposed = 0, sync_exposed = 0;
    // the largest rank's fp32 weights + gradients and its optimizer state (ZeRO-1 shard: Muon momentum, AdamW m, v),
    // MiB (under TP a rank holds only its slices of the split tensors)
    double weights_grads_mib = 0, optimizer_mib = 0;
};

// Every rank calls it; all get the same rows.
std::vector<dist_bench_row> run_dist_bench(parallel::communicator& world, const dist_bench_options& opt);
// One JSON object: the options, and per row the mesh and the times in seconds (input of `trex plan compare`).
std::string dist_bench_json(const std::vector<dist_bench_row>& rows, int world, const dist_bench_options& opt);
// Markdown table with the overlap on/off ratio of the exposed EP time.
std::string format_dist_bench(const std::vector<dist_bench_row>& rows, int world, const dist_bench_options& opt);

}  // namespace trex::bench
