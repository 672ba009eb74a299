// Metrics and reports: Pass@1, unbiased pass@k (Chen et al. 2021: 1 − C(n−c, k) / C(n, k) per item, averaged),
// per benchmark and averaged over benchmarks (macro) and over all items (micro), per category and difficulty
// where the data has them, the failure taxonomy; per-sample JSONL records; Markdown and HTML reports (inline SVG
// charts, no JavaScript).
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "trex/eval/benchmark.hpp"
#include "trex/eval/judge.hpp"

namespace trex::eval {

struct sample_record {
    std::string id, benchmark, category, difficulty;
    int sample = 0;
    ground_truth truth;
    exec_outcome ex;
    verdict v;
    std::string cache_key;
    std::string artefact_text;  // what extraction found (cut to 4 KiB; the report shows it for failed samples)
};

// An execution outcome as results.jsonl's "exec" object, and back.
ojson exec_to_json(const exec_outcome& x);
exec_outcome exec_from_json(const ojson& e);

ojson sample_to_json(const sample_record& r);
// Throws trex::error on a record that is not one of ours.
sample_record sample_from_json(const ojson& j);

// Unbiased pass@k for one item with n samples of which c are correct (k ≤ n).
double pass_at_k(int n, int c, int k);

struct group_stats {
    long items = 0, samples = 0, correct = 0;
    double pass1 = 0;                            // mean over items of c/n
    std::map<int, double> pass_k;                // k -> mean over items with n >= k
    std::array<long, failure_count> outcomes{};  // samples per failure kind (index 0: correct)
};

struct eval_summary {
    std::vector<int> ks;
    std::map<std::string, group_stats> benchmark;
    std::map<std::string, std::map<std::string, group_stats>> category, difficulty;  // benchmark -> value -> stats
    group_stats micro;                                                               // all items together
    double macro_pass1 = 0;                                                          // mean over benchmarks
    std::map<int, double> macro_pass_k;
};

eval_summary summarize(const std::vector<sample_record>& records, const std::vector<int>& ks);
ojson summary_json(const eval_summary& s);

// run: what to print in the header (backend, prompt, judge, times, isolation, skipped records, ...).
std::string report_markdown(const eval_summary& s, const ojson& run);
// The HTML report also lists every failed sample of `records` (collapsed: outcome, reason, extracted artefact).
std::string report_html(const eval_summary& s, const ojson& run, const std::vector<sample_record>& records = {});

}  // namespace trex::eval
