#include "trex/serve/server.hpp"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "trex/base/error.hpp"
#include "trex/infer/generator.hpp"
#include "trex/model/cache_size.hpp"
#include "trex/serve/openai_api.hpp"

namespace trex::serve {

namespace {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;

double seconds_between(clock_type::time_point a, clock_type::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

// A Prometheus histogram with fixed buckets (seconds).
class histogram {
   public:
    void observe(double v) {
        std::lock_guard<std::mutex> lock(mu_);
        for (size_t i = 0; i < bounds().size(); i++)
            if (v <= bounds()[i]) counts_[i]++;
        count_++;
        sum_ += v;
    }
    std::string text(const std::string& name, const std::string& help) const {
        std::lock_guard<std::mutex> lock(mu_);
        std::string s = fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
        for (size_t i = 0; i < bounds().size(); i++)
            s += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, bounds()[i], counts_[i]);
        s += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {}\n{}_count {}\n", name, count_, name, sum_, name,
                         count_);
        return s;
    }

   private:
    static const std::vector<double>& bounds() {
        static const std::vector<double> b{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
        return b;
    }
    mutable std::mutex mu_;
    std::vector<uint64_t> counts_ = std::vector<uint64_t>(13, 0);
    uint64_t count_ = 0;
    double sum_ = 0;
};

api_error error_of(int status, const std::string& type, const std::string& message, const std::string& param = "",
                   const std::string& code = "") {
    api_error e;
    e.status = status;
    e.type = type;
    e.message = message;
    e.param = param;
    e.code = code;
    return e;
}

// One Prometheus sample with its HELP and TYPE lines.
std::string metric_line(const char* name, const char* type, const char* help, double value) {
    return fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name, value);
}

// One HTTP request's samples, filled by the engine thread and read by the handler.
struct sample_channel {
    std::vector<infer::token_choice> tokens;
    bool done = false;
    infer::generation_result result;
    clock_type::time_point last_token;
};

struct request_group {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<sample_channel> samples;
    std::string error;     // the engine refused or failed it
    uint64_t version = 0;  // bumped with every token, finish or error (the streamer waits for a change)
    std::atomic<bool> cancelled{false};
    clock_type::time_point arrived = clock_type::now();
    bool all_done() const {
        for (const sample_channel& s : samples)
            if (!s.done) return false;
        return true;
    }
};

}  // namespace

// Connections waiting to be accepted. httplib's listen() queue is 5, compiled into Debian's libcpp-httplib (a
// CPPHTTPLIB_LISTEN_BACKLOG define here cannot change it); when dozens of clients connect at once it overflows, and
// clients lost requests to read errors. bind() calls listen() again on httplib's socket with this depth.
constexpr int kListenBacklog = 512;

struct server::impl {
    dsv4_model& model;
    const eval::text_codec& codec;
    server_options opt;
    httplib::Server http;
    int port = -1;
    int listen_fd = -1;  // httplib's listening socket (its socket-options hook records it)

    // the engine
    infer::generator gen;
    std::mutex mu;
    std::condition_variable cv;
    struct pending {
        std::shared_ptr<request_group> group;
        size_t index;
        infer::generation_request q;
    };
    std::deque<pending> inbox;
    std::vector<std::shared_ptr<request_group>> cancels;
    bool stopping = false;  // the engine ends when idle
    std::atomic<bool> draining{false};
    std::map<size_t, std::pair<std::shared_ptr<request_group>, size_t>> live;  // engine thread only
    std::vector<std::shared_ptr<request_group>> in_flight;                     // (mu) for the shutdown deadline
    std::thread stopper;

    // admission and metrics
    std::mutex admit_mu;
    double reserved_bytes = 0;
    std::mutex metrics_mu;
    std::map<std::pair<std::string, int>, uint64_t> requests;  // (endpoint, status) → count
    std::atomic<uint64_t> prompt_tokens{0}, completion_tokens{0};
    std::atomic<size_t> queue_gauge{0}, batch_gauge{0}, kv_gauge{0};
    histogram ttft, itl;
    std::mt19937_64 entropy{std::random_device{}()};
    std::atomic<uint64_t> next_id{1};

    impl(dsv4_model& m, const eval::text_codec& c, server_options o)
        : model(m), codec(c), opt(std::move(o)), gen(m, generator_options_of(m, c, opt)) {}

