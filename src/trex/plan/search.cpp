#include "trex/plan/search.hpp"

#include <algorithm>
#include <chrono>

#include "trex/base/error.hpp"

namespace trex::plan {

namespace {

std::vector<int> divisors(int64_t n, int64_t cap) {
    std::vector<int> d;
    for (int64_t i = 1; i <= std::min(n, cap); i++)
        if (n % i == 0) d.push_back((int)i);
    return d;
}

}  // namespace

search_report search_layouts(const plan_model& m, const hardware_profile& hw, const calibration& cal, int64_t N,
                             const plan_setup& base, const search_options& o) {
    const auto t0 = std::chrono::steady_clock::now();
    search_report rep;
    const int max_tp = o.max_tp > 0 ? o.max_tp : hw.node_size;
    std::vector<search_candidate> fits;
    std::vector<int> cps{1};
    if (o.try_cp)
        for (int c = 2; c <= 16; c *= 2)
            if (base.seq_len % c == 0 && base.seq_len / c >= 4096) cps.push_back(c);
    std::vector<bool> swaps{false};
    if (o.try_swap && hw.host_bw_GBps > 0) swaps.push_back(true);
    for (int tp : divisors(m.heads, max_tp)) {
        for (int cp : cps) {
            if (N % ((int64_t)tp * cp) != 0) continue;
            for (int pp : divisors(N / ((int64_t)tp * cp), m.n_main_layers)) {
                std::vector<std::pair<std::string, int>> scheds;
                for (const auto& s : o.schedules) {
                    if (s == "interleaved") {
                        if (pp > 1)
                            for (int v : o.vpps)
                                if (pp * v <= m.n_main_layers) scheds.push_back({s, v});
                    } else if (s == "1f1b" || pp > 1) {
                        scheds.push_back({s, 1});
                    }
                }
                const int64_t per_stage = N / pp;
                std::vector<int> eps{1};
                if (m.n_experts > 0) eps = divisors(std::min<int64_t>(m.n_experts, per_stage), m.n_experts);
                for (int ep : eps) {
                    if (m.n_experts > 0 && m.n_experts % ep != 0) continue;
                    std::vector<int> etps{1};
                    if (tp > 1 && m.n_experts > 0) etps.push_back(tp);
                    for (int etp : etps) {
                        if (per_stage % ((int64_t)ep * etp) != 0) continue;
                        for (const auto& [sched, vpp] : scheds) {
                            for (int mbs : o.micro_batches) {
                                for (const auto& rc : o.recompute) {
                                    for (bool swap : swaps) {
                                        plan_layout l;
                                        l.tp = tp, l.cp = cp, l.pp = pp, l.ep = ep, l.etp = etp;
                                        l.schedule = sched, l.vpp = vpp;
                                        plan_setup s = base;
                                        s.micro_batch = mbs;
                                        s.recompute = rc;
                                        s.optimizer_swap = swap;
                                        rep.evaluated++;
                                        plan_result r;
                                        try {
                                            r = evaluate(m, hw, cal, N, s, l);
                                        } catch (const trex::error&) {
                                            rep.impossible++;
                                            continue;
                                        }
                                        if (!r.fits) {
                                            rep.not_fitting++;
                                            continue;
                                        }
                                        fits.push_back({l, s, std::move(r)});
                                        // keep the list short: prune to the best 4·top now and then
                                        if ((int)fits.size() > 64 * std::max(1, o.top)) {
                                            std::sort(fits.begin(), fits.end(), [](const auto& a, const auto& b) {
                                                return a.result.tokens_per_s > b.result.tokens_per_s;
                                            });
                                            fits.resize(4 * std::max(1, o.top));
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    std::sort(fits.begin(), fits.end(),
              [](const auto& a, const auto& b) { return a.result.tokens_per_s > b.result.tokens_per_s; });
    if ((int)fits.size() > o.top) fits.resize(o.top);
    rep.best = std::move(fits);
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return rep;
}

}  // namespace trex::plan
