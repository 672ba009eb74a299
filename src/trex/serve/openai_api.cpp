#include "trex/serve/openai_api.hpp"

#include <cmath>

#include <fmt/format.h>

namespace trex::serve {

namespace {

using json = nlohmann::json;

api_error bad(const std::string& param, const std::string& message) {
    api_error e;
    e.param = param;
    e.message = message;
    return e;
}

// A number field in [lo, hi] (absent or null: keep *out).
std::optional<api_error> number_field(const json& j, const char* name, double lo, double hi, double* out) {
    if (!j.contains(name) || j[name].is_null()) return std::nullopt;
    if (!j[name].is_number()) return bad(name, fmt::format("'{}' must be a number", name));
    const double v = j[name].get<double>();
    if (!std::isfinite(v) || v < lo || v > hi)
        return bad(name, fmt::format("'{}' is {}; it must be between {} and {}", name, j[name].dump(), lo, hi));
    *out = v;
    return std::nullopt;
}

std::optional<api_error> int_field(const json& j, const char* name, int64_t lo, int64_t hi, int64_t* out) {
    if (!j.contains(name) || j[name].is_null()) return std::nullopt;
    if (!j[name].is_number_integer()) return bad(name, fmt::format("'{}' must be an integer", name));
    const int64_t v = j[name].get<int64_t>();
    if (v < lo || v > hi) return bad(name, fmt::format("'{}' is {}; it must be between {} and {}", name, v, lo, hi));
    *out = v;
    return std::nullopt;
}

std::optional<api_error> bool_field(const json& j, const char* name, bool* out) {
    if (!j.contains(name) || j[name].is_null()) return std::nullopt;
    if (!j[name].is_boolean()) return bad(name, fmt::format("'{}' must be true or false", name));
    *out = j[name].get<bool>();
    return std::nullopt;
}

// Message content: a string, or a list of {"type": "text", "text": ...} parts.
std::optional<api_error> content_of(const json& m, size_t i, std::string* out) {
    const std::string param = fmt::format("messages[{}].content", i);
    if (!m.contains("content") || m["content"].is_null()) return bad(param, "a message needs 'content'");
    const json& c = m["content"];
    if (c.is_string()) {
        *out = c.get<std::string>();
        return std::nullopt;
    }
    if (!c.is_array()) return bad(param, "'content' must be a string or a list of text parts");
    out->clear();
    for (const json& part : c) {
        if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
            !part["text"].is_string())
            return bad(param, "only text parts ({\"type\": \"text\", \"text\": ...}) are supported");
        *out += part["text"].get<std::string>();
    }
    return std::nullopt;
}

std::optional<api_error> messages_of(const json& j, api_request* r) {
    if (!j.contains("messages")) return bad("messages", "'messages' is required");
    const json& ms = j["messages"];
    if (!ms.is_array() || ms.empty()) return bad("messages", "'messages' must be a non-empty list");
    for (size_t i = 0; i < ms.size(); i++) {
        const json& m = ms[i];
        const std::string param = fmt::format("messages[{}].role", i);
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
            return bad(param, "each message needs a string 'role'");
        std::string role = m["role"].get<std::string>();
        if (role == "developer") role = "system";
        if (role != "system" && role != "user" && role != "assistant")
            return bad(param, fmt::format("role '{}' is not one of system, user, assistant", role));
        chat_turn t{role, ""};
        if (auto e = content_of(m, i, &t.content)) return e;
        r->messages.push_back(std::move(t));
    }
    return std::nullopt;
}

std::optional<api_error> stop_of(const json& j, api_request* r) {
    if (!j.contains("stop") || j["stop"].is_null()) return std::nullopt;
    const json& s = j["stop"];
    if (s.is_string()) {
        r->stop = {s.get<std::string>()};
    } else if (s.is_array() && s.size() <= 4) {
        for (const json& x : s) {
            if (!x.is_string()) return bad("stop", "'stop' must be a string or a list of up to 4 strings");
            r->stop.push_back(x.get<std::string>());
        }
    } else {
        return bad("stop", "'stop' must be a string or a list of up to 4 strings");
    }
    for (const std::string& x : r->stop)
        if (x.empty()) return bad("stop", "a stop string must not be empty");
    return std::nullopt;
}

std::optional<api_error> sampling_fields(const json& j, api_request* r) {
    int64_t n = r->n, max_tokens = r->max_tokens, top_k = r->top_k, top_logprobs = r->top_logprobs;
    if (auto e = int_field(j, "n", 1, 16, &n)) return e;
    // max_completion_tokens is the newer name of max_tokens
    if (auto e = int_field(j, "max_tokens", 1, 1 << 20, &max_tokens)) return e;
    if (auto e = int_field(j, "max_completion_tokens", 1, 1 << 20, &max_tokens)) return e;
    if (auto e = number_field(j, "temperature", 0.0, 2.0, &r->temperature)) return e;
    if (auto e = number_field(j, "top_p", 1e-9, 1.0, &r->top_p)) return e;
    if (auto e = int_field(j, "top_k", 0, 1 << 20, &top_k)) return e;
    if (j.contains("seed") && !j["seed"].is_null()) {
        if (!j["seed"].is_number_integer()) return bad("seed", "'seed' must be an integer");
        r->seed = (uint64_t)j["seed"].get<int64_t>();
    }
    if (auto e = stop_of(j, r)) return e;
    if (auto e = bool_field(j, "stream", &r->stream)) return e;
    if (auto e = bool_field(j, "ignore_eos", &r->ignore_eos)) return e;
    if (j.contains("stream_options") && j["stream_options"].is_object())
        if (auto e = bool_field(j["stream_options"], "include_usage", &r->include_usage)) return e;
    if (r->chat) {
        if (auto e = bool_field(j, "logprobs", &r->logprobs)) return e;
        if (auto e = int_field(j, "top_logprobs", 0, 20, &top_logprobs)) return e;
        if (top_logprobs > 0 && !r->logprobs) return bad("top_logprobs", "'top_logprobs' needs 'logprobs': true");
    } else if (j.contains("logprobs") && !j["logprobs"].is_null()) {
        if (auto e = int_field(j, "logprobs", 0, 5, &top_logprobs)) return e;
        r->logprobs = true;
    }
    r->n = (int)n;
    r->max_tokens = max_tokens;
    r->top_k = (int)top_k;
    r->top_logprobs = (int)top_logprobs;
    return std::nullopt;
}

}  // namespace