    static infer::generator_options generator_options_of(const dsv4_model& m, const eval::text_codec& c,
                                                         const server_options& o) {
        infer::generator_options g;
        g.max_batch = o.max_batch;
        g.max_context = o.max_context;
        g.prefill_chunk = o.prefill_chunk;
        g.interleave_prefill = o.interleave_prefill;
        g.speculative = o.speculative && m.config().has_mtp();
        g.detokenize = [&c](std::span<const int32_t> ids) { return c.decode({ids.begin(), ids.end()}); };
        return g;
    }

    // ---- the engine thread
    void engine_loop() {
        for (;;) {
            std::deque<pending> in;
            std::vector<std::shared_ptr<request_group>> drop;
            {
                std::unique_lock<std::mutex> lock(mu);
                cv.wait(lock, [&] { return stopping || !inbox.empty() || !cancels.empty() || !gen.idle(); });
                if (stopping && inbox.empty() && cancels.empty() && gen.idle()) break;
                in.swap(inbox);
                drop.swap(cancels);
            }
            for (pending& p : in) admit(p);
            for (auto& g : drop) cancel_group(g);
            try {
                if (!gen.idle()) gen.step();
            } catch (const std::exception& e) {  // nothing the engine can continue: fail everything live
                for (auto& [t, gi] : live) fail(gi.first, e.what());
                for (auto& [t, gi] : live) gen.cancel(t);
                live.clear();
            }
            for (auto& [t, r] : gen.take_finished()) finished(t, std::move(r));
            queue_gauge = gen.queue_length();
            batch_gauge = gen.batch_size();
            kv_gauge = gen.cache_bytes();
        }
    }

    void admit(pending& p) {
        if (p.group->cancelled) return;
        auto group = p.group;
        const size_t index = p.index;
        try {
            const size_t t = gen.submit(std::move(p.q),
                                        [this](size_t ticket, const infer::token_choice& c) { on_token(ticket, c); });
            live[t] = {group, index};
        } catch (const std::exception& e) {
            fail(group, e.what());
        }
    }

    void on_token(size_t ticket, const infer::token_choice& c) {
        auto it = live.find(ticket);
        if (it == live.end()) return;
        request_group& g = *it->second.first;
        const auto now = clock_type::now();
        {
            std::lock_guard<std::mutex> lock(g.mu);
            sample_channel& s = g.samples[it->second.second];
            if (s.tokens.empty())
                ttft.observe(seconds_between(g.arrived, now));
            else
                itl.observe(seconds_between(s.last_token, now));
            s.tokens.push_back(c);
            s.last_token = now;
            g.version++;
        }
        g.cv.notify_all();
    }

    void finished(size_t ticket, infer::generation_result r) {
        auto it = live.find(ticket);
        if (it == live.end()) return;
        request_group& g = *it->second.first;
        completion_tokens += r.tokens.size();
        prompt_tokens += (uint64_t)r.prompt_tokens;
        {
            std::lock_guard<std::mutex> lock(g.mu);
            sample_channel& s = g.samples[it->second.second];
            s.result = std::move(r);
            s.done = true;
            g.version++;
        }
        g.cv.notify_all();
        live.erase(it);
    }

    void fail(const std::shared_ptr<request_group>& g, const std::string& why) {
        {
            std::lock_guard<std::mutex> lock(g->mu);
            g->error = why;
            g->version++;
        }
        g->cv.notify_all();
    }

    void cancel_group(const std::shared_ptr<request_group>& g) {
        for (auto it = live.begin(); it != live.end();) {
            if (it->second.first == g) {
                gen.cancel(it->first);
                it = live.erase(it);
            } else {
                ++it;
            }
        }
    }

    // ---- handlers' side
    bool enqueue(const std::shared_ptr<request_group>& g, std::vector<infer::generation_request> qs) {
        std::lock_guard<std::mutex> lock(mu);
        if (stopping) return false;
        for (size_t i = 0; i < qs.size(); i++) inbox.push_back({g, i, std::move(qs[i])});
        in_flight.push_back(g);
        cv.notify_all();
        return true;
    }

    void cancel(const std::shared_ptr<request_group>& g) {
        g->cancelled = true;
        std::lock_guard<std::mutex> lock(mu);
        cancels.push_back(g);
        cv.notify_all();
    }

