#include "trex/optmodel/solvers/python_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "trex/base/error.hpp"

namespace trex::optmodel {

namespace {

// The worker: one JSON request per line on stdin, one JSON reply per line on stdout.
const char* worker_script = R"PY(
import contextlib, io, json, os, signal, sys, traceback
try:
    import pulp
except Exception:
    pass
class Timeout(Exception):
    pass
def on_alarm(signum, frame):
    raise Timeout("time limit exceeded")
signal.signal(signal.SIGALRM, on_alarm)
out = sys.stdout
sys.stdout = sys.stderr
for line in sys.stdin:
    req = json.loads(line)
    buf = io.StringIO()
    ok, err = True, ""
    cwd = os.getcwd()
    try:
        os.chdir(os.path.dirname(req["path"]) or ".")
        with open(req["path"]) as f:
            src = f.read()
        signal.setitimer(signal.ITIMER_REAL, req["limit"])
        with contextlib.redirect_stdout(buf):
            exec(compile(src, req["path"], "exec"), {"__name__": "__main__"})
    except BaseException as e:
        ok, err = False, "".join(traceback.format_exception_only(type(e), e)).strip()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        os.chdir(cwd)
    out.write(json.dumps({"ok": ok, "output": buf.getvalue(), "error": err}) + "\n")
    out.flush()
)PY";

bool write_all(int fd, const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
        ssize_t w = ::write(fd, s.data() + off, s.size() - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        off += (size_t)w;
    }
    return true;
}

}  // namespace

std::string find_python_with_pulp() {
    std::vector<std::string> cands;
    if (const char* p = std::getenv("TREX_PYTHON"); p && *p) cands.push_back(p);
    cands.push_back(std::string(TREX_SOURCE_DIR) + "/.venv/bin/python");
    for (const auto& c : cands) {
        std::error_code ec;
        if (!std::filesystem::exists(c, ec)) continue;
        const std::string cmd = "'" + c + "' -c 'import pulp' >/dev/null 2>&1";
        if (std::system(cmd.c_str()) == 0) return c;
    }
    return "";
}

python_runner::python_runner(const std::string& python) : python_(python) { start(); }

python_runner::~python_runner() { stop(); }

void python_runner::start() {
    int in_pipe[2], out_pipe[2];
    TREX_CHECK(::pipe2(in_pipe, O_CLOEXEC) == 0 && ::pipe2(out_pipe, O_CLOEXEC) == 0, "cannot create pipes for {}",
               python_);
    pid_ = ::fork();
    TREX_CHECK(pid_ >= 0, "cannot fork for {}", python_);
    if (pid_ == 0) {
        ::dup2(in_pipe[0], 0);
        ::dup2(out_pipe[1], 1);
        const int devnull = ::open("/dev/null", O_WRONLY);
        if (devnull >= 0) ::dup2(devnull, 2);  // program stderr (and CBC noise) is not ours to show
        ::execl(python_.c_str(), python_.c_str(), "-u", "-c", worker_script, (char*)nullptr);
        ::_exit(127);
    }
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    to_child_ = in_pipe[1];
    from_child_ = out_pipe[0];
    buffer_.clear();
}

void python_runner::stop() {
    if (pid_ <= 0) return;
    ::close(to_child_);
    ::close(from_child_);
    int status;
    if (::waitpid(pid_, &status, WNOHANG) == 0) {
        ::kill(pid_, SIGTERM);
        ::waitpid(pid_, &status, 0);
    }
    pid_ = -1;
}

python_result python_runner::run(const std::string& path, double time_limit_s) {
    python_result r;
    if (pid_ <= 0) start();
    nlohmann::json req = {{"path", std::filesystem::absolute(path).string()}, {"limit", time_limit_s}};
    const struct sigaction ign = [] {
        struct sigaction s {};
        s.sa_handler = SIG_IGN;
        return s;
    }();
    struct sigaction old {};
    ::sigaction(SIGPIPE, &ign, &old);
    const bool sent = write_all(to_child_, req.dump() + "\n");
    ::sigaction(SIGPIPE, &old, nullptr);
    std::string line;
    if (sent) {
        while (true) {
            size_t nl = buffer_.find('\n');
            if (nl != std::string::npos) {
                line = buffer_.substr(0, nl);
                buffer_.erase(0, nl + 1);
                break;
            }
            char buf[65536];
            ssize_t n = ::read(from_child_, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            buffer_.append(buf, (size_t)n);
        }
    }
    if (line.empty()) {  // the worker died (e.g. a program called os._exit): restart it for the next call
        stop();
        r.error = "python worker exited";
        return r;
    }
    try {
        auto j = nlohmann::json::parse(line);
        r.ok = j.at("ok").get<bool>();
        r.output = j.at("output").get<std::string>();
        r.error = j.at("error").get<std::string>();
    } catch (const std::exception& e) {
        r.error = std::string("bad reply from python worker: ") + e.what();
    }
    return r;
}

bool parse_program_output(const std::string& out, std::string* status, double* objective, bool* has_objective) {
    bool have_status = false;
    *has_objective = false;
    size_t b = 0;
    while (b < out.size()) {
        size_t e = out.find('\n', b);
        if (e == std::string::npos) e = out.size();
        std::string line = out.substr(b, e - b);
        b = e + 1;
        if (line.rfind("Status:", 0) == 0) {
            std::string s = line.substr(7);
            while (!s.empty() && s.front() == ' ') s.erase(0, 1);
            while (!s.empty() && std::isspace((unsigned char)s.back())) s.pop_back();
            for (char& c : s) c = (char)std::tolower((unsigned char)c);
            *status = s;
            have_status = true;
        } else if (line.rfind("Optimal objective:", 0) == 0) {
            char* end = nullptr;
            const char* p = line.c_str() + 18;
            double v = std::strtod(p, &end);
            if (end != p) {
                *objective = v;
                *has_objective = true;
            }
        }
    }
    return have_status;
}

}  // namespace trex::optmodel
