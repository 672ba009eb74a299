#include "trex/plan/cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "trex/base/error.hpp"

namespace trex::plan {

namespace {

constexpr double GB = 1e9;

// Recompute policy: dropped activation groups and the forward work re-run.
struct recompute_policy {
    bool full = false;
    std::array<bool, n_act_groups> drop{};
    bool core = false, up_proj = false, mlp = false, moe = false;
};

recompute_policy parse_recompute(const std::vector<std::string>& mods) {
    recompute_policy p;
    for (const auto& x : mods) {
        if (x == "none") continue;
        if (x == "full") {
            p.full = true;
        } else if (x == "selective" || x == "core_attn") {
            p.drop[(int)act_group::attn_scores] = true;
            p.core = true;
        } else if (x == "mla_up_proj") {
            p.drop[(int)act_group::up_proj] = true;
            p.up_proj = true;
        } else if (x == "layernorm") {
            p.drop[(int)act_group::norm] = true;
        } else if (x == "mlp") {
            p.drop[(int)act_group::mlp_fc1] = p.drop[(int)act_group::mlp_act] = true;
            p.mlp = true;
        } else if (x == "moe_act") {
            p.drop[(int)act_group::moe_act] = p.drop[(int)act_group::mlp_act] = true;
        } else if (x == "moe") {
            p.drop[(int)act_group::moe_fc1] = p.drop[(int)act_group::moe_act] = true;
            p.moe = true;
        } else if (x == "mhc") {
            p.drop[(int)act_group::mhc] = true;
        } else {
            throw_error(
                fmt::format("unknown recompute module '{}' (none, selective, full, core_attn, mla_up_proj, "
                            "layernorm, mlp, moe_act, moe, mhc)",
                            x));
        }
    }
    return p;
}

// Chunks of the pipeline and which device holds which.
int n_chunks(const plan_layout& l) {
    if (l.schedule == "interleaved") return l.pp * l.vpp;
    if (l.schedule == "dualpipev") return 2 * l.pp;
    return l.pp;  // 1f1b, dualpipe (DualPipe holds two of the pp chunks per device)
}

std::vector<int> device_chunks(const plan_layout& l, int d) {
    if (l.schedule == "interleaved") {
        std::vector<int> c;
        for (int v = 0; v < l.vpp; v++) c.push_back(d + v * l.pp);
        return c;
    }
    if (l.schedule == "dualpipev") return {d, 2 * l.pp - 1 - d};
    if (l.schedule == "dualpipe") return {d, l.pp - 1 - d};
    return {d};
}

std::vector<int> split_layers(int L, int chunks) {
    std::vector<int> n(chunks, L / chunks);
    int rem = L % chunks;
    // remainder to the middle chunks first (the first holds the embedding, the last the head and MTP)
    std::vector<int> order;
    for (int i = 1; i + 1 < chunks; i++) order.push_back(i);
    if (chunks >= 1) order.push_back(0);
    if (chunks >= 2) order.push_back(chunks - 1);
    for (int i = 0; rem > 0; i = (i + 1) % (int)order.size(), rem--) n[order[i]]++;
    return n;
}

double ring_time(double bytes, int n, const link_tier& t) {
    if (n <= 1 || bytes <= 0) return 0;
    return bytes / (t.bw_GBps * GB * t.efficiency) + (n - 1) * t.latency_us * 1e-6;
}

}  // namespace

std::string plan_layout::str() const {
    std::string s = fmt::format("TP{} PP{}", tp, pp);
    if (schedule == "interleaved") s += fmt::format(" VPP{}", vpp);
    s += fmt::format(" EP{}", ep);
    if (etp > 1) s += fmt::format(" ETP{}", etp);
    if (cp > 1) s += fmt::format(" CP{}", cp);
    s += " " + schedule;
    return s;
}

// ------------------------------------------------------------------------------------------------- files
calibration calibration_from_json(const json& j, const std::string& source) {
    jreader r(j, source);
    r.check_keys({"gemm_efficiency", "fp8_gemm_efficiency", "attention_efficiency", "gemm_half_size", "memory_passes",
                  "memory_efficiency", "ep_overlap", "tp_overlap", "background_overlap", "reserve_fraction",
                  "comm_buffer_gb", "routing_imbalance"});
    calibration c;
    c.path = source;
    c.gemm_efficiency = r.num_req("gemm_efficiency", 1e-3, 1);
    c.fp8_gemm_efficiency = r.num_req("fp8_gemm_efficiency", 1e-3, 1);
    c.attention_efficiency = r.num_req("attention_efficiency", 1e-3, 1);
    c.gemm_half_size = r.num_req("gemm_half_size", 0, 1e6);
    c.memory_passes = r.num_req("memory_passes", 0, 100);
    c.memory_efficiency = r.num_req("memory_efficiency", 1e-3, 1);
    c.ep_overlap = r.num_req("ep_overlap", 0, 1);
    c.tp_overlap = r.num_req("tp_overlap", 0, 1);
    c.background_overlap = r.num_req("background_overlap", 0, 1);
    c.reserve_fraction = r.num_req("reserve_fraction", 0, 0.9);
    c.comm_buffer_GB = r.num_req("comm_buffer_gb", 0, 1e4);
    c.routing_imbalance = r.num("routing_imbalance", c.routing_imbalance, 1, 100);
    return c;
}

calibration load_calibration(const std::string& name_or_path) {
    const std::string path = resolve_data_file(name_or_path, "configs/plan", "calibration file");
    return calibration_from_json(read_json_file(path), path);
}

plan_setup setup_from_json(const jreader& r) {
    r.check_keys({"seq_len",
                  "global_batch",
                  "micro_batch",
                  "precision",
                  "optimizer",
                  "zero1",
                  "shard_grads",
                  "optimizer_swap",
                  "moment_dtype",
                  "grad_dtype",
                  "recompute",
                  "sequence_parallel",
                  "flash_attention",
                  "dense_csa",
                  "activation_cache",
                  "ep_dispatcher",
                  "node_limited_routing",
                  "dispatch_dtype",
                  "ep_overlap",
                  "tp_overlap",
                  "dp_overlap",
                  "routing",
                  "capacity_factor",
                  "flops_convention",
                  "causal"});
    plan_setup s;
    s.seq_len = r.integer("seq_len", s.seq_len, 1, (int64_t)1 << 30);
    s.global_batch = r.integer("global_batch", s.global_batch, 1, (int64_t)1 << 40);
    s.micro_batch = (int)r.integer("micro_batch", s.micro_batch, 1, 1 << 20);
    s.precision = r.choice("precision", s.precision, {"bf16", "fp16", "fp8", "mxfp8", "fp32"});
    s.optimizer = r.choice("optimizer", s.optimizer, {"adamw", "muon"});
    s.zero1 = r.boolean("zero1", s.zero1);
    s.shard_grads = r.boolean("shard_grads", s.shard_grads);
    s.optimizer_swap = r.boolean("optimizer_swap", s.optimizer_swap);
    s.moment_dtype = r.choice("moment_dtype", s.moment_dtype, {"fp32", "bf16"});
    s.grad_dtype = r.choice("grad_dtype", s.grad_dtype, {"fp32", "bf16"});
    s.recompute = r.str_list("recompute");
    parse_recompute(s.recompute);  // validates the names
    s.sequence_parallel = r.boolean("sequence_parallel", s.sequence_parallel);
    s.flash_attention = r.boolean("flash_attention", s.flash_attention);
    s.dense_csa = r.boolean("dense_csa", s.dense_csa);
    s.activation_cache = r.choice("activation_cache", s.activation_cache, {"auto", "bf16", "fp8_gemm_inputs", "fp8"});
    s.ep_dispatcher = r.choice("ep_dispatcher", s.ep_dispatcher, {"deepep", "alltoall"});
    s.node_limited_routing = (int)r.integer("node_limited_routing", 0, 0, 1 << 20);
    s.dispatch_dtype = r.choice("dispatch_dtype", s.dispatch_dtype, {"bf16", "fp8"});
    s.ep_overlap = r.boolean("ep_overlap", s.ep_overlap);
    s.tp_overlap = r.boolean("tp_overlap", s.tp_overlap);
    s.dp_overlap = r.boolean("dp_overlap", s.dp_overlap);
    s.routing = r.choice("routing", s.routing, {"forced", "natural"});
    s.capacity_factor = r.num("capacity_factor", s.capacity_factor, 0, 1e3);
    s.convention.name = r.choice("flops_convention", "megatron", {"megatron", "deepseek"});
    s.convention.causal = r.boolean("causal", true);
    return s;
}

plan_layout layout_from_json(const jreader& r) {
    r.check_keys({"tp", "pp", "vpp", "ep", "etp", "cp", "schedule", "layers_per_chunk"});
    plan_layout l;
    l.tp = (int)r.integer("tp", 1, 1, 1 << 16);
    l.pp = (int)r.integer("pp", 1, 1, 1 << 16);
    l.vpp = (int)r.integer("vpp", 1, 1, 1 << 10);
    l.ep = (int)r.integer("ep", 1, 1, 1 << 20);
    l.etp = (int)r.integer("etp", 1, 1, 1 << 16);
    l.cp = (int)r.integer("cp", 1, 1, 1 << 16);
    l.schedule =
        r.choice("schedule", l.vpp > 1 ? "interleaved" : "1f1b", {"1f1b", "interleaved", "dualpipe", "dualpipev"});
    if (l.vpp > 1 && l.schedule != "interleaved")
        r.fail("vpp", fmt::format("vpp {} needs schedule 'interleaved'", l.vpp));
    if (r.has("layers_per_chunk")) {
        const json& a = r.raw()["layers_per_chunk"];
        if (!a.is_array()) r.fail("layers_per_chunk", "expected an array of integers");
        for (size_t i = 0; i < a.size(); i++) {
            if (!a[i].is_number_integer() || a[i].get<int64_t>() < 0)
                r.fail("layers_per_chunk", fmt::format("entry {} must be an integer >= 0", i));
            l.layers_per_chunk.push_back((int)a[i].get<int64_t>());
        }
    }
    return l;
}

plan_run run_from_json(const json& j, const std::string& source) {
    jreader r(j, source);
    r.check_keys({"model", "hardware", "devices", "setup", "layout"});
    plan_run run;
    run.model = r.str_req("model");
    run.hardware = r.str_req("hardware");
    run.devices = r.integer_req("devices", 1, (int64_t)1 << 30);
    run.setup = setup_from_json(r.object("setup", true));
    run.layout = layout_from_json(r.object("layout", true));
    return run;
}

plan_run load_run(const std::string& name_or_path) {
    const std::string path = resolve_data_file(name_or_path, "configs/plan/runs", "run file");
    return run_from_json(read_json_file(path), path);
}

// ------------------------------------------------------------------------------------------------- checks
void check_layout(const plan_model& m, const hardware_profile& hw, int64_t N, const plan_setup& s,
                  const plan_layout& l) {
    const std::string at = fmt::format("layout {} on {} devices", l.str(), N);
    TREX_CHECK(s.micro_batch >= 1 && s.global_batch >= 1 && s.seq_len >= 1, "{}: batch sizes must be >= 1", at);
    TREX_CHECK(m.heads % l.tp == 0, "{}: TP {} does not divide the {} attention heads of {}", at, l.tp, m.heads,
               m.name);
    if (m.arch == "transformer" && m.kv_heads < m.heads)
        TREX_CHECK(m.kv_heads % l.tp == 0 || l.tp % m.kv_heads == 0,
                   "{}: TP {} and the {} KV heads of {} do not divide each other", at, l.tp, m.kv_heads, m.name);
    const int64_t tpcppp = (int64_t)l.tp * l.cp * l.pp;
    TREX_CHECK(N % tpcppp == 0, "{}: TP*CP*PP = {} does not divide the device count", at, tpcppp);
    const int64_t dp = N / tpcppp;
    const int64_t per_stage = N / l.pp;
    if (m.n_experts > 0) {
        TREX_CHECK(m.n_experts % l.ep == 0, "{}: EP {} does not divide the {} routed experts", at, l.ep, m.n_experts);
        TREX_CHECK(per_stage % ((int64_t)l.ep * l.etp) == 0,
                   "{}: EP*ETP = {} does not divide the {} devices of a pipeline stage", at, l.ep * l.etp, per_stage);
    } else {
        TREX_CHECK(l.ep == 1 && l.etp == 1, "{}: EP/ETP > 1 but {} has no routed experts", at, m.name);
    }
    TREX_CHECK(s.seq_len % l.cp == 0, "{}: CP {} does not divide the sequence length {}", at, l.cp, s.seq_len);
    TREX_CHECK(s.global_batch % ((int64_t)s.micro_batch * dp) == 0,
               "{}: global batch {} is not a multiple of micro batch {} x DP {}", at, s.global_batch, s.micro_batch,
               dp);
    const int64_t mb = s.global_batch / (s.micro_batch * dp);
    const int chunks = n_chunks(l);
    if (l.schedule == "interleaved") {
        TREX_CHECK(l.vpp >= 2, "{}: the interleaved schedule needs vpp >= 2", at);
        TREX_CHECK(l.pp >= 2, "{}: the interleaved schedule needs pp >= 2", at);
        TREX_CHECK(mb % l.pp == 0, "{}: interleaving needs the {} micro-batches to be a multiple of PP", at, mb);
    } else {
        TREX_CHECK(l.vpp == 1, "{}: vpp > 1 needs the interleaved schedule", at);
    }
    if (l.schedule == "dualpipe" || l.schedule == "dualpipev") {
        TREX_CHECK(l.pp >= 2, "{}: {} needs pp >= 2", at, l.schedule);
        if (l.schedule == "dualpipe") TREX_CHECK(l.pp % 2 == 0, "{}: DualPipe needs an even pp", at);
        TREX_CHECK(mb >= 2 * l.pp, "{}: {} needs at least 2*PP = {} micro-batches (has {})", at, l.schedule, 2 * l.pp,
                   mb);
    }
    if (!l.layers_per_chunk.empty()) {
        TREX_CHECK((int)l.layers_per_chunk.size() == chunks,
                   "{}: layers_per_chunk has {} entries, the schedule has "
                   "{} chunks",
                   at, l.layers_per_chunk.size(), chunks);
        int sum = 0;
        for (int x : l.layers_per_chunk) sum += x;
        TREX_CHECK(sum == m.n_main_layers, "{}: layers_per_chunk sums to {}, the model has {} layers", at, sum,
                   m.n_main_layers);
    } else {
        TREX_CHECK(chunks <= m.n_main_layers, "{}: {} pipeline chunks for {} layers", at, chunks, m.n_main_layers);
    }
    if (fp8_gemms(s)) hw.peak_tflops(s.precision);
    TREX_CHECK(s.capacity_factor == 0 || s.capacity_factor >= 1, "capacity factor {} is below 1 (0: dropless)",
               s.capacity_factor);
    if (s.optimizer_swap)
        TREX_CHECK(hw.host_bw_GBps > 0, "{}: optimizer swap needs host_bw_gbps in the hardware profile", hw.path);
}

bool fp8_gemms(const plan_setup& s) {
    return s.precision == "fp8" || s.precision == "mxfp8";
}

double expert_load_factor(const plan_setup& s, const calibration& cal, int ep) {
    if (s.routing != "natural" || ep <= 1) return 1.0;
    const double load = cal.routing_imbalance;
    return s.capacity_factor > 0 ? std::min(load, s.capacity_factor) : load;
}

// ------------------------------------------------------------------------------------------------- evaluate
namespace {

// Per-layer quantities per micro-batch on one device.
struct layer_eval {
    double params_dense = 0, params_expert = 0;  // elements on the device
    double act_kept = 0, act_full = 0;           // bytes per micro-batch (kept under the policy / no recompute)
    double t_gemm = 0, t_att = 0, t_mem = 0, t_tp = 0, t_ep = 0, t_cp = 0, hw_flops = 0;
    double ns_flops = 0;  // Muon Newton–Schulz FLOPs (whole matrices on the device)
};

// A layer's activation bytes per micro-batch: kept under the recompute policy, all of them, and those recomputed.
struct layer_acts {
    double kept = 0, full = 0, recomputed = 0;
};

// A pipeline stage's sums over the layers of its chunks, the embedding and the head, before the DualPipe share.
struct stage_sums {
    double p_dense = 0, p_exp = 0, p_embed = 0, act = 0, ns = 0;
    double t_gemm = 0, t_att = 0, t_mem = 0, t_tp_s = 0, t_ep_s = 0, t_cp_s = 0, hwf = 0;
};

// A stage's optimizer-state parameters after the ZeRO-1 sharding, and the state's bytes.
struct optimizer_shard {
    double p_dense_opt = 0, p_embed_opt = 0, p_exp_opt = 0;
    double opt_bytes = 0;
};

// The step's maxima over the pipeline stages and its hardware FLOPs, as the stages are evaluated.
struct stage_totals {
    double t_mb_max = 0, opt_max = 0, swap_max = 0, dp_max = 0;
    double hw_flops_sum = 0;
};

// One evaluation of a layout: the constants it derives once (the constructor: checks that can throw keep their
// order), then one step per layer, per pipeline stage and for the whole step.
struct layout_evaluator {
    const plan_model& m;
    const hardware_profile& hw;
    const calibration& cal;
    const int64_t N;
    const plan_setup& s;
    const plan_layout& l;
    const int64_t mb;  // micro-batches per pipeline per step
    const recompute_policy rc;
    const bool sp;
    const double tp;
    const double T;  // tokens of a micro-batch per TP group
    // efficiencies and rates
    double gemm_rate = 0, bf16_rate = 0, attn_rate = 0, mem_rate = 0;
    double eff_rows_dense = 0, eff_rows_expert = 0;
    // communication tiers
    const link_tier& t_tp;
    const link_tier& t_cp;
    const link_tier& t_dp;
    const link_tier& t_pp;
    const link_tier& t_in;
    const link_tier& t_ep_out;
    int dom = 0;
    bool fp8_cache = false, fp8_swiglu = false, ep_overlap = false;
    double expert_load = 1;  // busiest EP rank's routed tokens / the mean
    double ep_time_per_token = 0, ep_latency = 0;

