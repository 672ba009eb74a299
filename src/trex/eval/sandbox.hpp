// The sandbox for model-written programs (Python answers, and the worker that reads/solves model files).
//
// As root (the CI and dev machines), each program runs:
//   - in fresh network, mount, PID, IPC and UTS namespaces: no network at all (only a loopback that is down), and
//     every process of the program dies with it (the program is PID 1 of its namespace);
//   - as an unprivileged uid of its own (one per sandbox slot and trex process), no supplementary groups,
//     no_new_privs: it cannot write anything it does not own, cannot signal other processes, and RLIMIT_NPROC
//     (which root ignores) bounds its process count;
//   - with private tmpfs mounts over /tmp, /var/tmp and /dev/shm (writes there vanish with it) and a fresh working
//     directory /tmp/work holding its files (the answer, data.json);
//   - under setrlimit CPU, AS (memory), FSIZE, NPROC, NOFILE and CORE=0, a wall-clock timeout that SIGKILLs its
//     process group (and so the namespace), and an output cap (killed when exceeded);
//   - with a scrubbed environment (only what the spec lists).
// Directories the program must read but that an unprivileged uid cannot reach (e.g. a Python under /root) are
// attached read-only (a detached copy of their mount tree) over a private tmpfs that hides the rest of the blocking
// directory.
// Without root: user + network namespaces (no network) and the rlimits only. Root without namespaces, or no
// namespace at all: the sandbox refuses to run model code unless allow_unisolated is set (probe_sandbox() says which
// level is available).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace trex::eval {

struct sandbox_limits {
    double wall_s = 60;        // wall clock, then SIGKILL
    double cpu_s = 60;         // RLIMIT_CPU (SIGXCPU, then SIGKILL one second later)
    long memory_mb = 4096;     // RLIMIT_AS
    long file_mb = 64;         // RLIMIT_FSIZE
    int nproc = 64;            // RLIMIT_NPROC (processes and threads of the sandbox uid)
    long output_bytes = 1 << 20;  // stdout + stderr kept; the program is killed beyond it
    long tmpfs_mb = 256;       // size of the private /tmp
};

struct sandbox_file {
    std::string name;  // relative to the working directory
    std::string content;
};

struct sandbox_spec {
    std::vector<std::string> argv;    // argv[0]: absolute path of the executable
    std::vector<std::string> env;     // "KEY=value": the whole environment
    std::vector<sandbox_file> files;  // written into the working directory (owned by the sandbox uid)
    std::vector<std::string> expose;  // directories the program needs to read (made reachable when they are not)
    sandbox_limits limits;
    bool allow_unisolated = false;    // run even when no namespace isolation is available
};

struct sandbox_result {
    bool started = false;  // false: the sandbox could not be set up (error says why)
    int exit_code = -1;    // when the program exited
    int signal = 0;        // when it was killed by a signal
    bool timed_out = false, cpu_limit = false, output_limit = false;
    std::string out, err;  // stdout (capped), stderr (last 16 KiB)
    std::string side;      // what the program wrote to fd 3 (the solve hook's reports)
    double seconds = 0;
    std::string error;     // setup failure
};

enum class isolation_level { full, user_namespace, none };
struct sandbox_support {
    isolation_level level = isolation_level::none;
    std::string description;  // one line for logs and reports
};
// What this process can do (probed once, cached).
const sandbox_support& probe_sandbox();

// Runs one program to completion in the sandbox. slot: 0..31, distinct for concurrent sandboxes of this process.
sandbox_result run_sandboxed(const sandbox_spec& spec, int slot);

// A long-lived sandboxed process with pipes (the solve worker): limits apply except wall_s and output_bytes.
struct sandbox_process {
    pid_t pid = -1;
    int in = -1, out = -1, err = -1;
};
sandbox_process start_sandboxed(const sandbox_spec& spec, int slot, std::string* error);
void stop_sandboxed(sandbox_process& p);  // SIGKILL, reap, close pipes

// Directories to expose so that `exe` runs (for a Python: its installation prefix and, for a venv, the venv).
std::vector<std::string> python_dirs(const std::string& python);

}  // namespace trex::eval
