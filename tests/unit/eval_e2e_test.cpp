// trex eval end to end through a real HTTP server on loopback that serves canned completions in the OpenAI
// chat-completions format: oracle answers written from the reference LPs of `trex data build`'s held-out sets (LP,
// MathProg, PuLP and gurobipy-shim forms) score 100%; the same answers with a corrupted coefficient fail; renamed
// and reordered LP files pass the structural judge and structurally changed ones fail; retries, n samples and the
// API key header; an interrupted run (SIGKILL) resumes from the completion cache without re-querying finished items.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "support/test_support.hpp"
#include "trex/base/timer.hpp"
#include "trex/eval/backend.hpp"
#include "trex/eval/oracle.hpp"
#include "trex/eval/run.hpp"
#include "trex/optmodel/data_build/data_build.hpp"

namespace fs = std::filesystem;
using namespace trex::eval;

extern char** environ;

namespace {

// An OpenAI-compatible server on 127.0.0.1 that answers each request with the canned completion of the item whose
// question the user message contains.
class canned_server {
   public:
    struct item {
        std::string question, completion;
    };
    // cert/key: PEM files for https ("" = http).
    explicit canned_server(std::vector<item> items, const std::string& cert = "", const std::string& key = "")
        : items_(std::move(items)), https_(!cert.empty()) {
        if (https_) srv_ = std::make_unique<httplib::SSLServer>(cert.c_str(), key.c_str());
        else srv_ = std::make_unique<httplib::Server>();
        srv_->Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
            handle(req, res);
        });
        port_ = srv_->bind_to_any_port("127.0.0.1");
        thread_ = std::thread([this] { srv_->listen_after_bind(); });
        while (!srv_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ~canned_server() {
        srv_->stop();
        thread_.join();
    }
    std::string url() const { return (https_ ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(port_); }
    // Requests per question index (successful answers only).
    std::map<int, int> served() {
        std::lock_guard<std::mutex> l(mu_);
        return served_;
    }
    long total_served() {
        std::lock_guard<std::mutex> l(mu_);
        long n = 0;
        for (auto& [k, v] : served_) n += v;
        return n;
    }
    std::set<std::string> auth_headers() {
        std::lock_guard<std::mutex> l(mu_);
        return auth_;
    }
    std::atomic<int> fail_first{0};   // the first fail_first requests of each item get 503 (then 429)
    std::atomic<int> delay_ms{0};     // per request
    std::atomic<long> failures{0};

   private:
    void handle(const httplib::Request& req, httplib::Response& res) {
        if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms.load()));
        nlohmann::json body;
        try {
            body = nlohmann::json::parse(req.body);
        } catch (const std::exception&) {
            res.status = 400;
            return;
        }
        std::string user;
        for (const auto& m : body["messages"])
            if (m["role"] == "user") user = m["content"].get<std::string>();
        int idx = -1;
        for (size_t i = 0; i < items_.size(); i++)
            if (user.find(items_[i].question) != std::string::npos) idx = (int)i;
        {
            std::lock_guard<std::mutex> l(mu_);
            if (req.has_header("Authorization")) auth_.insert(req.get_header_value("Authorization"));
            if (idx >= 0 && attempts_[idx]++ < fail_first) {
                failures++;
                res.status = attempts_[idx] == 1 ? 503 : 429;
                res.set_header("Retry-After", "0");
                res.set_content("{\"error\": \"try again\"}", "application/json");
                return;
            }
            if (idx >= 0) served_[idx]++;
        }
        if (idx < 0) {
            res.status = 404;
            res.set_content("{\"error\": \"unknown question\"}", "application/json");
            return;
        }
        const int n = body.value("n", 1);
        nlohmann::json choices = nlohmann::json::array();
        for (int i = 0; i < n; i++)
            choices.push_back({{"index", i},
                               {"message", {{"role", "assistant"}, {"content", items_[(size_t)idx].completion}}},
                               {"finish_reason", "stop"}});
        const nlohmann::json out = {{"id", "cmpl-test"}, {"object", "chat.completion"}, {"model", body["model"]},
                                    {"choices", choices},
                                    {"usage", {{"prompt_tokens", 10}, {"completion_tokens", 20}}}};
        res.set_content(out.dump(), "application/json");
    }
    std::vector<item> items_;
    bool https_ = false;
    std::unique_ptr<httplib::Server> srv_;
    int port_ = 0;
    std::thread thread_;
    std::mutex mu_;
    std::map<int, int> served_, attempts_;
    std::set<std::string> auth_;
};