    layout_evaluator(const plan_model& m_, const hardware_profile& hw_, const calibration& cal_, int64_t N_,
                     const plan_setup& s_, const plan_layout& l_, int dp)
        : m(m_),
          hw(hw_),
          cal(cal_),
          N(N_),
          s(s_),
          l(l_),
          mb(s.global_batch / ((int64_t)s.micro_batch * dp)),
          rc(parse_recompute(s.recompute)),
          sp(s.sequence_parallel && l.tp > 1),
          tp(l.tp),
          T((double)s.micro_batch * (double)s.seq_len / l.cp),
          t_tp(hw.tier_for_span(l.tp)),
          t_cp(hw.tier_for_span((int64_t)l.tp * l.cp)),
          t_dp(hw.tier_for_span(N / l.pp)),
          t_pp(hw.tier_for_span(std::min<int64_t>(N, 2 * (N / l.pp)))),
          t_in(hw.tiers.front()),
          t_ep_out(hw.tier_for_span((int64_t)l.ep * l.etp)) {
        derive_rates();
        dom = t_in.size == 0 ? (int)N : t_in.size;
        fp8_cache = s.activation_cache == "fp8" || s.activation_cache == "fp8_gemm_inputs" ||
                    (s.activation_cache == "auto" && fp8_gemms(s));
        fp8_swiglu = s.activation_cache == "fp8";
        ep_overlap = s.ep_overlap || l.schedule == "dualpipe" || l.schedule == "dualpipev";
        expert_load = expert_load_factor(s, cal, l.ep);
        ep_time_per_token = ep_seconds_per_token();
        ep_latency = m.n_experts > 0 && l.ep > 1 ? 4 * t_ep_out.latency_us * 1e-6 : 0;
    }

