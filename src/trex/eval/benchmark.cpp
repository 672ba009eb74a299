#include "trex/eval/benchmark.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/base/process.hpp"
#include "trex/base/strings.hpp"
#include "trex/optmodel/solvers/python_runner.hpp"

namespace trex::eval {

namespace fs = std::filesystem;

const char* truth_kind_name(truth_kind k) {
    switch (k) {
        case truth_kind::objective:
            return "objective";
        case truth_kind::no_solution:
            return "no_solution";
        case truth_kind::structure:
            return "structure";
        case truth_kind::unknown:
            return "unknown";
    }
    return "?";
}

const char* bench_format_name(bench_format f) {
    switch (f) {
        case bench_format::automatic:
            return "auto";
        case bench_format::en_qa:
            return "en_qa";
        case bench_format::mamo:
            return "mamo";
        case bench_format::b4o_feasible:
            return "b4o_feasible";
        case bench_format::b4o_orgeval:
            return "b4o_orgeval";
        case bench_format::resocratic:
            return "resocratic";
    }
    return "?";
}

bool parse_bench_format(const std::string& s, bench_format* f) {
    for (bench_format x : {bench_format::automatic, bench_format::en_qa, bench_format::mamo, bench_format::b4o_feasible,
                           bench_format::b4o_orgeval, bench_format::resocratic})
        if (s == bench_format_name(x)) {
            *f = x;
            return true;
        }
    return false;
}

namespace {

// Replaces UTF-8 minus signs and non-breaking spaces by their ASCII forms.
std::string ascii_number_text(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); i++) {
        const unsigned char c = (unsigned char)s[i];
        if (c == 0xE2 && i + 2 < s.size() && (unsigned char)s[i + 1] == 0x88 && (unsigned char)s[i + 2] == 0x92) {
            out += '-';  // U+2212
            i += 2;
        } else if (c == 0xC2 && i + 1 < s.size() && (unsigned char)s[i + 1] == 0xA0) {
            i += 1;  // U+00A0
        } else {
            out += (char)c;
        }
    }
    return out;
}

bool is_no_solution_text(const std::string& l) {
    static const char* words[] = {
        "no best solution",     "no solution",  "no optimal solution",    "infeasible", "unbounded", "none", "null",
        "no feasible solution", "not feasible", "infeasible or unbounded"};
    for (const char* w : words)
        if (l == w) return true;
    return false;
}

}  // namespace

bool parse_answer(const ojson& v, const load_options& opt, ground_truth* out, std::string* why) {
    ground_truth t;
    double x = 0;
    bool numeric = false;
    if (v.is_number()) {
        x = v.get<double>();
        t.raw = v.dump();
        numeric = true;
    } else if (v.is_string()) {
        t.raw = v.get<std::string>();
        std::string s = trim(ascii_number_text(t.raw));
        const std::string l = ascii_lower(s);
        if (is_no_solution_text(l)) {
            t.kind = truth_kind::no_solution;
            *out = t;
            return true;
        }
        // strip currency signs, thousands separators and spaces; keep the leading number; allow a unit after it
        std::string n;
        for (char c : s)
            if (c != ',' && c != '$' && c != ' ' && c != '\t') n += c;
        const char* p = n.c_str();
        char* end = nullptr;
        x = std::strtod(p, &end);
        if (end == p) {
            *why = fmt::format("answer {} is not a number nor a no-solution label", v.dump());
            return false;
        }
        for (const char* q = end; *q; q++)
            if (std::isdigit((unsigned char)*q)) {
                *why = fmt::format("answer {} has more than one number", v.dump());
                return false;
            }
        numeric = true;
    } else if (v.is_null()) {
        *why = "answer is null";
        return false;
    } else {
        *why = fmt::format("answer {} is neither a number nor a string", v.dump().substr(0, 60));
        return false;
    }
    if (numeric) {
        if (!std::isfinite(x)) {
            *why = fmt::format("answer {} is not finite", t.raw);
            return false;
        }
        for (double s : opt.sentinels)
            if (x == s) {
                if (opt.sentinel == sentinel_policy::skip) {
                    *why = fmt::format("sentinel answer {} (no ground truth; --sentinel skip)", t.raw);
                    return false;
                }
                t.kind = truth_kind::no_solution;
                *out = t;
                return true;
            }
        t.kind = truth_kind::objective;
        t.value = x;
    }
    *out = t;
    return true;
}

