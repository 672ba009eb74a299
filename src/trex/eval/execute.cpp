#include "trex/eval/execute.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>

#include "trex/base/error.hpp"
#include "trex/base/timer.hpp"
#include "trex/base/strings.hpp"
#include "trex/eval/structure.hpp"
#include "trex/optmodel/format.hpp"
#include "trex/optmodel/glpk_io.hpp"
#include "trex/optmodel/python_runner.hpp"
#include "trex/optmodel/solve.hpp"

namespace trex::eval {

namespace fs = std::filesystem;
using namespace trex::optmodel;

namespace {

model read_model_text(const std::string& kind, const std::string& text) {
    if (kind == "lp") return read_lp_text(text, "answer.lp");
    if (kind == "mps") return read_mps_text(text, "answer.mps", mps_format::detect);
    if (kind == "mathprog") return read_mathprog_text(text, "answer.mod");
    throw_error(fmt::format("unknown model format '{}'", kind));
}

solve_result solve_any(const model& m, double time_limit) {
    solve_options so;
    so.time_limit_s = time_limit;
    solve_result r;
    try {
        r = solve_coin(m, so);
    } catch (const std::exception& e) {
        r.status = solve_status::error;
        r.message = e.what();
    }
    if (r.status == solve_status::error) {
        solve_result g = solve_glpk(m, so);
        if (g.status != solve_status::error) return g;
    }
    return r;
}

const char* outcome_status(solve_status s) {
    switch (s) {
        case solve_status::optimal: return "optimal";
        case solve_status::infeasible: return "infeasible";
        case solve_status::unbounded: return "unbounded";
        case solve_status::time_limit: return "timeout";
        case solve_status::error: return "runtime_error";
    }
    return "runtime_error";
}

}  // namespace

ojson execute_model_request(const ojson& req) {
    ojson rep;
    const double t0 = now_seconds();
    try {
        const std::string op = req.at("op").get<std::string>();
        const std::string kind = req.at("format").get<std::string>();
        model m;
        try {
            m = read_model_text(kind, req.at("text").get<std::string>());
            validate(m);
        } catch (const std::exception& e) {
            // GLPK's allocator failing under the worker's memory limit is a resource failure, not a syntax error
            const std::string what = e.what();
            const bool memory = what.find("alloc.c") != std::string::npos || what.find("out of memory") != std::string::npos;
            rep["status"] = memory ? "runtime_error" : "parse_error";
            rep["detail"] = memory ? "memory limit while reading the model (" + what + ")" : what;
            rep["seconds"] = now_seconds() - t0;
            return rep;
        }
        if (op == "solve") {
            const solve_result r = solve_any(m, req.value("time_limit", 30.0));
            rep["status"] = outcome_status(r.status);
            if (r.status == solve_status::optimal) rep["objective"] = r.objective;
            if (r.status == solve_status::time_limit) rep["detail"] = "solver time limit";
            if (r.status == solve_status::error) rep["detail"] = "solver error: " + r.message;
        } else if (op == "structure") {
            model ref;
            try {
                ref = read_lp_text(req.at("reference").get<std::string>(), "reference.lp");
            } catch (const std::exception& e) {
                rep["status"] = "runtime_error";
                rep["detail"] = std::string("reference LP unreadable: ") + e.what();
                return rep;
            }
            structure_options so;
            so.search_budget = req.value("budget", 20000L);
            const structure_result s = compare_structure(m, ref, so);
            rep["status"] = "structure";
            rep["equivalent"] = s.equivalent;
            rep["detail"] = s.detail;
        } else {
            rep["status"] = "runtime_error";
            rep["detail"] = "unknown op " + op;
        }
    } catch (const std::exception& e) {
        rep["status"] = "runtime_error";
        rep["detail"] = e.what();
    }
    rep["seconds"] = now_seconds() - t0;
    return rep;
}

int run_model_worker() {
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        ojson rep;
        try {
            rep = execute_model_request(ojson::parse(line));
        } catch (const std::exception& e) {
            rep = {{"status", "runtime_error"}, {"detail", std::string("bad request: ") + e.what()}};
        }
        std::cout << rep.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n" << std::flush;
    }
    return 0;
}

