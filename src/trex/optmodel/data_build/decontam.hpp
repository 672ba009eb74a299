// N-gram decontamination: word n-grams (lower-cased alphanumeric tokens) of our samples' questions against texts
// taken from benchmark files (JSON list or JSONL; the question-like fields en_question, question, Question,
// problem, prompt, or every string of 20+ words when none is present).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace trex::optmodel {

struct decontam_options {
    int n = 13;
    bool drop = false;  // rewrite sft.jsonl without the overlapping samples (atomically)
};

// `data` is a build directory (its sft.jsonl, test/*.jsonl and the CPT documents of cpt/index.jsonl are checked; with
// `drop`, an overlapping CPT document leaves the index and the disk) or one JSONL file. Returns the report
// (counts, overlapping ids with the benchmark file and a matching n-gram) as JSON.
nlohmann::ordered_json decontaminate(const std::string& data, const std::vector<std::string>& against,
                                     const decontam_options& opt);

// The question texts of a benchmark file (JSON list, JSON document or JSONL), item by item (see the header comment
// for the fields read); throws naming the file and line when it is neither.
std::vector<std::vector<std::string>> benchmark_texts(const std::string& path);

// Lower-cased alphanumeric words.
std::vector<std::string> words_of(const std::string& text);

// The hash of every run of n consecutive words of words_of(text), in text order: what decontamination (here and in
// the recipe's general-text corpus) compares. Empty when the text has fewer than n words or n < 1. Equal runs of
// words hash equally; the hash (mix64 chained over each word's hash_name, from 0x1234) is kept as it is, so that
// decontamination reports stay the same across versions.
std::vector<uint64_t> word_ngrams(const std::string& text, int n);

// The words (joined by one space) of the first run of n words of `text` whose word_ngrams hash is `hash`; "" when
// there is none.
std::string ngram_text(const std::string& text, int n, uint64_t hash);

}  // namespace trex::optmodel