    double size_eff(double rows) const { return rows / (rows + cal.gemm_half_size); }

    // GEMM, bf16, attention and HBM rates of the device, and the GEMM efficiencies of the dense and expert row counts.
    void derive_rates() {
        const double e_gemm =
            hw.gemm_efficiency > 0
                ? hw.gemm_efficiency
                : (fp8_gemms(s) ? std::min(1.0, cal.fp8_gemm_efficiency * hw.fp8_gemm_scale) : cal.gemm_efficiency);
        gemm_rate = hw.peak_tflops(s.precision) * 1e12 * e_gemm;
        const std::string p16 = hw.tflops_bf16 > 0 ? "bf16" : (hw.tflops_fp16 > 0 ? "fp16" : s.precision);
        const double e16 = hw.gemm_efficiency > 0 ? hw.gemm_efficiency : cal.gemm_efficiency;
        bf16_rate = hw.peak_tflops(p16) * 1e12 * e16;
        attn_rate =
            hw.peak_tflops(p16) * 1e12 * (hw.gemm_efficiency > 0 ? hw.gemm_efficiency : cal.attention_efficiency);
        const double e_mem = hw.memory_efficiency > 0 ? hw.memory_efficiency : cal.memory_efficiency;
        mem_rate = hw.hbm_bw_GBps * GB * e_mem;
        const double rows_dense = T;
        const double rows_expert = m.n_experts > 0 ? T * m.topk * l.ep * l.etp / (tp * m.n_experts) : 1.0;
        eff_rows_dense = size_eff(rows_dense), eff_rows_expert = size_eff(rows_expert);
    }

