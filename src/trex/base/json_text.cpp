#include "trex/base/json_text.hpp"

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

}  // namespace trex
