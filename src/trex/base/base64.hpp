// Standard base64 (RFC 4648, with padding): how JSONL carries bytes that are not valid UTF-8.
#pragma once

#include <string>
#include <string_view>

namespace trex {

std::string base64_encode(std::string_view bytes);
// False on a malformed input (wrong length, bad character, bad padding).
bool base64_decode(std::string_view text, std::string* out);

}  // namespace trex
