#include "trex/eval/extract.hpp"

#include <cctype>
#include <cstring>
#include <vector>

#include "trex/base/strings.hpp"

namespace trex::eval {

namespace {

std::string kind_of_lang(const std::string& lang_raw) {
    const std::string l = ascii_lower(trim(lang_raw));
    if (l == "python" || l == "py" || l == "python3" || l == "gurobipy" || l == "pulp") return "python";
    if (l == "lp" || l == "cplex" || l == "cplex-lp" || l == "cplex_lp") return "lp";
    if (l == "mps") return "mps";
    if (l == "mathprog" || l == "gmpl" || l == "ampl" || l == "mod" || l == "glpk") return "mathprog";
    return "?";  // unknown label: sniff
}

bool has_line_starting(const std::string& lt, const char* word) {
    size_t p = 0;
    const std::string w = word;
    while (p < lt.size()) {
        size_t e = lt.find('\n', p);
        if (e == std::string::npos) e = lt.size();
        size_t b = p;
        while (b < e && (lt[b] == ' ' || lt[b] == '\t')) b++;
        if (lt.compare(b, w.size(), w) == 0 && (b + w.size() == e || !std::isalnum((unsigned char)lt[b + w.size()])))
            return true;
        p = e + 1;
    }
    return false;
}

struct candidate {
    size_t pos;
    std::string kind;
    std::string text;
};

}  // namespace

std::string sniff_kind(const std::string& text) {
    const std::string lt = ascii_lower(text);
    if (lt.find("import ") != std::string::npos || lt.find("print(") != std::string::npos ||
        lt.find("def ") != std::string::npos)
        return "python";
    if (has_line_starting(lt, "rows") && has_line_starting(lt, "columns")) return "mps";
    const bool objective = has_line_starting(lt, "minimize") || has_line_starting(lt, "maximize") ||
                           has_line_starting(lt, "minimise") || has_line_starting(lt, "maximise") ||
                           has_line_starting(lt, "min") || has_line_starting(lt, "max");
    const bool st = has_line_starting(lt, "subject to") || has_line_starting(lt, "such that") ||
                    has_line_starting(lt, "st") || has_line_starting(lt, "s.t.");
    if (has_line_starting(lt, "var") &&
        (lt.find("s.t.") != std::string::npos || lt.find("subject to") != std::string::npos) &&
        lt.find(';') != std::string::npos)
        return "mathprog";
    if (objective && st) return "lp";
    return "";
}

artefact extract_artefact(const std::string& completion, const std::string& prefer) {
    std::string t = completion;
    // drop reasoning
    bool unterminated = false;
    while (true) {
        const size_t b = t.find("<think>");
        const size_t e = t.find("</think>");
        if (e != std::string::npos && (b == std::string::npos || b > e)) {
            t.erase(0, e + 8);  // closing tag only: everything before is reasoning
            continue;
        }
        if (b == std::string::npos) break;
        if (e == std::string::npos) {
            // unterminated reasoning: only a complete block written inside it can be the answer
            t.erase(0, b + 7);
            unterminated = true;
            break;
        }
        t.erase(b, e + 8 - b);
    }
    std::vector<candidate> cands;
    // fenced blocks
    size_t p = 0;
    while (true) {
        const size_t b = t.find("```", p);
        if (b == std::string::npos) break;
        const size_t nl = t.find('\n', b + 3);
        if (nl == std::string::npos) break;
        const std::string lang = t.substr(b + 3, nl - b - 3);
        size_t e = t.find("```", nl + 1);
        const size_t end = e == std::string::npos ? t.size() : e;
        std::string body = t.substr(nl + 1, end - nl - 1);
        std::string kind = kind_of_lang(lang);
        if (kind == "?") kind = sniff_kind(body);
        if (!kind.empty() && !(unterminated && e == std::string::npos)) cands.push_back({b, kind, body});
        if (e == std::string::npos) break;
        p = e + 3;
    }
    // protocol tags (their content replaces fenced candidates inside them)
    for (const char* tag : {"python", "lp", "mps", "mathprog"}) {
        const std::string open = std::string("<") + tag + ">", close = std::string("</") + tag + ">";
        size_t q = 0;
        while (true) {
            const size_t b = t.find(open, q);
            if (b == std::string::npos) break;
            const size_t e = t.find(close, b);
            const size_t end = e == std::string::npos ? t.size() : e;
            std::string body = t.substr(b + open.size(), end - b - open.size());
            // unwrap a fence
            const size_t f = body.find("```");
            if (f != std::string::npos) {
                const size_t nl = body.find('\n', f);
                const size_t fe = nl == std::string::npos ? std::string::npos : body.find("```", nl + 1);
                if (nl != std::string::npos)
                    body = body.substr(nl + 1, fe == std::string::npos ? std::string::npos : fe - nl - 1);
            }
            // fenced candidates inside this tag are the same artefact
            std::vector<candidate> keep;
            for (auto& c : cands)
                if (c.pos < b || c.pos > end) keep.push_back(std::move(c));
            cands = std::move(keep);
            if (!(unterminated && e == std::string::npos)) cands.push_back({b, tag, body});
            if (e == std::string::npos) break;
            q = e + close.size();
        }
    }
    artefact best;
    size_t best_pos = 0;
    bool have = false, have_pref = false;
    for (const auto& c : cands) {
        if (trim(c.text).empty()) continue;
        const bool pref = !prefer.empty() && c.kind == prefer;
        if (have_pref && !pref) continue;
        if (!have || (pref && !have_pref) || c.pos >= best_pos) {
            best = {c.kind, c.text};
            best_pos = c.pos;
            have = true;
            have_pref = have_pref || pref;
        }
    }
    if (have) return best;
    if (unterminated) return {};
    // no block: the whole completion, when it is nothing but code or a model file
    const std::string whole = trim(t);
    std::string k = sniff_kind(whole);
    if (k == "python" && whole.rfind("import ", 0) != 0 && whole.rfind("from ", 0) != 0) k = "";
    if (!k.empty()) return {k, whole + "\n"};
    return {};
}

namespace {

// The longest ```python ... ``` block of `t` (python_only), or the longest ``` ... ``` block; false when none.
bool longest_fence(const std::string& t, bool python_only, std::string* out) {
    bool found = false;
    size_t p = 0;
    while (true) {
        const size_t b = t.find("```", p);
        if (b == std::string::npos) break;
        size_t body = b + 3;
        if (python_only) {
            if (t.compare(body, 6, "python") != 0) {
                p = b + 3;
                continue;
            }
            body += 6;
        }
        const size_t e = t.find("```", body);
        if (e == std::string::npos) break;
        const std::string text = trim(t.substr(body, e - body));  // an info string stays, as in their regex
        if (!found || text.size() > out->size()) *out = text;
        found = true;
        p = e + 3;
    }
    return found;
}

}  // namespace

artefact extract_trex_protocol(const std::string& completion) {
    // the text after the last </think> (or </redacted_reasoning>), when there is one
    size_t cut = std::string::npos, len = 0;
    for (const char* tag : {"</think>", "</redacted_reasoning>"}) {
        const size_t p = completion.rfind(tag);
        if (p != std::string::npos && (cut == std::string::npos || p > cut)) {
            cut = p;
            len = std::strlen(tag);
        }
    }
    const bool split = cut != std::string::npos;
    const std::string after = split ? trim(completion.substr(cut + len)) : completion;
    std::string code;
    for (bool python_only : {true, false})
        for (const std::string* c : {&after, &completion})
            if (longest_fence(*c, python_only, &code)) return {"python", code + "\n"};
    if (split && !after.empty()) return {"python", after + "\n"};
    if (trim(completion).empty()) return {};
    return {"python", completion};
}

artefact extract_orlm_protocol(const std::string& completion) {
    const size_t start = completion.find("```python");
    if (start == std::string::npos) return {};
    const size_t body = start + 9;
    const size_t end = completion.find("```", body);
    const size_t stop = end != std::string::npos ? end : (completion.empty() ? 0 : completion.size() - 1);
    const std::string code = stop > body ? completion.substr(body, stop - body) : "";
    if (trim(code).empty()) return {};
    return {"python", code};
}

}  // namespace trex::eval
