#include "trex/bench/bench_step.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "trex/base/error.hpp"
#include "trex/base/resources.hpp"
#include "trex/base/timer.hpp"
#include "trex/bench/peer_process.hpp"
#include "trex/io/safetensors.hpp"
#include "trex/kernels/cpu/gemm.hpp"
#include "trex/kernels/cpu/peak.hpp"
#include "trex/kernels/precision.hpp"
#include "trex/model/counts.hpp"
#include "trex/model/model.hpp"
#include "trex/optim/optimizer.hpp"
#include "trex/train/synthetic_batch.hpp"

namespace trex::bench {

namespace {

// The model (w.*) and batch (in.*) in the fixture layout of docs/model.md §6, for the PyTorch peer.
void write_peer_input(const std::string& path, dsv4_model& model, const synthetic_batch& b,
                      const bench_step_options& opt, const step_options& so) {
    safetensors_writer w;
    auto& P = model.params();
    for (size_t i = 0; i < P.specs.size(); i++) {
        const auto& s = P.specs[i];
        if (s.role == tensor_role::hash_table)
            w.add_i32("w." + s.name, s.shape, P.tables.data() + P.offset[i]);
        else
            w.add_f32("w." + s.name, s.shape, P.w((int)i));
    }
    const std::vector<int64_t> shape{b.B, b.S};
    w.add_i32("in.input_ids", shape, b.ids.data());
    w.add_i32("in.labels", shape, b.labels.data());
    w.add_i32("in.mtp_input_ids", shape, b.mtp_ids.data());
    w.add_i32("in.mtp_labels", shape, b.mtp_labels.data());
    w.add_i32("in.doc_start", shape, b.doc_start.data());
    w.set_metadata("config", config_to_json(model.config()).dump());
    w.set_metadata("mode", opt.dense_csa ? "dense" : "topk");
    w.set_metadata("lambda_mtp", fmt::format("{}", so.lambda_mtp));
    w.set_metadata("alpha_bal", fmt::format("{}", so.alpha_bal));
    w.set_metadata("lambda_idx", fmt::format("{}", so.lambda_idx));
    w.write(path);
}

void check_options(const bench_step_options& opt) {
    TREX_CHECK(opt.batch > 0 && opt.seq > 0, "bench step: --batch and --seq must be positive");
    TREX_CHECK(opt.steps > 0 && opt.warmup >= 0, "bench step: --steps must be positive and --warmup non-negative");
    TREX_CHECK(opt.peer_impl == "reference" || opt.peer_impl == "compile" || opt.peer_impl == "hf",
               "bench step: --peer-impl must be 'reference', 'compile' or 'hf', got '{}'", opt.peer_impl);
    const std::string& t = opt.peer_threads;
    const bool number = !t.empty() && t.size() <= 4 && std::all_of(t.begin(), t.end(), ::isdigit) && std::stoi(t) > 0;
    TREX_CHECK(t == "auto" || number, "bench step: --peer-threads must be 'auto' or a positive integer, got '{}'", t);
    if (parse_matmul_precision(opt.precision, "bench step --precision") == matmul_precision::bf16)
        require_bf16("bench step --precision bf16");
}

// The step being timed: the model as initialised, one synthetic batch, the step's options and (optionally) the
// optimizer. lm_only: the step HF transformers can run (no MTP, no balance or indexer loss).
struct timed_step {
    dsv4_model model;
    synthetic_batch batch;
    step_options so;
    batch_view view;
    std::unique_ptr<optimizer> optim;
    matmul_precision precision = matmul_precision::fp32;  // of the model's GEMMs (the optimizer's stay fp32)
    std::vector<double> times, opt_times;                 // of the last time() call, sorted
    std::vector<double> fp32_times;                       // of its fp32 twin steps (a bf16 run), sorted
    double loss = 0;                                      // of the last step run
    double fp32_loss = 0;                                 // of the last fp32 twin step

