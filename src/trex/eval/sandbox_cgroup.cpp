#include "trex/eval/sandbox_cgroup.hpp"

#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "trex/base/timer.hpp"

namespace trex::eval {

namespace fs = std::filesystem;

namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

bool write_text(const std::string& path, const std::string& text, std::string* error = nullptr) {
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) {
        if (error) *error = fmt::format("{}: {}", path, std::strerror(errno));
        return false;
    }
    const bool ok = std::fputs(text.c_str(), f) >= 0;
    const int e = errno;
    const bool closed = std::fclose(f) == 0;
    if ((!ok || !closed) && error)
        *error = fmt::format("write '{}' to {}: {}", text, path, std::strerror(ok ? errno : e));
    return ok && closed;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == sep) {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

bool has_token(const std::string& list, const std::string& token, char sep) {
    for (const auto& t : split(list, sep))
        if (t == token) return true;
    return false;
}

// A number after `key` in a "key value" per line file (memory.events, memory.oom_control); -1 when absent.
long keyed_value(const std::string& text, const std::string& key) {
    std::istringstream in(text);
    std::string k;
    long v = 0;
    while (in >> k >> v)
        if (k == key) return v;
    return -1;
}

// This process's cgroup directory in the hierarchy mounted with fstype / controller ("" for v2).
std::string own_cgroup_dir(const std::string& fstype, const std::string& controller) {
    std::ifstream mi("/proc/self/mountinfo");
    std::string line, mount_root, mount_point;
    while (std::getline(mi, line)) {
        const size_t dash = line.find(" - ");
        if (dash == std::string::npos) continue;
        std::istringstream left(line.substr(0, dash)), right(line.substr(dash + 3));
        std::string id, parent, devno, root, point, type, source, super;
        left >> id >> parent >> devno >> root >> point;
        right >> type >> source >> super;
        if (type != fstype) continue;
        if (!controller.empty() && !has_token(super, controller, ',')) continue;
        mount_root = root;
        mount_point = point;
        break;
    }
    if (mount_point.empty()) return "";
    std::ifstream cg("/proc/self/cgroup");
    while (std::getline(cg, line)) {
        const auto parts = split(line, ':');
        if (parts.size() < 3) continue;
        const bool match =
            controller.empty() ? (parts[0] == "0" && parts[1].empty()) : has_token(parts[1], controller, ',');
        if (!match) continue;
        std::string path = line.substr(parts[0].size() + parts[1].size() + 2);
        if (mount_root != "/" && path.rfind(mount_root, 0) == 0) path = path.substr(mount_root.size());
        return (fs::path(mount_point) / fs::path(path).relative_path()).lexically_normal().string();
    }
    return "";
}

// Removes cgroups left by trex processes that died (their names carry the pid).
void remove_stale(const std::string& dir) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string n = e.path().filename().string();
        if (n.rfind("trex-", 0) != 0 || !e.is_directory(ec)) continue;
        const long pid = std::strtol(n.c_str() + 5, nullptr, 10);
        if (pid > 0 && ::kill((pid_t)pid, 0) != 0 && errno == ESRCH) ::rmdir(e.path().c_str());
    }
}

struct support_state {
    cgroup_support_info info;
    std::vector<std::string> parents;      // v2: one; v1: memory, pids
    std::vector<std::string> cpu_parents;  // v1: cpu, cpuacct (one when mounted together); none when absent
    bool v2_cpu = false;                   // v2: the cpu controller is delegated too
};

// The controllers a v2 cgroup file lists ("memory pids cpu ...", first line).
bool lists(const std::string& file, const char* controller) {
    const std::string t = read_text(file);
    return has_token(t.substr(0, t.find('\n')), controller, ' ');
}

// Where v2 program cgroups can be made: this process's cgroup when memory and pids can be enabled for its children,
// else (a cgroup with processes of its own cannot delegate: the "no internal processes" rule) its parent, whose
// children already have them — the program cgroups are then siblings of ours. "" with *why when neither.
std::string v2_parent(const std::string& own, bool* cpu, std::string* why) {
    if (!lists(own + "/cgroup.controllers", "memory") || !lists(own + "/cgroup.controllers", "pids")) {
        *why = fmt::format("cgroup v2 at {} has no memory/pids controllers", own);
        return "";
    }
    const std::string sub = own + "/cgroup.subtree_control";
    std::string err;
    if (!lists(sub, "memory") || !lists(sub, "pids")) write_text(sub, "+memory +pids", &err);
    if (lists(sub, "memory") && lists(sub, "pids")) {
        if (lists(own + "/cgroup.controllers", "cpu") && !lists(sub, "cpu")) write_text(sub, "+cpu");
        *cpu = lists(sub, "cpu");
        return own;
    }
    const std::string parent = fs::path(own).parent_path().string();
    const std::string probe = fmt::format("{}/trex-{}-probe", parent, ::getpid());
    if (::mkdir(probe.c_str(), 0755) == 0) {
        ::rmdir(probe.c_str());
        *cpu = lists(own + "/cgroup.controllers", "cpu");
        return parent;
    }
    *why = fmt::format("cgroup v2 at {}: memory and pids cannot be delegated ({}), nor cgroups made beside it", own,
                       err.empty() ? "subtree_control unchanged" : err);
    return "";
}

