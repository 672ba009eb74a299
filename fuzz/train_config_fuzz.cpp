// Fuzz target: the run config reader, load_train_config (src/trex/train/train_config.hpp).
//
// Input: a TOML run config, optionally followed by a line "# --set" (a TOML comment, so every seed stays a valid
// run config); each non-empty line after that marker is one command-line override "section.key=value". A
// trex::error is a rejected input; anything else is a finding (fuzz_support.hpp).
//
// Known finding, skipped so that the fuzzer looks past it: toml++ 3.3.0 (Debian 12) reaches __builtin_unreachable
// when its horizontal-whitespace test meets a code point in [U+00A0, U+FEFF] that is not whitespace
// (marzer/tomlplusplus#190 and #295, fixed upstream by #305; fuzz/findings/README.md). Inputs holding such a code
// point are not run.
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "trex/base/error.hpp"
#include "trex/train/train_config.hpp"

namespace {

const std::string k_marker = "\n# --set\n";

// The overrides after the marker, one per non-empty line.
std::vector<std::string> overrides_of(const std::string& tail) {
    std::vector<std::string> out;
    size_t b = 0;
    while (b <= tail.size()) {
        size_t e = tail.find('\n', b);
        if (e == std::string::npos) e = tail.size();
        if (e > b) out.push_back(tail.substr(b, e - b));
        b = e + 1;
    }
    return out;
}

// True when the text holds a two- or three-byte UTF-8 sequence of a code point in [U+00A0, U+FEFF] (continuation
// bytes are not checked: a malformed lookalike is skipped too).
bool has_code_point_toml_mishandles(const std::string& s) {
    for (size_t i = 0; i + 1 < s.size(); i++) {
        const unsigned b0 = static_cast<unsigned char>(s[i]), b1 = static_cast<unsigned char>(s[i + 1]);
        unsigned cp = 0;
        if (b0 >= 0xC2 && b0 <= 0xDF) {
            cp = ((b0 & 0x1Fu) << 6) | (b1 & 0x3Fu);
        } else if (b0 >= 0xE0 && b0 <= 0xEF && i + 2 < s.size()) {
            cp = ((b0 & 0x0Fu) << 12) | ((b1 & 0x3Fu) << 6) | (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
        }
        if (cp >= 0xA0 && cp <= 0xFEFF) return true;
    }
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string input(reinterpret_cast<const char*>(data), size);
    if (has_code_point_toml_mishandles(input)) return 0;
    const size_t cut = input.find(k_marker);
    const std::string toml = input.substr(0, cut);
    const std::vector<std::string> overrides =
        cut == std::string::npos ? std::vector<std::string>{} : overrides_of(input.substr(cut + k_marker.size()));
    const std::string path =
        trex::fuzz::write_scratch_file("run.toml", reinterpret_cast<const uint8_t*>(toml.data()), toml.size());
    try {
        trex::load_train_config(path, overrides);
    } catch (const trex::error&) {
    }
    return 0;
}
