#include "trex/base/json_text.hpp"

#include <fmt/format.h>

#include <fstream>

#include "trex/base/error.hpp"

namespace trex {

std::string json_show(const nlohmann::json& v) {
    std::string s = v.dump();
    if (s.size() > 60) s = s.substr(0, 57) + "...";
    return s;
}

const char* json_type_name(const nlohmann::json& v) {
    if (v.is_null()) return "null";
    if (v.is_boolean()) return "a boolean";
    if (v.is_number_integer()) return "an integer";
    if (v.is_number_float()) return "a float";
    if (v.is_string()) return "a string";
    if (v.is_array()) return "an array";
    return "an object";
}

void for_each_jsonl(const std::string& path,
                    const std::function<bool(long, const std::string&, nlohmann::ordered_json&)>& fn,
                    const std::string& unreadable_hint) {
    std::ifstream in(path, std::ios::binary);
    TREX_CHECK(in.good(), "{}: cannot read{}", path, unreadable_hint);
    std::string line;
    long no = 0;
    while (std::getline(in, line)) {
        no++;
        if (line.empty()) continue;
        nlohmann::ordered_json rec;
        try {
            rec = nlohmann::ordered_json::parse(line);
        } catch (const std::exception&) {
            throw_error(fmt::format("{}: line {}: malformed JSON", path, no));
        }
        if (!fn(no, line, rec)) return;
    }
}

}  // namespace trex