ojson solve_lp_file_report(const std::string& path, double time_limit_s) {
    ojson rep;
    model m;
    try {
        m = read_lp_file(path);
        validate(m);
    } catch (const std::exception& e) {
        return {{"status", "error"}, {"detail", e.what()}};
    }
    const solve_result r = solve_any(m, time_limit_s);
    rep["status"] = solve_status_name(r.status);
    rep["solver"] = r.solver;
    if (r.status == solve_status::error) rep["detail"] = r.message;
    if (r.status == solve_status::optimal) {
        rep["objective"] = r.objective;
        ojson x = ojson::object(), pi = ojson::object(), rc = ojson::object();
        for (size_t j = 0; j < m.vars.size() && j < r.x.size(); j++) x[m.vars[j].name] = r.x[j];
        if (!m.is_mip()) {
            for (size_t i = 0; i < m.cons.size() && i < r.dual.size(); i++) pi[m.cons[i].name] = r.dual[i];
            for (size_t j = 0; j < m.vars.size() && j < r.reduced_cost.size(); j++) rc[m.vars[j].name] = r.reduced_cost[j];
        }
        rep["x"] = x;
        rep["pi"] = pi;
        rep["rc"] = rc;
    }
    return rep;
}

// ---------------------------------------------------------------------------------------------------------------

exec_config default_exec_config() {
    exec_config c;
    std::error_code ec;
    c.trex_bin = fs::read_symlink("/proc/self/exe", ec).string();
    c.python = find_python_with_pulp();
    c.runner_dir = std::string(TREX_SOURCE_DIR) + "/python/trex_eval";
    return c;
}

namespace {

// Byte-compiles the runner and the gurobipy shim once per process (their __pycache__, git-ignored, next to them):
// answers run with -B and cannot write it, and compiling the shim on every answer costs ~20 ms. Our own code, run
// outside the sandbox; a read-only tree just stays uncompiled.
void compile_runner_once(const exec_config& cfg) {
    static std::once_flag once;
    if (cfg.python.empty() || cfg.runner_dir.empty()) return;
    std::call_once(once, [&] {
        const pid_t pid = ::fork();
        if (pid == 0) {
            const int dn = ::open("/dev/null", O_WRONLY);
            if (dn >= 0) {
                ::dup2(dn, 1);
                ::dup2(dn, 2);
            }
            ::execl(cfg.python.c_str(), cfg.python.c_str(), "-m", "compileall", "-q", cfg.runner_dir.c_str(),
                    (char*)nullptr);
            _exit(127);
        }
        int st = 0;
        if (pid > 0)
            while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
            }
    });
}

}  // namespace

executor::executor(const exec_config& cfg, int slot) : cfg_(cfg), slot_(slot) { compile_runner_once(cfg_); }

executor::~executor() { stop_sandboxed(worker_); }

namespace {

std::vector<std::string> base_env() {
    std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp/work", "TMPDIR=/tmp",
                                    "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "OMP_NUM_THREADS=1",
                                    "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1"};
    // the machine's OpenBLAS settings (older OpenBLAS builds crash on this CPU without them)
    for (const char* k : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"})
        if (const char* v = std::getenv(k)) env.push_back(fmt::format("{}={}", k, v));
    return env;
}

}  // namespace

