// The sandbox's guarantees, measured: a real sandbox is set up exactly as for a program, and in place of the
// program our checks run inside it (probe_main, system calls only), each printing "name 0|1 detail".
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "trex/eval/sandbox_cgroup.hpp"
#include "trex/eval/sandbox_internal.hpp"

namespace trex::eval::detail {

namespace fs = std::filesystem;

namespace {

// ---- inside the sandbox (async-signal-safe) ----

void report(const char* name, bool held, line_buf& detail) {
    line_buf b;
    b.add(name);
    b.add(held ? " 1 " : " 0 ");
    detail.data[detail.n] = 0;
    b.add(detail.data);
    b.add("\n");
    b.flush(1);
    detail.n = 0;
}

// Reads a small file into buf (NUL-terminated); returns its length or -1.
long read_small(const char* path, char* buf, long size) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    long n = 0;
    ssize_t r;
    while (n < size - 1 && (r = ::read(fd, buf + n, (size_t)(size - 1 - n))) > 0) n += r;
    ::close(fd);
    buf[n] = 0;
    return n;
}

// The hex value of "Key:\t..." in /proc/self/status text; -1 when absent.
long long status_field(const char* text, const char* key) {
    const char* p = std::strstr(text, key);
    if (!p) return -1;
    p += std::strlen(key);
    while (*p == ' ' || *p == '\t') p++;
    return (long long)std::strtoull(p, nullptr, key[0] == 'C' ? 16 : 10);
}

struct dirent64_header {  // the fixed part of what getdents64 returns per entry
    ino64_t ino;
    off64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[1];
};

int count_processes() {
    const int fd = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buf[8192];
    int count = 0;
    long n;
    while ((n = ::syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            const auto* d = reinterpret_cast<const dirent64_header*>(buf + off);
            if (d->name[0] >= '0' && d->name[0] <= '9') count++;
            off += d->reclen;
        }
    }
    ::close(fd);
    return count;
}

bool denied(long rc, int want_errno) {
    return rc == -1 && errno == want_errno;
}

void check_pid_namespace(line_buf& d) {
    const int procs = count_processes();
    d.add("pid ");
    d.add_long(::getpid());
    d.add(", processes in /proc: ");
    d.add_long(procs);
    report("pid_namespace", ::getpid() == 1 && procs == 1, d);
}

void check_root_view(const prepared& p, line_buf& d) {
    bool ok = true;
    for (const auto& h : p.probe_hidden) {
        struct stat st {};
        if (::stat(h.c_str(), &st) == 0 || errno != ENOENT) {
            ok = false;
            d.add("visible: ");
            d.add(h.c_str());
            d.add("; ");
        }
    }
    struct statvfs vs {};
    const bool ro = ::statvfs("/", &vs) == 0 && (vs.f_flag & ST_RDONLY);
    if (!ro) d.add("/ is writable; ");
    d.add_long((long)p.probe_hidden.size());
    d.add(" host paths checked absent");
    report("root_view", ok && ro, d);
}

void check_work_dir(const prepared& p, line_buf& d) {
    struct statfs sf {};
    const bool tmpfs = ::statfs(detail::kWork, &sf) == 0 && sf.f_type == TMPFS_MAGIC;
    const long mb = (long)((unsigned long long)sf.f_blocks * (unsigned long long)sf.f_bsize >> 20);
    const int fd = ::open("/tmp/work/.probe", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    const bool writable = fd >= 0 && ::write(fd, "x", 1) == 1;
    if (fd >= 0) ::close(fd);
    ::unlink("/tmp/work/.probe");
    d.add(tmpfs ? "tmpfs of " : "not a tmpfs, ");
    d.add_long(mb);
    d.add(" MiB");
    d.add(writable ? ", writable" : ", not writable");
    (void)p;
    report("work_dir", tmpfs && writable && mb > 0, d);
}

void check_network(const prepared& p, line_buf& d) {
    char buf[4096];
    int interfaces = 0;
    bool only_lo = read_small("/proc/net/dev", buf, sizeof buf) > 0;
    for (char* line = std::strchr(buf, '\n'); line; line = std::strchr(line + 1, '\n')) {
        char* colon = std::strchr(line + 1, ':');
        char* next = std::strchr(line + 1, '\n');
        if (!colon || (next && colon > next)) continue;
        interfaces++;
        const char* name = line + 1;
        while (*name == ' ') name++;
        if (colon - name != 2 || std::strncmp(name, "lo", 2) != 0) only_lo = false;
    }
    const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)p.probe_port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool host_unreachable = s >= 0 && ::connect(s, (sockaddr*)&a, sizeof a) != 0;
    if (s >= 0) ::close(s);
    const int u = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in out{};
    out.sin_family = AF_INET;
    out.sin_port = htons(53);
    out.sin_addr.s_addr = htonl(0x08080808);
    const bool no_route = u >= 0 && ::connect(u, (sockaddr*)&out, sizeof out) != 0;
    if (u >= 0) ::close(u);
    d.add_long(interfaces);
    d.add(only_lo ? " interface (lo)" : " interfaces, not only lo");
    d.add(host_unreachable ? "; the host's loopback listener unreachable" : "; the host's loopback listener REACHED");
    d.add(no_route ? "; no route out" : "; a route out exists");
    report("network", only_lo && interfaces == 1 && host_unreachable && no_route, d);
}

void check_privileges(line_buf& d) {
    char st[8192];
    read_small("/proc/self/status", st, sizeof st);
    const long long caps = status_field(st, "CapInh:") | status_field(st, "CapPrm:") | status_field(st, "CapEff:") |
                           status_field(st, "CapBnd:") | status_field(st, "CapAmb:");
    const long long nnp = status_field(st, "NoNewPrivs:");
    const bool unprivileged = ::getuid() != 0 && ::geteuid() != 0 && ::getgid() != 0;
    d.add("uid ");
    d.add_long((long)::getuid());
    d.add(caps == 0 ? ", no capabilities" : ", HAS capabilities");
    d.add(nnp == 1 ? ", no_new_privs" : ", new privileges possible");
    report("no_privileges", unprivileged && caps == 0 && nnp == 1, d);
}

void check_seccomp(line_buf& d) {
    char st[8192];
    read_small("/proc/self/status", st, sizeof st);
    const bool filtered = status_field(st, "Seccomp:") == 2;
    const bool userns = denied(::unshare(CLONE_NEWUSER), EPERM);
    const long c = ::syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (c == 0) _exit(0);
    const bool clone_userns = c == -1 && errno == EPERM;
    const bool mnt = denied(::mount("none", "/tmp", "tmpfs", 0, nullptr), EPERM);
    const bool trace = denied(::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr), EPERM);
    const bool bpf = denied(::syscall(SYS_bpf, 0, nullptr, 0), EPERM);
    const bool keys = denied(::syscall(SYS_keyctl, 0, 0, 0, 0, 0), EPERM);
    const bool clone3 = denied(::syscall(SYS_clone3, nullptr, 0), ENOSYS);
    struct {
        const char* name;
        bool ok;
    } items[] = {{"filter", filtered},
                 {"unshare(NEWUSER)", userns},
                 {"clone(NEWUSER)", clone_userns},
                 {"mount", mnt},
                 {"ptrace", trace},
                 {"bpf", bpf},
                 {"keyctl", keys},
                 {"clone3", clone3}};
    bool all = true;
    for (const auto& it : items) {
        all = all && it.ok;
        d.add(it.name);
        d.add(it.ok ? " denied; " : " ALLOWED; ");
    }
    report("seccomp", all, d);
}

