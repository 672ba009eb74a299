// Re-execution of Python answers in a persistent Python subprocess (one per trex process): the worker runs each
// program with exec() in a fresh namespace, in the program's own directory (so `open("data.json")` works), with
// stdout captured and a per-program time limit (SIGALRM). Starting Python and importing PuLP once instead of per
// program makes re-execution ~20x cheaper.
#pragma once

#include <sys/types.h>

#include <string>

namespace trex::optmodel {

// The project venv's python when it has PuLP (TREX_PYTHON overrides), else "" (Python answers cannot be re-run).
std::string find_python_with_pulp();

struct python_result {
    bool ok = false;     // the program ran to the end
    std::string output;  // what it printed (stdout)
    std::string error;   // exception text when !ok
};

class python_runner {
   public:
    explicit python_runner(const std::string& python);
    ~python_runner();
    python_runner(const python_runner&) = delete;
    python_runner& operator=(const python_runner&) = delete;

    // Runs `path` (a .py file) with its directory as working directory.
    python_result run(const std::string& path, double time_limit_s = 30.0);

   private:
    void start();
    void stop();
    std::string python_;
    pid_t pid_ = -1;
    int to_child_ = -1, from_child_ = -1;
    std::string buffer_;
};

// What a program printed, per the writers' protocol: "Status: X" (lower-cased: "optimal", "infeasible",
// "unbounded", ...) and "Optimal objective: V". Returns false when no status line was printed.
bool parse_program_output(const std::string& out, std::string* status, double* objective, bool* has_objective);

}  // namespace trex::optmodel
