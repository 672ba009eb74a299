#include "trex/eval/sandbox.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <linux/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "trex/base/timer.hpp"

namespace trex::eval {

namespace fs = std::filesystem;

namespace {

constexpr const char* kWork = "/tmp/work";

// Everything the child needs, built before fork (the child only makes system calls).
struct prepared {
    isolation_level level = isolation_level::none;
    std::vector<std::string> strings;  // owns the argv/envp texts
    std::vector<char*> argv, envp;
    std::vector<std::string> tmpfs_points, tmpfs_opts;  // private tmpfs mounts (first /tmp)
    std::vector<std::string> hide_points;              // tmpfs over directories that block an exposure
    std::vector<std::string> expose_src, expose_dst;
    std::vector<std::vector<std::string>> expose_mkdirs;
    std::vector<std::string> file_paths, file_contents;
    std::string workdir;  // working directory of the program
    uid_t uid = 0;
    rlimit cpu{}, as{}, fsize{}, nproc{}, nofile{}, core{};
    bool set_nproc = true;
};

[[noreturn]] void child_fail(const char* what) {
    char buf[512];
    const int e = errno;
    int n = 0;
    const char* pre = "trex sandbox: ";
    for (const char* p = pre; *p && n < 500; p++) buf[n++] = *p;
    for (const char* p = what; *p && n < 500; p++) buf[n++] = *p;
    buf[n++] = ':';
    buf[n++] = ' ';
    for (const char* p = strerror(e); *p && n < 510; p++) buf[n++] = *p;
    buf[n++] = '\n';
    (void)!::write(2, buf, (size_t)n);
    _exit(125);
}

void set_limits(const prepared& p) {
    if (::setrlimit(RLIMIT_CPU, &p.cpu) != 0) child_fail("setrlimit CPU");
    if (::setrlimit(RLIMIT_AS, &p.as) != 0) child_fail("setrlimit AS");
    if (::setrlimit(RLIMIT_FSIZE, &p.fsize) != 0) child_fail("setrlimit FSIZE");
    if (p.set_nproc && ::setrlimit(RLIMIT_NPROC, &p.nproc) != 0) child_fail("setrlimit NPROC");
    if (::setrlimit(RLIMIT_NOFILE, &p.nofile) != 0) child_fail("setrlimit NOFILE");
    if (::setrlimit(RLIMIT_CORE, &p.core) != 0) child_fail("setrlimit CORE");
}

volatile pid_t g_init = 0;  // the namespace init, in the process that waits for it
void on_term(int) {
    if (g_init > 0) ::kill(g_init, SIGKILL);
}

// stdin/stdout/stderr/fd3 are already in place. Never returns.
[[noreturn]] void child_main(const prepared& p, pid_t parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) _exit(125);
    ::setpgid(0, 0);
    ::syscall(SYS_close_range, 4u, ~0u, 0u);
    // reset signal dispositions the parent may have changed
    for (int s = 1; s < 32; s++)
        if (s != SIGKILL && s != SIGSTOP) ::signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);

