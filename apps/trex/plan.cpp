// trex plan: memory, time and MFU of DeepSeek-style training at cluster scale, layout search, validation against
// published runs (docs/plan.md).
//
//   trex plan [--run FILE] [--model M --hardware H --devices N] [layout and setup options] [--json]
//   trex plan search --model M --hardware H --devices N [setup options] [--top N] [--json]
//   trex plan search --run FILE [--top N] [--json]     (also ranks the run's layout among the alternatives)
//   trex plan validate [--points FILE] [--holdout] [--json]
//   trex plan calibrate --bench FILE --bandwidth FILE --out FILE
//   trex plan compare --measured FILE --hardware FILE [--model CONFIG] [--json]
//
// Models: configs/plan/<name>.json or a DeepSeek-V4 config.json; hardware: configs/hardware/<name>.json; the
// constants: configs/plan/calibration.json (--calibration FILE).
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <optional>
#include <tuple>

#include "commands.hpp"
#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/plan/compare.hpp"
#include "trex/plan/cost.hpp"
#include "trex/plan/fit.hpp"
#include "trex/plan/report.hpp"
#include "trex/plan/search.hpp"
#include "trex/plan/validate.hpp"

namespace trex::cli {

namespace {

using namespace trex::plan;

// Command-line values; unset ones leave the run file's (or the defaults') values alone.
struct plan_args {
    std::string run, model, hardware, calibration = "configs/plan/calibration.json";
    std::optional<int64_t> devices, seq, gbs;
    std::optional<int> mbs, tp, pp, vpp, ep, etp, cp, node_limited;
    std::optional<std::string> schedule, precision, optimizer, convention, dispatcher, dispatch_dtype, moments, grads;
    std::optional<std::vector<std::string>> recompute;
    bool swap = false, no_swap = false, non_causal = false, no_zero1 = false, ep_overlap = false, tp_overlap = false;
    bool no_sp = false, no_flash = false, dense_csa = false, json = false, holdout = false;
    // search
    int top = 10, max_tp = 0;
    // validate
    std::string points = "configs/plan/validation.json";
    // calibrate
    std::string bench, bandwidth, out, name = "measured";
    // compare
    std::string measured;
};

void add_setup_options(CLI::App* c, plan_args& a) {
    c->add_option("--model", a.model, "configs/plan/<name>.json, a path, or a DeepSeek-V4 config.json");
    c->add_option("--hardware", a.hardware, "configs/hardware/<name>.json or a path");
    c->add_option("--devices", a.devices, "device count (an A3 'NPU' is one die)");
    c->add_option("--calibration", a.calibration, "the model's constants")->capture_default_str();
    c->add_option("--seq", a.seq, "sequence length (default 4096)");
    c->add_option("--gbs", a.gbs, "global batch in sequences (default 1024)");
    c->add_option("--precision", a.precision, "GEMM precision: bf16, fp16, fp8");
    c->add_option("--optimizer", a.optimizer, "adamw or muon");
    c->add_flag("--no-zero1", a.no_zero1, "replicate the optimizer state over DP");
    c->add_option("--moments", a.moments, "optimizer moment dtype: fp32 or bf16");
    c->add_option("--grads", a.grads, "main gradient dtype: fp32 or bf16");
    c->add_option("--convention", a.convention, "FLOPs convention for MFU: megatron or deepseek");
    c->add_flag("--non-causal", a.non_causal, "count attention over the full square (DeepSeek's non-causal MFU)");
    c->add_option("--dispatcher", a.dispatcher, "EP dispatcher: deepep (one copy per node) or alltoall");
    c->add_option("--dispatch-dtype", a.dispatch_dtype, "EP dispatch payload: bf16 or fp8");
    c->add_option("--node-limited", a.node_limited, "tokens reach at most M nodes (DeepSeek-V3: 4)");
    c->add_flag("--ep-overlap", a.ep_overlap, "EP all-to-all overlapped with compute (1F1B A2A / fb overlap)");
    c->add_flag("--tp-overlap", a.tp_overlap, "TP collectives overlapped with GEMMs");
    c->add_flag("--no-sp", a.no_sp, "no sequence parallelism with TP");
    c->add_flag("--no-flash", a.no_flash, "no flash attention (stores the s x s scores)");
    c->add_flag("--dense-csa", a.dense_csa, "V4: CSA attends to all visible compressed entries (dense warm-up)");
    c->add_flag("--json", a.json, "print one JSON object");
}

void add_layout_options(CLI::App* c, plan_args& a) {
    c->add_option("--run", a.run, "a run file: {model, hardware, devices, setup, layout} (docs/plan.md §5)");
    c->add_option("--tp", a.tp, "tensor parallel");
    c->add_option("--pp", a.pp, "pipeline stages (devices)");
    c->add_option("--vpp", a.vpp, "model chunks per device (interleaved)");
    c->add_option("--ep", a.ep, "expert parallel");
    c->add_option("--etp", a.etp, "expert tensor parallel");
    c->add_option("--cp", a.cp, "context parallel");
    c->add_option("--schedule", a.schedule, "1f1b, interleaved, dualpipe, dualpipev");
    c->add_option("--mbs", a.mbs, "micro-batch (sequences)");
    c->add_option("--recompute", a.recompute,
                  "none, selective, full, or modules: core_attn mla_up_proj layernorm mlp moe_act moe mhc")
        ->expected(1, -1);
    c->add_flag("--swap", a.swap, "optimizer state on the host (swap-optimizer / offload)");
    c->add_flag("--no-swap", a.no_swap, "optimizer state on the device");
}

plan_run make_run(const plan_args& a, bool need_layout) {
    plan_run run;
    if (!a.run.empty()) run = load_run(a.run);
    if (!a.model.empty()) run.model = a.model;
    if (!a.hardware.empty()) run.hardware = a.hardware;
    if (a.devices) run.devices = *a.devices;
    TREX_CHECK(!run.model.empty(), "--model (or --run) is required");
    TREX_CHECK(!run.hardware.empty(), "--hardware (or --run) is required");
    TREX_CHECK(run.devices >= 1, "--devices (or --run) is required and must be >= 1");
    plan_setup& s = run.setup;
    if (a.seq) s.seq_len = *a.seq;
    if (a.gbs) s.global_batch = *a.gbs;
    if (a.mbs) s.micro_batch = *a.mbs;
    if (a.precision) s.precision = *a.precision;
    if (a.optimizer) s.optimizer = *a.optimizer;
    if (a.no_zero1) s.zero1 = false;
    if (a.moments) s.moment_dtype = *a.moments;
    if (a.grads) s.grad_dtype = *a.grads;
    if (a.convention) s.convention.name = *a.convention;
    if (a.non_causal) s.convention.causal = false;
    if (a.dispatcher) s.ep_dispatcher = *a.dispatcher;
    if (a.dispatch_dtype) s.dispatch_dtype = *a.dispatch_dtype;
    if (a.node_limited) s.node_limited_routing = *a.node_limited;
    if (a.ep_overlap) s.ep_overlap = true;
    if (a.tp_overlap) s.tp_overlap = true;
    if (a.no_sp) s.sequence_parallel = false;
    if (a.no_flash) s.flash_attention = false;
    if (a.dense_csa) s.dense_csa = true;
    if (a.recompute) s.recompute = *a.recompute;
    if (a.swap) s.optimizer_swap = true;
    if (a.no_swap) s.optimizer_swap = false;
    // the same checks as a run file (one line each)
    nlohmann::json sj = {{"precision", s.precision},
                         {"optimizer", s.optimizer},
                         {"moment_dtype", s.moment_dtype},
                         {"grad_dtype", s.grad_dtype},
                         {"flops_convention", s.convention.name},
                         {"ep_dispatcher", s.ep_dispatcher},
                         {"dispatch_dtype", s.dispatch_dtype},
                         {"recompute", s.recompute},
                         {"seq_len", s.seq_len},
                         {"global_batch", s.global_batch},
                         {"micro_batch", s.micro_batch}};
    setup_from_json(jreader(sj, "command line"));
    if (need_layout) {
        plan_layout& l = run.layout;
        if (a.tp) l.tp = *a.tp;
        if (a.pp) l.pp = *a.pp;
        if (a.ep) l.ep = *a.ep;
        if (a.etp) l.etp = *a.etp;
        if (a.cp) l.cp = *a.cp;
        if (a.vpp) {
            l.vpp = *a.vpp;
            if (l.vpp > 1 && !a.schedule) l.schedule = "interleaved";
        }
        if (a.schedule) l.schedule = *a.schedule;
        for (int v : {l.tp, l.pp, l.vpp, l.ep, l.etp, l.cp})
            TREX_CHECK(v >= 1, "parallel sizes must be >= 1 (got {})", v);
        TREX_CHECK(l.schedule == "1f1b" || l.schedule == "interleaved" || l.schedule == "dualpipe" ||
                       l.schedule == "dualpipev",
                   "--schedule '{}' is not one of 1f1b, interleaved, dualpipe, dualpipev", l.schedule);
        if (!a.run.empty() && (a.pp || a.vpp || a.schedule)) l.layers_per_chunk.clear();
    }
    return run;
}

void print(const std::string& s) {
    std::fputs(s.c_str(), stdout);
}

void run_plan(const plan_args& a) {
    const plan_run run = make_run(a, true);
    const calibration cal = load_calibration(a.calibration);
    const plan_model m = load_plan_model(run.model, run.setup.seq_len, run.setup.flash_attention, run.setup.dense_csa);
    const hardware_profile hw = load_hardware(run.hardware);
    const plan_result r = evaluate(m, hw, cal, run.devices, run.setup, run.layout);
    const plan_context c{m, hw, cal, run.devices, run.setup, run.layout};
    if (a.json)
        std::printf("%s\n", result_json(c, r).dump(2).c_str());
    else
        print(format_result(c, r));
}

// A reference layout for the search: a run file's, or one given with --tp/--pp/... (its rank is reported).
bool has_reference_layout(const plan_args& a) {
    return !a.run.empty() || a.tp || a.pp || a.vpp || a.ep || a.etp || a.cp || a.schedule;
}

void run_search(const plan_args& a) {
    const bool with_reference = has_reference_layout(a);
    const plan_run run = make_run(a, with_reference);
    const calibration cal = load_calibration(a.calibration);
    const plan_model m = load_plan_model(run.model, run.setup.seq_len, run.setup.flash_attention, run.setup.dense_csa);
    const hardware_profile hw = load_hardware(run.hardware);
    search_options o;
    o.top = a.top;
    o.max_tp = a.max_tp;
    if (a.mbs) o.micro_batches = {*a.mbs};
    if (a.recompute) o.recompute = {*a.recompute};
    if (a.swap) o.try_swap = true;
    const search_report rep = with_reference
                                  ? search_layouts(m, hw, cal, run.devices, run.setup, o, run.layout, run.setup)
                                  : search_layouts(m, hw, cal, run.devices, run.setup, o);
    if (a.json)
        std::printf("%s\n", search_json(m, hw, run.devices, rep).dump(2).c_str());
    else
        print(format_search(m, hw, run.devices, rep));
}

void run_validate(const plan_args& a) {
    const calibration cal = load_calibration(a.calibration);
    if (a.holdout) {
        const holdout_report rep = validate_holdout(load_validation(a.points), cal);
        if (a.json)
            std::printf("%s\n", holdout_json(rep, cal).dump(2).c_str());
        else
            print(format_holdout(rep, cal));
        return;
    }
    const auto rows = validate_all(load_validation(a.points), cal);
    if (a.json)
        std::printf("%s\n", validation_json(rows, cal).dump(2).c_str());
    else
        print(format_validation(rows, cal));
}

// Writes a hardware profile of this machine from measurements: `trex bench step --json` (measured FMA peak and
// oneDNN sgemm rate) and the bandwidth file of `mpirun -n 2 trex bench comm --out FILE` ({"intra_gbps",
// "inter_gbps", "node_size", "hbm_gbps", "memory_gb", "latency_us"}; a hand-written file works too).
void run_calibrate(const plan_args& a) {
    TREX_CHECK(!a.bench.empty(), "--bench FILE (the output of `trex bench step --json`) is required");
    TREX_CHECK(!a.bandwidth.empty(),
               "--bandwidth FILE (the output of `mpirun -n 2 trex bench comm --out FILE`) is required");
    TREX_CHECK(!a.out.empty(), "--out FILE is required");
    const json b = read_json_file(a.bench);
    const jreader br(b, a.bench);
    const double peak = br.num_req("peak_gflops", 1e-6, 1e12);
    const double sgemm = br.num_req("sgemm_gflops", 1e-6, 1e12);
    const json bj = read_json_file(a.bandwidth);
    const jreader r(bj, a.bandwidth);
    r.check_keys({"intra_gbps", "inter_gbps", "node_size", "hbm_gbps", "memory_gb", "latency_us", "measured"});
    const double intra = r.num_req("intra_gbps", 1e-6, 1e9);
    const double inter = r.num_req("inter_gbps", 1e-6, 1e9);
    const int node = (int)r.integer("node_size", 1, 1, 1 << 20);
    const double hbm = r.num_req("hbm_gbps", 1e-6, 1e9);
    const double mem = r.num_req("memory_gb", 1e-6, 1e9);
    const double latency = r.num("latency_us", 1.0, 0, 1e6);
    const std::string bw_source = "bandwidths from " + a.bandwidth;
    nlohmann::ordered_json h;
    h["name"] = a.name;
    h["unit"] = "CPU rank";
    h["source"] = fmt::format(
        "trex plan calibrate: peak {:.1f} GFLOP/s fp32 FMA and oneDNN sgemm {:.1f} GFLOP/s from "
        "{}; {}",
        peak, sgemm, a.bench, bw_source);
    h["peak_tflops"] = {{"fp32", peak / 1e3}};
    h["mfu_peak"] = "fp32";
    h["hbm_gb"] = mem;
    h["hbm_bw_gbps"] = hbm;
    h["node_size"] = node;
    h["tiers"] = nlohmann::ordered_json::array(
        {{{"name", "intra"}, {"size", node}, {"bw_gbps", intra}, {"latency_us", latency}, {"efficiency", 1.0}},
         {{"name", "inter"}, {"size", 0}, {"bw_gbps", inter}, {"latency_us", latency}, {"efficiency", 1.0}}});
    h["efficiency"] = {{"gemm", std::min(1.0, sgemm / peak)}, {"memory", 1.0}};
    hardware_from_json(nlohmann::json::parse(h.dump()), a.out);  // self-check
    write_file_atomic(a.out, h.dump(2) + "\n");
    std::printf("wrote %s: fp32 peak %.1f GFLOP/s, GEMM efficiency %.3f, links %.3g / %.3g GB/s\n", a.out.c_str(), peak,
                std::min(1.0, sgemm / peak), intra, inter);
}

// The planner's predictions next to the step times `trex bench dist` measured on this machine (docs/plan.md §9).
void run_compare(const plan_args& a) {
    TREX_CHECK(!a.measured.empty(), "--measured FILE (the output of `trex bench dist --json`) is required");
    TREX_CHECK(!a.hardware.empty(), "--hardware FILE (a profile from `trex plan calibrate`) is required");
    const measured_dist m = measured_dist_from_json(read_json_file(a.measured), a.measured);
    std::string model = a.model;
    if (model.empty()) model = m.config == "<embedded v4-tiny>" ? "v4-tiny" : m.config;
    const plan_model pm = load_plan_model(model, m.seq);
    const hardware_profile hw = load_hardware(a.hardware);
    const calibration cal = load_calibration(a.calibration);
    const compare_result c = compare_with_measured(m, pm, hw, cal);
    std::printf("%s", a.json ? compare_json(c, m, hw).c_str() : format_compare(c, m, hw).c_str());
}

}  // namespace

void register_plan(CLI::App& app) {
    auto a = std::make_shared<plan_args>();
    CLI::App* plan = app.add_subcommand("plan", "memory, time and MFU of a training layout; layout search; validation");
    add_setup_options(plan, *a);
    add_layout_options(plan, *a);
    plan->require_subcommand(0, 1);

    auto b = std::make_shared<plan_args>();
    CLI::App* search = plan->add_subcommand("search", "rank the feasible layouts for a device count");
    add_setup_options(search, *b);
    search->add_option("--run", b->run,
                       "a run file: searches its model, hardware, devices and setup, and ranks "
                       "its layout among the alternatives");
    for (auto [flag, dst, what] : std::vector<std::tuple<std::string, std::optional<int>*, std::string>>{
             {"--tp", &b->tp, "tensor parallel"},
             {"--pp", &b->pp, "pipeline stages"},
             {"--vpp", &b->vpp, "model chunks per device"},
             {"--ep", &b->ep, "expert parallel"},
             {"--etp", &b->etp, "expert tensor parallel"},
             {"--cp", &b->cp, "context parallel"}})
        search->add_option(flag, *dst, what + " of a reference layout to rank among the alternatives");
    search->add_option("--schedule", b->schedule, "schedule of the reference layout");
    search->add_option("--top", b->top, "layouts shown")->capture_default_str();
    search->add_option("--max-tp", b->max_tp, "largest TP tried (default: the server size)");
    search->add_option("--mbs", b->mbs, "only this micro-batch (default: 1, 2, 4)");
    search->add_option("--recompute", b->recompute, "only this recompute policy")->expected(1, -1);
    search->callback([b]() { run_search(*b); });

    auto v = std::make_shared<plan_args>();
    CLI::App* val = plan->add_subcommand("validate", "predictions next to published runs, with relative errors");
    val->add_option("--points", v->points, "validation file")->capture_default_str();
    val->add_option("--calibration", v->calibration, "the model's constants")->capture_default_str();
    val->add_flag("--holdout", v->holdout,
                  "leave-one-out: fit the constants on all tested points but one, predict that one, for each");
    val->add_flag("--json", v->json, "print one JSON object");
    val->callback([v]() { run_validate(*v); });

    auto c = std::make_shared<plan_args>();
    CLI::App* cal = plan->add_subcommand("calibrate", "write a hardware profile of this machine from measurements");
    cal->add_option("--bench", c->bench, "output of `trex bench step --json`")->required();
    cal->add_option("--bandwidth", c->bandwidth, "output of `mpirun -n 2 trex bench comm --out FILE`")->required();
    cal->add_option("--out", c->out, "hardware profile to write")->required();
    cal->add_option("--name", c->name, "profile name")->capture_default_str();
    cal->callback([c]() { run_calibrate(*c); });

    auto k = std::make_shared<plan_args>();
    CLI::App* cmp = plan->add_subcommand("compare", "predictions next to measured `trex bench dist` step times");
    cmp->add_option("--measured", k->measured, "output of `trex bench dist --json`")->required();
    cmp->add_option("--hardware", k->hardware, "profile from `trex plan calibrate`")->required();
    cmp->add_option("--model", k->model, "model config (default: the one the bench ran)");
    cmp->add_option("--calibration", k->calibration, "the model's constants")->capture_default_str();
    cmp->add_flag("--json", k->json, "print one JSON object");
    cmp->callback([k]() { run_compare(*k); });

    plan->callback([a, plan]() {
        if (plan->get_subcommands().empty()) run_plan(*a);
    });
}

}  // namespace trex::cli
