// Typed, validated reads out of the planner's JSON files (hardware profiles, model descriptions, runs, validation
// points, calibration). Every failure is one trex::error line "<file>: key '<path>': <problem>". Unknown keys are
// rejected (a typo must not silently fall back to a default), except "source", "notes", "description" and keys
// starting with "_", which are free-form documentation.
#pragma once

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

namespace trex::plan {

using json = nlohmann::json;

// Parses a JSON file; a missing file or a syntax error is one line naming the file.
json read_json_file(const std::string& path);

class jreader {
   public:
    // `source` names the file; `prefix` the path of this object inside it ("" or "setup.").
    jreader(const json& j, std::string source, std::string prefix = "");

    bool has(const std::string& key) const;
    double num(const std::string& key, double def, double lo, double hi) const;  // optional
    double num_req(const std::string& key, double lo, double hi) const;
    int64_t integer(const std::string& key, int64_t def, int64_t lo, int64_t hi) const;
    int64_t integer_req(const std::string& key, int64_t lo, int64_t hi) const;
    bool boolean(const std::string& key, bool def) const;
    std::string str(const std::string& key, const std::string& def) const;
    std::string str_req(const std::string& key) const;
    // One of `allowed`.
    std::string choice(const std::string& key, const std::string& def, const std::vector<std::string>& allowed) const;
    std::vector<std::string> str_list(const std::string& key) const;  // a string or an array of strings
    // A nested object (required unless `optional`; an absent optional object reads as {}).
    jreader object(const std::string& key, bool optional = false) const;
    std::vector<jreader> object_list(const std::string& key) const;
    const json& raw() const { return j_; }
    const std::string& source() const { return source_; }
    std::string path(const std::string& key) const { return prefix_ + key; }
    [[noreturn]] void fail(const std::string& key, const std::string& msg) const;
    // Throws on any key not in `known` (documentation keys excepted).
    void check_keys(const std::set<std::string>& known) const;

   private:
    const json* find(const std::string& key) const;
    const json& j_;
    std::string source_, prefix_;
};

}  // namespace trex::plan