    if (p.level == isolation_level::full) {
        if (::unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS) != 0)
            child_fail("unshare namespaces");
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) child_fail("make mounts private");
        // Exposed directories: detached read-only copies of their mount trees, taken before the private tmpfs
        // mounts hide them (a bind mount cannot take its source from another mount namespace, so the copies are
        // made here, in the new one), attached at their own paths afterwards.
        int fds[32];
        const size_t ne = p.expose_src.size() < 32 ? p.expose_src.size() : 32;
        for (size_t i = 0; i < ne; i++) {
            fds[i] = (int)::syscall(SYS_open_tree, AT_FDCWD, p.expose_src[i].c_str(),
                                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
            if (fds[i] < 0) child_fail("clone the mount tree of an exposed directory (open_tree)");
#ifdef SYS_mount_setattr
            struct mount_attr ro {};
            ro.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
            ::syscall(SYS_mount_setattr, fds[i], "", AT_EMPTY_PATH | AT_RECURSIVE, &ro, sizeof ro);
#endif
        }
        for (size_t i = 0; i < p.tmpfs_points.size(); i++)
            if (::mount("tmpfs", p.tmpfs_points[i].c_str(), "tmpfs", MS_NOSUID | MS_NODEV, p.tmpfs_opts[i].c_str()) != 0)
                child_fail("mount private tmpfs");
        for (const auto& h : p.hide_points)
            if (::mount("tmpfs", h.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=1m") != 0)
                child_fail("mount tmpfs over a blocking directory");
        for (size_t i = 0; i < ne; i++) {
            for (const auto& d : p.expose_mkdirs[i])
                if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) child_fail("mkdir for an exposed directory");
            if (::syscall(SYS_move_mount, fds[i], "", AT_FDCWD, p.expose_dst[i].c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
                child_fail("attach an exposed directory (move_mount)");
            ::mount(nullptr, p.expose_dst[i].c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr);
            ::close(fds[i]);
        }
        if (::mkdir(kWork, 0700) != 0) child_fail("mkdir /tmp/work");
        if (::chown(kWork, p.uid, p.uid) != 0) child_fail("chown /tmp/work");
        for (size_t i = 0; i < p.file_paths.size(); i++) {
            const int fd = ::open(p.file_paths[i].c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd < 0) child_fail("create a file in /tmp/work");
            const std::string& c = p.file_contents[i];
            size_t off = 0;
            while (off < c.size()) {
                const ssize_t w = ::write(fd, c.data() + off, c.size() - off);
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0) child_fail("write a file in /tmp/work");
                off += (size_t)w;
            }
            if (::fchown(fd, p.uid, p.uid) != 0) child_fail("chown a file in /tmp/work");
            ::close(fd);
        }
        // SIGTERM (from the harness) makes this process kill the init and reap it: killing both at once would
        // leave the init a zombie of whoever inherits it. Blocked until the handler is in place.
        sigset_t term;
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        ::sigprocmask(SIG_BLOCK, &term, nullptr);
        const pid_t b = ::fork();  // PID 1 of the new PID namespace
        if (b < 0) child_fail("fork the namespace init");
        if (b == 0) {
            ::sigprocmask(SIG_UNBLOCK, &term, nullptr);
            set_limits(p);
            if (::setgroups(0, nullptr) != 0) child_fail("setgroups");
            if (::setgid(p.uid) != 0) child_fail("setgid");
            if (::setuid(p.uid) != 0) child_fail("setuid");
            ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::chdir(kWork) != 0) child_fail("chdir /tmp/work");
            ::execve(p.argv[0], p.argv.data(), p.envp.data());
            child_fail("exec");
        }
        g_init = b;
        struct sigaction sa {};
        sa.sa_handler = on_term;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGTERM, &sa, nullptr);
        ::sigprocmask(SIG_UNBLOCK, &term, nullptr);
        ::close(0);
        ::close(1);
        ::close(2);
        ::close(3);
        int st = 0;
        while (::waitpid(b, &st, 0) < 0 && errno == EINTR) {
        }
        if (WIFEXITED(st)) _exit(WEXITSTATUS(st));
        if (WIFSIGNALED(st)) _exit(128 + WTERMSIG(st));
        _exit(125);
    }
    if (p.level == isolation_level::user_namespace) {
        if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) child_fail("unshare user+network namespaces");
    }
    set_limits(p);
    ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (::chdir(p.workdir.c_str()) != 0) child_fail("chdir to the working directory");
    ::execve(p.argv[0], p.argv.data(), p.envp.data());
    child_fail("exec");
}

rlimit lim(rlim_t soft, rlim_t hard) { return rlimit{soft, hard}; }

bool reachable_by_others(const fs::path& dir) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) return false;
    return (st.st_mode & S_IXOTH) != 0;
}

