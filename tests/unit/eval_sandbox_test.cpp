// trex eval answer execution with hostile model output: Python answers that loop, sleep, flood stdout, fork-bomb,
// hog memory, open sockets, write outside their directory, kill every process they can, leave orphans, fill the
// disk or do not parse; model files that do not parse, write files from MathProg or blow up in translation. Each is
// contained, recorded as a failure of the right kind within its limits, and the harness keeps going (a correct
// answer right after each one still passes). The issue's hostile-answer suite, through `trex eval run`, is
// eval_hostile_test.cpp.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/test_support.hpp"
#include "trex/base/timer.hpp"
#include "trex/eval/execute.hpp"
#include "trex/eval/judge.hpp"
#include "trex/eval/sandbox.hpp"
#include "trex/eval/sandbox_cgroup.hpp"

namespace fs = std::filesystem;
using namespace trex::eval;

namespace {

const char* kGoodPulp = R"(import pulp
p = pulp.LpProblem("t", pulp.LpMaximize)
x = pulp.LpVariable("x", 0, 4)
y = pulp.LpVariable("y", 0, 3)
p += x + 2 * y
p += x + y <= 5
p.solve(pulp.PULP_CBC_CMD(msg=False))
print("Status:", pulp.LpStatus[p.status])
print("Optimal objective:", pulp.value(p.objective))
)";  // optimum 8 (x = 2, y = 3)

const char* kGoodLp = "Maximize\n obj: x + 2 y\nSubject To\n c: x + y <= 5\nBounds\n x <= 4\n y <= 3\nEnd\n";

exec_config test_config() {
    exec_config c = default_exec_config();
    c.trex_bin = trex::test::trex_binary();  // the worker and the shim's solver (this test binary has no CLI)
    c.limits.wall_s = 6;
    c.limits.cpu_s = 4;
    c.limits.memory_mb = 1024;
    c.limits.file_mb = 16;
    c.limits.stream_bytes = 64 << 10;
    c.limits.flood_bytes = 1 << 20;
    c.solve_time_limit_s = 3;
    return c;
}

class EvalSandbox : public ::testing::Test {
   protected:
    void SetUp() override {
        if (!sandbox_guarantees().isolated)
            GTEST_SKIP() << "no sandbox isolation here: " << sandbox_guarantees().summary;
        cfg_ = test_config();
        dir_ = (fs::temp_directory_path() / ("trex_eval_sandbox_" + std::to_string(getpid()))).string();
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        fs::permissions(dir_, fs::perms::all);  // world-writable: a write from the sandbox would succeed by mode
    }
    void TearDown() override {
        if (!dir_.empty()) fs::remove_all(dir_);
    }
    bool have_python() const { return !cfg_.python.empty(); }
    // Runs a hostile Python answer, then checks that a correct answer still passes.
    exec_outcome hostile_python(executor& ex, const std::string& code, double max_seconds) {
        const double t0 = trex::now_seconds();
        const exec_outcome o = ex.run_python(code, "");
        const double dt = trex::now_seconds() - t0;
        EXPECT_LT(dt, max_seconds) << code;
        const exec_outcome good = ex.run_python(kGoodPulp, "");
        EXPECT_EQ(good.status, "optimal") << good.detail;
        EXPECT_EQ(good.objective, 8.0);
        return o;
    }
    exec_config cfg_;
    std::string dir_;
};

failure judged(const exec_outcome& o) {
    ground_truth t;
    t.kind = truth_kind::objective;
    t.value = 8.0;
    return judge_outcome(t, o, objective_judge{}).why;
}

// Processes of this test's answer sandboxes still alive, one line each (the sandbox gives uids 1000000 +
// (pid % 100000) * 64 + slot; answers run in slots 0..31, the solve workers, alive while their executor is, in 32..).
std::string sandbox_process_list() {
    const long lo = 1000000 + (getpid() % 100000) * 64, hi = lo + 32;
    std::string out;
    for (const auto& e : fs::directory_iterator("/proc")) {
        const std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream st(e.path() / "status");
        std::string line, all;
        bool mine = false;
        while (std::getline(st, line)) {
            all += line + "; ";
            if (line.rfind("Uid:", 0) == 0) {
                const long uid = std::strtol(line.c_str() + 4, nullptr, 10);
                mine = uid >= lo && uid < hi;
            }
        }
        if (mine) out += name + ": " + all.substr(0, 300) + "\n";
    }
    return out;
}

