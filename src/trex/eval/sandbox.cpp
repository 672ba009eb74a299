// The harness side of the sandbox: preparing a child, starting it in its cgroup, feeding its solve channel,
// collecting its output under the caps, and ending everything it started.
#include "trex/eval/sandbox.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "trex/base/timer.hpp"
#include "trex/eval/sandbox_cgroup.hpp"
#include "trex/eval/sandbox_internal.hpp"

namespace trex::eval {

namespace fs = std::filesystem;
using detail::prepared;

namespace {

rlimit lim(rlim_t v) {
    return rlimit{v, v};
}

// Host directories every program gets (shared libraries), and the top-level links to them (/lib -> usr/lib on
// merged-/usr systems; a real /lib directory is exposed instead).
// /etc/alternatives and the loader's cache: Debian's library links (liblapack.so.3 -> /etc/alternatives/...) and
// where ld.so finds the libraries of its configured directories.
const char* const kSystemDirs[] = {"/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libx32", "/etc/alternatives"};
const char* const kSystemFiles[] = {"/etc/ld.so.cache"};
const char* const kTopLevelLibs[] = {"/lib", "/lib64", "/lib32", "/libx32"};

bool is_under(const fs::path& p, const fs::path& dir) {
    auto [a, b] = std::mismatch(dir.begin(), dir.end(), p.begin(), p.end());
    return a == dir.end();
}

// Canonical exposed directories, without those inside another one, parents first.
std::vector<fs::path> exposed_dirs(const std::vector<std::string>& requested) {
    std::vector<fs::path> all;
    std::error_code ec;
    auto add = [&](const std::string& d) {
        const fs::path c = fs::canonical(d, ec);
        if (ec || !fs::is_directory(c, ec)) return;
        if (is_under(c, "/proc") || is_under(c, "/dev") || is_under(c, "/sys") || c == "/") return;
        all.push_back(c);
    };
    for (const char* d : kSystemDirs) add(d);
    for (const char* d : kTopLevelLibs)
        if (!fs::is_symlink(d, ec)) add(d);
    for (const auto& d : requested) add(d);
    std::sort(all.begin(), all.end(), [](const fs::path& a, const fs::path& b) {
        return a.string().size() < b.string().size() || (a.string().size() == b.string().size() && a < b);
    });
    std::vector<fs::path> out;
    for (const auto& d : all) {
        bool inside = false;
        for (const auto& o : out) inside = inside || is_under(d, o);
        if (!inside) out.push_back(d);
    }
    return out;
}

void prepare_root(const sandbox_spec& spec, prepared* p) {
    const std::string stage = detail::kStage;
    const sandbox_limits& L = spec.limits;
    p->root_opts = "mode=755,size=4m,nr_inodes=16384";
    p->tmp_opts = fmt::format("mode=1777,size={}m", std::max(1l, L.tmpfs_mb));
    p->dev_opts = "mode=755,size=64k,nr_inodes=64";
    p->shm_opts = "mode=1777,size=16m";
    std::vector<std::string> mk;
    for (const auto& d : exposed_dirs(spec.expose)) {
        fs::path cur = stage;
        for (auto it = std::next(d.begin()); it != d.end(); ++it) {
            cur /= *it;
            if (std::find(mk.begin(), mk.end(), cur.string()) == mk.end()) mk.push_back(cur.string());
        }
        p->expose_src.push_back(d.string());
        p->expose_dst.push_back((fs::path(stage) / d.relative_path()).string());
        p->expose_is_file.push_back(0);
    }
    std::error_code ec;
    for (const char* f : kSystemFiles) {
        const fs::path c = fs::canonical(f, ec);
        if (ec || !fs::is_regular_file(c, ec)) continue;
        fs::path cur = stage;
        for (auto it = std::next(c.begin()); std::next(it) != c.end(); ++it) {
            cur /= *it;
            if (std::find(mk.begin(), mk.end(), cur.string()) == mk.end()) mk.push_back(cur.string());
        }
        p->expose_src.push_back(c.string());
        p->expose_dst.push_back((fs::path(stage) / fs::path(f).relative_path()).string());
        p->expose_is_file.push_back(1);
    }
    // /tmp/... directories are made on the new /tmp; /dev, /tmp and /proc themselves by the child
    for (const auto& d : mk)
        if (d != stage + "/tmp" && d != stage + "/dev" && d != stage + "/proc") p->mkdirs.push_back(d);
    for (const char* l : kTopLevelLibs) {
        if (!fs::is_symlink(l, ec)) continue;
        p->link_target.push_back(fs::read_symlink(l, ec).string());
        p->link_path.push_back(stage + l);
    }
    const std::pair<const char*, const char*> dev_links[] = {{"fd", "/proc/self/fd"},
                                                             {"stdin", "/proc/self/fd/0"},
                                                             {"stdout", "/proc/self/fd/1"},
                                                             {"stderr", "/proc/self/fd/2"}};
    for (const auto& [name, target] : dev_links) {
        p->link_target.push_back(target);
        p->link_path.push_back(stage + "/dev/" + name);
    }
    const std::pair<const char*, unsigned> nodes[] = {
        {"null", 3}, {"zero", 5}, {"full", 7}, {"random", 8}, {"urandom", 9}};
    for (const auto& [name, minor_no] : nodes) {
        if (p->userns) {  // no mknod in a user namespace: the host's nodes, bound
            p->expose_src.push_back(std::string("/dev/") + name);
            p->expose_dst.push_back(stage + "/dev/" + name);
            p->expose_is_file.push_back(2);
            continue;
        }
        p->dev_nodes.push_back(stage + "/dev/" + name);
        p->dev_numbers.push_back((unsigned)makedev(1, minor_no));
    }
}

}  // namespace

bool detail::prepare(const sandbox_spec& spec, int slot, sandbox_mode mode, prepared* p, std::string* error) {
    const bool isolated = mode != sandbox_mode::unisolated;
    if (spec.argv.empty() || spec.argv[0].empty() || spec.argv[0][0] != '/') {
        *error = "the program must be given by an absolute path";
        return false;
    }
    for (const auto& f : spec.files)
        if (f.name.empty() || f.name.find('/') != std::string::npos || f.name == "." || f.name == "..") {
            *error = fmt::format("sandbox file name '{}' must be a plain name", f.name);
            return false;
        }
    p->isolated = isolated;
    p->strings.reserve(spec.argv.size() + spec.env.size());
    for (const auto& a : spec.argv) p->strings.push_back(a);
    for (const auto& e : spec.env) p->strings.push_back(e);
    for (size_t i = 0; i < spec.argv.size(); i++) p->argv.push_back(p->strings[i].data());
    p->argv.push_back(nullptr);
    for (size_t i = 0; i < spec.env.size(); i++) p->envp.push_back(p->strings[spec.argv.size() + i].data());
    p->envp.push_back(nullptr);
    const sandbox_limits& L = spec.limits;
    const rlim_t cpu = (rlim_t)std::max(1.0, std::ceil(L.cpu_s));
    p->cpu = rlimit{cpu, cpu + 1};
    p->as = L.limit_address_space ? lim((rlim_t)L.memory_mb << 20) : rlimit{RLIM_INFINITY, RLIM_INFINITY};
    p->fsize = lim((rlim_t)L.file_mb << 20);
    p->nproc = lim((rlim_t)L.nproc);
    p->nofile = lim(256);
    p->core = lim(0);
    p->uid = (uid_t)(1000000 + (::getpid() % 100000) * 64 + slot);
    p->gid = p->uid;
    if (mode == sandbox_mode::user_namespace) {
        // the only ids an unprivileged user namespace may map: the invoking user's own
        p->userns = true;
        p->uid = ::geteuid();
        p->gid = ::getegid();
        p->uid_map = fmt::format("{} {} 1\n", p->uid, p->uid);
        p->gid_map = fmt::format("{} {} 1\n", p->gid, p->gid);
    }
    if (isolated) {
        p->filter = detail::seccomp_program(error);
        if (!p->filter) return false;
        prepare_root(spec, p);
        for (const auto& f : spec.files) {
            p->file_paths.push_back(std::string(detail::kWork) + "/" + f.name);
            p->file_contents.push_back(f.content);
        }
        return true;
    }
    // no namespaces: a real temporary directory, created and filled here, removed by the caller
    char tmpl[] = "/tmp/trex-sandbox-XXXXXX";
    if (!::mkdtemp(tmpl)) {
        *error = "cannot create a temporary directory";
        return false;
    }
    p->workdir = tmpl;
    for (const auto& f : spec.files) std::ofstream(p->workdir + "/" + f.name, std::ios::binary) << f.content;
    p->set_nproc = ::geteuid() != 0;
    return true;
}

namespace {

std::atomic<long> g_run_counter{0};

struct child_fds {
    int in = -1, out = -1, err = -1, channel = -1;
};

// Starts the child in its cgroup. Returns its pid (-1 with *error set).
pid_t spawn(const prepared& p, const child_fds& fds, program_cgroup& cg, std::string* error) {
    int start[2];
    if (::pipe2(start, O_CLOEXEC) != 0) {
        *error = "cannot create the start pipe";
        return -1;
    }
    const long flags = (p.isolated ? (CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) : 0) |
                       (p.userns ? CLONE_NEWUSER : 0);
    const pid_t pid =
        p.isolated ? (pid_t)::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr) : ::fork();
    if (pid == 0) {
        // move the ends to 0..4 (they may collide with those numbers: dup above 10 first)
        int want[5] = {fds.in, fds.out, fds.err, fds.channel, start[0]};
        for (int& f : want)
            if (f >= 0) f = ::fcntl(f, F_DUPFD, 10);
        for (int i = 0; i < 5; i++) {
            if (want[i] >= 0)
                ::dup2(want[i], i);
            else
                ::close(i);
        }
        if (want[0] < 0) {
            const int dn = ::open("/dev/null", O_RDONLY);
            if (dn > 0) ::dup2(dn, 0);
        }
        if (!p.isolated) ::setpgid(0, 0);
        detail::child_main(p);
    }
    ::close(start[0]);
    if (pid < 0) {
        *error = fmt::format("cannot start the sandbox: {}", std::strerror(errno));
        ::close(start[1]);
        return -1;
    }
    if (cg.ok() && !cg.add(pid)) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        ::close(start[1]);
        *error = "cannot move the program into its cgroup";
        return -1;
    }
    const char go = 'g';
    const bool started = ::write(start[1], &go, 1) == 1;
    ::close(start[1]);
    if (!started) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        *error = "cannot start the sandbox (start pipe)";
        return -1;
    }
    return pid;
}