void check_cgroup(line_buf& d) {
    char buf[4096];
    read_small("/proc/self/cgroup", buf, sizeof buf);
    const bool in = std::strstr(buf, "/trex-") != nullptr;
    d.add(in ? "in its own cgroup" : "not in a cgroup of its own");
    report("cgroup", in, d);
}

}  // namespace

void probe_main(const prepared& p) {
    line_buf d;
    check_pid_namespace(d);
    check_root_view(p, d);
    check_work_dir(p, d);
    check_network(p, d);
    check_privileges(d);
    check_seccomp(d);
    check_cgroup(d);
    // our PID namespace, for the harness to look for what is left of it afterwards
    char ns[64];
    const long n = ::readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
    if (n > 0) {
        ns[n] = 0;
        line_buf b;
        b.add("pidns ");
        b.add(ns);
        b.add("\n");
        b.flush(1);
    }
    // a child left behind: the harness checks that it died with us
    if (::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr) == 0) {
        ::pause();
        _exit(0);
    }
    _exit(0);
}

// ---- the harness side ----

namespace {

struct item_text {
    const char* name;
    const char* what;
    bool required;
};
const item_text kItems[] = {
    {"pid_namespace", "own PID namespace, fresh /proc (no host processes or command lines)", true},
    {"root_view", "read-only minimal root: no project tree, benchmark files, home or /etc", true},
    {"work_dir", "empty size-capped tmpfs working directory", true},
    {"network", "network namespace with loopback only", true},
    {"no_privileges", "unprivileged uid, no capabilities, no_new_privs", true},
    {"seccomp", "user namespaces, mount, ptrace, bpf, keyctl denied", true},
    {"cgroup", "memory, process and CPU limits on the whole answer (cgroup)", false},
    {"kill_on_exit", "every process of the answer dies with it", true},
};

int listen_loopback(int* port) {
    const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return -1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(s, (sockaddr*)&a, sizeof a) != 0 || ::listen(s, 4) != 0 || ::getsockname(s, (sockaddr*)&a, &len) != 0) {
        ::close(s);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return s;
}

// Processes alive on the host in the PID namespace `pidns` (as /proc/PID/ns/pid reads: "pid:[inode]").
int processes_in(const std::string& pidns) {
    int n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
        const std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        const fs::path link = fs::read_symlink(e.path() / "ns" / "pid", ec);
        if (!ec && link.string() == pidns) n++;
    }
    return n;
}

