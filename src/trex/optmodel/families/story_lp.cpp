// Story problems in the manner of the small textbook LPs (two or three products, trips, crops, ads ...): a setting
// from the scenario catalogue (story_catalogue.cpp), an objective measure per item, resource limits (<=),
// requirements (>=), and the side conditions such problems state in words: minimum and maximum amounts, an item's
// minimum or maximum share of the total ("at least 60% of the trips must be by canoe") and ratio caps ("at most
// twice as many vans as trucks"). story_lp: divisible amounts (LP); story_ilp: whole numbers (MILP). The DP
// statement is the story itself, in an order and with sentences drawn per instance; DT and DPS use the generic keys.
//
// Catalogue schema (one story): id, domain, actor ("a pharmacy lab"), intro (alternatives with {Actor}, {actor},
// {items}, {n_items}), items (three [singular, plural]), collective ("tablets"), made ("produced"), integer, measures
// (role resource | requirement | objective with sense max | min; item: a verb phrase with {n}; total: sentences with
// {n} for resources and requirements; goal: sentences for objectives; per_item [lo, hi]; decimals).
//
// Model: x_i >= 0 (amount of item i; bounds l_i <= x_i <= u_i where given)
//   max|min sum_i c_i x_i
//   res_r:       sum_i a_ri x_i <= b_r
//   req_r:       sum_i e_ri x_i >= d_r
//   minshare_i:  (100 - p_i) x_i - p_i sum_{j != i} x_j >= 0      (x_i >= p_i % of the total)
//   maxshare_i:  (100 - q_i) x_i - q_i sum_{j != i} x_j <= 0
//   ratio_i_j:   x_i - k_ij x_j <= 0                               (x_i at most k_ij times x_j)
// Infeasible design: minimum amounts whose resource use exceeds a limit (max problems), maximum amounts that cannot
// reach a requirement (min problems).
#include <nlohmann/json.hpp>

#include <mutex>

#include "trex/base/error.hpp"
#include "trex/optmodel/families/common.hpp"
#include "trex/optmodel/families/story_catalogue.hpp"
#include "trex/optmodel/ir/format.hpp"

