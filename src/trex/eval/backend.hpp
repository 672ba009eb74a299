// Model backends: where completions come from.
//   openai  any OpenAI-compatible /v1/chat/completions endpoint (http or https), API key from an environment
//           variable, per-request timeout, retries with exponential back-off and jitter on connection errors,
//           408/409/425/429/5xx (Retry-After honoured), temperature / top_p / max_tokens / seed / n;
//   replay  saved completions JSONL {"id", "completion"} (completion: a string or a list; several lines per id
//           add samples; our own completions.jsonl also reads), so answers can be re-judged without regenerating;
//   local   a trex checkpoint through the engine's cached decoder (infer/generator.hpp): greedy / temperature /
//           top-p sampling, the items' samples decoded together in one continuous batch (concurrency() = the batch),
//           over a text_codec (tokenizer + chat template).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace trex::eval {

struct chat_message {
    std::string role;  // "system", "user", "assistant"
    std::string content;
};

struct gen_params {
    double temperature = 0.6;  // T-Rex eval defaults
    double top_p = 1.0;
    int max_tokens = 9600;
    int64_t seed = 42;  // < 0: not sent
};

struct gen_request {
    std::string item_id;
    std::string benchmark;  // the item's benchmark (replay files may key completions by benchmark and id)
    std::vector<chat_message> messages;
    gen_params params;
    int n = 1;             // samples wanted
    int first_sample = 0;  // index of the first wanted sample (resume asks only for the missing ones)
};

struct gen_result {
    bool ok = false;
    std::vector<std::string> completions;  // n of them when ok
    std::vector<std::string> finish_reasons;
    std::string error;  // when !ok
    long prompt_tokens = 0, completion_tokens = 0;
    int attempts = 0;
};

class backend {
   public:
    virtual ~backend() = default;
    // What the cache key includes besides the request: endpoint + model, replay file, checkpoint.
    virtual std::string identity() const = 0;
    virtual gen_result generate(const gen_request& req) = 0;  // thread-safe
    virtual int concurrency() const { return 1; }
    virtual bool cacheable() const { return true; }  // replay: no (its file is the cache)
    // A backend that computes in this process (local) can run its engine on one chosen thread — the run's main thread,
    // which loaded the model — instead of on whichever caller of generate() finds it free: libgomp then keeps one
    // thread team, not one per caller that sleeps between the steps another caller drove (docs/eval.md). Called
    // before generate() is first called; true: from then on generate() queues and waits, and drive() runs the steps.
    virtual bool attach_driver() { return false; }
    // Decoding steps on this thread for up to `seconds` (waiting for work when there is none).
    virtual void drive(double seconds) { (void)seconds; }
};

struct openai_options {
    std::string url;    // "http://127.0.0.1:8000" or "https://api.example.com/v1" (the /v1 part is optional)
    std::string model;  // the "model" field
    std::string api_key_env = "OPENAI_API_KEY";  // empty or unset variable: no Authorization header
    int concurrency = 8;
    int retries = 5;
    double timeout_s = 600;  // per request (read timeout)
    double connect_timeout_s = 10;
    double backoff_s = 1.0;     // first back-off; doubles per retry, with jitter, capped at 60 s
    std::string ca_cert;        // https: a CA bundle file (default: the system's)
    bool insecure = false;      // https: do not verify the server certificate
    std::string system_prompt;  // unused here (the prompt template carries it)
};
std::unique_ptr<backend> make_openai_backend(const openai_options& opt);

// Replay: completions by item id. Missing items answer with an error (counted as backend_error).
std::unique_ptr<backend> make_replay_backend(const std::string& path);

// ---- local checkpoint backend ----

// Tokenizer and chat template for local generation.
class text_codec {
   public:
    virtual ~text_codec() = default;
    virtual std::vector<int32_t> encode(const std::string& text) const = 0;
    virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
    // The prompt for a conversation, ending where the assistant's answer starts.
    virtual std::vector<int32_t> encode_chat(const std::vector<chat_message>& msgs) const = 0;
    virtual std::vector<int32_t> stop_ids() const = 0;  // end of sequence / end of turn
    virtual int64_t id_space() const = 0;               // the largest id it can produce + 1
};

// A codec that can produce ids the model has no row for is refused: "tokenizer …: ids up to N, the model's
// vocabulary holds V" (`what` names the tokenizer).
void check_codec_fits(const text_codec& c, int64_t vocab_size, const std::string& what);

// A codec where ids are bytes (vocab ≥ 256) and the template is "<role>: text\n" + "assistant: ": for tests of the
// decoding loop on tiny models.
std::unique_ptr<text_codec> make_byte_codec(int32_t eos_id);

// The DeepSeek-V4 tokenizer.json + chat encoding (trex::tok::encode_dsv4_chat). thinking: the prompt ends with
// <｜Assistant｜><think> (the T-Rex protocol: the completion reasons, closes </think>, then answers); else with
// <｜Assistant｜></think>. Generation stops at <｜end▁of▁sentence｜>.
std::unique_ptr<text_codec> load_tokenizer_codec(const std::string& tokenizer_json, bool thinking = true);

struct local_options {
    std::string checkpoint;         // a trex training checkpoint dir (step-*/ or a run dir) or an HF release-layout dir
    std::string tokenizer;          // tokenizer.json
    std::string config;             // model config.json when the checkpoint does not carry one
    int max_context = 4096;         // prompt + generated tokens
    bool thinking = true;           // DeepSeek-V4 thinking mode (see load_tokenizer_codec)
    bool allow_nonfinite = false;   // HF release layout: import NaN / inf weights and scales instead of refusing
    std::string qat, indexer_ties;  // numerics instead of the checkpoint config's (docs/model.md §3.4; "" = keep)
    int max_batch = 8;              // items' samples decoded together (the runner's concurrency)
};
std::unique_ptr<backend> make_local_backend(const local_options& opt);

}  // namespace trex::eval

namespace trex {
class dsv4_model;
}

namespace trex::eval {

// The same over an explicit model and codec (tests; the caller keeps both alive).
std::unique_ptr<backend> make_local_backend(trex::dsv4_model& model, const text_codec& codec, int max_context,
                                            const std::string& identity, int max_batch = 8);

}  // namespace trex::eval