int sandbox_processes() {
    const std::string l = sandbox_process_list();
    return (int)std::count(l.begin(), l.end(), '\n');
}

}  // namespace

TEST_F(EvalSandbox, InfiniteLoopAndSleepTimeOut) {
    if (!have_python()) GTEST_SKIP() << "no python with pulp (scripts/setup.sh)";
    executor ex(cfg_, 0);
    exec_outcome o = hostile_python(ex, "while True:\n    pass\n", 12);
    EXPECT_EQ(o.status, "timeout") << o.detail;
    EXPECT_EQ(judged(o), failure::timeout);
    o = hostile_python(ex, "import time\ntime.sleep(1000)\n", 12);
    EXPECT_EQ(o.status, "timeout") << o.detail;
    EXPECT_EQ(sandbox_processes(), 0) << sandbox_process_list();
}

TEST_F(EvalSandbox, CpuTimeIsLimitedPerAnswerNotPerProcess) {
    if (!have_python()) GTEST_SKIP() << "no python with pulp";
    if (!cgroup_support().cpu_accounting) GTEST_SKIP() << "no CPU accounting cgroup: " << cgroup_support().detail;
    // a chain of processes that each spin 1 s of CPU, fork the next and exit: no process reaches the per-process
    // RLIMIT_CPU of 4 s, so only a limit on the answer's total CPU stops it before the 30 s wall clock
    cfg_.limits.wall_s = 30;
    executor ex(cfg_, 0);
    const double t0 = trex::now_seconds();
    const exec_outcome o = ex.run_python(R"(import os, time
def spin(s):
    t = time.process_time()
    while time.process_time() - t < s:
        pass
if os.fork() == 0:
    while True:
        spin(1.0)
        if os.fork() != 0:
            os._exit(0)
while True:
    time.sleep(1)
)",
                                         "");
    EXPECT_EQ(o.status, "timeout") << o.detail;
    EXPECT_EQ(o.detail, "CPU time limit");
    EXPECT_LT(trex::now_seconds() - t0, 20.0);
    EXPECT_EQ(sandbox_processes(), 0) << sandbox_process_list();
}

TEST_F(EvalSandbox, HugeOutputIsCutAndKilled) {
    if (!have_python()) GTEST_SKIP() << "no python with pulp";
    executor ex(cfg_, 0);
    const exec_outcome o = hostile_python(ex, "while True:\n    print('x' * 10000)\n", 12);
    EXPECT_EQ(o.status, "runtime_error");
    EXPECT_NE(o.detail.find("output limit"), std::string::npos) << o.detail;
    EXPECT_TRUE(o.stdout_truncated);
}

TEST_F(EvalSandbox, EachStreamIsCappedAndTheTruncationRecorded) {
    if (!have_python()) GTEST_SKIP() << "no python with pulp";
    // 300 KiB on each stream (cap 64 KiB, flood limit 1 MiB), then a real solve: it counts, and both cuts are noted
    sandbox_spec s;
    s.argv = {sandbox_python_path(cfg_.python), "-c",
              "import sys\nsys.stdout.write('o' * 300000)\nsys.stderr.write('e' * 300000)\n"};
    s.expose = python_dirs(cfg_.python);
    s.limits = cfg_.limits;
    const sandbox_result r = run_sandboxed(s, 0);
    ASSERT_TRUE(r.started) << r.error;
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.size(), 64u << 10);
    EXPECT_EQ(r.err.size(), 64u << 10);
    EXPECT_EQ(r.out_bytes, 300000);
    EXPECT_EQ(r.err_bytes, 300000);
    EXPECT_TRUE(r.out_truncated() && r.err_truncated());
    EXPECT_FALSE(r.output_limit);
    executor ex(cfg_, 0);
    const exec_outcome o =
        ex.run_python(std::string("import sys\nsys.stderr.write('log ' * 100000)\n") + kGoodPulp, "");
    EXPECT_EQ(o.status, "optimal") << o.detail;
    EXPECT_EQ(o.objective, 8.0);
    EXPECT_TRUE(o.stderr_truncated);
    EXPECT_FALSE(o.stdout_truncated);
}

