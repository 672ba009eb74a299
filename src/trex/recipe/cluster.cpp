#include "trex/recipe/cluster.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/recipe/stages.hpp"
#include "trex/tokenizer/paths.hpp"

namespace trex::recipe {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

std::string run_file_path(const std::string& run) {
    if (fs::is_regular_file(run)) return run;
    const std::string p = tok::source_dir() + "/configs/plan/runs/" + run + ".json";
    TREX_CHECK(fs::is_regular_file(p), "cluster profile: no run file '{}' (a path or configs/plan/runs/<name>.json)",
               run);
    return p;
}

// num_hidden_layers of the run's model (configs/plan/<model>.json -> its config.json).
int model_layers(const ojson& run_file) {
    const fs::path plan_model =
        fs::path(tok::source_dir()) / "configs/plan" / (run_file["model"].get<std::string>() + ".json");
    TREX_CHECK(fs::is_regular_file(plan_model), "cluster profile: no planner model {}", plan_model.string());
    const ojson m = ojson::parse(read_file(plan_model.string()));
    const fs::path cfg = plan_model.parent_path() / m["config"].get<std::string>();
    return ojson::parse(read_file(cfg.string()))["num_hidden_layers"].get<int>();
}

// The fastest layout with at least 5 % of the device memory left (a layout at the edge of memory fails on the first
// fragmentation); the fastest one when none has that much.
const ojson& chosen_layout(const ojson& plan) {
    for (const auto& b : plan["best"]) {
        const double total = b.value("peak_gb", 0.0) + b.value("headroom_gb", 0.0);
        if (b.value("headroom_gb", 0.0) >= 0.05 * total) return b;
    }
    return plan["best"][0];
}

std::string layout_row(const ojson& l, const std::string& what) {
    return fmt::format("| {} | {} | {} | {:.0f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} |\n", what,
                       l["layout"].get<std::string>(), l.value("micro_batch", 1),
                       l.value("tokens_per_s_per_device", 0.0), l.value("tflops_per_device", 0.0),
                       100.0 * l.value("mfu", 0.0), l.value("peak_gb", 0.0), l.value("headroom_gb", 0.0));
}

std::string recompute_text(const ojson& l) {
    std::string r;
    for (const auto& x : l["recompute"]) r += (r.empty() ? "" : ",") + x.get<std::string>();
    return r.empty() ? "none" : r;
}

std::string cluster_markdown(const ojson& plan, const ojson& run_file) {
    std::string md = fmt::format("# trex recipe --profile cluster: {} on {} x {}\n\n", plan["model"].get<std::string>(),
                                 plan["devices"].get<int>(), plan["hardware"].get<std::string>());
    md += run_file.value("description", "") + "\n\n";
    md += "Predicted by `trex plan search` (docs/plan.md; held-out accuracy in `trex plan validate --holdout`).\n\n";
    md += "| | layout | micro-batch | tokens/s/device | TFLOP/s/device | MFU (%) | peak GB | headroom GB |\n";
    md += "|---|---|---:|---:|---:|---:|---:|---:|\n";
    int k = 1;
    for (const auto& b : plan["best"]) md += layout_row(b, fmt::format("planner #{}", k++));
    if (plan.contains("reference")) {
        md += layout_row(plan["reference"], "reference (as given)");
        if (plan.contains("reference_best_setup"))
            md += layout_row(plan["reference_best_setup"], "reference, best setup that fits");
    }
    const ojson& c = chosen_layout(plan);
    md += fmt::format(
        "\nChosen for the launch scripts: **{}** (the fastest with at least 5 % of device memory free; "
        "the fastest overall is {}), recompute {}.",
        c["layout"].get<std::string>(), plan["best"][0]["layout"].get<std::string>(), recompute_text(c));
    if (plan.contains("reference"))
        md += fmt::format(" The reference layout ranks {} of {} fitting layouts as given.",
                          plan["reference"].value("rank", 0), plan["reference"].value("of_fitting", 0));
    md += "\n";
    return md;
}

// Micro-batches per step so that DP x micro-batch x accumulation = the global batch.
int grad_accum(const ojson& layout, const ojson& setup) {
    const int per_step = std::max(1, layout.value("dp", 1) * layout.value("micro_batch", 1));
    return std::max(1, setup.value("global_batch", 1024) / per_step);
}

void write_script(const std::string& path, const std::string& text) {
    write_file_atomic(path, text);
    ::chmod(path.c_str(), 0755);
}

std::string trex_script(const ojson& best, const ojson& run_file, int node_size, const std::string& stage) {
    const int devices = run_file["devices"].get<int>();
    const int nodes = std::max(1, devices / std::max(1, node_size));
    return fmt::format(
        "#!/usr/bin/env bash\n# trex train, recipe stage '{}', with the planner's layout {} ({} ranks).\n"
        "# trex's engine runs on CPUs today; the layout is the one a device backend would use.\n"
        "# Usage (from the source tree): sbatch launch/trex-{}.slurm RUN.toml [--set key=value ...]\n"
        "#SBATCH --nodes={}\n#SBATCH --ntasks-per-node={}\nset -euo pipefail\n"
        "[ $# -ge 1 ] || {{ echo \"usage: $0 RUN.toml [--set key=value ...]\" >&2; exit 2; }}\n"
        "config=\"$1\"; shift\n"
        "exec scripts/slurm_train.sh --config \"$config\" --tp {} --pp {} --ep {} "
        "--set data.seq={} --set data.batch={} --set data.grad_accum={} \"$@\"\n",
        stage, best["layout"].get<std::string>(), devices, stage, nodes, std::min(devices, node_size),
        best["tp"].get<int>(), best["pp"].get<int>(), best["ep"].get<int>(), run_file["setup"].value("seq_len", 4096),
        best.value("micro_batch", 1), grad_accum(best, run_file["setup"]));
}

std::string megatron_script(const ojson& best, const ojson& run_file, int layers, const std::string& stage) {
    return fmt::format(
        "#!/usr/bin/env bash\n# Megatron-Core / MindSpeed-LLM arguments for the recipe stage '{}' with the planner's "
        "layout {}\n# (append to the framework's pretrain_gpt.py / posttrain command with the model, data and "
        "checkpoint arguments).\nMEGATRON_PARALLEL_ARGS=\"{}\"\necho \"$MEGATRON_PARALLEL_ARGS\"\n",
        stage, best["layout"].get<std::string>(), megatron_arguments(best, run_file["setup"], layers));
}

}  // namespace

