// Fuzz target: answer extraction, extract_artefact and sniff_kind (src/trex/eval/extract.hpp).
//
// Input: a model completion. It is extracted with no preference and with each preferred kind, and sniffed whole.
// Neither function documents an exception, so any exception is a finding, as is a crash or a sanitizer report
// (fuzz_support.hpp); so is an artefact whose kind is not one of the documented ones, or an empty kind with text.
#include <string>

#include "fuzz_support.hpp"
#include "trex/eval/extract.hpp"

namespace {

bool known_kind(const std::string& kind) {
    return kind.empty() || kind == "python" || kind == "lp" || kind == "mps" || kind == "mathprog";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string completion(reinterpret_cast<const char*>(data), size);
    for (const char* prefer : {"", "python", "lp", "mps", "mathprog"}) {
        const trex::eval::artefact a = trex::eval::extract_artefact(completion, prefer);
        if (!known_kind(a.kind)) trex::fuzz::finding("extract_artefact returned the unknown kind '" + a.kind + "'");
        if (a.kind.empty() && !a.text.empty()) trex::fuzz::finding("extract_artefact returned text without a kind");
    }
    if (!known_kind(trex::eval::sniff_kind(completion))) trex::fuzz::finding("sniff_kind returned an unknown kind");
    return 0;
}
