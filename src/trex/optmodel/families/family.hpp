// Problem families: parameterised random instance generators (with a difficulty knob and a designed share of
// infeasible / unbounded instances) plus everything needed to talk about an instance: its structured data
// (the DPS data.json), a scenario catalogue over domains, the indexed formulation in LaTeX, a solver-code template
// and explanations of every variable and constraint group.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "trex/optmodel/families/text.hpp"
#include "trex/optmodel/ir/model.hpp"

namespace trex::optmodel {

using ojson = nlohmann::ordered_json;

enum class design { feasible, infeasible, unbounded };
const char* design_name(design d);

// One scenario of a family: a domain ("production", "logistics", "finance", "energy", "healthcare", "education",
// "environment", "retail", "generic") and the words the family's templates use ({src}, {srcs}, {unit}, ...). Keys
// ending in "_pool" name the pool (text.hpp) entity names are drawn from.
struct scenario {
    std::string domain;
    vocab words;
};

// Documentation of one data key: a set (list of names), a scalar, or a parameter indexed by one or two sets.
struct param_doc {
    std::string key;                 // key in data.json
    std::vector<std::string> index;  // set keys it is indexed by (empty: scalar; for a set: empty and is_set)
    std::string desc;                // template: "supply available at each {src}"
    std::string unit;                // template: "{unit}" (may be empty)
    bool is_set = false;
    // For a parameter some members have no value of: what that means, with {have} for has/have ("{have} no sales
    // limit"); the question then says it of the members without one (empty: every member has a value).
    std::string absent = "";
    // For a 0/1 parameter over two sets: the relation a 1 states, with {row} (a member of the first set) and {cols}
    // (the members of the second it relates to, joined): "{row} covers {cols}." The question then says it row by
    // row instead of listing zeros and ones.
    std::string relation = "";
};

// What a variable or constraint group means; `sets` map the numeric suffixes of the IR name ("x_2_3") to members.
struct name_doc {
    std::string prefix;             // IR name prefix before the first "_<digit>" ("x", "supply")
    std::vector<std::string> sets;  // set keys for the indices (1-based in names)
    std::string text;               // template with {0}, {1} for the members: "amount shipped from {0} to {1}"
};

// One generation request.
struct gen_request {
    uint64_t seed = 0;
    int difficulty = 2;  // 1 (tiny) .. 5 (largest); sizes grow with it
    design want = design::feasible;
    int scenario = -1;  // index into family::scenarios, -1: drawn from the seed
};

struct instance {
    std::string family;
    int difficulty = 1;
    design designed = design::feasible;
    int scenario = 0;
    ojson data;  // the structured data: sets as name lists, parameters as maps by name (nested for two indices)
    model m;
};

struct family;

// What a generator gets: the request, the chosen scenario, a random stream and the instance to fill.
struct gen_context {
    const family& fam;
    const gen_request& req;
    const scenario& sc;
    rng r;
    instance inst;
    // n entity names for a role: from the scenario's "<role>_pool" pool.
    std::vector<std::string> names(const std::string& role, int n);
};

struct family {
    std::string name;   // "transportation"
    std::string title;  // "Transportation problem"
    bool milp = false;  // integer variables by construction
    bool can_infeasible = false;
    bool can_unbounded = false;
    void (*generate)(gen_context& g) = nullptr;

    std::vector<scenario> scenarios;
    std::string intro;                       // template: the opening sentences (scenario words)
    std::vector<param_doc> params;           // every data key, in the order the question presents them
    std::vector<std::string> constraints;    // templates, one sentence per constraint group
    std::string objective;                   // template: the goal sentence
    std::string integrality;                 // template: whole-number requirement ("" for LPs)
    std::string decisions;                   // template for the reasoning: what is decided
    std::string latex;                       // indexed formulation (LaTeX, aligned), with \text{} constraint labels
    std::vector<std::string> latex_symbols;  // "$I$: set of {srcs}" lines (templates)
    std::string code;                        // solver-code template (see code.hpp), reads `data`
    std::vector<name_doc> var_docs, con_docs;
    // The DP statement written as a story instead of from `params` (nullptr: the generic prose); a family with a
    // story writes every number of the data into it.
    std::string (*story)(const family& f, const instance& in, rng& r) = nullptr;
};

// Every family, in a fixed order.
const std::vector<const family*>& all_families();
// The family called `name`; throws trex::error listing the known names.
const family& find_family(const std::string& name);

// Generates one instance (validated). Deterministic in (family, request).
instance generate(const family& f, const gen_request& req);

// JSON number: an integer when the value is integral (so data.json says 3, not 3.0).
ojson num(double v);
double as_double(const ojson& v);

// The member names behind an IR name ("x_2_3" with sets {"plants","cities"} -> {"Plant B", "City C"}); empty
// when the name does not match any of the docs. doc receives the matching name_doc.
std::vector<std::string> members_of(const std::string& ir_name, const std::vector<name_doc>& docs, const ojson& data,
                                    const name_doc** doc);

}  // namespace trex::optmodel
