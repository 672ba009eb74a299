// Internals of the sandbox (sandbox.hpp): what the child process needs, prepared before it is cloned, and the
// child's side. The child of a multi-threaded harness may only make system calls: everything it uses — paths,
// argv/envp, file contents, the seccomp program — is built here first, and the child code allocates nothing.
#pragma once

#include <linux/filter.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "trex/eval/sandbox.hpp"

namespace trex::eval::detail {

// File descriptors of the child before it execs: 0 stdin, 1 stdout, 2 stderr, 3 the solve channel (or closed),
// 4 the start pipe (the harness writes one byte once the child is in its cgroup).
constexpr int kChannelFd = 3;
constexpr int kStartFd = 4;

// The new root is assembled on a tmpfs mounted at kStage (in the child's own mount namespace, after the exposed
// directories were cloned), then pivoted to.
constexpr const char* kStage = "/tmp";
constexpr const char* kWork = "/tmp/work";

// How a child is isolated: as root (namespaces, an unprivileged uid of its own, cgroups), through an unprivileged
// user namespace (the same namespaces and view, the invoking user's uid, mapped), or not at all.
enum class sandbox_mode { unisolated, root, user_namespace };

struct prepared {
    bool isolated = false;
    bool userns = false;               // isolated through a user namespace of its own (mode user_namespace)
    std::string uid_map, gid_map;      // userns: "uid uid 1\n"
    bool probe = false;                // run the guarantee checks (sandbox_probe.cpp) instead of the program
    std::vector<std::string> strings;  // owns the argv/envp texts
    std::vector<char*> argv, envp;
    // root view (isolated); every path below is absolute inside the stage
    std::vector<std::string> expose_src;                  // host directories (and files), cloned read-only
    std::vector<std::string> expose_dst;                  // where they are attached
    std::vector<char> expose_is_file;                     // a file (the loader's cache), not a directory
    std::vector<std::string> mkdirs;                      // directories made in the stage, parents first
    std::vector<std::string> link_target, link_path;      // symlinks made in the stage (/lib -> usr/lib, /dev/fd ...)
    std::vector<std::string> dev_nodes;                   // character devices made in the stage's /dev
    std::vector<unsigned> dev_numbers;                    // their makedev numbers
    std::string root_opts, tmp_opts, dev_opts, shm_opts;  // tmpfs mount options
    std::string stage_dev = std::string(kStage) + "/dev", stage_shm = std::string(kStage) + "/dev/shm",
                stage_tmp = std::string(kStage) + "/tmp", stage_proc = std::string(kStage) + "/proc";
    std::vector<std::string> file_paths, file_contents;  // the spec's files (stage paths)
    std::string hostname = "trex-sandbox";
    uid_t uid = 0;
    gid_t gid = 0;
    rlimit cpu{}, as{}, fsize{}, nproc{}, nofile{}, core{};
    bool set_nproc = true;
    const sock_fprog* filter = nullptr;  // seccomp program (isolated)
    // unisolated
    std::string workdir;
    // probe: host paths that must not be visible, a loopback port of the host that must not be reachable
    std::vector<std::string> probe_hidden;
    int probe_port = 0;
};

// Builds what the child of `spec` needs (isolated: the root view, the seccomp program; else a temporary working
// directory holding the files). False with *error set when the spec cannot run.
bool prepare(const sandbox_spec& spec, int slot, sandbox_mode mode, prepared* p, std::string* error);
// The mode the probe found (sandbox_guarantees() first).
sandbox_mode probed_mode();
// Runs a prepared child to its end (sandbox.cpp): cgroup, channel, caps, deadline, cleanup.
sandbox_result run_prepared(const prepared& p, const sandbox_spec& spec, int slot);
// The guarantees, measured with a probe child (sandbox_probe.cpp): as root first, else in a user namespace. *mode:
// the mode they were measured in.
sandbox_report measure_guarantees(sandbox_mode* mode);

// The seccomp program of the sandbox (built once per process with libseccomp); null with *error set when it
// cannot be built.
const sock_fprog* seccomp_program(std::string* error);

// The child after clone/fork, fds 0..4 in place. Waits for the start byte, builds its view, drops privileges and
// execs (or runs the probe). Never returns; setup failures exit 125 with "trex sandbox: ..." on stderr.
[[noreturn]] void child_main(const prepared& p);

// The probe's checks, run in place of the program (fd 1: one line per check, "name 0|1 detail"). Never returns.
[[noreturn]] void probe_main(const prepared& p);

// Writes "trex sandbox: <what>: <errno name>\n" to fd 2 and exits 125 (async-signal-safe).
[[noreturn]] void child_fail(const char* what);
// Appends to buf (no allocation): for the probe's report lines.
struct line_buf {
    char data[1024];
    int n = 0;
    void add(const char* s);
    void add_long(long v);
    void flush(int fd);
};

}  // namespace trex::eval::detail
