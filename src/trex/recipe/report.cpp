#include "trex/recipe/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/base/html.hpp"
#include "trex/base/table.hpp"
#include "trex/train/report.hpp"

namespace trex::recipe {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

// A table of names then numbers: the first column left-aligned, the others right-aligned.
table numbers_table(const std::vector<std::string>& heads) {
    table t;
    for (size_t i = 0; i < heads.size(); i++) t.add_column(heads[i], i == 0 ? column_align::left : column_align::right);
    return t;
}

// The report as sections, each rendered to both formats.
struct document {
    std::string md, html;
    void heading(const std::string& h) {
        md += "\n## " + h + "\n\n";
        html += "<h2>" + html_escape(h) + "</h2>\n";
    }
    void para(const std::string& p) {
        md += p + "\n\n";
        html += "<p>" + html_escape(p) + "</p>\n";
    }
    void add(const table& t) {
        md += t.markdown() + "\n";
        html += t.html();
    }
    void chart(const std::string& dir, const std::string& file, const std::string& svg) {
        write_file_atomic(dir + "/charts/" + file, svg);
        md += "![" + file + "](charts/" + file + ")\n\n";
        html += svg + "\n";
    }
};

ojson read_json_or_null(const std::string& path) {
    if (!fs::exists(path)) return ojson();
    return ojson::parse(read_file(path));
}

std::string pct(const ojson& v) {
    return v.is_number() ? fmt::format("{:.2f}", 100.0 * v.get<double>()) : "–";
}

bool synthetic_set(const std::string& s) {
    return s.rfind("heldout-", 0) == 0 || s.rfind("transfer-", 0) == 0;
}

struct metrics_rows {
    std::vector<double> step, loss;
    double tokens_per_s = 0, mfu = 0, first_loss = 0, last_loss = 0;
    long steps = 0, mfu_steps = 0;
};

metrics_rows read_metrics(const std::string& path) {
    metrics_rows m;
    if (!fs::exists(path)) return m;
    std::ifstream in(path);
    double tps = 0, mfu = 0;
    for (std::string line; std::getline(in, line);) {
        if (line.empty()) continue;
        const ojson r = ojson::parse(line);
        if (!r.contains("step")) continue;
        const double loss = r.contains("lm") ? r["lm"].get<double>() : r.value("loss", 0.0);
        m.step.push_back(r["step"].get<double>());
        m.loss.push_back(loss);
        tps += r.value("tokens_per_s", 0.0);
        if (r.contains("mfu") && r["mfu"].is_number()) {
            mfu += r["mfu"].get<double>();
            m.mfu_steps++;
        }
    }
    m.steps = (long)m.step.size();
    if (m.steps) {
        m.tokens_per_s = tps / (double)m.steps;
        m.first_loss = m.loss.front();
        m.last_loss = m.loss.back();
    }
    if (m.mfu_steps) m.mfu = mfu / (double)m.mfu_steps;
    return m;
}

// pass@1 of every (model, form, set), with the macro averages.
struct pass_table {
    std::map<std::string, std::map<std::string, std::map<std::string, ojson>>> v;  // model -> form -> set -> pass@1
    std::map<std::string, ojson> by_family;                                        // model-form -> by_category
};

pass_table read_passes(const report_inputs& in) {
    pass_table t;
    for (const auto& m : in.models)
        for (const auto& f : in.forms) {
            const ojson s = read_json_or_null(in.out_dir + "/eval/" + m + "-" + f + "/summary.json");
            for (const auto& set : in.sets) {
                const ojson* b = s.is_object() && s["benchmarks"].contains(set) ? &s["benchmarks"][set] : nullptr;
                t.v[m][f][set] = b ? (*b)["pass@1"] : ojson();
            }
            if (s.is_object() && s.contains("by_category")) t.by_family[m + "-" + f] = s["by_category"];
        }
    return t;
}

// Mean pass@1 of the model over the sets that `keep` selects and every form (null when none was evaluated).
ojson mean_pass(const pass_table& t, const report_inputs& in, const std::string& model, bool synthetic) {
    double sum = 0;
    int n = 0;
    for (const auto& f : in.forms)
        for (const auto& set : in.sets) {
            if (synthetic_set(set) != synthetic) continue;
            const ojson& v = t.v.at(model).at(f).at(set);
            if (!v.is_number()) continue;
            sum += v.get<double>();
            n++;
        }
    return n ? ojson(sum / n) : ojson();
}

void pass_section(document& d, const report_inputs& in, const pass_table& t, ojson& summary) {
    d.heading("Pass@1 (%), greedy, zero-shot");
    d.para(
        "Held-out instances of the training families (heldout-*) and of families the SFT set never contains "
        "(transfer-*), one set per problem representation (DP, DT, DPS); each answer is executed by the harness "
        "and judged on the objective of the solve it ran (absolute tolerance 1e-6).");
    std::vector<std::string> heads = {"set", "form"};
    heads.insert(heads.end(), in.models.begin(), in.models.end());
    table tab = numbers_table(heads);
    ojson sets = ojson::object(), real = ojson::object();
    for (const auto& set : in.sets)
        for (const auto& f : in.forms) {
            std::vector<std::string> row = {set, f};
            ojson vals = ojson::object();
            for (const auto& m : in.models) {
                row.push_back(pct(t.v.at(m).at(f).at(set)));
                vals[summary_key(m)] = t.v.at(m).at(f).at(set);
            }
            tab.add_row(row);
            (synthetic_set(set) ? sets : real)[set][f] = vals;
        }
    ojson avg = ojson::object(), real_avg = ojson::object();
    std::vector<std::string> row = {"**average (held-out synthetic)**", ""};
    for (const auto& m : in.models) {
        avg[summary_key(m)] = mean_pass(t, in, m, true);
        real_avg[summary_key(m)] = mean_pass(t, in, m, false);
        row.push_back("**" + pct(avg[summary_key(m)]) + "**");
    }
    tab.add_row(row);
    d.add(tab);
    summary["pass_at_1_avg"] = avg;
    summary["sets"] = sets;
    summary["real_benchmarks"] = real;
    summary["real_benchmarks_avg"] = real_avg;
}

// How the answers ended, over every evaluated item of each model (the harness's outcome names): where Pass@1 is
// zero this shows what the model learned (answers that parse and solve but give the wrong objective, LP files that
// do not parse, no artefact at all).
void outcome_section(document& d, const report_inputs& in, ojson& summary) {
    std::map<std::string, std::map<std::string, long>> counts;  // model -> outcome -> samples
    std::vector<std::string> names;
    for (const auto& m : in.models)
        for (const auto& f : in.forms) {
            const ojson s = read_json_or_null(in.out_dir + "/eval/" + m + "-" + f + "/summary.json");
            if (!s.is_object() || !s.contains("all_items")) continue;
            for (auto it = s["all_items"]["outcomes"].begin(); it != s["all_items"]["outcomes"].end(); ++it) {
                counts[m][it.key()] += it.value().get<long>();
                if (std::find(names.begin(), names.end(), it.key()) == names.end()) names.push_back(it.key());
            }
        }
    if (names.empty()) return;
    d.heading("How the answers ended (samples, every set and form)");
    std::vector<std::string> heads = {"model"};
    heads.insert(heads.end(), names.begin(), names.end());
    table tab = numbers_table(heads);
    ojson o = ojson::object();
    for (const auto& m : in.models) {
        std::vector<std::string> row = {m};
        for (const auto& n : names) {
            const long c = counts[m].count(n) ? counts[m][n] : 0;
            row.push_back(std::to_string(c));
            o[summary_key(m)][n] = c;
        }
        tab.add_row(row);
    }
    d.add(tab);
    summary["outcomes"] = o;
}

void family_section(document& d, const report_inputs& in, const pass_table& t) {
    // family -> model -> (correct, items) over every set and form
    std::map<std::string, std::map<std::string, std::pair<double, double>>> fam;
    for (const auto& m : in.models)
        for (const auto& f : in.forms) {
            const auto it = t.by_family.find(m + "-" + f);
            if (it == t.by_family.end()) continue;
            for (auto s = it->second.begin(); s != it->second.end(); ++s)
                for (auto g = s.value().begin(); g != s.value().end(); ++g) {
                    auto& c = fam[g.key()][m];
                    c.first += g.value().value("pass@1", 0.0) * g.value().value("items", 0.0);
                    c.second += g.value().value("items", 0.0);
                }
        }
    if (fam.empty()) return;
    d.heading("Pass@1 (%) by problem family");
    std::vector<std::string> heads = {"family", "items"};
    heads.insert(heads.end(), in.models.begin(), in.models.end());
    table tab = numbers_table(heads);
    for (const auto& [name, per] : fam) {
        std::vector<std::string> row = {name, fmt::format("{:.0f}", per.begin()->second.second)};
        for (const auto& m : in.models) {
            const auto it = per.find(m);
            row.push_back(it == per.end() || it->second.second == 0
                              ? "–"
                              : fmt::format("{:.1f}", 100.0 * it->second.first / it->second.second));
        }
        tab.add_row(row);
    }
    d.add(tab);
}

void perplexity_section(document& d, const report_inputs& in, ojson& summary) {
    d.heading("General-text perplexity (held-out documents)");
    d.para(
        "Forgetting: the base model's perplexity on general text it never trained on, against the models after "
        "CPT and SFT.");
    table tab = numbers_table({"model", "tokens", "mean NLL (nats)", "perplexity"});
    ojson ppl = ojson::object();
    for (const auto& r : in.training_runs) {
        const ojson s = read_json_or_null(in.out_dir + "/perplexity/" + r + ".json");
        ppl[summary_key(r)] = s.is_object() ? s["perplexity"] : ojson();
        tab.add_row({r, s.is_object() ? std::to_string(s.value("tokens", 0L)) : "–",
                     s.is_object() ? fmt::format("{:.4f}", s.value("mean_nll", 0.0)) : "–",
                     s.is_object() ? fmt::format("{:.2f}", s.value("perplexity", 0.0)) : "–"});
    }
    d.add(tab);
    summary["perplexity"] = ppl;
}

void training_section(document& d, const report_inputs& in, ojson& summary) {
    d.heading("Training");
    table tab = numbers_table({"run", "steps", "first loss", "last loss", "tokens/s", "MFU (%)"});
    std::vector<svg_series> pre, sft;
    const char* colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"};
    ojson tr = ojson::object();
    size_t k = 0;
    for (const auto& r : in.training_runs) {
        const metrics_rows m = read_metrics(in.out_dir + "/runs/" + r + "/metrics.jsonl");
        tab.add_row({r, std::to_string(m.steps), fmt::format("{:.4f}", m.first_loss),
                     fmt::format("{:.4f}", m.last_loss), fmt::format("{:.0f}", m.tokens_per_s),
                     m.mfu_steps ? fmt::format("{:.1f}", 100.0 * m.mfu) : "–"});
        tr[summary_key(r)] = {{"steps", m.steps},
                              {"first_loss", m.first_loss},
                              {"last_loss", m.last_loss},
                              {"tokens_per_s", m.tokens_per_s},
                              {"mfu", m.mfu_steps ? ojson(m.mfu) : ojson()}};
        svg_series s{r, colors[k++ % 4], m.step, m.loss};
        (r.find("sft") != std::string::npos ? sft : pre).push_back(s);
    }
    d.add(tab);
    summary["training"] = tr;
    d.chart(in.out_dir, "loss-pretraining.svg", svg_line_chart("Pre-training and CPT: LM loss", "loss", pre));
    d.chart(in.out_dir, "loss-sft.svg", svg_line_chart("SFT: LM loss on assistant tokens", "loss", sft));
}

void stages_section(document& d, const report_inputs& in, ojson& summary) {
    d.heading("Wall time per stage");
    table tab = numbers_table({"stage", "wall (s)", "this run"});
    ojson st = ojson::object();
    double total = 0;
    for (const auto& s : in.stages) {
        tab.add_row({s.name, fmt::format("{:.1f}", s.wall_s), s.skipped ? "skipped (done before)" : "ran"});
        st[s.name] = {{"wall_s", s.wall_s}, {"skipped", s.skipped}};
        total += s.wall_s;
    }
    tab.add_row({"**total**", fmt::format("{:.1f}", total), ""});
    d.add(tab);
    summary["stages"] = st;
    summary["wall_s_total"] = total;
}

}  // namespace

