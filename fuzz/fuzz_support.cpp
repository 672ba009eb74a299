#include "fuzz_support.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

namespace trex::fuzz {

namespace {

// A directory created under $TMPDIR (else /tmp) and removed with its contents by the destructor.
struct scratch_directory {
    std::string path;
    scratch_directory() {
        const char* tmp = std::getenv("TMPDIR");
        std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/trex_fuzz_XXXXXX";
        std::vector<char> buf(tmpl.begin(), tmpl.end());
        buf.push_back('\0');
        if (::mkdtemp(buf.data()) == nullptr) finding("cannot create a scratch directory under " + tmpl);
        path = buf.data();
    }
    ~scratch_directory() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

// The per-process scratch directory: created on first use, removed at exit (static destruction).
const std::string& scratch_dir() {
    static const scratch_directory dir;
    return dir.path;
}

}  // namespace

std::string write_scratch_file(const std::string& name, const uint8_t* data, size_t size) {
    const std::string path = scratch_dir() + "/" + name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.close();
    if (!out) finding("cannot write the scratch file " + path);
    return path;
}

void finding(const std::string& what) {
    std::fprintf(stderr, "FUZZ FINDING: %s\n", what.c_str());
    std::fflush(stderr);
    std::abort();
}

}  // namespace trex::fuzz
