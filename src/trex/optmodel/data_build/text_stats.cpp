#include "trex/optmodel/data_build/text_stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unordered_set>

#include "trex/base/error.hpp"
#include "trex/base/json_text.hpp"
#include "trex/base/rng.hpp"
#include "trex/optmodel/data_build/decontam.hpp"

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace trex::optmodel {

namespace {

bool has_digit(const std::string& w) {
    return std::any_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The hash of words[i, i+n) with numbers masked.
uint64_t masked_ngram(const std::vector<std::string>& words, size_t i, int n) {
    uint64_t h = 0x5eed;
    for (int k = 0; k < n; k++) {
        const std::string& w = words[i + (size_t)k];
        h = mix64(h ^ hash_name(has_digit(w) ? "#" : w));
    }
    return h;
}

struct our_questions {
    std::vector<std::string> all;     // whole first user messages
    std::vector<std::string> sample;  // problem statements of the chosen representation
};

our_questions read_ours(const std::string& build_dir, const std::string& rep) {
    const std::string path = (fs::path(build_dir) / "sft.jsonl").string();
    our_questions q;
    for_each_jsonl(
        path,
        [&](long no, const std::string&, ojson& rec) {
            TREX_CHECK(rec.contains("messages") && rec["messages"].is_array() && !rec["messages"].empty() &&
                           rec["messages"][0].value("content", ojson()).is_string(),
                       "{}: line {}: no user message", path, no);
            const std::string text = rec["messages"][0]["content"].get<std::string>();
            q.all.push_back(text);
            const std::string r = rec.contains("meta") ? rec["meta"].value("representation", "") : "";
            if (rep.empty() || r == rep) q.sample.push_back(problem_statement(text));
            return true;
        },
        " (not a trex data build directory?)");
    TREX_CHECK(!q.all.empty(), "{}: no samples", path);
    return q;
}

// n texts evenly spaced over v (all of v when n >= its size).
std::vector<std::string> spaced(const std::vector<std::string>& v, long n) {
    if (n <= 0 || n >= (long)v.size()) return v;
    std::vector<std::string> out;
    for (long k = 0; k < n; k++) out.push_back(v[(size_t)(k * (long)v.size() / n)]);
    return out;
}

ojson profile_json(const text_profile& p) {
    return {{"texts", p.texts},
            {"words", p.words},
            {"word_types", p.word_types},
            {"ngrams", p.ngrams},
            {"distinct_ngrams", p.distinct_ngrams},
            {"distinct_ngram_ratio", p.distinct_ratio()}};
}

}  // namespace

text_profile profile_texts(const std::vector<std::string>& texts, int n) {
    TREX_CHECK(n >= 1 && n <= 50, "n-gram length must be in 1..50 (got {})", n);
    text_profile p;
    std::unordered_set<std::string> types;
    std::unordered_set<uint64_t> grams;
    for (const auto& t : texts) {
        const std::vector<std::string> w = words_of(t);
        p.texts++;
        p.words += (long)w.size();
        for (const auto& x : w)
            if (!has_digit(x)) types.insert(x);
        for (size_t i = 0; i + (size_t)n <= w.size(); i++) {
            grams.insert(masked_ngram(w, i, n));
            p.ngrams++;
        }
    }
    p.word_types = (long)types.size();
    p.distinct_ngrams = (long)grams.size();
    return p;
}

std::vector<std::string> word_types(const std::vector<std::string>& texts) {
    std::set<std::string> types;
    for (const auto& t : texts)
        for (const auto& w : words_of(t))
            if (!has_digit(w)) types.insert(w);
    return {types.begin(), types.end()};
}

std::string problem_statement(const std::string& question) {
    std::string q = question;
    while (!q.empty() && (q.back() == '\n' || q.back() == ' ')) q.pop_back();
    const size_t cut = q.rfind("\n\n");
    return cut == std::string::npos ? q : q.substr(0, cut);
}

ojson stats_against(const std::string& build_dir, const std::vector<std::string>& against, const against_options& opt) {
    TREX_CHECK(!against.empty(), "--against needs at least one benchmark file");
    TREX_CHECK(opt.sample >= 0, "--sample must be >= 0 (got {})", opt.sample);
    const our_questions ours = read_ours(build_dir, opt.representation);
    TREX_CHECK(!ours.sample.empty(), "{}: no {} questions in sft.jsonl", build_dir, opt.representation);
    const std::vector<std::string> our_types = word_types(ours.all);
    const std::unordered_set<std::string> known(our_types.begin(), our_types.end());
    ojson report = {{"build", build_dir},
                    {"n", opt.n},
                    {"ours", {{"questions", ours.all.size()}, {"word_types", our_types.size()}}}};
    ojson files = ojson::array();
    for (const auto& path : against) {
        std::vector<std::string> texts;
        for (const auto& item : benchmark_texts(path))
            for (const auto& t : item) texts.push_back(t);
        TREX_CHECK(!texts.empty(), "{}: no question texts found", path);
        const text_profile bench = profile_texts(texts, opt.n);
        const long n = opt.sample > 0 ? opt.sample : (long)texts.size();
        const text_profile mine = profile_texts(spaced(ours.sample, n), opt.n);
        std::map<std::string, long> freq;  // unseen word -> occurrences in the benchmark
        long tokens = 0, unseen_tokens = 0;
        for (const auto& t : texts)
            for (const auto& w : words_of(t)) {
                if (has_digit(w)) continue;
                tokens++;
                if (known.count(w)) continue;
                freq[w]++;
                unseen_tokens++;
            }
        const long types_total = bench.word_types;
        std::vector<std::pair<std::string, long>> unseen(freq.begin(), freq.end());
        std::stable_sort(unseen.begin(), unseen.end(), [](auto& a, auto& b) { return a.second > b.second; });
        ojson examples = ojson::array();
        for (size_t k = 0; k < unseen.size() && k < 40; k++) examples.push_back(unseen[k].first);
        files.push_back({{"file", path},
                         {"benchmark", profile_json(bench)},
                         {"our_sample", profile_json(mine)},
                         {"our_sample_representation", opt.representation.empty() ? "all" : opt.representation},
                         {"unseen_word_types", unseen.size()},
                         {"unseen_word_type_share", types_total ? (double)unseen.size() / (double)types_total : 0.0},
                         {"unseen_word_token_share", tokens ? (double)unseen_tokens / (double)tokens : 0.0},
                         {"unseen_examples", examples}});
    }
    report["against"] = files;
    return report;
}

}  // namespace trex::optmodel
