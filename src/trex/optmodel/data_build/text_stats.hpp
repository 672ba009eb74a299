// How our questions read next to a real benchmark's: vocabulary and phrase variety (trex data stats --against).
//
// Words are decontamination's (lower-cased alphanumeric runs, words_of); a word with a digit is a number and is
// masked to "#" in n-grams and left out of word types. Our question texts are the problem statements of sft.jsonl:
// the first user message without its last paragraph (the task request render_question appends).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace trex::optmodel {

struct text_profile {
    long texts = 0;
    long words = 0;       // tokens, numbers included
    long word_types = 0;  // distinct words without a digit
    long ngrams = 0;      // number-masked word n-grams over all texts
    long distinct_ngrams = 0;
    double distinct_ratio() const { return ngrams ? (double)distinct_ngrams / (double)ngrams : 0.0; }
};

// The profile of `texts` with n-grams of `n` words.
text_profile profile_texts(const std::vector<std::string>& texts, int n);

// The distinct words (no digit) of `texts`.
std::vector<std::string> word_types(const std::vector<std::string>& texts);

// The problem statement of a question as render_question writes it: the text before its last paragraph.
std::string problem_statement(const std::string& question);

struct against_options {
    int n = 8;                          // n-gram length of the variety measure
    long sample = 0;                    // our DP sample size; 0: the benchmark's size
    std::string representation = "DP";  // which of our questions the sample is drawn from ("" = all)
};

// The report of `build_dir` (its sft.jsonl) against each benchmark file: per file its own profile, our sample's
// profile (sample evenly spaced over our questions of the representation), and the share of its word types that
// none of our questions uses (unseen_word_type_share; unseen_word_token_share counts their occurrences; up to 40
// examples, the most frequent first).
nlohmann::ordered_json stats_against(const std::string& build_dir, const std::vector<std::string>& against,
                                     const against_options& opt);

}  // namespace trex::optmodel
