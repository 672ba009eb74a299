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
#include "trex/base/strings.hpp"
#include "trex/base/timer.hpp"
#include "trex/eval/sandbox_cgroup.hpp"
#include "trex/eval/structure.hpp"
#include "trex/optmodel/ir/format.hpp"
#include "trex/optmodel/ir/glpk_io.hpp"
#include "trex/optmodel/solvers/python_runner.hpp"
#include "trex/optmodel/solvers/solve.hpp"

namespace trex::eval {

namespace fs = std::filesystem;
using namespace trex::optmodel;

namespace {

// The model of a file's text; `name` is what errors call it ("": answer.lp, answer.mps, answer.mod).
model read_model_text(const std::string& kind, const std::string& text, const std::string& name) {
    if (kind == "lp") return read_lp_text(text, name.empty() ? "answer.lp" : name);
    if (kind == "mps") return read_mps_text(text, name.empty() ? "answer.mps" : name, mps_format::detect);
    if (kind == "mathprog") return read_mathprog_text(text, name.empty() ? "answer.mod" : name);
    throw_error(fmt::format("unknown model format '{}'", kind));
}

// The answer's model solved as solve_checked does (a MILP's optimum confirmed by Cbc and GLPK); solver "glpk":
// GLPK only (the retry after a solver crash).
solve_result solve_any(const model& m, double time_limit, const std::string& solver = "") {
    solve_options so;
    so.time_limit_s = time_limit;
    if (solver == "glpk") return solve_glpk(m, so);
    return solve_checked(m, so);
}

// The solution of an optimal solve, by the model's column and row names (duals and reduced costs for LPs).
void add_solution(const model& m, const solve_result& r, ojson* rep) {
    ojson x = ojson::object(), pi = ojson::object(), rc = ojson::object();
    for (size_t j = 0; j < m.vars.size() && j < r.x.size(); j++) x[m.vars[j].name] = r.x[j];
    if (!m.is_mip()) {
        for (size_t i = 0; i < m.cons.size() && i < r.dual.size(); i++) pi[m.cons[i].name] = r.dual[i];
        for (size_t j = 0; j < m.vars.size() && j < r.reduced_cost.size(); j++) rc[m.vars[j].name] = r.reduced_cost[j];
    }
    (*rep)["x"] = x;
    (*rep)["pi"] = pi;
    (*rep)["rc"] = rc;
}

const char* outcome_status(solve_status s) {
    switch (s) {
        case solve_status::optimal:
            return "optimal";
        case solve_status::infeasible:
            return "infeasible";
        case solve_status::unbounded:
            return "unbounded";
        case solve_status::time_limit:
            return "timeout";
        case solve_status::error:
            return "runtime_error";
    }
    return "runtime_error";
}

}  // namespace

bool unsupported_feature(const std::string& error) {
    // the shims' refusals ("... not supported by the trex gurobipy shim") and the LP reader's ("quadratic terms
    // ([ ... ]) are not supported", indicator / SOS / semi-continuous sections)
    return error.find("not supported by the trex") != std::string::npos ||
           error.find("are not supported") != std::string::npos ||
           error.find("section is not supported") != std::string::npos;
}

ojson execute_model_request(const ojson& req) {
    ojson rep;
    const double t0 = now_seconds();
    try {
        const std::string op = req.at("op").get<std::string>();
        const std::string kind = req.at("format").get<std::string>();
        model m;
        try {
            m = read_model_text(kind, req.at("text").get<std::string>(), req.value("name", std::string()));
            validate(m);
        } catch (const std::exception& e) {
            // GLPK's allocator failing under the worker's memory limit is a resource failure, not a syntax error
            const std::string what = e.what();
            const bool memory =
                what.find("alloc.c") != std::string::npos || what.find("out of memory") != std::string::npos;
            rep["status"] = memory ? "runtime_error" : unsupported_feature(what) ? "unsupported" : "parse_error";
            rep["detail"] = memory ? "memory limit while reading the model (" + what + ")" : what;
            rep["seconds"] = now_seconds() - t0;
            return rep;
        }
        if (op == "solve") {
            const solve_result r = solve_any(m, req.value("time_limit", 30.0), req.value("solver", ""));
            rep["status"] = outcome_status(r.status);
            rep["solver"] = r.solver;
            // the other solver's claim that the answering one refuted (solve_checked), or a QP's certified gap
            if (r.status == solve_status::optimal && !r.message.empty()) rep["detail"] = r.message;
            if (r.status == solve_status::optimal) rep["objective"] = r.objective;
            if (r.status == solve_status::time_limit) rep["detail"] = "solver time limit";
            if (r.status == solve_status::error) rep["detail"] = "solver error: " + r.message;
            // a quadratic model the QP path refuses (nonconvex, MIQP): a feature, not a failure
            if (r.status == solve_status::error && unsupported_feature(r.message)) {
                rep["status"] = "unsupported";
                rep["detail"] = r.message;
            }
            if (r.status == solve_status::optimal && req.value("solution", false)) add_solution(m, r, &rep);
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

executor::executor(const exec_config& cfg, int slot) : cfg_(cfg), slot_(slot) {
    compile_runner_once(cfg_);
}

executor::~executor() {
    stop_sandboxed(worker_);
}

namespace {

std::vector<std::string> base_env() {
    std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin",
                                    "HOME=/tmp/work",
                                    "TMPDIR=/tmp",
                                    "LANG=C.UTF-8",
                                    "LC_ALL=C.UTF-8",
                                    "OMP_NUM_THREADS=1",
                                    "OPENBLAS_NUM_THREADS=1",
                                    "MKL_NUM_THREADS=1"};
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
        if (kAddressSanitizer) {
            // The worker is this binary. A crash (a solver overflowing its stack) must end it with its signal, as in
            // a release build, not with ASan's report and exit status 1; LeakSanitizer stops the world with ptrace,
            // which the seccomp filter denies (leaks of the solve code are checked in-process by the tests).
            spec.env.push_back("ASAN_OPTIONS=handle_segv=0:handle_abort=0:detect_leaks=0");
        }
        spec.expose = {fs::path(cfg_.trex_bin).parent_path().string()};
        if (!cfg_.python.empty() && !cfg_.runner_dir.empty()) {
            // convex quadratic models: the worker runs HiGHS through the runner directory's helper (solve_qp)
            for (const std::string& d : python_dirs(cfg_.python)) spec.expose.push_back(d);
            spec.expose.push_back(cfg_.runner_dir);
            spec.env.push_back("TREX_QP_PYTHON=" + sandbox_python_path(cfg_.python));
            spec.env.push_back("TREX_QP_HELPER=" + cfg_.runner_dir + "/trex_qp.py");
        }
        spec.limits = cfg_.limits;
        spec.limits.cpu_s = 1e6;  // cumulative over the worker's life: the per-request wall clock bounds it
        spec.limits.nproc = 16;
        spec.limits.limit_address_space = !kAddressSanitizer;
        spec.allow_unisolated = cfg_.allow_unisolated;
        std::string err;
        worker_ = start_sandboxed(spec, 32 + slot_, &err);
        buf_.clear();
        if (worker_.pid <= 0) return {{"status", "runtime_error"}, {"detail", "cannot start the solve worker: " + err}};
    }
    const std::string line = req.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    struct sigaction ign {
    }, old{};
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
            return {{"status", "timeout"},
                    {"detail", fmt::format("no result within {:.0f} s (worker restarted)", timeout_s)}};
        }
        pollfd pf[2] = {{worker_.out, POLLIN, 0}, {worker_.err, POLLIN, 0}};
        const int pr = ::poll(pf, 2, (int)std::min(left * 1000.0 + 1, 500.0));
        if (pr < 0 && errno == EINTR) continue;
        if (pf[1].revents & POLLIN) {
            char b[4096];
            const ssize_t n = ::read(worker_.err, b, sizeof b);
            if (n > 0 && err_text.size() < (64u << 10)) err_text.append(b, (size_t)n);
        }
        if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            char b[65536];
            const ssize_t n = ::read(worker_.out, b, sizeof b);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            buf_.append(b, (size_t)n);
        }
    }
    // the worker died: how, then restart it next time
    int st = 0;
    while (::waitpid(worker_.pid, &st, 0) < 0 && errno == EINTR) {
    }
    char b[4096];
    ssize_t n;
    while ((n = ::read(worker_.err, b, sizeof b)) > 0 && err_text.size() < (64u << 10)) err_text.append(b, (size_t)n);
    const bool memory = worker_.cgroup && worker_.cgroup->memory_limit_hit();
    worker_.pid = -1;
    stop_sandboxed(worker_);
    while (!err_text.empty() && std::isspace((unsigned char)err_text.back())) err_text.pop_back();
    const size_t p = err_text.rfind('\n');
    const std::string last = err_text.substr(p == std::string::npos ? 0 : p + 1);
    if (WIFSIGNALED(st)) {
        const int sig = WTERMSIG(st);
        if (sig == SIGKILL || memory)
            return {{"status", "runtime_error"},
                    {"detail", fmt::format("solve worker killed{}{}", memory ? " at its memory limit" : "",
                                           last.empty() ? "" : ": " + last)}};
        return {{"status", "solver_crash"},
                {"signal", sig},
                {"detail", fmt::format("the solver crashed: signal {} ({}){}", sig,
                                       sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", last.empty() ? "" : ": " + last)}};
    }
    return {{"status", "runtime_error"},
            {"detail", fmt::format("solve worker exited ({}){}", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
                                   last.empty() ? "" : ": " + last)}};
}

ojson executor::solve_in_worker(ojson req) {
    const double timeout = cfg_.solve_time_limit_s + 10;
    ojson rep = call_worker(req, timeout);
    if (rep.value("status", "") != "solver_crash" || req.value("solver", "") == "glpk") return rep;
    const std::string first = rep.value("detail", "");
    req["solver"] = "glpk";
    ojson again = call_worker(req, timeout);
    const std::string note = first + "; retried with GLPK";
    again["detail"] = again.value("detail", "").empty() ? note : note + ": " + again.value("detail", "");
    if (again.value("status", "") == "solver_crash") again["status"] = "solver_crash";
    return again;
}

namespace {

exec_outcome outcome_from_reply(const std::string& kind, const ojson& rep) {
    exec_outcome o;
    o.artefact = kind;
    o.status = rep.value("status", "runtime_error");
    o.detail = rep.value("detail", "");
    o.solver = rep.value("solver", "");
    o.seconds = rep.value("seconds", 0.0);
    if (rep.contains("objective") && rep["objective"].is_number()) {
        o.has_objective = true;
        o.objective = rep["objective"].get<double>();
    }
    if (o.status == "optimal" || o.status == "infeasible" || o.status == "unbounded") o.source = "solver";
    o.equivalent = rep.value("equivalent", false);
    return o;
}

}  // namespace

exec_outcome executor::run_model(const std::string& kind, const std::string& text, const std::string& name) {
    const double t0 = now_seconds();
    ojson req = {{"op", "solve"}, {"format", kind}, {"text", text}, {"time_limit", cfg_.solve_time_limit_s}};
    if (!name.empty()) req["name"] = name;
    exec_outcome o = outcome_from_reply(kind, solve_in_worker(req));
    o.seconds = now_seconds() - t0;
    return o;
}

exec_outcome executor::compare_model(const std::string& kind, const std::string& text,
                                     const std::string& reference_lp) {
    const double t0 = now_seconds();
    ojson req = {{"op", "structure"}, {"format", kind}, {"text", text}, {"reference", reference_lp}};
    exec_outcome o = outcome_from_reply(kind, solve_in_worker(req));
    o.seconds = now_seconds() - t0;
    return o;
}

std::string executor::on_channel_message(const std::string& line, channel_log* log) {
    auto refuse = [&](const std::string& why) {
        log->rejected++;
        return ojson{{"status", "error"}, {"detail", why}}.dump();
    };
    ojson req;
    try {
        req = ojson::parse(line);
    } catch (const std::exception&) {
        return refuse("the request is not JSON");
    }
    if (!req.is_object()) return refuse("the request is not a JSON object");
    const std::string op = req.contains("op") && req["op"].is_string() ? req["op"].get<std::string>() : "";
    if (op == "event") {
        const std::string ev = req.contains("event") && req["event"].is_string() ? req["event"].get<std::string>() : "";
        const std::string text =
            req.contains("error") && req["error"].is_string() ? req["error"].get<std::string>() : "";
        const std::string type = req.contains("type") && req["type"].is_string() ? req["type"].get<std::string>() : "";
        if (ev == "syntax_error") log->syntax_error = text.substr(0, 2000);
        if (ev == "exception") log->exception = (type.empty() ? "" : type + ": ") + text.substr(0, 2000);
        return "";
    }
    if (op == "written") {
        if (!req.contains("model") || !req["model"].is_string()) return "";
        log->writes++;
        log->last_written = req["model"].get<std::string>();
        return "";
    }
    if (op != "solve") return refuse("unknown request '" + op.substr(0, 40) + "'");
    if (!req.contains("model") || !req["model"].is_string()) return refuse("a solve request needs the model's LP text");
    if ((long)log->solves.size() >= kMaxSolves) return refuse(fmt::format("more than {} solves", kMaxSolves));
    double constant = 0.0, limit = cfg_.solve_time_limit_s;
    if (req.contains("objective_constant")) {
        if (!req["objective_constant"].is_number() || !std::isfinite(req["objective_constant"].get<double>()) ||
            std::fabs(req["objective_constant"].get<double>()) >= 1e30)
            return refuse("objective_constant must be a finite number below 1e30");
        constant = req["objective_constant"].get<double>();
    }
    if (req.contains("time_limit") && req["time_limit"].is_number() && req["time_limit"].get<double>() > 0)
        limit = std::min(limit, req["time_limit"].get<double>());
    ojson rep = solve_in_worker(
        {{"op", "solve"}, {"format", "lp"}, {"text", req["model"]}, {"time_limit", limit}, {"solution", true}});
    recorded_solve rec;
    rec.api = req.contains("api") && req["api"].is_string() ? req["api"].get<std::string>().substr(0, 20) : "";
    rec.status = rep.value("status", "runtime_error");
    rec.solver = rep.value("solver", "");
    rec.detail = rep.value("detail", "");
    if (rec.status == "optimal" && rep.contains("objective") && rep["objective"].is_number()) {
        rec.objective = rep["objective"].get<double>() + constant;
        rec.has_objective = std::isfinite(rec.objective);
        rep["objective"] = rec.objective;
    }
    log->solves.push_back(rec);
    return rep.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool executor::run_python_sandboxed(const std::string& code, const std::string& data_json, channel_log* log,
                                    sandbox_result* r, exec_outcome* o) {
    if (cfg_.python.empty()) {
        o->artefact = "python";
        o->status = "runtime_error";
        o->detail = "no Python with PuLP to run the program (scripts/setup.sh installs it into .venv; or TREX_PYTHON)";
        return false;
    }
    sandbox_spec spec;
    spec.argv = {sandbox_python_path(cfg_.python), "-B", cfg_.runner_dir + "/trex_runner.py", "answer.py"};
    spec.env = base_env();
    spec.env.push_back("PYTHONDONTWRITEBYTECODE=1");
    spec.env.push_back("PYTHONHASHSEED=0");
    spec.env.push_back("MPLBACKEND=Agg");
    spec.env.push_back("TZ=UTC");
    spec.env.push_back("TREX_CHANNEL_FD=3");
    spec.env.push_back(fmt::format("TREX_SOLVE_TIME_LIMIT={}", cfg_.solve_time_limit_s));
    if (!cfg_.protocol.empty()) spec.env.push_back("TREX_PROTOCOL=" + cfg_.protocol);
    spec.files.push_back({"answer.py", code});
    if (!data_json.empty()) spec.files.push_back({"data.json", data_json});
    spec.expose = python_dirs(cfg_.python);
    spec.expose.push_back(cfg_.runner_dir);
    spec.limits = cfg_.limits;
    spec.allow_unisolated = cfg_.allow_unisolated;
    spec.on_message = [&](const std::string& line) { return on_channel_message(line, log); };
    *r = run_sandboxed(spec, slot_);
    return true;
}

exec_outcome executor::run_python(const std::string& code, const std::string& data_json) {
    exec_outcome o;
    channel_log log;
    sandbox_result r;
    if (!run_python_sandboxed(code, data_json, &log, &r, &o)) return o;
    return interpret_python_run(r, log);
}

exec_outcome executor::compare_python(const std::string& code, const std::string& data_json,
                                      const std::string& reference_lp) {
    exec_outcome o;
    channel_log log;
    sandbox_result r;
    if (!run_python_sandboxed(code, data_json, &log, &r, &o)) return o;
    if (log.writes == 0) {
        // what went wrong before a model was written, else that none was
        o = interpret_python_run(r, log);
        const bool ran = o.status == "optimal" || o.status == "infeasible" || o.status == "unbounded" ||
                         o.status == "inf_or_unbd" || o.status == "no_solve";
        if (ran) {
            o.status = "runtime_error";
            o.source.clear();
            o.has_objective = false;
            o.detail = "the program wrote no LP file (model.write(\"model.lp\")) for the structure judge";
        }
        return o;
    }
    o = compare_model("lp", log.last_written, reference_lp);
    o.artefact = "python";
    o.seconds += r.seconds;
    return o;
}

// ---------------------------------------------------------------------------------------------------------------

namespace {

// Numbers in a line ("1,234.5" reads as 1234.5 when the commas group thousands).
std::vector<double> numbers_in(const std::string& line) {
    std::vector<double> out;
    size_t i = 0;
    while (i < line.size()) {
        const char c = line[i];
        const bool start =
            std::isdigit((unsigned char)c) ||
            ((c == '-' || c == '+' || c == '.') && i + 1 < line.size() && std::isdigit((unsigned char)line[i + 1]));
        if (!start || (i > 0 && (std::isalpha((unsigned char)line[i - 1]) || line[i - 1] == '_'))) {
            i++;
            continue;
        }
        std::string num;
        size_t j = i;
        if (line[j] == '-' || line[j] == '+') num += line[j++];
        while (j < line.size()) {
            const char d = line[j];
            if (std::isdigit((unsigned char)d) || d == '.')
                num += d;
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

std::string last_line(const std::string& s) {
    std::string t = s;
    while (!t.empty() && std::isspace((unsigned char)t.back())) t.pop_back();
    const size_t p = t.rfind('\n');
    t = p == std::string::npos ? t : t.substr(p + 1);
    return t.size() > 300 ? t.substr(0, 300) : t;
}

}  // namespace

bool printed_objective(const std::string& out, double* value) {
    static const char* names[] = {"objective", "optimal value", "optimum value"};
    static const char* not_a_value[] = {"infeasible", "unbounded",  "error",     "status",     "exception",
                                        "fail",       "not solved", "undefined", "no solution"};
    bool found = false;
    size_t b = 0;
    while (b < out.size()) {
        size_t e = out.find('\n', b);
        if (e == std::string::npos) e = out.size();
        const std::string line = out.substr(b, std::min<size_t>(e - b, 1000));
        b = e + 1;
        const std::string l = ascii_lower(line);
        bool named = false, excluded = false;
        for (const char* n : names) named = named || l.find(n) != std::string::npos;
        for (const char* n : not_a_value) excluded = excluded || l.find(n) != std::string::npos;
        if (!named || excluded) continue;
        const auto nums = numbers_in(line);
        if (nums.size() != 1) continue;
        *value = nums[0];
        found = true;
    }
    return found;
}

exec_outcome interpret_python_run(const sandbox_result& r, const channel_log& log) {
    exec_outcome o;
    o.artefact = "python";
    o.seconds = r.seconds;
    o.stdout_truncated = r.out_truncated();
    o.stderr_truncated = r.err_truncated();
    if (!r.started) {
        o.status = "runtime_error";
        o.detail = "sandbox: " + r.error;
        return o;
    }
    o.has_printed_objective = printed_objective(r.out, &o.printed_objective);
    if (r.timed_out || r.cpu_limit) {
        o.status = "timeout";
        o.detail = r.cpu_limit ? "CPU time limit" : fmt::format("wall-clock limit ({:.0f} s)", r.seconds);
        return o;
    }
    if (r.output_limit) {
        o.status = "runtime_error";
        o.detail = fmt::format("output limit exceeded (killed after {} bytes of stdout, {} of stderr)", r.out_bytes,
                               r.err_bytes);
        return o;
    }
    if (!log.syntax_error.empty()) {
        o.status = "parse_error";
        o.detail = log.syntax_error;
        return o;
    }
    if (!log.solves.empty()) {
        const recorded_solve& s = log.solves.back();
        o.source = "solver";
        o.solver = s.solver;
        o.detail = s.detail;
        if (s.status == "optimal") {
            o.status = "optimal";
            o.has_objective = s.has_objective;
            o.objective = s.objective;
            if (!s.has_objective) {
                o.status = "runtime_error";
                o.detail = "the solver reported optimal without an objective value";
            }
        } else if (s.status == "infeasible" || s.status == "unbounded") {
            o.status = s.status;
        } else if (s.status == "timeout") {
            o.status = "timeout";
            o.detail = "solver time limit";
        } else if (s.status == "solver_crash") {
            o.status = "solver_crash";
        } else if (s.status == "unsupported") {
            o.status = "unsupported";  // a quadratic model the solvers refuse (nonconvex, MIQP)
            o.source.clear();
        } else {
            o.status = "runtime_error";
            o.detail = fmt::format("the last solve ended '{}'{}", s.status, s.detail.empty() ? "" : ": " + s.detail);
        }
        return o;
    }
    if (r.memory_limit) {
        o.status = "runtime_error";
        o.detail = fmt::format("memory limit of the answer (peak {:.0f} MiB)", r.peak_memory_mb);
        return o;
    }
    if (!log.exception.empty()) {
        o.status = unsupported_feature(log.exception) ? "unsupported" : "runtime_error";
        o.detail = log.exception;
        return o;
    }
    if (r.signal != 0) {
        o.status = "runtime_error";
        const char* what = r.signal == SIGXFSZ   ? "file size limit"
                           : r.signal == SIGKILL ? "killed"
                           : r.signal == SIGSEGV ? "segmentation fault"
                                                 : sigabbrev_np(r.signal);
        o.detail = fmt::format("killed by signal {} ({})", r.signal, what ? what : "?");
        return o;
    }
    if (r.exit_code != 0) {
        o.status = "runtime_error";
        o.detail = fmt::format("exit status {}: {}", r.exit_code, last_line(r.err));
        return o;
    }
    o.status = "no_solve";
    o.detail = "the program ran no solve with trex's solvers (printed results are not solves)";
    if (o.has_printed_objective) o.detail += fmt::format("; it printed an objective of {}", o.printed_objective);
    return o;
}

}  // namespace trex::eval
