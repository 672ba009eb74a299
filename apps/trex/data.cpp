// trex data: the solver-verified OR data pipeline.
//
//   trex data build --config FILE [--force] [--no-progress]   generate, verify, render, package (docs/or_data.md)
//   trex data decontam --data DIR|FILE --against FILE... [--n 13] [--drop]   n-gram overlap report (JSON)
//   trex data stats DIR [--json]                               distributions from manifest.json and sft.jsonl
//   trex data stats DIR --against FILE... [--n 8] [--sample N] [--representation DP|DT|DPS|all]
//                                                              vocabulary and phrase variety next to benchmarks
//   trex data rewrite DIR --out DIR2 --url URL --model M [--limit N] [--repair-rounds 1] [--concurrency 4]
//                                                              LLM back-translation + forward re-formalisation
//                                                              of the DP samples, kept when the optimum matches
//   trex data families                                         the problem families with their domains
//   trex data tokenize --input PATH... --out DIR ...            documents / chat messages into token shards
//                                                              (apps/trex/data_tokenize.cpp)
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "commands.hpp"
#include "trex/base/error.hpp"
#include "trex/eval/rewrite.hpp"
#include "trex/optmodel/data_build/data_build.hpp"
#include "trex/optmodel/data_build/decontam.hpp"
#include "trex/optmodel/data_build/text_stats.hpp"
#include "trex/optmodel/families/family.hpp"