TEST_F(EvalSandbox, ForkBombIsContainedAndLeavesNothingBehind) {
    if (!have_python()) GTEST_SKIP() << "no python with pulp";
    executor ex(cfg_, 0);
    const exec_outcome o = hostile_python(ex, R"(import os
while True:
    try:
        os.fork()
    except OSError:
        pass
)",
                                          15);
    EXPECT_NE(o.status, "optimal");
    EXPECT_NE(judged(o), failure::none);
    EXPECT_EQ(sandbox_processes(), 0) << sandbox_process_list();
}

TEST_F(EvalSandbox, MemoryHogFails) {
    if (!have_python()) GTEST_SKIP() << "no python with pulp";
    executor ex(cfg_, 0);
    exec_outcome o = hostile_python(ex, "x = bytearray(8 << 30)\nprint('Optimal objective:', 8)\n", 12);
    EXPECT_EQ(o.status, "runtime_error") << o.detail;
    EXPECT_NE(o.detail.find("MemoryError"), std::string::npos) << o.detail;
    o = hostile_python(ex, "a = []\nwhile True:\n    a.append(bytearray(1 << 24))\n", 12);
    EXPECT_EQ(o.status, "runtime_error") << o.detail;
}

TEST_F(EvalSandbox, NoNetwork) {
    if (!have_python()) GTEST_SKIP() << "no python with pulp";
    // a listening socket on the host's loopback: the sandbox must not reach it
    const int srv = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(srv, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(srv, (sockaddr*)&a, sizeof a), 0);
    ASSERT_EQ(::listen(srv, 4), 0);
    socklen_t len = sizeof a;
    ASSERT_EQ(::getsockname(srv, (sockaddr*)&a, &len), 0);
    const int port = ntohs(a.sin_port);
    executor ex(cfg_, 0);
    const exec_outcome o = hostile_python(ex,
                                          "import socket\ns = socket.create_connection(('127.0.0.1', " +
                                              std::to_string(port) + "), timeout=3)\nprint('Optimal objective:', 8)\n",
                                          12);
    EXPECT_EQ(o.status, "runtime_error") << o.detail;
    // the sandbox's own loopback has no listener: refused
    EXPECT_NE(o.detail.find("ConnectionRefusedError"), std::string::npos) << o.detail;
    // nothing connected
    const int fl = ::fcntl(srv, F_GETFL);
    ::fcntl(srv, F_SETFL, fl | O_NONBLOCK);
    EXPECT_LT(::accept(srv, nullptr, nullptr), 0);
    ::close(srv);
    const exec_outcome dns = hostile_python(ex, "import socket\nsocket.getaddrinfo('example.com', 80)\n", 12);
    EXPECT_EQ(dns.status, "runtime_error") << dns.detail;
}

TEST_F(EvalSandbox, WritesOutsideTheWorkingDirectoryDoNotReachTheHost) {
    if (!have_python()) GTEST_SKIP() << "no python with pulp";
    executor ex(cfg_, 0);
    const std::string tmp_target = dir_ + "/pwned";                                    // world-writable host dir
    const std::string src_target = std::string(TREX_SOURCE_DIR) + "/pwned_by_answer";  // the source tree
    const std::string code = "import os\nfor p in [" + ("'" + tmp_target + "', '" + src_target + "'") +
                             "]:\n    try:\n        open(p, 'w').write('x')\n    except OSError as e:\n"
                             "        print('blocked', p, e)\n" +
                             kGoodPulp;
    const exec_outcome o = hostile_python(ex, code, 12);
    EXPECT_EQ(o.status, "optimal") << o.detail;  // the program ran to its end...
    EXPECT_FALSE(fs::exists(tmp_target));        // ...but /tmp was its own tmpfs
    EXPECT_FALSE(fs::exists(src_target));        // and the source tree is not writable by its uid
    fs::remove(src_target);
    // nor can it change the runner or the shim that later answers use
    const exec_outcome o2 =
        ex.run_python("open('" + cfg_.runner_dir + "/shim/_trex_lp.py', 'a').write('raise SystemExit')\n", "");
    EXPECT_EQ(o2.status, "runtime_error") << o2.detail;
    {
        std::ifstream in(cfg_.runner_dir + "/shim/_trex_lp.py");
        std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        EXPECT_EQ(all.find("raise SystemExit"), std::string::npos);
    }
    const exec_outcome good = ex.run_python(
        "import gurobipy as gp\nm = gp.Model()\nx = m.addVar(ub=4)\n"
        "m.setObjective(2 * x, gp.GRB.MAXIMIZE)\nm.optimize()\n",
        "");
    EXPECT_EQ(good.status, "optimal") << good.detail;
    EXPECT_EQ(good.objective, 8.0);
}

