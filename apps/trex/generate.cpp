// trex generate: text from a checkpoint through the cached decoder (src/trex/infer/generator.hpp).
//
//   trex generate --checkpoint DIR [--config F] [--tokenizer F]
//                 (--prompt TEXT | --messages F.jsonl | --prompt-ids "1 2 3")
//                 [--raw] [--chat-mode] [--system TEXT]
//                 [--max-tokens N] [--temperature T] [--top-p P] [--top-k K] [--seed S] [--stop S]... [--stop-id N]...
//                 [--logprobs N] [--batch B] [--max-context N] [--prefill-chunk N] [--speculative mtp]
//                 [--output F.jsonl] [--json]
//
// DIR: a `trex train` run directory or checkpoint, or an HF release-layout directory (io/model_loader.hpp). The
// tokenizer is --tokenizer or DIR/tokenizer.json. --prompt is one conversation turn in the DeepSeek-V4 chat encoding
// (thinking mode: the prompt ends with <｜Assistant｜><think>; --chat-mode: </think>), its text streamed to stdout as
// it is generated; --raw encodes the text as is after the config's BOS id. --messages: a JSONL batch, one request per
// line — {"id"?, "messages": [{"role", "content"}…]} or {"id"?, "prompt": "text"} (raw) — decoded together
// (--batch sequences per step) and written as JSONL {id, completion, finish_reason, prompt_tokens,
// completion_tokens, tokens[, logprobs]} to --output or stdout. --prompt-ids: token ids, no tokenizer needed.
// Generation stops at the tokenizer's end of sentence (or the config's eos id), a --stop string or --stop-id,
// --max-tokens, or --max-context tokens of prompt + output. Per-request seeds: --seed + the line index.
// --speculative mtp: the model's MTP module drafts each next token and the main model verifies it in the same step
// (greedy output identical to plain decoding; sampling keeps the target distribution); the acceptance goes to stderr.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/eval/backend.hpp"
#include "trex/eval/score.hpp"
#include "trex/infer/generator.hpp"
#include "trex/io/model_loader.hpp"

namespace trex::cli {

namespace fs = std::filesystem;

namespace {

struct generate_cli_options {
    std::string checkpoint, config, tokenizer, prompt, messages, prompt_ids, system, output, speculative;
    std::string qat, indexer_ties;  // numerics instead of the config's ("" = keep)
    bool raw = false, chat_mode = false, json = false, allow_nonfinite = false;
    int64_t max_tokens = 256, batch = 8, max_context = 4096, prefill_chunk = 512;
    double temperature = 0.0, top_p = 1.0;
    int top_k = 0, logprobs = -1;  // logprobs < 0: none reported
    uint64_t seed = 0;
    std::vector<std::string> stops;
    std::vector<int32_t> stop_ids;
};

// One request as read: an id, and either messages, raw text or ids.
struct input_item {
    std::string id;
    std::vector<eval::chat_message> messages;
    std::optional<std::string> text;  // raw
    std::vector<int32_t> ids;         // --prompt-ids
};

std::vector<input_item> read_inputs(const generate_cli_options& o) {
    const int given = !o.prompt.empty() + !o.messages.empty() + !o.prompt_ids.empty();
    TREX_CHECK(given == 1, "generate: give one of --prompt TEXT, --messages F.jsonl, --prompt-ids \"1 2 3\"");
    std::vector<input_item> items;
    if (!o.prompt_ids.empty()) {
        items.push_back({"0", {}, std::nullopt, eval::parse_token_line(o.prompt_ids, "--prompt-ids")});
        TREX_CHECK(!items[0].ids.empty(), "generate: --prompt-ids has no token ids");
        return items;
    }
    if (!o.prompt.empty()) {
        input_item it{"0", {}, std::nullopt, {}};
        if (o.raw)
            it.text = o.prompt;
        else
            it.messages.push_back({"user", o.prompt});
        items.push_back(std::move(it));
        return items;
    }
    std::ifstream in(o.messages);
    TREX_CHECK(in.good(), "{}: cannot open the messages file", o.messages);
    std::string line;
    for (int64_t n = 1; std::getline(in, line); n++) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        const std::string where = fmt::format("{}:{}", o.messages, n);
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(line);
        } catch (const std::exception& e) {
            throw_error(fmt::format("{}: not JSON ({})", where, e.what()));
        }
        TREX_CHECK(j.is_object(), "{}: a line must be an object with \"messages\" or \"prompt\"", where);
        input_item it;
        it.id = j.contains("id") ? (j["id"].is_string() ? j["id"].get<std::string>() : j["id"].dump())
                                 : std::to_string(items.size());
        if (j.contains("messages")) {
            TREX_CHECK(j["messages"].is_array() && !j["messages"].empty(), "{}: \"messages\" must be a non-empty list",
                       where);
            for (const auto& m : j["messages"]) {
                TREX_CHECK(m.is_object() && m.contains("role") && m["role"].is_string() && m.contains("content") &&
                               m["content"].is_string(),
                           "{}: each message needs string \"role\" and \"content\"", where);
                const std::string role = m["role"];
                TREX_CHECK(role == "system" || role == "user" || role == "assistant",
                           "{}: role \"{}\" (system, user or assistant)", where, role);
                it.messages.push_back({role, m["content"]});
            }
        } else {
            TREX_CHECK(j.contains("prompt") && j["prompt"].is_string(), "{}: needs \"messages\" or a string \"prompt\"",
                       where);
            it.text = j["prompt"].get<std::string>();
        }
        items.push_back(std::move(it));
    }
    TREX_CHECK(!items.empty(), "{}: no requests", o.messages);
    return items;
}