class EvalEndToEnd : public ::testing::Test {
   protected:
    static void SetUpTestSuite() {
        dir_ = (fs::temp_directory_path() / ("trex_eval_e2e_" + std::to_string(getpid()))).string();
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        const std::string cfg_path = dir_ + "/data.json";
        std::ofstream(cfg_path) << R"({"seed": 5, "output_dir": ")" << dir_ << R"(/ordata",
            "sft": {"count": 6}, "test": {"count": 12}, "cpt": {"documents": 0, "resources": false},
            "python": "off", "workers": 2})";
        const trex::optmodel::build_config cfg = trex::optmodel::parse_build_config(cfg_path);
        trex::optmodel::run_build(cfg, false, false);
        for (const char* r : {"dp", "dt", "dps"}) benches_.push_back({dir_ + "/ordata/test/" + r + ".jsonl", r});
    }
    static void TearDownTestSuite() { fs::remove_all(dir_); }

    // Items of all three held-out sets, as the harness reads them.
    static std::vector<eval_item> all_items() {
        std::vector<eval_item> out;
        for (const auto& b : benches_) {
            load_options lo;
            lo.name = b.name;
            load_report rep;
            for (auto& it : load_benchmark(b.path, lo, &rep)) out.push_back(std::move(it));
        }
        return out;
    }

    // Canned server items: oracle completions of a form and mutation.
    static std::vector<canned_server::item> canned(oracle_form f, oracle_mutation m, long* written = nullptr) {
        const auto items = all_items();
        oracle_report rep;
        const auto lines = make_oracle_completions(items, f, m, 11, &rep);
        std::map<std::string, std::string> by_id;
        for (const auto& l : lines) by_id[l.id] = l.completion;
        std::vector<canned_server::item> out;
        for (const auto& it : items)
            if (by_id.count(it.id)) out.push_back({it.question, by_id[it.id]});
        if (written) *written = rep.written;
        return out;
    }

    static run_options options(const std::string& out) {
        run_options o;
        o.benches = benches_;
        o.out_dir = dir_ + "/" + out;
        o.progress = false;
        o.workers = 2;
        o.exec = default_exec_config();
        o.exec.trex_bin = trex::test::trex_binary();
        o.exec.limits.wall_s = 30;
        o.exec.limits.cpu_s = 30;
        return o;
    }

    static openai_options endpoint(const canned_server& s) {
        openai_options o;
        o.url = s.url();
        o.model = "canned-oracle";
        o.concurrency = 4;
        o.retries = 3;
        o.backoff_s = 0.01;
        o.timeout_s = 30;
        return o;
    }

    static std::string dir_;
    static std::vector<bench_spec> benches_;
};

std::string EvalEndToEnd::dir_;
std::vector<bench_spec> EvalEndToEnd::benches_;

long outcome(const run_result& r, failure f) { return r.summary.micro.outcomes[(size_t)f]; }

}  // namespace

TEST_F(EvalEndToEnd, OracleAnswersScoreFullMarksInEveryForm) {
    const long n_items = (long)all_items().size();
    ASSERT_EQ(n_items, 12);
    const bool python = !default_exec_config().python.empty();
    for (oracle_form f : {oracle_form::lp, oracle_form::mathprog, oracle_form::mps, oracle_form::pulp,
                          oracle_form::gurobipy}) {
        if ((f == oracle_form::pulp || f == oracle_form::gurobipy) && !python) {
            std::printf("skipping the %s form: no python with pulp (scripts/setup.sh)\n", oracle_form_name(f));
            continue;
        }
        canned_server srv(canned(f, oracle_mutation::none));
        ::setenv("TREX_TEST_API_KEY", "sk-test-123", 1);
        openai_options ep = endpoint(srv);
        ep.api_key_env = "TREX_TEST_API_KEY";
        auto b = make_openai_backend(ep);
        const run_result r = run_eval(options(std::string("oracle-") + oracle_form_name(f)), *b);
        ::unsetenv("TREX_TEST_API_KEY");
        EXPECT_EQ(r.items, n_items);
        EXPECT_EQ(r.generated, n_items);
        EXPECT_EQ(r.backend_errors, 0);
        EXPECT_EQ(r.summary.micro.correct, n_items) << oracle_form_name(f) << "\n" << format_summary(r);
        EXPECT_DOUBLE_EQ(r.summary.macro_pass1, 1.0) << oracle_form_name(f);
        EXPECT_EQ(r.summary.benchmark.size(), 3u);
        EXPECT_EQ(srv.auth_headers(), std::set<std::string>{"Bearer sk-test-123"});
        for (const char* file : {"results.jsonl", "summary.json", "report.md", "report.html", "completions.jsonl"})
            EXPECT_TRUE(fs::exists(r.out_dir + "/" + file)) << file;
    }
}

