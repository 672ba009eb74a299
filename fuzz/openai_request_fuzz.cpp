// Fuzz target: the request bodies `trex serve` accepts (src/trex/serve/openai_api.hpp), as /v1/chat/completions and
// as /v1/completions. parse_request must answer every body with a request or an api_error (it never throws); an
// accepted request's fields are inside their documented ranges, and the response objects built from it serialise
// as the server sends them (invalid UTF-8 replaced).
#include <string>

#include "fuzz_support.hpp"
#include "trex/serve/openai_api.hpp"

namespace {

using namespace trex::serve;

void check(const api_request& r) {
    if (r.n < 1 || r.n > 16) trex::fuzz::finding("n outside [1, 16]");
    if (r.max_tokens < 1) trex::fuzz::finding("max_tokens < 1");
    if (!(r.temperature >= 0 && r.temperature <= 2)) trex::fuzz::finding("temperature outside [0, 2]");
    if (!(r.top_p > 0 && r.top_p <= 1)) trex::fuzz::finding("top_p outside (0, 1]");
    if (r.stop.size() > 4) trex::fuzz::finding("more than 4 stop strings");
    for (const std::string& s : r.stop)
        if (s.empty()) trex::fuzz::finding("an empty stop string");
    if (r.chat && r.messages.empty()) trex::fuzz::finding("a chat request without messages");
    if (r.top_logprobs < 0 || r.top_logprobs > 20) trex::fuzz::finding("top_logprobs outside [0, 20]");
}

void serve_one(const std::string& body, bool chat) {
    api_request r;
    const auto e = parse_request(body, chat, "trex", &r);
    if (e) {
        if (e->status != 400 && e->status != 404) trex::fuzz::finding("a parse error that is not 400 or 404");
        (void)e->body().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return;
    }
    check(r);
    for (int i = 0; i < r.n; i++) (void)sampling_of(r, i, 7);
    sample_out s;
    s.text = chat && !r.messages.empty() ? r.messages.back().content : r.prompt;
    s.finish = "stop";
    const auto j = response_object(r, "id", 0, {s}, {1, 2}, true);
    (void)j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    (void)chunk_object(r, "id", 0, 0, cut_at_stop(s.text, r.stop), "", true, s.text)
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string body(reinterpret_cast<const char*>(data), size);
    serve_one(body, true);
    serve_one(body, false);
    return 0;
}
