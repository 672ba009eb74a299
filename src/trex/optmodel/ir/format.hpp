// Number and name formatting shared by the writers.
#pragma once

#include <string>
#include <vector>

#include "trex/optmodel/ir/model.hpp"

namespace trex::optmodel {

// Shortest text that reads back to exactly x: integers without a point ("12", "-3"), otherwise the shortest
// round-trip form from std::to_chars ("0.03", "1e-05", "2.5e+20"). Never a leading dot (COIN's LP reader misreads
// ".03"), never "-0". x must be finite.
std::string format_number(double x);

// A value for people: integers as integers, otherwise at most `digits` significant digits, trailing zeros cut.
std::string format_value(double x, int digits = 10);

// Names safe for the LP, MPS and MathProg formats: [A-Za-z0-9_] only, not starting with a digit or 'e'/'E' + digit
// (read as an exponent by some LP readers), no reserved word of those formats (nor
// "obj" or "obj_constant", used by the writers), unique (a suffix "_2", "_3"... is added).
struct safe_names {
    std::vector<std::string> vars;
    std::vector<std::string> cons;
};
safe_names make_safe_names(const model& m);

}  // namespace trex::optmodel
