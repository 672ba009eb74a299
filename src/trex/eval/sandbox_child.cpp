// The child side of the sandbox: from the clone to the exec. System calls only (see sandbox_internal.hpp).
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "trex/eval/sandbox_internal.hpp"

namespace trex::eval::detail {

// ---- helpers (async-signal-safe) ----

void line_buf::add(const char* s) {
    while (*s && n < (int)sizeof data - 1) data[n++] = *s++;
}

void line_buf::add_long(long v) {
    char tmp[24];
    int k = 0;
    const bool neg = v < 0;
    unsigned long u = neg ? 0ul - (unsigned long)v : (unsigned long)v;
    do {
        tmp[k++] = (char)('0' + u % 10);
        u /= 10;
    } while (u && k < 22);
    if (neg) tmp[k++] = '-';
    while (k > 0 && n < (int)sizeof data - 1) data[n++] = tmp[--k];
}

void line_buf::flush(int fd) {
    int off = 0;
    while (off < n) {
        const ssize_t w = ::write(fd, data + off, (size_t)(n - off));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        off += (int)w;
    }
    n = 0;
}

void child_fail(const char* what) {
    const int e = errno;
    line_buf b;
    b.add("trex sandbox: ");
    b.add(what);
    b.add(": ");
    const char* name = strerrorname_np(e);
    b.add(name ? name : "errno ");
    if (!name) b.add_long(e);
    b.add("\n");
    b.flush(2);
    _exit(125);
}

namespace {

void must(bool ok, const char* what) {
    if (!ok) child_fail(what);
}

void write_all(int fd, const std::string& c, const char* what) {
    size_t off = 0;
    while (off < c.size()) {
        const ssize_t w = ::write(fd, c.data() + off, c.size() - off);
        if (w < 0 && errno == EINTR) continue;
        must(w > 0, what);
        off += (size_t)w;
    }
}

void reset_signals() {
    for (int s = 1; s < 65; s++)
        if (s != SIGKILL && s != SIGSTOP) ::signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

void wait_for_start() {
    char c = 0;
    ssize_t r;
    while ((r = ::read(kStartFd, &c, 1)) < 0 && errno == EINTR) {
    }
    if (r != 1) _exit(125);  // the harness went away before starting us
    ::close(kStartFd);
}

// A user namespace's first act: the invoking user's ids mapped onto themselves (setgroups denied first, as the
// kernel requires of an unprivileged gid_map).
void write_id_maps(const prepared& p) {
    const std::pair<const char*, const std::string*> files[] = {
        {"/proc/self/setgroups", nullptr}, {"/proc/self/uid_map", &p.uid_map}, {"/proc/self/gid_map", &p.gid_map}};
    for (const auto& [path, text] : files) {
        const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
        must(fd >= 0, "open a user namespace map");
        if (text)
            write_all(fd, *text, "write a user namespace map");
        else
            must(::write(fd, "deny", 4) == 4, "deny setgroups in the user namespace");
        ::close(fd);
    }
}

void set_limits(const prepared& p) {
    must(::setrlimit(RLIMIT_CPU, &p.cpu) == 0, "setrlimit CPU");
    must(::setrlimit(RLIMIT_AS, &p.as) == 0, "setrlimit AS");
    must(::setrlimit(RLIMIT_FSIZE, &p.fsize) == 0, "setrlimit FSIZE");
    if (p.set_nproc) must(::setrlimit(RLIMIT_NPROC, &p.nproc) == 0, "setrlimit NPROC");
    must(::setrlimit(RLIMIT_NOFILE, &p.nofile) == 0, "setrlimit NOFILE");
    must(::setrlimit(RLIMIT_CORE, &p.core) == 0, "setrlimit CORE");
}

// Clones of the exposed directories' mount trees, read-only, taken before the stage hides anything.
void clone_exposed(const prepared& p, int* fds) {
    for (size_t i = 0; i < p.expose_src.size(); i++) {
        fds[i] = (int)::syscall(SYS_open_tree, AT_FDCWD, p.expose_src[i].c_str(),
                                OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (p.expose_is_file[i] ? 0 : AT_RECURSIVE));
        must(fds[i] >= 0, "clone the mount tree of an exposed directory (open_tree)");
        struct mount_attr ro {};
        ro.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | (p.expose_is_file[i] == 2 ? 0 : MOUNT_ATTR_NODEV);
        must(::syscall(SYS_mount_setattr, fds[i], "", AT_EMPTY_PATH | (p.expose_is_file[i] ? 0 : AT_RECURSIVE), &ro,
                       sizeof ro) == 0,
             "make an exposed directory read-only (mount_setattr)");
    }
}

void make_files(const prepared& p) {
    must(::mkdir(kWork, 0700) == 0, "mkdir /tmp/work");
    must(::chown(kWork, p.uid, p.gid) == 0, "chown /tmp/work");
    for (size_t i = 0; i < p.file_paths.size(); i++) {
        const int fd = ::open(p.file_paths[i].c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        must(fd >= 0, "create a file in /tmp/work");
        write_all(fd, p.file_contents[i], "write a file in /tmp/work");
        must(::fchown(fd, p.uid, p.gid) == 0, "chown a file in /tmp/work");
        ::close(fd);
    }
}

// The new root on the stage: tmpfs, /dev, /tmp, directories and symlinks, the exposed trees, /proc; then pivot.
void build_root(const prepared& p) {
    int fds[64];
    must(p.expose_src.size() <= 64, "too many exposed directories");
    must(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0, "make mounts private");
    clone_exposed(p, fds);
    const char *dev = p.stage_dev.c_str(), *shm = p.stage_shm.c_str(), *tmp = p.stage_tmp.c_str(),
               *proc = p.stage_proc.c_str();
    must(::mount("tmpfs", kStage, "tmpfs", MS_NOSUID | MS_NODEV, p.root_opts.c_str()) == 0, "mount the root tmpfs");
    for (const char* d : {dev, tmp, proc}) must(::mkdir(d, 0755) == 0, "mkdir in the new root");
    must(::mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, p.dev_opts.c_str()) == 0, "mount /dev");
    must(::mkdir(shm, 01777) == 0, "mkdir /dev/shm");
    must(::mount("tmpfs", shm, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, p.shm_opts.c_str()) == 0, "mount /dev/shm");
    must(::mount("tmpfs", tmp, "tmpfs", MS_NOSUID | MS_NODEV, p.tmp_opts.c_str()) == 0, "mount /tmp");
    for (const auto& d : p.mkdirs) must(::mkdir(d.c_str(), 0755) == 0 || errno == EEXIST, "mkdir in the new root");
    for (size_t i = 0; i < p.link_path.size(); i++)
        must(::symlink(p.link_target[i].c_str(), p.link_path[i].c_str()) == 0, "symlink in the new root");
    for (size_t i = 0; i < p.dev_nodes.size(); i++)
        must(::mknod(p.dev_nodes[i].c_str(), S_IFCHR | 0666, p.dev_numbers[i]) == 0 &&
                 ::chmod(p.dev_nodes[i].c_str(), 0666) == 0,
             "make a device node in /dev");
    for (size_t i = 0; i < p.expose_src.size(); i++) {
        if (p.expose_is_file[i]) {
            const int fd = ::open(p.expose_dst[i].c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            must(fd >= 0, "create the mount point of an exposed file");
            ::close(fd);
        }
        must(::syscall(SYS_move_mount, fds[i], "", AT_FDCWD, p.expose_dst[i].c_str(), MOVE_MOUNT_F_EMPTY_PATH) == 0,
             "attach an exposed directory (move_mount)");
        ::close(fds[i]);
    }
    must(::mount(nullptr, dev, nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC, nullptr) == 0,
         "make /dev read-only");
    must(::mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0, "mount /proc");
    must(::chdir(kStage) == 0, "chdir to the new root");
    must(::syscall(SYS_pivot_root, ".", ".") == 0, "pivot_root");
    must(::umount2(".", MNT_DETACH) == 0, "detach the host's root");
    must(::chdir("/") == 0, "chdir /");
    must(::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr) == 0,
         "make the root read-only");
    make_files(p);
}

void loopback_up() {
    const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    must(s >= 0, "socket for the loopback interface");
    ifreq ifr{};
    std::memcpy(ifr.ifr_name, "lo", 3);
    must(::ioctl(s, SIOCGIFFLAGS, &ifr) == 0, "read the loopback flags");
    ifr.ifr_flags = (short)(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
    must(::ioctl(s, SIOCSIFFLAGS, &ifr) == 0, "bring the loopback up");
    ::close(s);
}

// Empty bounding and ambient sets, the sandbox uid (as root: dropping the permitted and effective sets, no
// SECBIT_KEEP_CAPS), then every set cleared. Raw system calls: glibc's set*id wrappers signal the parent's threads,
// which the child does not have.
void drop_privileges(const prepared& p) {
    for (int cap = 0; cap <= 63; cap++) {
        if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) child_fail("drop a capability");
    }
    ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    if (!p.userns) must(::syscall(SYS_setgroups, 0, nullptr) == 0, "setgroups");
    must(::syscall(SYS_setresgid, p.gid, p.gid, p.gid) == 0, "setresgid");
    must(::syscall(SYS_setresuid, p.uid, p.uid, p.uid) == 0, "setresuid");
    // in a user namespace the ids do not change, so the capabilities have to be cleared by hand
    __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct none[2] = {};
    must(::syscall(SYS_capset, &hdr, none) == 0, "clear the capabilities");
    must(::prctl(PR_SET_PDEATHSIG, SIGKILL) == 0, "set the parent-death signal");  // cleared by setresuid
}

}  // namespace

void child_main(const prepared& p) {
    reset_signals();
    ::syscall(SYS_close_range, 5u, ~0u, 0u);
    wait_for_start();
    if (p.userns) write_id_maps(p);
    if (p.isolated) {
        build_root(p);
        loopback_up();
        must(::sethostname(p.hostname.data(), p.hostname.size()) == 0, "sethostname");
        set_limits(p);
        drop_privileges(p);
        must(::chdir(kWork) == 0, "chdir /tmp/work");
        must(::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "no_new_privs");
        must(::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, p.filter) == 0, "install the seccomp filter");
    } else {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        set_limits(p);
        ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        must(::chdir(p.workdir.c_str()) == 0, "chdir to the working directory");
    }
    if (p.probe) probe_main(p);
    ::execve(p.argv[0], p.argv.data(), p.envp.data());
    child_fail("exec");
}

// ---- the seccomp program (built in the harness) ----

namespace {

constexpr uint64_t kNamespaceFlags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
                                     CLONE_NEWUTS | CLONE_NEWCGROUP | 0x00000080 /* CLONE_NEWTIME */;

// Denied with EPERM: what builds or joins namespaces, mounts, inspects other processes, or reaches the kernel's
// larger attack surfaces. io_uring and clone3 answer ENOSYS so that libraries fall back (glibc retries clone3 as
// clone, whose flags the filter can see).
const char* const kDenied[] = {"mount",
                               "umount2",
                               "pivot_root",
                               "chroot",
                               "unshare",
                               "setns",
                               "fsopen",
                               "fsconfig",
                               "fsmount",
                               "fspick",
                               "move_mount",
                               "open_tree",
                               "mount_setattr",
                               "ptrace",
                               "process_vm_readv",
                               "process_vm_writev",
                               "kcmp",
                               "bpf",
                               "keyctl",
                               "add_key",
                               "request_key",
                               "perf_event_open",
                               "userfaultfd",
                               "kexec_load",
                               "kexec_file_load",
                               "init_module",
                               "finit_module",
                               "delete_module",
                               "open_by_handle_at",
                               "name_to_handle_at",
                               "swapon",
                               "swapoff",
                               "reboot",
                               "syslog",
                               "acct",
                               "quotactl",
                               "iopl",
                               "ioperm",
                               "lookup_dcookie",
                               "vhangup",
                               "pidfd_getfd",
                               "settimeofday",
                               "clock_settime",
                               "clock_adjtime",
                               "adjtimex",
                               "fanotify_init"};
const char* const kNoSys[] = {"clone3", "io_uring_setup", "io_uring_enter", "io_uring_register"};

struct built_filter {
    std::vector<sock_filter> code;
    sock_fprog prog{};
    std::string error;
};

built_filter build_filter() {
    built_filter b;
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        b.error = "seccomp_init failed";
        return b;
    }
    auto fail = [&](const std::string& what, int rc) {
        b.error = fmt::format("{}: {}", what, std::strerror(-rc));
        seccomp_release(ctx);
        return b;
    };
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    if (rc < 0) return fail("seccomp bad-arch action", rc);
    for (const char* name : kDenied) {
        const int nr = seccomp_syscall_resolve_name(name);
        if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
        if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0)) < 0)
            return fail(std::string("deny ") + name, rc);
    }
    for (const char* name : kNoSys) {
        const int nr = seccomp_syscall_resolve_name(name);
        if (nr == __NR_SCMP_ERROR) continue;
        if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0)) < 0)
            return fail(std::string("deny ") + name, rc);
    }
    for (uint64_t bit = 1; bit != 0; bit <<= 1) {
        if (!(kNamespaceFlags & bit)) continue;
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, bit, bit));
        if (rc < 0) return fail("deny clone with namespace flags", rc);
    }
    // TIOCSTI pushes input into a terminal the program may share with the user
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, (uint64_t)TIOCSTI));
    if (rc < 0) return fail("deny TIOCSTI", rc);
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) return fail("pipe for the seccomp program", -errno);
    // the program is small (a few hundred instructions): it fits the pipe's buffer
    rc = seccomp_export_bpf(ctx, pipe_fds[1]);
    ::close(pipe_fds[1]);
    if (rc < 0) {
        ::close(pipe_fds[0]);
        return fail("export the seccomp program", rc);
    }
    std::string bytes;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(pipe_fds[0], buf, sizeof buf)) > 0) bytes.append(buf, (size_t)n);
    ::close(pipe_fds[0]);
    seccomp_release(ctx);
    if (bytes.empty() || bytes.size() % sizeof(sock_filter) != 0) {
        b.error = "the exported seccomp program is malformed";
        return b;
    }
    b.code.resize(bytes.size() / sizeof(sock_filter));
    std::memcpy(b.code.data(), bytes.data(), bytes.size());
    b.prog.len = (unsigned short)b.code.size();
    b.prog.filter = b.code.data();
    return b;
}

}  // namespace

const sock_fprog* seccomp_program(std::string* error) {
    static std::once_flag once;
    static built_filter b;
    std::call_once(once, [] {
        b = build_filter();
        b.prog.filter = b.code.data();
    });
    if (!b.error.empty()) {
        *error = b.error;
        return nullptr;
    }
    return &b.prog;
}

}  // namespace trex::eval::detail
