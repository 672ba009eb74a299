// Benchmark readers: the public OR benchmark formats (docs/eval.md §1) and our held-out sets, read into one item
// type. A malformed record is reported with its file and line number and skipped; it never stops the run.
//
//   {en_question, en_answer}            NL4OPT, OptiBench, IndustryOR, OptMATH-Bench (JSON list or JSONL)
//   {Question, Answer, Category, Type}  MAMO EasyLP / ComplexLP
//   {problem, data_path, optimal_value} Bench4Opt-Feasible (data_path: the JSON the model's code reads as data.json)
//   {problem, reference_lp_path}        Bench4Opt-ORGEval (judged by LP-structure equivalence)
//   {en_question, en_answer, data_path?, reference_lp_path, family, ...}   `trex data build`'s test/*.jsonl
//   {question, results: {label: value, ...}, type}   ReSocratic / E-OPT (the first OptiBench release): the truth is
//                                       the last label's value (their programs print the objective last)
//   {question, answer | optimal_value}  generic question/answer records
// A `.parquet` file (the T-Rex repository's NL4OPT test.parquet) is read through pyarrow in the project's Python
// (a maintained reader; Debian 12 packages no Arrow C++), its rows then taken as the records above.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace trex::eval {

using ojson = nlohmann::ordered_json;

// What an answer is judged against.
enum class truth_kind {
    objective,    // an optimal objective value
    no_solution,  // "No Best Solution" / infeasible / unbounded: the answer must report that no optimum exists
    structure,    // a reference LP file: the answer's model must be structurally equivalent (ORGEval)
    unknown,      // not judgeable (skipped items only)
};
const char* truth_kind_name(truth_kind k);  // "objective", "no_solution", "structure", "unknown"

struct ground_truth {
    truth_kind kind = truth_kind::unknown;
    double value = 0.0;  // kind == objective
    std::string raw;     // the label as written in the file
};

enum class bench_format { automatic, en_qa, mamo, b4o_feasible, b4o_orgeval, resocratic };
// "auto", "en_qa", "mamo", "b4o_feasible", "b4o_orgeval", "resocratic"
const char* bench_format_name(bench_format f);
bool parse_bench_format(const std::string& s, bench_format* f);

struct eval_item {
    std::string id;         // from the record ("id"), else "<benchmark>-<n>" (n: 1-based record number)
    std::string benchmark;  // the benchmark's name (file stem unless given)
    std::string question;
    ground_truth truth;
    std::string category;           // Category / type / wp_type / family, when the data has one
    std::string difficulty;         // difficulty / level, when the data has one
    std::string data_path;          // absolute path of the data file the model's code reads as data.json ("": none)
    std::string reference_lp_path;  // absolute path of the reference LP ("": none)
    std::string source;             // "file:line" of the record
};

// How sentinel answers (IndustryOR's -99999: no answer exists) are read.
enum class sentinel_policy { no_solution, skip };

struct load_options {
    bench_format format = bench_format::automatic;
    std::string name;  // benchmark name ("" = file stem)
    sentinel_policy sentinel = sentinel_policy::no_solution;
    std::vector<double> sentinels = {-99999.0};
    bool structure_when_possible = false;  // judge items that have a reference LP by structure (not objective)
    std::string python;                    // reads Parquet files ("" = the project venv's, TREX_PYTHON)
};

struct load_report {
    long records = 0;  // records seen
    long loaded = 0;   // items returned
    std::vector<std::string> skipped;  // one line per skipped (unscorable) record: "file:line: why"
};

// The rows of a Parquet file as JSONL text (one JSON object per row), through pyarrow in `python`. Throws
// trex::error naming the file when it cannot be read (no pyarrow, not Parquet).
std::string parquet_as_jsonl(const std::string& path, const std::string& python);

// Reads a JSON list, a JSON object of records, or JSONL. Throws trex::error only when the file cannot be read at
// all (missing, not JSON of any of these shapes); every bad record is skipped and described in report->skipped.
std::vector<eval_item> load_benchmark(const std::string& path, const load_options& opt, load_report* report);

// One answer label: a number, a numeric string ("1,234.5", "$300", "4.2e3", "12 units"), "No Best Solution" and
// its spellings (infeasible, unbounded, no solution, none). Returns false (with *why) when the label is unusable.
// Sentinels become no_solution (policy no_solution) or make the function return false with why "sentinel"
// (policy skip).
bool parse_answer(const ojson& v, const load_options& opt, ground_truth* out, std::string* why);

// Top-level elements of a JSON array or object in `text` with the 1-based line each starts on (the text need not
// be valid JSON as a whole: one broken element does not hide the others). Returns false when text does not start
// with '[' or '{', or when the text ends inside a string or before the array or object is closed (`why` then says
// which, as "LINE: what"). Exposed for tests.
struct json_element {
    std::string key;  // for objects
    std::string text;
    int line = 0;
};
bool split_json_elements(const std::string& text, std::vector<json_element>* out, std::string* why = nullptr);

}  // namespace trex::eval
