// trex convert: HF release-layout checkpoints (spec §4.4, docs/checkpoints.md).
//
//   trex convert --from DIR --to DIR [--dtype bf16|fp8|fp4] [--shard-size MB] [--no-mtp] [--force] [--allow-nonfinite]
//       reads a checkpoint directory (index + shards or one model.safetensors; BF16/F32/FP8/FP4, UE8M0 or F32
//       scales; or a training checkpoint) into fp32 and writes it again in the release layout (re-quantised as
//       asked); a NaN / inf weight or scale is an error naming the tensor unless --allow-nonfinite;
//   trex convert --init CONFIG --to DIR --seed S [--init-std σ] [--dtype …] [--shard-size MB] [--no-mtp] [--force]
//       writes a freshly initialised model (docs/model.md §5) in the release layout.
//
// Prints one summary line per side (tensors, shards, MB, seconds, MB/s). Errors are one line, exit status 1.
#include <cstdio>
#include <filesystem>
#include <string>

#include "commands.hpp"
#include "trex/base/error.hpp"
#include "trex/io/checkpoint.hpp"
#include "trex/io/hf_checkpoint.hpp"
#include "trex/model/config.hpp"

namespace trex::cli {

namespace {

struct convert_options {
    std::string from, init, to, dtype = "bf16";
    uint64_t seed = 0;
    double init_std = 0.006;
    double shard_mb = 5000;  // MB = 10^6 bytes, as HF's "5GB" default
    bool no_mtp = false, force = false, allow_nonfinite = false;
};

std::string rate(uint64_t bytes, double s) {
    return fmt::format("{:.1f} MB in {:.2f} s ({:.0f} MB/s)", bytes / 1e6, s, s > 0 ? bytes / 1e6 / s : 0.0);
}

// The non-finite weights of a store read from a training checkpoint: refused (the first one named) unless allowed,
// then counted.
int64_t nonfinite_weights(const param_store& ps, const std::string& source, bool allow) {
    int64_t n = 0;
    for (size_t i = 0; i < ps.specs.size(); i++) {
        const tensor_spec& s = ps.specs[i];
        if (s.role == tensor_role::hash_table) continue;
        const float* w = ps.weights.data() + ps.offset[i];
        if (!allow) check_finite_values(s.name, s.shape, w, source);
        n += count_nonfinite(w, s.numel());
    }
    return n;
}

void print_nonfinite(int64_t n) {
    if (n > 0) std::printf("read  accepted %lld non-finite value(s) (--allow-nonfinite)\n", (long long)n);
}

void run_convert(const convert_options& o) {
    TREX_CHECK(!o.from.empty() != !o.init.empty(), "convert: give exactly one of --from DIR or --init CONFIG");
    TREX_CHECK(o.shard_mb > 0, "convert: --shard-size must be > 0 (got {})", o.shard_mb);
    hf_save_options so;
    so.dtype = hf_dtype_from_name(o.dtype);
    so.max_shard_bytes = (uint64_t)(o.shard_mb * 1e6);
    so.overwrite = o.force;

    // --from: a training checkpoint of ours (manifest.json) or a checkpoint in the HF release layout
    const bool ours = !o.from.empty() && std::filesystem::exists(std::filesystem::path(o.from) / "manifest.json");
    const model_config cfg = o.from.empty() ? load_config(o.init) : load_hf_config(o.from);
    const bool mtp = cfg.has_mtp() && !o.no_mtp;
    param_store ps(cfg, mtp, /*with_grads=*/false);
    if (ours) {
        TREX_CHECK(mtp == cfg.has_mtp(), "convert: --no-mtp is not supported with a training checkpoint as --from");
        const checkpoint_state st = load_checkpoint(o.from, ps, nullptr);
        const int64_t bad =
            nonfinite_weights(ps, (std::filesystem::path(o.from) / "model.safetensors").string(), o.allow_nonfinite);
        std::printf("read  %s: training checkpoint of step %lld, %lld tensors\n", o.from.c_str(), (long long)st.step,
                    (long long)ps.specs.size());
        print_nonfinite(bad);
    } else if (!o.from.empty()) {
        hf_load_options lo;
        lo.allow_nonfinite = o.allow_nonfinite;
        const hf_io_report r = load_hf_checkpoint(ps, o.from, lo);
        std::string enc;
        for (const auto& [k, v] : r.encodings) enc += fmt::format("{}{} {}", enc.empty() ? "" : ", ", v, k);
        std::printf("read  %s: %lld tensors in %lld shard(s), %s; %s%s\n", o.from.c_str(), (long long)r.tensors,
                    (long long)r.files, rate(r.bytes, r.seconds).c_str(), enc.c_str(),
                    r.ignored.empty() ? "" : fmt::format("; ignored {} tensor(s)", r.ignored.size()).c_str());
        print_nonfinite(r.nonfinite);
    } else {
        ps.init(o.seed, o.init_std);  // docs/model.md §5: N(0, σ = 0.006 by default) and the mHC init
        std::printf("init  %s: seed %llu, std %g, %lld tensors\n", o.init.c_str(), (unsigned long long)o.seed,
                    o.init_std, (long long)ps.specs.size());
    }
    const hf_io_report w = save_hf_checkpoint(ps, o.to, so);
    std::printf("wrote %s: %s, %lld tensors in %lld shard(s), %s\n", o.to.c_str(), o.dtype.c_str(),
                (long long)w.tensors, (long long)w.files, rate(w.bytes, w.seconds).c_str());
}

}  // namespace

void register_convert(CLI::App& app) {
    auto o = std::make_shared<convert_options>();
    CLI::App* c = app.add_subcommand("convert", "read/write DeepSeek-V4 checkpoints in the HF release layout");
    c->add_option("--from", o->from, "checkpoint directory to read (model.safetensors.index.json + shards)");
    c->add_option("--init", o->init, "config.json of a freshly initialised model to write instead");
    c->add_option("--to", o->to, "output directory (written atomically)")->required();
    c->add_option("--dtype", o->dtype, "bf16 (default) | fp8 (FP8 128x128 blocks, UE8M0) | fp4 (FP8 + FP4 experts)")
        ->check(CLI::IsMember({"bf16", "fp8", "fp4"}));
    c->add_option("--seed", o->seed, "initialisation seed (--init)");
    c->add_option("--init-std", o->init_std, "standard deviation of the initial weights (--init; default 0.006)")
        ->check(CLI::Range(1e-6, 1.0));
    c->add_option("--shard-size", o->shard_mb, "maximum data per shard in MB (default 5000)");
    c->add_flag("--no-mtp", o->no_mtp, "leave out the MTP block (mtp.* tensors of the source are ignored)");
    c->add_flag("--force", o->force, "replace a non-empty output directory");
    c->add_flag("--allow-nonfinite", o->allow_nonfinite,
                "accept NaN / inf weights and block scales in --from (refused by default, naming the tensor)");
    c->callback([o]() { run_convert(*o); });
}

}  // namespace trex::cli