    void forget(const std::shared_ptr<request_group>& g) {
        std::lock_guard<std::mutex> lock(mu);
        std::erase(in_flight, g);
    }

    void count(const std::string& endpoint, int status) {
        std::lock_guard<std::mutex> lock(metrics_mu);
        requests[{endpoint, status}]++;
    }

    void send_error(httplib::Response& res, const std::string& endpoint, const api_error& e) {
        res.status = e.status;
        res.set_content(e.body().dump(), "application/json");
        count(endpoint, e.status);
    }

    static api_error unauthorised() {
        return error_of(401, "invalid_request_error", "invalid or missing API key (Authorization: Bearer …)", "",
                        "invalid_api_key");
    }

    static api_error shutting_down() { return error_of(503, "server_error", "the server is shutting down"); }

    bool authorised(const httplib::Request& req) const {
        if (opt.api_key.empty()) return true;
        return req.get_header_value("Authorization") == "Bearer " + opt.api_key;
    }

    // The cache a request can reach (bytes, fp32): its samples at prompt + max_tokens tokens.
    double cache_need(int64_t prompt_tokens_n, const api_request& r) const {
        const int64_t ctx = std::min(opt.max_context, prompt_tokens_n + r.max_tokens);
        return 4.0 * inference_cache_size(model.config(), ctx).total() * r.n;
    }

    std::vector<int32_t> prompt_of(const api_request& r) const {
        if (r.chat) {
            std::vector<eval::chat_message> m;
            for (const chat_turn& t : r.messages) m.push_back({t.role, t.content});
            return codec.encode_chat(m);
        }
        std::vector<int32_t> ids{model.config().bos_token_id};
        const std::vector<int32_t> body = codec.encode(r.prompt);
        ids.insert(ids.end(), body.begin(), body.end());
        return ids;
    }

    sample_out sample_of(const sample_channel& s, const api_request& r) const {
        sample_out o;
        o.text = cut_at_stop(s.result.text, r.stop);
        o.finish = s.result.finish;
        o.choices = s.result.choices;
        if (r.logprobs)
            for (const infer::token_choice& c : o.choices) o.token_texts.push_back(codec.decode({c.id}));
        return o;
    }

    // The prompt's token ids, or the error naming the field (not encodable, longer than the context).
    std::optional<api_error> prompt_ids(const api_request& r, std::vector<int32_t>* prompt) const {
        const std::string field = r.chat ? "messages" : "prompt";
        try {
            *prompt = prompt_of(r);
        } catch (const std::exception& ex) {
            return error_of(400, "invalid_request_error", ex.what(), field);
        }
        if ((int64_t)prompt->size() >= opt.max_context)
            return error_of(400, "invalid_request_error",
                            fmt::format("the prompt has {} tokens; this server's context holds {}", prompt->size(),
                                        opt.max_context),
                            field, "context_length_exceeded");
        return std::nullopt;
    }

    // Reserves `need` bytes of cache (nothing to reserve without --max-kv-mb), or the 429 error.
    std::optional<api_error> reserve(double need) {
        if (opt.max_kv_mb <= 0) return std::nullopt;
        std::lock_guard<std::mutex> lock(admit_mu);
        if (reserved_bytes + need > opt.max_kv_mb * 1048576.0)
            return error_of(429, "rate_limit_error",
                            fmt::format("the cache memory is full ({:.1f} of {:.1f} MiB reserved); retry shortly",
                                        reserved_bytes / 1048576.0, opt.max_kv_mb));
        reserved_bytes += need;
        return std::nullopt;
    }

    void unreserve(double need) {
        if (opt.max_kv_mb <= 0) return;
        std::lock_guard<std::mutex> lock(admit_mu);
        reserved_bytes -= need;
    }

    // The request's n samples for the generator.
    std::vector<infer::generation_request> samples_of(const api_request& r, const std::vector<int32_t>& prompt) {
        std::vector<infer::generation_request> qs;
        const uint64_t seed0 = entropy();
        for (int i = 0; i < r.n; i++) {
            infer::generation_request q;
            q.prompt = prompt;
            q.max_tokens = r.max_tokens;
            if (!r.ignore_eos) q.stop_ids = codec.stop_ids();
            q.stop_strings = r.stop;
            q.sampling = sampling_of(r, i, seed0);
            qs.push_back(std::move(q));
        }
        return qs;
    }

