#include "trex/recipe/corpus.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/eval/benchmark.hpp"
#include "trex/optmodel/data_build/decontam.hpp"

namespace trex::recipe {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

uint64_t hash_text(const std::string& s) {
    return XXH64(s.data(), s.size(), 0);
}

// Every word n-gram of the benchmarks' questions.
std::unordered_set<uint64_t> benchmark_ngrams(const corpus_options& opt, size_t* questions) {
    std::unordered_set<uint64_t> grams;
    for (const auto& path : opt.against) {
        eval::load_report rep;
        const auto items = eval::load_benchmark(path, eval::load_options{}, &rep);
        for (const auto& it : items) {
            for (uint64_t h : optmodel::word_ngrams(it.question, opt.n)) grams.insert(h);
            (*questions)++;
        }
    }
    return grams;
}

bool overlaps(const std::string& paragraph, const std::unordered_set<uint64_t>& grams, int n) {
    if (grams.empty()) return false;
    for (uint64_t h : optmodel::word_ngrams(paragraph, n))
        if (grams.count(h)) return true;
    return false;
}

// The document without its contaminated paragraphs (blank-line separated).
std::string decontaminate(const std::string& doc, const std::unordered_set<uint64_t>& grams, int n, size_t* dropped) {
    std::string out;
    size_t b = 0;
    while (b < doc.size()) {
        size_t e = doc.find("\n\n", b);
        e = e == std::string::npos ? doc.size() : e + 2;
        const std::string para = doc.substr(b, e - b);
        if (overlaps(para, grams, n))
            (*dropped)++;
        else
            out += para;
        b = e;
    }
    return out;
}

struct source_file {
    std::string path, rel;
    uint64_t order = 0;  // xxHash64 of rel: a fixed shuffle
};

std::vector<source_file> list_sources(const std::vector<std::string>& roots) {
    std::vector<source_file> files;
    for (const auto& root : roots) {
        TREX_CHECK(fs::is_directory(root), "corpus root {}: not a directory", root);
        for (const auto& e : fs::recursive_directory_iterator(root)) {
            if (!e.is_regular_file()) continue;
            const std::string p = e.path().string();
            if (p.size() < 4 || p.compare(p.size() - 4, 4, ".txt") != 0) continue;
            source_file f{p, fs::relative(e.path(), root).string()};
            f.order = hash_text(f.rel);
            files.push_back(f);
        }
    }
    std::sort(files.begin(), files.end(), [](const source_file& a, const source_file& b) {
        return a.order != b.order ? a.order < b.order : a.rel < b.rel;
    });
    return files;
}

}  // namespace

std::vector<std::string> default_corpus_roots() {
    std::vector<std::string> roots;
    const fs::path doc = "/usr/share/doc";
    if (!fs::is_directory(doc)) return roots;
    for (const auto& e : fs::directory_iterator(doc)) {
        const std::string name = e.path().filename().string();
        const fs::path src = e.path() / "html" / "_sources";
        if (name.rfind("python3.", 0) == 0 && fs::is_directory(src)) roots.push_back(src.string());
    }
    std::sort(roots.begin(), roots.end());
    return roots;
}

corpus_stats build_general_corpus(const corpus_options& opt, const std::string& out_dir) {
    TREX_CHECK(!opt.roots.empty(),
               "no general-text corpus on this machine: install python3.11-doc (scripts/setup.sh does) or pass "
               "--corpus DIR");
    corpus_stats st;
    const auto grams = benchmark_ngrams(opt, &st.benchmark_questions);
    const auto files = list_sources(opt.roots);
    staged_dir stage(out_dir);
    std::ofstream train(stage.path() + "/train.jsonl", std::ios::binary);
    std::ofstream heldout(stage.path() + "/heldout.txt", std::ios::binary);
    const uint64_t heldout_cut = (uint64_t)(opt.heldout_share * 1000.0);
    // caps: max_bytes of training text, and the held-out share of it for the held-out file
    const size_t train_cap = opt.max_bytes > 0 ? (size_t)opt.max_bytes : SIZE_MAX;
    const size_t heldout_cap =
        opt.max_bytes > 0 ? (size_t)((double)opt.max_bytes * opt.heldout_share / (1.0 - opt.heldout_share)) : SIZE_MAX;
    for (const auto& f : files) {
        const bool to_heldout = (f.order >> 8) % 1000 < heldout_cut;
        if (to_heldout ? st.heldout_bytes >= heldout_cap : st.train_bytes >= train_cap) continue;
        if (st.train_bytes >= train_cap && st.heldout_bytes >= heldout_cap) break;
        st.files++;
        const std::string text = decontaminate(read_file(f.path), grams, opt.n, &st.paragraphs_dropped);
        if (text.find_first_not_of(" \n\t") == std::string::npos) continue;
        if (to_heldout) {
            heldout << text << "\n\n";
            st.heldout_docs++;
            st.heldout_bytes += text.size();
        } else {
            train << ojson{{"text", text}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
            st.train_docs++;
            st.train_bytes += text.size();
        }
    }
    train.close();
    heldout.close();
    TREX_CHECK(train.good() && heldout.good(), "{}: cannot write the corpus", out_dir);
    TREX_CHECK(st.train_docs > 0 && st.heldout_docs > 0,
               "{}: the corpus roots gave {} training and {} held-out documents", out_dir, st.train_docs,
               st.heldout_docs);
    ojson m = {{"roots", opt.roots},
               {"files_read", st.files},
               {"train", {{"documents", st.train_docs}, {"bytes", st.train_bytes}}},
               {"heldout", {{"documents", st.heldout_docs}, {"bytes", st.heldout_bytes}}},
               {"decontamination",
                {{"n", opt.n},
                 {"against", opt.against},
                 {"benchmark_questions", st.benchmark_questions},
                 {"paragraphs_dropped", st.paragraphs_dropped}}}};
    write_file_atomic(stage.path() + "/manifest.json", m.dump(2) + "\n");
    stage.publish();
    return st;
}

}  // namespace trex::recipe