bool split_json_elements(const std::string& text, std::vector<json_element>* out, std::string* why) {
    auto fail = [why](std::string msg) {
        if (why) *why = std::move(msg);
        return false;
    };
    size_t i = 0;
    int line = 1;
    auto skip_ws = [&] {
        while (i < text.size() && std::isspace((unsigned char)text[i])) {
            if (text[i] == '\n') line++;
            i++;
        }
    };
    // a UTF-8 byte-order mark
    if (text.size() >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
        (unsigned char)text[2] == 0xBF)
        i = 3;
    skip_ws();
    if (i >= text.size() || (text[i] != '[' && text[i] != '{'))
        return fail(fmt::format("{}: expected a JSON list, a JSON object of records, or JSONL", line));
    const bool object = text[i] == '{';
    const int open_line = line;
    i++;
    bool closed = false;
    // Scans one value (or key) from i, tracking nesting and strings; stops at a top-level ',' or the closer.
    while (true) {
        skip_ws();
        if (i >= text.size()) break;
        if (text[i] == (object ? '}' : ']')) {
            closed = true;
            break;
        }
        json_element el;
        if (object) {  // "key" :
            if (text[i] != '"') {
                // unreadable key: skip to the next top-level comma
            } else {
                size_t k = i + 1;
                std::string key;
                const int key_line = line;
                while (k < text.size() && text[k] != '"') {
                    if (text[k] == '\\' && k + 1 < text.size()) k++;
                    if (text[k] == '\n') line++;
                    key += text[k++];
                }
                if (k >= text.size()) return fail(fmt::format("{}: the text ends inside a key", key_line));
                el.key = key;
                i = k + 1;
                skip_ws();
                if (i < text.size() && text[i] == ':') i++;
                skip_ws();
            }
        }
        el.line = line;
        const size_t b = i;
        int depth = 0;
        bool in_str = false;
        while (i < text.size()) {
            const char c = text[i];
            if (c == '\n') line++;
            if (in_str) {
                if (c == '\\') {
                    i += 2;
                    continue;
                }
                if (c == '"') in_str = false;
                i++;
                continue;
            }
            if (c == '"')
                in_str = true;
            else if (c == '{' || c == '[')
                depth++;
            else if (c == '}' || c == ']') {
                if (depth == 0) break;
                depth--;
            } else if (c == ',' && depth == 0) {
                break;
            }
            i++;
        }
        i = std::min(i, text.size());  // an escape at the very end
        if (in_str) return fail(fmt::format("{}: the text ends inside a string", el.line));
        if (i == b && i < text.size() && text[i] != ',')  // a closer that closes nothing here, e.g. the '}' of [1}]
            return fail(fmt::format("{}: unexpected '{}'", line, text[i]));
        el.text = text.substr(b, i - b);
        out->push_back(std::move(el));
        if (i < text.size() && text[i] == ',') i++;
    }
    if (!closed)
        return fail(fmt::format("{}: the JSON {} opened on line {} is not closed", line, object ? "object" : "list",
                                open_line));
    return true;
}