support_state probe() {
    support_state s;
    std::string why;
    const std::string own = own_cgroup_dir("cgroup2", "");
    if (!own.empty()) {
        const std::string parent = v2_parent(own, &s.v2_cpu, &why);
        if (!parent.empty()) {
            s.info.available = true;
            s.info.version = "v2";
            s.info.detail = "cgroup v2 under " + parent;
            s.parents = {parent};
        }
    }
    if (!s.info.available) {
        const std::string mem = own_cgroup_dir("cgroup", "memory"), pids = own_cgroup_dir("cgroup", "pids");
        if (!mem.empty() && !pids.empty()) {
            s.info.available = true;
            s.info.version = "v1";
            s.info.detail = fmt::format("cgroup v1 under {} and {}", mem, pids);
            s.parents = {mem, pids};
            for (const char* c : {"cpu", "cpuacct"}) {
                const std::string d = own_cgroup_dir("cgroup", c);
                if (!d.empty() && std::find(s.cpu_parents.begin(), s.cpu_parents.end(), d) == s.cpu_parents.end() &&
                    std::find(s.parents.begin(), s.parents.end(), d) == s.parents.end())
                    s.cpu_parents.push_back(d);
            }
        } else if (why.empty()) {
            why = "no cgroup hierarchy with the memory and pids controllers";
        }
    }
    if (s.info.available) {
        // a real child cgroup, made and removed: permission to write there is what matters
        const std::string name = fmt::format("trex-{}-probe", ::getpid());
        for (const auto& p : s.parents) {
            remove_stale(p);
            const std::string d = p + "/" + name;
            if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) {
                why = fmt::format("cannot make a cgroup under {}: {}", p, std::strerror(errno));
                s.info.available = false;
            }
            ::rmdir(d.c_str());
        }
        if (!s.info.available) {
            s.parents.clear();
            s.info.version.clear();
        }
        // CPU accounting and a fair share are a bonus: dropped where they cannot be made
        for (auto it = s.cpu_parents.begin(); it != s.cpu_parents.end();) {
            remove_stale(*it);
            const std::string d = *it + "/" + name;
            const bool ok = ::mkdir(d.c_str(), 0755) == 0 || errno == EEXIST;
            ::rmdir(d.c_str());
            it = ok ? std::next(it) : s.cpu_parents.erase(it);
        }
        s.info.cpu_accounting = s.info.available && (s.v2_cpu || !s.cpu_parents.empty());
        if (s.info.cpu_accounting) s.info.detail += ", with CPU accounting";
    }
    if (!s.info.available) s.info.detail = why;
    return s;
}

const support_state& state() {
    static std::once_flag once;
    static support_state s;
    std::call_once(once, [] { s = probe(); });
    return s;
}

}  // namespace

const cgroup_support_info& cgroup_support() {
    return state().info;
}

// Writes the limits into freshly made cgroup directories (v2: one; v1: memory, pids); "" or what failed.
static std::string write_limits(const std::string& version, const std::vector<std::string>& dirs, long memory_bytes,
                                long max_pids) {
    std::string err;
    const std::string mem = std::to_string(memory_bytes), pids = std::to_string(max_pids);
    if (version == "v2") {
        const std::string& d = dirs[0];
        if (!write_text(d + "/memory.max", mem, &err) || !write_text(d + "/pids.max", pids, &err)) return err;
        if (fs::exists(d + "/memory.swap.max") && !write_text(d + "/memory.swap.max", "0", &err)) return err;
        return "";
    }
    const std::string& m = dirs[0];
    if (!write_text(m + "/memory.limit_in_bytes", mem, &err)) return err;
    // swap too, where swap is accounted: the limit is on memory + swap
    if (fs::exists(m + "/memory.memsw.limit_in_bytes") && !write_text(m + "/memory.memsw.limit_in_bytes", mem, &err))
        return err;
    if (!write_text(dirs[1] + "/pids.max", pids, &err)) return err;
    return "";
}

