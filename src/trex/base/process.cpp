#include "trex/base/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

// The child's pipes: [0] stdout and [1] stderr read into out / err, `in` fed from input at *written.
struct child_pipes {
    int fds[2] = {-1, -1};
    int in = -1;
    const std::string* input = nullptr;
    size_t written = 0;
};

void close_fd(int* fd) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
}

// Reads what is ready on the open output descriptors into out / err and writes what stdin takes; false when both
// outputs are closed.
bool drain(child_pipes* c, std::string* out, std::string* err, int wait_ms) {
    pollfd p[3];
    int n = 0;
    for (int i = 0; i < 2; i++)
        if (c->fds[i] >= 0) p[n++] = {c->fds[i], POLLIN, 0};
    if (n == 0) return false;
    const int outputs = n;
    if (c->in >= 0) p[n++] = {c->in, POLLOUT, 0};
    if (::poll(p, (nfds_t)n, wait_ms) <= 0) return true;
    if (n > outputs && (p[outputs].revents & (POLLOUT | POLLERR | POLLHUP))) {
        const size_t left = c->input->size() - c->written;
        const ssize_t w = ::write(c->in, c->input->data() + c->written, std::min<size_t>(left, 1 << 16));
        if (w > 0) c->written += (size_t)w;
        if ((w < 0 && errno != EINTR && errno != EAGAIN) || c->written == c->input->size()) close_fd(&c->in);
    }
    char buf[1 << 16];
    for (int k = 0; k < outputs; k++) {
        if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const ssize_t r = ::read(p[k].fd, buf, sizeof buf);
        const int i = p[k].fd == c->fds[0] ? 0 : 1;
        if (r > 0) {
            (i == 0 ? out : err)->append(buf, (size_t)r);
        } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
            close_fd(&c->fds[i]);
        }
    }
    return true;
}

}  // namespace

process_output run_process(const std::vector<std::string>& argv, double timeout_s, const std::string& input) {
    process_output o;
    pipe_pair out, err, in;
    if (argv.empty() || ::pipe2(out.fd, O_CLOEXEC) != 0 || ::pipe2(err.fd, O_CLOEXEC) != 0 ||
        (!input.empty() && ::pipe2(in.fd, O_CLOEXEC) != 0)) {
        o.error = argv.empty() ? "no program given" : std::string("pipe: ") + std::strerror(errno);
        return o;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out.fd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err.fd[1], 2);
    if (input.empty())
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    else
        posix_spawn_file_actions_adddup2(&fa, in.fd[0], 0);
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
    close_fd(&in.fd[0]);
    if (rc != 0) {
        o.error = argv[0] + ": " + std::strerror(rc);
        return o;
    }
    child_pipes c;
    c.fds[0] = out.fd[0];
    c.fds[1] = err.fd[0];
    c.in = in.fd[1];
    c.input = &input;
    out.fd[0] = err.fd[0] = in.fd[1] = -1;  // owned by c from here
    if (c.in >= 0) ::fcntl(c.in, F_SETFL, O_NONBLOCK);
    const double t0 = now_seconds();
    // SIGPIPE when the child leaves before reading all of its input: ignored here, the write just fails
    struct sigaction ign {
    }, old{};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ign, &old);
    while (drain(&c, &o.out, &o.err, 100)) {
        if (now_seconds() - t0 > timeout_s) {
            ::kill(-pid, SIGKILL);
            o.timed_out = true;
            break;
        }
    }
    ::sigaction(SIGPIPE, &old, nullptr);
    close_fd(&c.in);
    for (int& f : c.fds) close_fd(&f);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
    return o;
}

}  // namespace trex
