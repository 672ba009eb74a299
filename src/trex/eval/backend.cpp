#include "trex/eval/backend.hpp"

#include <httplib.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "trex/base/error.hpp"
#include "trex/base/rng.hpp"
#include "trex/infer/generator.hpp"
#include "trex/io/checkpoint.hpp"
#include "trex/io/hf_checkpoint.hpp"
#include "trex/io/model_loader.hpp"
#include "trex/model/config.hpp"
#include "trex/model/model.hpp"
#include "trex/tokenizer/chat.hpp"
#include "trex/tokenizer/tokenizer.hpp"

namespace trex::eval {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------------------------
// OpenAI-compatible endpoint

namespace {

struct parsed_url {
    std::string origin;  // scheme://host[:port]
    std::string path;    // /v1/chat/completions
    bool https = false;
};

parsed_url parse_url(const std::string& url) {
    parsed_url p;
    const size_t s = url.find("://");
    TREX_CHECK(s != std::string::npos, "--url '{}': expected http://host[:port][/path] or https://...", url);
    const std::string scheme = url.substr(0, s);
    TREX_CHECK(scheme == "http" || scheme == "https", "--url '{}': scheme must be http or https", url);
    p.https = scheme == "https";
    const size_t slash = url.find('/', s + 3);
    p.origin = slash == std::string::npos ? url : url.substr(0, slash);
    std::string base = slash == std::string::npos ? "" : url.substr(slash);
    while (!base.empty() && base.back() == '/') base.pop_back();
    if (base.size() >= 17 && base.compare(base.size() - 17, 17, "/chat/completions") == 0) {
        p.path = base;
        return p;
    }
    if (base.size() < 3 || base.compare(base.size() - 3, 3, "/v1") != 0) base += "/v1";
    p.path = base + "/chat/completions";
    return p;
}

bool retryable(int status) {
    return status == 408 || status == 409 || status == 425 || status == 429 || status >= 500;
}

class openai_backend : public backend {
   public:
    explicit openai_backend(const openai_options& o) : o_(o), url_(parse_url(o.url)) {
        if (!o.api_key_env.empty())
            if (const char* k = std::getenv(o.api_key_env.c_str()); k && *k) key_ = k;
#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
        TREX_CHECK(!url_.https, "--url {}: this build has no https support (cpp-httplib without OpenSSL)", o.url);
#endif
    }
    std::string identity() const override {
        return "openai|" + url_.origin + url_.path + "|" + o_.model;
    }
    int concurrency() const override {
        return std::max(1, o_.concurrency);
    }

    gen_result generate(const gen_request& req) override {
        gen_result res;
        int remaining = req.n;
        int round = 0;
        while (remaining > 0 && round < 4) {
            round++;
            gen_result part = request(req, remaining, &res.attempts);
            if (!part.ok) {
                res.error = part.error;
                return res;
            }
            for (size_t i = 0; i < part.completions.size() && remaining > 0; i++, remaining--) {
                res.completions.push_back(part.completions[i]);
                res.finish_reasons.push_back(i < part.finish_reasons.size() ? part.finish_reasons[i] : "");
            }
            res.prompt_tokens += part.prompt_tokens;
            res.completion_tokens += part.completion_tokens;
        }
        if (remaining > 0) {
            res.error = fmt::format("endpoint returned fewer than n={} choices", req.n);
            return res;
        }
        res.ok = true;
        return res;
    }

