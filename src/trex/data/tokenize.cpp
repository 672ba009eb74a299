#include "trex/data/tokenize.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <xxhash.h>

#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/base/progress.hpp"
#include "trex/data/shards.hpp"
#include "trex/tokenizer/paths.hpp"
#include "trex/tokenizer/tokenizer.hpp"

namespace fs = std::filesystem;

namespace trex {

namespace {

struct input_file {
    std::string path;
    std::string format;  // text | jsonl | messages
};

bool has_ext(const fs::path& p, std::initializer_list<const char*> exts) {
    const std::string e = p.extension().string();
    for (const char* x : exts)
        if (e == x) return true;
    return false;
}

// The first non-empty line of a JSONL file, parsed (null when the file has none).
nlohmann::json first_record(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    TREX_CHECK(in.good(), "{}: cannot open", path);
    std::string line;
    for (int64_t ln = 1; std::getline(in, line); ln++) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        try {
            return nlohmann::json::parse(line);
        } catch (const std::exception& e) {
            throw error(fmt::format("{}:{}: not a JSON object: {}", path, ln, e.what()));
        }
    }
    return nullptr;
}

// Decides the format of one file; returns "" for a directory-walked JSONL file without documents (skipped).
std::string file_format(const fs::path& p, const tokenize_options& opt, bool explicit_file) {
    if (opt.format != "auto") return opt.format;
    if (!has_ext(p, {".jsonl", ".json"})) return "text";
    const nlohmann::json r = first_record(p.string());
    if (r.is_object() && r.contains("messages")) return "messages";
    if (r.is_object() && r.contains(opt.text_key)) return "jsonl";
    if (r.is_null()) return "jsonl";  // empty file: no documents
    TREX_CHECK(!explicit_file, "{}: the first record has neither '{}' nor 'messages' (use --text-key or --format)",
               p.string(), opt.text_key);
    return "";
}

std::vector<input_file> expand_inputs(const tokenize_options& opt, int64_t* skipped_files) {
    std::vector<input_file> files;
    for (const std::string& in : opt.inputs) {
        const fs::path p(in);
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            std::vector<fs::path> found;
            for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::recursive_directory_iterator();
                 it.increment(ec)) {
                if (!it->is_regular_file()) continue;
                const std::string name = it->path().filename().string();
                if (name.empty() || name[0] == '.') continue;
                if (has_ext(it->path(), {".txt", ".md", ".markdown", ".jsonl"})) found.push_back(it->path());
            }
            TREX_CHECK(!ec, "{}: cannot walk the directory: {}", in, ec.message());
            std::sort(found.begin(), found.end());
            for (const fs::path& f : found) {
                const std::string fmt_ = file_format(f, opt, false);
                if (fmt_.empty())
                    (*skipped_files)++;
                else
                    files.push_back({f.string(), fmt_});
            }
        } else {
            TREX_CHECK(fs::is_regular_file(p, ec), "{}: no such input file or directory", in);
            files.push_back({p.string(), file_format(p, opt, true)});
        }
    }
    TREX_CHECK(!files.empty(), "data tokenize: the inputs hold no documents (.txt, .md, .markdown, .jsonl)");
    return files;
}

// One document waiting to be encoded.
struct pending {
    std::string text;                         // text documents
    std::vector<tok::chat_message> messages;  // chat documents
    bool chat = false;
    std::string where;  // file:line, for errors
};

// Reads documents of one file and hands them to `sink` in order.
template <class Sink>
void read_documents(const input_file& f, const tokenize_options& opt, Sink&& sink) {
    if (f.format == "text") {
        pending d;
        d.text = read_file(f.path);
        d.where = f.path;
        sink(std::move(d));
        return;
    }
    std::ifstream in(f.path, std::ios::binary);
    TREX_CHECK(in.good(), "{}: cannot open", f.path);
    std::string line;
    for (int64_t ln = 1; std::getline(in, line); ln++) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        const std::string where = fmt::format("{}:{}", f.path, ln);
        nlohmann::json r;
        try {
            r = nlohmann::json::parse(line);
        } catch (const std::exception& e) {
            throw error(fmt::format("{}: not a JSON object: {}", where, e.what()));
        }
        TREX_CHECK(r.is_object(), "{}: expected a JSON object", where);
        pending d;
        d.where = where;
        if (f.format == "messages") {
            TREX_CHECK(r.contains("messages"), "{}: the record has no 'messages'", where);
            d.messages = tok::parse_chat_messages(r["messages"], where);
            d.chat = true;
        } else {
            TREX_CHECK(r.contains(opt.text_key) && r[opt.text_key].is_string(), "{}: field '{}' missing or not a string",
                       where, opt.text_key);
            d.text = r[opt.text_key].get<std::string>();
        }
        sink(std::move(d));
    }
    TREX_CHECK(!in.bad(), "{}: read error", f.path);
}