// The tokenizer: --tokenizer, else DIR/tokenizer.json when there is one (empty: none).
std::string tokenizer_path(const generate_cli_options& o) {
    if (!o.tokenizer.empty()) return o.tokenizer;
    for (const fs::path& p :
         {fs::path(o.checkpoint) / "tokenizer.json", fs::path(o.checkpoint) / ".." / "tokenizer.json"})
        if (fs::is_regular_file(p)) return p.string();
    return "";
}

// Prints a stream's text as it grows, holding back an incomplete UTF-8 sequence at its end.
class text_streamer {
   public:
    void show(const std::string& full) {
        size_t end = full.size();
        // back up over a trailing partial character: at most 3 continuation bytes after a lead byte
        size_t lead = end;
        for (size_t k = 0; k < 4 && lead > printed_; k++) {
            const unsigned char ch = (unsigned char)full[lead - 1];
            if ((ch & 0xC0) != 0x80) {
                const size_t need = ch >= 0xF0 ? 4 : ch >= 0xE0 ? 3 : ch >= 0xC0 ? 2 : 1;
                if (end - (lead - 1) < need) end = lead - 1;
                break;
            }
            lead--;
        }
        if (end > printed_) {
            std::fwrite(full.data() + printed_, 1, end - printed_, stdout);
            std::fflush(stdout);
            printed_ = end;
        }
    }

   private:
    size_t printed_ = 0;
};

