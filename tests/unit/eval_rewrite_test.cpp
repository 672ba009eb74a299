// `trex data rewrite` (the LLM-in-the-loop data stage) against a loopback stub endpoint that answers with canned good
// and bad rewrites and formalisations: every kept sample's optimum re-derived from the model's LP file, every drop
// counted under its reason, one repair round, nothing half-written; the statement gate on its own.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/eval/rewrite.hpp"
#include "trex/optmodel/data_build/data_build.hpp"
#include "trex/optmodel/ir/format.hpp"
#include "trex/optmodel/ir/writers.hpp"
#include "trex/optmodel/render/render.hpp"

using namespace trex::eval;
namespace om = trex::optmodel;
namespace fs = std::filesystem;

namespace {

// An OpenAI-compatible stub on 127.0.0.1: reply(messages) gives the HTTP status and the completion.
class stub_endpoint {
   public:
    using reply_fn = std::function<std::pair<int, std::string>(const nlohmann::json& messages)>;
    explicit stub_endpoint(reply_fn fn) : fn_(std::move(fn)) {
        srv_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
            const nlohmann::json body = nlohmann::json::parse(req.body);
            auto [status, text] = fn_(body["messages"]);
            res.status = status;
            if (status != 200) {
                res.set_content(R"({"error": {"message": "stub failure"}})", "application/json");
                return;
            }
            const nlohmann::json out = {
                {"id", "stub"},
                {"object", "chat.completion"},
                {"choices",
                 {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", "stop"}}}},
                {"usage", {{"prompt_tokens", 7}, {"completion_tokens", 3}}}};
            res.set_content(out.dump(), "application/json");
        });
        port_ = srv_.bind_to_any_port("127.0.0.1");
        thread_ = std::thread([this] { srv_.listen_after_bind(); });
        while (!srv_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ~stub_endpoint() {
        srv_.stop();
        thread_.join();
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

   private:
    reply_fn fn_;
    httplib::Server srv_;
    int port_ = 0;
    std::thread thread_;
};

// What the stub does for one sample.
enum class behaviour { good, repaired, always_wrong, number_lost, leaks, http_error, extra_number };
constexpr int behaviour_count = 7;

struct canned {
    behaviour how;
    std::string data_json;  // what the back-translation prompt shows of the instance
    std::string statement;  // the stub's rewrite
    std::string right_lp, wrong_lp;
};

om::instance regenerate(const nlohmann::ordered_json& meta) {
    om::gen_request rq;
    rq.seed = meta["seed"].get<uint64_t>();
    rq.difficulty = meta["difficulty"].get<int>();
    return om::generate(om::find_family(meta["family"].get<std::string>()), rq);
}

// Replaces, in text, the one number of the data that occurs once in the data and once in the text by "several".
void drop_one_number(std::string* text, const nlohmann::ordered_json& data) {
    std::vector<double> values;
    std::function<void(const nlohmann::ordered_json&)> walk = [&](const nlohmann::ordered_json& j) {
        if (j.is_number()) values.push_back(j.get<double>());
        if (j.is_array() || j.is_object())
            for (const auto& v : j) walk(v);
    };
    walk(data);
    auto is_num = [](char ch) { return std::isdigit((unsigned char)ch) || ch == '.' || ch == ','; };
    for (double v : values) {
        if (std::count(values.begin(), values.end(), v) != 1) continue;
        const std::string w = om::format_value(v);
        std::vector<size_t> at;
        for (size_t p = text->find(w); p != std::string::npos; p = text->find(w, p + 1))
            if ((p == 0 || !is_num((*text)[p - 1])) &&
                (p + w.size() >= text->size() || !std::isdigit((unsigned char)(*text)[p + w.size()])))
                at.push_back(p);
        if (at.size() != 1) continue;
        text->replace(at[0], w.size(), "several");
        return;
    }
    FAIL() << "no number to drop in " << *text;
}

canned make_canned(const nlohmann::ordered_json& record, behaviour how) {
    const auto& meta = record["meta"];
    const om::family& f = om::find_family(meta["family"].get<std::string>());
    const om::instance in = regenerate(meta);
    canned c{how, in.data.dump(1), "", om::write_lp(in.m), ""};
    // another phrasing of the same instance: every number told
    c.statement = om::render_problem(f, in, om::representation::dp, false, meta["seed"].get<uint64_t>() + 17);
    while (!c.statement.empty() && std::isspace((unsigned char)c.statement.back())) c.statement.pop_back();
    if (how == behaviour::number_lost) drop_one_number(&c.statement, in.data);
    if (how == behaviour::leaks)
        c.statement += " The best plan is worth " + om::format_value(meta["objective"].get<double>()) + ".";
    if (how == behaviour::extra_number) c.statement += " The business opened in 1987.";
    om::model wrong = in.m;  // every objective coefficient doubled: the optimum doubles
    for (auto& v : wrong.vars) v.obj *= 2;
    c.wrong_lp = om::write_lp(wrong);
    return c;
}

std::string last_user(const nlohmann::json& messages) {
    std::string u;
    for (const auto& m : messages)
        if (m["role"] == "user") u = m["content"].get<std::string>();
    return u;
}

std::string lp_block(const std::string& lp) {
    return "<think>The model follows.</think>\n```lp\n" + lp + "```\n";
}

std::vector<nlohmann::ordered_json> read_jsonl(const std::string& path) {
    std::vector<nlohmann::ordered_json> out;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line))
        if (!line.empty()) out.push_back(nlohmann::ordered_json::parse(line));
    return out;
}

// A small build of DP formulation samples (all optimal).
std::string small_build(const std::string& dir) {
    const std::string cfg = dir + "/cfg.json";
    std::ofstream(cfg) << R"({"seed": 5, "output_dir": ")" << dir << R"(/build",
        "sft": {"count": 14, "families": ["transportation", "knapsack_01", "diet", "product_mix", "blending",
                "production_planning", "facility_uncapacitated"],
                "representations": {"DP": 1}, "categories": {"formulation": 1}, "difficulty": [1, 2],
                "infeasible_share": 0, "unbounded_share": 0},
        "cpt": {"documents": 0, "resources": false}, "python": "off", "workers": 1})";
    om::run_build(om::parse_build_config(cfg), false, false);
    return dir + "/build";
}

}  // namespace

