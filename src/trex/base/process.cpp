#include "trex/base/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "trex/base/timer.hpp"

extern char** environ;

namespace trex {

namespace {

struct pipe_pair {
    int fd[2] = {-1, -1};
    ~pipe_pair() {
        for (int f : fd)
            if (f >= 0) ::close(f);
    }
};

// Reads what is ready on the open descriptors into out / err; false when both are closed.
bool drain(int* fds, std::string* out, std::string* err, int wait_ms) {
    pollfd p[2];
    int n = 0;
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0) p[n++] = {fds[i], POLLIN, 0};
    if (n == 0) return false;
    if (::poll(p, (nfds_t)n, wait_ms) <= 0) return true;
    char buf[1 << 16];
    for (int k = 0; k < n; k++) {
        if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const ssize_t r = ::read(p[k].fd, buf, sizeof buf);
        const int i = p[k].fd == fds[0] ? 0 : 1;
        if (r > 0) {
            (i == 0 ? out : err)->append(buf, (size_t)r);
        } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
            ::close(fds[i]);
            fds[i] = -1;
        }
    }
    return true;
}

}  // namespace

process_output run_process(const std::vector<std::string>& argv, double timeout_s) {
    process_output o;
    pipe_pair out, err;
    if (argv.empty() || ::pipe2(out.fd, O_CLOEXEC) != 0 || ::pipe2(err.fd, O_CLOEXEC) != 0) {
        o.error = argv.empty() ? "no program given" : std::string("pipe: ") + std::strerror(errno);
        return o;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out.fd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err.fd[1], 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, args[0], &fa, &attr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    ::close(out.fd[1]);
    ::close(err.fd[1]);
    out.fd[1] = err.fd[1] = -1;
    if (rc != 0) {
        o.error = argv[0] + ": " + std::strerror(rc);
        return o;
    }
    int fds[2] = {out.fd[0], err.fd[0]};
    out.fd[0] = err.fd[0] = -1;  // owned by fds from here
    const double t0 = now_seconds();
    while (drain(fds, &o.out, &o.err, 100)) {
        if (now_seconds() - t0 > timeout_s) {
            ::kill(-pid, SIGKILL);
            o.timed_out = true;
            break;
        }
    }
    for (int f : fds)
        if (f >= 0) ::close(f);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
    return o;
}

}  // namespace trex