// One JSON line; text that is not valid UTF-8 (a completion cut inside a character) gets U+FFFD.
std::string dump_line(const nlohmann::ordered_json& j) {
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

nlohmann::ordered_json result_json(const input_item& in, const infer::generation_result& r, bool logprobs) {
    nlohmann::ordered_json j;
    j["id"] = in.id;
    j["completion"] = r.text;
    j["finish_reason"] = r.finish;
    j["prompt_tokens"] = r.prompt_tokens;
    j["completion_tokens"] = (int64_t)r.tokens.size();
    j["tokens"] = r.tokens;
    if (logprobs) {
        nlohmann::ordered_json lp = nlohmann::ordered_json::array();
        for (const infer::token_choice& c : r.choices) {
            nlohmann::ordered_json top = nlohmann::ordered_json::array();
            for (const auto& [id, p] : c.top) top.push_back({{"id", id}, {"logprob", p}});
            lp.push_back({{"id", c.id}, {"logprob", c.logprob}, {"top", top}});
        }
        j["logprobs"] = lp;
    }
    return j;
}

// Request i of the inputs: its prompt ids (as given, raw text after BOS, or the chat encoding) and the sampling.
infer::generation_request request_of(const generate_cli_options& o, input_item& it, size_t i,
                                     const eval::text_codec* codec, const model_config& cfg) {
    infer::generation_request q;
    if (!it.ids.empty()) {
        q.prompt = it.ids;
    } else if (it.text) {
        q.prompt.push_back(cfg.bos_token_id);
        const std::vector<int32_t> body = codec->encode(*it.text);
        q.prompt.insert(q.prompt.end(), body.begin(), body.end());
    } else {
        if (!o.system.empty()) it.messages.insert(it.messages.begin(), {"system", o.system});
        q.prompt = codec->encode_chat(it.messages);
    }
    q.max_tokens = o.max_tokens;
    q.sampling.temperature = o.temperature;
    q.sampling.top_p = o.top_p;
    q.sampling.top_k = o.top_k;
    q.sampling.seed = o.seed + i;
    q.sampling.logprobs = o.logprobs >= 0;
    q.sampling.top_logprobs = std::max(o.logprobs, 0);
    q.stop_strings = o.stops;
    q.stop_ids = o.stop_ids;
    if (codec)
        for (int32_t id : codec->stop_ids()) q.stop_ids.push_back(id);
    else
        q.stop_ids.push_back(cfg.eos_token_id);
    return q;
}

double rate(int64_t n, double seconds) {
    return seconds > 0 ? (double)n / seconds : 0.0;
}

// One JSON object (--prompt --json, --prompt-ids) or the JSONL of a --messages batch.
void print_results(const generate_cli_options& o, const std::vector<input_item>& items,
                   const std::vector<infer::generation_result>& results, const infer::generation_stats& st,
                   const std::string& dir) {
    if (!o.prompt.empty() || !o.prompt_ids.empty()) {
        nlohmann::ordered_json j = result_json(items[0], results[0], o.logprobs >= 0);
        j.erase("id");
        j["checkpoint"] = dir;
        j["prefill_tokens_per_s"] = rate(st.prefill_tokens, st.prefill_seconds);
        j["decode_tokens_per_s"] = rate(st.decode_tokens, st.decode_seconds);
        if (o.speculative == "mtp") j["mtp_acceptance"] = st.acceptance();
        std::printf("%s\n", dump_line(j).c_str());
        return;
    }
    std::string out;
    for (size_t i = 0; i < items.size(); i++)
        out += dump_line(result_json(items[i], results[i], o.logprobs >= 0)) + "\n";
    if (o.output.empty())
        std::fwrite(out.data(), 1, out.size(), stdout);
    else
        write_file_atomic(o.output, out);
}

void print_stats(const infer::generation_stats& st, bool speculative) {
    if (speculative)
        std::fprintf(stderr, "generate: MTP drafts accepted %lld of %lld (%.3f)\n", (long long)st.accepted,
                     (long long)st.drafted, st.acceptance());
    std::fprintf(stderr,
                 "generate: %lld prompt tokens in %.2f s (%.1f tok/s), %lld new tokens in %.2f s (%.1f tok/s, %lld "
                 "steps)\n",
                 (long long)st.prefill_tokens, st.prefill_seconds, rate(st.prefill_tokens, st.prefill_seconds),
                 (long long)st.decode_tokens, st.decode_seconds, rate(st.decode_tokens, st.decode_seconds),
                 (long long)st.decode_steps);
}

void run_generate(const generate_cli_options& o) {
    std::vector<input_item> items = read_inputs(o);
    // the tokenizer before the weights: a bad one fails fast
    const std::string tok_path = tokenizer_path(o);
    std::unique_ptr<eval::text_codec> codec;
    bool needs_text = false;
    for (const input_item& it : items) needs_text |= it.ids.empty();
    TREX_CHECK(!needs_text || !tok_path.empty(),
               "generate: text prompts need --tokenizer tokenizer.json (none in {}); or give --prompt-ids",
               o.checkpoint);
    if (!tok_path.empty()) codec = eval::load_tokenizer_codec(tok_path, !o.chat_mode);
    model_load_options lo;
    lo.config = o.config;
    lo.allow_nonfinite = o.allow_nonfinite;
    lo.qat = o.qat;
    lo.indexer_ties = o.indexer_ties;
    loaded_model loaded = load_model_for_inference(o.checkpoint, lo);
    dsv4_model& model = *loaded.model;
    if (codec) eval::check_codec_fits(*codec, model.config().vocab_size, tok_path);

    std::vector<infer::generation_request> reqs;
    for (size_t i = 0; i < items.size(); i++) reqs.push_back(request_of(o, items[i], i, codec.get(), model.config()));
    infer::generator_options go;
    go.max_batch = o.batch;
    go.max_context = o.max_context;
    go.prefill_chunk = o.prefill_chunk;
    go.speculative = o.speculative == "mtp";
    if (codec) go.detokenize = [&](std::span<const int32_t> ids) { return codec->decode({ids.begin(), ids.end()}); };
    infer::generator gen(model, go);

    const bool stream = !o.prompt.empty() && !o.json && codec;
    std::vector<int32_t> so_far;
    text_streamer streamer;
    infer::generator::token_callback on_token;
    if (stream)
        on_token = [&](size_t, const infer::token_choice& c) {
            so_far.push_back(c.id);
            streamer.show(codec->decode(so_far));
        };
    const std::vector<infer::generation_result> results = gen.run(reqs, on_token);
    if (stream) {
        streamer.show(results[0].text);
        std::printf("\n");
    } else {
        print_results(o, items, results, gen.stats(), loaded.dir);
    }
    print_stats(gen.stats(), go.speculative);
}

}  // namespace