TEST(DataRewrite, StubEndpointKeepsOnlyMatchingOptimaAndCountsEveryDrop) {
    const std::string dir = trex::test::scratch_dir("rewrite_stub");
    const std::string build = small_build(dir);
    const auto samples = read_jsonl(build + "/sft.jsonl");
    ASSERT_EQ(samples.size(), 14u);
    std::vector<canned> cans;
    for (size_t i = 0; i < samples.size(); i++)
        cans.push_back(make_canned(samples[i], (behaviour)(i % behaviour_count)));

    std::mutex mu;
    std::map<std::string, int> wrong_given;  // forward answers per statement
    stub_endpoint stub([&](const nlohmann::json& messages) -> std::pair<int, std::string> {
        const std::string user = last_user(messages);
        const std::string first = messages[0]["content"].get<std::string>();
        for (const canned& c : cans) {
            if (first.find(c.data_json) != std::string::npos) {  // back-translation
                if (c.how == behaviour::http_error) return {500, ""};
                return {200, "<think>A story about it.</think>\n" + c.statement};
            }
            if (first.find(c.statement) != std::string::npos) {  // formalisation (and its repair)
                std::lock_guard<std::mutex> lk(mu);
                const int n = wrong_given[c.statement]++;
                if (c.how == behaviour::always_wrong || (c.how == behaviour::repaired && n == 0))
                    return {200, lp_block(c.wrong_lp)};
                return {200, lp_block(c.right_lp)};
            }
        }
        return {404, ""};
    });

    openai_options oo;
    oo.url = stub.url();
    oo.model = "stub";
    oo.retries = 0;
    oo.api_key_env = "";
    auto b = make_openai_backend(oo);
    exec_config ec = default_exec_config();
    ec.trex_bin = trex::test::trex_binary();
    rewrite_options opt;
    opt.build_dir = build;
    opt.output_dir = dir + "/rewritten";
    opt.concurrency = 2;
    const rewrite_report r = run_rewrite(opt, *b, ec);

    EXPECT_EQ(r.samples, 14);
    EXPECT_EQ(r.kept, 4);
    EXPECT_EQ(r.kept_first, 2);
    EXPECT_EQ(r.kept_repair, 2);
    const std::map<std::string, long> want = {{"formalisation_wrong_objective", 2},
                                              {"numbers_missing", 2},
                                              {"leaks_optimum", 2},
                                              {"backend_error", 2},
                                              {"numbers_extra", 2}};
    EXPECT_EQ(r.drops, want);

    // kept samples: the stub's statement, then our task request; the verified answer unchanged
    const auto kept = read_jsonl(opt.output_dir + "/sft.jsonl");
    ASSERT_EQ(kept.size(), 4u);
    for (const auto& k : kept) {
        const std::string src = k["meta"]["rewrite"]["source"].get<std::string>();
        const auto orig = std::find_if(samples.begin(), samples.end(), [&](const auto& s) { return s["id"] == src; });
        ASSERT_NE(orig, samples.end()) << src;
        const size_t i = (size_t)(orig - samples.begin());
        EXPECT_TRUE(cans[i].how == behaviour::good || cans[i].how == behaviour::repaired) << src;
        EXPECT_EQ(k["meta"]["rewrite"]["round"].get<int>(), cans[i].how == behaviour::good ? 1 : 2);
        EXPECT_EQ(k["id"].get<std::string>(), src + "-rw");
        const std::string q = k["messages"][0]["content"].get<std::string>();
        const auto& meta = (*orig)["meta"];
        const om::family& f = om::find_family(meta["family"].get<std::string>());
        const om::instance in = regenerate(meta);
        const std::string oq = (*orig)["messages"][0]["content"].get<std::string>();
        const std::string request =
            oq.substr(om::render_problem(f, in, om::representation::dp, false, meta["seed"].get<uint64_t>()).size());
        EXPECT_EQ(q, cans[i].statement + "\n" + request);
        EXPECT_EQ(k["messages"][1], (*orig)["messages"][1]);
    }
    const auto drops = read_jsonl(opt.output_dir + "/drops.jsonl");
    EXPECT_EQ(drops.size(), 10u);
    const auto report = nlohmann::json::parse(std::ifstream(opt.output_dir + "/report.json"));
    EXPECT_EQ(report["kept_after_repair"], 2);
    EXPECT_EQ(report["requests"].get<long>(), r.requests);
    // an existing output directory is refused without --force, and left as it was
    EXPECT_THROW(run_rewrite(opt, *b, ec), trex::error);
    EXPECT_EQ(read_jsonl(opt.output_dir + "/sft.jsonl").size(), 4u);
    fs::remove_all(dir);
}

