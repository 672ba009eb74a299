// Escaping text for HTML and SVG (reports).
#pragma once

#include <string>

namespace trex {

// <, >, & and " as entities.
std::string html_escape(const std::string& s);

}  // namespace trex
