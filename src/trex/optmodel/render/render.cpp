#include "trex/optmodel/render/render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include "trex/base/error.hpp"
#include "trex/base/rng.hpp"
#include "trex/optmodel/ir/format.hpp"
#include "trex/optmodel/ir/glpk_io.hpp"
#include "trex/optmodel/ir/latex.hpp"
#include "trex/optmodel/ir/writers.hpp"
#include "trex/optmodel/render/prose.hpp"
#include "trex/optmodel/solvers/python_runner.hpp"

namespace trex::optmodel {

const char* representation_name(representation r) {
    switch (r) {
        case representation::dp:
            return "DP";
        case representation::dt:
            return "DT";
        case representation::dps:
            return "DPS";
    }
    return "?";
}

const char* task_name(task t) {
    switch (t) {
        case task::formulation:
            return "formulation";
        case task::formulation_code:
            return "formulation_code";
        case task::code:
            return "code";
        case task::lp_file:
            return "lp_file";
        case task::benchmark:
            return "benchmark";
    }
    return "?";
}

bool parse_representation(const std::string& s, representation* r) {
    for (representation x : {representation::dp, representation::dt, representation::dps})
        if (s == representation_name(x)) {
            *r = x;
            return true;
        }
    return false;
}

bool parse_task(const std::string& s, task* t) {
    for (task x : {task::formulation, task::formulation_code, task::code, task::lp_file, task::benchmark})
        if (s == task_name(x)) {
            *t = x;
            return true;
        }
    return false;
}

vocab instance_words(const family& f, const instance& in) {
    vocab v = f.scenarios[(size_t)in.scenario].words;
    for (auto it = in.data.begin(); it != in.data.end(); ++it)
        if (it.value().is_array() || it.value().is_object()) v["n_" + it.key()] = std::to_string(it.value().size());
    if (!v.count("org")) v["org"] = "the company";
    return v;
}

namespace {

std::string md_cell(const std::string& s) {
    std::string o;
    for (char c : s) o += c == '|' ? '/' : c;
    return o;
}

// DT: a Markdown table for one group.
std::string table_param(const std::vector<const param_doc*>& group, const ojson& data, const vocab& v, rng& r) {
    const param_doc& p = *group[0];
    if (p.index.size() == 1) {
        const ojson& members = data.at(p.index[0]);
        std::string head = "| " + capitalise(expand("{" + p.index[0] + "_label}", v, r)) + " |", sep = "|---|";
        if (head.find('{') != std::string::npos) head = "| Item |";
        for (const auto* q : group) {
            doc_text d = doc_words(*q, v, r);
            head += " " + md_cell(capitalise(d.desc)) + (d.unit.empty() ? "" : " (" + md_cell(d.unit) + ")") + " |";
            sep += "---|";
        }
        std::string out = head + "\n" + sep + "\n";
        for (const auto& mem : members) {
            const std::string m = mem.get<std::string>();
            bool any = false;
            std::string row = "| " + md_cell(m) + " |";
            for (const auto* q : group) {
                const ojson& map = data.at(q->key);
                if (map.contains(m)) {
                    row += " " + md_cell(value_text(map.at(m))) + " |";
                    any = true;
                } else {
                    row += " - |";
                }
            }
            if (any) out += row + "\n";
        }
        const std::string absent = absent_sentences(group, data, v, r);
        return absent.empty() ? out : out + "\n" + absent + "\n";
    }
    // two indices: a matrix
    doc_text d = doc_words(p, v, r);
    const ojson& map = data.at(p.key);
    std::string out = capitalise(d.desc) + (d.unit.empty() ? "" : " (" + d.unit + ")") + ":\n\n";
    std::vector<std::string> cols;
    for (const auto& c : data.at(p.index[1])) cols.push_back(c.get<std::string>());
    out += "| |";
    std::string sep = "|---|";
    for (const auto& c : cols) {
        out += " " + md_cell(c) + " |";
        sep += "---|";
    }
    out += "\n" + sep + "\n";
    for (auto it = map.begin(); it != map.end(); ++it) {
        out += "| " + md_cell(it.key()) + " |";
        for (const auto& c : cols) {
            out += ' ';
            out += it.value().contains(c) ? md_cell(value_text(it.value().at(c))) : std::string("-");
            out += " |";
        }
        out += "\n";
    }
    return out;
}

// DPS: one bullet per key.
std::string schema_line(const param_doc& p, const vocab& v, rng& r) {
    doc_text d = doc_words(p, v, r);
    const std::string unit = d.unit.empty() ? "" : " (" + d.unit + ")";
    if (p.is_set) return "- `" + p.key + "`: list of the " + d.desc + " (names)";
    if (p.index.empty()) return "- `" + p.key + "`: the " + d.desc + unit;
    if (p.index.size() == 1 && !p.absent.empty()) {
        vocab w = v;
        w["have"] = "has";
        return "- `" + p.key + "`: object mapping names in `" + p.index[0] + "` to their " + d.desc + unit +
               "; a name missing from it " + expand(p.absent, w, r);
    }
    if (p.index.size() == 1)
        return "- `" + p.key + "`: object mapping each name in `" + p.index[0] + "` to its " + d.desc + unit;
    return "- `" + p.key + "`: object mapping each name in `" + p.index[0] + "` to an object mapping each name in `" +
           p.index[1] + "` to the " + d.desc + unit;
}

// Consecutive 1-D parameters over the same set (all present in the data) form one group.
std::vector<std::vector<const param_doc*>> groups(const family& f, const instance& in) {
    std::vector<std::vector<const param_doc*>> out;
    for (const auto& p : f.params) {
        if (!in.data.contains(p.key)) continue;
        if (!out.empty() && p.index.size() == 1 && !p.is_set) {
            const param_doc& last = *out.back().back();
            if (!last.is_set && last.index.size() == 1 && last.index[0] == p.index[0]) {
                out.back().push_back(&p);
                continue;
            }
        }
        out.push_back({&p});
    }
    return out;
}

std::string sentences(const std::vector<std::string>& tmpls, const vocab& v, rng& r) {
    std::string out;
    for (const auto& t : tmpls) {
        if (!out.empty()) out += ' ';
        out += expand(t, v, r);
    }
    return out;
}

std::string lib_name(dialect d) {
    switch (d) {
        case dialect::pulp:
            return "PuLP";
        case dialect::gurobipy:
            return "gurobipy";
        case dialect::coptpy:
            return "coptpy (COPT)";
        case dialect::pyomo:
            return "Pyomo";
    }
    return "?";
}

}  // namespace

std::string render_problem(const family& f, const instance& in, representation rep, bool inline_json, uint64_t seed) {
    rng r(seed, hash_name("question"));
    if (rep == representation::dp && f.story) {
        rng wr(seed, hash_name("wording"));
        return vary_wording(f.story(f, in, r), wr);
    }
    vocab v = instance_words(f, in);
    for (const auto& p : f.params)
        if (p.is_set) v[p.key + "_label"] = expand(p.desc, v, r);
    rng wr(seed, hash_name("wording"));
    std::string out = capitalise(vary_wording(expand(f.intro, v, r), wr)) + "\n\n";
    const auto gs = groups(f, in);
    if (rep == representation::dp) {
        std::string body;
        for (const auto& g : gs) {
            std::string s = prose_data(g, in.data, v, r);
            if (!s.empty()) body += s + "\n";
        }
        out += body + "\n";
    } else if (rep == representation::dt) {
        std::string scalars;
        for (const auto& g : gs) {
            const param_doc& p = *g[0];
            if (p.is_set) {
                out += prose_data(g, in.data, v, r) + "\n";
            } else if (p.index.empty()) {
                doc_text d = doc_words(p, v, r);
                scalars += "| " + md_cell(capitalise(d.desc)) + " | " +
                           md_cell(with_unit(value_text(in.data.at(p.key)), d.unit)) + " |\n";
            }
        }
        out += "\n";
        for (const auto& g : gs)
            if (!g[0]->is_set && !g[0]->index.empty()) out += table_param(g, in.data, v, r) + "\n";
        if (!scalars.empty()) out += "| Parameter | Value |\n|---|---|\n" + scalars + "\n";
    } else {
        out += expand(
                   "[The data are provided in the JSON file `data.json` with the following keys:|All data come in "
                   "a file `data.json`; its keys are:]",
                   v, r) +
               "\n";
        for (const auto& p : f.params)
            if (in.data.contains(p.key)) out += schema_line(p, v, r) + "\n";
        if (inline_json) out += "\nContents of `data.json`:\n```json\n" + in.data.dump(2) + "\n```\n";
        out += "\n";
    }
    out += vary_wording(sentences(f.constraints, v, r), wr);
    if (!f.integrality.empty()) out += " " + vary_wording(expand(f.integrality, v, r), wr);
    out += " " + vary_wording(expand(f.objective, v, r), wr) + "\n";
    return out;
}

namespace {

// The numbers written in a text: digit runs with an optional decimal part and an optional minus sign ("-27", not
// the hyphen of "06-10"), not glued to a letter ("CO2", "x_1"), and "twice".
std::vector<std::pair<std::string, double>> text_numbers(const std::string& text) {
    std::vector<std::pair<std::string, double>> out;
    for (size_t at = text.find("twice"); at != std::string::npos; at = text.find("twice", at + 5))
        if ((at == 0 || !std::isalpha((unsigned char)text[at - 1])) &&
            (at + 5 >= text.size() || !std::isalpha((unsigned char)text[at + 5])))
            out.push_back({"twice", 2.0});
    for (size_t i = 0; i < text.size();) {
        if (!std::isdigit((unsigned char)text[i]) ||
            (i > 0 && (std::isalpha((unsigned char)text[i - 1]) || text[i - 1] == '_'))) {
            i++;
            continue;
        }
        size_t e = i;
        while (e < text.size() && std::isdigit((unsigned char)text[e])) e++;
        if (e + 1 < text.size() && text[e] == '.' && std::isdigit((unsigned char)text[e + 1])) {
            e++;
            while (e < text.size() && std::isdigit((unsigned char)text[e])) e++;
        }
        const bool glued = e < text.size() && (std::isalpha((unsigned char)text[e]) || text[e] == '_');
        // a minus sign right before the digits, not a hyphen inside a name ("06-10", "A-1")
        const bool negative = i > 0 && text[i - 1] == '-' && (i == 1 || !std::isalnum((unsigned char)text[i - 2]));
        const size_t from = negative ? i - 1 : i;
        if (!glued) out.push_back({text.substr(from, e - from), std::stod(text.substr(from, e - from))});
        i = e;
    }
    return out;
}

void data_numbers(const ojson& j, std::vector<double>& out) {
    if (j.is_number())
        out.push_back(j.get<double>());
    else if (j.is_array() || j.is_object())
        for (const auto& v : j) data_numbers(v, out);
}

bool same_number(double a, double b) {
    return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b));
}

}  // namespace

