#include "trex/tokenizer/utf8.hpp"

#include <array>

namespace trex::tok {

int utf8_next(const unsigned char* s, size_t n, uint32_t* cp) {
    const unsigned char c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    int len;
    uint32_t v;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte (Unicode Table 3-7)
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        v = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        v = c & 0x0F;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        v = c & 0x07;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return -1;  // 80..C1, F5..FF: never a lead byte
    }
    for (int i = 1; i < len; i++) {
        if ((size_t)i >= n) return -i;
        const unsigned char b = s[i];
        const unsigned char l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
        if (b < l || b > h) return -i;
        v = (v << 6) | (b & 0x3F);
    }
    *cp = v;
    return len;
}

size_t utf8_valid_prefix(const unsigned char* s, size_t n) {
    size_t i = 0;
    while (i < n) {
        // ASCII fast path, 8 bytes at a time
        while (i + 8 <= n) {
            uint64_t w;
            __builtin_memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ull) break;
            i += 8;
        }
        if (i >= n) break;
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        const int k = utf8_next(s + i, n - i, &cp);
        if (k < 0) return i;
        i += (size_t)k;
    }
    return n;
}

void utf8_append(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += (char)cp;
    } else if (cp < 0x800) {
        out += (char)(0xC0 | (cp >> 6));
        out += (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += (char)(0xE0 | (cp >> 12));
        out += (char)(0x80 | ((cp >> 6) & 0x3F));
        out += (char)(0x80 | (cp & 0x3F));
    } else {
        out += (char)(0xF0 | (cp >> 18));
        out += (char)(0x80 | ((cp >> 12) & 0x3F));
        out += (char)(0x80 | ((cp >> 6) & 0x3F));
        out += (char)(0x80 | (cp & 0x3F));
    }
}

namespace {

struct byte_tables {
    std::array<uint32_t, 256> to_char{};
    std::array<int16_t, 512> to_byte{};  // every alphabet code point is < 0x144
    byte_tables() {
        to_byte.fill(-1);
        int extra = 0;
        for (int b = 0; b < 256; b++) {
            const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            to_char[b] = printable ? (uint32_t)b : (uint32_t)(256 + extra++);
            to_byte[to_char[b]] = (int16_t)b;
        }
    }
};
const byte_tables& tables() {
    static const byte_tables t;
    return t;
}

}  // namespace

uint32_t byte_to_char(uint8_t b) {
    return tables().to_char[b];
}

int char_to_byte(uint32_t cp) {
    return cp < 512 ? tables().to_byte[cp] : -1;
}

std::string bytes_to_byte_level(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char b : bytes) utf8_append(out, byte_to_char(b));
    return out;
}

bool byte_level_to_bytes(std::string_view s, std::string* out) {
    out->clear();
    const auto* p = (const unsigned char*)s.data();
    size_t i = 0;
    while (i < s.size()) {
        uint32_t cp;
        const int k = utf8_next(p + i, s.size() - i, &cp);
        if (k < 0) return false;
        const int b = char_to_byte(cp);
        if (b < 0) return false;
        *out += (char)b;
        i += (size_t)k;
    }
    return true;
}

bool is_white_space(uint32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
           cp == 0x3000;
}

}  // namespace trex::tok
