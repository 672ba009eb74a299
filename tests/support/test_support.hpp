// Helpers shared by the tests.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace trex::test {

// Absolute path of a file in the source tree (e.g. "configs/v4-tiny.json").
std::string source_path(const std::string& rel);
// A fresh, empty directory (the same one again for the same name in the same process) under the system's temporary
// directory (trex_<name>_<pid>), removed with all it holds when the test process that made it exits;
// TREX_KEEP_TEST_DIRS=1 keeps them for debugging. Tests write checkpoints of hundreds of MB: left behind, a test run
// would fill a small CI disk.
std::string scratch_dir(const std::string& name);

// Path of the built trex binary.
std::string trex_binary();

struct command_result {
    int exit_code = 0;
    std::string out;  // stdout and stderr together
};
// Runs a shell command and captures its output.
command_result run_command(const std::string& cmd);

// The message of the trex::error `f` throws ("" if it throws none).
std::string error_of(const std::function<void()>& f);

// ||a - b|| / max(||b||, tiny) over n values.
double rel_error(const double* a, const double* b, long n);
double rel_error(const float* a, const double* b, long n);
double rel_error(const float* a, const float* b, long n);

}  // namespace trex::test