number_coverage check_numbers(const std::string& text, const ojson& data) {
    number_coverage c;
    std::vector<double> given;
    data_numbers(data, given);
    const auto written = text_numbers(text);
    for (double g : given)
        if (std::none_of(written.begin(), written.end(), [&](const auto& w) { return same_number(w.second, g); }))
            c.missing.push_back(format_value(g));
    for (const auto& w : written)
        if (std::none_of(given.begin(), given.end(), [&](double g) { return same_number(w.second, g); }))
            c.unused.push_back(w.first);
    return c;
}

std::string render_question(const family& f, const instance& in, representation rep, task t, dialect d, uint64_t seed) {
    const bool code_task = t == task::code || t == task::formulation_code;
    std::string q = render_problem(f, in, rep, rep == representation::dps && !code_task && t != task::benchmark, seed);
    rng r(seed, hash_name("request"));
    const vocab v = {{"lib", lib_name(d)}};
    q += "\n";
    switch (t) {
        case task::formulation:
            q += expand(
                "[Formulate this as a mathematical optimization model and report the optimal objective value.|"
                "Write the mathematical model (decision variables, objective, constraints) and give the "
                "optimal value of the objective.]",
                v, r);
            q += " If there is no optimal solution, say whether the problem is infeasible or unbounded.";
            break;
        case task::formulation_code:
            q += expand(
                "[Formulate a mathematical model, then write a Python program using {lib} that solves it and "
                "prints the optimal objective value.|Give the mathematical formulation and {lib} code that "
                "solves it and prints the optimal objective value.]",
                v, r);
            break;
        case task::code:
            q += expand(
                "[Write a Python program using {lib} that solves this problem and prints the optimal "
                "objective value.|Solve this with a {lib} program that prints the optimal objective value.]",
                v, r);
            break;
        case task::lp_file:
            q += expand(
                "[Write the complete model as a CPLEX LP file (.lp) that a solver can read. Do not solve it.|"
                "Produce an LP-format (.lp) model file for this problem, ready for a solver; no solving is "
                "needed.]",
                v, r);
            break;
        case task::benchmark:
            q += expand("[What is the optimal objective value?|Find the optimal value of the objective.]", v, r);
            break;
    }
    if (rep == representation::dps && code_task) q += " The program must read its data from `data.json`.";
    return q + "\n";
}