// Ends the program and everything it started: isolated, it is PID 1 of its namespace (its death takes every other
// process of the namespace); otherwise its process group; then whatever is left in the cgroup.
void end_all(pid_t pid, bool isolated, program_cgroup& cg) {
    if (!isolated) ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    cg.kill_all();
}

program_cgroup make_cgroup(const sandbox_limits& L, int slot) {
    if (!cgroup_support().available) return program_cgroup();
    return program_cgroup(fmt::format("trex-{}-{}-{}", ::getpid(), slot, g_run_counter.fetch_add(1)), L.memory_mb << 20,
                          L.nproc);
}

// Setup failures of the child: exit 125 with "trex sandbox: ..." on stderr.
bool setup_failed(int exit_code, const std::string& err, std::string* why) {
    const size_t b = err.find("trex sandbox: ");
    if (exit_code != 125 || b == std::string::npos) return false;
    const size_t e = err.find('\n', b);
    *why = err.substr(b + 14, (e == std::string::npos ? err.size() : e) - b - 14);
    return true;
}

// One output stream of the program: the first `cap` bytes kept, the rest counted.
void take(std::string& dst, long& total, const char* data, size_t n, long cap) {
    total += (long)n;
    if ((long)dst.size() < cap) dst.append(data, std::min(n, (size_t)(cap - (long)dst.size())));
}

}  // namespace