TEST_F(EvalSandbox, KillingEverythingOrphansAndSessionsStayInside) {
    if (!have_python()) GTEST_SKIP() << "no python with pulp";
    executor ex(cfg_, 0);
    // kill(-1): every process the program may signal (only its own namespace)
    exec_outcome o =
        hostile_python(ex, "import os, signal\nos.kill(-1, signal.SIGKILL)\nimport time\ntime.sleep(1)\n", 12);
    EXPECT_NE(o.status, "optimal");
    // an orphan in a new session that outlives the program: the answer returns at once, the orphan dies with it
    o = hostile_python(ex, std::string(R"(import os, time
if os.fork() == 0:
    os.setsid()
    time.sleep(1000)
)") + kGoodPulp,
                       5);
    EXPECT_EQ(o.status, "optimal");
    EXPECT_EQ(judged(o), failure::none);
    EXPECT_EQ(sandbox_processes(), 0) << sandbox_process_list();
}

TEST_F(EvalSandbox, FileSizeLimitAndSyntaxErrorsAndExceptions) {
    if (!have_python()) GTEST_SKIP() << "no python with pulp";
    executor ex(cfg_, 0);
    exec_outcome o = hostile_python(ex, "f = open('big', 'wb')\nwhile True:\n    f.write(b'x' * (1 << 20))\n", 12);
    EXPECT_EQ(o.status, "runtime_error") << o.detail;
    o = hostile_python(ex, "def broken(:\n    pass\n", 12);
    EXPECT_EQ(o.status, "parse_error") << o.detail;
    EXPECT_EQ(judged(o), failure::parse_error);
    o = hostile_python(ex, "raise ValueError('no model today')\n", 12);
    EXPECT_EQ(o.status, "runtime_error");
    EXPECT_NE(o.detail.find("no model today"), std::string::npos) << o.detail;
    o = hostile_python(ex, "import sys\nsys.exit(3)\n", 12);
    EXPECT_EQ(o.status, "runtime_error");
    o = hostile_python(ex, "print('nothing useful')\n", 12);
    EXPECT_EQ(o.status, "no_solve");
    EXPECT_EQ(judged(o), failure::no_solve);
}

TEST_F(EvalSandbox, EnvironmentIsScrubbed) {
    if (!have_python()) GTEST_SKIP() << "no python with pulp";
    ::setenv("TREX_TEST_SECRET", "s3cret-token", 1);
    sandbox_spec s;
    s.argv = {sandbox_python_path(cfg_.python), "-c",
              "import os; print(sorted(os.environ.items())); print(os.getuid(), os.getcwd())"};
    s.env = {"PATH=/usr/bin:/bin"};
    s.expose = python_dirs(cfg_.python);
    s.limits = cfg_.limits;
    const sandbox_result r = run_sandboxed(s, 0);
    ::unsetenv("TREX_TEST_SECRET");
    ASSERT_TRUE(r.started) << r.error;
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find("s3cret"), std::string::npos) << r.out;
    // exactly the spec's list (Python itself adds LC_CTYPE when it coerces the C locale, PEP 538)
    const std::string env_line = r.out.substr(0, r.out.find('\n'));
    EXPECT_TRUE(env_line == "[('PATH', '/usr/bin:/bin')]" ||
                env_line == "[('LC_CTYPE', 'C.UTF-8'), ('PATH', '/usr/bin:/bin')]")
        << r.out;
    EXPECT_EQ(r.out.find(" 0 "), std::string::npos) << r.out;  // not root
    EXPECT_NE(r.out.find("/tmp/work"), std::string::npos) << r.out;
}