struct encoded {
    std::vector<int32_t> ids;
    std::vector<uint8_t> mask;  // empty: every token is a target
    int64_t bytes = 0;
};

// Encodes a chunk of documents in parallel; the first error (in document order) is rethrown.
std::vector<encoded> encode_chunk(const tok::tokenizer& t, std::vector<pending>& docs, const tokenize_options& opt,
                                  int32_t bos, int32_t eos) {
    std::vector<encoded> out(docs.size());
    std::vector<std::string> errors(docs.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t i = 0; i < (int64_t)docs.size(); i++) {
        try {
            pending& d = docs[i];
            encoded& e = out[i];
            if (d.chat) {
                tok::chat_encoding c = tok::encode_dsv4_chat(t, d.messages, opt.chat);
                e.ids = std::move(c.ids);
                e.mask = std::move(c.mask);
                e.bytes = (int64_t)c.text.size();
            } else {
                if (opt.add_bos && bos >= 0) e.ids.push_back(bos);
                t.encode(d.text, e.ids, /*add_special_tokens=*/false);
                if (opt.add_eos && eos >= 0) e.ids.push_back(eos);
                e.bytes = (int64_t)d.text.size();
            }
        } catch (const std::exception& ex) {
            errors[i] = fmt::format("{}: {}", docs[i].where, ex.what());
        }
    }
    for (const std::string& e : errors)
        if (!e.empty()) throw error(e);
    return out;
}

nlohmann::ordered_json options_json(const tokenize_options& opt) {
    nlohmann::ordered_json j;
    j["format"] = opt.format;
    j["text_key"] = opt.text_key;
    j["shard_tokens"] = opt.shard_tokens;
    j["add_bos"] = opt.add_bos;
    j["add_eos"] = opt.add_eos;
    j["chat"] = {{"thinking", opt.chat.thinking},
                 {"drop_thinking", opt.chat.drop_thinking},
                 {"add_bos", opt.chat.add_bos},
                 {"train_last_only", opt.chat.train_last_only}};
    return j;
}

std::string hex64(uint64_t h) { return fmt::format("{:016x}", h); }

}  // namespace

nlohmann::ordered_json tokenize_summary::to_json() const {
    nlohmann::ordered_json j;
    j["files"] = files;
    j["documents"] = documents;
    j["skipped_empty"] = skipped_empty;
    j["tokens"] = tokens;
    j["target_tokens"] = target_tokens;
    j["bytes"] = bytes;
    j["vocab_size"] = vocab_size;
    j["shards"] = shards;
    j["seconds"] = seconds;
    return j;
}

std::string tokenize_fingerprint(const tokenize_options& opt) {
    int64_t skipped = 0;
    nlohmann::ordered_json j;
    for (const input_file& f : expand_inputs(opt, &skipped)) {
        std::error_code ec;
        const auto mtime = fs::last_write_time(f.path, ec).time_since_epoch().count();
        j["inputs"].push_back({f.path, f.format, (int64_t)fs::file_size(f.path, ec), (int64_t)mtime});
    }
    const std::string tok_path = opt.tokenizer.empty() ? tok::default_tokenizer_path() : opt.tokenizer;
    j["tokenizer"] = file_xxh64(tok_path);
    j["options"] = options_json(opt);
    const std::string s = j.dump();
    return hex64(XXH64(s.data(), s.size(), 0));
}