std::string label_text(const verification& label) {
    if (label.status == solve_status::optimal) return format_value(label.objective, 10);
    return "No Best Solution";
}

namespace {

std::string result_sentence(const verification& label, rng& r) {
    const vocab v = {{"x", label_text(label)}};
    if (label.status == solve_status::optimal)
        return expand("[The optimal objective value is **{x}**.|Optimal objective value: **{x}**.]", v, r);
    if (label.status == solve_status::infeasible)
        return "The problem is **infeasible**: no plan satisfies all the constraints.";
    return "The problem is **unbounded**: the objective can be improved without limit.";
}

// The IR names of one group (variables or rows) by the doc that explains them: count, kind and a first member.
struct name_group {
    const name_doc* doc = nullptr;
    long count = 0, integer = 0, binary = 0;
    std::string first;  // IR name of the first member
};

template <typename Items, typename Kind>
std::vector<name_group> group_names(const Items& items, const std::vector<name_doc>& docs, const ojson& data,
                                    Kind kind) {
    std::vector<name_group> groups;
    for (const auto& it : items) {
        const name_doc* d = nullptr;
        if (members_of(it.name, docs, data, &d).empty() && (d == nullptr || !d->sets.empty())) d = nullptr;
        if (!d) continue;
        auto g = std::find_if(groups.begin(), groups.end(), [&](const name_group& x) { return x.doc == d; });
        if (g == groups.end()) {
            groups.push_back({d, 0, 0, 0, it.name});
            g = groups.end() - 1;
        }
        g->count++;
        kind(it, *g);
    }
    return groups;
}

// "share of Lakeside served by Springfield" for x_1_2.
std::string group_example(const name_group& g, const ojson& data, const vocab& v, rng& r) {
    std::string text = expand(g.doc->text, v, r);
    const auto members = members_of(g.first, {*g.doc}, data, nullptr);
    for (size_t k = 0; k < members.size(); k++) {
        const std::string key = "{" + std::to_string(k) + "}";
        for (size_t p = text.find(key); p != std::string::npos; p = text.find(key, p + members[k].size()))
            text.replace(p, key.size(), members[k]);
    }
    return text;
}

// The description of a set key ("candidate roasteries"), from its param_doc.
std::string set_words(const family& f, const std::string& key, const vocab& v, rng& r) {
    for (const auto& p : f.params)
        if (p.key == key && p.is_set) return expand(p.desc, v, r);
    return key;
}

// The reasoning walks from the text to the model as a person would: what the problem talks about (sets, with their
// sizes), what is given about them (parameters), what is decided (variable groups with their count, kind and a
// first member), the goal, each requirement and the rows it becomes, and what kind of program that makes.
std::string think_block(const family& f, const instance& in, representation rep, task t, rng& r) {
    vocab v = instance_words(f, in);
    std::string s = "<think>\n";
    std::string sets, params;
    for (const auto& p : f.params) {
        if (!in.data.contains(p.key)) continue;
        const std::string desc = expand(p.desc, v, r), unit = p.unit.empty() ? "" : expand(p.unit, v, r);
        if (p.is_set) {
            const ojson& members = in.data[p.key];
            std::string names;
            for (size_t k = 0; k < members.size() && k < 4; k++)
                names += (k ? ", " : "") + (members[k].is_string() ? members[k].get<std::string>() : members[k].dump());
            if (members.size() > 4) names += ", ...";
            sets += fmt::format("- {}: {} ({})\n", desc, members.size(), names);
            continue;
        }
        std::string over;
        if (p.index.size() == 1) over = ", one per " + tidy_words("per " + set_words(f, p.index[0], v, r)).substr(4);
        if (p.index.size() == 2)
            over = p.index[0] == p.index[1]
                       ? ", one for each pair of " + set_words(f, p.index[0], v, r)
                       : fmt::format(", one for each pair of {} and {}", set_words(f, p.index[0], v, r),
                                     set_words(f, p.index[1], v, r));
        params += "- " + desc + (unit.empty() ? "" : " (" + unit + ")") + over + "\n";
    }
    if (!sets.empty())
        s += expand("[The problem is about these sets:|Reading the text, the sets are:]", v, r) + "\n" + sets;
    if (!params.empty()) s += expand("[The data given for them:|What the text gives:]", v, r) + "\n" + params;
    s += expand("[So the decisions are|What has to be decided is] " + f.decisions + ".", v, r) + "\n";
    const auto vars = group_names(in.m.vars, f.var_docs, in.data, [](const variable& x, name_group& g) {
        g.integer += x.type == var_type::integer;
        g.binary += x.type == var_type::binary;
    });
    for (const auto& g : vars) {
        const char* kind = g.binary == g.count ? "binary" : g.integer + g.binary == g.count ? "integer" : "continuous";
        s += fmt::format("- {}: {} {} variable{}, e.g. {} = {}\n", g.doc->prefix, g.count, kind,
                         g.count == 1 ? "" : "s", g.first, group_example(g, in.data, v, r));
    }
    s += expand("[The goal:|Objective:] ", v, r) + expand(f.objective, v, r) + " " +
         (in.m.sense == obj_sense::minimize ? "So the objective is minimised." : "So the objective is maximised.") +
         "\n";
    s += expand("[The requirements stated:|Constraints in the text:]", v, r) + "\n";
    int k = 1;
    for (const auto& c : f.constraints) s += std::to_string(k++) + ". " + expand(c, v, r) + "\n";
    if (!f.integrality.empty()) s += std::to_string(k++) + ". " + expand(f.integrality, v, r) + "\n";
    const auto rows = group_names(in.m.cons, f.con_docs, in.data, [](const constraint&, name_group&) {});
    if (!rows.empty()) {
        s += expand("[They become these groups of rows:|As rows of the model:]", v, r) + "\n";
        for (const auto& g : rows)
            s += fmt::format("- {}: {} row{}, e.g. {} ({})\n", g.doc->prefix, g.count, g.count == 1 ? "" : "s", g.first,
                             group_example(g, in.data, v, r));
    }
    long ints = 0;
    for (const auto& x : in.m.vars) ints += x.type != var_type::continuous;
    s +=
        fmt::format("That is {} variables ({} integer) and {} constraints; ", in.m.vars.size(), ints, in.m.cons.size());
    s += in.m.is_mip() ? "some decisions are integer, so this is a mixed-integer linear program (MILP).\n"
                       : "all decisions are continuous and everything is linear, so this is a linear program (LP).\n";
    if (rep == representation::dps && (t == task::code || t == task::formulation_code))
        s += "The data come from data.json, so the program loads it and builds the model from its keys.\n";
    if (t == task::lp_file) s += "The LP file must list every constraint explicitly with the given numbers.\n";
    return s + "</think>\n\n";
}

std::string model_block(const family& f, const instance& in, bool explicit_instance, rng& r) {
    vocab v = instance_words(f, in);
    std::string s = "<model>\n$$\n" + f.latex + "\n$$\nwhere\n";
    for (const auto& sym : f.latex_symbols) s += "- " + expand(sym, v, r) + "\n";
    if (explicit_instance) s += "\nWith the given data the model reads:\n\n$$\n" + write_latex(in.m) + "$$\n";
    return s + "</model>\n\n";
}

// Content of the first ```<lang> block after `from`, or "".
std::string fenced(const std::string& text, const std::string& lang) {
    const std::string open = "```" + lang + "\n";
    size_t b = text.find(open);
    if (b == std::string::npos) return "";
    b += open.size();
    size_t e = text.find("\n```", b);
    if (e == std::string::npos) return "";
    return text.substr(b, e - b + 1);
}

}  // namespace