namespace trex::optmodel::families {

namespace story_impl {  // named, not anonymous: the families build as one unity translation unit

struct measure {
    std::string role;   // resource | requirement | objective
    std::string sense;  // objective: max | min
    std::string item;   // verb phrase with {n}
    std::vector<std::string> total, goal;
    double lo = 1, hi = 10;
    int decimals = 0;
    std::string label;  // short name for the data keys ("active ingredient")
};

struct story {
    std::string id, domain, actor, collective, made;
    std::vector<std::string> intro;
    std::vector<std::pair<std::string, std::string>> items;  // singular, plural
    bool integer = false;
    std::vector<measure> measures;
};

// "requires {n} units of active ingredient" -> "active ingredient"; "earns a profit of ${n}" -> "profit".
std::string measure_label(const std::string& phrase) {
    static const std::vector<std::string> skip = {"a",     "an",   "the", "of",   "$",     "per",   "each",
                                                  "one",   "to",   "in",  "on",   "for",   "about", "up",
                                                  "units", "unit", "and", "with", "worth", "total", "at"};
    const size_t at = phrase.find("{n}");
    std::string after = phrase.substr(at + 3), before = phrase.substr(0, at);
    auto words = [](const std::string& s) {
        std::vector<std::string> w;
        std::string cur;
        for (char c : s) {
            if (std::isalnum((unsigned char)c) || c == '-')
                cur += (char)std::tolower((unsigned char)c);
            else if (!cur.empty())
                w.push_back(cur), cur.clear();
        }
        if (!cur.empty()) w.push_back(cur);
        return w;
    };
    std::vector<std::string> a = words(after);
    const auto of = std::find(a.begin(), a.end(), "of");
    if (of != a.end() && of + 1 != a.end()) a.erase(a.begin(), of + 1);  // "kg of flour" -> "flour"
    std::vector<std::string> kept;
    for (const auto& w : a)
        if (std::find(skip.begin(), skip.end(), w) == skip.end()) kept.push_back(w);
    if (kept.empty()) {  // the number ends the phrase: name it by the words before ("a profit of $")
        std::vector<std::string> b = words(before);
        if (!b.empty()) b.erase(b.begin());  // the verb
        for (const auto& w : b)
            if (std::find(skip.begin(), skip.end(), w) == skip.end()) kept.push_back(w);
    }
    std::string out;
    for (size_t k = 0; k < kept.size() && k < 4; k++) out += (k ? " " : "") + kept[k];
    return out.empty() ? "measure" : out;
}

std::vector<const measure*> with_role(const story& s, const std::string& role, const std::string& sense = "");

std::vector<std::string> strings_of(const nlohmann::json& j, const char* key, const std::string& where) {
    TREX_CHECK(j.contains(key) && j[key].is_array() && !j[key].empty(), "story catalogue: {}: '{}' missing", where,
               key);
    std::vector<std::string> out;
    for (const auto& s : j[key]) out.push_back(s.get<std::string>());
    return out;
}

const std::vector<story>& catalogue() {
    static const std::vector<story> stories = [] {
        const nlohmann::json j = nlohmann::json::parse(story_catalogue_json());
        std::vector<story> out;
        for (const auto& s : j.at("stories")) {
            story st;
            st.id = s.at("id").get<std::string>();
            st.domain = s.at("domain").get<std::string>();
            st.actor = s.at("actor").get<std::string>();
            st.collective = s.at("collective").get<std::string>();
            st.made = s.at("made").get<std::string>();
            st.integer = s.at("integer").get<bool>();
            st.intro = strings_of(s, "intro", st.id);
            for (const auto& it : s.at("items")) st.items.push_back({it.at(0), it.at(1)});
            TREX_CHECK(st.items.size() == 3, "story catalogue: {}: three items expected", st.id);
            for (const auto& m : s.at("measures")) {
                measure x;
                x.role = m.at("role").get<std::string>();
                x.sense = m.value("sense", "");
                x.item = m.at("item").get<std::string>();
                if (m.contains("total")) x.total = strings_of(m, "total", st.id);
                if (m.contains("goal")) x.goal = strings_of(m, "goal", st.id);
                x.lo = m.at("per_item").at(0).get<double>();
                x.hi = m.at("per_item").at(1).get<double>();
                x.decimals = m.value("decimals", 0);
                TREX_CHECK(x.item.find("{n}") != std::string::npos, "story catalogue: {}: item phrase without {{n}}",
                           st.id);
                x.label = m.contains("label") ? m["label"].get<std::string>() : measure_label(x.item);
                for (int k = 2; std::any_of(st.measures.begin(), st.measures.end(),
                                            [&](const measure& y) { return y.label == x.label; });
                     k++)
                    x.label = fmt::format("{} {}", x.label, k);  // unique within the story
                st.measures.push_back(x);
            }
            TREX_CHECK(!with_role(st, "resource").empty() && !with_role(st, "objective", "max").empty(),
                       "story catalogue: {}: a resource and a max objective are needed", st.id);
            out.push_back(std::move(st));
        }
        return out;
    }();
    return stories;
}

// Indices of the catalogue's stories with the given integrality.
std::vector<int> stories_of(bool integer) {
    std::vector<int> out;
    for (size_t k = 0; k < catalogue().size(); k++)
        if (catalogue()[k].integer == integer) out.push_back((int)k);
    return out;
}

const story& story_of(const family& f, int scenario) {
    return catalogue()[(size_t)stories_of(f.milp)[(size_t)scenario]];
}

std::vector<const measure*> with_role(const story& s, const std::string& role, const std::string& sense) {
    std::vector<const measure*> out;
    for (const auto& m : s.measures)
        if (m.role == role && (sense.empty() || m.sense == sense)) out.push_back(&m);
    return out;
}

// k distinct picks of v, in v's order.
template <typename T>
std::vector<T> choose(const std::vector<T>& v, int k, rng& r) {
    std::vector<int> p = r.permutation((int)v.size());
    p.resize((size_t)std::min<int>(k, (int)v.size()));
    std::sort(p.begin(), p.end());
    std::vector<T> out;
    for (int i : p) out.push_back(v[(size_t)i]);
    return out;
}

void generate(gen_context& g) {
    const story& s = story_of(g.fam, g.inst.scenario);
    rng& r = g.r;
    const int n = g.req.difficulty >= 3 ? 3 : r.chance(0.3) ? 3 : 2;
    bool maximize = with_role(s, "requirement").empty() || r.chance(0.6);
    if (with_role(s, "objective", maximize ? "max" : "min").empty()) maximize = !maximize;
    const measure* obj = r.pick(with_role(s, "objective", maximize ? "max" : "min"));
    std::vector<std::string> I;
    for (int i = 0; i < n; i++) I.push_back(s.items[(size_t)i].first);
    // a plan the limits are built around, so that they bind near it
    std::vector<double> plan(n);
    for (auto& x : plan) x = (double)r.int_in(4, 60);
    auto draw = [&](const measure& m) {
        std::vector<double> v(n);
        for (auto& x : v) x = r.real_in(m.lo, m.hi, m.decimals);
        return v;
    };
    auto dot = [&](const std::vector<double>& a, const std::vector<double>& x) {
        double t = 0;
        for (int i = 0; i < n; i++) t += a[i] * x[i];
        return t;
    };
    const bool infeasible = g.req.want == design::infeasible;
    ojson& data = g.inst.data;
    data["items"] = list(I);
    data["sense"] = maximize ? "maximize" : "minimize";
    data["objective_name"] = obj->label;
    data["objective"] = map1(I, draw(*obj));
    // limits: one or two resources for max problems, a requirement (and maybe a resource) for min problems
    const auto resources = with_role(s, "resource"), requirements = with_role(s, "requirement");
    const auto res = choose(resources, maximize ? r.int_in(1, 2) : r.int_in(0, 1), r);
    const auto req = choose(requirements, maximize ? (r.chance(0.25) ? 1 : 0) : 1, r);
    ojson names = ojson::array(), usage = ojson::object(), avail = ojson::object();
    std::vector<std::vector<double>> res_a, req_e;
    std::vector<double> res_b, req_d;
    for (const measure* m : res) {
        const std::string& l = m->label;
        res_a.push_back(draw(*m));
        res_b.push_back(std::max(1.0, std::round(dot(res_a.back(), plan) * r.real_in(0.9, 1.3, 2))));
        names.push_back(l);
        usage[l] = map1(I, res_a.back());
        avail[l] = num(res_b.back());
    }
    if (!res.empty()) {
        data["resources"] = names;
        data["usage"] = usage;
        data["available"] = avail;
    }
    names = ojson::array();
    ojson prov = ojson::object(), need = ojson::object();
    for (const measure* m : req) {
        const std::string& l = m->label;
        req_e.push_back(draw(*m));
        req_d.push_back(std::max(1.0, std::round(dot(req_e.back(), plan) * r.real_in(0.6, 0.95, 2))));
        names.push_back(l);
        prov[l] = map1(I, req_e.back());
        need[l] = num(req_d.back());
    }
    if (!req.empty()) {
        data["requirements"] = names;
        data["provides"] = prov;
        data["required"] = need;
    }
    // side conditions: one or two of amounts, shares and ratio caps
    ojson lo = ojson::object(), hi = ojson::object(), smin = ojson::object(), smax = ojson::object(),
          cap = ojson::object();
    std::vector<double> l(n, 0), u(n, inf);
    const int extras = r.int_in(1, 2);
    for (int e = 0; e < extras; e++) {
        const int i = r.int_in(0, n - 1), j = (i + 1 + r.int_in(0, n - 2)) % n;
        switch (r.int_in(0, 4)) {
            case 0:
                l[i] = std::max(1.0, std::round(plan[i] * r.real_in(0.3, 0.7, 2))), lo[I[i]] = num(l[i]);
                break;
            case 1:
                u[i] = std::round(plan[i] * r.real_in(0.8, 1.2, 2)) + 1, hi[I[i]] = num(u[i]);
                break;
            case 2:
                smin[I[i]] = num(5.0 * r.int_in(2, 12));
                break;
            case 3:
                smax[I[i]] = num(5.0 * r.int_in(6, 16));
                break;
            default: {
                ojson row = cap.value(I[i], ojson::object());
                row[I[j]] = num(r.pick(std::vector<double>{1.5, 2, 2, 3, 4}));
                cap[I[i]] = row;
            }
        }
    }
    if (infeasible && maximize && !res.empty()) {  // minimums that use more than the first resource holds
        for (int i = 0; i < n; i++) {
            l[i] = std::max(1.0, std::round(plan[i] * 1.2));
            u[i] = std::max(u[i], l[i] + 1);
            lo[I[i]] = num(l[i]);
            if (hi.contains(I[i])) hi[I[i]] = num(u[i]);
        }
        res_b[0] = std::max(1.0, std::floor(dot(res_a[0], l) * 0.8));
        data["available"][data["resources"][0].get<std::string>()] = num(res_b[0]);
    } else if (infeasible) {  // maximums too small for the first requirement
        for (int i = 0; i < n; i++) {
            u[i] = std::max(1.0, std::round(plan[i] * 0.4));
            l[i] = std::min(l[i], u[i]);
            hi[I[i]] = num(u[i]);
            if (lo.contains(I[i])) lo[I[i]] = num(l[i]);
        }
        req_d[0] = std::ceil(dot(req_e[0], u) * 1.3) + 1;
        data["required"][data["requirements"][0].get<std::string>()] = num(req_d[0]);
    }
    if (!lo.empty()) data["min_amount"] = lo;
    if (!hi.empty()) data["max_amount"] = hi;
    if (!smin.empty()) data["min_share_pct"] = smin;
    if (!smax.empty()) data["max_share_pct"] = smax;
    if (!cap.empty()) data["ratio_cap"] = cap;
    // the model
    model& m = g.inst.m;
    m.sense = maximize ? obj_sense::maximize : obj_sense::minimize;
    const std::vector<double> c = [&] {
        std::vector<double> v(n);
        for (int i = 0; i < n; i++) v[i] = as_double(data["objective"][I[i]]);
        return v;
    }();
    std::vector<int> x(n);
    const var_type kind = s.integer ? var_type::integer : var_type::continuous;
    for (int i = 0; i < n; i++) x[i] = m.add_var(nm("x", i), kind, l[i], u[i], c[i]);
    auto row = [&](const std::vector<double>& a) {
        std::vector<term> t;
        for (int i = 0; i < n; i++)
            if (a[i] != 0) t.push_back({x[i], a[i]});
        return t;
    };
    for (size_t k = 0; k < res_a.size(); k++) m.add_con(nm("res", (int)k), row(res_a[k]), row_sense::le, res_b[k]);
    for (size_t k = 0; k < req_e.size(); k++) m.add_con(nm("req", (int)k), row(req_e[k]), row_sense::ge, req_d[k]);
    auto share_row = [&](int i, double p) {
        std::vector<double> a(n, -p);
        a[i] = 100 - p;
        return row(a);
    };
    for (int i = 0; i < n; i++) {
        if (smin.contains(I[i])) m.add_con(nm("minshare", i), share_row(i, as_double(smin[I[i]])), row_sense::ge, 0);
        if (smax.contains(I[i])) m.add_con(nm("maxshare", i), share_row(i, as_double(smax[I[i]])), row_sense::le, 0);
        for (int j = 0; j < n; j++)
            if (cap.contains(I[i]) && cap[I[i]].contains(I[j]))
                m.add_con(nm("ratio", i, j), {{x[i], 1}, {x[j], -as_double(cap[I[i]][I[j]])}}, row_sense::le, 0);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// the story (DP)

std::string number_words(int n) {
    return n == 2 ? "two" : n == 3 ? "three" : std::to_string(n);
}

std::string fill(const std::string& tmpl, const std::string& value) {
    std::string out = tmpl;
    const size_t at = out.find("{n}");
    if (at != std::string::npos) out.replace(at, 3, value);
    return out;
}

// "at most twice as many", "at most 3 times as many"
std::string times_words(double k) {
    if (k == 2) return "at most twice as many";
    return "at most " + format_value(k) + " times as many";
}

std::string tell_story(const family& f, const instance& in, rng& r) {
    const story& s = story_of(f, in.scenario);
    const ojson& d = in.data;
    std::vector<std::string> I, plural;
    for (const auto& i : d["items"]) I.push_back(i.get<std::string>());
    for (size_t i = 0; i < I.size(); i++) plural.push_back(s.items[i].second);
    auto pl = [&](const std::string& item) {
        return plural[(size_t)(std::find(I.begin(), I.end(), item) - I.begin())];
    };
    std::vector<std::string> with_article;
    for (const auto& i : I) with_article.push_back("a " + i);
    vocab v = {{"actor", s.actor},
               {"items", join_and(with_article)},
               {"n_items", number_words((int)I.size())},
               {"collective", s.collective},
               {"made", s.made}};
    const std::string intro = capitalise(expand(r.pick(s.intro), v, r));
    // the measures in the data, each with its per-item values
    struct told {
        const measure* m;
        const ojson* values;  // {item: value}
        std::string total;    // the limit sentence ("" for the objective)
    };
    std::vector<told> facts;
    const measure* obj = nullptr;
    for (const auto& m : s.measures)
        if (m.role == "objective" && m.label == d["objective_name"].get<std::string>() &&
            (m.sense == "max") == (d["sense"] == "maximize"))
            obj = &m;
    TREX_CHECK(obj != nullptr, "story {}: objective measure not found", s.id);
    facts.push_back({obj, &d["objective"], ""});
    auto add_limits = [&](const char* set, const char* per, const char* totals, const char* role) {
        if (!d.contains(set)) return;
        std::vector<const measure*> ms = with_role(s, role);
        for (const auto& name : d[set]) {
            const std::string l = name.get<std::string>();
            const measure* hit = nullptr;
            for (const measure* m : ms)
                if (l == m->label) hit = m;
            TREX_CHECK(hit != nullptr, "story {}: measure '{}' not found", s.id, l);
            facts.push_back(
                {hit, &d[per][l], fill(expand(r.pick(hit->total), v, r), format_value(as_double(d[totals][l])))});
        }
    };
    add_limits("resources", "usage", "available", "resource");
    add_limits("requirements", "provides", "required", "requirement");
    // per-item facts: item by item, or measure by measure
    std::vector<std::string> sentences;
    const bool by_item = r.chance(0.5);
    if (by_item) {
        for (const auto& item : I) {
            std::vector<std::string> parts;
            for (const auto& t : facts) parts.push_back(fill(t.m->item, format_value(as_double(t.values->at(item)))));
            sentences.push_back(expand("[Each|A|One] ", v, r) + item + " " + join_and(parts) + ".");
        }
    } else {
        for (const auto& t : facts) {
            std::vector<std::string> parts;
            for (const auto& item : I)
                parts.push_back("a " + item + " " + fill(t.m->item, format_value(as_double(t.values->at(item)))));
            std::string sent = parts[0];
            for (size_t k = 1; k < parts.size(); k++)
                sent += (k + 1 == parts.size() ? expand("[, while|, whereas| and]", v, r) : std::string(",")) + " " +
                        parts[k];
            sentences.push_back(capitalise(sent) + ".");
        }
    }
    for (const auto& t : facts)
        if (!t.total.empty()) sentences.push_back(capitalise(t.total));
    // side conditions
    std::vector<std::string> side;
    vocab w = v;
    for (const auto& item : I) {
        w["item"] = item;
        w["items_of"] = pl(item);
        if (d.contains("min_amount") && d["min_amount"].contains(item)) {
            w["n"] = format_value(as_double(d["min_amount"][item]));
            side.push_back(
                expand("[At least {n} {items_of} must be {made}.|No fewer than {n} {items_of} have to be "
                       "{made}.|There is a commitment to at least {n} {items_of}.|[The plan must include|Plan for] "
                       "[a minimum of|at least] {n} {items_of}.|{Items_of} [cannot|may not] [number|come to] fewer "
                       "than {n}.]",
                       w, r));
        }
        if (d.contains("max_amount") && d["max_amount"].contains(item)) {
            w["n"] = format_value(as_double(d["max_amount"][item]));
            side.push_back(
                expand("[At most {n} {items_of} can be {made}.|No more than {n} {items_of} may be {made}.|"
                       "The number of {items_of} is limited to {n}.|[There is room for|There is capacity for] "
                       "[no more than|at most] {n} {items_of}.|{Items_of} [are capped at|cannot exceed] {n}.]",
                       w, r));
        }
        if (d.contains("min_share_pct") && d["min_share_pct"].contains(item)) {
            w["p"] = format_value(as_double(d["min_share_pct"][item]));
            side.push_back(
                expand("[At least {p}% of the {collective} must be {items_of}.|{Items_of} have to make up "
                       "at least {p}% of all {collective}.|[A minimum of|No less than] {p}% of [all|the] "
                       "{collective} [should|must] be {items_of}.|{Items_of} [must|need to] [account for|form] "
                       "[at least|no less than] {p}% of the {collective}.]",
                       w, r));
        }
        if (d.contains("max_share_pct") && d["max_share_pct"].contains(item)) {
            w["p"] = format_value(as_double(d["max_share_pct"][item]));
            side.push_back(
                expand("[At most {p}% of the {collective} can be {items_of}.|{Items_of} may make up no "
                       "more than {p}% of all {collective}.|[No more than|At most] {p}% of [all|the] {collective} "
                       "[may|can] be {items_of}.|{Items_of} [cannot|may not] [account for|form] more than {p}% of "
                       "the {collective}.]",
                       w, r));
        }
        if (d.contains("ratio_cap") && d["ratio_cap"].contains(item))
            for (auto it = d["ratio_cap"][item].begin(); it != d["ratio_cap"][item].end(); ++it) {
                w["other"] = pl(it.key());
                w["times"] = times_words(as_double(it.value()));
                w["times_bare"] = as_double(it.value()) == 2 ? "twice" : format_value(as_double(it.value())) + " times";
                side.push_back(
                    expand("[There can be {times} {items_of} as {other}.|{Items_of} may number {times} "
                           "as {other}.|[The count of|The number of] {items_of} [may not|cannot] [be more than|"
                           "exceed] {times_bare} [that of|the number of] {other}.]",
                           w, r));
            }
    }
    // order: intro, then the facts and limits in a drawn order, side conditions, the goal
    std::vector<int> order = r.permutation((int)sentences.size());
    if (r.chance(0.5)) std::sort(order.begin(), order.end());
    std::string text = intro;
    for (int k : order) text += " " + sentences[(size_t)k];
    for (const auto& sc : side) text += " " + sc;
    text += s.integer ? expand(
                            " [Only whole {collective} are possible.|Amounts must be whole numbers.|[Fractions|"
                            "Fractional amounts] [make no sense|are not possible] here.|Every amount is a whole "
                            "number.]",
                            v, r)
                      : expand(
                            " [Fractional amounts are allowed.|Amounts need not be whole numbers.|[Fractions|"
                            "Fractional amounts] are [fine|acceptable].|Amounts [may|can] be fractional.]",
                            v, r);
    text += " " + expand(r.pick(obj->goal), v, r);
    return tidy_words(text) + "\n";
}

family make(bool integer) {
    family f;
    f.name = integer ? "story_ilp" : "story_lp";
    f.title = integer ? "Story problem in whole numbers" : "Story problem";
    f.milp = integer;
    f.can_infeasible = true;
    f.generate = generate;
    f.story = tell_story;
    for (int k : stories_of(integer)) {
        const story& s = catalogue()[(size_t)k];
        f.scenarios.push_back({s.domain, {{"org", s.actor}, {"collective", s.collective}, {"made", s.made}}});
    }
    TREX_CHECK(!f.scenarios.empty(), "story catalogue: no {} stories", integer ? "integer" : "continuous");
    f.intro =
        "[{Org} must decide how many of each of {n_items} kinds of {collective} should be {made}.|{Org} plans "
        "the amounts of {n_items} kinds of {collective}.]";
    f.params = {
        {"items", {}, "kinds", "", true},
        {"sense", {}, "objective sense", ""},
        {"objective_name", {}, "objective measure", ""},
        {"objective", {"items"}, "objective value per unit", ""},
        {"resources", {}, "limited resources", "", true},
        {"usage", {"resources", "items"}, "resource use per unit", ""},
        {"available", {"resources"}, "amount available", ""},
        {"requirements", {}, "requirements", "", true},
        {"provides", {"requirements", "items"}, "contribution per unit", ""},
        {"required", {"requirements"}, "minimum required", ""},
        {"min_amount", {"items"}, "minimum amount", "", false, "{have} no minimum amount"},
        {"max_amount", {"items"}, "maximum amount", "", false, "{have} no maximum amount"},
        {"min_share_pct", {"items"}, "minimum share of the total", "%", false, "{have} no minimum share"},
        {"max_share_pct", {"items"}, "maximum share of the total", "%", false, "{have} no maximum share"},
        {"ratio_cap", {"items", "items"}, "maximum multiple of another kind's amount", ""},
    };
    f.constraints = {
        "[The use of each resource may not exceed the amount available, and every requirement must be "
        "met.|Resources are limited to what is available; requirements must be reached.]",
        "[Amounts stay within their minimum and maximum where given; a kind's share of the total amount "
        "must respect its minimum and maximum share; a kind's amount is at most the given multiple of "
        "the other kind's amount where one is given.|Respect the minimum and maximum amounts, the "
        "shares of the total and the multiples where they are given.]"};
    f.objective =
        "[Optimize (in the given sense) the total of the objective value per unit times the amounts.|The "
        "objective is the sum of objective value times amount, maximized or minimized as given.]";
    f.integrality = integer ? "[Amounts must be whole numbers.|Only whole units are possible.]" : "";
    f.decisions = integer ? "how many of each kind (whole numbers)" : "how much of each kind (fractional allowed)";
    f.latex =
        "\\begin{aligned}\n"
        "\\text{opt}\\;& \\sum_{i\\in I} c_i\\,x_i \\\\\n"
        "\\text{s.t.}\\;& \\sum_{i\\in I} a_{ri}\\,x_i \\le b_r && \\forall r\\in R \\quad\\text{(res)} \\\\\n"
        "& \\sum_{i\\in I} e_{qi}\\,x_i \\ge d_q && \\forall q\\in Q \\quad\\text{(req)} \\\\\n"
        "& (100 - p_i)\\,x_i - p_i \\sum_{j\\ne i} x_j \\ge 0 && \\text{where } p_i \\text{ is given} \\quad"
        "\\text{(minshare)} \\\\\n"
        "& (100 - q_i)\\,x_i - q_i \\sum_{j\\ne i} x_j \\le 0 && \\text{where } q_i \\text{ is given} \\quad"
        "\\text{(maxshare)} \\\\\n"
        "& x_i - k_{ij}\\,x_j \\le 0 && \\text{where } k_{ij} \\text{ is given} \\quad\\text{(ratio)} \\\\\n"
        "& l_i \\le x_i \\le u_i" +
        std::string(integer ? ",\\ x_i \\in \\mathbb{Z}" : "") +
        "\n"
        "\\end{aligned}";
    f.latex_symbols = {"$I$: kinds; $R$: resources; $Q$: requirements", "$c_i$: objective value per unit",
                       "$a_{ri}$: resource use, $b_r$: available; $e_{qi}$: contribution, $d_q$: required",
                       "$p_i$, $q_i$: minimum and maximum share (%); $k_{ij}$: maximum multiple",
                       "$l_i$, $u_i$: minimum and maximum amount (0 and $\\infty$ if none); $x_i$: amount of $i$"};
    f.code = std::string(R"(I = data["items"]
x = {i: @var(f"x_{a + 1}", data.get("min_amount", {}).get(i, 0), data.get("max_amount", {}).get(i, @inf()), )") +
             (integer ? "I" : "C") + R"() for a, i in enumerate(I)}
@obj(@sum(data["objective"][i] * x[i] for i in I))
for b, r in enumerate(data.get("resources", [])):
    @add(@sum(data["usage"][r][i] * x[i] for i in I if data["usage"][r][i] != 0) <= data["available"][r], f"res_{b + 1}")
for b, q in enumerate(data.get("requirements", [])):
    @add(@sum(data["provides"][q][i] * x[i] for i in I if data["provides"][q][i] != 0) >= data["required"][q], f"req_{b + 1}")
for a, i in enumerate(I):
    p = data.get("min_share_pct", {}).get(i)
    if p is not None:
        @add((100 - p) * x[i] - @sum(p * x[j] for j in I if j != i) >= 0, f"minshare_{a + 1}")
    p = data.get("max_share_pct", {}).get(i)
    if p is not None:
        @add((100 - p) * x[i] - @sum(p * x[j] for j in I if j != i) <= 0, f"maxshare_{a + 1}")
    for c, j in enumerate(I):
        k = data.get("ratio_cap", {}).get(i, {}).get(j)
        if k is not None:
            @add(x[i] - k * x[j] <= 0, f"ratio_{a + 1}_{c + 1}")
)";
    f.var_docs = {{"x", {"items"}, "amount of {0}"}};
    f.con_docs = {{"res", {"resources"}, "limit on {0}"},
                  {"req", {"requirements"}, "requirement of {0}"},
                  {"minshare", {"items"}, "minimum share of {0}"},
                  {"maxshare", {"items"}, "maximum share of {0}"},
                  {"ratio", {"items", "items"}, "{0} at most a multiple of {1}"}};
    return f;
}

}  // namespace story_impl

TREX_FAMILY(story_lp) {
    static const family f = story_impl::make(false);
    return f;
}

TREX_FAMILY(story_ilp) {
    static const family f = story_impl::make(true);
    return f;
}

}  // namespace trex::optmodel::families
