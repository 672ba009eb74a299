#include "trex/eval/prompts.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <unordered_map>

#include "trex/base/error.hpp"
#include "trex/base/files.hpp"

namespace trex::eval {

namespace fs = std::filesystem;

namespace {

std::string prompts_dir() { return std::string(TREX_SOURCE_DIR) + "/prompts"; }

void replace_all(std::string& s, const std::string& from, const std::string& to) {
    size_t p = 0;
    while ((p = s.find(from, p)) != std::string::npos) {
        s.replace(p, from.size(), to);
        p += to.size();
    }
}

std::string trim_nl(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    size_t b = 0;
    while (b < s.size() && s[b] == '\n') b++;
    return s.substr(b);
}

}  // namespace

prompt_template load_prompt(const std::string& name_or_path) {
    std::string path = name_or_path;
    std::error_code ec;
    if (!fs::exists(path, ec) && name_or_path.find('/') == std::string::npos)
        path = prompts_dir() + "/" + name_or_path + ".txt";
    TREX_CHECK(fs::is_regular_file(path, ec), "prompt template '{}': no such file (known: {})", name_or_path,
               fmt::join(list_prompts(), ", "));
    const std::string text = read_file(path);
    prompt_template t;
    t.path = path;
    t.name = fs::path(path).stem().string();
    std::map<std::string, std::string> sec;
    std::string cur;
    std::istringstream in(text);
    std::string line;
    int ln = 0;
    bool any = false;
    while (std::getline(in, line)) {
        ln++;
        if (line.rfind("=== ", 0) == 0 && line.size() > 8 && line.compare(line.size() - 4, 4, " ===") == 0) {
            cur = line.substr(4, line.size() - 8);
            TREX_CHECK(cur == "config" || cur == "system" || cur == "user" || cur == "data" || cur == "example",
                       "{}:{}: unknown section '{}' (config, system, user, data, example)", path, ln, cur);
            TREX_CHECK(!sec.count(cur), "{}:{}: section '{}' appears twice", path, ln, cur);
            sec[cur] = "";
            any = true;
            continue;
        }
        TREX_CHECK(any || line.find_first_not_of(" \t\r") == std::string::npos,
                   "{}:{}: text before the first '=== section ===' line", path, ln);
        if (any) sec[cur] += line + "\n";
    }
    TREX_CHECK(sec.count("user") && !trim_nl(sec["user"]).empty(), "{}: no '=== user ===' section", path);
    TREX_CHECK(sec["user"].find("{{question}}") != std::string::npos, "{}: the user section has no {{{{question}}}}",
               path);
    t.system = trim_nl(sec["system"]);
    t.user = trim_nl(sec["user"]) + "\n";
    t.data = trim_nl(sec["data"]);
    t.example = sec["example"];
    std::istringstream cfg(sec["config"]);
    ln = 0;
    while (std::getline(cfg, line)) {
        if (line.empty() || line[0] == '#') continue;
        const size_t c = line.find(':');
        TREX_CHECK(c != std::string::npos, "{}: config line '{}' is not 'key: value'", path, line);
        std::string k = line.substr(0, c), v = line.substr(c + 1);
        while (!v.empty() && std::isspace((unsigned char)v.front())) v.erase(0, 1);
        while (!v.empty() && std::isspace((unsigned char)v.back())) v.pop_back();
        if (k == "artefact") {
            TREX_CHECK(v == "python" || v == "lp" || v == "mps" || v == "mathprog" || v.empty(),
                       "{}: artefact '{}' (python, lp, mps, mathprog)", path, v);
            t.artefact = v;
        } else {
            throw_error(fmt::format("{}: unknown config key '{}'", path, k));
        }
    }
    return t;
}

std::vector<std::string> list_prompts() {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(prompts_dir(), ec))
        if (e.path().extension() == ".txt") out.push_back(e.path().stem().string());
    std::sort(out.begin(), out.end());
    return out;
}

namespace {
// A placeholder marker that no inserted text contains ("\x01" + c + "\x01"; written out, "\x01E" would be one
// hex escape).
std::string mark(char c) { return std::string{'\x01', c, '\x01'}; }
}  // namespace

std::vector<chat_message> render_prompt(const prompt_template& t, const eval_item& item, const std::string& data_json,
                                        const std::vector<const fewshot_example*>& shots) {
    std::string examples;
    for (const fewshot_example* e : shots) {
        std::string x = t.example.empty() ? "Example problem:\n{{example_question}}\n\nExample answer:\n{{example_answer}}\n\n"
                                          : t.example;
        // answer first: a question containing the literal placeholder text must not be expanded
        replace_all(x, "{{example_answer}}", mark('A'));
        replace_all(x, "{{example_question}}", mark('Q'));
        replace_all(x, mark('Q'), e->question);
        replace_all(x, mark('A'), e->answer);
        examples += x;
    }
    std::string data;
    if (!data_json.empty() && !t.data.empty()) data = "\n" + t.data + "\n";
    std::string user = t.user;
    // placeholders are replaced via markers so that inserted texts are never scanned again
    replace_all(user, "{{examples}}", mark('E'));
    replace_all(user, "{{question}}", mark('Q'));
    replace_all(user, "{{data}}", mark('D'));
    replace_all(user, "{{data_json}}", mark('J'));
    std::string data_text = data;
    replace_all(data_text, "{{data_json}}", mark('J'));
    replace_all(user, mark('D'), data_text);
    replace_all(user, mark('E'), examples);
    replace_all(user, mark('Q'), item.question);
    replace_all(user, mark('J'), data_json);
    std::vector<chat_message> msgs;
    if (!t.system.empty()) msgs.push_back({"system", t.system});
    msgs.push_back({"user", user});
    return msgs;
}

