// File helpers with the project's failure rules: one-line errors naming the path, atomic writes (temporary name,
// fsync, rename), checksums.
#pragma once

#include <cstdint>
#include <string>

namespace trex {

// Reads a whole file (throws trex::error naming it).
std::string read_file(const std::string& path);
// Writes `data` to path.tmp, fsyncs it, renames it to `path`, fsyncs the directory.
void write_file_atomic(const std::string& path, const std::string& data);
// fsync of a directory (after creating or renaming entries in it).
void fsync_dir(const std::string& dir);
// xxHash64 of a file's contents, as 16 lowercase hex digits.
std::string file_xxh64(const std::string& path);
uint64_t file_size_or_throw(const std::string& path);

}  // namespace trex
