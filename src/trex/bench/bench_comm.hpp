// `trex bench comm` (docs/plan.md §9): what the planner needs to know about this machine's links, measured with the
// communicator that training uses — point-to-point latency and bandwidth (ping-pong between ranks 0 and 1), the
// all-to-all-v and all-gather bandwidths over all ranks, and the memory bandwidth each rank gets while every rank
// streams at once (a triad, the planner's "HBM" rate on a CPU). Written as the bandwidth file of
// `trex plan calibrate --bandwidth`.
#pragma once

#include <string>
#include <vector>

#include "trex/parallel/communicator.hpp"

namespace trex::bench {

struct comm_bench_options {
    std::vector<int64_t> sizes = {8, 1024, 65536, 1 << 20, 1 << 24};  // ping-pong message sizes, bytes
    int64_t collective_bytes = 1 << 24;  // per rank: all-gather contribution, all-to-all-v total sent
    int64_t triad_bytes = 3LL << 27;     // per rank: the three triad arrays together (384 MiB)
    int reps = 20;                       // ping-pong round trips per size (the median is kept)
    int collective_reps = 5;             // collective repetitions (median)
};

struct comm_bench_result {
    int ranks = 1, node_size = 1;  // ranks, and ranks on rank 0's host (gathered host names)
    struct p2p_row {
        int64_t bytes = 0;
        double one_way_us = 0;  // half the median round trip
        double gbps = 0;        // bytes / one-way time, 1e9 B/s
    };
    std::vector<p2p_row> p2p;    // empty with one rank
    double latency_us = 0;       // one-way time of the smallest message
    double p2p_gbps = 0;         // bandwidth of the largest message
    double all_to_all_gbps = 0;  // per rank: bytes sent to others / time
    double all_gather_gbps = 0;  // per rank: bytes received from others / time
    double triad_gbps = 0;       // per rank, all ranks streaming at once (slowest rank)
    double memory_gb = 0;        // MemTotal / ranks on the host
};

// Every rank calls it; all get the same result.
comm_bench_result run_comm_bench(parallel::communicator& world, const comm_bench_options& opt);
// Markdown table.
std::string format_comm_bench(const comm_bench_result& r);
// The bandwidth file of `trex plan calibrate` ({intra_gbps, inter_gbps, node_size, hbm_gbps, memory_gb, latency_us}
// plus the measurements it came from), as a JSON string.
std::string comm_bench_bandwidth_json(const comm_bench_result& r);

}  // namespace trex::bench