namespace {

struct probed {
    sandbox_report report;
    detail::sandbox_mode mode = detail::sandbox_mode::unisolated;
};

const probed& probe_once() {
    static std::once_flag once;
    static probed p;
    std::call_once(once, [] { p.report = detail::measure_guarantees(&p.mode); });
    return p;
}

}  // namespace

const sandbox_report& sandbox_guarantees() {
    return probe_once().report;
}

detail::sandbox_mode detail::probed_mode() {
    const probed& p = probe_once();
    return p.report.isolated ? p.mode : sandbox_mode::unisolated;
}

sandbox_result detail::run_prepared(const prepared& p, const sandbox_spec& spec, int slot) {
    sandbox_result r;
    r.isolated = p.isolated;
    program_cgroup cg = make_cgroup(spec.limits, slot);
    int out_p[2], err_p[2], chan[2] = {-1, -1};
    if (::pipe2(out_p, O_CLOEXEC) != 0 || ::pipe2(err_p, O_CLOEXEC) != 0 ||
        (spec.on_message && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, chan) != 0)) {
        r.error = "cannot create pipes";
        return r;
    }
    const double t0 = now_seconds();
    const pid_t pid = spawn(p, {-1, out_p[1], err_p[1], chan[1]}, cg, &r.error);
    ::close(out_p[1]);
    ::close(err_p[1]);
    if (chan[1] >= 0) ::close(chan[1]);
    if (pid < 0) {
        for (int fd : {out_p[0], err_p[0], chan[0]})
            if (fd >= 0) ::close(fd);
        return r;
    }
    r.started = true;
    if (chan[0] >= 0) ::fcntl(chan[0], F_SETFL, ::fcntl(chan[0], F_GETFL) | O_NONBLOCK);
    const sandbox_limits& L = spec.limits;
    const double deadline = t0 + L.wall_s;
    bool killed = false;
    auto kill_all = [&] {
        if (!killed) end_all(pid, p.isolated, cg);
        killed = true;
    };
    int fds[3] = {out_p[0], err_p[0], chan[0]};
    bool open_[3] = {true, true, chan[0] >= 0};
    std::string chan_in, chan_out;
    while (open_[0] || open_[1]) {
        const double left = deadline - now_seconds();
        if (left <= 0) {
            r.timed_out = true;
            kill_all();
            break;
        }
        pollfd pf[3];
        int n = 0, idx[3];
        for (int i = 0; i < 3; i++)
            if (open_[i]) {
                pf[n] = {fds[i], (short)(POLLIN | (i == 2 && !chan_out.empty() ? POLLOUT : 0)), 0};
                idx[n++] = i;
            }
        const int pr = ::poll(pf, (nfds_t)n, (int)std::min(left * 1000.0 + 1, 200.0));
        if (pr < 0 && errno != EINTR) break;
        for (int k = 0; k < n && pr > 0; k++) {
            const int i = idx[k];
            if (i == 2 && (pf[k].revents & POLLOUT) && !chan_out.empty()) {
                const ssize_t w = ::send(fds[2], chan_out.data(), chan_out.size(), MSG_NOSIGNAL);
                if (w > 0)
                    chan_out.erase(0, (size_t)w);
                else if (w < 0 && errno != EAGAIN && errno != EINTR)
                    open_[2] = false;
            }
            if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char buf[65536];
            const ssize_t m = ::read(fds[i], buf, sizeof buf);
            if (m < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (m <= 0) {
                open_[i] = false;
                continue;
            }
            if (i == 0) take(r.out, r.out_bytes, buf, (size_t)m, L.stream_bytes);
            if (i == 1) take(r.err, r.err_bytes, buf, (size_t)m, L.stream_bytes);
            if (i == 2) chan_in.append(buf, (size_t)m);
        }
        size_t nl;
        while ((nl = chan_in.find('\n')) != std::string::npos) {
            const std::string line = chan_in.substr(0, nl);
            chan_in.erase(0, nl + 1);
            std::string reply = spec.on_message(line);
            if (!reply.empty()) chan_out += reply + "\n";
        }
        if ((long)chan_in.size() > spec.message_bytes) {
            r.output_limit = true;
            kill_all();
            break;
        }
        if (r.out_bytes + r.err_bytes > L.flood_bytes) {
            r.output_limit = true;
            kill_all();
            break;
        }
        // CPU of everything the program started (RLIMIT_CPU bounds each process only)
        if (cg.cpu_seconds() > L.cpu_s) {
            r.cpu_limit = true;
            kill_all();
            break;
        }
    }
    // the program may still run with its pipes closed: wait for it until the deadline
    int st = 0;
    rusage ru{};
    while (true) {
        const pid_t w = ::wait4(pid, &st, WNOHANG, &ru);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) break;
        if (!killed && now_seconds() > deadline) {
            r.timed_out = true;
            kill_all();
        }
        if (w == 0) ::usleep(1000);
    }
    end_all(pid, p.isolated, cg);  // whatever it left behind (nothing, when isolated)
    for (int fd : fds)
        if (fd >= 0) ::close(fd);
    r.seconds = now_seconds() - t0;
    const double cpu = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
                       1e-6 * (double)ru.ru_stime.tv_usec;
    if (WIFEXITED(st)) r.exit_code = WEXITSTATUS(st);
    if (WIFSIGNALED(st)) r.signal = WTERMSIG(st);
    // SIGXCPU at the soft limit, or SIGKILL at the hard one when the program ignored it
    if (r.signal == SIGXCPU || (r.signal == SIGKILL && !killed && cpu >= (double)p.cpu.rlim_cur - 0.05))
        r.cpu_limit = true;
    r.memory_limit = cg.memory_limit_hit();
    r.peak_memory_mb = cg.peak_memory_mb();
    if (setup_failed(r.exit_code, r.err, &r.error)) r.started = false;
    cg.remove();
    if (!p.isolated) {
        std::error_code ec;
        fs::remove_all(p.workdir, ec);
    }
    return r;
}

