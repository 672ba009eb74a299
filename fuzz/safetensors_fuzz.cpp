// Fuzz target: the safetensors reader, safetensors_file (src/trex/io/safetensors.hpp), through a scratch file.
//
// Input: the bytes of a .safetensors file. When the header validates, every tensor is read through every accessor
// (raw bytes and the four converting accessors; a conversion the dtype does not allow is a trex::error). A
// trex::error is a rejected input; anything else is a finding (fuzz_support.hpp). An accepted tensor's byte range
// must lie inside the file (its bytes are mapped, not heap memory ASan watches, so this is checked here).
#include <string>

#include "fuzz_support.hpp"
#include "trex/base/error.hpp"
#include "trex/io/safetensors.hpp"

namespace {

template <typename F>
void rejected_or_read(F&& read) {
    try {
        read();
    } catch (const trex::error&) {
    }
}

void read_every_tensor(const trex::safetensors_file& f) {
    for (const trex::st_tensor& t : f.tensors()) {
        if (f.bytes(t.name).size() != t.nbytes()) trex::fuzz::finding("bytes() size differs from the header's range");
        // the data section starts after the 8-byte length and the header
        if (t.begin > t.end || t.end > f.file_size() - 8)
            trex::fuzz::finding("an accepted tensor's byte range lies outside the file");
        rejected_or_read([&] { f.to_f32(t.name); });
        rejected_or_read([&] { f.to_f64(t.name); });
        rejected_or_read([&] { f.to_i32(t.name); });
        rejected_or_read([&] { f.to_i64(t.name); });
    }
    for (const auto& [key, value] : f.metadata()) (void)key, (void)value;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = trex::fuzz::write_scratch_file("input.safetensors", data, size);
    try {
        const trex::safetensors_file f(path);
        read_every_tensor(f);
    } catch (const trex::error&) {
    }
    return 0;
}
