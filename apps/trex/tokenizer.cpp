// trex tokenizer: encode / decode / info / train / chat with a byte-level BPE tokenizer.json (docs/tokenizer.md).
//
//   trex tokenizer encode [--tokenizer F] [--input FILE|-] [--lines | --jsonl] [--format json|text] [--no-special]
//                         [--threads N]
//       The input (bytes; invalid UTF-8 allowed) is one document; with --lines one document per line (the
//       newline is not part of the document); with --jsonl one JSON object per line holding "text" (a string) or
//       "b64" (base64 bytes). Prints one line of ids per document: a JSON array (default) or space-separated
//       numbers. Documents are encoded in parallel (--threads), output in input order.
//   trex tokenizer decode [--tokenizer F] [--input FILE|-] [--skip-special] [--jsonl]
//       Reads ids (a JSON array or whitespace-separated numbers) and writes the decoded bytes to stdout; with
//       --jsonl, one JSON array of ids per line in and one {"b64": ...} object per line out.
//   trex tokenizer info [--tokenizer F] [--json]
//   trex tokenizer train --vocab-size N --input FILE... --out tokenizer.json [--split-digits] [--min-frequency K]
//   trex tokenizer chat [--tokenizer F] --messages FILE [--thinking] [--keep-thinking] [--train-on all|last]
//                       [--no-bos]
//       Prints {"text", "ids", "mask"} for OpenAI-style messages in the DeepSeek-V4 chat format.
// --tokenizer defaults to data/deepseek-v4/tokenizer.json (scripts/setup.sh --with-tokenizers).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.hpp"
#include "trex/base/base64.hpp"
#include "trex/base/error.hpp"
#include "trex/base/timer.hpp"
#include "trex/tokenizer/chat.hpp"
#include "trex/tokenizer/paths.hpp"
#include "trex/tokenizer/tokenizer.hpp"
#include "trex/tokenizer/train.hpp"