std::string summary_key(const std::string& model) {
    std::string k = model;
    std::replace(k.begin(), k.end(), '-', '_');
    return k;
}

ojson write_recipe_report(const report_inputs& in, std::string* report_md_path) {
    fs::create_directories(in.out_dir + "/charts");
    ojson summary = {{"profile", in.profile}};
    document d;
    const pass_table passes = read_passes(in);
    pass_section(d, in, passes, summary);
    outcome_section(d, in, summary);
    family_section(d, in, passes);
    perplexity_section(d, in, summary);
    training_section(d, in, summary);
    stages_section(d, in, summary);
    const std::string title = "trex recipe --profile " + in.profile;
    const std::string md = "# " + title + "\n\n" + in.profile_summary + "\n" + d.md;
    const std::string html = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + html_escape(title) +
                             "</title><style>body{font-family:sans-serif;max-width:60em;margin:auto}table{border-"
                             "collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px}</style></head><body>\n"
                             "<h1>" +
                             html_escape(title) + "</h1>\n<p>" + html_escape(in.profile_summary) + "</p>\n" + d.html +
                             "</body></html>\n";
    write_file_atomic(in.out_dir + "/report.md", md);
    write_file_atomic(in.out_dir + "/report.html", html);
    write_file_atomic(in.out_dir + "/summary.json", summary.dump(2) + "\n");
    if (report_md_path) *report_md_path = in.out_dir + "/report.md";
    return summary;
}

}  // namespace trex::recipe
