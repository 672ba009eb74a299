#include "trex/bench/bench_serve.hpp"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "trex/base/error.hpp"
#include "trex/serve/server.hpp"

namespace trex::bench {

namespace {

using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double percentile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t i = std::min(v.size() - 1, (size_t)std::ceil(q * (double)v.size()) - (q > 0 ? 1 : 0));
    return v[i];
}

// What one streamed request saw: its first-token time, per-token gaps, its token count, and whether it completed.
struct stream_record {
    bool ok = false;
    double ttft = 0;
    std::vector<double> gaps;
    int64_t tokens = 0;
    std::string failure;  // why it is not ok: the connection's error, an HTTP status and its body, a stream cut short
};

// One streaming request: reads the server-sent events as they arrive, timing the chunks that carry tokens.
stream_record one_request(httplib::Client& cli, const std::string& body) {
    stream_record rec;
    const auto t0 = clock_type::now();
    clock_type::time_point last;
    std::string pending;
    bool done = false;
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/completions";
    req.headers = {{"Content-Type", "application/json"}};
    req.body = body;
    req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
        pending.append(data, len);
        for (size_t end; (end = pending.find("\n\n")) != std::string::npos;) {
            const std::string event = pending.substr(0, end);
            pending.erase(0, end + 2);
            if (event.rfind("data: ", 0) != 0) continue;
            const std::string payload = event.substr(6);
            if (payload == "[DONE]") {
                done = true;
                continue;
            }
            const nlohmann::json j = nlohmann::json::parse(payload, nullptr, false);
            if (j.is_discarded() || !j.contains("choices") || j["choices"].empty()) continue;
            const nlohmann::json& lp = j["choices"][0]["logprobs"];
            const int64_t n = lp.is_object() && lp.contains("tokens") ? (int64_t)lp["tokens"].size() : 0;
            if (n == 0) continue;
            const auto now = clock_type::now();
            if (rec.tokens == 0) {
                rec.ttft = std::chrono::duration<double>(now - t0).count();
                for (int64_t k = 1; k < n; k++) rec.gaps.push_back(0);
            } else {
                const double gap = std::chrono::duration<double>(now - last).count() / (double)n;
                for (int64_t k = 0; k < n; k++) rec.gaps.push_back(gap);
            }
            last = now;
            rec.tokens += n;
        }
        return true;
    };
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    const bool sent = cli.send(req, res, err);
    rec.ok = sent && res.status == 200 && done;
    if (!sent)
        rec.failure = "connection: " + httplib::to_string(err);
    else if (res.status != 200)
        rec.failure = fmt::format("HTTP {}: {}", res.status, res.body.substr(0, 200));
    else if (!done)
        rec.failure = fmt::format("the stream ended without [DONE] after {} tokens", rec.tokens);
    return rec;
}

serve_level run_level(int port, int concurrency, const bench_serve_options& opt, const std::string& prompt) {
    const std::string body = nlohmann::json{{"model", "trex"},   {"prompt", prompt}, {"max_tokens", opt.max_tokens},
                                            {"temperature", 0},  {"stream", true},   {"logprobs", 0},
                                            {"ignore_eos", true}}
                                 .dump();
    std::atomic<int64_t> next{0};
    std::mutex mu;
    std::vector<stream_record> records;
    const auto t0 = clock_type::now();
    std::vector<std::thread> clients;
    for (int c = 0; c < concurrency; c++)
        clients.emplace_back([&] {
            httplib::Client cli("127.0.0.1", port);
            cli.set_read_timeout(600, 0);
            cli.set_tcp_nodelay(true);
            cli.set_keep_alive(opt.keep_alive);
            while (next++ < opt.requests) {
                stream_record rec = one_request(cli, body);
                std::lock_guard<std::mutex> lock(mu);
                records.push_back(std::move(rec));
            }
        });
    for (std::thread& t : clients) t.join();
    serve_level lv;
    lv.concurrency = concurrency;
    lv.seconds = since(t0);
    std::vector<double> ttft, gaps;
    for (const stream_record& r : records) {
        lv.requests++;
        if (!r.ok || r.tokens != opt.max_tokens) {
            lv.errors++;
            const std::string why =
                r.ok ? fmt::format("{} tokens of {} streamed", r.tokens, opt.max_tokens) : r.failure;
            if (lv.first_error.empty()) lv.first_error = why;
            continue;
        }
        lv.tokens += r.tokens;
        ttft.push_back(r.ttft);
        gaps.insert(gaps.end(), r.gaps.begin(), r.gaps.end());
    }
    lv.requests_per_s = (double)(lv.requests - lv.errors) / lv.seconds;
    lv.decode_tokens_per_s = (double)lv.tokens / lv.seconds;
    lv.ttft_p50 = percentile(ttft, 0.5);
    lv.ttft_p99 = percentile(ttft, 0.99);
    lv.itl_p50 = percentile(gaps, 0.5);
    lv.itl_p99 = percentile(gaps, 0.99);
    return lv;
}

}  // namespace

