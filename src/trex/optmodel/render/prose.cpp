#include "trex/optmodel/render/prose.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "trex/optmodel/ir/format.hpp"

namespace trex::optmodel {

doc_text doc_words(const param_doc& p, const vocab& v, rng& r) {
    return {expand(p.desc, v, r), expand(p.unit, v, r)};
}

std::string value_text(const ojson& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number()) return format_value(v.get<double>());
    return v.dump();
}

std::string with_unit(const std::string& value, const std::string& unit) {
    if (unit.empty()) return value;
    if (unit == "$") return "$" + value;
    if (unit == "%") return value + "%";
    return value + " " + unit;
}

namespace {

std::string absent_sentence(const param_doc& p, const ojson& data, const vocab& v, rng& r) {
    if (p.absent.empty() || p.index.size() != 1) return "";
    std::vector<std::string> missing;
    const ojson& map = data.at(p.key);
    for (const auto& mem : data.at(p.index[0]))
        if (!map.contains(mem.get<std::string>())) missing.push_back(mem.get<std::string>());
    if (missing.empty()) return "";
    vocab w = v;
    w["have"] = missing.size() == 1 ? "has" : "have";
    return capitalise(join_and(missing)) + " " + expand(p.absent, w, r) + ".";
}

std::string then(const std::string& a, const std::string& b) {
    return a.empty() ? b : b.empty() ? a : a + " " + b;
}

// " ($)", " (crates)", "": the unit once, after a description.
std::string unit_note(const std::string& unit) {
    return unit.empty() ? "" : " (" + unit + ")";
}

// The description of a set ("delivery areas"), or a neutral word when the family documents none.
std::string set_label(const vocab& v, const std::string& set) {
    const auto it = v.find(set + "_label");
    return it == v.end() ? "items" : it->second;
}

bool numeric_map(const ojson& map) {
    return std::all_of(map.begin(), map.end(), [](const ojson& x) { return x.is_number(); });
}

enum class order { given, up, down };

// A map's keys in data order, or (numeric maps) by value, ties in data order.
std::vector<std::string> keys_in(const ojson& map, order o) {
    std::vector<std::string> keys;
    for (auto it = map.begin(); it != map.end(); ++it) keys.push_back(it.key());
    if (o == order::given || !numeric_map(map)) return keys;
    std::stable_sort(keys.begin(), keys.end(), [&](const std::string& a, const std::string& b) {
        const double x = as_double(map.at(a)), y = as_double(map.at(b));
        return o == order::up ? x < y : x > y;
    });
    return keys;
}

// "Kingston 10, Clinton and Salem both 14, and Dover 20": name before value, neighbours with equal values said
// once; `unit_each` writes the unit with every value (else the caller states it once).
std::string name_value_list(const ojson& map, const std::vector<std::string>& keys, const std::string& unit,
                            bool unit_each) {
    std::vector<std::string> parts;
    for (size_t i = 0; i < keys.size();) {
        const std::string val = value_text(map.at(keys[i]));
        std::vector<std::string> names;
        size_t j = i;
        while (j < keys.size() && value_text(map.at(keys[j])) == val) names.push_back(keys[j++]);
        const std::string shown = unit_each ? with_unit(val, unit) : val;
        const std::string both = names.size() == 1 ? "" : names.size() == 2 ? " both" : " all";
        parts.push_back(join_and(names) + both + " " + shown);
        i = j;
    }
    return join_and(parts);
}

// "$3 for A, $5 for B and $7 for C": value first, unit with every value, data order.
std::string value_name_list(const ojson& map, const std::string& unit) {
    std::vector<std::string> parts;
    for (auto it = map.begin(); it != map.end(); ++it)
        parts.push_back(with_unit(value_text(it.value()), unit) + " for " + it.key());
    return join_and(parts);
}

// "<word> <label>" names sharing one leading word: the word (empty when the names are not all of that form).
std::string shared_head(const std::vector<std::string>& names) {
    const size_t sp = names[0].find(' ');
    if (names.size() < 2 || sp == std::string::npos || sp == 0) return "";
    const std::string head = names[0].substr(0, sp + 1);
    for (const auto& n : names)
        if (n.size() <= head.size() || n.compare(0, head.size(), head) != 0 ||
            n.find(' ', head.size()) != std::string::npos)
            return "";
    return head.substr(0, sp);
}

std::string plural_of(const std::string& word) {
    const char last = word.back();
    const bool vowel_before = word.size() > 1 && std::string("aeiou").find(word[word.size() - 2]) != std::string::npos;
    if (last == 'y' && !vowel_before) return word.substr(0, word.size() - 1) + "ies";
    if (last == 's' || last == 'x' || last == 'h') return word + "es";
    return word + "s";
}

// Whether the labels run without a gap: 101, 102, 103 or A, B, C.
bool consecutive(const std::vector<std::string>& labels) {
    for (size_t i = 1; i < labels.size(); i++) {
        const std::string &a = labels[i - 1], &b = labels[i];
        const bool digits = std::all_of(a.begin(), a.end(), ::isdigit) && std::all_of(b.begin(), b.end(), ::isdigit) &&
                            !a.empty() && !b.empty() && a.size() < 9 && b.size() < 9;
        const bool letter = a.size() == 1 && b.size() == 1 && std::isupper((unsigned char)a[0]) && b[0] == a[0] + 1;
        if (!(digits && std::stol(b) == std::stol(a) + 1) && !letter) return false;
    }
    return true;
}

// Names that share a leading word said once: "flight 101, flight 104 and flight 106" -> "flights 101, 104 and 106";
// a gapless run as a range when `ranges` ("duties A to O"); other lists joined as they are.
std::string join_members(const std::vector<std::string>& names, bool ranges = false) {
    const std::string head = shared_head(names);
    if (head.empty()) return join_and(names);
    std::vector<std::string> labels;
    for (const auto& n : names) labels.push_back(n.substr(head.size() + 1));
    if (ranges && names.size() > 2 && consecutive(labels))
        return plural_of(head) + " " + labels.front() + " to " + labels.back();
    return plural_of(head) + " " + join_and(labels);
}

std::string set_sentence(const param_doc& p, const ojson& data, const vocab& v, rng& r) {
    std::vector<std::string> names;
    for (const auto& x : data.at(p.key)) names.push_back(x.get<std::string>());
    const std::string desc = expand(p.desc, v, r);
    if (names.size() == 1) return capitalise(desc) + ": " + names[0] + ".";
    const std::string n = std::to_string(names.size());
    return expand("[The " + n + " " + desc + " are|There are " + n + " " + desc + ":|We have " + n + " " + desc +
                      ":|The " + desc + " (" + n + " in all) are]",
                  v, r) +
           " " + join_members(names, true) + ".";
}

std::string scalar_sentence(const param_doc& p, const ojson& data, const vocab& v, rng& r) {
    const doc_text d = doc_words(p, v, r);
    return expand("[The " + d.desc + " is|" + capitalise(d.desc) + ":|The " + d.desc + " is set at]", v, r) + " " +
           with_unit(value_text(data.at(p.key)), d.unit) + ".";
}

// One parameter over a set, by one of four plans (value first in data order; name first in data order; sorted
// largest or smallest first).
std::string one_param(const param_doc& p, const ojson& data, const vocab& v, rng& r) {
    const doc_text d = doc_words(p, v, r);
    const ojson& map = data.at(p.key);
    const std::string absent = absent_sentence(p, data, v, r);
    if (map.empty()) return absent;
    const int plan = numeric_map(map) && map.size() > 1 ? r.int_in(0, 3) : 0;
    std::string s;
    if (plan == 0) {
        s = expand("[The " + d.desc + " is|" + capitalise(d.desc) + ":|As for the " + d.desc + ", it is]", v, r) + " " +
            value_name_list(map, d.unit) + ".";
    } else if (plan == 1) {
        s = capitalise(d.desc) + unit_note(d.unit) + ": " +
            name_value_list(map, keys_in(map, order::given), d.unit, false) + ".";
    } else {
        const bool down = plan == 2;
        s = expand(down ? "[The " + d.desc + unit_note(d.unit) + ", [largest|highest] first|By " + d.desc +
                              unit_note(d.unit) + ", from the [largest|highest] down]"
                        : "[The " + d.desc + unit_note(d.unit) + ", [smallest|lowest] first|By " + d.desc +
                              unit_note(d.unit) + ", from the [smallest|lowest] up]",
                   v, r) +
            ": " + name_value_list(map, keys_in(map, down ? order::down : order::up), d.unit, false) + ".";
    }
    return then(s, absent);
}

// Two string parameters of the group whose values only repeat the member's name ("Hudson->Oxford" with start
// Hudson and end Oxford): their positions in the group, or {-1, -1}.
std::pair<int, int> arc_ends(const std::vector<const param_doc*>& group, const ojson& data) {
    const ojson& members = data.at(group[0]->index[0]);
    for (size_t i = 0; i < group.size(); i++)
        for (size_t j = 0; j < group.size(); j++) {
            if (i == j) continue;
            const ojson& a = data.at(group[i]->key);
            const ojson& b = data.at(group[j]->key);
            bool all = !members.empty();
            for (const auto& mem : members) {
                const std::string m = mem.get<std::string>();
                if (!a.contains(m) || !b.contains(m) || !a.at(m).is_string() || !b.at(m).is_string() ||
                    a.at(m).get<std::string>() + "->" + b.at(m).get<std::string>() != m) {
                    all = false;
                    break;
                }
            }
            if (all) return {(int)i, (int)j};
        }
    return {-1, -1};
}

bool every_member_has_all(const std::vector<const param_doc*>& group, const ojson& data) {
    for (const auto& mem : data.at(group[0]->index[0]))
        for (const auto* q : group)
            if (!data.at(q->key).contains(mem.get<std::string>())) return false;
    return true;
}

// Several parameters over one set as a legend stated once and one record per member, listed or inline.
std::string records(const std::vector<const param_doc*>& group, const ojson& data, const vocab& v, rng& r) {
    std::vector<std::string> legend;
    for (const auto* q : group) {
        const doc_text d = doc_words(*q, v, r);
        legend.push_back(d.desc + unit_note(d.unit));
    }
    const std::string set = set_label(v, group[0]->index[0]);
    const std::string lead =
        expand("[For each of the " + set + ", the " + join_and(legend) + ":|Each of the " + set + " with its " +
                   join_and(legend) + ":|" + capitalise(set) + ", with " + join_and(legend) + " in this order:]",
               v, r);
    const bool lines = r.chance(0.5);
    std::string out = lead;
    bool first = true;
    for (const auto& mem : data.at(group[0]->index[0])) {
        const std::string m = mem.get<std::string>();
        std::vector<std::string> vals;
        for (const auto* q : group) vals.push_back(value_text(data.at(q->key).at(m)));
        out += (lines ? "\n- " : first ? " " : "; ") + m + ": " + join_and(vals);
        first = false;
    }
    return lines ? out : out + ".";
}

// Several parameters over one set, a sentence per member: "Hudson: capacity 40 crates and cost $6." or "For
// Hudson, the capacity is 40 crates and the cost is $6."
std::string member_sentences(const std::vector<const param_doc*>& group, const ojson& data, const vocab& v, rng& r) {
    std::vector<doc_text> ds;
    for (const auto* q : group) ds.push_back(doc_words(*q, v, r));
    const int style = r.int_in(0, 1);
    std::string out;
    for (const auto& mem : data.at(group[0]->index[0])) {
        const std::string m = mem.get<std::string>();
        std::vector<std::string> parts;
        for (size_t k = 0; k < group.size(); k++) {
            const ojson& map = data.at(group[k]->key);
            if (!map.contains(m)) continue;
            const std::string val = with_unit(value_text(map.at(m)), ds[k].unit);
            parts.push_back(style == 0 ? ds[k].desc + " " + val : "the " + ds[k].desc + " is " + val);
        }
        if (parts.empty()) continue;
        out += (out.empty() ? "" : " ") +
               (style == 0 ? m + ": " + join_and(parts) + "." : "For " + m + ", " + join_and(parts) + ".");
    }
    return out;
}

// Several parameters over one set: records (every member has every value), one list per parameter, or a sentence
// per member (small sets, or now and then).
std::string param_group(std::vector<const param_doc*> group, const ojson& data, const vocab& v, rng& r) {
    std::string naming;
    const auto [from, to] = arc_ends(group, data);
    if (from >= 0) {
        const doc_text a = doc_words(*group[(size_t)from], v, r), b = doc_words(*group[(size_t)to], v, r);
        const std::string set = set_label(v, group[0]->index[0]);
        naming =
            expand("[The " + set + " are named|The " + set + " are written as] " + a.desc + "->" + b.desc + ".", v, r);
        const param_doc* pf = group[(size_t)from];
        const param_doc* pt = group[(size_t)to];
        group.erase(std::remove_if(group.begin(), group.end(), [&](const param_doc* q) { return q == pf || q == pt; }),
                    group.end());
    }
    if (group.empty()) return naming;
    if (group.size() == 1) return then(naming, one_param(*group[0], data, v, r));
    const size_t n = data.at(group[0]->index[0]).size();
    const bool dense = every_member_has_all(group, data);
    int plan = r.int_in(0, 2);  // 0 records, 1 lists, 2 sentences
    if (plan == 2 && n > 4 && !r.chance(0.25)) plan = r.int_in(0, 1);
    if (plan == 0 && !dense) plan = 1;
    std::string body;
    if (plan == 0) {
        body = records(group, data, v, r);
    } else if (plan == 1) {
        for (const auto* q : group) body = then(body, one_param(*q, data, v, r));
        return then(naming, body);  // one_param said the absent members
    } else {
        body = member_sentences(group, data, v, r);
    }
    return then(then(naming, body), absent_sentences(group, data, v, r));
}

// The column members of a matrix, in data order (its second set), and whether every row has every one.
std::vector<std::string> columns(const param_doc& p, const ojson& data, bool* dense) {
    std::vector<std::string> cols;
    for (const auto& c : data.at(p.index[1])) cols.push_back(c.get<std::string>());
    *dense = true;
    for (auto it = data.at(p.key).begin(); it != data.at(p.key).end(); ++it)
        for (const auto& c : cols)
            if (!it.value().contains(c)) *dense = false;
    return cols;
}

// The matrix turned around: column -> row -> value (only the entries there are).
ojson transposed(const ojson& map, const std::vector<std::string>& cols) {
    ojson t = ojson::object();
    for (const auto& c : cols) {
        ojson col = ojson::object();
        for (auto it = map.begin(); it != map.end(); ++it)
            if (it.value().contains(c)) col[it.key()] = it.value().at(c);
        if (!col.empty()) t[c] = col;
    }
    return t;
}

// Each line of `lines_of` (row -> member -> value) with its members sorted by value.
std::string sorted_lines(const ojson& lines_of, bool down) {
    std::string out;
    for (auto it = lines_of.begin(); it != lines_of.end(); ++it) {
        if (!numeric_map(it.value())) return "";
        out += "\n- " + it.key() + ": " +
               name_value_list(it.value(), keys_in(it.value(), down ? order::down : order::up), "", false);
    }
    return out;
}

// A parameter over two sets: rows or columns in value order; rows in a stated column order (few columns, every
// entry present); or a sentence per row in data order (few columns).
std::string matrix(const param_doc& p, const ojson& data, const vocab& v, rng& r) {
    const doc_text d = doc_words(p, v, r);
    const ojson& map = data.at(p.key);
    bool dense = false;
    const std::vector<std::string> cols = columns(p, data, &dense);
    const std::string rows_label = set_label(v, p.index[0]), cols_label = set_label(v, p.index[1]);
    std::vector<int> plans = {0, 1};
    if (dense && cols.size() <= 5) plans.push_back(2);
    if (cols.size() <= 4) plans.push_back(3);
    const int plan = r.pick(plans);
    const bool down = r.chance(0.5);
    const std::string dir = down ? "[largest|highest] first" : "[smallest|lowest] first";
    if (plan == 0 || plan == 1) {
        const bool by_row = plan == 0;
        const std::string lines = sorted_lines(by_row ? map : transposed(map, cols), down);
        if (!lines.empty())
            return expand("[The " + d.desc + unit_note(d.unit) + " for each of the " +
                              (by_row ? rows_label : cols_label) + ", " + dir + ":|" + capitalise(d.desc) +
                              unit_note(d.unit) + ", listed per " + (by_row ? "row of " + rows_label : cols_label) +
                              " by " + (by_row ? cols_label : rows_label) + ", " + dir + ":]",
                          v, r) +
                   lines;
    }
    std::string out;
    if (plan == 2) {
        out = expand("[The " + d.desc + unit_note(d.unit) + " for " + join_and(cols) + ", in that order:|" +
                         capitalise(d.desc) + unit_note(d.unit) + ", giving " + join_and(cols) + " in turn:]",
                     v, r);
        std::vector<std::string> rows;
        for (auto it = map.begin(); it != map.end(); ++it) {
            std::vector<std::string> vals;
            for (const auto& c : cols) vals.push_back(value_text(it.value().at(c)));
            rows.push_back(it.key() + " " + join_and(vals));
        }
        for (size_t i = 0; i < rows.size(); i++) out += (i ? "; " : " ") + rows[i];
        return out + ".";
    }
    const int style = r.int_in(0, 1);
    for (auto it = map.begin(); it != map.end(); ++it) {
        out += (out.empty() ? "" : " ");
        if (style == 0)
            out += "For " + it.key() + ", the " + d.desc + " is " + value_name_list(it.value(), "");
        else
            out += capitalise(d.desc) + " (" + it.key() + "): " + value_name_list(it.value(), "");
        out += d.unit.empty() ? "." : " (" + d.unit + ").";
    }
    return out;
}

// A 0/1 relation row by row: "Site 9 covers Riverton and Ashland."
std::string relation(const param_doc& p, const ojson& data, const vocab& v, rng& r) {
    std::string out;
    for (auto it = data.at(p.key).begin(); it != data.at(p.key).end(); ++it) {
        std::vector<std::string> cols;
        for (auto jt = it.value().begin(); jt != it.value().end(); ++jt)
            if (as_double(jt.value()) != 0) cols.push_back(jt.key());
        if (cols.empty()) continue;
        vocab w = v;
        w["row"] = it.key();
        w["cols"] = join_members(cols);
        out += (out.empty() ? "" : " ") + expand(p.relation, w, r);
    }
    return out;
}

}  // namespace

