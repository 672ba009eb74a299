// Hardware profiles for `trex plan` (configs/hardware/*.json): dense peaks, HBM, the link tiers from the innermost
// (NVLink / SIO / HCCS) to the outermost (IB / RoCE), host bandwidth for optimizer swap. Data, not code: every number
// carries its source in the file. docs/plan.md §2 describes the schema.
#pragma once

#include <string>
#include <vector>

#include "trex/plan/json_reader.hpp"

namespace trex::plan {

// One level of the network, seen from one device.
struct link_tier {
    std::string name;         // "nvlink", "ib", "ub", "sio", "roce", ...
    int size = 0;             // devices inside one domain of this tier (0: unbounded, the whole cluster)
    double bw_GBps = 0;       // per device, per direction, GB/s (1e9 B/s)
    double latency_us = 0;    // per message step
    double efficiency = 1.0;  // achievable fraction of bw_GBps for large collectives (sourced in the profile)
};

struct hardware_profile {
    std::string name, path, unit = "device", source;
    // dense TFLOPS per device by precision; 0 = not supported
    double tflops_bf16 = 0, tflops_fp16 = 0, tflops_fp8 = 0, tflops_fp32 = 0;
    std::string mfu_peak = "bf16";  // the peak MFU divides by
    double hbm_GB = 0, hbm_bw_GBps = 0;
    double hbm_reserved_GB = 0;  // runtime/allocator reserve not available to the model (0 unless the profile says)
    int node_size = 1;           // devices per server
    double host_bw_GBps = 0;     // device<->host per device, per direction (optimizer swap / offload)
    std::vector<link_tier> tiers;
    // Measured profiles (`trex plan calibrate`) may pin efficiencies; 0 = use the calibration file's constants.
    double gemm_efficiency = 0, memory_efficiency = 0;
    // Multiplies the calibration's fp8_gemm_efficiency (calibrated on Hopper) for a device whose FP8 kernels reach a
    // different fraction of its FP8 peak, as published kernel benchmarks show (1 = as Hopper).
    double fp8_gemm_scale = 1.0;

    // Peak TFLOPS for a GEMM precision ("bf16", "fp16", "fp8", "fp32"); throws if the device has none.
    double peak_tflops(const std::string& precision) const;
    double mfu_peak_tflops() const { return peak_tflops(mfu_peak); }
    // The innermost tier whose domain holds `span` consecutive devices (the last tier if none).
    const link_tier& tier_for_span(int64_t span) const;
    int scale_up_size() const { return tiers.empty() ? 1 : tiers.front().size; }
};

hardware_profile hardware_from_json(const json& j, const std::string& source);
// `name_or_path`: a file, or a profile name looked up as configs/hardware/<name>.json under the source tree.
hardware_profile load_hardware(const std::string& name_or_path);

// Resolves a data file name the way the planner does: an existing path as given, else relative to the source tree
// (so `trex plan` works from any directory), else `dir/name` for a bare name. Throws naming `what` if not found.
std::string resolve_data_file(const std::string& name_or_path, const std::string& dir, const std::string& what);

}  // namespace trex::plan
