// trex info: parameter counts, active parameters, training FLOPs per token and tensor counts of a config.
//
//   trex info --config FILE [--seq-len S] [--dense-csa] [--json]
//
// --json prints one object:
//   config                 the config path
//   layers                 {main, mtp, swa, csa, hca, hash}: layer counts by kind (main model; the MTP block is SWA)
//   params                 {total, total_excl_embedding, mtp, total_with_mtp, total_with_mtp_excl_embedding,
//                           active, active_excl_embedding, mtp_active, active_with_mtp,
//                           active_with_mtp_excl_embedding, hash_table_entries}  (integers; see counts.hpp)
//   breakdown              {<component>: {total, active}} for the main model (components of counts.hpp)
//   mtp_breakdown          {<component>: {total, active}} for the MTP block (only non-zero components)
//   flops_per_token        {seq_len, csa ("topk"|"dense"), matmul, routed_experts, mhc, head, attention,
//                           indexer_mm, indexer_score, total, total_without_mtp, formula}  (training fwd+bwd)
//   tensors                {inventory, inventory_mtp, release, release_mtp}  (release = HF layout incl. .scale)
//   inference_cache        [{context, window, compressed, indexer, pending, mtp, total, uncompressed}] values per
//                          sequence (model/cache_size.hpp) at 128K and 1M tokens and at --seq-len
#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "trex/base/error.hpp"
#include "trex/model/cache_size.hpp"
#include "trex/model/config.hpp"
#include "trex/model/counts.hpp"

