// trex serve: an OpenAI-compatible server for a checkpoint (src/trex/serve/server.hpp).
//
//   trex serve --checkpoint DIR [--config F] [--tokenizer F] [--host 127.0.0.1] [--port 8000] [--api-key-env VAR]
//              [--model-name NAME] [--max-batch N] [--max-kv-mb M] [--max-context N] [--chat-mode]
//              [--prefill-chunk N] [--separate-prefill] [--speculative mtp] [--shutdown-deadline S]
//
// The tokenizer defaults to DIR/tokenizer.json; the server binds loopback unless told otherwise; with --api-key-env
// the variable's value is the Bearer key every request must carry. "serve: listening on http://HOST:PORT" goes to
// stdout once the port is bound (--port 0: any free port). SIGTERM or SIGINT: no new requests, in-flight ones finish
// (cancelled after --shutdown-deadline seconds), exit 0.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "commands.hpp"
#include "trex/base/error.hpp"
#include "trex/eval/backend.hpp"
#include "trex/io/model_loader.hpp"
#include "trex/serve/server.hpp"

namespace trex::cli {

namespace {

struct serve_cli_options {
    std::string checkpoint, config, tokenizer, api_key_env, speculative;
    std::string qat, indexer_ties;  // numerics instead of the config's ("" = keep)
    bool chat_mode = false, allow_nonfinite = false;
    serve::server_options server;
};

void run_serve(serve_cli_options o) {
    // SIGTERM / SIGINT are taken by one thread (sigwait), never by the workers
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    std::string tok = o.tokenizer;
    if (tok.empty()) {
        const std::filesystem::path p = std::filesystem::path(o.checkpoint) / "tokenizer.json";
        TREX_CHECK(std::filesystem::is_regular_file(p), "serve: no --tokenizer and no {}", p.string());
        tok = p.string();
    }
    std::unique_ptr<eval::text_codec> codec = eval::load_tokenizer_codec(tok, !o.chat_mode);
    if (!o.api_key_env.empty()) {
        const char* key = std::getenv(o.api_key_env.c_str());
        TREX_CHECK(key && *key, "serve: --api-key-env {}: the variable is not set", o.api_key_env);
        o.server.api_key = key;
    }
    model_load_options lo;
    lo.config = o.config;
    lo.allow_nonfinite = o.allow_nonfinite;
    lo.qat = o.qat;
    lo.indexer_ties = o.indexer_ties;
    loaded_model loaded = load_model_for_inference(o.checkpoint, lo);
    eval::check_codec_fits(*codec, loaded.model->config().vocab_size, tok);
    o.server.thinking = !o.chat_mode;
    o.server.speculative = o.speculative == "mtp";
    TREX_CHECK(!o.server.speculative || loaded.model->config().has_mtp(),
               "serve: --speculative mtp: the checkpoint has no MTP module");

    serve::server srv(*loaded.model, *codec, o.server);
    srv.bind();
    std::printf("serve: listening on http://%s:%d (model \"%s\", %s)\n", o.server.host.c_str(), srv.bound_port(),
                o.server.model_name.c_str(), loaded.dir.c_str());
    std::fflush(stdout);
    std::thread waiter([&] {
        int sig = 0;
        sigwait(&stop_signals, &sig);
        if (sig == SIGTERM || sig == SIGINT) {
            std::fprintf(stderr, "serve: signal %d: finishing in-flight requests\n", sig);
            srv.stop();
        }
    });
    srv.run();
    // run() also returns when stopped otherwise: wake the waiter if it still waits
    pthread_kill(waiter.native_handle(), SIGTERM);
    waiter.join();
    std::fprintf(stderr, "serve: stopped\n");
}

}  // namespace

void register_serve(CLI::App& app) {
    auto o = std::make_shared<serve_cli_options>();
    CLI::App* s = app.add_subcommand("serve", "OpenAI-compatible HTTP server for a checkpoint (continuous batching)");
    s->add_option("--checkpoint", o->checkpoint, "trex run directory or checkpoint, or HF release-layout directory")
        ->required();
    s->add_option("--config", o->config, "model config.json used instead of the checkpoint's");
    add_numerics_options(s, o->qat, o->indexer_ties);
    s->add_option("--tokenizer", o->tokenizer, "tokenizer.json (default: DIR/tokenizer.json)");
    s->add_option("--host", o->server.host, "address to bind")->capture_default_str();
    s->add_option("--port", o->server.port, "port (0: any free port)")
        ->check(CLI::Range(0, 65535))
        ->capture_default_str();
    s->add_option("--api-key-env", o->api_key_env, "environment variable holding the API key clients must send");
    s->add_option("--model-name", o->server.model_name, "the model name clients use")->capture_default_str();
    s->add_option("--max-batch", o->server.max_batch, "sequences decoded together")
        ->check(CLI::Range(1, 1024))
        ->capture_default_str();
    s->add_option("--max-kv-mb", o->server.max_kv_mb, "cache memory admitted requests may reach (0: no limit)")
        ->check(CLI::Range(0.0, 1e9))
        ->capture_default_str();
    s->add_option("--max-context", o->server.max_context, "prompt + generated tokens")
        ->check(CLI::Range(2, 1 << 24))
        ->capture_default_str();
    s->add_option("--prefill-chunk", o->server.prefill_chunk,
                  "prompt tokens per prefill chunk (interleaved: the most a step adds to the decoding batch)")
        ->check(CLI::Range(1, 1 << 20))
        ->capture_default_str();
    s->add_flag(
        "--separate-prefill", [o](int64_t) { o->server.interleave_prefill = false; },
        "prefill admitted prompts before a decoding step (default: inside it, a chunk at a time)");
    s->add_flag("--chat-mode", o->chat_mode, "DeepSeek-V4 chat mode (default: thinking mode)");
    s->add_option("--speculative", o->speculative, "mtp: MTP speculative decoding")->check(CLI::IsMember({"mtp"}));
    s->add_option("--shutdown-deadline", o->server.shutdown_deadline_s,
                  "seconds in-flight requests get to finish after SIGTERM")
        ->capture_default_str();
    s->add_flag("--allow-nonfinite", o->allow_nonfinite, "HF layout: import NaN / inf weights instead of refusing");
    s->callback([o] { run_serve(*o); });
}

}  // namespace trex::cli