   private:
    gen_result request(const gen_request& req, int n, int* attempts) {
        gen_result res;
        json body = {{"model", o_.model},
                     {"temperature", req.params.temperature},
                     {"top_p", req.params.top_p},
                     {"max_tokens", req.params.max_tokens},
                     {"n", n}};
        if (req.params.seed >= 0) body["seed"] = req.params.seed + req.first_sample;
        json msgs = json::array();
        for (const auto& m : req.messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
        body["messages"] = msgs;
        const std::string payload = body.dump(-1, ' ', false, json::error_handler_t::replace);
        httplib::Headers headers = {{"Accept", "application/json"}};
        if (!key_.empty()) headers.emplace("Authorization", "Bearer " + key_);
        std::mt19937_64 rng(std::hash<std::string>()(req.item_id) ^ (uint64_t)req.first_sample);
        std::string last_error;
        for (int attempt = 0; attempt <= o_.retries; attempt++) {
            (*attempts)++;
            httplib::Client cli(url_.origin);
            const auto to = std::chrono::duration<double>(o_.timeout_s);
            cli.set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(
                std::chrono::duration<double>(o_.connect_timeout_s)));
            cli.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(to));
            cli.set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(to));
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
            if (url_.https) {
                cli.enable_server_certificate_verification(!o_.insecure);
                if (!o_.ca_cert.empty()) cli.set_ca_cert_path(o_.ca_cert.c_str());
            }
#endif
            auto r = cli.Post(url_.path.c_str(), headers, payload, "application/json");
            double wait = -1;
            if (!r) {
                last_error = fmt::format("{}{}: {}", url_.origin, url_.path, httplib::to_string(r.error()));
            } else if (r->status == 200) {
                try {
                    const json j = json::parse(r->body);
                    for (const auto& c : j.at("choices")) {
                        const json& m = c.at("message");
                        std::string text =
                            m.contains("content") && m["content"].is_string() ? m["content"].get<std::string>() : "";
                        if (m.contains("reasoning_content") && m["reasoning_content"].is_string() &&
                            !m["reasoning_content"].get<std::string>().empty())
                            text = "<think>\n" + m["reasoning_content"].get<std::string>() + "\n</think>\n" + text;
                        res.completions.push_back(text);
                        res.finish_reasons.push_back(c.contains("finish_reason") && c["finish_reason"].is_string()
                                                         ? c["finish_reason"].get<std::string>()
                                                         : "");
                    }
                    if (j.contains("usage") && j["usage"].is_object()) {
                        res.prompt_tokens = j["usage"].value("prompt_tokens", 0L);
                        res.completion_tokens = j["usage"].value("completion_tokens", 0L);
                    }
                    res.ok = true;
                    return res;
                } catch (const std::exception& e) {
                    last_error = fmt::format("malformed response: {}", e.what());
                }
            } else {
                last_error = fmt::format("HTTP {}: {}", r->status, r->body.substr(0, 200));
                if (!retryable(r->status)) break;
                if (r->has_header("Retry-After")) {
                    const std::string ra = r->get_header_value("Retry-After");
                    char* end = nullptr;
                    const double v = std::strtod(ra.c_str(), &end);
                    if (end != ra.c_str() && v >= 0) wait = std::min(v, 120.0);
                }
            }
            if (attempt == o_.retries) break;
            if (wait < 0) {
                std::uniform_real_distribution<double> jitter(0.5, 1.5);
                wait = std::min(60.0, o_.backoff_s * std::pow(2.0, attempt) * jitter(rng));
            }
            std::this_thread::sleep_for(std::chrono::duration<double>(wait));
        }
        res.error = last_error;
        return res;
    }

    openai_options o_;
    parsed_url url_;
    std::string key_;
};

// ---------------------------------------------------------------------------------------------------------------
// replay

class replay_backend : public backend {
   public:
    explicit replay_backend(const std::string& path) : path_(path) {
        std::ifstream in(path);
        TREX_CHECK(in.good(), "{}: cannot read the completions file", path);
        std::string line;
        int ln = 0;
        while (std::getline(in, line)) {
            ln++;
            if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
            json j;
            try {
                j = json::parse(line);
            } catch (const std::exception&) {
                bad_.push_back(fmt::format("{}:{}: malformed JSON", path, ln));
                continue;
            }
            if (!j.is_object() || !j.contains("id")) {
                bad_.push_back(fmt::format("{}:{}: no id", path, ln));
                continue;
            }
            const std::string id = j["id"].is_string() ? j["id"].get<std::string>() : j["id"].dump();
            const json* c = nullptr;
            for (const char* k : {"completion", "completions", "response", "output"})
                if (j.contains(k)) {
                    c = &j[k];
                    break;
                }
            if (!c) {
                bad_.push_back(fmt::format("{}:{}: no completion", path, ln));
                continue;
            }
            // a "benchmark" field scopes the id (Bench4Opt's Feasible and ORGEval items share ids)
            const std::string bench =
                j.contains("benchmark") && j["benchmark"].is_string() ? j["benchmark"].get<std::string>() : "";
            auto& v = by_id_[bench.empty() ? id : scoped(bench, id)];
            auto put = [&](int idx, const std::string& s) {
                if (idx < 0)
                    v.push_back(s);
                else {
                    if ((int)v.size() <= idx) v.resize((size_t)idx + 1);
                    v[(size_t)idx] = s;
                }
            };
            const int sample = j.contains("sample") && j["sample"].is_number_integer() ? j["sample"].get<int>() : -1;
            if (c->is_string())
                put(sample, c->get<std::string>());
            else if (c->is_array())
                for (const auto& x : *c) put(-1, x.is_string() ? x.get<std::string>() : x.dump());
            else
                bad_.push_back(fmt::format("{}:{}: completion is neither a string nor a list", path, ln));
        }
        for (const auto& b : bad_) std::fprintf(stderr, "trex eval: warning: %s (skipped)\n", b.c_str());
    }
    std::string identity() const override { return "replay|" + path_; }
    bool cacheable() const override { return false; }
    int concurrency() const override { return 1; }
    gen_result generate(const gen_request& req) override {
        gen_result r;
        auto it = by_id_.find(scoped(req.benchmark, req.item_id));
        if (it == by_id_.end()) it = by_id_.find(req.item_id);
        if (it == by_id_.end()) {
            r.error = fmt::format("no completion for item '{}' in {}", req.item_id, path_);
            return r;
        }
        for (int s = req.first_sample; s < req.first_sample + req.n; s++) {
            if (s >= (int)it->second.size()) {
                r.error = fmt::format("{} has {} completion(s) for item '{}', {} wanted", path_, it->second.size(),
                                      req.item_id, req.first_sample + req.n);
                return r;
            }
            r.completions.push_back(it->second[(size_t)s]);
            r.finish_reasons.push_back("replay");
        }
        r.ok = true;
        return r;
    }