    // EP all-to-all: seconds per token (per device token) for one dispatch+combine round trip fwd+bwd
    double ep_seconds_per_token() const {
        if (!(m.n_experts > 0 && l.ep > 1)) return 0;
        const double h = m.hidden, k = m.topk;
        // fwd dispatch+combine, bwd the two (bf16; fp32 everywhere when the precision is fp32)
        const double w = s.precision == "fp32" ? 4.0 : 2.0;
        const double b_disp = s.precision == "fp32" ? 4.0 * h : (s.dispatch_dtype == "fp8" ? 1.0 + 4.0 / 128 : 2.0) * h;
        const double bytes_round = b_disp + 3 * w * h;
        const double md = std::clamp((double)dom / l.etp, 1.0, (double)l.ep);
        const double ndom = std::ceil(l.ep / md);
        double out_copies = 0, in_copies = 0;
        if ((int64_t)l.ep * l.etp <= dom) {
            in_copies = k * (l.ep - 1.0) / l.ep;
        } else if (s.ep_dispatcher == "alltoall") {
            out_copies = k * (l.ep - md) / l.ep;
            in_copies = k * (md - 1.0) / l.ep;
        } else {
            out_copies = (ndom - 1) * (1 - std::pow(1 - 1 / ndom, k));
            in_copies = k * (1 - 1 / md);
        }
        if (s.node_limited_routing > 0 && ndom > 1)
            out_copies = std::min(out_copies, s.node_limited_routing * (ndom - 1) / ndom);
        const double t_out = out_copies * bytes_round / (t_ep_out.bw_GBps * GB * t_ep_out.efficiency);
        const double t_inn = in_copies * bytes_round / (t_in.bw_GBps * GB * t_in.efficiency);
        return std::max(t_out, t_inn);
    }