std::string absent_sentences(const std::vector<const param_doc*>& group, const ojson& data, const vocab& v, rng& r) {
    std::string out;
    for (const auto* q : group) out = then(out, absent_sentence(*q, data, v, r));
    return out;
}

std::string prose_data(const std::vector<const param_doc*>& group, const ojson& data, const vocab& v, rng& r) {
    const param_doc& p = *group[0];
    if (p.is_set) return set_sentence(p, data, v, r);
    if (p.index.empty()) return scalar_sentence(p, data, v, r);
    if (p.index.size() == 1) return group.size() == 1 ? one_param(p, data, v, r) : param_group(group, data, v, r);
    if (!p.relation.empty()) return relation(p, data, v, r);
    return matrix(p, data, v, r);
}

}  // namespace trex::optmodel

namespace trex::optmodel {

namespace {

// One entry of the wording table: a phrase (lower case, matched at word boundaries, a capital first letter kept),
// the phrases it may become (itself among them), and words that must not follow it (where the swap would change
// the grammar or the meaning: "at least as large as", "each can hold", "$3 each.", "needs to").
struct wording {
    const char* phrase;
    std::vector<const char*> alternatives;
    std::vector<const char*> not_before;
    bool needs_lower_word_after = false;  // only before a lower-case word ("each plant", not "each." or "each $3")
    bool not_before_s_word = false;       // not before a word ending in 's' (a verb: "each costs")
};

// Words after which "each" is a pronoun ("each at a fixed cost", "each of them", "each can hold"): no swap to
// "every" there (nor back).
std::vector<const char*> pronoun_context() {
    return {"of",  "other", "one",   "can",   "must", "may",     "will",   "should",  "is",      "way",  "at",
            "in",  "on",    "with",  "for",   "to",   "from",    "by",     "and",     "or",      "a",    "an",
            "the", "its",   "their", "as",    "than", "that",    "which",  "but",     "so",      "if",   "when",
            "per", "into",  "over",  "under", "up",   "costing", "taking", "needing", "holding", "worth"};
}

const std::vector<wording>& wordings() {
    static const std::vector<wording> w = {
        {"no more than", {"no more than", "at most", "not more than"}, {"as"}},
        {"not more than", {"not more than", "at most", "no more than"}, {"as"}},
        {"at most", {"at most", "no more than", "not more than"}, {"as"}},
        {"no less than", {"no less than", "at least", "not less than"}, {"as"}},
        {"not less than", {"not less than", "at least", "no less than"}, {"as"}},
        {"at least", {"at least", "no less than", "not less than"}, {"as"}},
        {"must not", {"must not", "may not", "cannot"}, {}},
        {"may not", {"may not", "cannot", "must not"}, {}},
        {"cannot", {"cannot", "may not", "must not"}, {}},
        {"each", {"each", "every"}, pronoun_context(), true, true},
        {"every", {"every", "each"}, pronoun_context(), true, true},
        {"the total", {"the total", "the overall", "the combined"}, {"of", "is", "must", "may", "over"}, true},
        {"in total", {"in total", "altogether", "in all"}, {}},
        {"the amount of", {"the amount of", "the quantity of"}, {}},
        {"whole numbers", {"whole numbers", "integers"}, {}},
        {"a whole number", {"a whole number", "an integer"}, {}},
        {"so that", {"so that", "such that"}, {}},
        {"ensure", {"ensure", "make sure"}, {}},
        {"be satisfied", {"be satisfied", "be met"}, {}},
        {"be met", {"be met", "be satisfied"}, {}},
        {"needs", {"needs", "requires"}, {"to"}},
        {"requires", {"requires", "needs"}, {"to", "that"}},
        {"decide", {"decide", "determine"}, {"to", "on"}},
        {"determine", {"determine", "decide"}, {"to", "the", "a", "an"}},
        {"chosen", {"chosen", "selected"}, {}},
        {"choose", {"choose", "select"}, {"to", "from", "between", "among"}},
        {"assigned to", {"assigned to", "allocated to"}, {}},
        {"lowest possible", {"lowest possible", "smallest possible", "least possible"}, {}},
        {"is allowed", {"is allowed", "is permitted"}, {}},
        {"are allowed", {"are allowed", "are permitted"}, {}},
        {"exceed", {"exceed", "go beyond", "be more than"}, {}},
        {"exceeds", {"exceeds", "goes beyond", "is more than"}, {}},
        {"is limited to", {"is limited to", "is capped at"}, {}},
        {"are limited to", {"are limited to", "are capped at"}, {}},
        {"minus", {"minus", "less"}, {}},
        {"find", {"find", "determine", "work out"}, {"that", "it"}},
        {"minimize", {"minimize", "minimise"}, {}},
        {"maximize", {"maximize", "maximise"}, {}},
        {"per period", {"per period", "in each period"}, {}},
        {"can be", {"can be", "may be"}, {}},
        {"has to", {"has to", "must"}, {}},
        {"have to", {"have to", "must"}, {}},
        {"the sum of", {"the sum of", "the total of"}, {}},
        {"is used", {"is used", "is put to use"}, {}},
        {"at the lowest", {"at the lowest", "at the least"}, {"possible"}},
    };
    return w;
}

bool word_char(char c) {
    return std::isalnum((unsigned char)c) || c == '\'' || c == '-';
}

// The word starting at `at` (after one space), or "".
std::string next_word(const std::string& text, size_t at) {
    if (at >= text.size() || text[at] != ' ') return "";
    size_t e = at + 1;
    while (e < text.size() && word_char(text[e])) e++;
    return text.substr(at + 1, e - at - 1);
}

bool matches_at(const std::string& text, size_t i, const std::string& phrase) {
    if (i + phrase.size() > text.size()) return false;
    for (size_t k = 0; k < phrase.size(); k++) {
        const char c = text[i + k];
        if ((k == 0 ? (char)std::tolower((unsigned char)c) : c) != phrase[k]) return false;
    }
    return i + phrase.size() == text.size() || !word_char(text[i + phrase.size()]);
}

bool guard_ok(const wording& w, const std::string& after) {
    for (const char* x : w.not_before)
        if (after == x) return false;
    if (w.needs_lower_word_after && (after.empty() || !std::islower((unsigned char)after[0]))) return false;
    if (w.not_before_s_word && after.size() > 1 && after.back() == 's' && after[after.size() - 2] != 's') return false;
    return true;
}

}  // namespace

std::string vary_wording(const std::string& text, rng& r) {
    std::string out;
    out.reserve(text.size() + 32);
    for (size_t i = 0; i < text.size();) {
        if (i > 0 && word_char(text[i - 1])) {
            out += text[i++];
            continue;
        }
        const wording* hit = nullptr;
        for (const auto& w : wordings())
            if (matches_at(text, i, w.phrase) && guard_ok(w, next_word(text, i + std::strlen(w.phrase)))) {
                if (!hit || std::strlen(w.phrase) > std::strlen(hit->phrase)) hit = &w;
            }
        if (!hit) {
            out += text[i++];
            continue;
        }
        std::string alt = r.pick(hit->alternatives);
        if (std::isupper((unsigned char)text[i])) alt = capitalise(alt);
        out += alt;
        i += std::strlen(hit->phrase);
    }
    // an empty template alternative leaves two spaces ("the [total |]cost"): one is enough
    for (size_t at = out.find("  "); at != std::string::npos; at = out.find("  ", at)) out.erase(at, 1);
    return tidy_words(out);
}

}  // namespace trex::optmodel
