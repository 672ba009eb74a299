// Fuzz target: the LP readers behind read_lp_text (src/trex/optmodel/ir/glpk_io.hpp): Gurobi's dialect
// (lp_dialect.hpp) first, then GLPK's CPLEX reader, its fatal errors caught by glpk_run.
//
// Input: the text of an LP file. A trex::error is a rejected input; anything else is a finding (fuzz_support.hpp).
#include <string>

#include "fuzz_support.hpp"
#include "trex/base/error.hpp"
#include "trex/optmodel/ir/glpk_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        trex::optmodel::read_lp_text(text, "fuzz.lp");
    } catch (const trex::error&) {
    }
    return 0;
}