    // ---- one layer
    layer_eval eval_layer(const plan_layer& L) const {
        layer_eval e;
        e.params_dense = L.p_tp / tp + L.p_rep;
        e.params_expert = L.n_experts > 0 ? (double)L.n_experts / l.ep * L.p_expert / l.etp : 0;
        const layer_acts a = layer_activations(L);
        e.act_kept = a.kept;
        e.act_full = a.full;
        layer_compute_times(L, a, e);
        layer_comm_times(L, e);
        // Muon: Newton–Schulz on whole matrices, ≈ 10 iterations × 6·min_dim FLOPs per parameter
        e.ns_flops = 60.0 * (L.muon_min_dim * (L.p_tp + L.p_rep) / tp + L.expert_min_dim * e.params_expert);
        return e;
    }

    layer_acts layer_activations(const plan_layer& L) const {
        double kept = 0, full = 0, recomputed = 0;
        for (const auto& a : L.acts) {
            const bool routed = a.group == act_group::moe_fc1 || a.group == act_group::moe_act;
            const double b = (routed ? expert_load : 1.0) * a.bytes * T / ((a.tp_sharded || sp) ? tp : 1.0) *
                             ((fp8_cache && a.fp8_cache) ||
                                      (fp8_swiglu && (a.group == act_group::moe_fc1 || a.group == act_group::mlp_fc1))
                                  ? 0.5
                                  : 1.0);
            full += b;
            if (rc.drop[(int)a.group])
                recomputed += b;
            else
                kept += b;
        }
        if (rc.full) {
            recomputed = full;
            kept = L.residual_bytes * T / (sp ? tp : 1.0);
        }
        return {kept, full, recomputed};
    }

    // compute, forward + backward (+ the recomputed forward): GEMM, attention and memory time, hardware FLOPs
    void layer_compute_times(const plan_layer& L, const layer_acts& a, layer_eval& e) const {
        const double full = a.full, recomputed = a.recomputed;
        double g_dense = (L.f_gemm + L.f_indexer) * T / tp, g_exp = L.f_expert * T / tp, att = L.f_core * T / tp;
        double extra_dense = 0, extra_exp = 0, extra_att = 0;
        if (rc.full) {
            extra_dense = g_dense / 3, extra_exp = g_exp / 3, extra_att = att / 3;
        } else {
            bool has_scores = false;
            for (const auto& x : L.acts) has_scores |= x.group == act_group::attn_scores;
            if (rc.core && has_scores) extra_att = att / 3;
            if (rc.up_proj) extra_dense += L.f_fwd_up_proj * T / tp;
            if (rc.mlp) extra_dense += L.f_fwd_mlp * T / tp;
            if (rc.moe) extra_exp = g_exp / 3;
        }
        // GEMM efficiency: the calibrated peak fraction, lower for few rows or a narrow per-device width
        const double eff_dense = eff_rows_dense * size_eff(m.hidden / tp);
        const double eff_expert = eff_rows_expert * size_eff(std::max(1.0, L.expert_min_dim / l.etp));
        e.t_gemm = (g_dense + extra_dense) / (gemm_rate * eff_dense) +
                   expert_load * (g_exp + extra_exp) / (gemm_rate * eff_expert);
        e.t_att = (att + extra_att) / attn_rate;
        e.hw_flops = g_dense + g_exp + att + extra_dense + extra_exp + extra_att;
        e.t_mem = (cal.memory_passes * full + recomputed) / mem_rate;
    }