ojson executor::call_worker(const ojson& req, double timeout_s) {
    if (worker_.pid <= 0) {
        sandbox_spec spec;
        spec.argv = {cfg_.trex_bin, "eval", "_worker"};
        spec.env = base_env();
        spec.expose = {fs::path(cfg_.trex_bin).parent_path().string()};
        spec.limits = cfg_.limits;
        spec.limits.cpu_s = 1e6;  // cumulative over the worker's life: the per-request wall clock bounds it
        spec.limits.nproc = 16;
        spec.allow_unisolated = cfg_.allow_unisolated;
        std::string err;
        worker_ = start_sandboxed(spec, 32 + slot_, &err);
        buf_.clear();
        if (worker_.pid <= 0) return {{"status", "runtime_error"}, {"detail", "cannot start the solve worker: " + err}};
    }
    const std::string line = req.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    struct sigaction ign {}, old {};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ign, &old);
    size_t off = 0;
    bool ok = true;
    while (off < line.size()) {
        const ssize_t w = ::write(worker_.in, line.data() + off, line.size() - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            ok = false;
            break;
        }
        off += (size_t)w;
    }
    ::sigaction(SIGPIPE, &old, nullptr);
    const double deadline = now_seconds() + timeout_s;
    std::string err_text;
    while (ok) {
        const size_t nl = buf_.find('\n');
        if (nl != std::string::npos) {
            std::string l = buf_.substr(0, nl);
            buf_.erase(0, nl + 1);
            try {
                return ojson::parse(l);
            } catch (const std::exception&) {
                return {{"status", "runtime_error"}, {"detail", "bad reply from the solve worker"}};
            }
        }
        const double left = deadline - now_seconds();
        if (left <= 0) {
            stop_sandboxed(worker_);
            return {{"status", "timeout"}, {"detail", fmt::format("no result within {:.0f} s (worker restarted)", timeout_s)}};
        }
        pollfd pf[2] = {{worker_.out, POLLIN, 0}, {worker_.err, POLLIN, 0}};
        const int pr = ::poll(pf, 2, (int)std::min(left * 1000.0 + 1, 500.0));
        if (pr < 0 && errno == EINTR) continue;
        if (pf[1].revents & POLLIN) {
            char b[4096];
            const ssize_t n = ::read(worker_.err, b, sizeof b);
            if (n > 0) err_text.append(b, (size_t)n);
        }
        if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            char b[65536];
            const ssize_t n = ::read(worker_.out, b, sizeof b);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            buf_.append(b, (size_t)n);
        }
    }
    // the worker died: collect its stderr, report and restart next time
    int st = 0;
    const pid_t pid = worker_.pid;
    ::waitpid(pid, &st, 0);
    char b[4096];
    ssize_t n;
    while ((n = ::read(worker_.err, b, sizeof b)) > 0) err_text.append(b, (size_t)n);
    worker_.pid = -1;
    stop_sandboxed(worker_);
    std::string why = "solve worker died";
    if (WIFEXITED(st) && WEXITSTATUS(st) > 128) why += fmt::format(" (signal {})", WEXITSTATUS(st) - 128);
    if (!err_text.empty()) {
        while (!err_text.empty() && std::isspace((unsigned char)err_text.back())) err_text.pop_back();
        const size_t p = err_text.rfind('\n');
        why += ": " + err_text.substr(p == std::string::npos ? 0 : p + 1);
    }
    return {{"status", "runtime_error"}, {"detail", why}};
}

namespace {

exec_outcome outcome_from_reply(const std::string& kind, const ojson& rep) {
    exec_outcome o;
    o.artefact = kind;
    o.status = rep.value("status", "runtime_error");
    o.detail = rep.value("detail", "");
    o.seconds = rep.value("seconds", 0.0);
    if (rep.contains("objective") && rep["objective"].is_number()) {
        o.has_objective = true;
        o.objective = rep["objective"].get<double>();
        o.source = "solver";
    }
    o.equivalent = rep.value("equivalent", false);
    return o;
}

}  // namespace

exec_outcome executor::run_model(const std::string& kind, const std::string& text) {
    const double t0 = now_seconds();
    ojson req = {{"op", "solve"}, {"format", kind}, {"text", text}, {"time_limit", cfg_.solve_time_limit_s}};
    exec_outcome o = outcome_from_reply(kind, call_worker(req, cfg_.solve_time_limit_s + 10));
    o.seconds = now_seconds() - t0;
    return o;
}

exec_outcome executor::compare_model(const std::string& kind, const std::string& text, const std::string& reference_lp) {
    const double t0 = now_seconds();
    ojson req = {{"op", "structure"}, {"format", kind}, {"text", text}, {"reference", reference_lp}};
    exec_outcome o = outcome_from_reply(kind, call_worker(req, cfg_.solve_time_limit_s + 10));
    o.seconds = now_seconds() - t0;
    return o;
}