TEST_F(EvalEndToEnd, CorruptedCoefficientsFail) {
    const bool python = !default_exec_config().python.empty();
    for (oracle_form f : {oracle_form::lp, oracle_form::mathprog, oracle_form::pulp, oracle_form::gurobipy}) {
        if ((f == oracle_form::pulp || f == oracle_form::gurobipy) && !python) continue;
        long written = 0;
        canned_server srv(canned(f, oracle_mutation::coef, &written));
        EXPECT_GE(written, 10) << "the coef mutation should be possible on nearly every item";
        auto b = make_openai_backend(endpoint(srv));
        const run_result r = run_eval(options(std::string("coef-") + oracle_form_name(f)), *b);
        EXPECT_EQ(r.summary.micro.correct, 0) << oracle_form_name(f) << "\n" << format_summary(r);
        EXPECT_EQ(outcome(r, failure::wrong_objective) + outcome(r, failure::infeasible), written)
            << format_summary(r);
    }
}

TEST_F(EvalEndToEnd, StructureJudgeAcceptsRenamingAndRejectsStructuralChanges) {
    auto run_structure = [&](oracle_mutation m, const std::string& out) {
        canned_server srv(canned(oracle_form::lp, m));
        auto b = make_openai_backend(endpoint(srv));
        run_options o = options(out);
        o.load.structure_when_possible = true;
        return run_eval(o, *b);
    };
    const run_result renamed = run_structure(oracle_mutation::rename, "structure-rename");
    EXPECT_EQ(renamed.summary.micro.correct, 12) << format_summary(renamed);
    const run_result changed = run_structure(oracle_mutation::structure, "structure-changed");
    EXPECT_EQ(changed.summary.micro.correct, 0) << format_summary(changed);
    EXPECT_EQ(outcome(changed, failure::structure_mismatch), 12) << format_summary(changed);
}

TEST_F(EvalEndToEnd, RetriesOnOverloadAndSamplesAndPassAtK) {
    canned_server srv(canned(oracle_form::lp, oracle_mutation::none));
    srv.fail_first = 2;  // 503 then 429, each with Retry-After: 0
    auto b = make_openai_backend(endpoint(srv));
    run_options o = options("retries");
    o.samples = 3;
    o.ks = {1, 2, 3};
    const run_result r = run_eval(o, *b);
    EXPECT_EQ(r.samples, 36);
    EXPECT_EQ(r.backend_errors, 0);
    EXPECT_EQ(srv.failures.load(), 24);
    EXPECT_EQ(r.summary.micro.correct, 36) << format_summary(r);
    EXPECT_DOUBLE_EQ(r.summary.micro.pass_k.at(3), 1.0);
    // retries exhausted: recorded as backend errors, the run still finishes
    canned_server down(canned(oracle_form::lp, oracle_mutation::none));
    down.fail_first = 100;
    openai_options ep = endpoint(down);
    ep.retries = 1;
    auto b2 = make_openai_backend(ep);
    const run_result r2 = run_eval(options("retries-exhausted"), *b2);
    EXPECT_EQ(outcome(r2, failure::backend_error), 12);
    // nothing listening at all
    openai_options gone = ep;
    gone.url = "http://127.0.0.1:1";
    auto b3 = make_openai_backend(gone);
    const run_result r3 = run_eval(options("no-server"), *b3);
    EXPECT_EQ(outcome(r3, failure::backend_error), 12);
}

