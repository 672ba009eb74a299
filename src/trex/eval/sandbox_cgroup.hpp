// Per-program cgroups of the sandbox: a memory (+ swap) limit and a process limit on everything a program starts,
// its CPU time in all (where the cpu/cpuacct controllers are there; their default weight also gives each program
// an equal share of the CPU, so a fork bomb starves only itself), its peak memory and OOM kills, and the kill of
// every process in it.
//
// A program's cgroup is made as a child of this process's own cgroup, in the v2 unified hierarchy when it has the
// memory and pids controllers there, else in the v1 memory and pids hierarchies. Where neither can be made (no
// permission, controllers missing, a v2 parent with processes of its own), cgroup_support() says why and the
// sandbox falls back to per-process rlimits.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace trex::eval {

struct cgroup_support_info {
    bool available = false;
    std::string version;          // "v2" or "v1"
    bool cpu_accounting = false;  // programs' CPU time is summed over their processes (and shared fairly)
    std::string detail;           // where the cgroups are made, or why they cannot be
};
const cgroup_support_info& cgroup_support();  // probed once per process

class program_cgroup {
   public:
    program_cgroup() = default;
    // Makes the cgroup(s) `name` (unique per process, slot and run) with the limits; ok() false when not possible.
    program_cgroup(const std::string& name, long memory_bytes, long max_pids);
    ~program_cgroup();
    program_cgroup(const program_cgroup&) = delete;
    program_cgroup& operator=(const program_cgroup&) = delete;
    program_cgroup(program_cgroup&& o) noexcept;
    program_cgroup& operator=(program_cgroup&& o) noexcept;

    bool ok() const { return !dirs_.empty(); }
    const std::string& error() const { return error_; }
    std::string path() const { return dirs_.empty() ? "" : dirs_.front(); }
    // The cgroup.procs files: a child process writes its own pid there before it starts anything.
    const std::vector<std::string>& procs_files() const { return procs_; }
    bool add(pid_t pid);  // moves pid in (every hierarchy)
    // SIGKILLs every process in the cgroup until it is empty (at most ~2 s); true when it is.
    bool kill_all();
    double cpu_seconds() const;     // CPU time of all its processes so far; -1 when not accounted
    double peak_memory_mb() const;  // -1 when unknown
    bool memory_limit_hit() const;  // the OOM killer killed a process of the cgroup at its limit
    void remove();                  // kill_all, then rmdir

   private:
    std::vector<std::string> dirs_;   // v2: one; v1: memory, pids
    std::vector<std::string> procs_;  // their cgroup.procs
    std::string version_, error_;
    std::string cpu_usage_;  // cpuacct.usage (v1) or cpu.stat (v2); "" when not accounted
};

}  // namespace trex::eval