    // TP collectives, EP all-to-all and the CP ring exchange of a layer
    void layer_comm_times(const plan_layer& L, layer_eval& e) const {
        // TP collectives of h-sized activations
        if (l.tp > 1) {
            const double n_coll = 2.0 * L.tp_collectives + (rc.full ? L.tp_collectives : 0);
            const double bytes = T * m.hidden * 2.0;
            const double one = 2.0 * (tp - 1) / tp * bytes / (t_tp.bw_GBps * GB * t_tp.efficiency) +
                               2 * (tp - 1) * t_tp.latency_us * 1e-6;
            e.t_tp = n_coll * one * (s.tp_overlap ? 1 - cal.tp_overlap : 1.0);
        }
        if (L.moe && l.ep > 1) {
            const double rounds = rc.full ? 1.5 : 1.0;
            e.t_ep = rounds * (expert_load * ep_time_per_token * T / tp + ep_latency) *
                     (ep_overlap ? 1 - cal.ep_overlap : 1.0);
        }
        if (l.cp > 1) {
            const double bytes = 3.0 * (l.cp - 1) * T * L.cp_kv_bytes / (sp ? tp : 1.0);
            const double t = bytes / (t_cp.bw_GBps * GB * t_cp.efficiency);
            e.t_cp = std::max(0.0, t - e.t_att);  // ring exchange hidden behind the attention core
        }
    }

    std::vector<layer_eval> eval_layers() const {
        std::vector<layer_eval> evals;
        evals.reserve(m.layers.size());
        for (const auto& L : m.layers) evals.push_back(eval_layer(L));
        return evals;
    }

    // ---- the pipeline stages
    int C = 0;                                 // model chunks
    std::vector<int> chunk_first;              // first layer of each chunk (and the end)
    std::vector<layer_eval> evals;             // one per layer, main layers then MTP
    double head_flops_tok = 0;                 // training FLOPs per token of the head(s) and the top
    double logits_bytes = 0;                   // fp32 logits and their gradient, per prediction
    double max_full_layer_act = 0;             // the largest layer's activations without recompute
    double usable = 0;                         // HBM bytes usable per device
    double grad_b = 0, work_b = 0, mom_b = 0;  // bytes per element of gradients, working weights, moments

    // Layers per chunk, every layer's evaluation, and the per-device constants of the stages.
    void prepare_stages(plan_result& r) {
        // layers per chunk
        C = n_chunks(l);
        const std::vector<int> per_chunk =
            l.layers_per_chunk.empty() ? split_layers(m.n_main_layers, C) : l.layers_per_chunk;
        chunk_first.assign(C + 1, 0);
        for (int c = 0; c < C; c++) chunk_first[c + 1] = chunk_first[c] + per_chunk[c];
        evals = eval_layers();
        // per device
        head_flops_tok = m.head_flops_per_use() * (1 + m.n_mtp) + m.f_top;
        logits_bytes = T * m.vocab / tp * 4.0 * 2;  // fp32 logits and their gradient, per prediction
        for (const auto& e : evals) max_full_layer_act = std::max(max_full_layer_act, e.act_full);
        usable = hw.hbm_GB * GB * (1 - cal.reserve_fraction) - hw.hbm_reserved_GB * GB;
        r.usable_GB = usable / GB;
        grad_b = s.grad_dtype == "fp32" ? 4 : 2;
        work_b = s.precision == "fp32" ? 4 : 2;  // working copy of the weights (all-gathered by ZeRO-1)
        mom_b = s.moment_dtype == "fp32" ? 4 : 2;
    }

    // Pipeline rank d: its chunks' time per micro-batch, memory, DP traffic and optimizer step; updates the maxima.
    stage_cost eval_stage(int d, plan_result& r, stage_totals& tot) const {
        stage_cost st;
        st.device = d;
        st.chunks = device_chunks(l, d);
        const stage_sums a = sum_stage_chunks(st);
        stage_time(st, a, tot);
        const optimizer_shard o = stage_memory(st, a, d, r);
        tot.dp_max = std::max(tot.dp_max, stage_dp_seconds(a, r));
        tot.opt_max = std::max(tot.opt_max, stage_optimizer_seconds(a, o, r));
        if (s.optimizer_swap) tot.swap_max = std::max(tot.swap_max, 2 * o.opt_bytes / (hw.host_bw_GBps * GB));
        return st;
    }