   private:
    static std::string scoped(const std::string& bench, const std::string& id) { return bench + '\x1f' + id; }
    std::string path_;
    std::map<std::string, std::vector<std::string>> by_id_;
    std::vector<std::string> bad_;
};

// ---------------------------------------------------------------------------------------------------------------
// local checkpoint

class byte_codec : public text_codec {
   public:
    explicit byte_codec(int32_t eos) : eos_(eos) {}
    std::vector<int32_t> encode(const std::string& t) const override {
        std::vector<int32_t> ids;
        for (unsigned char c : t) ids.push_back((int32_t)c);
        return ids;
    }
    std::string decode(const std::vector<int32_t>& ids) const override {
        std::string s;
        for (int32_t i : ids) s += (char)(unsigned char)(i & 0xFF);
        return s;
    }
    std::vector<int32_t> encode_chat(const std::vector<chat_message>& msgs) const override {
        std::string t;
        for (const auto& m : msgs) t += m.role + ": " + m.content + "\n";
        return encode(t + "assistant: ");
    }
    std::vector<int32_t> stop_ids() const override { return {eos_}; }
    int64_t id_space() const override { return std::max<int64_t>(256, eos_ + 1); }

   private:
    int32_t eos_;
};

// The DeepSeek-V4 tokenizer and chat encoding (trex::tok): the prompt ends with <｜Assistant｜> plus <think> (thinking
// mode: the completion is reasoning, </think>, the answer) or </think> (chat mode).
class dsv4_codec : public text_codec {
   public:
    dsv4_codec(tok::tokenizer t, bool thinking) : t_(std::move(t)), thinking_(thinking) {
        for (const char* s : {tok::dsv4::eos}) {
            const int32_t id = t_.token_to_id(s);
            if (id >= 0) stops_.push_back(id);
        }
        TREX_CHECK(!stops_.empty(), "tokenizer {}: no {} token (not a DeepSeek-V4 tokenizer)", t_.name(),
                   tok::dsv4::eos);
    }
    std::vector<int32_t> encode(const std::string& text) const override { return t_.encode(text, false); }
    // Ids the tokenizer does not know (a model whose vocabulary is wider than the tokenizer's) become U+FFFD.
    std::string decode(const std::vector<int32_t>& ids) const override {
        try {
            return t_.decode(ids, false);
        } catch (const std::exception&) {
            std::string out;
            for (const int32_t id : ids) {
                try {
                    out += t_.decode(std::span<const int32_t>(&id, 1), false);
                } catch (const std::exception&) {
                    out += "\xEF\xBF\xBD";
                }
            }
            return out;
        }
    }
    std::vector<int32_t> encode_chat(const std::vector<chat_message>& msgs) const override {
        std::vector<tok::chat_message> m;
        for (const auto& x : msgs) m.push_back({x.role, x.content, std::nullopt});
        tok::chat_options o;
        o.thinking = thinking_;
        return tok::encode_dsv4_chat(t_, m, o).ids;
    }
    std::vector<int32_t> stop_ids() const override { return stops_; }
    int64_t id_space() const override { return t_.id_space(); }

