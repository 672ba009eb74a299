// Shared by the libFuzzer targets (fuzz/*_fuzz.cpp, run by scripts/fuzz.sh).
//
// Contract of every target: a trex::error is a rejected input (fine); anything else — a crash, an abort, an
// AddressSanitizer or UndefinedBehaviorSanitizer report, an uncaught exception of another type, a hang — is a
// finding that libFuzzer reports and saves as a reproducer.
//
// For APIs that only take a path, write_scratch_file puts the input into a per-process scratch directory under
// $TMPDIR (else /tmp) that is removed at exit; scripts/fuzz.sh also points TMPDIR at its own scratch directory, so
// nothing is left behind even when a finding ends the process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace trex::fuzz {

// Writes `size` bytes to <scratch dir>/<name> (replacing it) and returns the file's path.
std::string write_scratch_file(const std::string& name, const uint8_t* data, size_t size);

// Aborts the process with `what` on stderr (libFuzzer then saves the input): an invariant of the API under test
// that does not hold for this input.
[[noreturn]] void finding(const std::string& what);

}  // namespace trex::fuzz