bool prepare(const sandbox_spec& spec, int slot, isolation_level level, prepared* p, std::string* error) {
    p->level = level;
    p->strings.reserve(spec.argv.size() + spec.env.size());
    for (const auto& a : spec.argv) p->strings.push_back(a);
    for (const auto& e : spec.env) p->strings.push_back(e);
    for (size_t i = 0; i < spec.argv.size(); i++) p->argv.push_back(p->strings[i].data());
    p->argv.push_back(nullptr);
    for (size_t i = 0; i < spec.env.size(); i++) p->envp.push_back(p->strings[spec.argv.size() + i].data());
    p->envp.push_back(nullptr);
    const sandbox_limits& L = spec.limits;
    const rlim_t cpu = (rlim_t)std::max(1.0, std::ceil(L.cpu_s));
    p->cpu = lim(cpu, cpu + 1);
    p->as = lim((rlim_t)L.memory_mb << 20, (rlim_t)L.memory_mb << 20);
    p->fsize = lim((rlim_t)L.file_mb << 20, (rlim_t)L.file_mb << 20);
    p->nproc = lim((rlim_t)L.nproc, (rlim_t)L.nproc);
    p->nofile = lim(256, 256);
    p->core = lim(0, 0);
    p->uid = (uid_t)(1000000 + (::getpid() % 100000) * 64 + slot);
    if (level == isolation_level::full) {
        p->tmpfs_points = {"/tmp"};
        p->tmpfs_opts = {fmt::format("mode=1777,size={}m", L.tmpfs_mb)};
        for (const char* d : {"/var/tmp", "/dev/shm"}) {
            std::error_code ec;
            if (fs::is_directory(d, ec)) {
                p->tmpfs_points.push_back(d);
                p->tmpfs_opts.push_back("mode=1777,size=16m");
            }
        }
        for (const auto& e : spec.expose) {
            std::error_code ec;
            fs::path dir = fs::canonical(e, ec);
            if (ec || !fs::is_directory(dir, ec)) continue;
            // the first ancestor the sandbox uid cannot pass, or one of the private tmpfs points
            fs::path blocked;
            fs::path cur = "/";
            for (auto it = std::next(dir.begin()); it != dir.end(); ++it) {
                const fs::path next = cur / *it;
                bool tmp_point = false;
                for (const auto& t : p->tmpfs_points)
                    if (next == fs::path(t)) tmp_point = true;
                if (next != dir && (tmp_point || !reachable_by_others(next))) {
                    blocked = next;
                    break;
                }
                cur = next;
            }
            if (blocked.empty()) continue;
            bool is_tmp = false;
            for (const auto& t : p->tmpfs_points)
                if (blocked == fs::path(t)) is_tmp = true;
            if (!is_tmp) {
                bool have = false;
                for (const auto& h : p->hide_points)
                    if (h == blocked.string()) have = true;
                if (!have) p->hide_points.push_back(blocked.string());
            }
            std::vector<std::string> mk;
            fs::path c = blocked;
            const fs::path rel = dir.lexically_relative(blocked);
            for (const auto& part : rel) {
                c /= part;
                mk.push_back(c.string());
            }
            p->expose_src.push_back(dir.string());
            p->expose_dst.push_back(dir.string());
            p->expose_mkdirs.push_back(mk);
        }
        if (p->expose_src.size() > 32) {
            *error = "too many directories to expose";
            return false;
        }
        for (const auto& f : spec.files) {
            if (f.name.empty() || f.name.find('/') != std::string::npos) {
                *error = fmt::format("sandbox file name '{}' must be a plain name", f.name);
                return false;
            }
            p->file_paths.push_back(std::string(kWork) + "/" + f.name);
            p->file_contents.push_back(f.content);
        }
        p->workdir = kWork;
    } else {
        // no private tmpfs: a real temporary directory, created and filled here, removed by the caller
        char tmpl[] = "/tmp/trex-sandbox-XXXXXX";
        if (!::mkdtemp(tmpl)) {
            *error = "cannot create a temporary directory";
            return false;
        }
        p->workdir = tmpl;
        for (const auto& f : spec.files) {
            std::ofstream(p->workdir + "/" + f.name, std::ios::binary) << f.content;
        }
        p->set_nproc = ::geteuid() != 0;
    }
    return true;
}

std::once_flag probe_once;
sandbox_support probed;

// Ends a sandboxed process. Full isolation: SIGTERM to the outer process, which kills the namespace init (and with
// it every process of the namespace) and reaps it; `hard` (when that did not work) SIGKILLs the whole group.
// Otherwise the program is the process itself: SIGKILL its group.
void end_process(pid_t pid, isolation_level level, bool hard) {
    if (level == isolation_level::full && !hard) {
        ::kill(pid, SIGTERM);
        return;
    }
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
}

int spawn(const prepared& p, int in_fd, int out_w, int err_w, int side_w) {
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid != 0) return pid;
    // child: move the pipe ends to 0..3 (they may collide with those numbers: dup above 10 first)
    int fds[4] = {in_fd, out_w, err_w, side_w};
    for (int& f : fds)
        if (f >= 0) f = ::fcntl(f, F_DUPFD, 10);
    for (int i = 0; i < 4; i++) {
        if (fds[i] >= 0) ::dup2(fds[i], i);
        else ::close(i);
    }
    if (fds[0] < 0) {
        const int dn = ::open("/dev/null", O_RDONLY);
        if (dn >= 0 && dn != 0) ::dup2(dn, 0);
    }
    child_main(p, parent);
}

}  // namespace