std::vector<std::string> hidden_paths() {
    std::vector<std::string> out = {"/root", "/home",    "/etc/passwd", "/etc/hosts", "/etc/ssl", "/sys",
                                    "/var",  "/usr/bin", "/usr/share",  "/usr/local", "/run",     "/opt"};
    std::error_code ec;
    for (const fs::path& p :
         {fs::current_path(ec), fs::path(TREX_SOURCE_DIR), fs::read_symlink("/proc/self/exe", ec)}) {
        if (p.empty()) continue;
        // paths the program sees by design (its root, what holds the exposed system directories) are no leak
        const std::string s = p.string();
        bool by_design = false;
        for (const char* seen : {"/usr/lib", "/etc/alternatives", "/etc/ld.so.cache", "/tmp", "/dev", "/proc"})
            by_design = by_design || s == seen || std::string(seen).rfind(s + "/", 0) == 0 ||
                        s.rfind(std::string(seen) + "/", 0) == 0;
        if (s == "/" || by_design) continue;
        out.push_back(s);
    }
    return out;
}

// One probe run in `mode`: found[i] per item of kItems, or *why when the sandbox could not be set up.
void run_probe(sandbox_mode mode, std::vector<std::pair<bool, std::string>>* found, std::string* why) {
    int port = 0;
    const int ls = listen_loopback(&port);
    sandbox_spec spec;
    spec.argv = {"/probe"};
    // the probe takes well under a second; the limit only bounds a hung one (a sanitizer build on a busy machine runs
    // it many times slower, and a probe cut short must not read as missing guarantees)
    spec.limits.wall_s = 60;
    spec.limits.memory_mb = 256;
    spec.limits.limit_address_space = !kAddressSanitizer;  // the probe is a fork of this process
    spec.limits.nproc = 8;
    spec.limits.tmpfs_mb = 4;
    prepared p;
    if (!prepare(spec, 63, mode, &p, why)) {
        *why = "cannot prepare the sandbox: " + *why;
        if (ls >= 0) ::close(ls);
        return;
    }
    p.probe = true;
    p.probe_hidden = hidden_paths();
    p.probe_port = port;
    const sandbox_result r = run_prepared(p, spec, 63);
    if (ls >= 0) ::close(ls);
    if (!r.started) {
        *why = "sandbox setup failed: " + r.error;
        return;
    }
    if (r.timed_out || r.cpu_limit || r.memory_limit || r.signal != 0) {
        const std::string stop = r.timed_out      ? "its wall-time limit"
                                 : r.cpu_limit    ? "its CPU-time limit"
                                 : r.memory_limit ? "its memory limit"
                                                  : fmt::format("signal {}", r.signal);
        *why =
            fmt::format("the probe was stopped by {} after {:.1f} s, before it could check anything", stop, r.seconds);
        return;
    }
    std::string pidns;
    size_t b = 0;
    while (b < r.out.size()) {
        size_t e = r.out.find('\n', b);
        if (e == std::string::npos) e = r.out.size();
        const std::string line = r.out.substr(b, e - b);
        b = e + 1;
        const size_t s1 = line.find(' ');
        if (s1 == std::string::npos) continue;
        if (line.compare(0, s1, "pidns") == 0) pidns = line.substr(s1 + 1);
        for (size_t i = 0; i < std::size(kItems); i++)
            if (line.compare(0, s1, kItems[i].name) == 0)
                (*found)[i] = {line.compare(s1 + 1, 1, "1") == 0, s1 + 3 <= line.size() ? line.substr(s1 + 3) : ""};
    }
    const int left = processes_in(pidns);
    found->back() = {!pidns.empty() && left == 0 && r.exit_code == 0,
                     fmt::format("{} process(es) of its PID namespace left after the probe ended", left)};
}

}  // namespace