TEST(DataRewrite, StatementGate) {
    const nlohmann::ordered_json data = {
        {"sites", {"Site 9", "Site 12"}}, {"cost", {{"Site 9", 40}, {"Site 12", 2.5}}}, {"budget", 300}};
    std::string d;
    EXPECT_EQ(gate_statement("  \n ", data, true, 95, &d), "empty");
    const std::string good = "There are 2 sites. Site 9 costs $40 and Site 12 costs $2.5; the budget is $300.";
    EXPECT_EQ(gate_statement(good, data, true, 95, &d), "") << d;
    EXPECT_EQ(gate_statement("Site 9 costs $40 and Site 12 costs $2.5.", data, true, 95, &d), "numbers_missing");
    EXPECT_NE(d.find("300"), std::string::npos) << d;
    EXPECT_EQ(gate_statement(good + " The best choice costs 95.", data, true, 95, &d), "leaks_optimum");
    EXPECT_EQ(gate_statement(good + " Prices rose 7 times.", data, true, 95, &d), "numbers_extra");
    EXPECT_NE(d.find("7"), std::string::npos) << d;
    // with no optimum (an infeasible sample) the same number is just extra
    EXPECT_EQ(gate_statement(good + " The best choice costs 95.", data, false, 0, &d), "numbers_extra");
}

TEST(DataRewrite, CliErrorsNameTheCulprit) {
    const std::string dir = trex::test::scratch_dir("rewrite_cli");
    auto r = trex::test::run_command(trex::test::trex_binary() + " data rewrite " + dir + "/nope --out " + dir +
                                     "/o --url http://127.0.0.1:9 --model m --retries 0 --no-progress");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.out.find(dir + "/nope/sft.jsonl"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir + "/o"));
    fs::create_directories(dir + "/b");
    std::ofstream(dir + "/b/sft.jsonl") << "{\"messages\": [], \"meta\": {}}\nnot json\n";
    r = trex::test::run_command(trex::test::trex_binary() + " data rewrite " + dir + "/b --out " + dir +
                                "/o --url http://127.0.0.1:9 --model m --retries 0 --no-progress");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.out.find("sft.jsonl: line 1"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir + "/o"));
    fs::remove_all(dir);
}