std::string render_answer(const family& f, const instance& in, representation rep, task t, dialect d,
                          const verification& label, uint64_t seed, bool reasoned) {
    rng r(seed, hash_name("answer"));
    std::string a = think_block(f, in, rep, t, r);
    if (!reasoned) a.clear();  // drawn all the same: the rest of the answer is the reasoned one's
    const bool dps_file = rep == representation::dps;
    switch (t) {
        case task::formulation:
            a += model_block(f, in, true, r);
            a += result_sentence(label, r) + "\n";
            break;
        case task::formulation_code:
            a += model_block(f, in, false, r);
            a += "```python\n" + render_code(f, in, d, dps_file) + "```\n\n";
            a += result_sentence(label, r) + "\n";
            break;
        case task::code:
            a += "```python\n" + render_code(f, in, d, dps_file) + "```\n\n";
            a += result_sentence(label, r) + "\n";
            break;
        case task::lp_file:
        case task::benchmark: {
            const std::string model = model_block(f, in, false, r);
            if (reasoned) a += model;
            a += "```lp\n" + write_lp(in.m) + "```\n";
            break;
        }
    }
    return a;
}

reexec_result reexec_answer(const std::string& answer, task t, representation rep, const ojson& data,
                            const verification& label, python_runner* py, const std::string& work_dir,
                            const std::string* twin) {
    reexec_result res;
    auto compare = [&](solve_status st, double obj, const char* what) {
        if (st != label.status) {
            res.detail = fmt::format("{}: status {} but the label is {}", what, solve_status_name(st),
                                     solve_status_name(label.status));
            return;
        }
        if (st == solve_status::optimal && !objectives_agree(obj, label.objective)) {
            res.detail = fmt::format("{}: objective {} but the label is {}", what, format_value(obj, 12),
                                     format_value(label.objective, 12));
            return;
        }
        res.ok = true;
    };
    try {
        if (t == task::formulation) {
            const size_t b = answer.find("<model>"), e = answer.find("</model>");
            if (b == std::string::npos || e == std::string::npos) {
                res.detail = "no <model> block";
                return res;
            }
            const std::string block = answer.substr(b, e - b);
            const size_t ex = block.find("With the given data");
            if (ex == std::string::npos) {
                res.detail = "no explicit model in <model>";
                return res;
            }
            model m = parse_latex(block.substr(ex), "answer <model>");
            solve_result s = solve_glpk(m);
            compare(s.status, s.objective, "explicit model");
            if (res.ok) {  // the stated value too
                const std::string want = "**" + label_text(label) + "**";
                const std::string stated = label.status == solve_status::optimal      ? want
                                           : label.status == solve_status::infeasible ? "**infeasible**"
                                                                                      : "**unbounded**";
                if (answer.find(stated, e) == std::string::npos) {
                    res.ok = false;
                    res.detail = "stated result does not match the label";
                }
            }
            return res;
        }
        if (t == task::lp_file || t == task::benchmark) {
            const std::string lp = fenced(answer, "lp");
            if (lp.empty()) {
                res.detail = "no ```lp block";
                return res;
            }
            solve_result s = solve_glpk(read_lp_text(lp, "answer.lp"));
            compare(s.status, s.objective, "LP file");
            return res;
        }
        // code tasks
        const std::string code = twin ? *twin : fenced(answer, "python");
        if (code.empty()) {
            res.detail = "no ```python block";
            return res;
        }
        if (!py) {
            res.detail = "no python with pulp to run the program";
            return res;
        }
        std::filesystem::create_directories(work_dir);
        const std::string file = work_dir + "/answer.py";
        std::ofstream(file) << code;
        if (rep == representation::dps) std::ofstream(work_dir + "/data.json") << data.dump(2);
        python_result pr = py->run(file, 60);
        std::filesystem::remove(file);
        std::filesystem::remove(work_dir + "/data.json");
        if (!pr.ok) {
            res.detail = "program failed: " + pr.error;
            return res;
        }
        std::string status;
        double obj = 0;
        bool has_obj = false;
        if (!parse_program_output(pr.output, &status, &obj, &has_obj)) {
            res.detail = "program printed no status";
            return res;
        }
        solve_status st = solve_status::error;
        for (solve_status x : {solve_status::optimal, solve_status::infeasible, solve_status::unbounded})
            if (status == solve_status_name(x)) st = x;
        if (st == solve_status::optimal && !has_obj) {
            res.detail = "program printed no objective";
            return res;
        }
        compare(st, obj, "program");
    } catch (const error& e) {
        res.ok = false;
        res.detail = e.what();
    }
    return res;
}