exec_outcome executor::run_python(const std::string& code, const std::string& data_json) {
    exec_outcome o;
    o.artefact = "python";
    if (cfg_.python.empty()) {
        o.status = "runtime_error";
        o.detail = "no Python with PuLP to run the program (scripts/setup.sh installs it into .venv; or TREX_PYTHON)";
        return o;
    }
    sandbox_spec spec;
    spec.argv = {cfg_.python, "-B", cfg_.runner_dir + "/trex_runner.py", "answer.py"};
    spec.env = base_env();
    spec.env.push_back("PYTHONDONTWRITEBYTECODE=1");
    spec.env.push_back("PYTHONHASHSEED=0");
    spec.env.push_back("PYTHONPATH=" + cfg_.runner_dir + "/shim");
    spec.env.push_back("MPLBACKEND=Agg");
    spec.env.push_back("TREX_SOLVER=" + cfg_.trex_bin);
    spec.env.push_back("TREX_RESULT_FD=3");
    spec.env.push_back(fmt::format("TREX_SOLVE_TIME_LIMIT={}", cfg_.solve_time_limit_s));
    spec.files.push_back({"answer.py", code});
    if (!data_json.empty()) spec.files.push_back({"data.json", data_json});
    spec.expose = python_dirs(cfg_.python);
    spec.expose.push_back(cfg_.runner_dir);
    spec.expose.push_back(fs::path(cfg_.trex_bin).parent_path().string());
    spec.limits = cfg_.limits;
    spec.allow_unisolated = cfg_.allow_unisolated;
    const sandbox_result r = run_sandboxed(spec, slot_);
    return interpret_python_run(r);
}

// ---------------------------------------------------------------------------------------------------------------

namespace {

// Numbers in a line ("1,234.5" reads as 1234.5 when the commas group thousands).
std::vector<double> numbers_in(const std::string& line) {
    std::vector<double> out;
    size_t i = 0;
    while (i < line.size()) {
        const char c = line[i];
        const bool start = std::isdigit((unsigned char)c) ||
                           ((c == '-' || c == '+' || c == '.') && i + 1 < line.size() &&
                            std::isdigit((unsigned char)line[i + 1]));
        if (!start || (i > 0 && (std::isalpha((unsigned char)line[i - 1]) || line[i - 1] == '_'))) {
            i++;
            continue;
        }
        std::string num;
        size_t j = i;
        if (line[j] == '-' || line[j] == '+') num += line[j++];
        while (j < line.size()) {
            const char d = line[j];
            if (std::isdigit((unsigned char)d) || d == '.') num += d;
            else if (d == ',' && j + 3 < line.size() && std::isdigit((unsigned char)line[j + 1]) &&
                     std::isdigit((unsigned char)line[j + 2]) && std::isdigit((unsigned char)line[j + 3]) &&
                     (j + 4 >= line.size() || !std::isdigit((unsigned char)line[j + 4])))
                ;  // thousands separator
            else if ((d == 'e' || d == 'E') && j + 1 < line.size() &&
                     (std::isdigit((unsigned char)line[j + 1]) ||
                      ((line[j + 1] == '-' || line[j + 1] == '+') && j + 2 < line.size() &&
                       std::isdigit((unsigned char)line[j + 2])))) {
                num += d;
                num += line[++j];
            } else
                break;
            j++;
        }
        char* end = nullptr;
        const double v = std::strtod(num.c_str(), &end);
        if (end != num.c_str() && std::isfinite(v)) out.push_back(v);
        i = j + 1;
    }
    return out;
}

}  // namespace

bool parse_printed_result(const std::string& out, std::string* status, double* objective, bool* has_objective) {
    if (parse_program_output(out, status, objective, has_objective)) {
        if (*status == "optimal" && *has_objective) return true;
        if (*status == "infeasible" || *status == "unbounded") return true;
        if (status->find("infeasible or unbounded") != std::string::npos || *status == "inf_or_unbd") {
            *status = "inf_or_unbd";
            return true;
        }
    }
    *has_objective = false;
    std::vector<std::string> lines;
    size_t b = 0;
    while (b < out.size()) {
        size_t e = out.find('\n', b);
        if (e == std::string::npos) e = out.size();
        lines.push_back(out.substr(b, e - b));
        b = e + 1;
    }
    static const char* keys[] = {"objective", "optimal", "optimum", "total", "minimum", "maximum", "minimal",
                                 "maximal", "cost", "profit", "revenue", "value", "min", "max", "best"};
    for (size_t k = lines.size(); k-- > 0;) {
        const std::string l = ascii_lower(lines[k]);
        bool key = false;
        for (const char* w : keys)
            if (l.find(w) != std::string::npos) key = true;
        if (!key) continue;
        const auto nums = numbers_in(lines[k]);
        if (!nums.empty()) {
            *status = "optimal";
            *objective = nums.back();
            *has_objective = true;
            return true;
        }
    }
    const std::string lo = ascii_lower(out);
    if (lo.find("infeasible") != std::string::npos) {
        *status = "infeasible";
        return true;
    }
    if (lo.find("unbounded") != std::string::npos) {
        *status = "unbounded";
        return true;
    }
    for (size_t k = lines.size(); k-- > 0;) {
        const auto nums = numbers_in(lines[k]);
        if (!nums.empty()) {
            *status = "optimal";
            *objective = nums.back();
            *has_objective = true;
            return true;
        }
    }
    return false;
}

