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

int64_t rank_of(double tokens_per_s, const std::vector<double>& fitting) {
    int64_t faster = 0;
    for (double t : fitting) faster += t > tokens_per_s;
    return 1 + faster;
}

void sort_best_first(std::vector<search_candidate>& v) {
    std::sort(v.begin(), v.end(),
              [](const auto& a, const auto& b) { return a.result.tokens_per_s > b.result.tokens_per_s; });
}

std::vector<bool> swap_options(const hardware_profile& hw, const search_options& o) {
    std::vector<bool> swaps{false};
    if (o.try_swap && hw.host_bw_GBps > 0) swaps.push_back(true);
    return swaps;
}

// The reference layout (its layers_per_chunk kept) under each searched micro-batch × recompute × swap: the fastest
// that fits, if any.
std::optional<search_candidate> best_setup_of(const plan_model& m, const hardware_profile& hw, const calibration& cal,
                                              int64_t N, const plan_setup& base, const search_options& o,
                                              const plan_layout& l) {
    std::optional<search_candidate> best;
    for (int mbs : o.micro_batches)
        for (const auto& rc : o.recompute)
            for (bool swap : swap_options(hw, o)) {
                plan_setup s = base;
                s.micro_batch = mbs;
                s.recompute = rc;
                s.optimizer_swap = swap;
                plan_result r;
                try {
                    r = evaluate(m, hw, cal, N, s, l);
                } catch (const trex::error&) {
                    continue;
                }
                if (r.fits && (!best || r.tokens_per_s > best->result.tokens_per_s)) best = search_candidate{l, s, r};
            }
    return best;
}

// Calls on_fit for every possible layout × setup that fits; counts the evaluated, impossible and not fitting ones.
template <class F>
void for_each_fitting(const plan_model& m, const hardware_profile& hw, const calibration& cal, int64_t N,
                      const plan_setup& base, const search_options& o, search_report& rep, F on_fit) {
    const int max_tp = o.max_tp > 0 ? o.max_tp : hw.node_size;
    std::vector<int> cps{1};
    if (o.try_cp)
        for (int c = 2; c <= 16; c *= 2)
            if (base.seq_len % c == 0 && base.seq_len / c >= 4096) cps.push_back(c);
    const std::vector<bool> swaps = swap_options(hw, o);
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
                                        on_fit(search_candidate{l, s, std::move(r)});
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

// Collects the best `top` candidates (pruning to 4·top now and then keeps the list short).
struct top_list {
    int top;
    std::vector<search_candidate> fits;
    void add(search_candidate&& c) {
        fits.push_back(std::move(c));
        const int64_t keep = std::max<int64_t>(1, top);
        if ((int64_t)fits.size() > 64 * keep) {
            sort_best_first(fits);
            fits.resize(4 * keep);
        }
    }
    std::vector<search_candidate> take() {
        sort_best_first(fits);
        if ((int)fits.size() > top) fits.resize(top);
        return std::move(fits);
    }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

search_report search_layouts(const plan_model& m, const hardware_profile& hw, const calibration& cal, int64_t N,
                             const plan_setup& base, const search_options& o) {
    const auto t0 = std::chrono::steady_clock::now();
    search_report rep;
    top_list top{o.top, {}};
    for_each_fitting(m, hw, cal, N, base, o, rep, [&](search_candidate&& c) { top.add(std::move(c)); });
    rep.best = top.take();
    rep.seconds = seconds_since(t0);
    return rep;
}

search_report search_layouts(const plan_model& m, const hardware_profile& hw, const calibration& cal, int64_t N,
                             const plan_setup& base, const search_options& o, const plan_layout& reference,
                             const plan_setup& reference_setup) {
    const auto t0 = std::chrono::steady_clock::now();
    search_report rep;
    ranked_candidate ref{{reference, reference_setup, evaluate(m, hw, cal, N, reference_setup, reference)}, 0};
    top_list top{o.top, {}};
    std::vector<double> fitting;
    for_each_fitting(m, hw, cal, N, base, o, rep, [&](search_candidate&& c) {
        fitting.push_back(c.result.tokens_per_s);
        top.add(std::move(c));
    });
    if (ref.candidate.result.fits) ref.rank = rank_of(ref.candidate.result.tokens_per_s, fitting);
    rep.reference = ref;
    const auto same = best_setup_of(m, hw, cal, N, base, o, reference);
    if (same) rep.reference_best = ranked_candidate{*same, rank_of(same->result.tokens_per_s, fitting)};
    rep.best = top.take();
    rep.seconds = seconds_since(t0);
    return rep;
}

}  // namespace trex::plan