std::string render_cpt_document(const family& f, const instance& in, const verification& label, uint64_t seed) {
    rng r(seed, hash_name("cpt"));
    vocab v = instance_words(f, in);
    const representation rep = r.chance(0.5) ? representation::dp : representation::dt;
    std::string d = "# " + f.title + ": " + capitalise(expand(v.count("org") ? "{org}" : "a case", v, r)) + "\n\n";
    d += "## Problem\n\n" + render_problem(f, in, rep, false, seed) + "\n";
    d += "## Formulation\n\n" + expand("[We decide|The decision variables describe] " + f.decisions + ".", v, r) +
         "\n\n";
    d += "$$\n" + f.latex + "\n$$\n\nwhere\n\n";
    for (const auto& sym : f.latex_symbols) d += "- " + expand(sym, v, r) + "\n";
    d += "\nThe constraints say:\n\n";
    for (const auto& c : f.constraints) d += "- " + expand(c, v, r) + "\n";
    if (!f.integrality.empty()) d += "- " + expand(f.integrality, v, r) + "\n";
    d += "\nThe objective: " + expand(f.objective, v, r) + "\n\n";
    d += fmt::format("The instance has {} variables ({}) and {} constraints with {} nonzero coefficients.\n\n",
                     in.m.vars.size(), in.m.is_mip() ? "mixed-integer" : "all continuous", in.m.cons.size(),
                     in.m.nonzeros());
    // The instance as a solver reads it: the document then shows, as OR texts and model libraries do, where each
    // number of the problem statement goes in a model file.
    d += "## Model file\n\n" +
         expand(
             "[The same model as a CPLEX LP file|The instance written as a CPLEX LP file|In LP format], "
             "[ready for a solver|as a solver reads it]:",
             v, r) +
         "\n\n```lp\n" + write_lp(in.m) + "```\n\n";
    d += "## Solution\n\n";
    if (label.status != solve_status::optimal) {
        d += label.status == solve_status::infeasible
                 ? "Both Cbc/Clp and GLPK prove the problem **infeasible**: the requirements contradict each other, "
                   "so the data (or the requirements) must change before a plan exists.\n"
                 : "Both Clp and GLPK prove the problem **unbounded**: some activity improves the objective without "
                   "limit, which usually means a missing constraint.\n";
        return d;
    }
    d += "Optimal objective value (Cbc/Clp, confirmed by GLPK): **" + format_value(label.objective) + "**.\n\n";
    d += "| variable | meaning | value |\n|---|---|---|\n";
    auto meaning = [&](const std::string& name, const std::vector<name_doc>& docs) {
        const name_doc* doc = nullptr;
        std::vector<std::string> mem = members_of(name, docs, in.data, &doc);
        if (!doc) return std::string("");
        std::string t = expand(doc->text, v, r);
        for (size_t k = 0; k < mem.size(); k++) {
            const std::string ph = fmt::format("{{{}}}", k);
            size_t p;
            while ((p = t.find(ph)) != std::string::npos) t.replace(p, ph.size(), mem[k]);
        }
        return t;
    };
    int shown = 0;
    for (size_t j = 0; j < in.m.vars.size(); j++) {
        const double x = label.coin.x[j];
        if (std::fabs(x) < 1e-9) continue;
        if (shown++ >= 40) break;
        d += "| `" + in.m.vars[j].name + "` | " + md_cell(meaning(in.m.vars[j].name, f.var_docs)) + " | " +
             format_value(x, 8) + " |\n";
    }
    d += "\nAll other variables are zero.\n\n## Interpretation\n\n";
    std::vector<std::string> binding;
    for (size_t i = 0; i < in.m.cons.size(); i++)
        if (is_binding(in.m, (int)i, label.coin.x, label.coin.activity[i]))
            binding.push_back("`" + in.m.cons[i].name + "` (" + meaning(in.m.cons[i].name, f.con_docs) + ")");
    d += fmt::format("{} of {} constraints are binding: ", binding.size(), in.m.cons.size());
    if (binding.size() > 12) {
        binding.resize(12);
        binding.push_back("...");
    }
    d += join_and(binding) + ". These are the limits that shape the plan; the others have slack.\n\n";
    if (!in.m.is_mip() && !label.coin.dual.empty()) {
        d += "Shadow prices (duals: change of the optimal objective per unit increase of the right-hand side):\n\n";
        d += "| constraint | meaning | shadow price |\n|---|---|---|\n";
        int k = 0;
        for (size_t i = 0; i < in.m.cons.size() && k < 25; i++) {
            if (std::fabs(label.coin.dual[i]) < 1e-9) continue;
            k++;
            d += "| `" + in.m.cons[i].name + "` | " + md_cell(meaning(in.m.cons[i].name, f.con_docs)) + " | " +
                 format_value(label.coin.dual[i], 8) + " |\n";
        }
        if (k == 0) d += "| (all zero) | | |\n";
        d += "\nReduced costs of variables at zero (how much their objective coefficient must improve before they "
             "enter the solution):\n\n| variable | reduced cost |\n|---|---|\n";
        k = 0;
        for (size_t j = 0; j < in.m.vars.size() && k < 25; j++) {
            if (std::fabs(label.coin.x[j]) > 1e-9 || std::fabs(label.coin.reduced_cost[j]) < 1e-9) continue;
            k++;
            d += "| `" + in.m.vars[j].name + "` | " + format_value(label.coin.reduced_cost[j], 8) + " |\n";
        }
        if (k == 0) d += "| (none) | |\n";
        d += "\n";
    } else {
        d += "For a mixed-integer program duals are not defined; sensitivity is studied by re-solving with changed "
             "data.\n";
    }
    return d;
}

}  // namespace trex::optmodel
