// The planner's cost model: memory per device per pipeline stage, time per step, tokens/s and MFU for a model, a
// hardware profile, a training setup and a parallel layout (docs/plan.md §4–§6). Analytical, O(layers) per
// layout, so `trex plan search` can evaluate every layout of a 1,024-device cluster in well under a second.
#pragma once

#include <string>
#include <vector>

#include "trex/plan/hardware.hpp"
#include "trex/plan/json_reader.hpp"
#include "trex/plan/model.hpp"

namespace trex::plan {

// The few named constants of the time and memory model (configs/plan/calibration.json). One set is shared by every
// validation point; docs/plan.md §6 says where each value comes from.
struct calibration {
    std::string path;
    double gemm_efficiency = 0.65;       // dense BF16/FP16 GEMMs: fraction of the peak reached
    double fp8_gemm_efficiency = 0.45;   // FP8 GEMMs (block scaling): fraction of the FP8 peak reached
    double attention_efficiency = 0.45;  // attention-core kernels (flash/sparse attention): fraction of BF16 peak
    double gemm_half_size = 96;          // rows (tokens) or per-device width of a GEMM at which its efficiency halves
    double memory_passes = 6;            // HBM traffic of elementwise/norm/permute work = passes × saved activations
    double memory_efficiency = 0.8;      // fraction of HBM bandwidth reached by that work
    double ep_overlap = 0.7;             // fraction of the EP all-to-all hidden by 1F1B-A2A / fb overlap or DualPipe
    double tp_overlap = 0.5;             // fraction of TP collectives hidden when TP comm overlap is on
    double background_overlap = 0.9;     // fraction of DP and PP traffic hidden behind compute
    double reserve_fraction = 0.05;      // HBM lost to the allocator and runtime
    double comm_buffer_GB = 2.0;         // communication buffers (EP dispatch, NCCL/HCCL) per device
    // Natural (unforced) routing: tokens on the busiest EP rank / the mean, which bounds the routed-expert GEMMs and
    // the dispatch of a MoE layer (1 = balanced, as forced routing). Optional in the file (default below).
    double routing_imbalance = 1.25;
};

calibration calibration_from_json(const json& j, const std::string& source);
calibration load_calibration(const std::string& name_or_path = "configs/plan/calibration.json");

struct plan_setup {
    int64_t seq_len = 4096;
    int64_t global_batch = 1024;         // sequences per step
    int micro_batch = 1;                 // sequences per micro-batch
    std::string precision = "bf16";      // GEMM precision: bf16, fp16, fp8, mxfp8 (attention core stays 16-bit); fp32:
                                         // every working copy and communication payload is fp32 too (our CPU engine).
                                         // mxfp8: the FP8 peak, the FP8 efficiency × the profile's fp8_gemm_scale, as
                                         // fp8 (the planner does not check that the device has MXFP8 tensor cores)
    std::string optimizer = "adamw";     // adamw or muon (Muon: matrices, one momentum; AdamW for the rest)
    bool zero1 = true;                   // distributed optimizer: state sharded over DP (dense) and EDP (experts)
    bool shard_grads = false;            // ZeRO-2 / FSDP: main gradients sharded the same way
    bool optimizer_swap = false;         // optimizer state and master weights on the host, swapped in for the step
    std::string moment_dtype = "fp32";   // Adam moments / Muon momentum: fp32 or bf16
    std::string grad_dtype = "fp32";     // main gradients: fp32 (Megatron) or bf16
    std::vector<std::string> recompute;  // "none", "selective", "full", or modules (see act_group)
    bool sequence_parallel = true;       // with TP
    bool flash_attention = true;
    bool dense_csa = false;  // V4: CSA over every visible compressed entry (no top-k), the dense warm-up
    // Saved activations: "auto" (GEMM inputs in FP8 when the GEMMs run in FP8, as Transformer Engine does),
    // "bf16", "fp8_gemm_inputs", or "fp8" (also the SwiGLU inputs, as DeepSeek-V3 does)
    std::string activation_cache = "auto";
    std::string ep_dispatcher = "deepep";  // "deepep": one copy per destination node (DeepEP/HybridEP/DeepSeek);
                                           // "alltoall": one copy per destination expert
    int node_limited_routing = 0;          // ≤ M nodes per token (DeepSeek-V3: 4); 0 = off
    std::string dispatch_dtype = "bf16";   // dispatch payload: bf16 or fp8 (combine is bf16)
    bool ep_overlap = false;               // 1F1B A2A overlap / moe-fb-overlap (DualPipe/DualPipeV imply it)
    bool tp_overlap = false;               // TP comm overlap (MC2 / userbuffers)
    // DP gradient reduce-scatter / parameter all-gather hidden behind compute (calibration background_overlap);
    // false for an engine that reduces after the backward (ours on CPU, docs/distributed.md §3)
    bool dp_overlap = true;
    // MoE routing: "forced" (balanced, Megatron's moe_router_force_load_balancing, as benchmarks run) or "natural"
    // (the router's own choice: the busiest EP rank gets calibration.routing_imbalance × the mean tokens, capped by the
    // capacity factor when there is one; tokens over capacity are dropped and still count in the model FLOPs)
    std::string routing = "forced";
    double capacity_factor = 0;   // expert capacity / mean load; 0: dropless
    flops_convention convention;  // for MFU and TFLOPS/device
};

struct plan_layout {
    int tp = 1, pp = 1, vpp = 1, ep = 1, etp = 1, cp = 1;
    std::string schedule = "1f1b";  // 1f1b, interleaved (vpp chunks per device), dualpipe, dualpipev
    // Optional: main-model layers per model chunk (pp·vpp chunks; dualpipe: pp; dualpipev: 2·pp), in pipeline
    // order; empty = as even as possible with the remainder on the middle chunks. MTP always joins the last chunk.
    std::vector<int> layers_per_chunk;
    std::string str() const;
};

// A run: model + hardware + device count + setup + layout, read from a JSON file (docs/plan.md §5).
struct plan_run {
    std::string model, hardware;
    int64_t devices = 0;
    plan_setup setup;
    plan_layout layout;
};
plan_setup setup_from_json(const jreader& r);
plan_layout layout_from_json(const jreader& r);
plan_run run_from_json(const json& j, const std::string& source);
plan_run load_run(const std::string& name_or_path);  // a path, or a name under configs/plan/runs/

struct stage_cost {
    int device = 0;           // pipeline rank
    std::vector<int> chunks;  // model chunks it holds
    int layers = 0;           // transformer layers on it (incl. MTP)
    bool embedding = false, head = false;
    double params = 0;  // parameters held (elements)
    double weights_GB = 0, grads_GB = 0, optimizer_GB = 0, activations_GB = 0, buffers_GB = 0, total_GB = 0;
    double in_flight = 0;  // micro-batches of activations held (in units of the device's layers)
    // seconds per micro-batch (forward + backward + recompute)
    double t_gemm = 0, t_attention = 0, t_memory = 0, t_tp = 0, t_ep = 0, t_pp = 0, t_cp = 0, t_mb = 0;
};

struct plan_result {
    int64_t devices = 0;
    int dp = 0, edp = 0;
    int64_t micro_batches = 0;  // per pipeline per step
    std::vector<stage_cost> stages;
    double peak_GB = 0, usable_GB = 0, headroom_GB = 0;
    bool fits = false;
    double t_pipeline = 0, t_bubble = 0, t_dp = 0, t_dp_exposed = 0, t_optimizer = 0, t_swap = 0, t_step = 0;
    double t_mb_max = 0;
    double tokens_per_s_per_device = 0, tokens_per_s = 0;
    model_flops flops;  // per token, under setup.convention
    double tflops_per_device = 0, mfu = 0;
    double hardware_flops_per_token = 0;  // incl. recompute (HFU basis)
    std::vector<std::string> notes;
};

// Throws trex::error (one line) when the layout is impossible for the model or the device count.
void check_layout(const plan_model& m, const hardware_profile& hw, int64_t devices, const plan_setup& s,
                  const plan_layout& l);
// Routed tokens on the busiest EP rank / the mean under the setup's routing (1 for forced routing or no EP).
double expert_load_factor(const plan_setup& s, const calibration& cal, int ep);
bool fp8_gemms(const plan_setup& s);  // fp8 or mxfp8
plan_result evaluate(const plan_model& m, const hardware_profile& hw, const calibration& cal, int64_t devices,
                     const plan_setup& s, const plan_layout& l);

}  // namespace trex::plan
