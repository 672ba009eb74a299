// The regular expressions of HF tokenizers' Split pre-tokenizer (Oniguruma syntax in HF) run on PCRE2 with JIT.
//
// HF compiles patterns with Oniguruma; PCRE2 agrees on the constructs tokenizers use (Unicode properties,
// classes, look-arounds, lazy/possessive quantifiers) once a few escapes are translated to their Oniguruma
// meaning (docs/tokenizer.md §3): \s (White_Space-like: \t-\r, U+0085, \p{Z}), \d (\p{Nd}), \w, \h (hex digit),
// \uHHHH. ^ and $ are line anchors as in Oniguruma (PCRE2_MULTILINE). Unsupported constructs (nested classes,
// class intersection, \S/\W/\H inside a class) are rejected with an error rather than approximated.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace trex::tok {

class regex {
   public:
    regex() = default;
    // Compiles an Oniguruma-syntax pattern; on failure returns false and sets *err to a one-line message
    // (PCRE2's message and the offset in the original pattern).
    bool compile(const std::string& pattern, std::string* err);
    // A literal pattern (HF's Split {"String": ...}).
    bool compile_literal(const std::string& text, std::string* err);
    bool empty() const { return !code_; }
    const std::string& pattern() const { return pattern_; }

    // Calls f(start, end) for each match in s[0..n) (s must be valid UTF-8) in the order of Oniguruma's find_iter
    // as HF uses it: the search restarts at the previous match end, and an empty match that ends where the
    // previous match ended is skipped (the search then advances by one character).
    template <class F>
    void for_each_match(const char* s, size_t n, F&& f) const {
        size_t pos = 0, last_end = (size_t)-1;
        while (pos <= n) {
            size_t ms, me;
            if (!search(s, n, pos, &ms, &me)) break;
            if (ms == me && me == last_end) {
                if (pos >= n) break;
                pos += char_len(s, n, pos);
                continue;
            }
            f(ms, me);
            last_end = me;
            pos = me;
        }
    }

    // First match at or after start: true with [*ms, *me).
    bool search(const char* s, size_t n, size_t start, size_t* ms, size_t* me) const;

   private:
    static size_t char_len(const char* s, size_t n, size_t pos);
    std::shared_ptr<void> code_;  // pcre2_code_8
    std::string pattern_;
};

// The pattern with Oniguruma-only escapes rewritten for PCRE2, or false with *err (exposed for tests).
bool translate_onig_pattern(const std::string& in, std::string* out, std::string* err);

}  // namespace trex::tok