    // Sums the layers of the stage's chunks (MTP joins the last chunk), with the embedding and the head.
    stage_sums sum_stage_chunks(stage_cost& st) const {
        stage_sums a;
        for (int c : st.chunks) {
            std::vector<int> layer_ids;
            for (int i = chunk_first[c]; i < chunk_first[c + 1]; i++) layer_ids.push_back(i);
            if (c == C - 1)
                for (int k = 0; k < m.n_mtp; k++) layer_ids.push_back(m.n_main_layers + k);
            for (int i : layer_ids) {
                const layer_eval& e = evals[i];
                a.p_dense += e.params_dense, a.p_exp += e.params_expert, a.act += e.act_kept, a.ns += e.ns_flops;
                a.t_gemm += e.t_gemm, a.t_att += e.t_att, a.t_mem += e.t_mem, a.t_tp_s += e.t_tp, a.t_ep_s += e.t_ep;
                a.t_cp_s += e.t_cp, a.hwf += e.hw_flops;
                st.layers++;
            }
            if (c == 0) {
                st.embedding = true;
                a.p_embed += m.embed_params / tp;
            }
            if (c == C - 1) {
                st.head = true;
                a.p_embed += (m.head_params) / tp + m.top_params;
                const double f = head_flops_tok * T / tp;
                a.t_gemm += f / (gemm_rate * eff_rows_dense * size_eff(m.hidden / tp));
                a.hwf += f;
                a.t_mem += cal.memory_passes * logits_bytes * (1 + m.n_mtp) / 2 / mem_rate;
            }
        }
        return a;
    }

    // Seconds per micro-batch of the stage, by kind, with the PP send/recv; adds to the hardware FLOPs.
    void stage_time(stage_cost& st, const stage_sums& a, stage_totals& tot) const {
        // DualPipe: each micro-batch passes one of the device's two chunks (the two directions)
        const double share = l.schedule == "dualpipe" ? 0.5 : 1.0;
        st.t_gemm = a.t_gemm * share, st.t_attention = a.t_att * share, st.t_memory = a.t_mem * share;
        st.t_tp = a.t_tp_s * share, st.t_ep = a.t_ep_s * share, st.t_cp = a.t_cp_s * share;
        tot.hw_flops_sum += a.hwf * share;
        // PP send/recv of the residual stream, both directions, per chunk boundary crossed
        if (l.pp > 1) {
            const double resid = m.layers.empty() ? 2.0 * m.hidden : m.layers.front().residual_bytes;
            const double bytes = T * resid / (sp ? tp : 1.0);
            const double crossings = 2.0 * (l.schedule == "dualpipe" ? 1 : (double)st.chunks.size());
            st.t_pp = crossings * bytes / (t_pp.bw_GBps * GB * t_pp.efficiency) * (1 - cal.background_overlap);
        }
        st.t_mb = st.t_gemm + st.t_attention + st.t_memory + st.t_tp + st.t_ep + st.t_pp + st.t_cp;
        tot.t_mb_max = std::max(tot.t_mb_max, st.t_mb);
    }

    // The stage's memory: weights, gradients, optimizer state, activations in flight, buffers; updates the peak.
    optimizer_shard stage_memory(stage_cost& st, const stage_sums& a, int d, plan_result& r) const {
        const double p_all = a.p_dense + a.p_exp + a.p_embed;
        st.params = p_all;
        st.weights_GB = p_all * 2 / GB;
        st.grads_GB = p_all * grad_b / GB;
        if (s.shard_grads)
            st.grads_GB = ((a.p_dense + a.p_embed) * grad_b / std::max(1.0, (double)r.dp * l.cp) +
                           a.p_exp * grad_b / std::max(1, r.edp)) /
                          GB;
        const optimizer_shard o = optimizer_state(a, r);
        st.optimizer_GB = s.optimizer_swap ? 0 : o.opt_bytes / GB;
        const double in_flight = micro_batches_in_flight(d);
        st.in_flight = in_flight;
        double act_bytes = a.act * in_flight;  // DualPipe(V): (pp+1) or (2pp+1) chunk units = in_flight device units
        if (rc.full) act_bytes += max_full_layer_act;  // the layer being recomputed
        if (st.head) act_bytes += logits_bytes;
        st.activations_GB = act_bytes / GB;
        st.buffers_GB = (l.ep > 1 || l.tp > 1 || r.dp > 1) ? cal.comm_buffer_GB : 0;
        st.total_GB = st.weights_GB + st.grads_GB + st.optimizer_GB + st.activations_GB + st.buffers_GB;
        r.peak_GB = std::max(r.peak_GB, st.total_GB);
        return o;
    }

    // The optimizer state of the stage, sharded over DP (dense) and EDP (experts) under ZeRO-1.
    optimizer_shard optimizer_state(const stage_sums& a, const plan_result& r) const {
        const double dense_shard = s.zero1 ? (double)r.dp * l.cp : 1.0;
        const double exp_shard = s.zero1 ? (double)r.edp : 1.0;
        const double mats_moments = s.optimizer == "muon" ? 1 : 2;
        optimizer_shard o;
        o.p_dense_opt = (a.p_dense) / dense_shard, o.p_embed_opt = a.p_embed / dense_shard;
        o.p_exp_opt = a.p_exp / exp_shard;
        o.opt_bytes = (o.p_dense_opt + o.p_exp_opt) * (4 + mats_moments * mom_b) + o.p_embed_opt * (4 + 2 * mom_b);
        return o;
    }