sandbox_report measure_guarantees(sandbox_mode* mode) {
    sandbox_report rep;
    std::string why;
    std::vector<std::pair<bool, std::string>> found(std::size(kItems), {false, ""});
    *mode = sandbox_mode::unisolated;
    if (::geteuid() == 0) {
        run_probe(sandbox_mode::root, &found, &why);
        if (why.empty()) *mode = sandbox_mode::root;
    }
    if (*mode == sandbox_mode::unisolated) {
        // not root, or root without the namespaces: an unprivileged user namespace, where the kernel allows one
        std::string why_userns;
        std::vector<std::pair<bool, std::string>> found_userns(std::size(kItems), {false, ""});
        run_probe(sandbox_mode::user_namespace, &found_userns, &why_userns);
        if (why_userns.empty()) {
            *mode = sandbox_mode::user_namespace;
            found = found_userns;
            why.clear();
        } else {
            why = (why.empty() ? std::string("not root") : "as root: " + why) + "; in a user namespace: " + why_userns;
        }
    }
    rep.user_namespace = *mode == sandbox_mode::user_namespace;
    rep.isolated = why.empty();
    int missing = 0;
    for (size_t i = 0; i < std::size(kItems); i++) {
        sandbox_guarantee g;
        g.name = kItems[i].name;
        g.required = kItems[i].required;
        g.held = why.empty() && found[i].first;
        g.detail = why.empty() ? std::string(kItems[i].what) + ": " + found[i].second : why;
        if (g.name == "cgroup" && g.held) g.detail += "; " + cgroup_support().detail;
        if (g.name == "cgroup" && !g.held)
            g.detail = fmt::format(
                "{}; weaker limits instead: memory (RLIMIT_AS) and CPU time (RLIMIT_CPU) per process, the process "
                "count per uid (RLIMIT_NPROC)",
                cgroup_support().available ? found[i].second : cgroup_support().detail);
        if (g.required && !g.held) {
            rep.isolated = false;
            missing++;
        }
        rep.items.push_back(g);
    }
    if (rep.isolated) {
        rep.summary =
            fmt::format("isolated{}: PID/mount/network namespaces, minimal read-only root, seccomp, {}",
                        rep.user_namespace ? " in a user namespace (not root)" : "",
                        rep.items[6].held ? "cgroup limits (" + cgroup_support().version + ")" : "rlimits (no cgroup)");
    } else {
        rep.summary = why.empty() ? fmt::format("not isolated: {} required guarantee(s) missing", missing)
                                  : "not isolated: " + why;
    }
    return rep;
}

}  // namespace trex::eval::detail
