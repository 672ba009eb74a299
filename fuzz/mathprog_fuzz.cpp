// Fuzz target: the MathProg reader, read_mathprog_text (src/trex/optmodel/ir/glpk_io.hpp: GLPK's translator, model and
// data section, generation).
//
// Input: the text of a MathProg model. A trex::error is a rejected input; anything else is a finding
// (fuzz_support.hpp). MathProg can write files (printf ... > "file", table ... OUT): scripts/fuzz.sh runs the
// target inside its scratch directory, so whatever a mutated model writes is removed with it.
//
// Known finding, skipped so that the fuzzer looks past it: GLPK evaluates a parameter or set defined in terms of
// itself (`param p := p;`, `set S{i in I} := S[i];`, or deep `q[i-1]` recursion) by unbounded recursion, and the
// process dies of a stack overflow, glpsol too (fuzz/findings/README.md; trex eval reads model-written MathProg only
// in its sandboxed solve worker). MathProg names are declared before use, so a definition that mentions its own
// name is the only way in: inputs with one are not run.
#include <algorithm>
#include <cctype>
#include <string>

#include "fuzz_support.hpp"
#include "trex/base/error.hpp"
#include "trex/optmodel/ir/glpk_io.hpp"

namespace {

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// True when `word` occurs in s[from, to) as a whole MathProg name.
bool mentions(const std::string& s, size_t from, size_t to, const std::string& word) {
    for (size_t p = s.find(word, from); p != std::string::npos && p + word.size() <= to; p = s.find(word, p + 1)) {
        const bool starts = p == 0 || !is_name_char(s[p - 1]);
        const bool ends = p + word.size() == s.size() || !is_name_char(s[p + word.size()]);
        if (starts && ends) return true;
    }
    return false;
}

// The first position at or after p in s[p, e) that is neither white space nor inside a comment.
size_t skip_blank(const std::string& s, size_t p, size_t e) {
    while (p < e) {
        if (std::isspace(static_cast<unsigned char>(s[p]))) {
            p++;
        } else if (s[p] == '#') {
            p = std::min(s.find('\n', p), e);
        } else if (s.compare(p, 2, "/*") == 0) {
            const size_t close = s.find("*/", p + 2);
            p = close == std::string::npos ? e : std::min(close + 2, e);
        } else {
            break;
        }
    }
    return p;
}

// True when a `param` or `set` statement (text up to the next ';') mentions the name it declares again.
bool has_self_referential_definition(const std::string& s) {
    for (size_t b = 0; b < s.size();) {
        size_t e = s.find(';', b);
        if (e == std::string::npos) e = s.size();
        const size_t p = skip_blank(s, b, e);
        for (const std::string kw : {"param", "set"}) {
            if (s.compare(p, kw.size(), kw) != 0 || p + kw.size() >= e || is_name_char(s[p + kw.size()])) continue;
            size_t n = p + kw.size();
            while (n < e && !is_name_char(s[n])) n++;
            size_t m = n;
            while (m < e && is_name_char(s[m])) m++;
            if (m > n && mentions(s, m, e, s.substr(n, m - n))) return true;
        }
        b = e + 1;
    }
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    if (has_self_referential_definition(text)) return 0;
    try {
        trex::optmodel::read_mathprog_text(text, "fuzz.mod");
    } catch (const trex::error&) {
    }
    return 0;
}