namespace {

const ojson* field(const ojson& r, std::initializer_list<const char*> names) {
    for (const char* n : names) {
        auto it = r.find(n);
        if (it != r.end() && !it->is_null()) return &*it;
    }
    return nullptr;
}

std::string scalar_text(const ojson& v) {
    if (v.is_string()) return v.get<std::string>();
    return v.dump();
}

bench_format detect(const ojson& r) {
    if (r.contains("en_question") || r.contains("en_answer")) return bench_format::en_qa;
    if (r.contains("Question") || r.contains("Answer")) return bench_format::mamo;
    if (r.contains("problem")) {
        if (r.contains("optimal_value")) return bench_format::b4o_feasible;
        if (r.contains("reference_lp_path")) return bench_format::b4o_orgeval;
        return bench_format::b4o_feasible;
    }
    if (r.contains("question") && r.contains("results")) return bench_format::resocratic;
    if (r.contains("question") && (r.contains("answer") || r.contains("optimal_value"))) return bench_format::en_qa;
    return bench_format::automatic;
}

// ReSocratic's `results` {label: value, ...}: the last value (their programs print the objective last); null when
// there is none.
const ojson* last_result(const ojson& r) {
    auto it = r.find("results");
    if (it == r.end() || !it->is_object() || it->empty()) return nullptr;
    const ojson* last = nullptr;
    for (const auto& [k, v] : it->items()) last = &v;
    return last;
}

// Reads one record into an item; returns false with *why.
bool read_record(const ojson& r, const std::string& base_dir, const load_options& opt, long n, eval_item* it,
                 std::string* why) {
    if (!r.is_object()) {
        *why = "record is not a JSON object";
        return false;
    }
    bench_format f = opt.format == bench_format::automatic ? detect(r) : opt.format;
    const ojson* q = nullptr;
    const ojson* a = nullptr;
    switch (f) {
        case bench_format::en_qa:
            q = field(r, {"en_question", "question"});
            a = field(r, {"en_answer", "answer", "optimal_value"});
            break;
        case bench_format::resocratic:
            q = field(r, {"question"});
            a = last_result(r);
            break;
        case bench_format::mamo:
            q = field(r, {"Question", "question"});
            a = field(r, {"Answer", "answer"});
            break;
        case bench_format::b4o_feasible:
            q = field(r, {"problem", "question"});
            a = field(r, {"optimal_value", "answer"});
            break;
        case bench_format::b4o_orgeval:
            q = field(r, {"problem", "question"});
            break;
        case bench_format::automatic:
            *why = "unknown record shape (no en_question, Question, problem or question field)";
            return false;
    }
    if (!q || !q->is_string() || trim(q->get<std::string>()).empty()) {
        *why = "no question text";
        return false;
    }
    it->question = q->get<std::string>();
    if (const ojson* id = field(r, {"id", "ID", "Id"})) it->id = scalar_text(*id);
    if (it->id.empty()) it->id = fmt::format("{}-{}", it->benchmark, n);
    if (const ojson* c = field(r, {"category", "Category", "type", "Type", "wp_type", "problem_type", "family"}))
        it->category = scalar_text(*c);
    if (const ojson* d = field(r, {"difficulty", "Difficulty", "level"})) it->difficulty = scalar_text(*d);
    auto resolve = [&](const ojson* p, std::string* dst, const char* what) {
        if (!p) return true;
        if (!p->is_string()) {
            *why = fmt::format("{} is not a string", what);
            return false;
        }
        fs::path path = p->get<std::string>();
        if (path.is_relative()) path = fs::path(base_dir) / path;
        std::error_code ec;
        if (!fs::is_regular_file(path, ec)) {
            *why = fmt::format("{} {} does not exist", what, path.string());
            return false;
        }
        *dst = fs::absolute(path).lexically_normal().string();
        return true;
    };
    if (!resolve(field(r, {"data_path"}), &it->data_path, "data_path")) return false;
    if (!resolve(field(r, {"reference_lp_path"}), &it->reference_lp_path, "reference_lp_path")) return false;
    if (f == bench_format::b4o_orgeval || (opt.structure_when_possible && !it->reference_lp_path.empty())) {
        if (it->reference_lp_path.empty()) {
            *why = "no reference_lp_path (ORGEval items are judged against a reference LP)";
            return false;
        }
        it->truth.kind = truth_kind::structure;
        it->truth.raw = it->reference_lp_path;
        return true;
    }
    if (!a) {
        const char* names[] = {"en_answer", "answer", "Answer", "optimal_value", "results"};
        for (const char* n : names)
            if (r.contains(n) && r[n].is_null()) {
                *why = fmt::format("the answer ({}) is null: unscorable", n);
                return false;
            }
        if (f == bench_format::resocratic) {
            *why = "results holds no value to judge against: unscorable";
            return false;
        }
        *why = "no answer field";
        return false;
    }
    return parse_answer(*a, opt, &it->truth, why);
}

}  // namespace