json api_error::body() const {
    return {{"error",
             {{"message", message},
              {"type", type},
              {"param", param.empty() ? json(nullptr) : json(param)},
              {"code", code.empty() ? json(nullptr) : json(code)}}}};
}

std::optional<api_error> parse_request(const std::string& body, bool chat, const std::string& served_model,
                                       api_request* out) {
    json j;
    try {
        j = json::parse(body);
    } catch (const std::exception& e) {
        return bad("", fmt::format("the body is not valid JSON: {}", e.what()));
    }
    if (!j.is_object()) return bad("", "the body must be a JSON object");
    api_request r;
    r.chat = chat;
    r.model = served_model;
    if (j.contains("model")) {
        if (!j["model"].is_string()) return bad("model", "'model' must be a string");
        r.model = j["model"].get<std::string>();
        if (r.model != served_model) {
            api_error e =
                bad("model", fmt::format("the model '{}' does not exist; this server has '{}'", r.model, served_model));
            e.status = 404;
            e.code = "model_not_found";
            return e;
        }
    }
    if (chat) {
        if (auto e = messages_of(j, &r)) return e;
    } else {
        if (!j.contains("prompt")) return bad("prompt", "'prompt' is required");
        const json& p = j["prompt"];
        if (p.is_string())
            r.prompt = p.get<std::string>();
        else if (p.is_array() && p.size() == 1 && p[0].is_string())
            r.prompt = p[0].get<std::string>();
        else
            return bad("prompt", "'prompt' must be a string (one prompt per request)");
    }
    if (auto e = sampling_fields(j, &r)) return e;
    *out = std::move(r);
    return std::nullopt;
}

infer::sampling_params sampling_of(const api_request& r, int i, uint64_t entropy) {
    infer::sampling_params p;
    p.temperature = r.temperature;
    p.top_p = r.top_p;
    p.top_k = r.top_k;
    p.seed = r.seed ? *r.seed * 0x9E3779B97F4A7C15ull + (uint64_t)i : entropy + (uint64_t)i;
    p.logprobs = r.logprobs;
    p.top_logprobs = r.top_logprobs;
    return p;
}

