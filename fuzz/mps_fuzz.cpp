// Fuzz target: the MPS reader, read_mps_text (src/trex/optmodel/ir/glpk_io.hpp) with format detection, so both GLPK's
// free and fixed MPS readers and our OBJSENSE handling see every input.
//
// Input: the text of an MPS file. A trex::error is a rejected input; anything else is a finding (fuzz_support.hpp).
#include <string>

#include "fuzz_support.hpp"
#include "trex/base/error.hpp"
#include "trex/optmodel/ir/glpk_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        trex::optmodel::read_mps_text(text, "fuzz.mps", trex::optmodel::mps_format::detect);
    } catch (const trex::error&) {
    }
    return 0;
}