    void handle_completion(const httplib::Request& req, httplib::Response& res, bool chat) {
        const std::string endpoint = chat ? "/v1/chat/completions" : "/v1/completions";
        if (!authorised(req)) return send_error(res, endpoint, unauthorised());
        if (draining) return send_error(res, endpoint, shutting_down());
        api_request r;
        if (auto e = parse_request(req.body, chat, opt.model_name, &r)) return send_error(res, endpoint, *e);
        std::vector<int32_t> prompt;
        if (auto e = prompt_ids(r, &prompt)) return send_error(res, endpoint, *e);
        const double need = cache_need((int64_t)prompt.size(), r);
        if (auto e = reserve(need)) {
            res.set_header("Retry-After", "1");
            return send_error(res, endpoint, *e);
        }
        auto g = std::make_shared<request_group>();
        g->samples.resize((size_t)r.n);
        if (!enqueue(g, samples_of(r, prompt))) {
            unreserve(need);
            return send_error(res, endpoint, shutting_down());
        }
        const std::string id = fmt::format("{}-{}", chat ? "chatcmpl" : "cmpl", next_id++);
        const int64_t created = (int64_t)std::time(nullptr);
        auto release = [this, need] { unreserve(need); };
        if (r.stream) return stream(res, endpoint, g, r, id, created, release);
        const int64_t prompt_n = (int64_t)prompt.size();
        if (!wait_whole(*g, kWholeWait)) return respond_late(res, endpoint, g, r, id, created, prompt_n, release);
        forget(g);
        release();
        if (!g->error.empty()) {
            cancel(g);
            return send_error(res, endpoint, error_of(500, "server_error", g->error));
        }
        res.set_content(whole_body(r, *g, id, created, prompt_n), "application/json");
        count(endpoint, 200);
    }

    // A non-streamed request is answered whole when it finishes within kWholeWait; a longer one gets its response
    // as a chunked body that starts with a space every kHeartbeat (JSON allows leading whitespace) until the object
    // follows, so that a client that goes away is noticed (the write fails) and its samples are cancelled.
    static constexpr std::chrono::milliseconds kWholeWait{1000}, kHeartbeat{250};

    // Waits up to `limit` for the group to finish or fail; true when it did.
    static bool wait_whole(request_group& g, std::chrono::milliseconds limit) {
        std::unique_lock<std::mutex> lock(g.mu);
        return g.cv.wait_for(lock, limit, [&] { return g.all_done() || !g.error.empty(); });
    }

    std::string whole_body(const api_request& r, const request_group& g, const std::string& id, int64_t created,
                           int64_t prompt_n) const {
        std::vector<sample_out> outs;
        usage_counts usage;
        for (const sample_channel& s : g.samples) {
            outs.push_back(sample_of(s, r));
            usage.completion += (int64_t)s.result.tokens.size();
        }
        usage.prompt = prompt_n;
        return response_object(r, id, created, outs, usage, opt.thinking)
            .dump(-1, ' ', false, json::error_handler_t::replace);
    }

    // The heartbeat response (kWholeWait). Status 200 is sent with the first space: an engine failure after it is
    // reported as the body's OpenAI error object.
    void respond_late(httplib::Response& res, const std::string& endpoint, std::shared_ptr<request_group> g,
                      const api_request& r, const std::string& id, int64_t created, int64_t prompt_n,
                      std::function<void()> release) {
        res.set_chunked_content_provider(
            "application/json",
            [this, g, r, id, created, prompt_n](size_t, httplib::DataSink& sink) {
                if (g->cancelled) return false;
                if (!wait_whole(*g, kHeartbeat)) return sink.write(" ", 1);
                const std::string body = g->error.empty() ? whole_body(r, *g, id, created, prompt_n)
                                                          : error_of(500, "server_error", g->error).body().dump();
                if (!sink.write(body.data(), body.size())) return false;
                sink.done();
                return true;
            },
            [this, g, endpoint, release](bool success) {
                if (!success || !g->all_done()) cancel(g);
                forget(g);
                release();
                count(endpoint, success ? (g->error.empty() ? 200 : 500) : 499);
            });
    }

