// The sandbox for model-written programs (Python answers, and the worker that reads and solves model files).
//
// Isolated mode (root with namespaces: the CI and dev machines). Each program runs as PID 1 of fresh PID, mount,
// network, IPC and UTS namespaces (clone), and sees:
//   - a root of its own: a read-only tmpfs holding only the directories the spec exposes (read-only bind mounts of
//     the interpreter, its packages, our runner), the host's /usr/lib* for shared libraries, /lib* symlinks, a /dev
//     with null, zero, full, random and urandom, a fresh /proc of its own PID namespace, a size-capped tmpfs /tmp
//     with the working directory /tmp/work (the spec's files: answer.py, data.json) and a small /dev/shm. Nothing
//     else of the host: no project tree, no benchmark files, no home, no /etc, no /sys;
//   - a network namespace whose only interface is loopback (up, and empty);
//   - an unprivileged uid of its own (one per sandbox slot and trex process), no groups, an empty capability
//     bounding set, no_new_privs, and a seccomp filter that denies namespace creation (unshare, setns, clone with
//     CLONE_NEW*, clone3), mount and its new API, pivot_root, ptrace, process_vm_*, bpf, keyctl, perf_event_open,
//     userfaultfd, io_uring, kernel modules and kexec;
//   - a scrubbed environment (exactly the spec's list).
// Limits per answer, not per process: a cgroup (v1 or v2, where this process may make one) caps the memory (swap
// included) and the process count of everything the program starts; without one, RLIMIT_AS per process and
// RLIMIT_NPROC of the slot's uid are the (weaker) limits, and sandbox_guarantees() says so. Also RLIMIT_CPU, FSIZE,
// NOFILE, CORE = 0, a wall-clock deadline, and stdout and stderr each kept up to stream_bytes (the rest counted,
// dropped, the truncation recorded), the program killed when its output exceeds flood_bytes. When the program
// ends, or is killed, every process it started dies with it (PID namespace, then the cgroup).
//
// The program's fd 3 is a socket to the harness (the solve channel): every line it writes there is given to
// spec.on_message on the harness side, whose reply (when not empty) is written back as one line. What the program
// learns from the harness is only what the harness chose to answer; what the harness records is its own.
//
// Not root: the same namespaces and view inside an unprivileged user namespace, where the kernel allows one; the
// program keeps the invoking user's uid (mapped, without capabilities) and there is usually no cgroup to make.
// Unisolated mode (no namespaces at all): plain rlimits in a temporary directory. It runs only when the spec says
// allow_unisolated; sandbox_guarantees() lists what is missing.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "trex/base/sanitizer.hpp"

namespace trex::eval {

// Programs the sandbox runs from an ASan build of this binary itself (the solve worker, the probe) need
// limit_address_space off (trex/base/sanitizer.hpp).
using trex::kAddressSanitizer;

struct sandbox_limits {
    double wall_s = 60;            // wall clock, then SIGKILL
    double cpu_s = 60;             // RLIMIT_CPU (SIGXCPU, then SIGKILL one second later)
    long memory_mb = 4096;         // cgroup memory (+ swap) limit of the whole program; RLIMIT_AS of each process
    long file_mb = 64;             // RLIMIT_FSIZE
    int nproc = 64;                // cgroup pids limit; RLIMIT_NPROC of the slot's uid
    long stream_bytes = 1 << 20;   // stdout and stderr each: kept up to this, the rest counted and dropped
    long flood_bytes = 64l << 20;  // stdout + stderr in all: the program is killed beyond it
    long tmpfs_mb = 256;           // size of /tmp (the working directory)
    // RLIMIT_AS of each process at memory_mb. Off only for a program built with AddressSanitizer (the solve worker or
    // the probe of a sanitizer build of trex), whose shadow memory reserves terabytes of address space; the cgroup
    // memory limit, where cgroups are available, still bounds it.
    bool limit_address_space = true;
};

struct sandbox_file {
    std::string name;  // a plain name in the working directory
    std::string content;
};

struct sandbox_spec {
    std::vector<std::string> argv;    // argv[0]: absolute path of the executable (inside an exposed directory)
    std::vector<std::string> env;     // "KEY=value": the whole environment
    std::vector<sandbox_file> files;  // written into the working directory (owned by the sandbox uid)
    std::vector<std::string> expose;  // directories the program reads (read-only, at their own paths)
    sandbox_limits limits;
    bool allow_unisolated = false;  // run even when a required guarantee is missing
    // The solve channel (fd 3): called for each line the program writes there; a non-empty return is written back
    // followed by a newline. Null: fd 3 is closed in the program.
    std::function<std::string(const std::string& line)> on_message;
    long message_bytes = 64l << 20;  // a longer line on fd 3 kills the program (output_limit)
};

struct sandbox_result {
    bool started = false;   // false: the sandbox could not be set up (error says why)
    bool isolated = false;  // ran with every required guarantee
    int exit_code = -1;     // when the program exited
    int signal = 0;         // when it was killed by a signal
    bool timed_out = false, cpu_limit = false, memory_limit = false, output_limit = false;
    std::string out, err;               // stdout and stderr, each the first stream_bytes
    long out_bytes = 0, err_bytes = 0;  // what the program wrote to each in all
    bool out_truncated() const { return out_bytes > (long)out.size(); }
    bool err_truncated() const { return err_bytes > (long)err.size(); }
    double peak_memory_mb = -1;  // the cgroup's peak (-1: no cgroup)
    double seconds = 0;
    std::string error;  // setup failure
};

// One property of the isolation, as measured on this machine (sandbox_guarantees()).
struct sandbox_guarantee {
    std::string name;  // e.g. "pid_namespace"
    bool held = false;
    bool required = true;  // model code is refused when a required one is missing (unless allow_unisolated)
    std::string detail;    // what was checked, or why it does not hold
};
struct sandbox_report {
    std::vector<sandbox_guarantee> items;
    bool isolated = false;        // every required guarantee holds
    bool user_namespace = false;  // isolated through an unprivileged user namespace (not root: no uid of its own)
    std::string summary;          // one line for logs and reports
};
// Probed once per process: a real sandbox is set up and the guarantees are checked from inside it (the probe runs
// our own checks in place of a program), plus what the harness side can do (cgroups).
const sandbox_report& sandbox_guarantees();

// Runs one program to completion in the sandbox. slot: 0..63, distinct for concurrent sandboxes of this process.
sandbox_result run_sandboxed(const sandbox_spec& spec, int slot);

// A long-lived sandboxed process with pipes (the solve worker): limits apply except wall_s and the output caps.
class program_cgroup;
struct sandbox_process {
    pid_t pid = -1;
    int in = -1, out = -1, err = -1;
    bool isolated = false;
    std::string workdir;                     // unisolated: its temporary directory
    std::shared_ptr<program_cgroup> cgroup;  // its cgroup, when there is one
};
sandbox_process start_sandboxed(const sandbox_spec& spec, int slot, std::string* error);
void stop_sandboxed(sandbox_process& p);  // SIGKILL everything of it, reap, close pipes, remove its cgroup

// Directories to expose so that the Python at `python` runs (its installation prefix and, for a venv, the venv),
// canonical.
std::vector<std::string> python_dirs(const std::string& python);
// The path to run a venv's Python by inside the sandbox: the canonical venv directory + bin/NAME (a venv is found
// from the unresolved executable path, so the last symlink is kept).
std::string sandbox_python_path(const std::string& python);

}  // namespace trex::eval
