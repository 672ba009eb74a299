// Fuzz target: the benchmark readers (src/trex/eval/benchmark.hpp): load_benchmark through a scratch file, once per
// bench_format (alternating the sentinel policy and structure judging), split_json_elements on the text, and
// parse_answer on the text read as one JSON value.
//
// Input: a benchmark file (JSON list, JSON object of records, or JSONL). load_benchmark may reject a whole file
// with a trex::error; it must never stop on a bad record, and nothing else may escape (fuzz_support.hpp). Every
// record is either loaded or reported skipped, and every element split_json_elements finds starts on a line of
// the text.
#include <algorithm>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "trex/base/error.hpp"
#include "trex/eval/benchmark.hpp"

namespace {

using namespace trex::eval;

void load_in_every_format(const std::string& path) {
    const bench_format formats[] = {bench_format::automatic, bench_format::en_qa, bench_format::mamo,
                                    bench_format::b4o_feasible, bench_format::b4o_orgeval};
    bool odd = false;
    for (bench_format f : formats) {
        load_options opt;
        opt.format = f;
        opt.sentinel = odd ? sentinel_policy::skip : sentinel_policy::no_solution;
        opt.structure_when_possible = odd;
        odd = !odd;
        load_report rep;
        try {
            const std::vector<eval_item> items = load_benchmark(path, opt, &rep);
            if (rep.loaded != (long)items.size() || rep.loaded + (long)rep.skipped.size() != rep.records)
                trex::fuzz::finding("load_report does not account for every record");
        } catch (const trex::error&) {
        }
    }
}

void split(const std::string& text) {
    std::vector<json_element> els;
    if (!split_json_elements(text, &els)) return;
    const long lines = 1 + std::count(text.begin(), text.end(), '\n');
    for (const json_element& el : els)
        if (el.line < 1 || el.line > lines) trex::fuzz::finding("split_json_elements gave a line outside the text");
}

void answer(const std::string& text) {
    const ojson v = ojson::parse(text, nullptr, /*allow_exceptions=*/false);
    if (v.is_discarded()) return;
    for (sentinel_policy policy : {sentinel_policy::no_solution, sentinel_policy::skip}) {
        load_options opt;
        opt.sentinel = policy;
        ground_truth truth;
        std::string why;
        parse_answer(v, opt, &truth, &why);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    load_in_every_format(trex::fuzz::write_scratch_file("bench.jsonl", data, size));
    split(text);
    answer(text);
    return 0;
}
