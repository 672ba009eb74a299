#include "trex/bench/bench_comm.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trex/base/error.hpp"
#include "trex/base/timer.hpp"

namespace trex::bench {

using namespace trex::parallel;

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

// Ranks sharing rank 0's host (from the gathered host names).
int ranks_on_first_host(communicator& world) {
    constexpr int64_t kLen = 256;
    char name[kLen] = {};
    gethostname(name, kLen - 1);
    std::vector<char> all((size_t)kLen * world.size());
    world.all_gather(name, all.data(), std::vector<int64_t>(world.size(), kLen), dtype::u8);
    int n = 0;
    for (int r = 0; r < world.size(); r++) n += std::strncmp(all.data(), all.data() + (size_t)r * kLen, kLen) == 0;
    return n;
}

double mem_total_gb() {
    std::ifstream f("/proc/meminfo");
    std::string key;
    double kb = 0;
    while (f >> key) {
        if (key == "MemTotal:") {
            f >> kb;
            break;
        }
        f.ignore(1 << 10, '\n');
    }
    return kb * 1024.0 / 1e9;
}

// Median round trip / 2 of `bytes` between ranks 0 and 1 (the others wait at the barrier).
double ping_pong_seconds(communicator& world, int64_t bytes, int reps) {
    std::vector<uint8_t> buf((size_t)std::max<int64_t>(bytes, 1), 1);
    std::vector<double> t;
    const int r = world.rank();
    world.barrier();
    for (int i = 0; i < reps + 2; i++) {
        const double t0 = now_seconds();
        if (r == 0) {
            world.send(buf.data(), bytes, dtype::u8, 1, 7);
            world.recv(buf.data(), bytes, dtype::u8, 1, 8);
        } else if (r == 1) {
            world.recv(buf.data(), bytes, dtype::u8, 0, 7);
            world.send(buf.data(), bytes, dtype::u8, 0, 8);
        }
        if (i >= 2) t.push_back((now_seconds() - t0) / 2);
    }
    double m = r == 0 ? median(t) : 0.0;
    world.all_reduce(&m, 1, dtype::f64, reduce_op::max);
    world.barrier();
    return m;
}

// Median over reps of the slowest rank's time of `op` (every rank starts after a barrier).
template <class F>
double collective_seconds(communicator& world, int reps, F&& op) {
    std::vector<double> t;
    for (int i = 0; i < reps + 1; i++) {
        world.barrier();
        const double t0 = now_seconds();
        op();
        double dt = now_seconds() - t0;
        world.all_reduce(&dt, 1, dtype::f64, reduce_op::max);
        if (i >= 1) t.push_back(dt);
    }
    return median(t);
}

// a = b + s·c over doubles, every rank at once; best of 5 passes; bytes counted: read b, c and write a.
double triad_gbps(communicator& world, int64_t bytes) {
    const int64_t n = std::max<int64_t>(bytes / 24, 1 << 16);
    std::vector<double> a(n, 0.0), b(n, 1.0), c(n, 2.0);
    double best = 1e30;
    for (int pass = 0; pass < 5; pass++) {
        world.barrier();
        const double t0 = now_seconds();
        double* pa = a.data();
        const double* pb = b.data();
        const double* pc = c.data();
        const double s = 0.5 + pass;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) pa[i] = pb[i] + s * pc[i];
        best = std::min(best, now_seconds() - t0);
    }
    TREX_CHECK(a[n / 2] == 1.0 + 4.5 * 2.0, "memory triad produced a wrong value");  // the last pass, s = 4.5
    double neg = -24.0 * (double)n / best / 1e9;
    world.all_reduce(&neg, 1, dtype::f64, reduce_op::max);  // the slowest rank: max of the negated rates
    return -neg;
}

}  // namespace

