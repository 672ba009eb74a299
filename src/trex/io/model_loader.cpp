#include "trex/io/model_loader.hpp"

#include <filesystem>
#include <vector>

#include "trex/base/error.hpp"
#include "trex/io/checkpoint.hpp"
#include "trex/io/hf_checkpoint.hpp"

namespace trex {

namespace fs = std::filesystem;

namespace {

// The config with the options' numerics, validated (a shape the release's QAT blocks do not fit is an error).
model_config with_numerics(model_config cfg, const model_load_options& opt) {
    if (!opt.qat.empty()) cfg.qat = opt.qat;
    if (!opt.indexer_ties.empty()) cfg.indexer_ties = opt.indexer_ties;
    validate_config(cfg, "--qat / --indexer-ties");
    return cfg;
}

}  // namespace

loaded_model load_model_for_inference(const std::string& path, const model_load_options& opt) {
    std::error_code ec;
    TREX_CHECK(fs::is_directory(path, ec), "--checkpoint {}: not a directory", path);
    loaded_model out;
    out.dir = path;
    if (fs::exists(fs::path(path) / "model.safetensors.index.json", ec)) {  // HF release layout
        const model_config cfg =
            with_numerics(opt.config.empty() ? load_hf_config(path) : load_config(opt.config), opt);
        out.model = std::make_unique<dsv4_model>(cfg);
        hf_load_options lo;
        lo.allow_nonfinite = opt.allow_nonfinite;
        load_hf_checkpoint(out.model->params(), path, lo);
        return out;
    }
    if (!fs::exists(fs::path(path) / "state.json", ec)) {  // a run directory: its newest valid checkpoint
        std::vector<std::string> skipped;
        out.dir = find_latest_checkpoint(path, &skipped);
        TREX_CHECK(!out.dir.empty(),
                   "--checkpoint {}: no checkpoint found (neither a checkpoint, a run directory nor an HF "
                   "release-layout directory)",
                   path);
    }
    const std::string cfg_path = opt.config.empty() ? (fs::path(out.dir) / "config.json").string() : opt.config;
    out.model = std::make_unique<dsv4_model>(with_numerics(load_config(cfg_path), opt));
    load_checkpoint(out.dir, out.model->params(), nullptr);
    return out;
}

}  // namespace trex
