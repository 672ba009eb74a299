// The general-text corpus of the recipe's base model: documentation that Debian packages install (the Python
// reference's reStructuredText sources from python3.11-doc, GLPK's and COIN-OR's are OR resources and go to CPT
// instead), shuffled by path hash, capped, split into train and held-out documents, and decontaminated against the
// benchmarks: a paragraph sharing any word 13-gram with a benchmark question is dropped.
//
// Output directory (published whole):
//   train.jsonl    {"text": ...} per document   (trex train `jsonl` source, the tokenizer's training text)
//   heldout.txt    the held-out documents, blank-line separated (trex score: general-text perplexity)
//   manifest.json  sources, counts, bytes, dropped paragraphs with the benchmark files they matched
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace trex::recipe {

struct corpus_options {
    std::vector<std::string> roots;    // directories walked for *.txt / *.rst.txt files (sorted, then shuffled)
    long max_bytes = 0;                // training bytes kept (0 = all)
    double heldout_share = 0.05;       // documents chosen by path hash for the held-out file
    std::vector<std::string> against;  // benchmark files (any format trex eval reads)
    int n = 13;                        // n-gram length of the decontamination
};

struct corpus_stats {
    size_t files = 0, train_docs = 0, heldout_docs = 0;
    size_t train_bytes = 0, heldout_bytes = 0;
    size_t paragraphs_dropped = 0, benchmark_questions = 0;
};

// The Debian documentation roots present on this machine (python3.x-doc's _sources); empty when none is installed.
std::vector<std::string> default_corpus_roots();

// Builds the corpus into out_dir (replaced atomically). Throws trex::error naming the culprit (no root, an
// unreadable benchmark file, an empty result).
corpus_stats build_general_corpus(const corpus_options& opt, const std::string& out_dir);

}  // namespace trex::recipe
