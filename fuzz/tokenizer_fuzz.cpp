// Fuzz target: the tokenizer.json loader, tokenizer::from_file (src/trex/tokenizer/tokenizer.hpp), through a
// scratch file.
//
// Input: the bytes of a tokenizer.json. A tokenizer that loads then encodes a fixed sample (ASCII, digits,
// multi-byte and invalid UTF-8, whitespace runs, DeepSeek-V4 special tokens), pre-tokenizes it, and decodes the ids.
// A trex::error is a rejected input; anything else is a finding (fuzz_support.hpp), and so is an id from encode that
// decode refuses, or a piece offset outside the sample.
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "trex/base/error.hpp"
#include "trex/tokenizer/tokenizer.hpp"

namespace {

const std::string_view k_sample =
    "Hello, world!  It's 2024: x_1 = 3.14159 + 42;\n\n\tmax 3c + 5t s.t. c + 2t <= 40\r\n"
    "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80 \xff\xfe\xc3 \xe2\x82"
    "<\xef\xbd\x9c" "begin\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>User:   hi<think>ok</think>";

void exercise(const trex::tok::tokenizer& t) {
    std::vector<int32_t> ids;
    std::vector<uint32_t> starts;
    t.encode(k_sample, ids, /*add_special_tokens=*/true, &starts);
    if (starts.size() != ids.size()) trex::fuzz::finding("encode gave a different number of offsets than ids");
    for (uint32_t s : starts)
        if (s > k_sample.size()) trex::fuzz::finding("encode gave a piece offset past the end of the text");
    try {
        t.decode(ids);
        t.decode(ids, /*skip_special_tokens=*/true);
    } catch (const trex::error& e) {
        trex::fuzz::finding(std::string("decode refused an id encode produced: ") + e.what());
    }
    t.pre_tokenize(k_sample, [](std::string_view piece) { (void)piece; });
    for (int32_t id : {-1, 0, 1, t.id_space() - 1, t.id_space()}) t.token_to_id(t.id_to_token(id));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = trex::fuzz::write_scratch_file("tokenizer.json", data, size);
    try {
        const trex::tok::tokenizer t = trex::tok::tokenizer::from_file(path);
        exercise(t);
    } catch (const trex::error&) {
    }
    return 0;
}
