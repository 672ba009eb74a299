// Shared helpers of the family files (internal header). Conventions of every family:
//   * IR names: <prefix>_<i>_<j> with 1-based indices into the data sets (so members_of can explain them);
//   * data.json: sets are name lists, parameters maps by member name (nested maps for two indices), scalars numbers;
//   * the code template builds exactly the IR model (same names), so re-execution reproduces the objective.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "trex/optmodel/families/family.hpp"

namespace trex::optmodel::families {

using strings = std::vector<std::string>;

inline ojson list(const strings& s) {
    ojson a = ojson::array();
    for (const auto& x : s) a.push_back(x);
    return a;
}

// {name: value} over a set.
inline ojson map1(const strings& keys, const std::vector<double>& v) {
    ojson o = ojson::object();
    for (size_t i = 0; i < keys.size(); i++) o[keys[i]] = num(v[i]);
    return o;
}

// {row: {col: value}}.
inline ojson map2(const strings& rows, const strings& cols, const std::vector<std::vector<double>>& v) {
    ojson o = ojson::object();
    for (size_t i = 0; i < rows.size(); i++) o[rows[i]] = map1(cols, v[i]);
    return o;
}

inline std::string nm(const char* prefix, int i) {
    return fmt::format("{}_{}", prefix, i + 1);
}
inline std::string nm(const char* prefix, int i, int j) {
    return fmt::format("{}_{}_{}", prefix, i + 1, j + 1);
}

// A letter label for the k-th of many like things (0 -> "A", 25 -> "Z", 26 -> "AA", 27 -> "AB"): names without
// digits, so they stay apart from the data's numbers.
inline std::string letters(int k) {
    std::string s(1, (char)('A' + k % 26));
    if (k >= 26) s.insert(s.begin(), (char)('A' + (k / 26 - 1) % 26));
    return s;
}

inline double sum(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s;
}

}  // namespace trex::optmodel::families

// Declares the accessor of one family (defined in families/<name>.cpp).
#define TREX_FAMILY(fn) const ::trex::optmodel::family& fn()