namespace trex::cli {

namespace {

using ojson = nlohmann::ordered_json;
using namespace trex::optmodel;

struct data_options {
    std::string config;
    bool force = false, no_progress = false;
    std::string data;
    std::vector<std::string> against;
    int n = 13;
    bool drop = false;
    std::string dir;
    bool json = false;
    int stats_n = 8;
    long sample = 0;
    std::string representation = "DP";
    eval::rewrite_options rewrite;
    eval::openai_options openai;
};

void run_build_cmd(const data_options& o) {
    const build_config cfg = parse_build_config(o.config);
    const build_report r = run_build(cfg, o.force, !o.no_progress);
    const long items = r.sft + r.test + r.cpt;
    std::printf("trex data build: %s\n", cfg.output_dir.c_str());
    std::printf("  sft samples %ld, test items %ld, cpt documents %ld synthetic + %ld collected\n", r.sft, r.test,
                r.cpt, r.resources);
    std::printf("  time %.1f s, %.2f verified items/s (%.2f SFT samples/s)\n", r.seconds, items / r.seconds,
                r.sft / r.seconds);
    std::printf("  attempts %ld (generated instances incl. dropped), kept %ld\n", r.attempts, items);
    for (const auto& w : r.warnings) std::printf("  warning: %s\n", w.c_str());
    std::printf("  drops per gate (share of attempts):\n");
    for (const auto& [g, n] : r.drops)
        std::printf("    %-20s %7ld  %6.2f%%\n", g.c_str(), n, r.attempts ? 100.0 * n / r.attempts : 0.0);
    if (r.faults.empty()) return;
    std::printf("  disagreements and solver crashes by family (manifest.json gates.by_family):\n");
    for (const auto& [fg, n] : r.faults) std::printf("    %-44s %5ld\n", fg.c_str(), n);
}

void print_table(const char* title, const ojson& o) {
    long total = 0;
    for (auto it = o.begin(); it != o.end(); ++it) total += it.value().get<long>();
    std::printf("%s\n", title);
    for (auto it = o.begin(); it != o.end(); ++it)
        std::printf("  %-26s %7ld  %5.1f%%\n", it.key().c_str(), it.value().get<long>(),
                    total ? 100.0 * it.value().get<long>() / total : 0.0);
}

void print_against(const ojson& r) {
    std::printf("%s: %ld questions, %ld word types (numbers not counted)\n", r["build"].get<std::string>().c_str(),
                r["ours"]["questions"].get<long>(), r["ours"]["word_types"].get<long>());
    const int n = r["n"].get<int>();
    for (const auto& f : r["against"]) {
        const ojson &b = f["benchmark"], &o = f["our_sample"];
        std::printf("against %s\n", f["file"].get<std::string>().c_str());
        std::printf("  %-34s %8s %11s %22s\n", "", "texts", "word types", fmt::format("distinct {}-grams", n).c_str());
        std::printf("  %-34s %8ld %11ld %22.3f\n", "benchmark", b["texts"].get<long>(), b["word_types"].get<long>(),
                    b["distinct_ngram_ratio"].get<double>());
        std::printf("  %-34s %8ld %11ld %22.3f\n",
                    fmt::format("ours ({} sample)", f["our_sample_representation"].get<std::string>()).c_str(),
                    o["texts"].get<long>(), o["word_types"].get<long>(), o["distinct_ngram_ratio"].get<double>());
        std::string ex;
        for (const auto& w : f["unseen_examples"])
            if (ex.size() < 160) ex += (ex.empty() ? "" : ", ") + w.get<std::string>();
        std::printf(
            "  benchmark word types no question of ours uses: %ld (%.1f%% of its types, %.1f%% of its words): "
            "%s\n",
            f["unseen_word_types"].get<long>(), 100.0 * f["unseen_word_type_share"].get<double>(),
            100.0 * f["unseen_word_token_share"].get<double>(), ex.c_str());
    }
}

void run_stats_cmd(const data_options& o) {
    if (!o.against.empty()) {
        against_options a;
        a.n = o.stats_n;
        a.sample = o.sample;
        a.representation = o.representation == "all" ? "" : o.representation;
        TREX_CHECK(a.representation.empty() || a.representation == "DP" || a.representation == "DT" ||
                       a.representation == "DPS",
                   "--representation must be DP, DT, DPS or all (got '{}')", o.representation);
        const ojson r = stats_against(o.dir, o.against, a);
        if (o.json)
            std::printf("%s\n", r.dump(2).c_str());
        else
            print_against(r);
        return;
    }
    const std::string mpath = o.dir + "/manifest.json";
    std::ifstream in(mpath);
    TREX_CHECK(in.good(), "{}: cannot read (not a trex data build directory?)", mpath);
    ojson m;
    try {
        m = ojson::parse(in);
    } catch (const std::exception&) {
        throw_error(fmt::format("{}: malformed JSON", mpath));
    }
    // lengths from sft.jsonl
    std::ifstream sft(o.dir + "/sft.jsonl");
    long n = 0;
    double qchars = 0, achars = 0;
    std::string line;
    while (std::getline(sft, line)) {
        if (line.empty()) continue;
        ojson r = ojson::parse(line);
        n++;
        qchars += (double)r["messages"][0]["content"].get<std::string>().size();
        achars += (double)r["messages"][1]["content"].get<std::string>().size();
    }
    if (o.json) {
        ojson out = {{"manifest", m},
                     {"sft_lines", n},
                     {"mean_question_chars", n ? qchars / n : 0},
                     {"mean_answer_chars", n ? achars / n : 0}};
        std::printf("%s\n", out.dump(2).c_str());
        return;
    }
    std::printf("%s: seed %s, %s\n", o.dir.c_str(), m["seed"].dump().c_str(), m["counts"].dump().c_str());
    std::printf("sft.jsonl: %ld samples, mean question %.0f chars, mean answer %.0f chars\n", n, n ? qchars / n : 0,
                n ? achars / n : 0);
    for (const char* kind : {"sft", "test", "cpt"}) {
        if (!m.contains(kind)) continue;
        for (auto it = m[kind].begin(); it != m[kind].end(); ++it)
            print_table(fmt::format("{} {}", kind, it.key()).c_str(), it.value());
    }
    if (m.contains("gates")) {
        const long att = m["gates"]["attempts"].get<long>();
        std::printf("gates: %ld attempts, %ld kept\n", att, m["gates"]["kept"].get<long>());
        for (auto it = m["gates"]["drops"].begin(); it != m["gates"]["drops"].end(); ++it)
            std::printf("  %-20s %7ld  %6.2f%%\n", it.key().c_str(), it.value().get<long>(),
                        att ? 100.0 * it.value().get<long>() / att : 0.0);
    }
}

void run_rewrite_cmd(data_options& o) {
    TREX_CHECK(!o.openai.url.empty(), "data rewrite: --url is required (an OpenAI-compatible endpoint)");
    o.rewrite.build_dir = o.dir;
    o.openai.concurrency = o.rewrite.concurrency;
    auto b = eval::make_openai_backend(o.openai);
    const eval::rewrite_report r = eval::run_rewrite(o.rewrite, *b, eval::default_exec_config());
    std::printf("trex data rewrite: %s -> %s (%s)\n", o.dir.c_str(), o.rewrite.output_dir.c_str(),
                b->identity().c_str());
    std::printf("  DP samples %ld, kept %ld (%ld first try, %ld after repair), %ld requests, %.1f s\n", r.samples,
                r.kept, r.kept_first, r.kept_repair, r.requests, r.seconds);
    if (!r.drops.empty()) std::printf("  drops:\n");
    for (const auto& [why, n] : r.drops)
        std::printf("    %-34s %6ld  %5.1f%%\n", why.c_str(), n, r.samples ? 100.0 * n / r.samples : 0.0);
}

}  // namespace

void register_data(CLI::App& app) {
    auto opt = std::make_shared<data_options>();
    CLI::App* data = app.add_subcommand("data", "data: OR data build, decontam, stats, families; tokenize into shards");
    data->require_subcommand(1);

    CLI::App* build = data->add_subcommand("build", "generate, verify, render and package OR data from a config");
    build->add_option("--config", opt->config, "build config (JSON, see docs/or_data.md)")->required();
    build->add_flag("--force", opt->force, "replace an existing output directory");
    build->add_flag("--no-progress", opt->no_progress, "no progress output");
    build->callback([opt] { run_build_cmd(*opt); });

    CLI::App* dec = data->add_subcommand("decontam", "n-gram overlap between our data and benchmark files");
    dec->add_option("--data", opt->data, "build directory or JSONL file")->required();
    dec->add_option("--against", opt->against, "benchmark files (JSON list or JSONL)")->required();
    dec->add_option("--n", opt->n, "n-gram length in words (default 13)");
    dec->add_flag("--drop", opt->drop, "rewrite the files without the overlapping items");
    dec->callback([opt] {
        decontam_options d;
        d.n = opt->n;
        d.drop = opt->drop;
        std::printf("%s\n", decontaminate(opt->data, opt->against, d).dump(2).c_str());
    });

    CLI::App* stats = data->add_subcommand("stats", "distributions of a build");
    stats->add_option("dir", opt->dir, "build directory")->required();
    stats->add_flag("--json", opt->json, "print JSON");
    stats->add_option("--against", opt->against,
                      "benchmark files: compare vocabulary and phrase variety (JSON list or JSONL)");
    stats->add_option("--n", opt->stats_n, "n-gram length of the variety measure (default 8)");
    stats->add_option("--sample", opt->sample, "our sample size (default: the benchmark's question count)");
    stats->add_option("--representation", opt->representation,
                      "our sample's representation: DP (default), DT, "
                      "DPS or all");
    stats->callback([opt] { run_stats_cmd(*opt); });

    register_data_tokenize(data);

    CLI::App* rw = data->add_subcommand(
        "rewrite", "LLM-in-the-loop: back-translate DP samples through an endpoint, keep those re-formalised right");
    rw->add_option("dir", opt->dir, "build directory (sft.jsonl)")->required();
    rw->add_option("--out", opt->rewrite.output_dir, "output directory (sft.jsonl, drops.jsonl, report.json)")
        ->required();
    rw->add_flag("--force", opt->rewrite.force, "replace an existing output directory");
    rw->add_option("--url", opt->openai.url, "endpoint (http[s]://host[:port][/v1])")->required();
    rw->add_option("--model", opt->openai.model, "model name")->required();
    rw->add_option("--api-key-env", opt->openai.api_key_env, "environment variable holding the API key")
        ->capture_default_str();
    rw->add_option("--timeout", opt->openai.timeout_s, "seconds per request")->capture_default_str();
    rw->add_option("--retries", opt->openai.retries, "retries per request")->capture_default_str();
    rw->add_option("--limit", opt->rewrite.limit, "at most this many DP samples (0: all)")->capture_default_str();
    rw->add_option("--repair-rounds", opt->rewrite.repair_rounds, "formalisation tries after a failed one")
        ->capture_default_str();
    rw->add_option("--concurrency", opt->rewrite.concurrency, "samples in flight")->capture_default_str();
    rw->add_option("--temperature", opt->rewrite.params.temperature, "sampling temperature")->capture_default_str();
    rw->add_option("--max-tokens", opt->rewrite.params.max_tokens, "tokens per completion")->capture_default_str();
    rw->add_flag("--no-progress", opt->no_progress, "no progress output");
    rw->callback([opt] {
        opt->rewrite.show_progress = !opt->no_progress;
        run_rewrite_cmd(*opt);
    });

    CLI::App* fams = data->add_subcommand("families", "list the problem families");
    fams->callback([] {
        for (const family* f : all_families()) {
            std::string domains;
            for (const auto& s : f->scenarios)
                if (domains.find(s.domain) == std::string::npos) domains += (domains.empty() ? "" : ",") + s.domain;
            std::printf("%-24s %-5s %s%s  [%s]\n", f->name.c_str(), f->milp ? "MILP" : "LP", f->title.c_str(),
                        f->can_infeasible || f->can_unbounded ? " (designs: infeasible/unbounded)" : "",
                        domains.c_str());
        }
    });
}

}  // namespace trex::cli
