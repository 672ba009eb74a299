#include "trex/optmodel/data_build/decontam.hpp"

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "trex/base/error.hpp"
#include "trex/base/json_text.hpp"
#include "trex/base/rng.hpp"

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace trex::optmodel {

std::vector<std::string> words_of(const std::string& text) {
    std::vector<std::string> out;
    std::string w;
    for (char ch : text) {
        const unsigned char c = (unsigned char)ch;
        if (std::isalnum(c)) {
            w += (char)std::tolower(c);
        } else if (!w.empty()) {
            out.push_back(w);
            w.clear();
        }
    }
    if (!w.empty()) out.push_back(w);
    return out;
}

namespace {

// The hash of the n words starting at words[i].
uint64_t ngram_hash(const std::vector<std::string>& words, size_t i, int n) {
    uint64_t h = 0x1234;
    for (int k = 0; k < n; k++) h = mix64(h ^ hash_name(words[i + (size_t)k]));
    return h;
}

}  // namespace

std::vector<uint64_t> word_ngrams(const std::string& text, int n) {
    std::vector<uint64_t> out;
    if (n < 1) return out;
    const std::vector<std::string> w = words_of(text);
    for (size_t i = 0; i + (size_t)n <= w.size(); i++) out.push_back(ngram_hash(w, i, n));
    return out;
}

std::string ngram_text(const std::string& text, int n, uint64_t hash) {
    if (n < 1) return "";
    const std::vector<std::string> w = words_of(text);
    for (size_t i = 0; i + (size_t)n <= w.size(); i++) {
        if (ngram_hash(w, i, n) != hash) continue;
        std::string s;
        for (int k = 0; k < n; k++) s += (k ? " " : "") + w[i + (size_t)k];
        return s;
    }
    return "";
}

namespace {

void collect_strings(const ojson& j, std::vector<std::string>& out) {
    if (j.is_string()) {
        if (words_of(j.get<std::string>()).size() >= 20) out.push_back(j.get<std::string>());
    } else if (j.is_array() || j.is_object()) {
        for (const auto& v : j) collect_strings(v, out);
    }
}

// Question texts of one benchmark item.
std::vector<std::string> item_texts(const ojson& item) {
    for (const char* key : {"en_question", "question", "Question", "problem", "prompt"})
        if (item.is_object() && item.contains(key) && item[key].is_string()) return {item[key].get<std::string>()};
    std::vector<std::string> out;
    collect_strings(item, out);
    return out;
}

std::vector<ojson> read_items(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    TREX_CHECK(in.good(), "{}: cannot read benchmark file", path);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    std::vector<ojson> items;
    try {
        ojson j = ojson::parse(text);
        if (j.is_array()) {
            for (auto& v : j) items.push_back(v);
        } else {
            items.push_back(j);
        }
        return items;
    } catch (const std::exception&) {
    }
    std::istringstream ls(text);
    std::string line;
    int no = 0;
    while (std::getline(ls, line)) {
        no++;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        try {
            items.push_back(ojson::parse(line));
        } catch (const std::exception&) {
            throw_error(fmt::format("{}: line {}: neither a JSON document nor JSON lines", path, no));
        }
    }
    return items;
}

}  // namespace

std::vector<std::vector<std::string>> benchmark_texts(const std::string& path) {
    std::vector<std::vector<std::string>> out;
    for (const auto& item : read_items(path)) out.push_back(item_texts(item));
    return out;
}

namespace {

// Our sample's question: the first user message, else en_question.
std::string our_question(const ojson& rec) {
    if (rec.contains("messages"))
        for (const auto& m : rec["messages"])
            if (m.value("role", "") == "user") return m.value("content", "");
    return rec.value("en_question", "");
}

// A CPT index record's document file (its "path" is relative to the index).
fs::path doc_path(const std::string& index_path, const ojson& rec) {
    return fs::path(index_path).parent_path() / rec.value("path", "");
}

// The text of one record of our data: a CPT index record's document, else the question.
std::string our_text(const ojson& rec, const std::string& file, long line_no) {
    if (!rec.contains("path")) return our_question(rec);
    const fs::path doc = doc_path(file, rec);
    std::ifstream in(doc, std::ios::binary);
    TREX_CHECK(in.good(), "{}: line {}: cannot read the document {}", file, line_no, doc.string());
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

ojson decontaminate(const std::string& data, const std::vector<std::string>& against, const decontam_options& opt) {
    TREX_CHECK(opt.n >= 3 && opt.n <= 50, "--n must be in 3..50 (got {})", opt.n);
    // benchmark n-grams -> (file, item index)
    std::unordered_map<uint64_t, std::pair<int, long>> bench;
    ojson files = ojson::array();
    for (size_t f = 0; f < against.size(); f++) {
        const std::vector<std::vector<std::string>> items = benchmark_texts(against[f]);
        long ntext = 0;
        for (size_t i = 0; i < items.size(); i++)
            for (const auto& t : items[i]) {
                ntext++;
                for (uint64_t h : word_ngrams(t, opt.n)) bench.emplace(h, std::make_pair((int)f, (long)i));
            }
        files.push_back({{"file", against[f]}, {"items", items.size()}, {"texts", ntext}});
    }
    std::vector<std::string> ours;
    std::error_code ec;
    if (fs::is_directory(data, ec)) {
        ours.push_back((fs::path(data) / "sft.jsonl").string());
        for (const char* t : {"dp", "dt", "dps"})
            if (fs::exists(fs::path(data) / "test" / (std::string(t) + ".jsonl"), ec))
                ours.push_back((fs::path(data) / "test" / (std::string(t) + ".jsonl")).string());
        if (fs::exists(fs::path(data) / "cpt" / "index.jsonl", ec))
            ours.push_back((fs::path(data) / "cpt" / "index.jsonl").string());
    } else {
        ours.push_back(data);
    }
    ojson report = {{"n", opt.n}, {"benchmarks", files}};
    ojson per_file = ojson::array();
    long total = 0, hits = 0;
    for (const auto& path : ours) {
        std::string kept;
        std::vector<fs::path> dropped_docs;
        ojson overlaps = ojson::array();
        long n = 0;
        for_each_jsonl(path, [&](long no, const std::string& line, ojson& rec) {
            n++;
            const std::string q = our_text(rec, path, no);
            bool hit = false;
            for (uint64_t h : word_ngrams(q, opt.n)) {
                auto it = bench.find(h);
                if (it == bench.end()) continue;
                overlaps.push_back({{"id", rec.value("id", std::to_string(no))},
                                    {"benchmark", against[(size_t)it->second.first]},
                                    {"item", it->second.second},
                                    {"ngram", ngram_text(q, opt.n, h)}});
                hit = true;
                break;
            }
            if (!hit)
                kept += line + "\n";
            else if (opt.drop && rec.contains("path"))
                dropped_docs.push_back(doc_path(path, rec));
            return true;
        });
        total += n;
        hits += (long)overlaps.size();
        ojson r = {{"file", path}, {"items", n}, {"overlapping", overlaps.size()}, {"overlaps", overlaps}};
        if (opt.drop && !overlaps.empty()) {
            const std::string tmp = path + ".tmp-" + std::to_string(getpid());
            {
                std::ofstream out(tmp, std::ios::binary);
                out << kept;
                out.close();
                if (!out.good()) {
                    fs::remove(tmp, ec);
                    throw_error(fmt::format("{}: cannot write", tmp));
                }
            }
            fs::rename(tmp, path, ec);
            if (ec) {
                fs::remove(tmp, ec);
                throw_error(fmt::format("{}: cannot replace: {}", path, ec.message()));
            }
            for (const auto& doc : dropped_docs) fs::remove(doc, ec);  // after the index no longer names them
            r["dropped"] = overlaps.size();
        }
        per_file.push_back(r);
    }
    report["files"] = per_file;
    report["items"] = total;
    report["overlapping"] = hits;
    return report;
}

}  // namespace trex::optmodel
