#include "trex/base/files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "trex/base/error.hpp"

namespace trex {

std::string read_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    TREX_CHECK(fd >= 0, "{}: cannot open: {}", path, std::strerror(errno));
    std::string out;
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            const int e = errno;
            ::close(fd);
            throw error(fmt::format("{}: read failed: {}", path, std::strerror(e)));
        }
        if (n == 0) break;
        out.append(buf, (size_t)n);
    }
    ::close(fd);
    return out;
}

void fsync_dir(const std::string& dir) {
    const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;  // best effort: some filesystems refuse directory handles
    ::fsync(fd);
    ::close(fd);
}

void write_file_atomic(const std::string& path, const std::string& data) {
    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    TREX_CHECK(fd >= 0, "{}: cannot create: {}", tmp, std::strerror(errno));
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            const int e = errno;
            ::close(fd);
            ::unlink(tmp.c_str());
            throw error(fmt::format("{}: write failed: {}", tmp, std::strerror(e)));
        }
        done += (size_t)n;
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        throw error(fmt::format("{}: fsync/close failed: {}", tmp, std::strerror(e)));
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        throw error(fmt::format("{}: rename failed: {}", path, std::strerror(e)));
    }
    fsync_dir(std::filesystem::path(path).parent_path().string());
}

uint64_t file_size_or_throw(const std::string& path) {
    struct stat st;
    TREX_CHECK(::stat(path.c_str(), &st) == 0, "{}: cannot stat: {}", path, std::strerror(errno));
    return (uint64_t)st.st_size;
}

std::string file_xxh64(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    TREX_CHECK(fd >= 0, "{}: cannot open: {}", path, std::strerror(errno));
    XXH64_state_t* st = XXH64_createState();
    XXH64_reset(st, 0);
    std::vector<char> buf(1 << 20);
    for (;;) {
        const ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0) {
            const int e = errno;
            ::close(fd);
            XXH64_freeState(st);
            throw error(fmt::format("{}: read failed: {}", path, std::strerror(e)));
        }
        if (n == 0) break;
        XXH64_update(st, buf.data(), (size_t)n);
    }
    ::close(fd);
    const uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    return fmt::format("{:016x}", h);
}

namespace {

std::atomic<int> g_staged_counter{0};

// "<parent>/[.]<name>.tmp-<pid>-<k>" beside `target`, k unique in this process.
std::filesystem::path temp_sibling(const std::filesystem::path& target, bool hidden) {
    const std::filesystem::path parent = target.has_parent_path() ? target.parent_path() : ".";
    return parent / fmt::format("{}{}.tmp-{}-{}", hidden ? "." : "", target.filename().string(), (long)::getpid(),
                                g_staged_counter++);
}

// target without a trailing separator ("out/" names "out")
std::filesystem::path normal_target(const std::string& target) {
    std::filesystem::path t = std::filesystem::path(target).lexically_normal();
    if (t.filename().empty()) t = t.parent_path();
    return t;
}

}  // namespace

staged_dir::staged_dir(const std::string& target, bool hidden) : hidden_(hidden) {
    namespace fs = std::filesystem;
    const fs::path t = normal_target(target);
    TREX_CHECK(!t.empty(), "'{}': not a directory name", target);
    target_ = t.string();
    const fs::path tmp = temp_sibling(t, hidden);
    std::error_code ec;
    fs::create_directories(tmp.parent_path(), ec);
    fs::remove_all(tmp, ec);
    fs::create_directory(tmp, ec);
    TREX_CHECK(!ec, "{}: cannot create the temporary directory {}: {}", target_, tmp.string(), ec.message());
    tmp_ = tmp.string();
}

staged_dir::~staged_dir() {
    if (published_) return;
    std::error_code ec;
    std::filesystem::remove_all(tmp_, ec);
}