namespace trex::cli {

namespace {

struct info_options {
    std::string config;
    int64_t seq_len = 4096;
    bool dense_csa = false;
    bool json = false;
};

// 284333772800 -> "284.33 B"
std::string human(double n) {
    if (n >= 1e12) return fmt::format("{:.3f} T", n / 1e12);
    if (n >= 1e9) return fmt::format("{:.2f} B", n / 1e9);
    if (n >= 1e6) return fmt::format("{:.2f} M", n / 1e6);
    if (n >= 1e3) return fmt::format("{:.2f} K", n / 1e3);
    return fmt::format("{:.0f}", n);
}

std::string with_commas(int64_t n) {
    std::string s = std::to_string(n < 0 ? -n : n), out;
    for (size_t i = 0; i < s.size(); i++) {
        if (i > 0 && (s.size() - i) % 3 == 0) out += ',';
        out += s[i];
    }
    return n < 0 ? "-" + out : out;
}

std::string count_cell(int64_t n) {
    return fmt::format("{:>19} {:>10}", with_commas(n), "(" + human((double)n) + ")");
}

std::string gflops(double f) {
    return fmt::format("{:10.3f} GF", f / 1e9);
}

// The contexts the inference cache is shown at: 128K, 1M and --seq-len.
std::vector<int64_t> cache_contexts(int64_t seq_len) {
    std::vector<int64_t> v{131072, 1048576};
    if (seq_len != v[0] && seq_len != v[1]) v.insert(v.begin(), seq_len);
    return v;
}

nlohmann::ordered_json cache_json(const model_config& cfg, int64_t seq_len) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (int64_t S : cache_contexts(seq_len)) {
        const cache_size c = inference_cache_size(cfg, S);
        a.push_back({{"context", S},
                     {"window", c.window},
                     {"compressed", c.compressed},
                     {"indexer", c.indexer},
                     {"pending", c.pending},
                     {"mtp", c.mtp},
                     {"total", c.total()},
                     {"uncompressed", c.uncompressed}});
    }
    return a;
}

std::string cache_text(const model_config& cfg, int64_t seq_len) {
    constexpr double MiB = 1024.0 * 1024.0;
    auto mib = [](double values) { return values * 2 / MiB; };  // bf16
    std::string out =
        "inference cache per sequence (bf16 values, MiB; fp32 is twice): window ring + compressed entries (CSA, HCA) + "
        "indexer keys + compressors' partial blocks + MTP = total, against every token cached at every layer "
        "(uncompressed)\n";
    out += fmt::format("  {:>9} {:>10} {:>11} {:>9} {:>9} {:>7} {:>11} {:>14} {:>7}\n", "context", "window",
                       "compressed", "indexer", "pending", "mtp", "total", "uncompressed", "ratio");
    for (int64_t S : cache_contexts(seq_len)) {
        const cache_size c = inference_cache_size(cfg, S);
        out += fmt::format("  {:>9} {:>10.2f} {:>11.2f} {:>9.2f} {:>9.2f} {:>7.2f} {:>11.2f} {:>14.2f} {:>7.4f}\n", S,
                           mib(c.window), mib(c.compressed), mib(c.indexer), mib(c.pending), mib(c.mtp), mib(c.total()),
                           mib(c.uncompressed), c.total() / c.uncompressed);
    }
    return out + "\n";
}

void run_info(const info_options& o) {
    TREX_CHECK(o.seq_len >= 1, "--seq-len must be >= 1 (got {})", o.seq_len);
    const model_config cfg = load_config(o.config);
    const param_counts pc = count_params(cfg);
    flops_options fo;
    fo.seq_len = o.seq_len;
    fo.dense_csa = o.dense_csa;
    const flops_breakdown fb = training_flops_per_token(cfg, fo);
    fo.include_mtp = false;
    const flops_breakdown fb_no_mtp = training_flops_per_token(cfg, fo);

    int n_swa = 0, n_csa = 0, n_hca = 0;
    for (int l = 0; l < cfg.n_layers(); l++) {
        const int m = cfg.ratio(l);
        (m == 0 ? n_swa : m == 4 ? n_csa : n_hca)++;
    }

    if (o.json) {
        nlohmann::ordered_json j;
        j["config"] = o.config;
        j["layers"] = {{"main", cfg.n_layers()}, {"mtp", cfg.num_nextn_predict_layers}, {"swa", n_swa}, {"csa", n_csa},
                       {"hca", n_hca},           {"hash", cfg.num_hash_layers}};
        j["params"] = {{"total", pc.total},
                       {"total_excl_embedding", pc.total_excl_embedding},
                       {"mtp", pc.mtp_total},
                       {"total_with_mtp", pc.total_with_mtp},
                       {"total_with_mtp_excl_embedding", pc.total_with_mtp_excl_embedding},
                       {"active", pc.active},
                       {"active_excl_embedding", pc.active_excl_embedding},
                       {"mtp_active", pc.mtp_active},
                       {"active_with_mtp", pc.active_with_mtp},
                       {"active_with_mtp_excl_embedding", pc.active_with_mtp_excl_embedding},
                       {"hash_table_entries", pc.hash_table_entries}};
        nlohmann::ordered_json br = nlohmann::ordered_json::object(), mbr = nlohmann::ordered_json::object();
        for (int c = 0; c < n_param_components; c++) {
            const char* name = component_name((param_component)c);
            br[name] = {{"total", pc.main_total[c]}, {"active", pc.main_active[c]}};
            if (pc.mtp_by_component[c] > 0)
                mbr[name] = {{"total", pc.mtp_by_component[c]}, {"active", pc.mtp_active_by_component[c]}};
        }
        j["breakdown"] = br;
        j["mtp_breakdown"] = mbr;
        j["flops_per_token"] = {{"seq_len", o.seq_len},
                                {"csa", o.dense_csa ? "dense" : "topk"},
                                {"matmul", fb.matmul},
                                {"routed_experts", fb.routed_share},
                                {"mhc", fb.mhc_share},
                                {"head", fb.head},
                                {"attention", fb.attention},
                                {"indexer_mm", fb.indexer_mm},
                                {"indexer_score", fb.indexer_score},
                                {"total", fb.total},
                                {"total_without_mtp", fb_no_mtp.total},
                                {"formula", fb.formula}};
        j["tensors"] = {{"inventory", pc.tensors},
                        {"inventory_mtp", pc.mtp_tensors},
                        {"release", pc.release_tensors},
                        {"release_mtp", pc.release_mtp_tensors}};
        j["inference_cache"] = cache_json(cfg, o.seq_len);
        std::printf("%s\n", j.dump(2).c_str());
        return;
    }

    std::string out;
    out += fmt::format("config: {}\n", o.config);
    out += fmt::format(
        "  {} layers ({} SWA-only, {} CSA, {} HCA) + {} MTP; d={} H={} c={}; {} routed experts, {} per token, {} "
        "shared; {} hash-routed layers; vocab {}\n\n",
        cfg.n_layers(), n_swa, n_csa, n_hca, cfg.num_nextn_predict_layers, cfg.hidden_size, cfg.num_attention_heads,
        cfg.head_dim, cfg.n_routed_experts, cfg.num_experts_per_tok, cfg.n_shared_experts, cfg.num_hash_layers,
        cfg.vocab_size);
    out += fmt::format("{:<34}{:>30}  {:>30}\n", "parameters", "total", "active per token");
    auto row = [&](const std::string& name, int64_t total, int64_t active) {
        out += fmt::format("  {:<32}{}  {}\n", name, count_cell(total), count_cell(active));
    };
    row("main model (no MTP)", pc.total, pc.active);
    row("  excl. input embedding", pc.total_excl_embedding, pc.active_excl_embedding);
    row("MTP block", pc.mtp_total, pc.mtp_active);
    row("with MTP", pc.total_with_mtp, pc.active_with_mtp);
    row("  excl. input embedding", pc.total_with_mtp_excl_embedding, pc.active_with_mtp_excl_embedding);
    out += fmt::format("  (tid2eid hash tables: {} entries, not counted; gate.bias counted)\n\n",
                       with_commas(pc.hash_table_entries));

    out += fmt::format("{:<34}{:>30}  {:>30}\n", "breakdown (main model)", "total", "active per token");
    for (int c = 0; c < n_param_components; c++) {
        if (pc.main_total[c] == 0) continue;
        row(component_name((param_component)c), pc.main_total[c], pc.main_active[c]);
    }
    row("MTP (all of mtp.*)", pc.mtp_total, pc.mtp_active);
    out += "\n";

    out += fmt::format("training FLOPs per token (fwd+bwd), seq len {}, CSA {}:\n", o.seq_len,
                       o.dense_csa ? "dense (all visible entries)" : fmt::format("top-{}", cfg.index_topk));
    out += fmt::format("  {:<34}{}\n", "matrices (6*N_mm)", gflops(fb.matmul));
    out += fmt::format("  {:<34}{}\n", "  of which routed experts", gflops(fb.routed_share));
    out += fmt::format("  {:<34}{}\n", "  of which mHC", gflops(fb.mhc_share));
    out += fmt::format("  {:<34}{}\n", "head (6*V*d*(1+MTP))", gflops(fb.head));
    out += fmt::format("  {:<34}{}\n", "attention core (12*H*c*keys)", gflops(fb.attention));
    out += fmt::format("  {:<34}{}\n", "indexer projections (4*N_idx)", gflops(fb.indexer_mm));
    out += fmt::format("  {:<34}{}\n", "indexer scoring", gflops(fb.indexer_score));
    out += fmt::format("  {:<34}{}\n", "total", gflops(fb.total));
    out += fmt::format("  {:<34}{}\n", "total without MTP", gflops(fb_no_mtp.total));
    out += fmt::format("  formula: {}\n\n", fb.formula);

    out += cache_text(cfg, o.seq_len);
    out += fmt::format("tensors: inventory {} + {} MTP = {}; HF release layout (incl. .scale) {} + {} MTP = {}\n",
                       with_commas(pc.tensors), with_commas(pc.mtp_tensors), with_commas(pc.tensors + pc.mtp_tensors),
                       with_commas(pc.release_tensors), with_commas(pc.release_mtp_tensors),
                       with_commas(pc.release_tensors + pc.release_mtp_tensors));
    std::fputs(out.c_str(), stdout);
}

}  // namespace

void register_info(CLI::App& app) {
    auto o = std::make_shared<info_options>();
    CLI::App* cmd = app.add_subcommand("info", "parameter counts, active parameters, FLOPs per token of a config");
    cmd->add_option("--config", o->config, "model config.json (or a directory holding one)")->required();
    cmd->add_option("--seq-len", o->seq_len, "sequence length for the FLOPs count")->capture_default_str();
    cmd->add_flag("--dense-csa", o->dense_csa, "CSA attends to all visible compressed entries (no top-k)");
    cmd->add_flag("--json", o->json, "print one JSON object");
    cmd->callback([o]() { run_info(*o); });
}

}  // namespace trex::cli