sandbox_result run_sandboxed(const sandbox_spec& spec, int slot) {
    sandbox_result r;
    const sandbox_report& g = sandbox_guarantees();
    if (!g.isolated && !spec.allow_unisolated) {
        r.error = "the sandbox's guarantees do not hold here (" + g.summary +
                  "); refusing to run model-written code (--allow-unisolated runs it anyway)";
        return r;
    }
    prepared p;
    if (!detail::prepare(spec, slot, detail::probed_mode(), &p, &r.error)) return r;
    return detail::run_prepared(p, spec, slot);
}

sandbox_process start_sandboxed(const sandbox_spec& spec, int slot, std::string* error) {
    sandbox_process sp;
    const sandbox_report& g = sandbox_guarantees();
    if (!g.isolated && !spec.allow_unisolated) {
        *error = "the sandbox's guarantees do not hold here (" + g.summary + ")";
        return sp;
    }
    prepared p;
    if (!detail::prepare(spec, slot, detail::probed_mode(), &p, error)) return sp;
    auto cg = std::make_shared<program_cgroup>(make_cgroup(spec.limits, slot));
    int in_p[2], out_p[2], err_p[2];
    if (::pipe2(in_p, O_CLOEXEC) != 0 || ::pipe2(out_p, O_CLOEXEC) != 0 || ::pipe2(err_p, O_CLOEXEC) != 0) {
        *error = "cannot create pipes";
        return sp;
    }
    const pid_t pid = spawn(p, {in_p[0], out_p[1], err_p[1], -1}, *cg, error);
    ::close(in_p[0]);
    ::close(out_p[1]);
    ::close(err_p[1]);
    if (pid < 0) {
        ::close(in_p[1]);
        ::close(out_p[0]);
        ::close(err_p[0]);
        return sp;
    }
    sp.pid = pid;
    sp.in = in_p[1];
    sp.out = out_p[0];
    sp.err = err_p[0];
    sp.isolated = p.isolated;
    sp.workdir = p.workdir;
    sp.cgroup = cg;
    return sp;
}

