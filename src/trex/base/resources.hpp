#pragma once

namespace trex {

// The process's peak resident set in bytes (getrusage; child processes are not included).
double peak_resident_bytes();

// The memory this process can use at most, in bytes: the machine's physical memory, or the cgroup's limit
// (cgroup v2 memory.max, v1 memory.limit_in_bytes) when that is lower.
double memory_limit_bytes();

// Throws trex::error when `bytes` exceed memory_limit_bytes() ("<what> would take X GB; this machine has Y GB of
// memory"): a clear error before an allocation that the kernel would answer with the OOM killer.
void check_fits_in_memory(double bytes, const char* what);

}  // namespace trex