exec_outcome interpret_python_run(const sandbox_result& r) {
    exec_outcome o;
    o.artefact = "python";
    o.seconds = r.seconds;
    if (!r.started) {
        o.status = "runtime_error";
        o.detail = "sandbox: " + r.error;
        return o;
    }
    // the runner's reports
    ojson last_solve, syntax, exception;
    bool have_solve = false;
    size_t b = 0;
    while (b < r.side.size()) {
        size_t e = r.side.find('\n', b);
        if (e == std::string::npos) e = r.side.size();
        try {
            ojson ev = ojson::parse(r.side.substr(b, e - b));
            const std::string kind = ev.value("event", "");
            if (kind == "solve") {
                last_solve = ev;
                have_solve = true;
            } else if (kind == "syntax_error") {
                syntax = ev;
            } else if (kind == "exception") {
                exception = ev;
            }
        } catch (const std::exception&) {
        }
        b = e + 1;
    }
    auto tail = [](const std::string& s) {
        std::string t = s;
        while (!t.empty() && std::isspace((unsigned char)t.back())) t.pop_back();
        const size_t p = t.rfind('\n');
        t = p == std::string::npos ? t : t.substr(p + 1);
        return t.size() > 300 ? t.substr(0, 300) : t;
    };
    if (r.timed_out || r.cpu_limit) {
        o.status = "timeout";
        o.detail = r.cpu_limit ? "CPU time limit" : fmt::format("wall-clock limit ({:.0f} s)", r.seconds);
        return o;
    }
    if (r.output_limit) {
        o.status = "runtime_error";
        o.detail = "output limit exceeded (killed)";
        return o;
    }
    if (!syntax.is_null()) {
        o.status = "parse_error";
        o.detail = syntax.value("error", "syntax error");
        return o;
    }
    if (have_solve) {
        const std::string st = last_solve.value("status", "");
        o.source = "solver";
        if (last_solve.contains("objective") && last_solve["objective"].is_number()) {
            o.objective = last_solve["objective"].get<double>();
            o.has_objective = std::isfinite(o.objective);
        }
        if (st == "optimal") {
            o.status = "optimal";
            if (!o.has_objective) {
                o.status = "runtime_error";
                o.detail = "solver reported optimal without an objective value";
            }
        } else if (st == "infeasible" || st == "unbounded" || st == "inf_or_unbd") {
            o.status = st;
            o.has_objective = false;
        } else if (st == "time_limit") {
            o.status = "timeout";
            o.detail = "solver time limit";
        } else {
            o.status = "no_result";
            o.has_objective = false;
            o.detail = fmt::format("solver status '{}' ({})", st, last_solve.value("raw", ""));
        }
        return o;
    }
    if (!exception.is_null()) {
        o.status = "runtime_error";
        o.detail = exception.value("type", "") + ": " + exception.value("error", "");
        return o;
    }
    if (r.signal != 0) {
        o.status = "runtime_error";
        const char* what = r.signal == SIGXFSZ   ? "file size limit"
                           : r.signal == SIGKILL ? "killed"
                           : r.signal == SIGSEGV ? "segmentation fault"
                                                 : strsignal(r.signal);
        o.detail = fmt::format("killed by signal {} ({})", r.signal, what);
        return o;
    }
    if (r.exit_code != 0) {
        o.status = "runtime_error";
        o.detail = fmt::format("exit status {}: {}", r.exit_code, tail(r.err));
        return o;
    }
    std::string status;
    double obj = 0;
    bool has = false;
    if (parse_printed_result(r.out, &status, &obj, &has)) {
        o.status = status;
        o.has_objective = has;
        o.objective = obj;
        o.source = "stdout";
        return o;
    }
    o.status = "no_result";
    o.detail = "the program ran but reported no solve and printed no result";
    return o;
}

}  // namespace trex::eval
