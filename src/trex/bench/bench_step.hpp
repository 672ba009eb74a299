// `trex bench step`: times forward + backward of one training step on CPU and reports tokens/s, achieved GFLOP/s
// and MFU against the machine's measured fp32 FMA peak (--precision bf16: bf16 GEMMs, the bf16 dot-product peak, the
// fp32 step alternating with the bf16 one); optionally times the same step in PyTorch (the peer:
// tests/reference/peer_bench.py on the same model, weights and batch; eager, torch.compile or HF, autocast bf16 with
// --precision bf16) and prints the ratio.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "trex/kernels/cpu/gemm.hpp"
#include "trex/model/config.hpp"

namespace trex::bench {

struct bench_step_options {
    int64_t batch = 8;  // B rows
    int64_t seq = 256;  // S tokens per row
    int steps = 5;      // timed steps (median reported)
    int warmup = 2;     // untimed steps first
    bool dense_csa = false;
    bool recompute = false;
    uint64_t seed = 1;  // weights and tokens
    bool peer = false;
    std::string python;       // interpreter for the peer ("" = <source>/.venv/bin/python)
    std::string peer_script;  // "" = <source>/tests/reference/peer_bench.py
    std::string peer_threads = "auto";
    // "reference": the full step in tests/reference/dsv4_ref.py; "hf": HF transformers' DeepseekV4ForCausalLM, which
    // has no MTP, balance or indexer loss, so both sides then time forward + LM loss + backward only.
    std::string peer_impl = "reference";
    bool profile = false;    // one extra (untimed) step with per-section wall times
    bool optimizer = false;  // include the optimizer update (Muon + AdamW, spec §3) in every timed step
    // "fp32" or "bf16": the precision of the model's GEMMs (kernels/precision.hpp; the optimizer stays fp32). bf16
    // also times the fp32 step in the same run, each bf16 step followed by an fp32 one (ratio_vs_fp32), measures MFU
    // against the bf16 peak and runs the peer under torch.autocast bf16.
    std::string precision = "fp32";
};

struct bench_step_result {
    std::string config_name;
    int64_t batch = 0, seq = 0, tokens_per_step = 0;
    int64_t max_position_embeddings = 0;  // of the config (a note is printed when seq exceeds it)
    std::string step_kind;                // "full" (all losses, MTP) or "lm-only" (the reduced step of --peer-impl hf)
    int threads = 0;
    double step_seconds = 0;  // median
    double step_seconds_min = 0;
    double tokens_per_s = 0;
    double flops_per_token = 0;
    std::string flops_formula;
    double gflops = 0;           // achieved model GFLOP/s
    double peak_gflops = 0;      // measured fp32 FMA peak (the higher of two measurements, before and after the steps)
    double peak_gflops_low = 0;  // the lower of the two (a large gap means the machine was busy during one)
    std::string peak_isa;
    double sgemm_gflops = 0;  // measured oneDNN sgemm rate (practical ceiling)
    // --precision bf16: the peak above is the bf16 dot-product peak; oneDNN's bf16 matmul rate on the same problem;
    // the fp32 step of the same model and batch, alternating with the bf16 one (median), its loss, and bf16 / fp32
    // tokens/s
    std::string precision = "fp32";
    double bf16_matmul_gflops = 0;
    double fp32_tokens_per_s = 0, fp32_loss = 0, ratio_vs_fp32 = 0;
    double mfu = 0;   // gflops / peak_gflops
    double loss = 0;  // the step's total loss (sanity: the peer computes the same)
    // memory after the timed steps (bytes): dsv4_model::activation_bytes / workspace_bytes, the parameter arenas
    // (weights + grads), Muon/AdamW state (m, v) with --optimizer, and the process's peak resident set
    bool recompute = false;
    double activation_bytes = 0, workspace_bytes = 0, param_bytes = 0, optimizer_state_bytes = 0;
    double peak_rss_bytes = 0;
    std::map<std::string, double> profile;  // section -> seconds of the profiled step (when requested)
    double profile_step_seconds = 0;
    // the profiled step's oneDNN GEMMs: timed calls (outside parallel regions) by section, and the one-thread GEMMs
    // called from inside one (counted; their time is part of their section's)
    cpu::gemm_stats gemm;
    double gemm_flops_vs_model = 0;  // (gemm.flops + gemm.nested_flops) / ((FLOPs/token − attention core) · tokens)
    // with a peer: the ratio if everything but the timed GEMMs took no time (profiled step / its GEMM time × ratio),
    // an upper bound of what faster non-GEMM code can give at this GEMM rate
    double ratio_ceiling_at_gemm_rate = 0;
    bool with_optimizer = false;
    double optimizer_seconds = 0;  // median time of the optimizer update alone (part of step_seconds)
    // peer
    bool has_peer = false;
    double peer_tokens_per_s = 0;
    double peer_step_seconds = 0;
    double peer_loss = 0;
    std::string peer_threads;
    std::string peer_version;
    std::string peer_impl;
    double ratio_vs_peer = 0;  // tokens_per_s / peer_tokens_per_s
    // our step timed again right after the peer (same steps, no warm-up) and the ratio with it
    double tokens_per_s_after_peer = 0, ratio_vs_peer_after = 0;
    double peer_mfu = 0;       // the peer's tokens/s at the same FLOPs/token and measured peak
    double ratio_at_peak = 0;  // 1 / peer_mfu: the ratio at which our step would run at 100% of the measured peak
};

bench_step_result run_bench_step(const model_config& cfg, const std::string& config_name,
                                 const bench_step_options& opt);
std::string format_bench_step(const bench_step_result& r);
nlohmann::json bench_step_json(const bench_step_result& r);

}  // namespace trex::bench
