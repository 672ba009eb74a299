// UTF-8 helpers for the tokenizer: validation with the Unicode "maximal subpart" rule (the rule of Python's
// errors='replace' and Rust's String::from_utf8_lossy), and the byte-level alphabet of GPT-2 style BPE.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace trex::tok {

// Length of the well-formed UTF-8 character at s[0..n) (1..4, code point in *cp), or -k when the first k bytes are
// a maximal ill-formed subpart (k >= 1; they are replaced by one U+FFFD under the maximal-subpart rule). n >= 1.
int utf8_next(const unsigned char* s, size_t n, uint32_t* cp);

// Offset of the first ill-formed byte, or n when s is valid UTF-8.
size_t utf8_valid_prefix(const unsigned char* s, size_t n);

// Appends the UTF-8 encoding of cp.
void utf8_append(std::string& out, uint32_t cp);

// The byte-level alphabet: byte b <-> a printable code point (GPT-2's bytes_to_unicode).
uint32_t byte_to_char(uint8_t b);
// The byte a byte-level code point stands for, or -1 when cp is not in the alphabet.
int char_to_byte(uint32_t cp);
// UTF-8 of the byte-level string of bytes s[0..n) (each byte becomes one code point).
std::string bytes_to_byte_level(std::string_view bytes);
// Inverse of bytes_to_byte_level: false when some character is not in the alphabet (or s is not valid UTF-8).
bool byte_level_to_bytes(std::string_view s, std::string* out);

// Unicode White_Space (what Rust's char::is_whitespace and regex's \s use).
bool is_white_space(uint32_t cp);

}  // namespace trex::tok