// ---------------------------------------------------------------------------------------------------------------

namespace {

std::vector<std::string> words_of(const std::string& s) {
    std::vector<std::string> w;
    std::string cur;
    for (unsigned char c : s) {
        if (std::isalnum(c)) cur += (char)std::tolower(c);
        else if (!cur.empty()) {
            w.push_back(cur);
            cur.clear();
        }
    }
    if (!cur.empty()) w.push_back(cur);
    return w;
}

std::string normalised(const std::string& s) {
    std::string out;
    for (const auto& w : words_of(s)) out += w + " ";
    return out;
}

uint64_t term_hash(const std::string& s) { return XXH64(s.data(), s.size(), 7); }

std::unordered_map<uint64_t, int> term_counts(const std::string& text) {
    std::unordered_map<uint64_t, int> tf;
    const auto w = words_of(text);
    for (size_t i = 0; i < w.size(); i++) {
        tf[term_hash(w[i])]++;
        if (i + 1 < w.size()) tf[term_hash(w[i] + " " + w[i + 1])]++;
    }
    return tf;
}

const char* text_field(const ojson& r, std::initializer_list<const char*> keys, std::string* out) {
    for (const char* k : keys)
        if (r.contains(k) && r[k].is_string()) {
            *out = r[k].get<std::string>();
            return k;
        } else if (r.contains(k) && r[k].is_number()) {
            *out = r[k].dump();
            return k;
        }
    return nullptr;
}

}  // namespace

fewshot_pool::fewshot_pool(const std::string& path) {
    const std::string text = read_file(path);
    std::vector<std::string> records;
    size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] == '[') {
        std::vector<json_element> els;
        std::string why;
        TREX_CHECK(split_json_elements(text, &els, &why), "{}:{}", path, why);
        for (auto& e : els) records.push_back(e.text);
    } else {
        std::istringstream in(text);
        std::string line;
        while (std::getline(in, line))
            if (line.find_first_not_of(" \t\r") != std::string::npos) records.push_back(line);
    }
    long n = 0, bad = 0;
    for (const auto& rt : records) {
        n++;
        ojson r;
        try {
            r = ojson::parse(rt);
        } catch (const std::exception&) {
            bad++;
            continue;
        }
        fewshot_example e;
        if (r.contains("id")) e.id = r["id"].is_string() ? r["id"].get<std::string>() : r["id"].dump();
        if (r.contains("messages") && r["messages"].is_array()) {
            for (const auto& m : r["messages"]) {
                const std::string role = m.value("role", "");
                if (role == "user" && e.question.empty()) e.question = m.value("content", "");
                else if (role == "assistant" && e.answer.empty()) e.answer = m.value("content", "");
            }
        } else {
            text_field(r, {"question", "en_question", "Question", "problem"}, &e.question);
            text_field(r, {"answer", "solution", "completion", "en_answer", "Answer"}, &e.answer);
        }
        if (e.question.empty() || e.answer.empty()) {
            bad++;
            continue;
        }
        if (e.id.empty()) e.id = fmt::format("shot-{}", n);
        ex_.push_back(std::move(e));
    }
    TREX_CHECK(!ex_.empty(), "{}: no usable few-shot examples ({} records, {} unusable)", path, n, bad);
    // document frequencies
    std::unordered_map<uint64_t, int> df;
    std::vector<std::unordered_map<uint64_t, int>> tfs;
    for (const auto& e : ex_) {
        tfs.push_back(term_counts(e.question));
        for (auto& [t, c] : tfs.back()) df[t]++;
        norm_.push_back(normalised(e.question));
    }
    const double N = (double)ex_.size();
    for (auto& [t, d] : df) idf_.push_back({t, std::log((N + 1) / (d + 0.5))});
    std::sort(idf_.begin(), idf_.end());
    for (const auto& e : ex_) vecs_.push_back(embed(e.question));
}

fewshot_pool::vec fewshot_pool::embed(const std::string& text) const {
    vec v;
    double norm = 0;
    for (auto& [t, c] : term_counts(text)) {
        auto it = std::lower_bound(idf_.begin(), idf_.end(), std::make_pair(t, -1e300));
        const double idf = (it != idf_.end() && it->first == t) ? it->second : std::log(((double)ex_.size() + 1) / 0.5);
        const double w = (1 + std::log((double)c)) * idf;
        v.w.push_back({t, w});
        norm += w * w;
    }
    norm = std::sqrt(norm);
    for (auto& [t, w] : v.w) w /= norm > 0 ? norm : 1;
    std::sort(v.w.begin(), v.w.end());
    return v;
}

std::vector<const fewshot_example*> fewshot_pool::retrieve(const std::string& question, const std::string& id,
                                                           int k) const {
    const vec q = embed(question);
    const std::string nq = normalised(question);
    std::vector<std::pair<double, size_t>> scored;
    for (size_t i = 0; i < ex_.size(); i++) {
        if (ex_[i].id == id || norm_[i] == nq) continue;
        double dot = 0;
        size_t a = 0, b = 0;
        const auto& x = vecs_[i].w;
        while (a < q.w.size() && b < x.size()) {
            if (q.w[a].first == x[b].first) dot += q.w[a++].second * x[b++].second;
            else if (q.w[a].first < x[b].first) a++;
            else b++;
        }
        if (dot >= 0.98) continue;
        scored.push_back({-dot, i});
    }
    std::sort(scored.begin(), scored.end());
    std::vector<const fewshot_example*> out;
    for (size_t i = 0; i < scored.size() && (int)out.size() < k; i++) out.push_back(&ex_[scored[i].second]);
    return out;
}

}  // namespace trex::eval