bench_serve_result run_bench_serve(dsv4_model& model, const eval::text_codec& codec, const std::string& model_name,
                                   const bench_serve_options& opt) {
    TREX_CHECK(!opt.concurrency.empty() && opt.requests >= 1 && opt.max_tokens >= 1 && opt.prompt_len >= 1,
               "bench serve: --concurrency, --requests, --max-tokens and --prompt-len must be positive");
    for (int c : opt.concurrency) TREX_CHECK(c >= 1 && c <= 1024, "bench serve: concurrency {} outside [1, 1024]", c);
    serve::server_options so;
    so.port = 0;
    so.model_name = "trex";
    so.max_batch = *std::max_element(opt.concurrency.begin(), opt.concurrency.end());
    so.max_context = opt.prompt_len + opt.max_tokens + 64;
    so.http_threads = (int)so.max_batch + 8;
    so.interleave_prefill = opt.interleave_prefill;
    so.prefill_chunk = opt.prefill_chunk;
    so.speculative = opt.speculative;
    TREX_CHECK(!opt.speculative || model.config().has_mtp(), "bench serve: --speculative: the model has no MTP module");
    serve::server srv(model, codec, so);
    srv.bind();
    std::mt19937_64 rng(opt.seed);
    std::string prompt;
    for (int64_t i = 0; i < opt.prompt_len; i++) prompt += (char)('a' + (int)(rng() % 26));
    bench_serve_result r;
    r.model_name = model_name;
    r.prefill = opt.interleave_prefill ? "interleaved" : "separate";
    r.speculative = opt.speculative;
    // the clients on their own thread; the server's engine on this one (server::run)
    std::exception_ptr failure;
    std::thread clients([&] {
        try {
            for (int c : opt.concurrency) r.levels.push_back(run_level(srv.bound_port(), c, opt, prompt));
        } catch (...) {
            failure = std::current_exception();
        }
        srv.stop();
    });
    srv.run();
    clients.join();
    if (failure) std::rethrow_exception(failure);
    r.mtp_acceptance = srv.engine_stats().acceptance();
    const serve_level* lo = &r.levels.front();
    const serve_level* hi = &r.levels.front();
    const serve_level *one = nullptr, *eight = nullptr;
    for (const serve_level& lv : r.levels) {
        if (lv.concurrency < lo->concurrency) lo = &lv;
        if (lv.concurrency > hi->concurrency) hi = &lv;
        if (lv.concurrency == 1) one = &lv;
        if (lv.concurrency == 8) eight = &lv;
    }
    r.decode_scaling = lo->decode_tokens_per_s > 0 ? hi->decode_tokens_per_s / lo->decode_tokens_per_s : 0;
    r.itl_p99_ratio_8 = one && eight && one->itl_p99 > 0 ? eight->itl_p99 / one->itl_p99 : 0;
    return r;
}

nlohmann::json bench_serve_json(const bench_serve_result& r) {
    nlohmann::ordered_json j;
    j["model"] = r.model_name;
    nlohmann::ordered_json levels = nlohmann::ordered_json::array();
    for (const serve_level& lv : r.levels)
        levels.push_back({{"concurrency", lv.concurrency},
                          {"requests", lv.requests},
                          {"errors", lv.errors},
                          {"first_error", lv.first_error},
                          {"seconds", lv.seconds},
                          {"requests_per_s", lv.requests_per_s},
                          {"decode_tokens_per_s", lv.decode_tokens_per_s},
                          {"ttft_p50_s", lv.ttft_p50},
                          {"ttft_p99_s", lv.ttft_p99},
                          {"itl_p50_s", lv.itl_p50},
                          {"itl_p99_s", lv.itl_p99}});
    j["prefill"] = r.prefill;
    j["speculative"] = r.speculative;
    if (r.speculative) j["mtp_acceptance"] = r.mtp_acceptance;
    j["levels"] = levels;
    j["decode_scaling"] = r.decode_scaling;
    j["itl_p99_ratio_8_vs_1"] = r.itl_p99_ratio_8;
    return j;
}

std::string format_bench_serve(const bench_serve_result& r) {
    std::string s =
        fmt::format("bench serve: {} (loopback, streaming /v1/completions, prefill {}{})\n", r.model_name, r.prefill,
                    r.speculative ? fmt::format(", MTP speculation: acceptance {:.3f}", r.mtp_acceptance) : "");
    s += fmt::format("  {:>11} {:>8} {:>6} {:>10} {:>12} {:>10} {:>10} {:>10} {:>10}\n", "concurrency", "requests",
                     "errors", "req/s", "decode tok/s", "TTFT p50", "TTFT p99", "ITL p50", "ITL p99");
    for (const serve_level& lv : r.levels)
        s += fmt::format("  {:>11} {:>8} {:>6} {:>10.2f} {:>12.1f} {:>8.1f}ms {:>8.1f}ms {:>8.2f}ms {:>8.2f}ms\n",
                         lv.concurrency, lv.requests, lv.errors, lv.requests_per_s, lv.decode_tokens_per_s,
                         1e3 * lv.ttft_p50, 1e3 * lv.ttft_p99, 1e3 * lv.itl_p50, 1e3 * lv.itl_p99);
    for (const serve_level& lv : r.levels)
        if (lv.errors > 0)
            s += fmt::format("  concurrency {}: {} failed requests, the first: {}\n", lv.concurrency, lv.errors,
                             lv.first_error);
    s += fmt::format("  decode tokens/s, highest concurrency ÷ lowest: {:.2f}x", r.decode_scaling);
    if (r.itl_p99_ratio_8 > 0) s += fmt::format("; p99 inter-token latency at 8 ÷ at 1: {:.2f}x", r.itl_p99_ratio_8);
    return s + "\n";
}

}  // namespace trex::bench
