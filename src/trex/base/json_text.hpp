// One-line renderings of JSON values for error messages (config files, planner files), and the JSONL reading loop
// of the data commands.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace trex {

// The value as compact JSON, cut to 60 characters.
std::string json_show(const nlohmann::json& v);
// "null", "a boolean", "an integer", "a float", "a string", "an array" or "an object".
const char* json_type_name(const nlohmann::json& v);

// Calls fn(line_number, line, record) for each non-empty line of a JSONL file, in order; fn may stop the loop by
// returning false. Errors: "PATH: cannot read<unreadable_hint>", "PATH: line N: malformed JSON".
void for_each_jsonl(const std::string& path,
                    const std::function<bool(long, const std::string&, nlohmann::ordered_json&)>& fn,
                    const std::string& unreadable_hint = "");

}  // namespace trex
