// trex recipe: the T-Rex result in miniature — OR data, tokenizer, base model, CPT, SFT, evaluation of base vs
// SFT-only vs CPT+SFT, the report (src/trex/recipe/recipe.hpp, docs/recipe.md).
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "trex/base/error.hpp"
#include "trex/recipe/profile.hpp"
#include "trex/recipe/recipe.hpp"
#include "trex/recipe/report.hpp"

namespace trex::cli {

namespace {

void print_cluster(const recipe::recipe_outcome& o) {
    const auto& b = o.summary["best"];
    std::printf("planner's layout: %s, %.0f tokens/s per device, MFU %.1f%%, %.1f GB peak (%.1f GB headroom)\n",
                b["layout"].get<std::string>().c_str(), b.value("tokens_per_s_per_device", 0.0),
                100.0 * b.value("mfu", 0.0), b.value("peak_gb", 0.0), b.value("headroom_gb", 0.0));
    const auto& r = o.summary["reference"];
    if (r.is_object())
        std::printf("reference layout: %s, %.0f tokens/s per device (%s)\n", r["layout"].get<std::string>().c_str(),
                    r.value("tokens_per_s_per_device", 0.0), r.value("fits", false) ? "fits" : "does not fit as given");
    for (const auto& s : o.summary["scripts"]) std::printf("wrote %s\n", s.get<std::string>().c_str());
    std::printf("report: %s\n", o.report_md.c_str());
}

void print_outcome(const recipe::recipe_outcome& o) {
    if (o.summary.contains("best")) return print_cluster(o);
    const auto& avg = o.summary["pass_at_1_avg"];
    auto pct = [](const nlohmann::ordered_json& v) {
        return v.is_number() ? fmt::format("{:.2f}", 100.0 * v.get<double>()) : std::string("n/a");
    };
    std::printf("average Pass@1 on the held-out synthetic sets: base %s, SFT-only %s, CPT+SFT %s (%%)\n",
                pct(avg["base"]).c_str(), pct(avg["sft_only"]).c_str(), pct(avg["cpt_sft"]).c_str());
    std::printf("report: %s (summary.json and report.html next to it), %.0f s of stage time\n", o.report_md.c_str(),
                o.summary.value("wall_s_total", 0.0));
}

}  // namespace

void register_recipe(CLI::App& app) {
    auto o = std::make_shared<recipe::recipe_options>();
    std::string profiles;
    for (const auto& n : recipe::profile_names()) profiles += "\n  " + n + ": " + recipe::profile_named(n).summary;
    profiles += "\n  cluster: runs nothing; the planner's layout and launch scripts for --cluster-run";
    CLI::App* cmd = app.add_subcommand(
        "recipe", "the T-Rex recipe in miniature: OR data -> tokenizer -> base -> CPT -> SFT -> Pass@1 table");
    cmd->add_option("--profile", o->profile, "sizes of the run:" + profiles)->capture_default_str();
    cmd->add_option("--out", o->out_dir, "output directory (default runs/recipe-<profile>)");
    cmd->add_flag("--resume", o->resume, "continue an interrupted stage (training from its newest checkpoint)");
    cmd->add_option("--bench", o->benches, "also evaluate on a benchmark file, NAME=FILE (repeatable)");
    cmd->add_option("--corpus", o->corpus_roots,
                    "general-text directory for the base model (default: python3.x-doc's sources)");
    cmd->add_option("--cluster-run", o->cluster_run,
                    "profile cluster: planner run file (configs/plan/runs/<name>.json or a path)")
        ->capture_default_str();
    cmd->callback([o]() { print_outcome(recipe::run_recipe(*o)); });
}

}  // namespace trex::cli