comm_bench_result run_comm_bench(communicator& world, const comm_bench_options& opt) {
    TREX_CHECK(opt.reps > 0 && opt.collective_reps > 0, "bench comm: --reps must be positive");
    TREX_CHECK(opt.collective_bytes >= world.size(), "bench comm: --bytes {} is smaller than the rank count",
               opt.collective_bytes);
    comm_bench_result r;
    const int R = world.size();
    r.ranks = R;
    r.node_size = ranks_on_first_host(world);
    r.memory_gb = mem_total_gb() / std::max(r.node_size, 1);

    if (R >= 2) {
        for (int64_t b : opt.sizes) {
            TREX_CHECK(b > 0, "bench comm: message size {} must be positive", b);
            comm_bench_result::p2p_row row;
            row.bytes = b;
            const double s = ping_pong_seconds(world, b, opt.reps);
            row.one_way_us = s * 1e6;
            row.gbps = s > 0 ? (double)b / s / 1e9 : 0.0;
            r.p2p.push_back(row);
        }
        r.latency_us = r.p2p.front().one_way_us;
        r.p2p_gbps = r.p2p.back().gbps;

        // all-to-all-v: collective_bytes per rank, an equal block to every rank (self included)
        const int64_t block = opt.collective_bytes / R;
        std::vector<uint8_t> send((size_t)block * R, 3), recv((size_t)block * R, 0);
        std::vector<int64_t> counts(R, block), displs(R);
        for (int q = 0; q < R; q++) displs[q] = (int64_t)q * block;
        const double ta = collective_seconds(world, opt.collective_reps, [&] {
            world.all_to_all_v(send.data(), counts, displs, recv.data(), counts, displs, dtype::u8);
        });
        r.all_to_all_gbps = (double)block * (R - 1) / ta / 1e9;
        // all-gather: block bytes from every rank
        const double tg = collective_seconds(world, opt.collective_reps,
                                             [&] { world.all_gather(send.data(), recv.data(), counts, dtype::u8); });
        r.all_gather_gbps = (double)block * (R - 1) / tg / 1e9;
    }
    r.triad_gbps = triad_gbps(world, opt.triad_bytes);
    return r;
}

std::string format_comm_bench(const comm_bench_result& r) {
    std::string s = fmt::format("trex bench comm: {} rank(s), {} on rank 0's host; median times; GB = 1e9 B\n\n",
                                r.ranks, r.node_size);
    if (!r.p2p.empty()) {
        s += "| ping-pong 0<->1 bytes | one-way us | GB/s |\n|---:|---:|---:|\n";
        for (const auto& p : r.p2p) s += fmt::format("| {} | {:.2f} | {:.3f} |\n", p.bytes, p.one_way_us, p.gbps);
        s += fmt::format(
            "\nall-to-all-v: {:.3f} GB/s sent to others per rank; all-gather: {:.3f} GB/s received per "
            "rank\n",
            r.all_to_all_gbps, r.all_gather_gbps);
    } else {
        s += "one rank: no links to measure (run under mpirun -n 2 or more)\n";
    }
    s += fmt::format("memory triad, all ranks at once: {:.2f} GB/s per rank (slowest); {:.1f} GB of memory per rank\n",
                     r.triad_gbps, r.memory_gb);
    return s;
}

std::string comm_bench_bandwidth_json(const comm_bench_result& r) {
    nlohmann::ordered_json j;
    // The planner applies a tier's bandwidth to collectives (bytes a rank sends / time), so the tiers get what our
    // collectives reached (the mean of the all-to-all-v and all-gather rates), not the single-message ping-pong
    // rate. One host: the inner and outer tiers are both this host's shared-memory transport.
    // One rank measures no link: the keys are left out, and `trex plan calibrate` asks for them.
    if (r.ranks > 1) {
        const double coll = 0.5 * (r.all_to_all_gbps + r.all_gather_gbps);
        j["intra_gbps"] = coll;
        j["inter_gbps"] = coll;
    }
    j["node_size"] = r.node_size;
    j["hbm_gbps"] = r.triad_gbps;
    j["memory_gb"] = r.memory_gb;
    if (r.ranks > 1) j["latency_us"] = r.latency_us;
    j["measured"] = {
        {"ranks", r.ranks},
        {"ping_pong_gbps", r.p2p_gbps},
        {"all_to_all_gbps", r.all_to_all_gbps},
        {"all_gather_gbps", r.all_gather_gbps},
        {"note", r.node_size == r.ranks ? "every rank ran on one host: inter_gbps is the same measurement as intra_gbps"
                                        : "ranks span hosts: both tiers are the ping-pong between ranks 0 and 1"}};
    nlohmann::ordered_json pp = nlohmann::ordered_json::array();
    for (const auto& p : r.p2p) pp.push_back({{"bytes", p.bytes}, {"one_way_us", p.one_way_us}, {"gbps", p.gbps}});
    j["measured"]["ping_pong"] = pp;
    return j.dump(2) + "\n";
}

}  // namespace trex::bench