TEST_F(EvalEndToEnd, InterruptedRunResumesFromTheCache) {
    canned_server srv(canned(oracle_form::lp, oracle_mutation::none));
    srv.delay_ms = 150;
    const std::string out = dir_ + "/resume";
    std::vector<std::string> args = {trex::test::trex_binary(), "eval", "run", "--backend", "openai", "--url",
                                     srv.url(), "--model", "canned", "--concurrency", "1", "--out", out,
                                     "--no-progress", "--workers", "1"};
    for (const auto& b : benches_) {
        args.push_back("--bench");
        args.push_back(b.name + "=" + b.path);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    ASSERT_EQ(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    const double t0 = trex::now_seconds();
    while (srv.total_served() < 5 && trex::now_seconds() - t0 < 60)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ::kill(pid, SIGKILL);
    int st = 0;
    ::waitpid(pid, &st, 0);
    ASSERT_TRUE(WIFSIGNALED(st)) << "the run finished before it was interrupted";
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the killed run's request in flight completes
    const auto served_before = srv.served();
    // what the cache holds (a line per finished completion; a torn last line is ignored)
    std::set<std::string> cached_ids;
    {
        std::ifstream in(out + "/completions.jsonl");
        std::string line;
        while (std::getline(in, line)) {
            try {
                cached_ids.insert(nlohmann::json::parse(line).at("id").get<std::string>());
            } catch (const std::exception&) {
            }
        }
    }
    ASSERT_GE(cached_ids.size(), 4u);
    ASSERT_LT(cached_ids.size(), 12u);
    // resume in-process with the same backend identity (same URL and model)
    srv.delay_ms = 0;
    openai_options ep = endpoint(srv);
    ep.model = "canned";
    auto b = make_openai_backend(ep);
    run_options o = options("resume");
    const run_result r = run_eval(o, *b);
    EXPECT_EQ(r.cached, (long)cached_ids.size());
    EXPECT_EQ(r.generated, 12 - (long)cached_ids.size());
    EXPECT_EQ(r.summary.micro.correct, 12) << format_summary(r);
    // the second run asked only for items the cache did not have
    const auto served_after = srv.served();
    const auto items = all_items();
    const auto can = canned(oracle_form::lp, oracle_mutation::none);
    for (const auto& it : items) {
        int idx = -1;
        for (size_t i = 0; i < can.size(); i++)
            if (can[i].question == it.question) idx = (int)i;
        ASSERT_GE(idx, 0);
        const int before = served_before.count(idx) ? served_before.at(idx) : 0;
        const int after = served_after.count(idx) ? served_after.at(idx) : 0;
        if (cached_ids.count(it.id)) EXPECT_EQ(after, before) << it.id << " was re-queried";
        else EXPECT_EQ(after, before + 1) << it.id;
    }
    // a third run is all cache
    const run_result r3 = run_eval(o, *b);
    EXPECT_EQ(r3.cached, 12);
    EXPECT_EQ(r3.generated, 0);
    EXPECT_EQ(srv.total_served(), [&] {
        long n = 0;
        for (auto& [k, v] : served_after) n += v;
        return n;
    }());
}

TEST_F(EvalEndToEnd, HttpsWithItsCertificateOrInsecure) {
    const std::string d = dir_ + "/tls";
    fs::create_directories(d);
    const auto gen = trex::test::run_command(
        "openssl req -x509 -newkey rsa:2048 -nodes -keyout " + d + "/key.pem -out " + d +
        "/cert.pem -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1");
    if (gen.exit_code != 0) GTEST_SKIP() << "no openssl command to make a test certificate: " << gen.out;
    canned_server srv(canned(oracle_form::lp, oracle_mutation::none), d + "/cert.pem", d + "/key.pem");
    ASSERT_EQ(srv.url().rfind("https://", 0), 0u);
    openai_options ep = endpoint(srv);
    ep.retries = 0;
    ep.ca_cert = d + "/cert.pem";  // verified against the server's own certificate
    auto b = make_openai_backend(ep);
    run_options o = options("https");
    o.limit = 2;
    EXPECT_EQ(run_eval(o, *b).summary.micro.correct, 6) << "2 items from each of the 3 sets";
    // the system's CAs do not know it: every request fails verification and is recorded, nothing hangs
    ep.ca_cert.clear();
    auto strict = make_openai_backend(ep);
    const run_result r = run_eval(options("https-untrusted"), *strict);
    EXPECT_EQ(outcome(r, failure::backend_error), 12);
    // --insecure skips verification
    ep.insecure = true;
    auto loose = make_openai_backend(ep);
    o.out_dir = dir_ + "/https-insecure";
    EXPECT_EQ(run_eval(o, *loose).summary.micro.correct, 6);
}