program_cgroup::program_cgroup(const std::string& name, long memory_bytes, long max_pids) {
    const support_state& s = state();
    if (!s.info.available) {
        error_ = s.info.detail;
        return;
    }
    std::vector<std::string> made;
    for (const auto& p : s.parents) {
        const std::string d = p + "/" + name;
        if (::mkdir(d.c_str(), 0755) != 0) {
            error_ = fmt::format("mkdir {}: {}", d, std::strerror(errno));
            break;
        }
        made.push_back(d);
    }
    if (error_.empty()) error_ = write_limits(s.info.version, made, memory_bytes, max_pids);
    if (!error_.empty()) {
        for (auto it = made.rbegin(); it != made.rend(); ++it) ::rmdir(it->c_str());
        return;
    }
    version_ = s.info.version;
    if (version_ == "v2" && s.v2_cpu) cpu_usage_ = made[0] + "/cpu.stat";
    for (const auto& p : s.cpu_parents) {
        const std::string d = p + "/" + name;
        if (::mkdir(d.c_str(), 0755) != 0) continue;
        made.push_back(d);
        if (fs::exists(d + "/cpuacct.usage")) cpu_usage_ = d + "/cpuacct.usage";
    }
    dirs_ = made;
    for (const auto& d : dirs_) procs_.push_back(d + "/cgroup.procs");
}

program_cgroup::~program_cgroup() {
    remove();
}

program_cgroup::program_cgroup(program_cgroup&& o) noexcept
    : dirs_(std::move(o.dirs_)),
      procs_(std::move(o.procs_)),
      version_(std::move(o.version_)),
      error_(std::move(o.error_)),
      cpu_usage_(std::move(o.cpu_usage_)) {
    o.dirs_.clear();
    o.procs_.clear();
}

program_cgroup& program_cgroup::operator=(program_cgroup&& o) noexcept {
    if (this != &o) {
        remove();
        dirs_ = std::move(o.dirs_);
        procs_ = std::move(o.procs_);
        version_ = std::move(o.version_);
        error_ = std::move(o.error_);
        cpu_usage_ = std::move(o.cpu_usage_);
        o.dirs_.clear();
        o.procs_.clear();
    }
    return *this;
}

bool program_cgroup::add(pid_t pid) {
    bool ok = !procs_.empty();
    for (const auto& p : procs_) ok = write_text(p, std::to_string(pid)) && ok;
    return ok;
}

bool program_cgroup::kill_all() {
    if (dirs_.empty()) return true;
    if (version_ == "v2" && fs::exists(dirs_[0] + "/cgroup.kill")) write_text(dirs_[0] + "/cgroup.kill", "1");
    const double t0 = now_seconds();
    while (true) {
        bool empty = true;
        for (const auto& p : procs_) {
            std::istringstream in(read_text(p));
            long pid = 0;
            while (in >> pid) {
                empty = false;
                ::kill((pid_t)pid, SIGKILL);
            }
        }
        if (empty) return true;
        if (now_seconds() - t0 > 2.0) return false;
        ::usleep(2000);
    }
}

double program_cgroup::cpu_seconds() const {
    if (cpu_usage_.empty()) return -1;
    const std::string t = read_text(cpu_usage_);
    if (version_ == "v2") {
        const long us = keyed_value(t, "usage_usec");
        return us < 0 ? -1 : (double)us * 1e-6;
    }
    return t.empty() ? -1 : (double)std::strtoll(t.c_str(), nullptr, 10) * 1e-9;
}

double program_cgroup::peak_memory_mb() const {
    if (dirs_.empty()) return -1;
    const std::string f = dirs_[0] + (version_ == "v2" ? "/memory.peak" : "/memory.max_usage_in_bytes");
    const std::string t = read_text(f);
    if (t.empty()) return -1;
    return (double)std::strtoll(t.c_str(), nullptr, 10) / (1024.0 * 1024.0);
}

bool program_cgroup::memory_limit_hit() const {
    if (dirs_.empty()) return false;
    if (version_ == "v2") {
        const std::string ev = read_text(dirs_[0] + "/memory.events");
        return keyed_value(ev, "oom_kill") > 0 || keyed_value(ev, "oom") > 0;
    }
    return keyed_value(read_text(dirs_[0] + "/memory.oom_control"), "oom_kill") > 0;
}

void program_cgroup::remove() {
    if (dirs_.empty()) return;
    kill_all();
    for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) {
        // an exiting process can keep the cgroup busy for a moment
        for (int k = 0; k < 200 && ::rmdir(it->c_str()) != 0 && errno == EBUSY; k++) ::usleep(5000);
    }
    dirs_.clear();
    procs_.clear();
}

}  // namespace trex::eval
