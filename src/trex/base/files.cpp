#include "trex/base/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

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

}  // namespace trex