const sandbox_support& probe_sandbox() {
    std::call_once(probe_once, [] {
        sandbox_support s;
        if (::geteuid() == 0) {
            const pid_t pid = ::fork();
            if (pid == 0) {
                if (::unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS) != 0) _exit(1);
                if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) _exit(2);
                if (::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") != 0) _exit(3);
                if (::setgid(1000000) != 0 || ::setuid(1000000) != 0) _exit(4);
                _exit(0);
            }
            int st = 0;
            if (pid > 0) ::waitpid(pid, &st, 0);
            if (pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
                s.level = isolation_level::full;
                s.description = "full: network/mount/PID namespaces, private tmpfs, unprivileged uid, rlimits";
            } else {
                s.description = fmt::format("root, but namespaces are not available (probe exit {})",
                                            WIFEXITED(st) ? WEXITSTATUS(st) : -1);
            }
        }
        // As root without namespaces, a user namespace would still leave the program root on the host's files:
        // refuse rather than pretend.
        if (s.level == isolation_level::none && ::geteuid() != 0) {
            const pid_t pid = ::fork();
            if (pid == 0) _exit(::unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0 ? 0 : 1);
            int st = 0;
            if (pid > 0) ::waitpid(pid, &st, 0);
            if (pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
                s.level = isolation_level::user_namespace;
                s.description = "partial (not root): user + network namespaces and rlimits; no private filesystem "
                                "view, no uid of its own";
            } else if (s.description.empty()) {
                s.description = "none: neither root namespaces nor user namespaces are available";
            }
        }
        probed = s;
    });
    return probed;
}

std::vector<std::string> python_dirs(const std::string& python) {
    std::vector<std::string> out;
    std::error_code ec;
    const fs::path abs = fs::absolute(python, ec);
    const fs::path venv = abs.parent_path().parent_path();
    if (fs::exists(venv / "pyvenv.cfg", ec)) {
        out.push_back(venv.string());
        std::ifstream in(venv / "pyvenv.cfg");
        std::string line;
        while (std::getline(in, line)) {
            if (line.rfind("home", 0) == 0) {
                const size_t eq = line.find('=');
                if (eq == std::string::npos) continue;
                std::string home = line.substr(eq + 1);
                while (!home.empty() && home.front() == ' ') home.erase(0, 1);
                while (!home.empty() && (home.back() == ' ' || home.back() == '\r')) home.pop_back();
                out.push_back(fs::path(home).parent_path().string());
            }
        }
    }
    const fs::path real = fs::canonical(abs, ec);
    if (!ec) out.push_back(real.parent_path().parent_path().string());
    return out;
}

sandbox_result run_sandboxed(const sandbox_spec& spec, int slot) {
    sandbox_result r;
    const sandbox_support& sup = probe_sandbox();
    if (sup.level == isolation_level::none && !spec.allow_unisolated) {
        r.error = "no sandbox isolation available (" + sup.description + "); refusing to run model-written code";
        return r;
    }
    prepared p;
    if (!prepare(spec, slot, sup.level, &p, &r.error)) return r;
    int out_p[2], err_p[2], side_p[2];
    if (::pipe2(out_p, O_CLOEXEC) != 0 || ::pipe2(err_p, O_CLOEXEC) != 0 || ::pipe2(side_p, O_CLOEXEC) != 0) {
        r.error = "cannot create pipes";
        return r;
    }
    const double t0 = now_seconds();
    const pid_t pid = spawn(p, -1, out_p[1], err_p[1], side_p[1]);
    ::close(out_p[1]);
    ::close(err_p[1]);
    ::close(side_p[1]);
    if (pid < 0) {
        ::close(out_p[0]);
        ::close(err_p[0]);
        ::close(side_p[0]);
        r.error = "fork failed";
        return r;
    }
    r.started = true;
    int fds[3] = {out_p[0], err_p[0], side_p[0]};
    std::string* dst[3] = {&r.out, &r.err, &r.side};
    bool open_[3] = {true, true, true};
    const double deadline = t0 + spec.limits.wall_s;
    bool killed = false;
    double kill_time = 0;
    auto kill_all = [&] {
        if (!killed) {
            killed = true;
            kill_time = now_seconds();
            end_process(pid, p.level, false);
        }
    };
    while (open_[0] || open_[1] || open_[2]) {
        pollfd pf[3];
        int n = 0, idx[3];
        for (int i = 0; i < 3; i++)
            if (open_[i]) {
                pf[n] = {fds[i], POLLIN, 0};
                idx[n++] = i;
            }
        const double left = deadline - now_seconds();
        if (left <= 0) {
            r.timed_out = true;
            kill_all();
            break;
        }
        const int pr = ::poll(pf, (nfds_t)n, (int)std::min(left * 1000.0 + 1, 200.0));
        if (pr < 0 && errno != EINTR) break;
        for (int k = 0; k < n; k++) {
            if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char buf[65536];
            const ssize_t m = ::read(pf[k].fd, buf, sizeof buf);
            if (m <= 0) {
                if (m < 0 && errno == EINTR) continue;
                open_[idx[k]] = false;
                continue;
            }
            std::string& d = *dst[idx[k]];
            d.append(buf, (size_t)m);
            if (idx[k] == 1 && d.size() > 32768) d.erase(0, d.size() - 16384);  // stderr: keep the tail
            if (idx[k] == 2 && d.size() > (4u << 20)) d.resize(4u << 20);
        }
        if ((long)(r.out.size() + r.err.size()) > spec.limits.output_bytes) {
            r.output_limit = true;
            kill_all();
            break;
        }
    }
    // wait for the process (the pipes may close before it exits)
    int st = 0;
    rusage ru {};
    while (true) {
        const pid_t w = ::wait4(pid, &st, WNOHANG, &ru);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) break;
        if (!killed && now_seconds() > deadline) {
            r.timed_out = true;
            kill_all();
        }
        if (killed && now_seconds() > kill_time + 2) end_process(pid, p.level, true);
        if (w == 0) ::usleep(2000);
    }
    const double cpu = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
                       1e-6 * (double)ru.ru_stime.tv_usec;
    for (int fd : fds) ::close(fd);
    if (r.out.size() > (size_t)spec.limits.output_bytes) r.out.resize((size_t)spec.limits.output_bytes);
    r.seconds = now_seconds() - t0;
    if (WIFEXITED(st)) {
        r.exit_code = WEXITSTATUS(st);
        if (p.level == isolation_level::full && r.exit_code > 128 && r.exit_code < 128 + 65) {
            r.signal = r.exit_code - 128;  // the namespace init relays the program's signal as 128 + sig
            r.exit_code = -1;
        }
    } else if (WIFSIGNALED(st)) {
        r.signal = WTERMSIG(st);
    }
    // SIGXCPU at the soft limit, or SIGKILL at the hard one when the program ignored it
    if (r.signal == SIGXCPU || (r.signal == SIGKILL && !r.timed_out && cpu >= (double)p.cpu.rlim_cur - 0.05))
        r.cpu_limit = true;
    if (r.exit_code == 125 && r.err.find("trex sandbox: ") != std::string::npos) {
        r.started = false;
        const size_t b = r.err.find("trex sandbox: ");
        r.error = r.err.substr(b + 14, r.err.find('\n', b) - b - 14);
    }
    if (p.level != isolation_level::full) {
        std::error_code ec;
        fs::remove_all(p.workdir, ec);
    }
    return r;
}