TEST_F(EvalSandbox, HostileModelFiles) {
    executor ex(cfg_, 0);
    auto good_after = [&] {
        const exec_outcome g = ex.run_model("lp", kGoodLp);
        EXPECT_EQ(g.status, "optimal") << g.detail;
        EXPECT_EQ(g.objective, 8.0);
    };
    good_after();
    // garbage
    exec_outcome o = ex.run_model("lp", "Maximize\n obj: x +* y\nEnd\n");
    EXPECT_EQ(o.status, "parse_error");
    good_after();
    o = ex.run_model("mps", "this is not an MPS file\n");
    EXPECT_EQ(o.status, "parse_error");
    good_after();
    // MathProg that writes files (printf > "file") and reads the host's files (table ... IN): inside the sandbox
    const std::string target = dir_ + "/from_mathprog";
    o = ex.run_model(
        "mathprog", "var x >= 0, <= 4;\nmaximize z: 2 * x;\nprintf \"pwned\\n\" > \"" + target + "\";\nsolve;\nend;\n");
    EXPECT_FALSE(fs::exists(target));
    good_after();
    // a translation that never ends within the limits (10^9 variables)
    const double t0 = trex::now_seconds();
    o = ex.run_model("mathprog",
                     "set S := 1..1000000000;\nvar x{S} >= 0;\nmaximize z: sum{i in S} x[i];\n"
                     "s.t. c{i in S}: x[i] <= 1;\nsolve;\nend;\n");
    EXPECT_LT(trex::now_seconds() - t0, cfg_.solve_time_limit_s + 15);
    EXPECT_TRUE(o.status == "timeout" || o.status == "runtime_error") << o.status << " " << o.detail;
    good_after();
    // an unbounded and an infeasible model are results, not errors
    EXPECT_EQ(ex.run_model("lp", "Maximize\n obj: x\nSubject To\n c: x >= 1\nEnd\n").status, "unbounded");
    EXPECT_EQ(ex.run_model("lp", "Minimize\n obj: x\nSubject To\n c: x >= 2\n d: x <= 1\nEnd\n").status, "infeasible");
}

TEST_F(EvalSandbox, PulpAnswersGetValuesDualsAndStatusFromTrexSolvers) {
    if (!have_python()) GTEST_SKIP() << "no python with pulp";
    executor ex(cfg_, 0);
    // the answer checks what PuLP's API gives back (an assertion failure would be a runtime error), then the LP's
    // objective with a constant, a MIP, an infeasible model (the last solve counts), multiprocessing with a function
    // of the answer's own __main__, numpy and pandas
    const exec_outcome o = ex.run_python(R"(import multiprocessing as mp
import numpy as np
import pandas as pd
import pulp
def sq(v):
    return v * v
if __name__ == "__main__":
    with mp.Pool(2) as pool:
        assert pool.map(sq, [1, 2, 3]) == [1, 4, 9]
    assert np.arange(4).sum() == 6 and pd.DataFrame({"a": [1, 2]}).a.sum() == 3
    p = pulp.LpProblem("t", pulp.LpMaximize)
    x = pulp.LpVariable("x", 0, 4)
    y = pulp.LpVariable("y", 0, 3)
    p += x + 2 * y + 10
    p += x + y <= 5, "c"
    assert p.solve(pulp.PULP_CBC_CMD(msg=False)) == 1 and pulp.LpStatus[p.status] == "Optimal"
    assert (x.varValue, y.varValue) == (2.0, 3.0), (x.varValue, y.varValue)
    assert abs(p.constraints["c"].pi - 1.0) < 1e-9 and abs(p.constraints["c"].slack) < 1e-9
    assert pulp.value(p.objective) == 18.0
    q = pulp.LpProblem("mip", pulp.LpMinimize)
    n = pulp.LpVariable("n", 0, cat="Integer")
    q += n
    q += 3 * n >= 7
    q.solve()
    assert n.varValue == 3.0
    r = pulp.LpProblem("inf", pulp.LpMinimize)
    z = pulp.LpVariable("z", 0)
    r += z
    r += z <= -1
    assert r.solve() == -1 and pulp.LpStatus[r.status] == "Infeasible" and z.varValue is None
)",
                                         "");
    EXPECT_EQ(o.status, "infeasible") << o.detail;
    EXPECT_EQ(o.source, "solver");
}

