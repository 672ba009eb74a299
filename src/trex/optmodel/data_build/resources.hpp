// "Collected resources" for CPT: Debian-shipped OR material converted to Markdown documents that name their source:
// GLPK's MathProg examples (glpk-utils), COIN-OR's sample models (coinor-libcoinutils-dev, with statistics read by
// GLPK and known optima from glpk-doc's tables) and the GLPK manual text shipped in glpk-doc. Missing packages
// simply contribute no documents.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace trex::optmodel {

// (name, markdown) pairs in a fixed order; names are file-name safe.
std::vector<std::pair<std::string, std::string>> collected_resources();

}  // namespace trex::optmodel