void register_generate(CLI::App& app) {
    auto o = std::make_shared<generate_cli_options>();
    CLI::App* g = app.add_subcommand("generate", "Generate text from a checkpoint with the cached decoder");
    g->add_option("--checkpoint", o->checkpoint, "trex run directory or checkpoint, or HF release-layout directory")
        ->required();
    g->add_option("--config", o->config, "model config.json used instead of the checkpoint's");
    add_numerics_options(g, o->qat, o->indexer_ties);
    g->add_option("--tokenizer", o->tokenizer, "tokenizer.json (default: the checkpoint's, when it has one)");
    g->add_option("--prompt", o->prompt, "one user turn (chat encoding), streamed to stdout");
    g->add_option("--messages", o->messages, "JSONL batch: {\"id\"?, \"messages\": [...]} or {\"id\"?, \"prompt\"}");
    g->add_option("--prompt-ids", o->prompt_ids, "token ids of the prompt (no tokenizer needed)");
    g->add_flag("--raw", o->raw, "--prompt is encoded as is after BOS (no chat template)");
    g->add_flag("--chat-mode", o->chat_mode, "DeepSeek-V4 chat mode (the prompt ends with </think>); default thinking");
    g->add_option("--system", o->system, "a system message before each conversation");
    g->add_option("--max-tokens", o->max_tokens, "new tokens at most")
        ->check(CLI::Range(1, 1 << 24))
        ->capture_default_str();
    g->add_option("--temperature", o->temperature, "0: greedy")->capture_default_str();
    g->add_option("--top-p", o->top_p, "nucleus probability")->capture_default_str();
    g->add_option("--top-k", o->top_k, "0: no cut")->capture_default_str();
    g->add_option("--seed", o->seed, "request i draws from seed + i")->capture_default_str();
    g->add_option("--stop", o->stops, "stop string (repeatable)");
    g->add_option("--stop-id", o->stop_ids, "stop token id (repeatable)");
    g->add_option("--logprobs", o->logprobs,
                  "report each token's log-probability and those of the N most likely (JSON)")
        ->capture_default_str();
    g->add_option("--batch", o->batch, "sequences decoded together")->check(CLI::Range(1, 1024))->capture_default_str();
    g->add_option("--max-context", o->max_context, "prompt + generated tokens")->capture_default_str();
    g->add_option("--prefill-chunk", o->prefill_chunk, "prompt tokens per prefill call")
        ->check(CLI::Range(1, 1 << 20))
        ->capture_default_str();
    g->add_option("--speculative", o->speculative, "mtp: the MTP module drafts the next token, the model verifies it")
        ->check(CLI::IsMember({"mtp"}));
    g->add_option("--output", o->output, "--messages: JSONL results file (default stdout)");
    g->add_flag("--json", o->json, "--prompt / --prompt-ids: one JSON object instead of streamed text");
    g->add_flag("--allow-nonfinite", o->allow_nonfinite, "HF layout: import NaN / inf weights instead of refusing");
    g->callback([o] { run_generate(*o); });
}

}  // namespace trex::cli
