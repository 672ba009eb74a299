// Running a helper program and collecting what it prints (the Parquet reader's Python, for example). No shell: argv
// is passed as it is. Both streams are read as they come, and `input` is written to the child's stdin meanwhile (no
// pipe can fill up and stall either side; stdin is /dev/null when input is empty); the child is killed (SIGKILL to
// its process group) after timeout_s.
#pragma once

#include <string>
#include <vector>

namespace trex {

struct process_output {
    int exit_code = -1;  // the exit status, or -1 when killed by a signal or not started
    int signal = 0;      // the signal that ended it (0: none)
    bool timed_out = false;
    std::string out, err;
    std::string error;  // why it could not be started ("" = it ran)
};

// argv[0] is looked up on PATH when it holds no '/'.
process_output run_process(const std::vector<std::string>& argv, double timeout_s, const std::string& input = {});

}  // namespace trex