    timed_step(const model_config& cfg, const bench_step_options& opt, bool lm_only)
        : model(cfg), batch(make_synthetic_batch(opt.batch, opt.seq, cfg.vocab_size, opt.seed + 1)) {
        model.params().init(opt.seed);
        so.dense_csa = opt.dense_csa;
        so.recompute = opt.recompute;
        view = batch.view();
        if (lm_only) {
            so.lambda_mtp = 0.0;
            so.alpha_bal = 0.0;
            so.lambda_idx = 0.0;
            view.mtp_input_ids = nullptr;
            view.mtp_labels = nullptr;
        }
    }

    void add_optimizer() { optim = std::make_unique<optimizer>(model.params(), optim_config{}, model.kernels()); }

    // Runs warmup + steps steps, timing the last `steps` (the whole step, and the optimizer's part of it). With
    // fp32_twin (a bf16 run), each step is followed by the same step in fp32, timed into fp32_times: the precisions
    // alternate, so a machine whose speed drifts during the run slows both alike and their ratio stays fair.
    void time(int warmup, int steps, bool fp32_twin = false) {
        times.clear();
        opt_times.clear();
        fp32_times.clear();
        for (int i = 0; i < warmup + steps; i++) {
            double t_opt = 0;
            const double dt = time_one(precision, t_opt, loss);
            if (i >= warmup) {
                times.push_back(dt);
                opt_times.push_back(t_opt);
            }
            if (!fp32_twin) continue;
            const double dt32 = time_one(matmul_precision::fp32, t_opt, fp32_loss);
            if (i >= warmup) fp32_times.push_back(dt32);
        }
        std::sort(times.begin(), times.end());
        std::sort(opt_times.begin(), opt_times.end());
        std::sort(fp32_times.begin(), fp32_times.end());
    }

    // One step (zeroed gradients, forward + backward in precision p, the optimizer when there is one): its seconds;
    // the optimizer's part in t_opt, the loss in step_loss.
    double time_one(matmul_precision p, double& t_opt, double& step_loss) {
        const double t0 = now_seconds();
        model.params().zero_grads();
        step_result sr;
        {
            const scoped_matmul_precision scope(p);
            sr = model.step(view, so);
        }
        t_opt = 0;
        if (optim) {
            const double t1 = now_seconds();
            optim->step(1e-4);
            t_opt = now_seconds() - t1;
        }
        step_loss = sr.loss;
        return now_seconds() - t0;
    }

    double median() const { return times[times.size() / 2]; }

