#include "trex/eval/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "trex/base/error.hpp"
#include "trex/base/html.hpp"
#include "trex/base/table.hpp"

namespace trex::eval {

ojson exec_to_json(const exec_outcome& x) {
    ojson e = {{"artefact", x.artefact}, {"status", x.status}};
    if (x.has_objective) e["objective"] = x.objective;
    if (!x.source.empty()) e["source"] = x.source;
    if (!x.solver.empty()) e["solver"] = x.solver;
    if (x.has_printed_objective) e["printed_objective"] = x.printed_objective;
    if (x.stdout_truncated) e["stdout_truncated"] = true;
    if (x.stderr_truncated) e["stderr_truncated"] = true;
    if (x.status == "structure") e["equivalent"] = x.equivalent;
    if (!x.detail.empty()) e["detail"] = x.detail;
    e["seconds"] = std::round(x.seconds * 1e4) / 1e4;
    return e;
}

exec_outcome exec_from_json(const ojson& e) {
    exec_outcome x;
    x.artefact = e.value("artefact", "");
    x.status = e.value("status", "");
    x.has_objective = e.contains("objective");
    x.objective = e.value("objective", 0.0);
    x.source = e.value("source", "");
    x.solver = e.value("solver", "");
    x.has_printed_objective = e.contains("printed_objective");
    x.printed_objective = e.value("printed_objective", 0.0);
    x.stdout_truncated = e.value("stdout_truncated", false);
    x.stderr_truncated = e.value("stderr_truncated", false);
    x.equivalent = e.value("equivalent", false);
    x.detail = e.value("detail", "");
    x.seconds = e.value("seconds", 0.0);
    return x;
}

ojson sample_to_json(const sample_record& r) {
    ojson j = {{"id", r.id}, {"benchmark", r.benchmark}, {"sample", r.sample}};
    if (!r.category.empty()) j["category"] = r.category;
    if (!r.difficulty.empty()) j["difficulty"] = r.difficulty;
    ojson t = {{"kind", truth_kind_name(r.truth.kind)}, {"raw", r.truth.raw}};
    if (r.truth.kind == truth_kind::objective) t["value"] = r.truth.value;
    j["truth"] = t;
    j["correct"] = r.v.correct;
    j["outcome"] = failure_name(r.v.why);
    j["verdict"] = r.v.detail;
    j["exec"] = exec_to_json(r.ex);
    if (!r.artefact_text.empty()) j["artefact_text"] = r.artefact_text;
    if (!r.cache_key.empty()) j["completion_key"] = r.cache_key;
    return j;
}

sample_record sample_from_json(const ojson& j) {
    sample_record r;
    try {
        r.id = j.at("id").get<std::string>();
        r.benchmark = j.at("benchmark").get<std::string>();
        r.sample = j.at("sample").get<int>();
        r.category = j.value("category", "");
        r.difficulty = j.value("difficulty", "");
        const ojson& t = j.at("truth");
        const std::string k = t.at("kind").get<std::string>();
        r.truth.kind = k == "objective"     ? truth_kind::objective
                       : k == "no_solution" ? truth_kind::no_solution
                       : k == "structure"   ? truth_kind::structure
                                            : truth_kind::unknown;
        r.truth.raw = t.value("raw", "");
        r.truth.value = t.value("value", 0.0);
        r.ex = exec_from_json(j.at("exec"));
        r.artefact_text = j.value("artefact_text", "");
        r.cache_key = j.value("completion_key", "");
        r.v.correct = j.value("correct", false);
        r.v.detail = j.value("verdict", "");
        const std::string o = j.value("outcome", "correct");
        for (int f = 0; f < failure_count; f++)
            if (o == failure_name((failure)f)) r.v.why = (failure)f;
    } catch (const std::exception& e) {
        throw_error(fmt::format("not a trex eval result record ({})", e.what()));
    }
    return r;
}

double pass_at_k(int n, int c, int k) {
    if (k <= 0 || n <= 0) return 0.0;
    if (n - c < k) return 1.0;
    double prod = 1.0;
    for (int i = n - c + 1; i <= n; i++) prod *= 1.0 - (double)k / (double)i;
    return 1.0 - prod;
}

namespace {

struct item_acc {
    int n = 0, c = 0;
};

void finish(group_stats& g, const std::vector<item_acc>& items, const std::vector<int>& ks) {
    g.items = (long)items.size();
    double p1 = 0;
    for (const auto& it : items) p1 += it.n ? (double)it.c / it.n : 0.0;
    g.pass1 = items.empty() ? 0.0 : p1 / (double)items.size();
    for (int k : ks) {
        double s = 0;
        long m = 0;
        for (const auto& it : items)
            if (it.n >= k) {
                s += pass_at_k(it.n, it.c, k);
                m++;
            }
        if (m > 0) g.pass_k[k] = s / (double)m;
    }
}

}  // namespace

eval_summary summarize(const std::vector<sample_record>& records, const std::vector<int>& ks) {
    eval_summary s;
    s.ks = ks;
    // items by (benchmark, id), in first-seen order
    std::map<std::pair<std::string, std::string>, size_t> index;
    std::vector<item_acc> acc;
    std::vector<const sample_record*> first;
    for (const auto& r : records) {
        auto key = std::make_pair(r.benchmark, r.id);
        auto it = index.find(key);
        if (it == index.end()) {
            it = index.emplace(key, acc.size()).first;
            acc.push_back({});
            first.push_back(&r);
        }
        item_acc& a = acc[it->second];
        a.n++;
        if (r.v.correct) a.c++;
        auto add_outcome = [&](group_stats& g) {
            g.samples++;
            if (r.v.correct) g.correct++;
            g.outcomes[(size_t)r.v.why]++;
        };
        add_outcome(s.benchmark[r.benchmark]);
        add_outcome(s.micro);
        if (!r.category.empty()) add_outcome(s.category[r.benchmark][r.category]);
        if (!r.difficulty.empty()) add_outcome(s.difficulty[r.benchmark][r.difficulty]);
    }
    std::map<std::string, std::vector<item_acc>> by_b;
    std::map<std::string, std::map<std::string, std::vector<item_acc>>> by_c, by_d;
    for (size_t i = 0; i < acc.size(); i++) {
        const sample_record& r = *first[i];
        by_b[r.benchmark].push_back(acc[i]);
        if (!r.category.empty()) by_c[r.benchmark][r.category].push_back(acc[i]);
        if (!r.difficulty.empty()) by_d[r.benchmark][r.difficulty].push_back(acc[i]);
    }
    for (auto& [b, items] : by_b) finish(s.benchmark[b], items, ks);
    for (auto& [b, m] : by_c)
        for (auto& [c, items] : m) finish(s.category[b][c], items, ks);
    for (auto& [b, m] : by_d)
        for (auto& [d, items] : m) finish(s.difficulty[b][d], items, ks);
    finish(s.micro, acc, ks);
    if (!s.benchmark.empty()) {
        double p = 0;
        for (auto& [b, g] : s.benchmark) p += g.pass1;
        s.macro_pass1 = p / (double)s.benchmark.size();
        for (int k : ks) {
            double q = 0;
            int m = 0;
            for (auto& [b, g] : s.benchmark)
                if (g.pass_k.count(k)) {
                    q += g.pass_k[k];
                    m++;
                }
            if (m == (int)s.benchmark.size()) s.macro_pass_k[k] = q / m;
        }
    }
    return s;
}

namespace {

ojson group_json(const group_stats& g) {
    ojson j = {{"items", g.items}, {"samples", g.samples}, {"correct_samples", g.correct}, {"pass@1", g.pass1}};
    for (auto& [k, v] : g.pass_k)
        if (k != 1) j[fmt::format("pass@{}", k)] = v;
    ojson o = ojson::object();
    for (int f = 0; f < failure_count; f++)
        if (g.outcomes[(size_t)f]) o[failure_name((failure)f)] = g.outcomes[(size_t)f];
    j["outcomes"] = o;
    return j;
}

std::string pct(double x) {
    return fmt::format("{:.2f}", 100.0 * x);
}

std::string esc(const std::string& s) {
    return html_escape(s);
}

std::string md_cell(const std::string& s) {
    std::string o;
    for (char c : s) o += c == '|' ? std::string("\\|") : std::string(1, c);
    return o;
}

// The pass@k columns of the reports: every k but 1 (Pass@1 has its own).
std::vector<int> extra_ks(const eval_summary& s) {
    std::vector<int> ks;
    for (int k : s.ks)
        if (k != 1) ks.push_back(k);
    return ks;
}

std::vector<std::string> results_row(const std::string& name, const group_stats& g, const std::vector<int>& ks) {
    std::vector<std::string> row = {name, fmt::format("{}", g.items), fmt::format("{}", g.samples), pct(g.pass1)};
    for (int k : ks) row.push_back(g.pass_k.count(k) ? pct(g.pass_k.at(k)) : "–");
    for (int f = 0; f < failure_count; f++) row.push_back(fmt::format("{}", g.outcomes[(size_t)f]));
    return row;
}

// The macro average over benchmarks, in bold (the outcome columns empty).
std::vector<std::string> average_row(const eval_summary& s, const std::vector<int>& ks) {
    std::vector<std::string> row = {"**average over benchmarks**", "", "", "**" + pct(s.macro_pass1) + "**"};
    for (int k : ks) row.push_back(s.macro_pass_k.count(k) ? "**" + pct(s.macro_pass_k.at(k)) + "**" : "–");
    return row;
}

// One row per benchmark; with several, the macro average and all items together.
table results_table(const eval_summary& s) {
    const std::vector<int> ks = extra_ks(s);
    table t;
    t.add_column("benchmark");
    for (const char* h : {"items", "samples", "Pass@1 (%)"}) t.add_column(h, column_align::right);
    for (int k : ks) t.add_column(fmt::format("pass@{} (%)", k), column_align::right);
    for (int f = 0; f < failure_count; f++) t.add_column(failure_name((failure)f), column_align::right);
    for (auto& [name, g] : s.benchmark) t.add_row(results_row(name, g, ks));
    if (s.benchmark.size() > 1) {
        t.add_row(average_row(s, ks));
        t.add_row(results_row("all items", s.micro, ks));
    }
    return t;
}

// The benchmarks split by "category" or "difficulty".
const std::map<std::string, std::map<std::string, group_stats>>& breakdown(const eval_summary& s,
                                                                           const std::string& which) {
    return which == "category" ? s.category : s.difficulty;
}

table breakdown_table(const eval_summary& s, const std::string& which) {
    table t;
    t.add_column("benchmark");
    t.add_column(which);
    for (const char* h : {"items", "Pass@1 (%)", "correct / samples"}) t.add_column(h, column_align::right);
    for (auto& [bn, m] : breakdown(s, which))
        for (auto& [v, g] : m)
            t.add_row({bn, v, fmt::format("{}", g.items), pct(g.pass1), fmt::format("{} / {}", g.correct, g.samples)});
    return t;
}

const char* kColors[failure_count] = {"#2e7d32", "#9e9e9e", "#6d4c41", "#c62828", "#ad1457", "#ef6c00",
                                      "#1565c0", "#6a1b9a", "#00838f", "#424242", "#f9a825"};

}  // namespace

ojson summary_json(const eval_summary& s) {
    ojson j;
    ojson b = ojson::object();
    for (auto& [name, g] : s.benchmark) b[name] = group_json(g);
    j["benchmarks"] = b;
    ojson avg = {{"pass@1", s.macro_pass1}};
    for (auto& [k, v] : s.macro_pass_k)
        if (k != 1) avg[fmt::format("pass@{}", k)] = v;
    j["macro_average"] = avg;
    j["all_items"] = group_json(s.micro);
    for (const char* which : {"category", "difficulty"}) {
        ojson o = ojson::object();
        for (auto& [bn, m] : breakdown(s, which))
            for (auto& [v, g] : m) o[bn][v] = group_json(g);
        j[std::string("by_") + which] = o;
    }
    return j;
}

std::string report_markdown(const eval_summary& s, const ojson& run) {
    std::string o = "# trex eval report\n\n";
    for (auto it = run.begin(); it != run.end(); ++it) {
        if (it.key() == "skipped") continue;
        o += fmt::format("- **{}**: {}\n", it.key(),
                         it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
    }
    o += "\n## Results\n\n" + results_table(s).markdown();
    for (const char* which : {"category", "difficulty"}) {
        if (breakdown(s, which).empty()) continue;
        o += fmt::format("\n## By {}\n\n", which) + breakdown_table(s, which).markdown();
    }
    o += "\n## Failure taxonomy (samples)\n\n";
    for (int f = 1; f < failure_count; f++)
        if (s.micro.outcomes[(size_t)f])
            o += fmt::format("- {}: {} ({:.1f}%)\n", failure_name((failure)f), s.micro.outcomes[(size_t)f],
                             100.0 * (double)s.micro.outcomes[(size_t)f] / (double)std::max(1L, s.micro.samples));
    if (run.contains("skipped") && !run["skipped"].empty()) {
        o += "\n## Skipped records\n\n";
        for (const auto& x : run["skipped"]) o += "- " + md_cell(x.get<std::string>()) + "\n";
    }
    return o;
}

namespace {

// Every failed sample, collapsed: benchmark, id, outcome and the reason, then the artefact extraction found (at most
// kMaxListed of them, in results order).
constexpr size_t kMaxListed = 2000;

std::string failed_html(const std::vector<sample_record>& records) {
    std::string o;
    size_t n = 0, failed = 0;
    for (const auto& r : records) {
        if (r.v.correct) continue;
        if (++failed > kMaxListed) continue;
        n++;
        o += fmt::format("<details><summary>{} / {}{} — <b>{}</b>: {}</summary>\n", esc(r.benchmark), esc(r.id),
                         r.sample ? fmt::format(" #{}", r.sample) : "", failure_name(r.v.why),
                         esc(r.v.detail.size() > 300 ? r.v.detail.substr(0, 300) + "…" : r.v.detail));
        if (!r.ex.detail.empty() && r.ex.detail != r.v.detail) o += "<pre>" + esc(r.ex.detail) + "</pre>\n";
        if (!r.artefact_text.empty())
            o += fmt::format("<p>extracted {}:</p><pre>{}</pre>\n", esc(r.ex.artefact), esc(r.artefact_text));
        o += "</details>\n";
    }
    if (failed == 0) return "";
    std::string head = fmt::format("<h2>Failed answers ({})</h2>\n", failed);
    if (failed > n) head += fmt::format("<p>The first {} are listed; results.jsonl has all.</p>\n", n);
    return head + o;
}

}  // namespace

std::string report_html(const eval_summary& s, const ojson& run, const std::vector<sample_record>& records) {
    std::string o =
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>trex eval report</title><style>"
        "body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:3px 8px}"
        "th{background:#f0f0f0}</style></head><body>\n<h1>trex eval report</h1>\n<ul>\n";
    for (auto it = run.begin(); it != run.end(); ++it) {
        if (it.key() == "skipped") continue;
        o += fmt::format("<li><b>{}</b>: {}</li>\n", esc(it.key()),
                         esc(it.value().is_string() ? it.value().get<std::string>() : it.value().dump()));
    }
    o += "</ul>\n<h2>Pass@1 by benchmark</h2>\n";
    // bar chart
    std::vector<std::pair<std::string, double>> bars;
    for (auto& [n, g] : s.benchmark) bars.push_back({n, g.pass1});
    if (s.benchmark.size() > 1) bars.push_back({"average", s.macro_pass1});
    const int W = 640, label_w = 200, bh = 22;
    o += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-size=\"12\">\n", W,
                     (int)bars.size() * (bh + 6) + 24);
    for (int t = 0; t <= 4; t++) {
        const int x = label_w + t * (W - label_w - 60) / 4;
        o += fmt::format(
            "<line x1=\"{0}\" y1=\"0\" x2=\"{0}\" y2=\"{1}\" stroke=\"#ddd\"/><text x=\"{0}\" y=\"{2}\" "
            "text-anchor=\"middle\">{3}%</text>\n",
            x, (int)bars.size() * (bh + 6), (int)bars.size() * (bh + 6) + 16, t * 25);
    }
    for (size_t i = 0; i < bars.size(); i++) {
        const int y = (int)i * (bh + 6);
        const int w = (int)std::lround(bars[i].second * (W - label_w - 60));
        o += fmt::format(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><rect x=\"{}\" y=\"{}\" width=\"{}\" "
            "height=\"{}\" fill=\"#1565c0\"/><text x=\"{}\" y=\"{}\">{}%</text>\n",
            label_w - 6, y + 15, esc(bars[i].first), label_w, y, w, bh, label_w + w + 4, y + 15, pct(bars[i].second));
    }
    o += "</svg>\n<h2>Outcomes by benchmark</h2>\n";
    // stacked outcome bars
    std::vector<std::pair<std::string, const group_stats*>> rows;
    for (auto& [n, g] : s.benchmark) rows.push_back({n, &g});
    o += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-size=\"12\">\n", W,
                     (int)rows.size() * (bh + 6) + 40);
    for (size_t i = 0; i < rows.size(); i++) {
        const int y = (int)i * (bh + 6);
        o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", label_w - 6, y + 15,
                         esc(rows[i].first));
        double x = label_w;
        const double total = (double)std::max(1L, rows[i].second->samples);
        for (int f = 0; f < failure_count; f++) {
            const double w = (double)rows[i].second->outcomes[(size_t)f] / total * (W - label_w - 20);
            if (w <= 0) continue;
            o += fmt::format(
                "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{}: {}</title></rect>\n",
                x, y, w, bh, kColors[f], failure_name((failure)f), rows[i].second->outcomes[(size_t)f]);
            x += w;
        }
    }
    {
        int x = 0;
        const int y = (int)rows.size() * (bh + 6) + 12;
        for (int f = 0; f < failure_count; f++) {
            o += fmt::format(
                "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
                x, y, kColors[f], x + 13, y + 9, failure_name((failure)f));
            x += 13 + 7 * (int)std::string(failure_name((failure)f)).size() + 10;
        }
    }
    o += "</svg>\n";
    // the Markdown report's tables
    o += "<h2>Results</h2>\n" + results_table(s).html();
    for (const char* which : {"category", "difficulty"}) {
        if (breakdown(s, which).empty()) continue;
        o += fmt::format("<h2>By {}</h2>\n", which) + breakdown_table(s, which).html();
    }
    if (run.contains("skipped") && !run["skipped"].empty()) {
        o += "<h2>Skipped records</h2>\n<ul>\n";
        for (const auto& x : run["skipped"]) o += "<li>" + esc(x.get<std::string>()) + "</li>\n";
        o += "</ul>\n";
    }
    o += failed_html(records);
    o += "</body></html>\n";
    return o;
}

}  // namespace trex::eval