    // Micro-batches of activations pipeline rank d holds at its peak (in units of its layers).
    double micro_batches_in_flight(int d) const {
        double in_flight = 1;
        if (l.pp > 1) {
            if (l.schedule == "1f1b")
                in_flight = std::min<double>((double)mb, l.pp - d);
            else if (l.schedule == "interleaved")
                in_flight = std::min<double>((double)mb, ((l.pp - d - 1) * 2.0 + (l.vpp - 1.0) * l.pp + 1) / l.vpp);
            else if (l.schedule == "dualpipe")
                in_flight = (l.pp + 1) / 2.0;
            else
                in_flight = (2.0 * l.pp + 1) / 2.0;
        }
        return in_flight;
    }

    // DP gradient reduce-scatter + parameter all-gather (ZeRO-1), or all-reduce
    double stage_dp_seconds(const stage_sums& a, const plan_result& r) const {
        auto dp_bytes = [&](double params, double n) {
            if (n <= 1) return 0.0;
            return s.zero1 ? (n - 1) / n * params * (grad_b + work_b) : 2 * (n - 1) / n * params * grad_b;
        };
        const double n_dense = (double)r.dp * l.cp;
        return ring_time(dp_bytes(a.p_dense + a.p_embed, n_dense), (int)n_dense, t_dp) +
               ring_time(dp_bytes(a.p_exp, r.edp), r.edp, t_dp);
    }

    // optimizer step: memory-bound update of the local shard (+ Newton–Schulz for Muon)
    double stage_optimizer_seconds(const stage_sums& a, const optimizer_shard& o, const plan_result& r) const {
        const double p_shard = o.p_dense_opt + o.p_exp_opt + o.p_embed_opt;
        const double upd_bytes = p_shard * (grad_b + 2 * 4 + 2 * 2 * mom_b + work_b);
        double t_opt = upd_bytes / mem_rate;
        if (s.optimizer == "muon") t_opt += a.ns / (s.zero1 ? std::max(1.0, (double)r.edp) : 1.0) / bf16_rate;
        return t_opt;
    }

    // ---- the step
    // Pipeline (with its bubble), exposed DP traffic, optimizer and swap time of the step.
    void step_time(plan_result& r, const stage_totals& tot) const {
        const double t_mb_max = tot.t_mb_max, dp_max = tot.dp_max;
        const double bubble = pipeline_bubble(t_mb_max);
        r.t_bubble = bubble;
        r.t_pipeline = (double)mb * t_mb_max + bubble;
        r.t_dp = dp_max;
        r.t_dp_exposed = s.dp_overlap ? dp_max * (1 - cal.background_overlap) : dp_max;
        r.t_optimizer = tot.opt_max;
        r.t_swap = tot.swap_max;
        r.t_step = r.t_pipeline + r.t_dp_exposed + r.t_optimizer + r.t_swap;
    }

    double pipeline_bubble(double t_mb_max) const {
        const double P = l.pp;
        double bubble = 0;
        if (l.pp > 1) {
            if (l.schedule == "1f1b")
                bubble = (P - 1) * t_mb_max;
            else if (l.schedule == "interleaved")
                bubble = (P - 1) * t_mb_max / l.vpp;
            else if (l.schedule == "dualpipe")
                bubble = (P / 2 - 1) * (2.0 / 3) * t_mb_max;
            else
                bubble = (P - 1) * t_mb_max / 3;
        }
        return bubble;
    }

    // Tokens/s, TFLOPS and MFU of the step.
    void throughput(plan_result& r, double hw_flops_sum) const {
        const double tokens = (double)s.global_batch * (double)s.seq_len;
        r.tokens_per_s = tokens / r.t_step;
        r.tokens_per_s_per_device = r.tokens_per_s / (double)N;
        r.flops = flops_per_token(m, s.convention);
        r.tflops_per_device = r.flops.total * r.tokens_per_s_per_device / 1e12;
        r.mfu = r.tflops_per_device / hw.mfu_peak_tflops();
        r.hardware_flops_per_token = hw_flops_sum * l.tp / T;  // per token, all stages (incl. recompute)
    }
};

}  // namespace

plan_result evaluate(const plan_model& m, const hardware_profile& hw, const calibration& cal, int64_t N,
                     const plan_setup& s, const plan_layout& l) {
    check_layout(m, hw, N, s, l);
    plan_result r;
    r.devices = N;
    r.dp = (int)(N / ((int64_t)l.tp * l.cp * l.pp));
    r.edp = (int)(N / ((int64_t)l.pp * l.ep * l.etp));
    layout_evaluator ev(m, hw, cal, N, s, l, r.dp);
    r.micro_batches = ev.mb;
    ev.prepare_stages(r);
    stage_totals tot;
    for (int d = 0; d < l.pp; d++) r.stages.push_back(ev.eval_stage(d, r, tot));
    r.fits = r.peak_GB * GB <= ev.usable;
    r.headroom_GB = ev.usable / GB - r.peak_GB;
    r.t_mb_max = tot.t_mb_max;
    ev.step_time(r, tot);
    ev.throughput(r, tot.hw_flops_sum);
    if (!r.fits)
        r.notes.push_back(fmt::format("does not fit: peak {:.1f} GB > usable {:.1f} GB", r.peak_GB, r.usable_GB));
    return r;
}

}  // namespace trex::plan
