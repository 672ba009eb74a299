#include "trex/optmodel/families/text.hpp"

#include <cctype>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "trex/base/error.hpp"
#include "trex/base/rng.hpp"

namespace trex::optmodel {

double rng::uniform() {
    return uniform01(seed_, stream_, index_++);
}

int rng::int_in(int lo, int hi) {
    if (hi <= lo) return lo;
    int v = lo + (int)std::floor(uniform() * (double)(hi - lo + 1));
    return v > hi ? hi : v;
}

double rng::real_in(double lo, double hi, int decimals) {
    const double s = std::pow(10.0, decimals);
    return std::round((lo + (hi - lo) * uniform()) * s) / s;
}

bool rng::chance(double p) {
    return uniform() < p;
}

std::vector<int> rng::permutation(int n) {
    std::vector<int> p(n);
    for (int i = 0; i < n; i++) p[i] = i;
    for (int i = n - 1; i > 0; i--) std::swap(p[i], p[int_in(0, i)]);
    return p;
}

std::string capitalise(std::string s) {
    if (!s.empty()) s[0] = (char)std::toupper((unsigned char)s[0]);
    return s;
}

std::string join_and(const std::vector<std::string>& items, const std::string& conj) {
    std::string out;
    for (size_t i = 0; i < items.size(); i++) {
        if (i > 0) out += (i + 1 == items.size()) ? (items.size() > 2 ? ", " + conj + " " : " " + conj + " ") : ", ";
        out += items[i];
    }
    return out;
}

namespace {

// Index of the ']' closing the '[' at p (nesting aware), or npos.
size_t close_bracket(const std::string& s, size_t p) {
    int depth = 0;
    for (size_t i = p; i < s.size(); i++) {
        if (s[i] == '[') depth++;
        if (s[i] == ']' && --depth == 0) return i;
    }
    return std::string::npos;
}

std::vector<std::string> split_top(const std::string& s) {
    std::vector<std::string> out(1);
    int depth = 0;
    for (char c : s) {
        if (c == '[') depth++;
        if (c == ']') depth--;
        if (c == '|' && depth == 0)
            out.emplace_back();
        else
            out.back() += c;
    }
    return out;
}

}  // namespace

namespace {

std::string expand_raw(const std::string& t, const vocab& v, rng& r);

bool tidy_starts_with(const std::string& w, std::initializer_list<const char*> prefixes) {
    for (const char* p : prefixes)
        if (w.rfind(p, 0) == 0) return true;
    return false;
}

// Whether a lower-cased word is said with a vowel sound first.
bool tidy_vowel_sound(const std::string& w) {
    if (w.empty() || !std::isalpha((unsigned char)w[0])) return false;
    if (tidy_starts_with(w, {"hour", "honest", "honor", "honour", "heir"})) return true;
    if (std::string("aeiou").find(w[0]) == std::string::npos) return false;
    return !tidy_starts_with(w, {"uni", "use", "usu", "uti", "ura", "ure", "uro", "eu", "ewe", "one", "once", "ubiq"});
}

// The singular of a lower-case plural noun; the word itself when it does not look plural.
std::string tidy_singular(const std::string& w) {
    static const std::unordered_map<std::string, std::string> irregular = {
        {"people", "person"}, {"feet", "foot"}, {"children", "child"}, {"men", "man"}, {"women", "woman"}};
    if (auto it = irregular.find(w); it != irregular.end()) return it->second;
    const auto ends = [&](const char* s) {
        const size_t n = std::strlen(s);
        return w.size() > n + 1 && w.compare(w.size() - n, n, s) == 0;
    };
    if (w.size() < 4 || w.back() != 's' || ends("ss") || ends("us") || ends("is") || ends("ics")) return w;
    if (tidy_starts_with(w, {"series", "species", "news", "means", "gas", "lens", "canvas", "bus"})) return w;
    if (ends("ies")) return w.substr(0, w.size() - 3) + "y";
    if (ends("ches") || ends("shes") || ends("sses") || ends("xes") || ends("zes")) return w.substr(0, w.size() - 2);
    return w.substr(0, w.size() - 1);
}

bool tidy_word_char(char c) {
    return std::isalnum((unsigned char)c) || c == '-' || c == '\'';
}

}  // namespace

std::string tidy_words(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    size_t i = 0;
    while (i < text.size()) {
        if (!tidy_word_char(text[i]) || (i > 0 && tidy_word_char(text[i - 1]))) {
            out += text[i++];
            continue;
        }
        size_t e = i;
        while (e < text.size() && tidy_word_char(text[e])) e++;
        const std::string word = text.substr(i, e - i);
        // the next word, after one space
        size_t ns = e + 1, ne = ns;
        while (ne < text.size() && tidy_word_char(text[ne])) ne++;
        const bool has_next = e < text.size() && text[e] == ' ' && ne > ns;
        const std::string next = has_next ? text.substr(ns, ne - ns) : "";
        std::string low_next = next;
        for (char& c : low_next) c = (char)std::tolower((unsigned char)c);
        const bool next_lower_word = has_next && std::islower((unsigned char)next[0]);
        // a capital "A" is an article only where a sentence starts ("Plant A and B" names a plant)
        size_t back = i;
        while (back > 0 && (text[back - 1] == ' ' || text[back - 1] == '*')) back--;
        const bool sentence_start = back == 0 || std::string(".!?:\n").find(text[back - 1]) != std::string::npos;
        if ((word == "a" || (word == "A" && sentence_start)) && next_lower_word && tidy_vowel_sound(low_next)) {
            out += word == "a" ? "an" : "An";
        } else if ((word == "an" || (word == "An" && sentence_start)) && next_lower_word &&
                   !tidy_vowel_sound(low_next)) {
            out += word == "an" ? "a" : "A";
        } else if (word == "per" && next_lower_word) {
            out += word + " " + tidy_singular(next);
            i = ne;
            continue;
        } else {
            out += word;
        }
        i = e;
    }
    return out;
}

std::string expand(const std::string& t, const vocab& v, rng& r) {
    return tidy_words(expand_raw(t, v, r));
}

namespace {

std::string expand_raw(const std::string& t, const vocab& v, rng& r) {
    std::string out;
    for (size_t i = 0; i < t.size(); i++) {
        const char c = t[i];
        if (c == '[') {
            const size_t e = close_bracket(t, i);
            if (e == std::string::npos) {
                out += c;
                continue;
            }
            auto alts = split_top(t.substr(i + 1, e - i - 1));
            out += expand_raw(alts[(size_t)r.int_in(0, (int)alts.size() - 1)], v, r);
            i = e;
        } else if (c == '{') {
            const size_t e = t.find('}', i);
            if (e == std::string::npos) {
                out += c;
                continue;
            }
            const std::string key = t.substr(i + 1, e - i - 1);
            auto it = v.find(key);
            if (it != v.end()) {
                out += expand_raw(it->second, v, r);
            } else {
                std::string low = key;
                if (!low.empty()) low[0] = (char)std::tolower((unsigned char)low[0]);
                auto it2 = v.find(low);
                if (it2 != v.end() && low != key)
                    out += capitalise(expand_raw(it2->second, v, r));
                else
                    out += "{" + key + "}";
            }
            i = e;
        } else {
            out += c;
        }
    }
    return out;
}

const std::unordered_map<std::string, std::vector<std::string>>& pools() {
    static const std::unordered_map<std::string, std::vector<std::string>> p = {
        {"cities",
         {"Springfield", "Riverton",  "Lakeside",   "Fairview", "Greenville", "Madison", "Clinton",  "Georgetown",
          "Salem",       "Franklin",  "Ashland",    "Milton",   "Dover",      "Oxford",  "Bristol",  "Kingston",
          "Newport",     "Arlington", "Burlington", "Chester",  "Dayton",     "Easton",  "Florence", "Hudson"}},
        {"plants",
         {"Plant North", "Plant South", "Plant East", "Plant West", "Plant Central", "Plant Delta", "Plant Harbor",
          "Plant Valley", "Plant Ridge", "Plant Summit"}},
        {"warehouses",
         {"Warehouse A", "Warehouse B", "Warehouse C", "Warehouse D", "Warehouse E", "Warehouse F", "Warehouse G",
          "Warehouse H", "Warehouse I", "Warehouse J"}},
        {"products",
         {"Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta", "Eta", "Theta", "Iota", "Kappa", "Lambda", "Sigma"}},
        {"furniture", {"chairs", "tables", "desks", "shelves", "cabinets", "benches", "stools", "beds"}},
        {"foods",
         {"oats", "rice", "beans", "milk", "eggs", "bread", "lentils", "spinach", "chicken", "yogurt", "peanuts",
          "carrots", "apples", "tofu"}},
        {"nutrients", {"protein", "fiber", "calcium", "iron", "vitamin C", "energy", "vitamin A", "magnesium"}},
        {"workers",
         {"Ana", "Ben", "Carla", "Dev", "Elif", "Femi", "Grace", "Hiro", "Ines", "Jonas", "Kemal", "Lena", "Marco",
          "Nadia", "Omar", "Priya"}},
        {"tasks",
         {"audit", "design", "testing", "support", "training", "review", "packing", "inspection", "planning",
          "reporting", "cleaning", "delivery", "coding", "survey", "repair", "filing"}},
        {"machines", {"Machine 1", "Machine 2", "Machine 3", "Machine 4", "Machine 5", "Machine 6"}},
        {"jobs",
         {"Job A", "Job B", "Job C", "Job D", "Job E", "Job F", "Job G", "Job H", "Job I", "Job J", "Job K", "Job L",
          "Job M", "Job N"}},
        {"assets",
         {"bonds", "equities", "real estate", "commodities", "cash", "infrastructure", "private credit",
          "emerging markets", "gold", "index fund"}},
        {"items",
         {"tent", "stove", "lantern", "rope", "first-aid kit", "water filter", "sleeping bag", "radio", "map set",
          "solar charger", "toolkit", "blanket", "food pack", "camera", "binoculars", "life vest"}},
        {"hospitals",
         {"St. Mary", "General", "Mercy", "Riverside", "Children's", "University", "Valley", "Memorial", "Hillcrest",
          "Bayview"}},
        {"schools",
         {"Lincoln High", "Oak Elementary", "Maple Middle", "Cedar Academy", "Pine School", "Elm Primary",
          "Birch College", "Willow High", "Aspen Middle", "Spruce Elementary"}},
        {"sites",
         {"Northgate",   "Elmwood",    "Brookfield", "Cedar Hill", "Millbrook",   "Stonebridge",
          "Westfield",   "Oakridge",   "Pinecrest",  "Fox Run",    "Harbor Point", "Maplewood",
          "Briarcliff",  "Redstone",   "Silver Lake", "Kingsway",  "Ironwood",    "Glenview",
          "Sunnyvale",   "Bayside",    "Ridgeview",  "Hollow Creek", "Eastgate",  "Willowbrook"}},
        {"regions",
         {"North", "South", "East", "West", "Central", "Coastal", "Highland", "Metro", "Rural", "Lakeshore"}},
        {"ingredients",
         {"ore A", "ore B", "ore C", "scrap", "alloy mix", "silica", "limestone", "clay", "sand", "crushed glass"}},
        {"generators",
         {"coal unit", "gas turbine", "hydro station", "wind farm", "solar park", "biomass unit", "diesel unit",
          "geothermal unit"}},
        {"periods", {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}},
        {"weeks", {"Week 1", "Week 2", "Week 3", "Week 4", "Week 5", "Week 6", "Week 7", "Week 8"}},
        {"slots", {"06-10", "10-14", "14-18", "18-22", "22-02", "02-06"}},
        {"nodes", {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N", "O", "P"}},
        {"resources",
         {"labor hours", "machine hours", "raw material", "packaging", "storage space", "energy", "testing time",
          "assembly time"}},
        {"courses",
         {"Algebra", "Biology", "Chemistry", "History", "Literature", "Physics", "Art", "Music", "Geography",
          "Economics"}},
        {"vehicles",
         {"Truck A", "Truck B", "Truck C", "Truck D", "Truck E", "Truck F", "Truck G", "Truck H", "Truck J",
          "Truck K"}},
        {"elements", {"carbon", "chromium", "nickel", "manganese", "silicon", "copper"}},
        {"fuel_properties", {"sulfur", "aromatics", "oxygenates", "olefins", "benzene", "water"}},
        {"soil_nutrients", {"nitrogen", "phosphorus", "potassium", "organic matter", "moisture", "calcium"}},
        {"fuel_components",
         {"reformate", "alkylate", "naphtha", "butane", "ethanol", "isomerate", "raffinate", "FCC gasoline"}},
        {"feedstocks",
         {"food waste", "yard waste", "manure", "straw", "sawdust", "coffee grounds", "leaves", "wood chips"}},
    };
    return p;
}

}  // namespace

std::vector<std::string> pool_names(const std::string& pool, int n, rng& r) {
    auto it = pools().find(pool);
    TREX_CHECK(it != pools().end(), "unknown name pool '{}'", pool);
    const auto& src = it->second;
    // calendar-like pools keep their order (periods must read Jan, Feb, ...), the others are shuffled
    const bool ordered = pool == "periods" || pool == "weeks" || pool == "slots";
    std::vector<int> perm = r.permutation((int)src.size());
    if (ordered)
        for (size_t i = 0; i < perm.size(); i++) perm[i] = (int)i;
    std::vector<std::string> out;
    for (int i = 0; i < n; i++) {
        if (i < (int)src.size())
            out.push_back(src[perm[i]]);
        else
            out.push_back(fmt::format("{} {}", src[perm[i % src.size()]], i / (int)src.size() + 1));
    }
    return out;
}

}  // namespace trex::optmodel