void staged_dir::publish() {
    namespace fs = std::filesystem;
    TREX_CHECK(!published_, "{}: published twice", target_);
    fsync_dir(tmp_);
    const fs::path t(target_);
    std::error_code ec;
    fs::path aside;
    if (fs::exists(t, ec)) {
        aside = temp_sibling(t, hidden_);
        fs::rename(t, aside, ec);
        TREX_CHECK(!ec, "{}: cannot move the existing directory aside: {}", target_, ec.message());
    }
    fs::rename(tmp_, t, ec);
    if (ec) {
        const std::string why = ec.message();
        if (!aside.empty()) fs::rename(aside, t, ec);  // put the old one back
        throw error(fmt::format("{}: cannot rename {} into place: {}", target_, tmp_, why));
    }
    published_ = true;
    if (!aside.empty()) fs::remove_all(aside, ec);
    fsync_dir(t.has_parent_path() ? t.parent_path().string() : ".");
}

line_appender::line_appender(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    TREX_CHECK(fd_ >= 0, "{}: cannot open for appending: {}", path, std::strerror(errno));
}

line_appender::~line_appender() {
    if (fd_ >= 0) ::close(fd_);
}

void line_appender::close() {
    if (fd_ < 0) return;
    const int rc = ::close(fd_);
    fd_ = -1;
    TREX_CHECK(rc == 0, "{}: close failed: {}", path_, std::strerror(errno));
}

void line_appender::append(const std::string& line) {
    TREX_CHECK(fd_ >= 0, "{}: not open for appending", path_);
    const off_t before = ::lseek(fd_, 0, SEEK_END);
    const std::string data = line + "\n";
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int e = n < 0 ? errno : ENOSPC;
            if (before >= 0 && ::ftruncate(fd_, before) != 0) {
                // the torn line stays: say so (a resume drops it when it reads the file back)
                throw error(fmt::format("{}: append failed ({}) and the partial line could not be removed", path_,
                                        std::strerror(e)));
            }
            throw error(fmt::format("{}: append failed: {} (the line was not written)", path_, std::strerror(e)));
        }
        done += (size_t)n;
    }
}

namespace {

// The pid of a temporary entry's name ("x.tmp-123" or ".x.tmp-123-4"), or 0 when the name is not one.
long temp_entry_pid(const std::string& name) {
    const size_t at = name.rfind(".tmp-");
    if (at == std::string::npos) return 0;
    const std::string rest = name.substr(at + 5);
    const size_t dash = rest.find('-');
    const std::string pid = rest.substr(0, dash);
    const std::string counter = dash == std::string::npos ? "" : rest.substr(dash + 1);
    auto digits = [](const std::string& s) {
        return !s.empty() && s.size() <= 10 && s.find_first_not_of("0123456789") == std::string::npos;
    };
    if (!digits(pid) || (dash != std::string::npos && !digits(counter))) return 0;
    return std::stol(pid);
}

bool process_runs(long pid) {
    return ::kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

}  // namespace

uint64_t tree_signature(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
    if (ec) return 0;
    XXH64_state_t* h = XXH64_createState();
    XXH64_reset(h, 0);
    for (; it != end; it.increment(ec)) {
        if (ec) break;
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) != 0) continue;  // removed meanwhile
        const std::string name = it->path().string();
        const int64_t fields[3] = {(int64_t)st.st_size, (int64_t)st.st_mtim.tv_sec, (int64_t)st.st_mtim.tv_nsec};
        XXH64_update(h, name.data(), name.size());
        XXH64_update(h, fields, sizeof fields);
    }
    const uint64_t sig = XXH64_digest(h);
    XXH64_freeState(h);
    return sig == 0 ? 1 : sig;
}

std::vector<std::string> remove_stale_temp_entries(const std::string& dir, const std::string& who) {
    namespace fs = std::filesystem;
    std::vector<std::string> removed;
    std::error_code ec;
    fs::directory_iterator it(dir, ec), end;
    if (ec) return removed;
    std::vector<fs::path> stale;
    for (; it != end; it.increment(ec)) {
        if (ec) break;
        const long pid = temp_entry_pid(it->path().filename().string());
        if (pid > 0 && pid != (long)::getpid() && !process_runs(pid)) stale.push_back(it->path());
    }
    for (const fs::path& p : stale) {
        fs::remove_all(p, ec);
        if (ec) continue;
        removed.push_back(p.string());
        if (!who.empty())
            fmt::print(stderr, "{}: removed {} (left by a writer that no longer runs)\n", who, p.string());
    }
    return removed;
}

}  // namespace trex