std::string parquet_as_jsonl(const std::string& path, const std::string& python_in) {
    const std::string python = python_in.empty() ? optmodel::find_python_with_pulp() : python_in;
    TREX_CHECK(!python.empty(), "{}: reading Parquet needs the project's Python with pyarrow (scripts/setup.sh)", path);
    static const char* script =
        "import json, sys\n"
        "try:\n"
        "    import pyarrow.parquet as pq\n"
        "except ImportError as e:\n"
        "    sys.exit('pyarrow is not installed in this Python (scripts/setup.sh installs it): %s' % e)\n"
        "try:\n"
        "    table = pq.read_table(sys.argv[1])\n"
        "except Exception as e:\n"
        "    sys.exit('not a Parquet file: %s' % e)\n"
        "out = sys.stdout\n"
        "for row in table.to_pylist():\n"
        "    out.write(json.dumps(row, default=str, allow_nan=False) + '\\n')\n";
    const process_output o = run_process({python, "-c", script, path}, 600);
    TREX_CHECK(o.error.empty(), "{}: cannot run {} to read Parquet: {}", path, python, o.error);
    TREX_CHECK(!o.timed_out, "{}: reading the Parquet file took more than 600 s", path);
    if (o.exit_code != 0) {
        std::string msg = o.err;
        while (!msg.empty() && std::isspace((unsigned char)msg.back())) msg.pop_back();
        const size_t nl = msg.rfind('\n');
        throw_error(fmt::format("{}: {}", path, nl == std::string::npos ? msg : msg.substr(nl + 1)));
    }
    return o.out;
}

std::vector<eval_item> load_benchmark(const std::string& path, const load_options& opt, load_report* report) {
    const bool parquet = fs::path(path).extension() == ".parquet";
    const std::string text = parquet ? parquet_as_jsonl(path, opt.python) : read_file(path);
    const std::string base_dir = fs::absolute(fs::path(path)).parent_path().string();
    const std::string name = opt.name.empty() ? fs::path(path).stem().string() : opt.name;
    std::vector<eval_item> items;
    load_report rep;
    auto take = [&](const std::string& rec_text, int line, const std::string& key) {
        rep.records++;
        const std::string where = fmt::format("{}:{}", path, line);
        eval_item it;
        it.benchmark = name;
        it.source = where;
        std::string why;
        ojson r;
        try {
            r = ojson::parse(rec_text);
        } catch (const std::exception& e) {
            std::string msg = e.what();
            const size_t p = msg.find("] ");
            rep.skipped.push_back(
                fmt::format("{}: malformed JSON ({})", where, p == std::string::npos ? msg : msg.substr(p + 2)));
            return;
        }
        if (!read_record(r, base_dir, opt, rep.records, &it, &why)) {
            rep.skipped.push_back(fmt::format("{}: {}", where, why));
            return;
        }
        if (it.id == fmt::format("{}-{}", name, rep.records) && !key.empty()) it.id = key;
        items.push_back(std::move(it));
    };
    std::vector<json_element> els;
    size_t first = 0;
    while (first < text.size() && std::isspace((unsigned char)text[first])) first++;
    bool is_jsonl = false;
    if (first < text.size() && text[first] == '{') {
        // JSONL (one object per line) or one JSON object holding records: JSONL when the first line parses alone.
        const size_t nl = text.find('\n', first);
        try {
            const ojson probe =
                ojson::parse(text.substr(first, nl == std::string::npos ? std::string::npos : nl - first));
            is_jsonl = probe.is_object();
        } catch (const std::exception&) {
            is_jsonl = false;
        }
        if (is_jsonl && nl == std::string::npos) {
            // a single-line file: a record, or an object of records
            ojson whole = ojson::parse(text.substr(first));
            bool all_objects = !whole.empty();
            for (auto& [k, v] : whole.items())
                if (!v.is_object()) all_objects = false;
            if (all_objects && !whole.contains("en_question") && !whole.contains("Question") &&
                !whole.contains("problem"))
                is_jsonl = false;
        }
    }
    if (is_jsonl) {
        std::istringstream in(text);
        std::string line;
        int ln = 0;
        while (std::getline(in, line)) {
            ln++;
            if (trim(line).empty()) continue;
            take(line, ln, "");
        }
    } else {
        std::string why;
        TREX_CHECK(split_json_elements(text, &els, &why), "{}:{}", path, why);
        for (const auto& el : els) take(el.text, el.line, el.key);
    }
    rep.loaded = (long)items.size();
    if (report) *report = rep;
    return items;
}

}  // namespace trex::eval