    // ---- streaming
    struct stream_state {
        struct progress {
            size_t sent = 0, tokens_sent = 0;  // bytes of text and tokens already in chunks
            bool first = true, finished = false;
        };
        std::shared_ptr<request_group> g;
        api_request r;
        std::string id;
        int64_t created = 0;
        bool split_thinking = false;  // chat in thinking mode: reasoning_content before </think>, content after
        size_t hold = 0;              // bytes held back: a stop string's or "</think>"'s possible beginning
        uint64_t seen = 0;            // the group's version last read
        std::vector<progress> samples;
    };

    // What the samples hold now, copied under the group's lock.
    struct snapshot {
        std::vector<std::vector<int32_t>> tokens;
        std::vector<std::vector<infer::token_choice>> choices;
        std::vector<bool> done;
        std::vector<infer::generation_result> results;
        std::string error;
    };

    // Waits for a change (or 50 ms, to notice a client that went away) and copies the samples.
    static snapshot take_snapshot(stream_state& st) {
        request_group& g = *st.g;
        snapshot sn;
        const size_t n = g.samples.size();
        sn.tokens.resize(n);
        sn.choices.resize(n);
        sn.done.resize(n);
        sn.results.resize(n);
        std::unique_lock<std::mutex> lock(g.mu);
        g.cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return g.version != st.seen; });
        st.seen = g.version;
        for (size_t i = 0; i < n; i++) {
            for (const auto& c : g.samples[i].tokens) sn.tokens[i].push_back(c.id);
            if (st.r.logprobs) sn.choices[i] = g.samples[i].tokens;
            sn.done[i] = g.samples[i].done;
            if (sn.done[i]) sn.results[i] = g.samples[i].result;
        }
        sn.error = g.error;
        return sn;
    }

    // How far the text `cut` (the text cut at a stop string) may be sent: all of it when done; else not the held-back
    // tail, and never inside a UTF-8 character.
    static size_t sendable(const std::string& text, const std::string& cut, bool done, size_t hold, size_t sent) {
        if (done) return cut.size();
        size_t upto = cut.size() < text.size() ? cut.size() : (text.size() > hold ? text.size() - hold : 0);
        upto = std::min(upto, cut.size());
        while (upto > sent && upto < cut.size() && ((unsigned char)cut[upto] & 0xC0) == 0x80) upto--;
        return upto;
    }

    // The bytes [sent, upto) of `cut` as reasoning and content (thinking mode: the "</think>" tag itself is neither).
    static void split_delta(const std::string& cut, size_t sent, size_t upto, bool split_thinking,
                            std::string* reasoning, std::string* content) {
        const size_t tag = split_thinking ? cut.find("</think>") : std::string::npos;
        if (!split_thinking) {
            *content = cut.substr(sent, upto - sent);
        } else if (tag == std::string::npos || upto <= tag) {
            *reasoning = cut.substr(sent, upto - sent);
        } else {
            if (sent < tag) *reasoning = cut.substr(sent, tag - sent);
            const size_t from = std::max(sent, tag + 8);
            if (upto > from) *content = cut.substr(from, upto - from);
        }
    }

    // Sends sample i's new text (with the tokens it carries) and its finish; false when the client is gone.
    bool send_sample(stream_state& st, size_t i, const snapshot& sn, const std::function<bool(const json&)>& send) {
        stream_state::progress& p = st.samples[i];
        const std::string text = codec.decode(sn.tokens[i]);
        const std::string cut = cut_at_stop(text, st.r.stop);
        const size_t upto = sendable(text, cut, sn.done[i], st.hold, p.sent);
        if (upto > p.sent || p.first) {
            std::string reasoning, content;
            split_delta(cut, p.sent, upto, st.split_thinking, &reasoning, &content);
            sample_out carried;  // the tokens this chunk carries, with their log-probabilities when asked for
            for (size_t k = p.tokens_sent; k < sn.choices[i].size(); k++) {
                carried.choices.push_back(sn.choices[i][k]);
                carried.token_texts.push_back(codec.decode({sn.choices[i][k].id}));
            }
            if (!send(chunk_object(st.r, st.id, st.created, (int)i, content, "", p.first, reasoning, &carried)))
                return false;
            p.tokens_sent = sn.choices[i].size();
            p.first = false;
            p.sent = std::max(p.sent, upto);
        }
        if (!sn.done[i]) return true;
        p.finished = true;
        return send(chunk_object(st.r, st.id, st.created, (int)i, "", sn.results[i].finish, false));
    }

    // The stream until every sample has finished: deltas, finishes, the usage when asked, then [DONE].
    bool pump(stream_state& st, httplib::DataSink& sink) {
        auto send = [&](const json& j) {
            const std::string line = "data: " + j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
            return sink.write(line.data(), line.size());
        };
        for (;;) {
            const snapshot sn = take_snapshot(st);
            if (!sn.error.empty() || !sink.is_writable()) return false;
            bool all = true;
            for (size_t i = 0; i < st.samples.size(); i++) {
                if (st.samples[i].finished) continue;
                if (!send_sample(st, i, sn, send)) return false;
                all = all && st.samples[i].finished;
            }
            if (!all) continue;
            if (st.r.include_usage) {
                usage_counts u;
                for (const auto& x : sn.results) {
                    u.completion += (int64_t)x.tokens.size();
                    u.prompt = x.prompt_tokens;
                }
                if (!send(usage_chunk(st.r, st.id, st.created, u))) return false;
            }
            const std::string end = "data: [DONE]\n\n";
            sink.write(end.data(), end.size());
            sink.done();
            return true;
        }
    }

    // Server-sent events (pump); a client that goes away cancels its samples.
    void stream(httplib::Response& res, const std::string& endpoint, std::shared_ptr<request_group> g,
                const api_request& r, const std::string& id, int64_t created, std::function<void()> release) {
        auto st = std::make_shared<stream_state>();
        st->g = g;
        st->r = r;
        st->id = id;
        st->created = created;
        st->split_thinking = r.chat && opt.thinking;
        st->hold = st->split_thinking ? 7 : 0;
        for (const std::string& s : r.stop) st->hold = std::max(st->hold, s.size() - 1);
        st->samples.resize(g->samples.size());
        res.set_header("Cache-Control", "no-cache");
        res.set_chunked_content_provider(
            "text/event-stream", [this, st](size_t, httplib::DataSink& sink) { return pump(*st, sink); },
            [this, g, endpoint, release](bool success) {
                if (!success || !g->all_done()) cancel(g);
                forget(g);
                release();
                count(endpoint, success ? 200 : 499);
            });
    }

    std::string metrics_text() {
        std::string s;
        s += "# HELP trex_requests_total HTTP completion requests by endpoint and status\n"
             "# TYPE trex_requests_total counter\n";
        {
            std::lock_guard<std::mutex> lock(metrics_mu);
            for (const auto& [k, v] : requests)
                s += fmt::format("trex_requests_total{{endpoint=\"{}\",status=\"{}\"}} {}\n", k.first, k.second, v);
        }
        s += metric_line("trex_prompt_tokens_total", "counter", "Prompt tokens of finished samples",
                         (double)prompt_tokens.load());
        s += metric_line("trex_completion_tokens_total", "counter", "Generated tokens of finished samples",
                         (double)completion_tokens.load());
        s += metric_line("trex_queue_length", "gauge", "Samples waiting for a batch slot", (double)queue_gauge.load());
        s += metric_line("trex_batch_size", "gauge", "Sequences in the decoding batch", (double)batch_gauge.load());
        s += metric_line("trex_kv_cache_bytes", "gauge", "Cache memory of the running sequences",
                         (double)kv_gauge.load());
        {
            std::lock_guard<std::mutex> lock(admit_mu);
            s += metric_line("trex_kv_reserved_bytes", "gauge", "Cache memory reserved by admitted requests",
                             reserved_bytes);
        }
        s += ttft.text("trex_time_to_first_token_seconds", "Time from a request's arrival to its first token");
        s += itl.text("trex_inter_token_latency_seconds", "Time between consecutive tokens of a sample");
        return s;
    }

    void routes() {
        http.Post("/v1/chat/completions",
                  [this](const httplib::Request& q, httplib::Response& s) { handle_completion(q, s, true); });
        http.Post("/v1/completions",
                  [this](const httplib::Request& q, httplib::Response& s) { handle_completion(q, s, false); });
        http.Get("/v1/models", [this](const httplib::Request& q, httplib::Response& s) {
            if (!authorised(q)) return send_error(s, "/v1/models", unauthorised());
            const json j = {
                {"object", "list"},
                {"data",
                 json::array({{{"id", opt.model_name}, {"object", "model"}, {"created", 0}, {"owned_by", "trex"}}})}};
            s.set_content(j.dump(), "application/json");
        });
        http.Get("/health", [this](const httplib::Request&, httplib::Response& s) {
            s.status = draining ? 503 : 200;
            s.set_content(draining ? "draining\n" : "ok\n", "text/plain");
        });
        http.Get("/metrics", [this](const httplib::Request&, httplib::Response& s) {
            s.set_content(metrics_text(), "text/plain; version=0.0.4");
        });
    }
};

