#define PCRE2_CODE_UNIT_WIDTH 8
#include "trex/tokenizer/regex.hpp"

#include <pcre2.h>

#include <fmt/format.h>

#include <cctype>
#include <string_view>

#include "trex/base/error.hpp"

namespace trex::tok {

namespace {

// Oniguruma's \s for UTF-8 text: U+0009..U+000D, U+0085 and the separators (Zs, Zl, Zp).
constexpr const char* space_items = "\\t-\\r\\x{85}\\p{Z}";
// Oniguruma's \w for UTF-8 text (letters, marks, numbers, connector punctuation).
constexpr const char* word_items = "\\p{L}\\p{M}\\p{N}\\p{Pc}";
constexpr const char* hex_items = "0-9a-fA-F";

// Code points newer Unicode versions (HF's Oniguruma) put in a general category and Unicode 14 (PCRE2 10.42) does
// not: added to \p{X} so that pieces agree with HF on text with recent characters.
struct category_delta {
    const char* category;
    const char* items;
};
constexpr category_delta unicode_delta[] = {
#include "trex/tokenizer/unicode_delta.inc"
};

const char* delta_of(const std::string& cat) {
    for (const auto& d : unicode_delta)
        if (cat == d.category) return d.items;
    return "";
}

// Rewrites every \p{X} of a class body with the delta of X (for the class items trex injects itself).
std::string with_deltas(const std::string& items) {
    std::string out;
    for (size_t i = 0; i < items.size(); i++) {
        out += items[i];
        if (items[i] == '\\' && i + 1 < items.size() && items[i + 1] == 'p' && i + 2 < items.size() &&
            items[i + 2] == '{') {
            const size_t end = items.find('}', i);
            const std::string cat = items.substr(i + 3, end - i - 3);
            out += items.substr(i + 1, end - i);
            out += delta_of(cat);
            i = end;
        }
    }
    return out;
}

// Per-thread match data (one pair: we only read group 0) and a JIT stack large enough for long pieces.
struct thread_match_state {
    pcre2_match_data* md = nullptr;
    pcre2_match_context* mc = nullptr;
    pcre2_jit_stack* js = nullptr;
    thread_match_state() {
        md = pcre2_match_data_create(1, nullptr);
        mc = pcre2_match_context_create(nullptr);
        js = pcre2_jit_stack_create(64 * 1024, 64 * 1024 * 1024, nullptr);
        if (mc && js) pcre2_jit_stack_assign(mc, nullptr, js);
    }
    ~thread_match_state() {
        if (md) pcre2_match_data_free(md);
        if (mc) pcre2_match_context_free(mc);
        if (js) pcre2_jit_stack_free(js);
    }
};
thread_match_state& match_state() {
    thread_local thread_match_state st;
    return st;
}

}  // namespace

bool translate_onig_pattern(const std::string& in, std::string* out, std::string* err) {
    out->clear();
    bool in_class = false;
    size_t class_start = 0;  // index just after '[' or '[^' (a ']' there is literal)
    for (size_t i = 0; i < in.size(); i++) {
        const char c = in[i];
        if (c == '\\') {
            if (i + 1 >= in.size()) {
                *out += c;
                continue;
            }
            const char e = in[i + 1];
            const char* neg = nullptr;
            switch (e) {
                case 's':
                    *out += in_class ? with_deltas(space_items) : fmt::format("[{}]", with_deltas(space_items));
                    i++;
                    continue;
                case 'w':
                    *out += in_class ? with_deltas(word_items) : fmt::format("[{}]", with_deltas(word_items));
                    i++;
                    continue;
                case 'p':
                case 'P': {
                    // \p{X}, \p{^X}, \P{X}, \pX: general categories get the Unicode delta
                    std::string cat;
                    size_t end = i + 2;
                    if (i + 2 < in.size() && in[i + 2] == '{') {
                        end = in.find('}', i + 3);
                        if (end == std::string::npos) break;  // let PCRE2 report it
                        cat = in.substr(i + 3, end - i - 3);
                    } else if (i + 2 < in.size()) {
                        cat = in.substr(i + 2, 1);
                    } else {
                        break;
                    }
                    bool negated = e == 'P';
                    if (!cat.empty() && cat[0] == '^') {
                        negated = !negated;
                        cat = cat.substr(1);
                    }
                    const char* delta = delta_of(cat);
                    const std::string prop = fmt::format("\\p{{{}}}", cat);
                    if (!*delta) {
                        *out += in.substr(i, end + 1 - i);
                    } else if (negated) {
                        if (in_class) {
                            *err = fmt::format(
                                "negated property \\{}{} inside a character class is not supported "
                                "(offset {})",
                                e, in.substr(i + 2, end - i - 1), i);
                            return false;
                        }
                        *out += fmt::format("[^{}{}]", prop, delta);
                    } else {
                        *out += in_class ? prop + delta : fmt::format("[{}{}]", prop, delta);
                    }
                    i = end;
                    continue;
                }
                case 'h':
                    *out += in_class ? std::string(hex_items) : fmt::format("[{}]", hex_items);
                    i++;
                    continue;
                case 'd':
                    *out += "\\p{Nd}";
                    i++;
                    continue;
                case 'D':
                    *out += "\\P{Nd}";
                    i++;
                    continue;
                case 'S':
                    neg = space_items;
                    break;
                case 'W':
                    neg = word_items;
                    break;
                case 'H':
                    neg = hex_items;
                    break;
                case 'u':
                    if (i + 5 < in.size()) {
                        bool hex = true;
                        for (size_t k = i + 2; k < i + 6; k++) hex = hex && std::isxdigit((unsigned char)in[k]);
                        if (hex) {
                            *out += "\\x{" + in.substr(i + 2, 4) + "}";
                            i += 5;
                            continue;
                        }
                    }
                    break;
                default:
                    break;
            }
            if (neg) {
                if (in_class) {
                    *err = fmt::format("\\{} inside a character class is not supported (offset {})", e, i);
                    return false;
                }
                *out += fmt::format("[^{}]", with_deltas(neg));
                i++;
                continue;
            }
            *out += c;
            *out += e;
            i++;
            continue;
        }
        if (!in_class) {
            if (c == '[') {
                in_class = true;
                *out += c;
                if (i + 1 < in.size() && in[i + 1] == '^') {
                    *out += '^';
                    i++;
                }
                class_start = i + 1;
                continue;
            }
            *out += c;
            continue;
        }
        // inside a class
        if (c == ']' && i != class_start) {
            in_class = false;
            *out += c;
            continue;
        }
        if (c == '[') {
            if (i + 1 < in.size() && in[i + 1] == ':') {  // POSIX class [:alpha:]
                const size_t end = in.find(":]", i + 2);
                if (end != std::string::npos) {
                    *out += in.substr(i, end + 2 - i);
                    i = end + 1;
                    continue;
                }
            }
            *err = fmt::format("nested character classes are not supported (offset {})", i);
            return false;
        }
        if (c == '&' && i + 1 < in.size() && in[i + 1] == '&') {
            *err = fmt::format("character class intersection '&&' is not supported (offset {})", i);
            return false;
        }
        *out += c;
    }
    return true;
}

bool regex::compile(const std::string& pattern, std::string* err) {
    pattern_ = pattern;
    std::string translated;
    if (!translate_onig_pattern(pattern, &translated, err)) return false;
    int errcode = 0;
    PCRE2_SIZE erroff = 0;
    pcre2_compile_context* cc = pcre2_compile_context_create(nullptr);
    pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
    pcre2_code* code =
        pcre2_compile((PCRE2_SPTR)translated.data(), translated.size(),
                      PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE | PCRE2_NO_UTF_CHECK, &errcode, &erroff, cc);
    pcre2_compile_context_free(cc);
    if (!code) {
        PCRE2_UCHAR buf[256];
        pcre2_get_error_message(errcode, buf, sizeof buf);
        *err = fmt::format("{} at offset {}", (const char*)buf, (size_t)erroff);
        if (translated != pattern) {
            // Prefer the offset in the pattern as written when PCRE2 rejects it the same way.
            int errcode2 = 0;
            PCRE2_SIZE erroff2 = 0;
            pcre2_code* raw = pcre2_compile((PCRE2_SPTR)pattern.data(), pattern.size(), PCRE2_UTF | PCRE2_UCP,
                                            &errcode2, &erroff2, nullptr);
            if (raw) {
                pcre2_code_free(raw);
                *err += fmt::format(" of the PCRE2 translation '{}'", translated);
            } else {
                pcre2_get_error_message(errcode2, buf, sizeof buf);
                *err = fmt::format("{} at offset {}", (const char*)buf, (size_t)erroff2);
            }
        }
        return false;
    }
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter when JIT is unavailable
    code_ = std::shared_ptr<void>(code, [](void* p) { pcre2_code_free((pcre2_code*)p); });
    return true;
}

bool regex::compile_literal(const std::string& text, std::string* err) {
    if (text.empty()) {
        *err = "an empty String pattern is not supported";
        return false;
    }
    std::string p;
    for (char c : text) {
        if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) p += '\\';
        p += c;
    }
    const bool ok = compile(p, err);
    pattern_ = text;
    return ok;
}

size_t regex::char_len(const char* s, size_t n, size_t pos) {
    size_t k = 1;
    while (pos + k < n && ((unsigned char)s[pos + k] & 0xC0) == 0x80) k++;
    return k;
}

bool regex::search(const char* s, size_t n, size_t start, size_t* ms, size_t* me) const {
    thread_match_state& st = match_state();
    auto* code = (pcre2_code*)code_.get();
    const int rc = pcre2_match(code, (PCRE2_SPTR)s, n, start, PCRE2_NO_UTF_CHECK, st.md, st.mc);
    if (rc == PCRE2_ERROR_NOMATCH) return false;
    if (rc < 0) {
        PCRE2_UCHAR buf[256];
        pcre2_get_error_message(rc, buf, sizeof buf);
        throw_error(fmt::format("regex '{}': matching failed on a {}-byte piece: {}", pattern_, n, (const char*)buf));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.md);
    *ms = ov[0];
    *me = ov[1];
    return true;
}

}  // namespace trex::tok
