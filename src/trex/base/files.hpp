// File helpers with the project's failure rules: one-line errors naming the path, atomic writes (temporary name,
// fsync, rename), checksums.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trex {

// Reads a whole file (throws trex::error naming it).
std::string read_file(const std::string& path);
// Writes `data` to path.tmp, fsyncs it, renames it to `path`, fsyncs the directory.
void write_file_atomic(const std::string& path, const std::string& data);
// fsync of a directory (after creating or renaming entries in it).
void fsync_dir(const std::string& dir);
// xxHash64 of a file's contents, as 16 lowercase hex digits.
std::string file_xxh64(const std::string& path);
uint64_t file_size_or_throw(const std::string& path);

// A directory published whole (checkpoints, HF exports, tokenized sources, data builds): written under a temporary
// sibling `<target>.tmp-<pid>-<k>` (hidden with a leading dot when asked), then publish() fsyncs it, moves an existing
// target aside (to another temporary name), renames it into place, removes what was aside and fsyncs the parent. Until
// publish() the target is untouched; the staging directory is removed with everything in it when the object goes
// away unpublished (an error), and a killed process's is removed by remove_stale_temp_entries at the next start.
class staged_dir {
   public:
    explicit staged_dir(const std::string& target, bool hidden = false);  // creates the empty staging directory
    ~staged_dir();
    staged_dir(const staged_dir&) = delete;
    staged_dir& operator=(const staged_dir&) = delete;

    const std::string& path() const { return tmp_; }
    void publish();  // one-line error naming the target on failure (the target is then the old one or the new one)

   private:
    std::string target_, tmp_;
    bool hidden_ = false, published_ = false;
};

// Appends lines to a log file (metrics.jsonl). Each append is all or nothing: a failed or short write (a full disk,
// a file-size limit) is cut back to the file's previous end, so no torn line is left, and is a trex::error naming the
// file and the reason.
class line_appender {
   public:
    line_appender() = default;
    explicit line_appender(const std::string& path);  // opens for appending (creates the file)
    ~line_appender();
    line_appender(const line_appender&) = delete;
    line_appender& operator=(const line_appender&) = delete;

    void append(const std::string& line);  // writes line + "\n"
    void close();

   private:
    std::string path_;
    int fd_ = -1;
};

// A hash of the names, sizes and modification times of everything under `dir` (0 when it does not exist): changes
// while a process writes there. What a rank waiting for rank 0's checkpoint or tokenization watches.
uint64_t tree_signature(const std::string& dir);

// Temporary entries that a killed writer left in `dir`: names with ".tmp-<pid>" or ".tmp-<pid>-<n>" at their end
// (checkpoints, converted checkpoints, tokenized sources, data builds). Removes those whose process is no longer
// running on this host (a live pid, even a reused one, is left alone) and returns their paths; nothing when `dir`
// does not exist. With a non-empty `who`, each removal is logged to stderr as "<who>: removed <path> (...)".
std::vector<std::string> remove_stale_temp_entries(const std::string& dir, const std::string& who = "");

}  // namespace trex
