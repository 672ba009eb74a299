// trex eval: the OR benchmark harness (docs/eval.md).
//
//   trex eval run --bench [NAME=]FILE... --out DIR --backend openai|replay|local [options]
//   trex eval report DIR [--judge abs|rel|orlm] [--tol X]     re-judge results.jsonl, rewrite the reports
//   trex eval prompts [NAME]                                   list the prompt templates / print one
//   trex eval oracle --bench FILE --form F [--mutate M] --out FILE   answers from reference LPs (harness checks)
//   trex eval solve FILE [--format F] [--time-limit S] [--json] a model file solved as the judge solves answers
//   trex eval sandbox                                          what isolation model-written code gets here
//   trex eval _worker                                          internal: the sandboxed solve worker
#include <nlohmann/json.hpp>

#include <signal.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "commands.hpp"
#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/eval/backend.hpp"
#include "trex/eval/execute.hpp"
#include "trex/eval/oracle.hpp"
#include "trex/eval/prompts.hpp"
#include "trex/eval/run.hpp"
#include "trex/eval/sandbox.hpp"

namespace trex::cli {

namespace {

using namespace trex::eval;

struct eval_args {
    std::vector<std::string> benches;
    std::vector<std::string> suite;  // {"trex", DIR}
    std::string format = "auto", sentinel = "no-solution";
    bool structure = false;
    run_options run;
    std::string backend = "openai";
    openai_options openai;
    std::string completions;
    local_options local;
    std::string ks = "1";
    std::string python;
    double time_limit = 0, memory_mb = 4096;  // time_limit 0: the protocol's (60 s; 360 s under --protocol trex)
    bool no_progress = false, json = false, allow_unisolated = false, chat_mode = false;
    std::string dir, judge, name;
    std::string oracle_bench, oracle_form = "lp", oracle_mutate = "none", oracle_out;
    uint64_t oracle_seed = 1;
    std::string solve_file, solve_format = "auto";
    double solve_time_limit = 30.0;
    double tol = 0, solve_limit = 0;  // solve_limit 0: 30 s (360 s under --protocol trex)
};

std::vector<int> parse_ks(const std::string& s) {
    std::vector<int> ks;
    size_t b = 0;
    while (b <= s.size()) {
        size_t e = s.find(',', b);
        if (e == std::string::npos) e = s.size();
        const std::string t = s.substr(b, e - b);
        try {
            size_t used = 0;
            const int k = std::stoi(t, &used);
            TREX_CHECK(used == t.size() && k >= 1, "--k '{}': expected a list like 1,5,10", s);
            ks.push_back(k);
        } catch (const std::logic_error&) {
            throw_error(fmt::format("--k '{}': expected a list like 1,5,10", s));
        }
        b = e + 1;
    }
    if (std::find(ks.begin(), ks.end(), 1) == ks.end()) ks.insert(ks.begin(), 1);
    std::sort(ks.begin(), ks.end());
    ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
    return ks;
}

// SIGINT during `trex eval run`: the first stops the run (what finished is written), a second one ends the process.
std::atomic<bool> g_stop{false};
std::atomic<int> g_sigints{0};
extern "C" void on_sigint(int) {
    if (g_sigints.fetch_add(1) >= 1) {
        ::signal(SIGINT, SIG_DFL);
        ::raise(SIGINT);
    }
    g_stop.store(true);
}

int run_cmd(eval_args& a) {
    run_options& o = a.run;
    if (!a.suite.empty()) {
        TREX_CHECK(a.suite.size() == 2 && a.suite[0] == "trex", "--suite: expected `--suite trex DIR`");
        TREX_CHECK(a.benches.empty(), "--suite trex runs its own four benchmarks: give --bench files in another run");
        std::vector<std::string> missing;
        o.benches = trex_suite_benches(a.suite[1], &missing);
        TREX_CHECK(!o.benches.empty(),
                   "--suite trex {}: none of NL4OPT, OptiBench, bench4opt, bench4opt_feasible found", a.suite[1]);
        for (const auto& m : missing)
            std::fprintf(stderr, "trex eval: --suite trex: no %s benchmark in %s (not run)\n", m.c_str(),
                         a.suite[1].c_str());
        TREX_CHECK(o.protocol.empty() || o.protocol == "trex", "--suite trex runs under --protocol trex");
        o.protocol = "trex";
    }
    for (const auto& b : a.benches) {
        bench_spec s;
        const size_t eq = b.find('=');
        if (eq != std::string::npos && b.substr(0, eq).find('/') == std::string::npos) {
            s.name = b.substr(0, eq);
            s.path = b.substr(eq + 1);
        } else {
            s.path = b;
        }
        o.benches.push_back(s);
    }
    TREX_CHECK(parse_bench_format(a.format, &o.load.format),
               "--format '{}': expected auto, en_qa, mamo, "
               "b4o_feasible, b4o_orgeval or resocratic",
               a.format);
    TREX_CHECK(a.sentinel == "no-solution" || a.sentinel == "skip", "--sentinel '{}': expected no-solution or skip",
               a.sentinel);
    o.load.sentinel = a.sentinel == "skip" ? sentinel_policy::skip : sentinel_policy::no_solution;
    o.load.structure_when_possible = a.structure;
    o.ks = parse_ks(a.ks);
    o.progress = !a.no_progress;
    o.exec = default_exec_config();
    if (!a.python.empty()) o.exec.python = a.python;
    TREX_CHECK(a.time_limit >= 0, "--time-limit {}: must be positive", a.time_limit);
    const double time_limit = a.time_limit > 0 ? a.time_limit
                                               : (o.protocol == "trex"   ? 360
                                                  : o.protocol == "orlm" ? 300
                                                                         : 60);
    o.exec.limits.wall_s = time_limit;
    o.exec.limits.cpu_s = time_limit;
    o.exec.limits.memory_mb = (long)a.memory_mb;
    TREX_CHECK(a.solve_limit >= 0, "--solve-time-limit {}: must be positive", a.solve_limit);
    o.exec.solve_time_limit_s = a.solve_limit > 0 ? a.solve_limit : (o.protocol == "trex" ? 360 : 30);
    o.exec.allow_unisolated = a.allow_unisolated;
    std::unique_ptr<backend> b;
    if (a.backend == "openai")
        b = make_openai_backend(a.openai);
    else if (a.backend == "replay") {
        TREX_CHECK(!a.completions.empty(), "--backend replay needs --completions FILE");
        b = make_replay_backend(a.completions);
    } else if (a.backend == "local") {
        a.local.thinking = !a.chat_mode;
        b = make_local_backend(a.local);
    } else {
        throw_error(fmt::format("--backend '{}': expected openai, replay or local", a.backend));
    }
    o.stop = &g_stop;
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    struct sigaction old_sa {};
    ::sigaction(SIGINT, &sa, &old_sa);
    const run_result r = run_eval(o, *b);
    ::sigaction(SIGINT, &old_sa, nullptr);
    if (a.json) {
        ojson j = summary_json(r.summary);
        j["out_dir"] = r.out_dir;
        j["seconds"] = r.seconds;
        std::printf("%s\n", j.dump(2).c_str());
    } else {
        std::printf("trex eval: %ld items, %ld samples (%ld cached, %ld generated) in %.1f s -> %s\n", r.items,
                    r.samples, r.cached, r.generated, r.seconds, r.out_dir.c_str());
        std::printf("%s", format_summary(r).c_str());
        std::printf("reports: %s/report.md, %s/report.html; per sample: %s/results.jsonl\n", r.out_dir.c_str(),
                    r.out_dir.c_str(), r.out_dir.c_str());
    }
    if (r.interrupted) {
        std::fprintf(stderr,
                     "trex eval: interrupted: results, summary and reports of the %ld judged answer(s) are in %s; run "
                     "the same command again to finish (completions and executions come from the caches)\n",
                     r.summary.micro.samples, r.out_dir.c_str());
        std::fflush(stdout);
        std::fflush(stderr);
        if (r.generators_detached) std::_Exit(130);  // a backend request is still in flight: leave it
        return 130;
    }
    if (r.backend_errors > 0) {
        std::fprintf(stderr,
                     "trex eval: %ld sample(s) got no completion from the backend; run the same command "
                     "again to retry them (finished ones come from the cache)\n",
                     r.backend_errors);
        return 2;
    }
    return 0;
}

}  // namespace

namespace {

// The model format of a file: --format, else its extension.
std::string model_format(const eval_args& a) {
    if (a.solve_format != "auto") {
        TREX_CHECK(a.solve_format == "lp" || a.solve_format == "mps" || a.solve_format == "mathprog",
                   "--format '{}': expected auto, lp, mps or mathprog", a.solve_format);
        return a.solve_format;
    }
    const std::string ext = std::filesystem::path(a.solve_file).extension().string();
    if (ext == ".lp") return "lp";
    if (ext == ".mps") return "mps";
    if (ext == ".mod" || ext == ".gmpl") return "mathprog";
    throw_error(fmt::format("{}: cannot tell the format from the extension '{}' (give --format lp|mps|mathprog)",
                            a.solve_file, ext));
}

// trex eval solve: the file through the judge's path (read and solved in the sandboxed worker: Clp / Cbc checked by
// GLPK, convex quadratic models by HiGHS checked by Clp). Exit 0 when a solver gave a verdict (optimal, infeasible,
// unbounded), 1 otherwise (unreadable, unsupported, a limit, a solver error).
int solve_cmd(const eval_args& a) {
    TREX_CHECK(a.solve_time_limit > 0 && std::isfinite(a.solve_time_limit), "--time-limit {}: must be positive",
               a.solve_time_limit);
    const std::string kind = model_format(a);
    const std::string text = read_file(a.solve_file);
    exec_config cfg = default_exec_config();
    cfg.solve_time_limit_s = a.solve_time_limit;
    cfg.allow_unisolated = a.allow_unisolated;
    executor ex(cfg, 0);
    const exec_outcome o = ex.run_model(kind, text, std::filesystem::path(a.solve_file).filename().string());
    if (a.json) {
        ojson j = {{"file", a.solve_file}, {"format", kind},     {"status", o.status},
                   {"solver", o.solver},   {"detail", o.detail}, {"seconds", o.seconds}};
        if (o.has_objective) j["objective"] = o.objective;
        std::printf("%s\n", j.dump().c_str());
    } else {
        std::printf("%s: %s", a.solve_file.c_str(), o.status.c_str());
        if (o.has_objective) std::printf(", objective %.17g", o.objective);
        if (!o.solver.empty()) std::printf(" (%s)", o.solver.c_str());
        std::printf(", %.2f s\n", o.seconds);
        if (!o.detail.empty()) std::printf("  %s\n", o.detail.c_str());
    }
    const bool verdict = o.status == "optimal" || o.status == "infeasible" || o.status == "unbounded";
    return verdict ? 0 : 1;
}

}  // namespace

void register_eval(CLI::App& app) {
    auto a = std::make_shared<eval_args>();
    CLI::App* ev = app.add_subcommand("eval", "OR benchmark harness: generate, execute with solvers, judge, report");
    ev->require_subcommand(1);

    CLI::App* run = ev->add_subcommand("run", "run benchmarks against a backend and judge the answers");
    run->add_option("--bench", a->benches, "benchmark file, optionally NAME=FILE (repeatable)");
    run->add_option("--suite", a->suite,
                    "trex DIR: the paper's four benchmarks of a T-Rex or_benchmark_eval/data folder (NL4OPT, "
                    "OptiBench, bench4opt_feasible, bench4opt ORGEval) under --protocol trex, with their average")
        ->expected(2);
    run->add_option("--out", a->run.out_dir, "output directory (results, reports, completion cache)")->required();
    run->add_option("--format", a->format, "record format: auto, en_qa, mamo, b4o_feasible, b4o_orgeval, resocratic")
        ->capture_default_str();
    run->add_option("--sentinel", a->sentinel, "IndustryOR -99999 answers: no-solution or skip")->capture_default_str();
    run->add_flag("--structure", a->structure, "judge items that have a reference LP by LP-structure equivalence");
    run->add_option("--limit", a->run.limit, "at most N items per benchmark");
    run->add_option("--prompt", a->run.prompt, "template name (prompts/NAME.txt) or path")->capture_default_str();
    run->add_option("--shots", a->run.shots, "few-shot examples per prompt (retrieved, never the item itself)");
    run->add_option("--shots-from", a->run.shots_from, "pool of solved examples (sft.jsonl or question/answer JSONL)");
    run->add_option("--backend", a->backend, "openai, replay or local")->capture_default_str();
    run->add_option("--url", a->openai.url, "openai: endpoint (http[s]://host[:port][/v1])");
    run->add_option("--model", a->openai.model, "openai: model name");
    run->add_option("--api-key-env", a->openai.api_key_env, "openai: environment variable holding the API key")
        ->capture_default_str();
    run->add_option("--concurrency", a->openai.concurrency, "openai: requests in flight")->capture_default_str();
    run->add_option("--retries", a->openai.retries, "openai: retries per request")->capture_default_str();
    run->add_option("--timeout", a->openai.timeout_s, "openai: seconds per request")->capture_default_str();
    run->add_option("--ca-cert", a->openai.ca_cert, "openai: CA bundle for https");
    run->add_flag("--insecure", a->openai.insecure, "openai: do not verify the https certificate");
    run->add_option("--completions", a->completions, "replay: completions JSONL {\"id\", \"completion\"}");
    run->add_option("--checkpoint", a->local.checkpoint, "local: trex checkpoint or HF release-layout directory");
    run->add_option("--tokenizer", a->local.tokenizer, "local: tokenizer.json");
    run->add_option("--model-config", a->local.config, "local: config.json when the checkpoint has none");
    add_numerics_options(run, a->local.qat, a->local.indexer_ties, "local: ");
    run->add_option("--max-context", a->local.max_context, "local: prompt + generated tokens")->capture_default_str();
    run->add_option("--local-batch", a->local.max_batch, "local: samples decoded together (continuous batching)")
        ->check(CLI::Range(1, 256))
        ->capture_default_str();
    run->add_flag("--allow-nonfinite", a->local.allow_nonfinite,
                  "local: import an HF checkpoint with NaN / inf weights or scales instead of refusing it");
    run->add_flag("--chat-mode", a->chat_mode,
                  "local: DeepSeek-V4 chat mode (the prompt ends with </think>); default: thinking mode");
    run->add_option("--temperature", a->run.gen.temperature, "sampling temperature")->capture_default_str();
    run->add_option("--top-p", a->run.gen.top_p, "nucleus sampling")->capture_default_str();
    run->add_option("--max-tokens", a->run.gen.max_tokens, "tokens per completion")->capture_default_str();
    run->add_option("--seed", a->run.gen.seed, "sampling seed (-1: not sent)")->capture_default_str();
    run->add_option("--samples", a->run.samples, "completions per item (n)")->capture_default_str();
    run->add_option("--k", a->ks, "pass@k values to report, e.g. 1,5")->capture_default_str();
    run->add_option("--judge", a->run.judge, "objective judge: abs (1e-6), rel (1e-4), orlm (rounded, 5%)")
        ->capture_default_str();
    run->add_option("--tol", a->run.tol, "tolerance of the objective judge (default: the judge's)");
    run->add_option("--workers", a->run.workers, "judge threads (0: number of cores)")->capture_default_str();
    run->add_option("--python", a->python, "Python with PuLP for Python answers (default: .venv / TREX_PYTHON)");
    run->add_option("--time-limit", a->time_limit,
                    "seconds (wall and CPU) per Python answer (default 60; 360 under --protocol trex)");
    run->add_flag("--reexecute", a->run.reexecute,
                  "run every answer again (default: answers whose execution outcome is in OUT/executions.jsonl for "
                  "this harness version are re-judged from it)");
    run->add_option("--protocol", a->run.protocol,
                    "trex: the T-Rex harness point by point (its extraction order, trex / trex_orgeval prompts, 360 s, "
                    "the solved model object, absolute 1e-6, ORGEval from the LP the code writes); orlm: ORLM's eval "
                    "(its prompt, the first python block, 300 s, rounded and 5 % relative)");
    run->add_option("--memory-mb", a->memory_mb, "address-space limit per Python answer")->capture_default_str();
    run->add_option("--solve-time-limit", a->solve_limit,
                    "solver seconds per model (default 30; 360 under --protocol trex)");
    run->add_flag("--fresh", a->run.fresh, "discard the completion cache of --out");
    run->add_flag("--no-progress", a->no_progress, "no progress bar");
    run->add_flag("--allow-unisolated", a->allow_unisolated, "run model code even without namespace isolation");
    run->add_flag("--json", a->json, "print the summary as JSON");
    run->callback([a] {
        const int rc = run_cmd(*a);
        if (rc != 0) throw CLI::RuntimeError(rc);
    });

    CLI::App* rep =
        ev->add_subcommand("report", "re-judge a run's results.jsonl (no re-execution) and rewrite reports");
    rep->add_option("dir", a->dir, "output directory of trex eval run")->required();
    rep->add_option("--judge", a->judge, "abs, rel or orlm (default: the run's)");
    rep->add_option("--tol", a->tol, "tolerance (default: the judge's)");
    rep->callback([a] {
        const run_result r = rescore_run(a->dir, a->judge, a->tol);
        std::printf("%s", format_summary(r).c_str());
        std::printf("reports rewritten: %s/report.md, report.html, summary.json\n", a->dir.c_str());
    });

    CLI::App* pr = ev->add_subcommand("prompts", "list the prompt templates, or print one");
    pr->add_option("name", a->name, "template name or path");
    pr->callback([a] {
        if (a->name.empty()) {
            for (const auto& n : list_prompts()) {
                const prompt_template t = load_prompt(n);
                std::printf("%-10s artefact %-8s %s\n", n.c_str(), t.artefact.c_str(), t.path.c_str());
            }
            return;
        }
        const prompt_template t = load_prompt(a->name);
        std::printf("# %s (artefact: %s)\n## system\n%s\n## user\n%s## data\n%s\n## example\n%s", t.path.c_str(),
                    t.artefact.c_str(), t.system.c_str(), t.user.c_str(), t.data.c_str(), t.example.c_str());
    });

    CLI::App* orc = ev->add_subcommand("oracle", "write answers from the items' reference LPs (checks of the harness)");
    orc->add_option("--bench", a->oracle_bench, "benchmark file whose items have reference_lp_path")->required();
    orc->add_option("--form", a->oracle_form, "lp, mps, mathprog, pulp or gurobipy")->capture_default_str();
    orc->add_option("--mutate", a->oracle_mutate,
                    "none, coef (optimum moved), rename (renamed + reordered), "
                    "structure (a row dropped)")
        ->capture_default_str();
    orc->add_option("--seed", a->oracle_seed, "renaming / reordering seed")->capture_default_str();
    orc->add_option("--out", a->oracle_out, "completions JSONL {\"id\", \"completion\"} (replay backend)")->required();
    orc->callback([a] {
        oracle_form form;
        oracle_mutation mut;
        TREX_CHECK(parse_oracle_form(a->oracle_form, &form),
                   "--form '{}': expected lp, mps, mathprog, pulp or "
                   "gurobipy",
                   a->oracle_form);
        TREX_CHECK(parse_oracle_mutation(a->oracle_mutate, &mut),
                   "--mutate '{}': expected none, coef, rename or "
                   "structure",
                   a->oracle_mutate);
        load_report lr;
        const auto items = load_benchmark(a->oracle_bench, load_options{}, &lr);
        oracle_report rep;
        std::string text;
        for (const auto& l : make_oracle_completions(items, form, mut, a->oracle_seed, &rep))
            text += ojson{{"id", l.id}, {"completion", l.completion}}.dump() + "\n";
        write_file_atomic(a->oracle_out, text);
        std::printf("trex eval oracle: %ld items, %ld completions (%s, mutation %s) -> %s\n", rep.items, rep.written,
                    a->oracle_form.c_str(), a->oracle_mutate.c_str(), a->oracle_out.c_str());
        for (const auto& s : rep.skipped) std::printf("  skipped %s\n", s.c_str());
    });

    CLI::App* so = ev->add_subcommand("solve", "solve a model file (LP, MPS, MathProg) as the judge solves answers");
    so->add_option("file", a->solve_file, "the model file")->required();
    so->add_option("--format", a->solve_format, "auto (by extension: .lp, .mps, .mod/.gmpl), lp, mps or mathprog")
        ->capture_default_str();
    so->add_option("--time-limit", a->solve_time_limit, "seconds for the solve")->capture_default_str();
    so->add_flag("--json", a->json, "print one JSON object");
    so->add_flag("--allow-unisolated", a->allow_unisolated, "solve even without namespace isolation");
    so->callback([a] {
        if (solve_cmd(*a) != 0) throw CLI::RuntimeError(1);
    });

    CLI::App* sb = ev->add_subcommand("sandbox", "the isolation model-written code gets on this machine, measured");
    sb->callback([] {
        const sandbox_report& g = sandbox_guarantees();
        const exec_config c = default_exec_config();
        std::printf("sandbox: %s\n", g.summary.c_str());
        for (const auto& item : g.items)
            std::printf("  %-14s %-8s %s%s\n", item.name.c_str(), item.held ? "held" : "MISSING", item.detail.c_str(),
                        item.required ? "" : " (optional)");
        std::printf("python: %s\nshim: %s/shim/gurobipy\n",
                    c.python.empty() ? "(none with PuLP: Python answers cannot run)" : c.python.c_str(),
                    c.runner_dir.c_str());
        if (!g.isolated) {
            std::printf("model-written code is refused here unless --allow-unisolated is given\n");
            throw CLI::RuntimeError(1);
        }
    });

    CLI::App* worker = ev->add_subcommand("_worker", "internal: the sandboxed solve worker (JSON lines on stdin)");
    worker->group("");
    worker->callback([] {
        const int rc = run_model_worker();
        if (rc != 0) throw CLI::RuntimeError(rc);
    });
}

}  // namespace trex::cli