   private:
    tok::tokenizer t_;
    bool thinking_;
    std::vector<int32_t> stops_;
};

// The engine's generator behind the backend interface: the runner's threads (concurrency() of them) call generate
// at once; their samples join one generator, and whichever caller finds it free drives it — moves the queued samples
// in and runs a decoding step outside the lock — while the others wait for their results (continuous batching across
// items).
class local_backend : public backend {
   public:
    local_backend(dsv4_model& m, const text_codec& c, int max_context, std::string ident, int max_batch)
        : c_(c), ident_(std::move(ident)), max_batch_(std::max(1, max_batch)), gen_(m, options(c, max_context)) {}
    std::string identity() const override { return "local|" + ident_; }
    int concurrency() const override { return max_batch_; }
    gen_result generate(const gen_request& req) override {
        gen_result res;
        const std::vector<int32_t> prompt = c_.encode_chat(req.messages);
        std::vector<infer::generation_request> samples;
        for (int s = 0; s < req.n; s++) {
            infer::generation_request q;
            q.prompt = prompt;
            q.max_tokens = req.params.max_tokens;
            q.stop_ids = c_.stop_ids();
            q.sampling.temperature = req.params.temperature;
            q.sampling.top_p = req.params.top_p;
            // the sample's own stream: the run's seed, the item and the sample index
            q.sampling.seed = (uint64_t)std::max<int64_t>(req.params.seed, 0) * 0x9E3779B97F4A7C15ull ^
                              std::hash<std::string>()(req.item_id) ^ (uint64_t)(req.first_sample + s + 1);
            try {
                gen_.check(q);
            } catch (const std::exception& e) {
                res.error = e.what();
                return res;
            }
            samples.push_back(std::move(q));
        }
        std::vector<infer::generation_result> out;
        try {
            out = run(samples);
        } catch (const std::exception& e) {
            res.error = e.what();
            return res;
        }
        for (const infer::generation_result& r : out) {
            res.prompt_tokens += (long)r.prompt_tokens;
            res.completion_tokens += (long)r.tokens.size();
            res.completions.push_back(r.text);
            res.finish_reasons.push_back(r.finish);
        }
        res.ok = true;
        return res;
    }

    bool attach_driver() override {
        std::lock_guard<std::mutex> lock(mu_);
        external_ = true;
        return true;
    }

    void drive(double seconds) override {
        const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        std::unique_lock<std::mutex> lock(mu_);
        while (std::chrono::steady_clock::now() < until) {
            if (inbox_.empty() && gen_.idle()) {
                work_cv_.wait_until(lock, until);
                continue;
            }
            step_once(lock);
        }
    }

   private:
    static infer::generator_options options(const text_codec& c, int max_context) {
        infer::generator_options o;
        o.max_context = max_context;
        o.detokenize = [&c](std::span<const int32_t> ids) { return c.decode({ids.begin(), ids.end()}); };
        return o;
    }

    // Queues the samples, then drives (no attached driver) or waits until every one of them is finished.
    std::vector<infer::generation_result> run(std::vector<infer::generation_request>& samples) {
        std::unique_lock<std::mutex> lock(mu_);
        std::vector<size_t> mine;
        for (auto& q : samples) {
            mine.push_back(next_ticket_++);
            inbox_.emplace_back(mine.back(), std::move(q));
        }
        if (external_) work_cv_.notify_one();
        auto all_done = [&] {
            return std::all_of(mine.begin(), mine.end(), [&](size_t t) { return done_.count(t) > 0; });
        };
        while (!all_done()) {
            if (!failure_.empty()) throw_error(failure_);
            if (external_ || driving_) {
                cv_.wait(lock);
                continue;
            }
            step_once(lock);
        }
        std::vector<infer::generation_result> out;
        for (size_t t : mine) {
            out.push_back(std::move(done_.at(t)));
            done_.erase(t);
        }
        return out;
    }

    // One decoding step outside the lock (held on entry and exit): the queued samples in, the finished ones out. A
    // failing step fails every sample waiting now and later (the generator's state is unknown after it).
    void step_once(std::unique_lock<std::mutex>& lock) {
        driving_ = true;
        auto in = std::exchange(inbox_, {});
        lock.unlock();
        std::vector<std::pair<size_t, infer::generation_result>> finished;
        std::string failure;
        try {
            for (auto& [ticket, q] : in) ticket_of_[gen_.submit(std::move(q))] = ticket;
            gen_.step();
            finished = gen_.take_finished();
        } catch (const std::exception& e) {
            failure = e.what();
        }
        lock.lock();
        driving_ = false;
        for (auto& [t, r] : finished) {
            done_[ticket_of_.at(t)] = std::move(r);
            ticket_of_.erase(t);
        }
        if (!failure.empty()) failure_ = "local generation failed: " + failure;
        cv_.notify_all();
    }