    // One more step with the per-phase profile and the GEMM counters on.
    void profile(bench_step_result& r) {
        so.profile = true;
        const double t0 = now_seconds();
        model.params().zero_grads();
        cpu::gemm_stats_begin();
        step_result sr;
        {
            const scoped_matmul_precision scope(precision);
            sr = model.step(view, so);
        }
        r.gemm = cpu::gemm_stats_end();
        r.profile_step_seconds = now_seconds() - t0;
        r.profile = sr.profile.seconds;
        so.profile = false;
    }
};

// The PyTorch peer: its interpreter, its script and the input file it reads (the model and the batch).
struct peer_files {
    std::string python, script, input;
};

peer_files locate_peer(const bench_step_options& opt) {
    const std::string src = TREX_SOURCE_DIR;
    peer_files f;
    f.python = opt.python.empty() ? src + "/.venv/bin/python" : opt.python;
    f.script = opt.peer_script.empty() ? src + "/tests/reference/peer_bench.py" : opt.peer_script;
    if (opt.peer) {
        TREX_CHECK(std::filesystem::exists(f.python),
                   "bench step --peer: no Python at {} (run scripts/setup.sh --with-torch, or pass --python)",
                   f.python);
        TREX_CHECK(std::filesystem::exists(f.script), "bench step --peer: peer script {} not found", f.script);
    }
    f.input =
        fmt::format("{}/trex-peer-{}.safetensors", std::filesystem::temp_directory_path().string(), (long)getpid());
    return f;
}

// Model FLOPs of the timed step, the achieved rate, the FMA peak (the higher of the measurements before and after
// the timed steps, checked against real GEMMs) and the MFU.
void measure_rates(const model_config& cfg, const bench_step_options& opt, bool lm_only,
                   const peak_measurement& fma_before, bench_step_result& r) {
    flops_options fo;
    fo.seq_len = opt.seq;
    fo.dense_csa = opt.dense_csa;
    fo.include_mtp = cfg.has_mtp() && !lm_only;
    fo.indexer_loss = !lm_only;
    const flops_breakdown fb = training_flops_per_token(cfg, fo);
    r.flops_per_token = fb.total;
    r.flops_formula = fb.formula;
    r.gflops = r.flops_per_token * r.tokens_per_s / 1e9;
    // the GEMM FLOPs the profiled step executed against the model FLOPs that are matrix products (all but the
    // attention core's QKᵀ and PV): a check of the FLOP formula
    if (r.gemm.calls > 0)
        r.gemm_flops_vs_model =
            (r.gemm.flops + r.gemm.nested_flops) / ((fb.total - fb.attention) * (double)r.tokens_per_step);
    const bool bf16 = r.precision == "bf16";
    const peak_measurement fma_after = measure_peak(parse_matmul_precision(r.precision, "bench step --precision"));
    r.peak_gflops = std::max(fma_before.gflops, fma_after.gflops);
    r.peak_gflops_low = std::min(fma_before.gflops, fma_after.gflops);
    r.peak_isa = fma_after.isa;
    r.sgemm_gflops = measure_sgemm_peak().gflops;
    peak_measurement peak = fma_after;
    peak.gflops = r.peak_gflops;
    if (bf16) {
        r.bf16_matmul_gflops = measure_gemm_peak(matmul_precision::bf16).gflops;
        check_peak_against_gemm(peak, r.bf16_matmul_gflops, "oneDNN bf16 matmul 2048^3");
    } else {
        check_peak_against_gemm(peak, r.sgemm_gflops, "oneDNN sgemm 2048^3");
    }
    if (r.gemm.seconds > 0) check_peak_against_gemm(peak, r.gemm.flops / r.gemm.seconds / 1e9, "the step's GEMMs");
    r.peak_gflops = peak.gflops;  // (measured again when the first two were below the GEMMs: a busy machine)
    r.mfu = r.peak_gflops > 0 ? r.gflops / r.peak_gflops : 0.0;
    check_mfu(r.mfu, "bench step");
}

// Runs the PyTorch peer on the same model and batch and reads its timing into r.
void run_peer(const peer_files& peer, const bench_step_options& opt, bench_step_result& r) {
    // The peer may use OpenBLAS: the machine's OPENBLAS_* overrides are unset for this one command only.
    const std::string cmd = fmt::format(
        "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE '{}' '{}' '{}' --steps {} --warmup {} --threads {} --impl {} "
        "--precision {}{}",
        peer.python, peer.script, peer.input, opt.steps, std::max(opt.warmup, 1), opt.peer_threads, opt.peer_impl,
        opt.precision, opt.optimizer ? " --optimizer" : "");
    const peer_output p = run_peer_command(cmd, peer.input + ".stderr", 600);
    TREX_CHECK(p.status == 0, "bench step --peer: the PyTorch peer failed (exit status {}): {}", p.status, p.err);
    const std::string& out = p.out;
    try {
        const nlohmann::json j = nlohmann::json::parse(out);
        r.peer_tokens_per_s = j.at("tokens_per_s").get<double>();
        r.peer_step_seconds = j.at("step_seconds_median").get<double>();
        r.peer_loss = j.value("loss", 0.0);
        r.peer_threads = j.at("threads").dump();
        r.peer_version = j.value("torch_version", std::string("?"));
    } catch (const std::exception& e) {
        throw error(fmt::format("bench step --peer: cannot parse the peer's output '{}': {}", out, e.what()));
    }
    TREX_CHECK(r.peer_tokens_per_s > 0 && std::isfinite(r.peer_tokens_per_s),
               "bench step --peer: the peer reported tokens_per_s = {} (must be positive)", r.peer_tokens_per_s);
    r.has_peer = true;
    r.peer_impl = opt.peer_impl;
    r.ratio_vs_peer = r.tokens_per_s / r.peer_tokens_per_s;
}

// Our step timed again after the peer: the peer's seconds are bracketed by two measurements of ours, and a machine
// whose speed changed in between shows up as two different ratios. Also the peer's MFU on the same peak.
void time_again_after_peer(timed_step& ts, const bench_step_options& opt, bench_step_result& r) {
    ts.time(0, opt.steps);  // (the loss reported stays the first measurement's)
    r.tokens_per_s_after_peer = (double)r.tokens_per_step / ts.median();
    r.ratio_vs_peer_after = r.tokens_per_s_after_peer / r.peer_tokens_per_s;
    r.peer_mfu = r.peer_tokens_per_s * r.flops_per_token / (r.peak_gflops * 1e9);
    check_mfu(r.peer_mfu, "bench step --peer (the peer's step)");
    r.ratio_at_peak = r.peer_mfu > 0 ? 1.0 / r.peer_mfu : 0.0;
    if (r.gemm.seconds > 0) r.ratio_ceiling_at_gemm_rate = r.ratio_vs_peer * r.profile_step_seconds / r.gemm.seconds;
}

}  // namespace

bench_step_result run_bench_step(const model_config& cfg, const std::string& config_name,
                                 const bench_step_options& opt) {
    check_options(opt);
    bench_step_result r;
    r.config_name = config_name;
    r.batch = opt.batch;
    r.seq = opt.seq;
    r.tokens_per_step = opt.batch * opt.seq;
    r.threads = omp_get_max_threads();
    r.max_position_embeddings = cfg.max_position_embeddings;
    r.recompute = opt.recompute;

    const bool lm_only = opt.peer && opt.peer_impl == "hf";
    timed_step ts(cfg, opt, lm_only);
    r.precision = opt.precision;
    ts.precision = parse_matmul_precision(opt.precision, "bench step --precision");
    r.step_kind = lm_only ? "lm-only" : "full";

    // The peer gets the model as initialised (before any of our timed updates) and the same batch.
    const peer_files peer = locate_peer(opt);
    // removed however this function ends (TREX_KEEP_PEER_INPUT=1 keeps it for debugging): it is the size of the model
    struct remove_at_exit {
        std::string path;
        ~remove_at_exit() {
            std::error_code ec;
            if (!std::getenv("TREX_KEEP_PEER_INPUT")) std::filesystem::remove(path, ec);
        }
    } peer_input_guard{opt.peer ? peer.input : std::string()};
    if (opt.peer) write_peer_input(peer.input, ts.model, ts.batch, opt, ts.so);

    if (opt.optimizer) ts.add_optimizer();
    r.with_optimizer = opt.optimizer;
    // The FMA peak is measured before and after the timed steps and the higher kept: on a shared machine a busy
    // neighbour can only lower a measurement, and a low denominator would inflate the MFU we print.
    const bool bf16 = ts.precision == matmul_precision::bf16;
    const peak_measurement fma_before = measure_peak(ts.precision);
    ts.time(opt.warmup, opt.steps, bf16);
    r.loss = ts.loss;
    if (bf16) {  // the fp32 step of the same model and batch, alternating with the bf16 one
        r.fp32_tokens_per_s = (double)r.tokens_per_step / ts.fp32_times[ts.fp32_times.size() / 2];
        r.fp32_loss = ts.fp32_loss;
    }
    r.activation_bytes = (double)ts.model.activation_bytes();
    r.workspace_bytes = (double)ts.model.workspace_bytes();
    r.param_bytes = 2.0 * sizeof(float) * (double)ts.model.params().n_floats;  // weights + gradients
    r.optimizer_state_bytes = ts.optim ? 2.0 * sizeof(float) * (double)ts.model.params().n_floats : 0.0;
    r.peak_rss_bytes = peak_resident_bytes();  // the peer is a child process: not included
    r.optimizer_seconds = ts.opt_times[ts.opt_times.size() / 2];
    if (opt.profile) ts.profile(r);
    r.step_seconds = ts.median();
    r.step_seconds_min = ts.times.front();
    r.tokens_per_s = (double)r.tokens_per_step / r.step_seconds;
    measure_rates(cfg, opt, lm_only, fma_before, r);
    if (bf16) r.ratio_vs_fp32 = r.tokens_per_s / r.fp32_tokens_per_s;

    if (opt.peer) {
        run_peer(peer, opt, r);
        time_again_after_peer(ts, opt, r);
    }
    return r;
}

std::string format_bench_step(const bench_step_result& r) {
    std::string s;
    s += fmt::format("trex bench step: {} | batch {} x seq {} = {} tokens/step | {} threads\n", r.config_name, r.batch,
                     r.seq, r.tokens_per_step, r.threads);
    s += fmt::format("  step            {}\n",
                     r.step_kind == "full" ? "full: forward + LM, MTP, balance and indexer losses + backward"
                                           : "lm-only (as HF transformers can run it): no MTP, balance or indexer "
                                             "loss");
    s += fmt::format("  step time       {:.4f} s (median; min {:.4f} s), loss {:.6f}\n", r.step_seconds,
                     r.step_seconds_min, r.loss);
    if (r.with_optimizer)
        s += fmt::format("  optimizer       {:.4f} s of the step (Muon with hybrid Newton-Schulz + AdamW, spec §3)\n",
                         r.optimizer_seconds);
    s += fmt::format("  throughput      {:.1f} tokens/s\n", r.tokens_per_s);
    s += fmt::format("  model FLOPs     {:.4g} per token (forward + backward)\n", r.flops_per_token);
    s += fmt::format("                  {}\n", r.flops_formula);
    s += fmt::format("  achieved        {:.1f} GFLOP/s\n", r.gflops);
    if (r.precision == "bf16")
        s += fmt::format(
            "  peak (measured) {:.1f} GFLOP/s bf16 dot products ({}, {} threads); oneDNN bf16 matmul 2048^3: {:.1f} "
            "GFLOP/s, sgemm {:.1f}\n",
            r.peak_gflops, r.peak_isa, r.threads, r.bf16_matmul_gflops, r.sgemm_gflops);
    else
        s += fmt::format(
            "  peak (measured) {:.1f} GFLOP/s fp32 FMA ({}, {} threads); oneDNN sgemm 2048^3: {:.1f} GFLOP/s\n",
            r.peak_gflops, r.peak_isa, r.threads, r.sgemm_gflops);
    if (r.peak_gflops_low < 0.85 * r.peak_gflops)
        s += fmt::format(
            "  note            the two peak measurements (before/after the timed steps) differ: {:.1f} vs "
            "{:.1f} GFLOP/s; the machine was busy during one of them, the higher is used\n",
            r.peak_gflops_low, r.peak_gflops);
    if (r.seq > r.max_position_embeddings)
        s += fmt::format(
            "  note            seq {} exceeds the config's max_position_embeddings {}: positions past it are "
            "outside the model's RoPE range (the timing is valid, the model is not meant for it)\n",
            r.seq, r.max_position_embeddings);
    s += fmt::format("  MFU             {:.1f}%  = FLOPs/token x tokens/s / measured {} peak\n", 100.0 * r.mfu,
                     r.precision == "bf16" ? "bf16" : "FMA");
    if (r.precision == "bf16")
        s += fmt::format(
            "  precision       bf16 GEMMs (fp32 master weights, gradients, optimizer, everything else): {:.2f}x the "
            "fp32 step's {:.1f} tokens/s timed in the same run; fp32 loss {:.6f} (bf16 {:.6f})\n",
            r.ratio_vs_fp32, r.fp32_tokens_per_s, r.fp32_loss, r.loss);
    constexpr double MiB = 1024.0 * 1024.0;
    s += fmt::format(
        "  memory          {}, backward temporaries {:.1f} MiB, weights + grads {:.1f} MiB{}; peak resident {:.1f} "
        "MiB\n",
        describe_activation_memory(r.activation_bytes, r.tokens_per_step, r.recompute), r.workspace_bytes / MiB,
        r.param_bytes / MiB,
        r.optimizer_state_bytes > 0 ? fmt::format(", optimizer state {:.1f} MiB", r.optimizer_state_bytes / MiB)
                                    : std::string(),
        r.peak_rss_bytes / MiB);
    if (!r.profile.empty()) {
        s += fmt::format(
            "  profile of one more step ({:.4f} s; wall time per section, summed over layers; of it in oneDNN GEMMs):"
            "\n",
            r.profile_step_seconds);
        const auto gemm_of = [&](const std::string& name) {
            const auto it = r.gemm.section_seconds.find(name);
            return it == r.gemm.section_seconds.end() ? 0.0 : it->second;
        };
        std::vector<std::pair<double, std::string>> rows;
        double covered = 0;
        for (const auto& [name, sec] : r.profile) {
            rows.push_back({sec, name});
            covered += sec;
        }
        std::sort(rows.rbegin(), rows.rend());
        for (const auto& [sec, name] : rows)
            s += fmt::format("    {:<26} {:9.2f} ms  {:5.1f}%   GEMM {:8.2f} ms\n", name, 1e3 * sec,
                             100.0 * sec / r.profile_step_seconds, 1e3 * gemm_of(name));
        s += fmt::format("    {:<26} {:9.2f} ms  {:5.1f}%   GEMM {:8.2f} ms\n", "(outside sections)",
                         1e3 * (r.profile_step_seconds - covered),
                         100.0 * (r.profile_step_seconds - covered) / r.profile_step_seconds, 1e3 * gemm_of(""));
        if (r.gemm.seconds > 0) {
            const double rate = r.gemm.flops / r.gemm.seconds / 1e9;
            s += fmt::format(
                "  GEMMs           {} oneDNN {} calls: {:.2f} ms = {:.1f}% of the profiled step, {:.2f} GFLOP at "
                "{:.1f} GFLOP/s ({:.0f}% of the {} peak); everything else {:.2f} ms{}; executed GEMM FLOPs = "
                "{:.3f} x the model's matrix FLOPs (all but the attention core)\n",
                r.gemm.calls, r.precision == "bf16" ? "bf16 matmul" : "sgemm", 1e3 * r.gemm.seconds,
                100.0 * r.gemm.seconds / r.profile_step_seconds, r.gemm.flops / 1e9, rate, 100.0 * rate / r.peak_gflops,
                r.precision == "bf16" ? "bf16" : "FMA", 1e3 * (r.profile_step_seconds - r.gemm.seconds),
                r.gemm.nested_calls > 0
                    ? fmt::format(" (it includes {} one-thread GEMMs of {:.2f} GFLOP inside parallel regions)",
                                  r.gemm.nested_calls, r.gemm.nested_flops / 1e9)
                    : std::string(),
                r.gemm_flops_vs_model);
        }
    }
    if (r.has_peer) {
        s += fmt::format(
            "  peer            {} on PyTorch {} {} (threads {}): {:.1f} tokens/s, step {:.4f} s, loss {:.6f}\n",
            r.peer_impl == "hf" ? "HF transformers DeepseekV4ForCausalLM" : "tests/reference/dsv4_ref.py",
            r.peer_version,
            std::string(r.peer_impl == "compile" ? "torch.compile (forward)" : "eager") +
                (r.precision == "bf16" ? ", autocast bf16" : ""),
            r.peer_threads, r.peer_tokens_per_s, r.peer_step_seconds, r.peer_loss);
        s += fmt::format(
            "  ratio           {:.2f}x the peer's tokens/s (OPENBLAS_* unset for the peer command); {:.2f}x with our "
            "step timed again after the peer ({:.1f} tokens/s)\n",
            r.ratio_vs_peer, r.ratio_vs_peer_after, r.tokens_per_s_after_peer);
        const double spread =
            std::fabs(r.tokens_per_s_after_peer - r.tokens_per_s) / std::max(r.tokens_per_s, r.tokens_per_s_after_peer);
        if (spread > 0.15)
            s += fmt::format(
                "  note            our step ran {:.0f}% apart before and after the peer: the machine's speed changed "
                "during the run, so the ratio is uncertain by that much (rerun on a quiet machine)\n",
                100.0 * spread);
        s += fmt::format(
            "  peer MFU        {:.1f}% (same FLOPs/token and peak): a ratio above {:.2f}x would need more "
            "than 100% of the measured {} peak\n",
            100.0 * r.peer_mfu, r.ratio_at_peak, r.precision == "bf16" ? "bf16" : "fp32 FMA");
        if (r.ratio_ceiling_at_gemm_rate > 0)
            s += fmt::format(
                "  GEMM ceiling    with everything but the GEMMs at zero time the ratio would be {:.2f}x (this "
                "ratio x profiled step / its GEMM time): beyond it only faster GEMMs help\n",
                r.ratio_ceiling_at_gemm_rate);
    }
    return s;
}

nlohmann::json bench_step_json(const bench_step_result& r) {
    nlohmann::json j;
    j["config"] = r.config_name;
    j["batch"] = r.batch;
    j["seq"] = r.seq;
    j["max_position_embeddings"] = r.max_position_embeddings;
    j["recompute"] = r.recompute;
    j["activation_bytes"] = r.activation_bytes;
    j["workspace_bytes"] = r.workspace_bytes;
    j["param_bytes"] = r.param_bytes;
    j["optimizer_state_bytes"] = r.optimizer_state_bytes;
    j["peak_rss_bytes"] = r.peak_rss_bytes;
    j["tokens_per_step"] = r.tokens_per_step;
    j["step_kind"] = r.step_kind;
    j["threads"] = r.threads;
    j["step_seconds"] = r.step_seconds;
    j["step_seconds_min"] = r.step_seconds_min;
    j["tokens_per_s"] = r.tokens_per_s;
    j["flops_per_token"] = r.flops_per_token;
    j["flops_formula"] = r.flops_formula;
    j["gflops"] = r.gflops;
    j["peak_gflops"] = r.peak_gflops;
    j["peak_gflops_low"] = r.peak_gflops_low;
    j["peak_isa"] = r.peak_isa;
    j["sgemm_gflops"] = r.sgemm_gflops;
    j["precision"] = r.precision;
    if (r.precision == "bf16") {
        j["bf16_matmul_gflops"] = r.bf16_matmul_gflops;
        j["fp32_tokens_per_s"] = r.fp32_tokens_per_s;
        j["fp32_loss"] = r.fp32_loss;
        j["ratio_vs_fp32"] = r.ratio_vs_fp32;
    }
    j["mfu"] = r.mfu;
    j["loss"] = r.loss;
    j["with_optimizer"] = r.with_optimizer;
    if (r.with_optimizer) j["optimizer_seconds"] = r.optimizer_seconds;
    if (!r.profile.empty()) {
        j["profile_step_seconds"] = r.profile_step_seconds;
        j["profile"] = r.profile;
        j["profile_gemm"] = r.gemm.section_seconds;
        j["gemm"] = {{"calls", r.gemm.calls},
                     {"seconds", r.gemm.seconds},
                     {"flops", r.gemm.flops},
                     {"nested_calls", r.gemm.nested_calls},
                     {"nested_flops", r.gemm.nested_flops},
                     {"flops_vs_model", r.gemm_flops_vs_model}};
    }
    if (r.has_peer) {
        j["peer_tokens_per_s"] = r.peer_tokens_per_s;
        j["peer_step_seconds"] = r.peer_step_seconds;
        j["peer_loss"] = r.peer_loss;
        j["peer_threads"] = r.peer_threads;
        j["peer_torch_version"] = r.peer_version;
        j["peer_impl"] = r.peer_impl;
        j["ratio_vs_peer"] = r.ratio_vs_peer;
        j["tokens_per_s_after_peer"] = r.tokens_per_s_after_peer;
        j["ratio_vs_peer_after"] = r.ratio_vs_peer_after;
        j["peer_mfu"] = r.peer_mfu;
        j["ratio_at_peak"] = r.ratio_at_peak;
        if (r.ratio_ceiling_at_gemm_rate > 0) j["ratio_ceiling_at_gemm_rate"] = r.ratio_ceiling_at_gemm_rate;
    } else {
        j["peer_tokens_per_s"] = nullptr;
        j["ratio_vs_peer"] = nullptr;
    }
    return j;
}

}  // namespace trex::bench