tokenize_summary tokenize_to_shards(const tokenize_options& opt) {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    TREX_CHECK(opt.format == "auto" || opt.format == "text" || opt.format == "jsonl" || opt.format == "messages",
               "data tokenize: --format must be auto, text, jsonl or messages, got '{}'", opt.format);
    TREX_CHECK(!opt.out_dir.empty(), "data tokenize: an output directory is required (--out)");
    TREX_CHECK(opt.shard_tokens > 0, "data tokenize: --shard-tokens must be positive");
    TREX_CHECK(!opt.inputs.empty(), "data tokenize: no inputs");

    const std::string tok_path = opt.tokenizer.empty() ? tok::default_tokenizer_path() : opt.tokenizer;
    const tok::tokenizer t = tok::tokenizer::from_file(tok_path);
    const uint32_t vocab = (uint32_t)t.id_space();
    TREX_CHECK(opt.max_vocab == 0 || vocab <= opt.max_vocab,
               "{}: the tokenizer has {} ids, more than the model's vocabulary of {}", tok_path, vocab, opt.max_vocab);
    const int32_t bos = t.token_to_id(tok::dsv4::bos), eos = t.token_to_id(tok::dsv4::eos);

    tokenize_summary sum;
    sum.vocab_size = vocab;
    int64_t skipped_files = 0;
    const std::vector<input_file> files = expand_inputs(opt, &skipped_files);
    sum.files = (int64_t)files.size();
    int64_t total_bytes = 0;
    for (const input_file& f : files) total_bytes += (int64_t)file_size_or_throw(f.path);

    const fs::path out(opt.out_dir);
    std::error_code ec;
    if (fs::exists(out, ec)) {
        TREX_CHECK(opt.force, "{}: exists (use --force to replace it)", opt.out_dir);
    }
    const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
    fs::create_directories(parent, ec);
    remove_stale_temp_entries(parent.string(), "tokenize");
    staged_dir staged(out.string());
    const fs::path tmp(staged.path());

    shard_writer writer(vocab);
    auto flush = [&] {
        if (writer.docs() == 0) return;
        const std::string name = fmt::format("shard-{:05d}.tshard", sum.shards.size());
        writer.write((tmp / name).string());
        sum.shards.push_back(name);
        writer = shard_writer(vocab);
    };

    progress bar(total_bytes, "B", stderr, 10.0);
    int64_t bytes_read = 0;
    std::vector<pending> chunk;
    int64_t chunk_bytes = 0;
    auto encode_pending = [&] {
        if (chunk.empty()) return;
        std::vector<encoded> enc = encode_chunk(t, chunk, opt, bos, eos);
        for (size_t i = 0; i < enc.size(); i++) {
            encoded& e = enc[i];
            sum.bytes += e.bytes;
            int64_t targets = e.mask.empty() ? (int64_t)e.ids.size() : 0;
            for (uint8_t m : e.mask) targets += m;
            if (e.ids.empty() || targets == 0) {  // nothing to train on: an empty text, or a chat without answers
                sum.skipped_empty++;
                continue;
            }
            if (writer.tokens() > 0 && writer.tokens() + (int64_t)e.ids.size() > opt.shard_tokens) flush();
            writer.add(e.ids, e.mask);
            sum.documents++;
            sum.tokens += (int64_t)e.ids.size();
            sum.target_tokens += targets;
        }
        chunk.clear();
        chunk_bytes = 0;
    };
    for (const input_file& f : files) {
        read_documents(f, opt, [&](pending&& d) {
            chunk_bytes += (int64_t)d.text.size() + 256;
            chunk.push_back(std::move(d));
            if (chunk.size() >= 4096 || chunk_bytes >= (32 << 20)) encode_pending();
        });
        encode_pending();
        bytes_read += (int64_t)file_size_or_throw(f.path);
        if (opt.show_progress) bar.update(bytes_read, fmt::format("{} docs, {} tokens", sum.documents, sum.tokens));
    }
    flush();
    TREX_CHECK(sum.documents > 0, "data tokenize: every document was empty (or a chat without assistant tokens)");
    if (opt.show_progress) bar.finish(fmt::format("{} docs, {} tokens", sum.documents, sum.tokens));
    sum.seconds = std::chrono::duration<double>(clock::now() - t0).count();

    nlohmann::ordered_json m;
    m["format"] = "trex-tokenized/1";
    m["fingerprint"] = tokenize_fingerprint(opt);
    m["tokenizer"] = {{"path", tok_path}, {"xxh64", file_xxh64(tok_path)}, {"vocab_size", vocab}};
    m["options"] = options_json(opt);
    for (const input_file& f : files) m["inputs"].push_back({{"path", f.path}, {"format", f.format}});
    m["skipped_files"] = skipped_files;
    m["summary"] = sum.to_json();
    write_file_atomic((tmp / "manifest.json").string(), m.dump(2) + "\n");
    staged.publish();
    return sum;
}

}  // namespace trex
