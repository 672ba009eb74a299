// trex train: CPT / SFT runs from a TOML config (every key overridable with --set section.key=value).
#include <cstdio>

#include <fmt/format.h>

#include "commands.hpp"
#include "trex/parallel/communicator.hpp"
#include "trex/train/trainer.hpp"

namespace trex::cli {

void register_train(CLI::App& app) {
    auto* cmd = app.add_subcommand("train", "train from a run config (CPT or SFT), with exact resume");
    struct args_t {
        std::string config;
        std::vector<std::string> sets;
        std::string resume, out;
        // each given value goes as written (-1 too, and a number too large for any integer type) to the config's
        // type and range checks; unset = not given
        std::string steps, tp, pp, ep, precision;
    };
    auto a = std::make_shared<args_t>();
    cmd->add_option("--config", a->config, "run config (TOML); default: a short CPT run of the embedded v4-tiny");
    cmd->add_option("--set", a->sets, "override a config key: section.key=value (TOML value), repeatable");
    cmd->add_option("--resume", a->resume, "auto (newest valid checkpoint of the run) or a checkpoint directory");
    CLI::Option* steps = cmd->add_option("--steps", a->steps, "shortcut for --set run.steps=N");
    cmd->add_option("--out", a->out, "shortcut for --set run.out_dir=DIR");
    CLI::Option* tp =
        cmd->add_option("--tp", a->tp, "tensor-parallel ranks (shortcut for --set dist.tp=N; docs/distributed.md)");
    CLI::Option* pp = cmd->add_option("--pp", a->pp, "pipeline stages (shortcut for --set dist.pp=N)");
    CLI::Option* ep = cmd->add_option(
        "--ep", a->ep, "expert-parallel ranks (shortcut for --set dist.ep=N); DP is what mpirun -n leaves");
    CLI::Option* precision = cmd->add_option(
        "--precision", a->precision,
        "fp32 or bf16: the GEMMs' precision (shortcut for --set model.precision=\"bf16\"; fp32 master weights)");
    cmd->callback([a, steps, tp, pp, ep, precision]() {
        std::vector<std::string> sets = a->sets;
        if (!a->resume.empty()) sets.push_back("run.resume=\"" + a->resume + "\"");
        if (steps->count() > 0) sets.push_back("run.steps=" + a->steps);
        if (!a->out.empty()) sets.push_back("run.out_dir=\"" + a->out + "\"");
        if (tp->count() > 0) sets.push_back("dist.tp=" + a->tp);
        if (pp->count() > 0) sets.push_back("dist.pp=" + a->pp);
        if (ep->count() > 0) sets.push_back("dist.ep=" + a->ep);
        if (precision->count() > 0) sets.push_back("model.precision=\"" + a->precision + "\"");
        // under mpirun: MPI; an error on one rank ends every rank (the others would wait for it)
        std::unique_ptr<parallel::communicator> world = parallel::make_world_communicator();
        train_summary s;
        try {
            const train_config cfg = load_train_config(a->config, sets);
            s = run_training(cfg, *world);
        } catch (const std::exception& e) {
            if (world->size() == 1) throw;
            world->abort(fmt::format("rank {}: {}", world->rank(), e.what()));
        }
        if (world->rank() != 0) return;
        std::printf("trained steps %lld..%lld: loss %.4f -> %.4f, skipped %lld; checkpoint %s%s%s\n",
                    (long long)s.start_step, (long long)s.end_step, s.first_loss, s.last_loss, (long long)s.skipped,
                    s.checkpoint.c_str(), s.report.empty() ? "" : "; report ", s.report.c_str());
    });
}

}  // namespace trex::cli