std::string megatron_arguments(const ojson& l, const ojson& setup, int num_layers) {
    const int tp = l["tp"].get<int>(), pp = l["pp"].get<int>(), vpp = l.value("vpp", 1);
    std::string a = fmt::format(
        "--tensor-model-parallel-size {} --pipeline-model-parallel-size {} --expert-model-parallel-size {} "
        "--expert-tensor-parallel-size {} --context-parallel-size {} --micro-batch-size {} --global-batch-size {} "
        "--seq-length {} --use-distributed-optimizer",
        tp, pp, l["ep"].get<int>(), l.value("etp", 1), l.value("cp", 1), l.value("micro_batch", 1),
        setup.value("global_batch", 1024), setup.value("seq_len", 4096));
    if (tp > 1) a += " --sequence-parallel";
    if (vpp > 1) a += fmt::format(" --num-layers-per-virtual-pipeline-stage {}", std::max(1, num_layers / (pp * vpp)));
    const std::string prec = setup.value("precision", "bf16");
    a += prec == "fp16" ? " --fp16" : " --bf16";
    if (prec == "fp8") a += " --fp8-format hybrid";
    const std::string rc = recompute_text(l);
    if (rc == "full")
        a += " --recompute-granularity full --recompute-method uniform --recompute-num-layers 1";
    else if (rc != "none")
        a += " --recompute-granularity selective --recompute-modules " + [&] {
            std::string m = rc;
            std::replace(m.begin(), m.end(), ',', ' ');
            return m;
        }();
    if (l.value("schedule", "") == "dualpipev") a += " --schedules-method dualpipev";
    a += " --moe-token-dispatcher-type alltoall";
    return a;
}

ojson run_cluster_profile(const cluster_options& opt) {
    const std::string run_path = run_file_path(opt.run);
    const ojson run_file = ojson::parse(read_file(run_path));
    fs::create_directories(opt.out_dir + "/launch");
    stage_context ctx{opt.out_dir, false, false};
    if (!opt.trex_binary.empty()) ctx.trex = opt.trex_binary;
    const std::string plan_path = opt.out_dir + "/plan.json";
    run_trex(ctx, "trex plan search", {"plan", "search", "--run", run_path, "--json", "--top", "10"},
             opt.out_dir + "/plan.log", plan_path);
    const ojson plan = ojson::parse(read_file(plan_path));
    TREX_CHECK(plan.contains("best") && !plan["best"].empty(),
               "cluster profile: the planner found no fitting layout "
               "for {} (see {})",
               run_path, plan_path);
    const ojson& best = chosen_layout(plan);
    const ojson hw = ojson::parse(
        read_file(tok::source_dir() + "/configs/hardware/" + run_file["hardware"].get<std::string>() + ".json"));
    const int layers = model_layers(run_file);
    ojson scripts = ojson::array();
    for (const char* st : {"cpt", "sft"}) {
        const std::string t = opt.out_dir + fmt::format("/launch/trex-{}.slurm", st);
        const std::string m = opt.out_dir + fmt::format("/launch/megatron-{}.sh", st);
        write_script(t, trex_script(best, run_file, hw.value("node_size", 8), st));
        write_script(m, megatron_script(best, run_file, layers, st));
        scripts.push_back(t);
        scripts.push_back(m);
    }
    write_file_atomic(opt.out_dir + "/cluster.md", cluster_markdown(plan, run_file));
    return {{"best", best},
            {"reference", plan.value("reference", ojson())},
            {"scripts", scripts},
            {"report", opt.out_dir + "/cluster.md"}};
}

}  // namespace trex::recipe