TEST_F(EvalSandbox, SolverCrashIsRecordedWithItsSignalAndRetriedWithGlpk) {
    // GLPK's MathProg translator recurses once per parenthesis: 300,000 of them overflow the worker's stack
    std::string deep = "var x >= 0;\nmaximize z: ";
    deep += std::string(300000, '(') + "x" + std::string(300000, ')') + ";\ns.t. c: x <= 1;\nend;\n";
    executor ex(cfg_, 0);
    const exec_outcome o = ex.run_model("mathprog", deep);
    EXPECT_EQ(o.status, "solver_crash") << o.detail;
    EXPECT_NE(o.detail.find("signal 11 (SEGV)"), std::string::npos) << o.detail;
    EXPECT_NE(o.detail.find("retried with GLPK"), std::string::npos) << o.detail;
    EXPECT_EQ(judged(o), failure::runtime_error);
    const exec_outcome g = ex.run_model("lp", kGoodLp);  // a fresh worker takes the next model
    EXPECT_EQ(g.status, "optimal") << g.detail;
    EXPECT_EQ(g.objective, 8.0);
}

TEST(EvalPrinted, PrintedObjectivesAreDiagnosticsThatNeverReadStatusLines) {
    double v = 0;
    ASSERT_TRUE(printed_objective("Status: Optimal\nOptimal objective: 12.5\n", &v));
    EXPECT_EQ(v, 12.5);
    ASSERT_TRUE(printed_objective("x = 3\ny = 4\nObjective value: $1,234.50\n", &v));
    EXPECT_EQ(v, 1234.5);
    // COPT's status line: no number, never 0
    EXPECT_FALSE(printed_objective("Status: Infeasible Objective: -\n", &v));
    // "the last number on a line with 'optimal'" picked 61 here: neither line names the objective
    EXPECT_FALSE(
        printed_objective("Maximized meals: 513.0\nOptimal vehicle usage: bikes = 26.0, scooters = 61.0\n", &v));
    // a caught exception's code is not an objective
    EXPECT_FALSE(printed_objective("Error code 42: objective not available\n", &v));
    EXPECT_FALSE(printed_objective("", &v));
}

TEST(EvalPrinted, PrintedResultsAloneAreNoSolve) {
    // a program that exited 0 and printed results in every form the old parser took, with no solve recorded
    sandbox_result r;
    r.started = true;
    r.exit_code = 0;
    ground_truth t;
    t.kind = truth_kind::objective;
    t.value = 42;
    for (const char* out : {"Optimal objective: 42\n", "optimal_value = 42.0\n", "Status: Optimal\nObjective: 42\n",
                            "Error code 42\n", "Total cost: 42\n", "42\n"}) {
        r.out = out;
        const exec_outcome o = interpret_python_run(r, channel_log{});
        EXPECT_EQ(o.status, "no_solve") << out;
        EXPECT_FALSE(o.has_objective) << out;
        EXPECT_EQ(judge_outcome(t, o, objective_judge{}).why, failure::no_solve) << out;
    }
    // the harness's own record of a solve is what counts
    channel_log log;
    log.solves.push_back({"gurobipy", "optimal", "clp", "", true, 42.0});
    r.out = "Optimal objective: 7\n";
    const exec_outcome o = interpret_python_run(r, log);
    EXPECT_EQ(o.status, "optimal");
    EXPECT_EQ(o.objective, 42.0);
    EXPECT_EQ(o.printed_objective, 7.0);  // kept as a diagnostic only
    EXPECT_TRUE(judge_outcome(t, o, objective_judge{}).correct);
    // an old result whose objective came from stdout is re-judged no_solve
    exec_outcome old;
    old.artefact = "python";
    old.status = "optimal";
    old.has_objective = true;
    old.objective = 42;
    old.source = "stdout";
    EXPECT_EQ(judge_outcome(t, old, objective_judge{}).why, failure::no_solve);
}