server::server(dsv4_model& model, const eval::text_codec& codec, server_options opt)
    : p_(std::make_unique<impl>(model, codec, std::move(opt))) {
    TREX_CHECK(p_->opt.max_batch >= 1, "serve: --max-batch {} must be ≥ 1", p_->opt.max_batch);
    const int threads = p_->opt.http_threads;
    p_->http.new_task_queue = [threads] { return new httplib::ThreadPool((size_t)threads); };
    p_->http.set_tcp_nodelay(true);  // a streamed token is a small write: no Nagle delay
    p_->http.set_socket_options([self = p_.get()](socket_t sock) {
        httplib::default_socket_options(sock);
        self->listen_fd = (int)sock;
    });
    // keep-alive connections stay open for many requests (httplib's default closes one after 5, and a client that
    // has already sent its next request on it reads an error); a generation may take long: generous timeouts
    p_->http.set_keep_alive_max_count(100000);
    p_->http.set_keep_alive_timeout(60);
    p_->http.set_read_timeout(600, 0);
    p_->http.set_write_timeout(600, 0);
    p_->routes();
}

server::~server() {
    stop();
    if (p_->stopper.joinable()) p_->stopper.join();
}

void server::bind() {
    const server_options& o = p_->opt;
    if (o.port == 0)
        p_->port = p_->http.bind_to_any_port(o.host);
    else
        p_->port = p_->http.bind_to_port(o.host, o.port) ? o.port : -1;
    TREX_CHECK(p_->port > 0, "serve: cannot listen on {}:{} (in use, or not an address of this machine)", o.host,
               o.port);
    TREX_CHECK(p_->listen_fd >= 0 && ::listen(p_->listen_fd, kListenBacklog) == 0,
               "serve: cannot deepen the listen queue of {}:{}: {}", o.host, p_->port, std::strerror(errno));
}