    const text_codec& c_;
    std::string ident_;
    int max_batch_;
    infer::generator gen_;  // touched only by the driving caller
    std::mutex mu_;
    std::condition_variable cv_;       // a step finished
    std::condition_variable work_cv_;  // samples queued (for an attached driver)
    bool driving_ = false;
    bool external_ = false;  // attach_driver(): drive() runs the steps
    std::string failure_;    // a step failed: every waiting sample fails with it
    size_t next_ticket_ = 0;
    std::vector<std::pair<size_t, infer::generation_request>> inbox_;
    std::map<size_t, size_t> ticket_of_;  // generator ticket → backend ticket
    std::map<size_t, infer::generation_result> done_;
};

// Owns the model and codec of a backend loaded from disk.
class owning_local_backend : public backend {
   public:
    owning_local_backend(std::unique_ptr<dsv4_model> m, std::unique_ptr<text_codec> c, int ctx, std::string id,
                         int max_batch)
        : m_(std::move(m)), c_(std::move(c)), inner_(*m_, *c_, ctx, std::move(id), max_batch) {}
    std::string identity() const override { return inner_.identity(); }
    int concurrency() const override { return inner_.concurrency(); }
    gen_result generate(const gen_request& r) override { return inner_.generate(r); }
    bool attach_driver() override { return inner_.attach_driver(); }
    void drive(double seconds) override { inner_.drive(seconds); }

   private:
    std::unique_ptr<dsv4_model> m_;
    std::unique_ptr<text_codec> c_;
    local_backend inner_;
};

}  // namespace

std::unique_ptr<backend> make_openai_backend(const openai_options& opt) {
    TREX_CHECK(!opt.url.empty(), "--backend openai needs --url");
    TREX_CHECK(!opt.model.empty(), "--backend openai needs --model");
    return std::make_unique<openai_backend>(opt);
}

std::unique_ptr<backend> make_replay_backend(const std::string& path) {
    return std::make_unique<replay_backend>(path);
}

std::unique_ptr<text_codec> make_byte_codec(int32_t eos_id) {
    return std::make_unique<byte_codec>(eos_id);
}

std::unique_ptr<text_codec> load_tokenizer_codec(const std::string& tokenizer_json, bool thinking) {
    TREX_CHECK(!tokenizer_json.empty(), "--backend local needs --tokenizer tokenizer.json");
    return std::make_unique<dsv4_codec>(tok::tokenizer::from_file(tokenizer_json), thinking);
}

void check_codec_fits(const text_codec& c, int64_t vocab_size, const std::string& what) {
    TREX_CHECK(c.id_space() <= vocab_size, "tokenizer {}: ids up to {}, the model's vocabulary holds {}", what,
               c.id_space() - 1, vocab_size);
}

std::unique_ptr<backend> make_local_backend(const local_options& opt) {
    TREX_CHECK(!opt.checkpoint.empty(), "--backend local needs --checkpoint DIR");
    std::unique_ptr<text_codec> codec =
        load_tokenizer_codec(opt.tokenizer, opt.thinking);  // first: fail before loading weights
    model_load_options lo;
    lo.config = opt.config;
    lo.allow_nonfinite = opt.allow_nonfinite;
    lo.qat = opt.qat;
    lo.indexer_ties = opt.indexer_ties;
    loaded_model loaded = load_model_for_inference(opt.checkpoint, lo);
    std::unique_ptr<dsv4_model> m = std::move(loaded.model);
    const std::string dir = loaded.dir;
    check_codec_fits(*codec, m->config().vocab_size, opt.tokenizer);
    return std::make_unique<owning_local_backend>(std::move(m), std::move(codec), opt.max_context,
                                                  fs::absolute(dir).string(), opt.max_batch);
}

std::unique_ptr<backend> make_local_backend(dsv4_model& model, const text_codec& codec, int max_context,
                                            const std::string& identity, int max_batch) {
    return std::make_unique<local_backend>(model, codec, max_context, identity, max_batch);
}

}  // namespace trex::eval