std::string cut_at_stop(const std::string& text, const std::vector<std::string>& stops) {
    size_t at = std::string::npos;
    for (const std::string& s : stops) at = std::min(at, text.find(s));
    return at == std::string::npos ? text : text.substr(0, at);
}

namespace {

json logprobs_json(const sample_out& s, bool chat) {
    if (chat) {
        json content = json::array();
        for (size_t i = 0; i < s.choices.size(); i++) {
            json top = json::array();
            for (const auto& [id, lp] : s.choices[i].top)
                top.push_back({{"token", std::to_string(id)}, {"logprob", lp}});
            content.push_back({{"token", i < s.token_texts.size() ? s.token_texts[i] : std::string()},
                               {"logprob", s.choices[i].logprob},
                               {"bytes", nullptr},
                               {"top_logprobs", top}});
        }
        return {{"content", content}};
    }
    json tokens = json::array(), lps = json::array();
    for (size_t i = 0; i < s.choices.size(); i++) {
        tokens.push_back(i < s.token_texts.size() ? s.token_texts[i] : std::string());
        lps.push_back(s.choices[i].logprob);
    }
    return {{"tokens", tokens}, {"token_logprobs", lps}};
}

}  // namespace

json response_object(const api_request& r, const std::string& id, int64_t created,
                     const std::vector<sample_out>& samples, const usage_counts& usage, bool thinking) {
    json choices = json::array();
    for (size_t i = 0; i < samples.size(); i++) {
        const sample_out& s = samples[i];
        json c = {{"index", i}, {"finish_reason", s.finish}};
        if (r.chat) {
            json msg = {{"role", "assistant"}};
            const size_t end = thinking ? s.text.find("</think>") : std::string::npos;
            if (thinking && end != std::string::npos) {
                msg["reasoning_content"] = s.text.substr(0, end);
                msg["content"] = s.text.substr(end + 8);
            } else if (thinking) {
                msg["reasoning_content"] = s.text;
                msg["content"] = "";
            } else {
                msg["content"] = s.text;
            }
            c["message"] = msg;
        } else {
            c["text"] = s.text;
        }
        c["logprobs"] = r.logprobs ? logprobs_json(s, r.chat) : json(nullptr);
        choices.push_back(c);
    }
    return {{"id", id},
            {"object", r.chat ? "chat.completion" : "text_completion"},
            {"created", created},
            {"model", r.model},
            {"choices", choices},
            {"usage",
             {{"prompt_tokens", usage.prompt},
              {"completion_tokens", usage.completion},
              {"total_tokens", usage.prompt + usage.completion}}}};
}

json chunk_object(const api_request& r, const std::string& id, int64_t created, int index, const std::string& delta,
                  const std::string& finish, bool first, const std::string& reasoning_delta, const sample_out* tokens) {
    json c = {{"index", index}, {"finish_reason", finish.empty() ? json(nullptr) : json(finish)}};
    if (r.chat) {
        json d = json::object();
        if (first) d["role"] = "assistant";
        if (!reasoning_delta.empty()) d["reasoning_content"] = reasoning_delta;
        if (!delta.empty() || (!first && finish.empty() && reasoning_delta.empty())) d["content"] = delta;
        c["delta"] = d;
    } else {
        c["text"] = delta;
    }
    c["logprobs"] = r.logprobs && tokens ? logprobs_json(*tokens, r.chat) : json(nullptr);
    return {{"id", id},
            {"object", r.chat ? "chat.completion.chunk" : "text_completion"},
            {"created", created},
            {"model", r.model},
            {"choices", json::array({c})}};
}

json usage_chunk(const api_request& r, const std::string& id, int64_t created, const usage_counts& usage) {
    return {{"id", id},
            {"object", r.chat ? "chat.completion.chunk" : "text_completion"},
            {"created", created},
            {"model", r.model},
            {"choices", json::array()},
            {"usage",
             {{"prompt_tokens", usage.prompt},
              {"completion_tokens", usage.completion},
              {"total_tokens", usage.prompt + usage.completion}}}};
}

}  // namespace trex::serve