int server::bound_port() const {
    return p_->port;
}

infer::generation_stats server::engine_stats() const {
    return p_->gen.stats();
}

// The engine runs on the calling thread: the thread whose OpenMP team the model's kernels already use (libgomp
// stops spinning and sleeps between parallel regions once it manages more threads than there are cores, and every
// kernel call then pays a futex wake-up: measured 11.7 against 1.0 ms per token on v4-tiny with the engine on a
// second thread). HTTP is served by its own threads.
void server::run() {
    std::thread listener([this] {
        p_->http.listen_after_bind();  // returns after stop(): its worker threads have finished their requests
        std::lock_guard<std::mutex> lock(p_->mu);
        p_->stopping = true;
        p_->cv.notify_all();
    });
    p_->engine_loop();
    listener.join();
}

void server::stop() {
    if (p_->draining.exchange(true)) return;
    // in-flight requests get the deadline to finish; then they are cancelled (their handlers return)
    p_->stopper = std::thread([p = p_.get()] {
        const auto deadline = clock_type::now() + std::chrono::duration<double>(p->opt.shutdown_deadline_s);
        for (;;) {
            {
                std::lock_guard<std::mutex> lock(p->mu);
                if (p->in_flight.empty()) break;
                if (clock_type::now() > deadline) {
                    for (auto& g : p->in_flight) {
                        g->cancelled = true;
                        p->cancels.push_back(g);
                        std::lock_guard<std::mutex> gl(g->mu);
                        g->error = "the server shut down before the request finished";
                        g->version++;
                        g->cv.notify_all();
                    }
                    p->cv.notify_all();
                    break;
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        p->http.stop();
    });
}

}  // namespace trex::serve
