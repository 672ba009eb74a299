// trex bench step: forward + backward timing, MFU against the measured FMA peak, optional PyTorch eager peer.
// trex bench tokenizer: MB/s of trex's tokenizer (1 and 2 threads) and of HF tokenizers on the same corpus.
// trex bench dist (bench_dist.cpp): distributed step time, compute vs exposed communication, per layout.
// trex bench eval: judging throughput of trex eval on replayed answers (LP in-process, Python sandboxed).
// trex bench generate: prefill / decode throughput of the cached decoder, its bandwidth bound, HF generate as peer.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.hpp"
#include "trex/base/error.hpp"
#include "trex/bench/bench_eval.hpp"
#include "trex/bench/bench_generate.hpp"
#include "trex/bench/bench_serve.hpp"
#include "trex/bench/bench_step.hpp"
#include "trex/bench/bench_tokenizer.hpp"
#include "trex/eval/backend.hpp"
#include "trex/io/model_loader.hpp"
#include "trex/model/config.hpp"
#include "trex/model/embedded_config.hpp"

namespace trex::cli {

namespace {

// The model a generation benchmark runs: a checkpoint, or a config (default: the embedded v4-tiny) with seeded random
// weights N(0, init_std); *name describes it.
std::unique_ptr<dsv4_model> bench_model(const std::string& config, const std::string& checkpoint, uint64_t seed,
                                        double init_std, const char* what, std::string* name) {
    TREX_CHECK(config.empty() || checkpoint.empty(), "{}: give --config or --checkpoint, not both", what);
    if (!checkpoint.empty()) {
        loaded_model lm = load_model_for_inference(checkpoint);
        *name = lm.dir;
        return std::move(lm.model);
    }
    const model_config cfg =
        config.empty() ? config_from_json(nlohmann::json::parse(embedded_tiny_config_json()), "<embedded v4-tiny>")
                       : load_config(config);
    *name = (config.empty() ? std::string("v4-tiny (embedded)") : config) +
            fmt::format(" (random weights, std {})", init_std);
    auto model = std::make_unique<dsv4_model>(cfg);
    model->params().init(seed, init_std);
    return model;
}

}  // namespace

void register_bench(CLI::App& app) {
    auto* bench = app.add_subcommand("bench", "benchmarks with MFU and a peer comparison");
    bench->require_subcommand(1);
    auto* step = bench->add_subcommand("step", "time one training step (forward + backward) on CPU");
    struct args_t {
        std::string config;
        bench::bench_step_options opt;
        bool json = false;
    };
    auto args = std::make_shared<args_t>();
    step->add_option("--config", args->config, "model config.json (default: the embedded configs/v4-tiny.json)");
    step->add_option("--batch", args->opt.batch, "rows per step")->capture_default_str();
    step->add_option("--seq", args->opt.seq, "tokens per row")->capture_default_str();
    step->add_option("--steps", args->opt.steps, "timed steps (the median is reported)")->capture_default_str();
    step->add_option("--warmup", args->opt.warmup, "untimed steps before")->capture_default_str();
    step->add_option("--seed", args->opt.seed, "seed of the weights and tokens")->capture_default_str();
    step->add_flag("--dense-csa", args->opt.dense_csa, "CSA attends to every visible entry (indexer warm-up)");
    step->add_flag("--recompute", args->opt.recompute, "recompute block activations in backward");
    step->add_flag("--peer", args->opt.peer, "also time PyTorch eager on the same model, weights and batch");
    step->add_option("--python", args->opt.python, "Python for the peer (default: .venv/bin/python)");
    step->add_option("--peer-threads", args->opt.peer_threads, "torch threads for the peer: auto or a number")
        ->capture_default_str();
    step->add_option("--peer-impl", args->opt.peer_impl,
                     "reference (tests/reference/dsv4_ref.py, the full step, eager), compile (the same under "
                     "torch.compile) or hf (HF transformers, LM loss only)")
        ->capture_default_str();
    step->add_flag("--profile", args->opt.profile, "time one more step section by section");
    step->add_flag("--optimizer", args->opt.optimizer, "include the optimizer update (Muon + AdamW) in each step");
    step->add_option("--precision", args->opt.precision,
                     "fp32, or bf16 (bf16 GEMMs with fp32 master weights; also times the fp32 step, MFU against the "
                     "bf16 peak, the peer under autocast bf16)")
        ->capture_default_str();
    step->add_flag("--json", args->json, "print one JSON object");
    step->callback([args]() {
        model_config cfg;
        std::string name;
        if (args->config.empty()) {
            cfg = config_from_json(nlohmann::json::parse(embedded_tiny_config_json()), "<embedded v4-tiny>");
            name = "v4-tiny (embedded)";
        } else {
            cfg = load_config(args->config);
            name = args->config;
        }
        const bench::bench_step_result r = bench::run_bench_step(cfg, name, args->opt);
        if (args->json)
            std::printf("%s\n", bench::bench_step_json(r).dump().c_str());
        else
            std::printf("%s", bench::format_bench_step(r).c_str());
    });

    register_bench_dist(bench);
    register_bench_comm(bench);

    auto* ev = bench->add_subcommand("eval", "judging throughput of trex eval on replayed answers");
    struct eval_args_t {
        bench::bench_eval_options opt;
        bool json = false;
    };
    auto eargs = std::make_shared<eval_args_t>();
    ev->add_option("--lp", eargs->opt.lp, "LP-file answers (in-process solvers)")->capture_default_str();
    ev->add_option("--python", eargs->opt.python, "Python answers (sandboxed; half PuLP, half gurobipy shim)")
        ->capture_default_str();
    ev->add_option("--workers", eargs->opt.workers, "judge threads (0: cores)")->capture_default_str();
    ev->add_option("--python-exe", eargs->opt.python_exe, "Python with PuLP (default: .venv / TREX_PYTHON)");
    ev->add_option("--dir", eargs->opt.dir, "keep the synthetic benchmark and the runs here");
    ev->add_flag("--json", eargs->json, "print one JSON object");
    ev->callback([eargs]() {
        const bench::bench_eval_result r = bench::run_bench_eval(eargs->opt);
        if (eargs->json)
            std::printf("%s\n", bench::bench_eval_json(r).dump().c_str());
        else
            std::printf("%s", bench::format_bench_eval(r).c_str());
    });

    auto* tk = bench->add_subcommand("tokenizer", "encode a corpus with trex and HF tokenizers: MB/s and ratio");
    struct tok_args_t {
        bench::bench_tokenizer_options opt;
        bool no_peer = false, json = false;
    };
    auto targs = std::make_shared<tok_args_t>();
    tk->add_option("--tokenizer", targs->opt.tokenizer, "tokenizer.json (default: data/deepseek-v4/tokenizer.json)");
    tk->add_option("--corpus", targs->opt.corpus,
                   "text file (default: data/bench/tokenizer_corpus.txt, generated by "
                   "tests/reference/tokenizer_corpus.py when absent)");
    tk->add_option("--corpus-mb", targs->opt.corpus_mb, "size of a generated corpus")->capture_default_str();
    tk->add_option("--repeats", targs->opt.repeats, "timed passes after the first (median reported)")
        ->capture_default_str();
    tk->add_flag("--no-peer", targs->no_peer, "do not time HF tokenizers");
    tk->add_option("--python", targs->opt.python, "Python for the peer (default: .venv/bin/python)");
    tk->add_flag("--json", targs->json, "print one JSON object");
    tk->callback([targs]() {
        targs->opt.peer = !targs->no_peer;
        const auto r = bench::run_bench_tokenizer(targs->opt);
        if (targs->json)
            std::printf("%s\n", bench::bench_tokenizer_json(r).dump().c_str());
        else
            std::printf("%s", bench::format_bench_tokenizer(r).c_str());
    });
    register_bench_generate(bench);
    register_bench_serve(bench);
}

// trex bench serve [--config F | --checkpoint DIR] [--concurrency 1,8,32] [--requests N] [--json]
void register_bench_serve(CLI::App* bench) {
    auto* g = bench->add_subcommand("serve",
                                    "a bounded loopback load generator against trex serve (in-process): "
                                    "requests/s, decode tokens/s, TTFT and inter-token latency");
    struct serve_args_t {
        std::string config, checkpoint, tokenizer, concurrency = "1,8,32";
        double init_std = 0.02;
        bench::bench_serve_options opt;
        bool json = false;
    };
    auto a = std::make_shared<serve_args_t>();
    g->add_option("--config", a->config, "model config.json with seeded random weights (default: embedded v4-tiny)");
    g->add_option("--checkpoint", a->checkpoint, "trex checkpoint / run directory or HF release-layout directory");
    g->add_option("--tokenizer", a->tokenizer, "tokenizer.json (default: bytes as token ids)");
    g->add_option("--init-std", a->init_std, "--config: standard deviation of the random weights")
        ->capture_default_str();
    g->add_option("--concurrency", a->concurrency, "client counts, comma-separated")->capture_default_str();
    g->add_option("--requests", a->opt.requests, "requests per concurrency level")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    g->add_option("--prompt-len", a->opt.prompt_len, "prompt bytes")
        ->check(CLI::Range(1, 1 << 20))
        ->capture_default_str();
    g->add_option("--max-tokens", a->opt.max_tokens, "tokens per request")
        ->check(CLI::Range(1, 1 << 20))
        ->capture_default_str();
    g->add_option("--prefill-chunk", a->opt.prefill_chunk, "the server's prompt tokens per prefill chunk")
        ->check(CLI::Range(1, 1 << 20))
        ->capture_default_str();
    g->add_flag(
        "--separate-prefill", [a](int64_t) { a->opt.interleave_prefill = false; },
        "the server prefills admitted prompts before a decoding step (default: inside it)");
    g->add_flag("--speculative", a->opt.speculative, "the server decodes with MTP drafts (the model must have MTP)");
    g->add_flag(
        "--no-keep-alive", [a](int64_t) { a->opt.keep_alive = false; },
        "each request on a new connection (default: a client's requests on one, as OpenAI SDK clients send them)");
    g->add_flag("--json", a->json, "print one JSON object");
    g->callback([a]() {
        a->opt.concurrency.clear();
        std::stringstream ss(a->concurrency);
        for (std::string item; std::getline(ss, item, ',');) {
            try {
                a->opt.concurrency.push_back(std::stoi(item));
            } catch (const std::exception&) {
                TREX_CHECK(false, "bench serve: --concurrency '{}' is not a comma-separated list of numbers",
                           a->concurrency);
            }
        }
        std::string name;
        std::unique_ptr<dsv4_model> model =
            bench_model(a->config, a->checkpoint, a->opt.seed, a->init_std, "bench serve", &name);
        std::unique_ptr<eval::text_codec> codec = a->tokenizer.empty()
                                                      ? eval::make_byte_codec(model->config().eos_token_id)
                                                      : eval::load_tokenizer_codec(a->tokenizer, true);
        eval::check_codec_fits(*codec, model->config().vocab_size, a->tokenizer.empty() ? "bytes" : a->tokenizer);
        const auto r = bench::run_bench_serve(*model, *codec, name, a->opt);
        if (a->json)
            std::printf("%s\n", bench::bench_serve_json(r).dump().c_str());
        else
            std::printf("%s", bench::format_bench_serve(r).c_str());
    });
}

// trex bench generate [--config F | --checkpoint DIR] [--batch B] [--prompt-len P] [--new-tokens N] [--peer] [--json]
void register_bench_generate(CLI::App* bench) {
    auto* g = bench->add_subcommand("generate",
                                    "prefill and decode throughput of the cached decoder, against its "
                                    "bandwidth bound and HF transformers' generate");
    struct gen_args_t {
        std::string config, checkpoint;
        double init_std = 0.02;
        bench::bench_generate_options opt;
        bool json = false;
    };
    auto a = std::make_shared<gen_args_t>();
    g->add_option("--config", a->config, "model config.json with seeded random weights (default: embedded v4-tiny)");
    g->add_option("--checkpoint", a->checkpoint, "trex checkpoint / run directory or HF release-layout directory");
    g->add_option("--init-std", a->init_std, "--config: standard deviation of the random weights")
        ->check(CLI::Range(1e-6, 1.0))
        ->capture_default_str();
    g->add_option("--batch", a->opt.batch, "sequences decoded together")
        ->check(CLI::Range(1, 256))
        ->capture_default_str();
    g->add_option("--prompt-len", a->opt.prompt_len, "tokens per prompt")
        ->check(CLI::Range(1, 1 << 20))
        ->capture_default_str();
    g->add_option("--new-tokens", a->opt.new_tokens, "tokens generated per sequence")
        ->check(CLI::Range(2, 1 << 20))
        ->capture_default_str();
    g->add_option("--seed", a->opt.seed, "prompts and random weights")->capture_default_str();
    g->add_flag("--peer", a->opt.peer, "also time HF transformers' cached generate on the same weights (batch 1)");
    g->add_flag("--speculative", a->opt.speculative, "also time MTP speculative decoding at batch 1 (greedy)");
    g->add_flag("--profile", a->opt.profile, "decode again at batch 1 and at the batch with each section timed");
    g->add_option("--python", a->opt.python, "Python for the peer (default: .venv/bin/python)");
    g->add_option("--peer-threads", a->opt.peer_threads, "torch threads for the peer: auto or a number")
        ->capture_default_str();
    g->add_flag("--json", a->json, "print one JSON object");
    g->callback([a]() {
        std::string name;
        std::unique_ptr<dsv4_model> model =
            bench_model(a->config, a->checkpoint, a->opt.seed, a->init_std, "bench generate", &name);
        const auto r = bench::run_bench_generate(*model, name, a->opt);
        if (a->json)
            std::printf("%s\n", bench::bench_generate_json(r).dump().c_str());
        else
            std::printf("%s", bench::format_bench_generate(r).c_str());
    });
}

}  // namespace trex::cli
