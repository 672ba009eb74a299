#include "trex/plan/hardware.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "trex/base/error.hpp"

namespace trex::plan {

namespace fs = std::filesystem;

std::string resolve_data_file(const std::string& name, const std::string& dir, const std::string& what) {
    if (fs::exists(name)) return name;
#ifdef TREX_SOURCE_DIR
    const fs::path src(TREX_SOURCE_DIR);
    if (fs::exists(src / name)) return (src / name).string();
    for (const std::string& cand : {name + ".json", name}) {
        if (fs::exists(src / dir / cand)) return (src / dir / cand).string();
    }
#endif
    for (const std::string& cand : {name + ".json", name})
        if (fs::exists(fs::path(dir) / cand)) return (fs::path(dir) / cand).string();
    throw_error(fmt::format("{} '{}' not found (a file, or a name under {}/)", what, name, dir));
}

double hardware_profile::peak_tflops(const std::string& p) const {
    double v = 0;
    if (p == "bf16")
        v = tflops_bf16;
    else if (p == "fp16")
        v = tflops_fp16;
    else if (p == "fp8" || p == "mxfp8")  // MXFP8 (1x32 E8M0-scaled FP8, Blackwell) runs at the FP8 peak
        v = tflops_fp8;
    else if (p == "fp32")
        v = tflops_fp32;
    else
        throw_error(fmt::format("unknown precision '{}' (bf16, fp16, fp8, mxfp8, fp32)", p));
    const std::string key = p == "mxfp8" ? "fp8" : p;
    TREX_CHECK(v > 0, "{}: the device has no {} peak (peak_tflops.{} is absent)", path, p, key);
    return v;
}

const link_tier& hardware_profile::tier_for_span(int64_t span) const {
    for (const auto& t : tiers)
        if (t.size == 0 || span <= t.size) return t;
    return tiers.back();
}

hardware_profile hardware_from_json(const json& j, const std::string& source) {
    jreader r(j, source);
    r.check_keys({"name", "unit", "peak_tflops", "mfu_peak", "hbm_gb", "hbm_bw_gbps", "hbm_reserved_gb", "node_size",
                  "host_bw_gbps", "tiers", "efficiency"});
    hardware_profile h;
    h.path = source;
    h.name = r.str_req("name");
    h.unit = r.str("unit", "device");
    if (r.raw().contains("source") && r.raw()["source"].is_string()) h.source = r.raw()["source"].get<std::string>();
    const jreader pk = r.object("peak_tflops");
    pk.check_keys({"bf16", "fp16", "fp8", "fp32"});
    h.tflops_bf16 = pk.num("bf16", 0, 0, 1e6);
    h.tflops_fp16 = pk.num("fp16", 0, 0, 1e6);
    h.tflops_fp8 = pk.num("fp8", 0, 0, 1e6);
    h.tflops_fp32 = pk.num("fp32", 0, 0, 1e6);
    if (h.tflops_bf16 + h.tflops_fp16 + h.tflops_fp8 + h.tflops_fp32 <= 0)
        r.fail("peak_tflops", "needs at least one of bf16, fp16, fp8, fp32 > 0");
    h.mfu_peak = r.choice("mfu_peak", "bf16", {"bf16", "fp16", "fp8", "fp32"});
    if (pk.num(h.mfu_peak, 0, 0, 1e6) <= 0)
        r.fail("mfu_peak", fmt::format("'{}' but peak_tflops.{} is absent", h.mfu_peak, h.mfu_peak));
    h.hbm_GB = r.num_req("hbm_gb", 1e-3, 1e6);
    h.hbm_bw_GBps = r.num_req("hbm_bw_gbps", 1e-3, 1e9);
    h.hbm_reserved_GB = r.num("hbm_reserved_gb", 0, 0, h.hbm_GB);
    h.node_size = (int)r.integer_req("node_size", 1, 1 << 20);
    h.host_bw_GBps = r.num("host_bw_gbps", 0, 0, 1e9);
    const auto tiers = r.object_list("tiers");
    if (tiers.empty()) r.fail("tiers", "needs at least one link tier");
    int prev = 1;
    for (size_t i = 0; i < tiers.size(); i++) {
        const jreader& t = tiers[i];
        t.check_keys({"name", "size", "bw_gbps", "latency_us", "efficiency"});
        link_tier lt;
        lt.name = t.str_req("name");
        lt.size = (int)t.integer_req("size", 0, 1 << 24);
        lt.bw_GBps = t.num_req("bw_gbps", 1e-6, 1e9);
        lt.latency_us = t.num("latency_us", 0, 0, 1e6);
        lt.efficiency = t.num("efficiency", 1.0, 1e-3, 1.0);
        if (lt.size != 0 && i > 0 && lt.size <= prev)
            t.fail("size", fmt::format("must grow from tier to tier (previous {}, got {})", prev, lt.size));
        if (lt.size == 0 && i + 1 != tiers.size()) t.fail("size", "0 (unbounded) is allowed only on the last tier");
        prev = lt.size == 0 ? prev : lt.size;
        h.tiers.push_back(lt);
    }
    if (h.tiers.front().size != 0 && h.node_size % h.tiers.front().size != 0 && h.tiers.front().size % h.node_size != 0)
        r.fail("node_size",
               fmt::format("{} and the first tier's size {} do not nest", h.node_size, h.tiers.front().size));
    const jreader e = r.object("efficiency", true);
    e.check_keys({"gemm", "memory", "fp8_gemm_scale"});
    h.gemm_efficiency = e.num("gemm", 0, 0, 1);
    h.memory_efficiency = e.num("memory", 0, 0, 1);
    h.fp8_gemm_scale = e.num("fp8_gemm_scale", 1.0, 1e-3, 10);
    return h;
}

hardware_profile load_hardware(const std::string& name_or_path) {
    const std::string path = resolve_data_file(name_or_path, "configs/hardware", "hardware profile");
    return hardware_from_json(read_json_file(path), path);
}

}  // namespace trex::plan