void stop_sandboxed(sandbox_process& p) {
    if (p.pid > 0) {
        program_cgroup none;
        end_all(p.pid, p.isolated, p.cgroup ? *p.cgroup : none);
        while (::waitpid(p.pid, nullptr, 0) < 0 && errno == EINTR) {
        }
    }
    for (int* fd : {&p.in, &p.out, &p.err})
        if (*fd >= 0) {
            ::close(*fd);
            *fd = -1;
        }
    if (p.cgroup) p.cgroup->remove();
    p.cgroup.reset();
    if (!p.workdir.empty()) {
        std::error_code ec;
        fs::remove_all(p.workdir, ec);
        p.workdir.clear();
    }
    p.pid = -1;
}

std::vector<std::string> python_dirs(const std::string& python) {
    std::vector<std::string> out;
    std::error_code ec;
    const fs::path abs = fs::absolute(python, ec);
    const fs::path venv = fs::canonical(abs.parent_path(), ec).parent_path();
    if (!ec && fs::exists(venv / "pyvenv.cfg", ec)) {
        out.push_back(venv.string());
        std::ifstream in(venv / "pyvenv.cfg");
        std::string line;
        while (std::getline(in, line)) {
            if (line.rfind("home", 0) != 0) continue;
            const size_t eq = line.find('=');
            if (eq == std::string::npos) continue;
            std::string home = line.substr(eq + 1);
            while (!home.empty() && home.front() == ' ') home.erase(0, 1);
            while (!home.empty() && (home.back() == ' ' || home.back() == '\r')) home.pop_back();
            const fs::path h = fs::canonical(home, ec);
            if (!ec) out.push_back(h.parent_path().string());
        }
    }
    const fs::path real = fs::canonical(abs, ec);
    if (!ec) out.push_back(real.parent_path().parent_path().string());
    return out;
}

std::string sandbox_python_path(const std::string& python) {
    std::error_code ec;
    const fs::path abs = fs::absolute(python, ec);
    const fs::path dir = fs::canonical(abs.parent_path(), ec);
    if (ec) return abs.string();
    return (dir / abs.filename()).string();
}

}  // namespace trex::eval