namespace trex::cli {

namespace {

std::string read_input(const std::string& path) {
    if (path.empty() || path == "-") {
        std::string s((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
        return s;
    }
    std::ifstream in(path, std::ios::binary);
    TREX_CHECK(in.good(), "{}: cannot read: {}", path, std::strerror(errno));
    std::error_code ec;
    TREX_CHECK(!std::filesystem::is_directory(path, ec), "{}: cannot read: is a directory", path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string resolve_tokenizer(const std::string& given) {
    if (!given.empty()) return given;
    const std::string d = tok::default_tokenizer_path();
    TREX_CHECK(std::filesystem::exists(d),
               "no --tokenizer given and {} is absent (run scripts/setup.sh --with-tokenizers, or pass --tokenizer)",
               d);
    return d;
}

void write_ids(std::string& out, const std::vector<int32_t>& ids, bool json) {
    if (json) out += '[';
    for (size_t i = 0; i < ids.size(); i++) {
        if (i) out += json ? "," : " ";
        out += std::to_string(ids[i]);
    }
    if (json) out += ']';
    out += '\n';
}

std::vector<int32_t> parse_ids(const std::string& text, const std::string& where) {
    std::vector<int32_t> ids;
    size_t i = 0;
    while (i < text.size() && std::isspace((unsigned char)text[i])) i++;
    if (i < text.size() && text[i] == '[') {
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(text);
        } catch (const std::exception& e) {
            std::string msg = e.what();
            for (auto& c : msg)
                if (c == '\n') c = ' ';
            throw_error(fmt::format("{}: malformed JSON ids: {}", where, msg));
        }
        TREX_CHECK(j.is_array(), "{}: expected a JSON array of ids", where);
        for (size_t k = 0; k < j.size(); k++) {
            TREX_CHECK(j[k].is_number_integer(), "{}: element {} is not an integer: {}", where, k, j[k].dump());
            const int64_t v = j[k].get<int64_t>();
            TREX_CHECK(v >= 0 && v < INT32_MAX, "{}: element {} is out of range: {}", where, k, v);
            ids.push_back((int32_t)v);
        }
        return ids;
    }
    std::istringstream is(text);
    std::string w;
    while (is >> w) {
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(w.c_str(), &end, 10);
        TREX_CHECK(end && *end == 0 && errno == 0 && v >= 0 && v < INT32_MAX, "{}: '{}' is not a token id", where, w);
        ids.push_back((int32_t)v);
    }
    return ids;
}

// One JSONL line: {"text": "..."} or {"b64": "..."} -> the document's bytes.
std::string jsonl_document(std::string_view line, const std::string& where) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(line);
    } catch (const std::exception& e) {
        std::string msg = e.what();
        for (auto& c : msg)
            if (c == '\n') c = ' ';
        throw_error(fmt::format("{}: malformed JSON: {}", where, msg));
    }
    TREX_CHECK(j.is_object(), "{}: expected a JSON object", where);
    if (j.contains("text")) {
        TREX_CHECK(j["text"].is_string(), "{}: \"text\" is not a string", where);
        return j["text"].get<std::string>();
    }
    TREX_CHECK(j.contains("b64") && j["b64"].is_string(), "{}: expected a \"text\" or \"b64\" string field", where);
    std::string out;
    TREX_CHECK(base64_decode(j["b64"].get<std::string>(), &out), "{}: \"b64\" is not valid base64", where);
    return out;
}

// ---- encode

struct tok_encode_args {
    std::string tokenizer, input, format = "json";
    bool lines = false, jsonl = false, no_special = false;
    int threads = 0;
};

// The documents of --lines (one per line) or --jsonl (one per non-empty line's object, decoded into `owned`).
std::vector<std::string_view> split_documents(const std::string& text, const tok_encode_args& a,
                                              std::vector<std::string>& owned) {
    std::vector<std::string_view> docs;
    size_t s = 0, line = 0;
    while (s < text.size()) {
        size_t e = text.find('\n', s);
        if (e == std::string::npos) e = text.size();
        line++;
        if (a.lines) {
            docs.emplace_back(text.data() + s, e - s);
        } else if (e > s) {
            owned.push_back(jsonl_document(std::string_view(text.data() + s, e - s),
                                           fmt::format("{}:{}", a.input.empty() ? "<stdin>" : a.input, line)));
        }
        s = e + 1;
    }
    if (a.jsonl) docs.assign(owned.begin(), owned.end());
    return docs;
}

void run_encode(const tok_encode_args& a) {
    const tok::tokenizer t = tok::tokenizer::from_file(resolve_tokenizer(a.tokenizer));
    const std::string text = read_input(a.input);
    const bool json = a.format == "json";
    std::string out;
    TREX_CHECK(!(a.lines && a.jsonl), "encode: --lines and --jsonl exclude each other");
    if (!a.lines && !a.jsonl) {
        write_ids(out, t.encode(text, !a.no_special), json);
    } else {
        std::vector<std::string> owned;
        const std::vector<std::string_view> docs = split_documents(text, a, owned);
        for (const auto& ids : t.encode_batch(docs, a.threads, !a.no_special)) write_ids(out, ids, json);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
}

void add_encode_command(CLI::App* tk) {
    auto a = std::make_shared<tok_encode_args>();
    auto* c = tk->add_subcommand("encode", "text (file or stdin) -> token ids");
    c->add_option("--tokenizer", a->tokenizer, "tokenizer.json (default: data/deepseek-v4/tokenizer.json)");
    c->add_option("--input", a->input, "input file ('-' or absent: stdin)");
    c->add_flag("--lines", a->lines, "one document per line");
    c->add_flag("--jsonl", a->jsonl, "one JSON object per line with \"text\" or \"b64\"");
    c->add_option("--format", a->format, "json (one array per document) or text (space-separated)")
        ->check(CLI::IsMember({"json", "text"}));
    c->add_flag("--no-special", a->no_special, "do not apply the post-processor's template");
    c->add_option("--threads", a->threads, "threads for --lines (default: OpenMP's)");
    c->callback([a]() { run_encode(*a); });
}

// ---- decode

struct tok_decode_args {
    std::string tokenizer, input;
    bool skip_special = false, jsonl = false;
};

// --jsonl: one {"b64": ...} line per non-empty line of ids.
std::string decode_jsonl(const tok::tokenizer& t, const std::string& text, const std::string& where,
                         bool skip_special) {
    std::string out;
    size_t s = 0, line = 0;
    while (s < text.size()) {
        size_t e = text.find('\n', s);
        if (e == std::string::npos) e = text.size();
        line++;
        if (e > s) {
            const auto ids = parse_ids(text.substr(s, e - s), fmt::format("{}:{}", where, line));
            out += nlohmann::json({{"b64", base64_encode(t.decode(ids, skip_special))}}).dump();
            out += '\n';
        }
        s = e + 1;
    }
    return out;
}

void run_decode(const tok_decode_args& a) {
    const tok::tokenizer t = tok::tokenizer::from_file(resolve_tokenizer(a.tokenizer));
    const std::string text = read_input(a.input);
    const std::string where = a.input.empty() ? "<stdin>" : a.input;
    std::string out;
    if (!a.jsonl) {
        out = t.decode(parse_ids(text, where), a.skip_special);
    } else {
        out = decode_jsonl(t, text, where, a.skip_special);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
}

void add_decode_command(CLI::App* tk) {
    auto a = std::make_shared<tok_decode_args>();
    auto* c = tk->add_subcommand("decode", "token ids (JSON array or whitespace-separated) -> bytes on stdout");
    c->add_option("--tokenizer", a->tokenizer, "tokenizer.json (default: data/deepseek-v4/tokenizer.json)");
    c->add_option("--input", a->input, "input file ('-' or absent: stdin)");
    c->add_flag("--skip-special", a->skip_special, "drop special tokens");
    c->add_flag("--jsonl", a->jsonl, "one JSON array of ids per line in, one {\"b64\": ...} per line out");
    c->callback([a]() { run_decode(*a); });
}

// ---- info

struct tok_info_args {
    std::string tokenizer;
    bool json = false;
};

void print_info_json(const tok::tokenizer& t) {
    nlohmann::ordered_json specials = nlohmann::ordered_json::array();
    nlohmann::ordered_json others = nlohmann::ordered_json::array();
    for (const auto& x : t.added_tokens()) {
        nlohmann::ordered_json e = {{"id", x.id}, {"content", x.content}};
        (x.special ? specials : others).push_back(e);
    }
    nlohmann::ordered_json splits = nlohmann::ordered_json::array();
    for (const auto& s : t.splits())
        splits.push_back({{"pattern", s.pattern},
                          {"kind", s.is_regex ? "Regex" : "String"},
                          {"behavior", tok::split_behavior_name(s.behavior)},
                          {"invert", s.invert}});
    nlohmann::ordered_json j = {
        {"tokenizer", t.name()},
        {"vocab_size", t.vocab_size()},
        {"id_space", t.id_space()},
        {"model_vocab", t.model().vocab.size()},
        {"merges", t.model().n_merges},
        {"normalizer", t.normalizer_summary()},
        {"splits", splits},
        {"byte_level",
         {{"add_prefix_space", t.byte_level().add_prefix_space}, {"use_regex", t.byte_level().use_regex}}},
        {"post_processor", t.post_processor_summary()},
        {"special_tokens", specials},
        {"added_tokens", others},
    };
    std::printf("%s\n", j.dump().c_str());
}

void print_info_text(const tok::tokenizer& t) {
    size_t n_special = 0;
    for (const auto& x : t.added_tokens()) n_special += x.special;
    std::printf("tokenizer       %s\n", t.name().c_str());
    std::printf("vocab size      %zu ids (model vocab %zu + %zu added tokens outside it); ids 0..%d\n", t.vocab_size(),
                t.model().vocab.size(), t.vocab_size() - t.model().vocab.size(), t.id_space() - 1);
    std::printf("merges          %zu\n", t.model().n_merges);
    std::printf("normalizer      %s\n", t.normalizer_summary().c_str());
    std::printf("pre-tokenizer   %s\n", t.pre_tokenizer_summary().c_str());
    std::printf("post-processor  %s\n", t.post_processor_summary().c_str());
    std::printf("added tokens    %zu (%zu special)\n", t.added_tokens().size(), n_special);
    size_t shown = 0;
    for (const auto& x : t.added_tokens()) {
        if (x.content.rfind("<｜place▁holder", 0) == 0 || x.content.rfind("<|place_holder", 0) == 0) continue;
        if (shown++ >= 40) {
            std::printf("  ... (placeholder tokens and the rest omitted; --json lists all)\n");
            break;
        }
        std::printf("  %7d %s%s\n", x.id, x.content.c_str(), x.special ? "  [special]" : "");
    }
}

void add_info_command(CLI::App* tk) {
    auto a = std::make_shared<tok_info_args>();
    auto* c = tk->add_subcommand("info", "vocabulary size, special tokens, pre-tokenizer summary");
    c->add_option("--tokenizer", a->tokenizer, "tokenizer.json (default: data/deepseek-v4/tokenizer.json)");
    c->add_flag("--json", a->json, "print one JSON object");
    c->callback([a]() {
        const tok::tokenizer t = tok::tokenizer::from_file(resolve_tokenizer(a->tokenizer));
        if (a->json)
            print_info_json(t);
        else
            print_info_text(t);
    });
}

// ---- train

struct tok_train_args {
    tok::train_options opt;
    std::vector<std::string> inputs;
    std::string out;
};

void run_train(const tok_train_args& a) {
    const double t0 = now_seconds();
    std::vector<std::string> texts;
    for (const auto& f : a.inputs) texts.push_back(read_input(f));
    std::vector<std::string_view> docs(texts.begin(), texts.end());
    tok::train_stats st;
    const auto j = tok::train_bpe(docs, a.opt, &st);
    tok::write_json_atomic(a.out, j);
    std::printf("trained %s: %zu ids (%zu merges) from %zu bytes, %zu distinct words, %.2f s\n", a.out.c_str(),
                st.vocab_size, st.merges, st.bytes, st.words, now_seconds() - t0);
}

void add_train_command(CLI::App* tk) {
    auto a = std::make_shared<tok_train_args>();
    auto* c = tk->add_subcommand("train", "train a byte-level BPE tokenizer and write tokenizer.json");
    c->add_option("--vocab-size", a->opt.vocab_size, "total ids: special tokens + 256 bytes + merges")->required();
    c->add_option("--input", a->inputs, "training text files (each file is one document; bytes)")->required();
    c->add_option("--out", a->out, "output tokenizer.json")->required();
    c->add_flag("--split-digits", a->opt.split_digits, "pre-tokenize digits one by one (else runs of up to 3)");
    c->add_option("--min-frequency", a->opt.min_frequency, "stop when the best pair is rarer")->capture_default_str();
    c->add_option("--threads", a->opt.threads, "threads for counting (default: OpenMP's)");
    c->callback([a]() { run_train(*a); });
}

// ---- chat

struct tok_chat_args {
    std::string tokenizer, messages, train_on = "all";
    bool thinking = false, keep_thinking = false, no_bos = false;
};

void run_chat(const tok_chat_args& a) {
    const tok::tokenizer t = tok::tokenizer::from_file(resolve_tokenizer(a.tokenizer));
    const std::string text = read_input(a.messages);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const std::exception& e) {
        std::string msg = e.what();
        for (auto& ch : msg)
            if (ch == '\n') ch = ' ';
        throw_error(fmt::format("{}: malformed JSON: {}", a.messages, msg));
    }
    tok::chat_options o;
    o.thinking = a.thinking;
    o.drop_thinking = !a.keep_thinking;
    o.add_bos = !a.no_bos;
    o.train_last_only = a.train_on == "last";
    const auto msgs = tok::parse_chat_messages(j, a.messages);
    const tok::chat_encoding enc = tok::encode_dsv4_chat(t, msgs, o);
    nlohmann::ordered_json out = {{"text", enc.text}, {"ids", enc.ids}, {"mask", enc.mask}};
    std::printf("%s\n", out.dump().c_str());
}

void add_chat_command(CLI::App* tk) {
    auto a = std::make_shared<tok_chat_args>();
    auto* c = tk->add_subcommand("chat", "DeepSeek-V4 chat encoding of OpenAI-style messages, with the SFT mask");
    c->add_option("--tokenizer", a->tokenizer, "tokenizer.json (default: data/deepseek-v4/tokenizer.json)");
    c->add_option("--messages", a->messages,
                  "JSON file: [{role, content, reasoning_content?}, ...] "
                  "or {\"messages\": [...]}")
        ->required();
    c->add_flag("--thinking", a->thinking, "thinking mode (default: chat mode)");
    c->add_flag("--keep-thinking", a->keep_thinking, "keep the reasoning of earlier turns (drop_thinking=False)");
    c->add_option("--train-on", a->train_on, "which assistant turns the mask trains: all or last")
        ->check(CLI::IsMember({"all", "last"}));
    c->add_flag("--no-bos", a->no_bos, "no BOS at the start");
    c->callback([a]() { run_chat(*a); });
}

}  // namespace

void register_tokenizer(CLI::App& app) {
    auto* tk = app.add_subcommand("tokenizer", "encode / decode / train byte-level BPE tokenizers (tokenizer.json)");
    tk->require_subcommand(1);
    add_encode_command(tk);
    add_decode_command(tk);
    add_info_command(tk);
    add_train_command(tk);
    add_chat_command(tk);
}

}  // namespace trex::cli