sandbox_process start_sandboxed(const sandbox_spec& spec, int slot, std::string* error) {
    sandbox_process sp;
    const sandbox_support& sup = probe_sandbox();
    if (sup.level == isolation_level::none && !spec.allow_unisolated) {
        *error = "no sandbox isolation available (" + sup.description + ")";
        return sp;
    }
    auto* p = new prepared;  // kept alive for the child only until exec; leaking one small struct per start is fine
    if (!prepare(spec, slot, sup.level, p, error)) {
        delete p;
        return sp;
    }
    int in_p[2], out_p[2], err_p[2];
    if (::pipe2(in_p, O_CLOEXEC) != 0 || ::pipe2(out_p, O_CLOEXEC) != 0 || ::pipe2(err_p, O_CLOEXEC) != 0) {
        *error = "cannot create pipes";
        delete p;
        return sp;
    }
    const pid_t pid = spawn(*p, in_p[0], out_p[1], err_p[1], -1);
    ::close(in_p[0]);
    ::close(out_p[1]);
    ::close(err_p[1]);
    delete p;
    if (pid < 0) {
        *error = "fork failed";
        ::close(in_p[1]);
        ::close(out_p[0]);
        ::close(err_p[0]);
        return sp;
    }
    sp.pid = pid;
    sp.in = in_p[1];
    sp.out = out_p[0];
    sp.err = err_p[0];
    return sp;
}

void stop_sandboxed(sandbox_process& p) {
    if (p.pid > 0) {
        end_process(p.pid, probe_sandbox().level, false);
        int st;
        const double t0 = now_seconds();
        while (true) {
            const pid_t w = ::waitpid(p.pid, &st, WNOHANG);
            if (w == p.pid || (w < 0 && errno != EINTR)) break;
            if (now_seconds() > t0 + 2) {
                end_process(p.pid, probe_sandbox().level, true);
                while (::waitpid(p.pid, &st, 0) < 0 && errno == EINTR) {
                }
                break;
            }
            ::usleep(1000);
        }
    }
    for (int* fd : {&p.in, &p.out, &p.err})
        if (*fd >= 0) {
            ::close(*fd);
            *fd = -1;
        }
    p.pid = -1;
}

}  // namespace trex::eval
