// One-line renderings of JSON values for error messages (config files, planner files).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace trex {

// The value as compact JSON, cut to 60 characters.
std::string json_show(const nlohmann::json& v);
// "null", "a boolean", "an integer", "a float", "a string", "an array" or "an object".
const char* json_type_name(const nlohmann::json& v);

}  // namespace trex
