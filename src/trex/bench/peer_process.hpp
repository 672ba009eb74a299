// A peer benchmark's process (the PyTorch step, HF tokenizers): one shell command whose stdout is captured and whose
// stderr goes to a file beside its input, read back and removed.
#pragma once

#include <cstddef>
#include <string>

namespace trex::bench {

struct peer_output {
    int status = 0;   // pclose()'s status: 0 when the command exited 0
    std::string out;  // stdout, whole
    std::string err;  // stderr's last max_err characters, on one line ("" when it wrote none)
};

// Runs `command 2>'errfile'` through the shell. Throws trex::error only when the command cannot be started;
// a command that fails is reported through status and err.
peer_output run_peer_command(const std::string& command, const std::string& errfile, size_t max_err);

}  // namespace trex::bench
