// Small string helpers.
#pragma once

#include <string>

namespace trex {

std::string ascii_lower(std::string s);    // A-Z -> a-z, other bytes unchanged
std::string trim(const std::string& s);    // without leading and trailing ASCII white space

}  // namespace trex
