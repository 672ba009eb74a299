// N-gram decontamination: word n-grams (lower-cased alphanumeric tokens) of our samples' questions against texts
// taken from benchmark files (JSON list or JSONL; the question-like fields en_question, question, Question,
// problem, prompt, or every string of 20+ words when none is present).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace trex::optmodel {

struct decontam_options {
    int n = 13;
    bool drop = false;  // rewrite sft.jsonl without the overlapping samples (atomically)
};

// `data` is a build directory (its sft.jsonl and test/*.jsonl are checked) or one JSONL file. Returns the report
// (counts, overlapping ids with the benchmark file and a matching n-gram) as JSON.
nlohmann::ordered_json decontaminate(const std::string& data, const std::vector<std::string>& against,
                                     const decontam_options& opt);

// Lower-cased alphanumeric words.
std::vector<std::string> words_of(const std::string& text);

}  // namespace trex::optmodel
