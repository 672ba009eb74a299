#include "trex/plan/json_reader.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "trex/base/error.hpp"
#include "trex/base/json_text.hpp"

namespace trex::plan {

json read_json_file(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw_error(fmt::format("{}: cannot open file", path));
    std::stringstream ss;
    ss << f.rdbuf();
    try {
        return json::parse(ss.str());
    } catch (const json::exception& e) {  // parse_error, or out_of_range for a number beyond double's range
        std::string what = e.what();
        for (auto& c : what)
            if (c == '\n') c = ' ';
        throw_error(fmt::format("{}: invalid JSON: {}", path, what));
    }
}

jreader::jreader(const json& j, std::string source, std::string prefix)
    : j_(j), source_(std::move(source)), prefix_(std::move(prefix)) {
    if (!j_.is_object()) {
        if (prefix_.empty())
            throw_error(fmt::format("{}: expected a JSON object, got {}", source_, json_type_name(j_)));
        throw_error(fmt::format("{}: key '{}': expected an object, got {} {}", source_,
                                prefix_.substr(0, prefix_.size() - 1), json_type_name(j_), json_show(j_)));
    }
}

void jreader::fail(const std::string& key, const std::string& msg) const {
    throw_error(fmt::format("{}: key '{}': {}", source_, prefix_ + key, msg));
}

const json* jreader::find(const std::string& key) const {
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return nullptr;
    return &*it;
}

bool jreader::has(const std::string& key) const {
    return find(key) != nullptr;
}

double jreader::num(const std::string& key, double def, double lo, double hi) const {
    const json* v = find(key);
    if (!v) return def;
    if (!v->is_number()) fail(key, fmt::format("expected a number, got {} {}", json_type_name(*v), json_show(*v)));
    const double x = v->get<double>();
    if (!std::isfinite(x)) fail(key, "must be finite");
    if (x < lo || x > hi) fail(key, fmt::format("must be in [{}, {}] (got {})", lo, hi, x));
    return x;
}

double jreader::num_req(const std::string& key, double lo, double hi) const {
    if (!find(key)) fail(key, "missing required key");
    return num(key, 0, lo, hi);
}

int64_t jreader::integer(const std::string& key, int64_t def, int64_t lo, int64_t hi) const {
    const json* v = find(key);
    if (!v) return def;
    if (!v->is_number_integer())
        fail(key, fmt::format("expected an integer, got {} {}", json_type_name(*v), json_show(*v)));
    if (v->is_number_unsigned() && v->get<uint64_t>() > (uint64_t)INT64_MAX) fail(key, "out of range");
    const int64_t x = v->get<int64_t>();
    if (x < lo || x > hi) fail(key, fmt::format("must be in [{}, {}] (got {})", lo, hi, x));
    return x;
}

int64_t jreader::integer_req(const std::string& key, int64_t lo, int64_t hi) const {
    if (!find(key)) fail(key, "missing required key");
    return integer(key, 0, lo, hi);
}

bool jreader::boolean(const std::string& key, bool def) const {
    const json* v = find(key);
    if (!v) return def;
    if (!v->is_boolean()) fail(key, fmt::format("expected a boolean, got {} {}", json_type_name(*v), json_show(*v)));
    return v->get<bool>();
}

std::string jreader::str(const std::string& key, const std::string& def) const {
    const json* v = find(key);
    if (!v) return def;
    if (!v->is_string()) fail(key, fmt::format("expected a string, got {} {}", json_type_name(*v), json_show(*v)));
    return v->get<std::string>();
}

std::string jreader::str_req(const std::string& key) const {
    if (!find(key)) fail(key, "missing required key");
    return str(key, "");
}

std::string jreader::choice(const std::string& key, const std::string& def,
                            const std::vector<std::string>& allowed) const {
    const std::string s = str(key, def);
    for (const auto& a : allowed)
        if (a == s) return s;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    fail(key, fmt::format("'{}' is not one of: {}", s, list));
}

std::vector<std::string> jreader::str_list(const std::string& key) const {
    const json* v = find(key);
    if (!v) return {};
    if (v->is_string()) return {v->get<std::string>()};
    if (!v->is_array()) fail(key, fmt::format("expected a string or an array of strings, got {}", json_type_name(*v)));
    std::vector<std::string> out;
    for (size_t i = 0; i < v->size(); i++) {
        if (!(*v)[i].is_string())
            fail(key, fmt::format("entry {} must be a string, got {}", i, json_type_name((*v)[i])));
        out.push_back((*v)[i].get<std::string>());
    }
    return out;
}

jreader jreader::object(const std::string& key, bool optional) const {
    const json* v = find(key);
    if (!v) {
        if (!optional) fail(key, "missing required key");
        static const json empty = json::object();
        return jreader(empty, source_, prefix_ + key + ".");
    }
    return jreader(*v, source_, prefix_ + key + ".");
}

std::vector<jreader> jreader::object_list(const std::string& key) const {
    const json* v = find(key);
    if (!v) fail(key, "missing required key");
    if (!v->is_array()) fail(key, fmt::format("expected an array, got {} {}", json_type_name(*v), json_show(*v)));
    std::vector<jreader> out;
    for (size_t i = 0; i < v->size(); i++) {
        if (!(*v)[i].is_object())
            fail(key, fmt::format("entry {} must be an object, got {}", i, json_type_name((*v)[i])));
        out.emplace_back((*v)[i], source_, fmt::format("{}{}[{}].", prefix_, key, i));
    }
    return out;
}

void jreader::check_keys(const std::set<std::string>& known) const {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
        const std::string& k = it.key();
        if (known.count(k) || k == "source" || k == "notes" || k == "description" || (!k.empty() && k[0] == '_'))
            continue;
        fail(k, "unknown key");
    }
}

}  // namespace trex::plan
