#include "trex/infer/generator.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>

#include "trex/base/error.hpp"

namespace trex::infer {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The earliest position in `text` where one of the stop strings starts (npos: none).
size_t first_stop(const std::string& text, const std::vector<std::string>& stops) {
    size_t at = std::string::npos;
    for (const std::string& s : stops)
        if (!s.empty()) at = std::min(at, text.find(s));
    return at;
}

}  // namespace

struct generator::running {
    size_t ticket = 0;
    generation_request q;
    token_callback on_token;
    sequence_cache cache;
    token_rng rng{0};
    generation_result res;
    int32_t next = -1;  // the chosen token, fed at the next step
    bool done = false;
};

generator::generator(dsv4_model& model, generator_options opt) : model_(model), opt_(std::move(opt)) {
    TREX_CHECK(opt_.max_batch >= 1, "generate: max_batch {} must be ≥ 1", opt_.max_batch);
    TREX_CHECK(opt_.prefill_chunk >= 1, "generate: prefill_chunk {} must be ≥ 1", opt_.prefill_chunk);
    TREX_CHECK(opt_.max_context >= 2, "generate: max_context {} must be ≥ 2", opt_.max_context);
}

generator::~generator() = default;

void generator::check(const generation_request& q) const {
    validate(q.sampling);
    TREX_CHECK(!q.prompt.empty(), "generate: empty prompt");
    TREX_CHECK((int64_t)q.prompt.size() < opt_.max_context, "generate: a prompt of {} tokens; the context holds {}",
               q.prompt.size(), opt_.max_context);
    TREX_CHECK(q.max_tokens >= 1, "generate: max_tokens {} must be ≥ 1", q.max_tokens);
    for (int32_t id : q.prompt)
        TREX_CHECK(id >= 0 && id < model_.config().vocab_size, "generate: prompt token {} is outside the vocabulary",
                   id);
}

size_t generator::submit(generation_request q, token_callback on_token) {
    check(q);
    running r;
    r.ticket = next_ticket_++;
    r.q = std::move(q);
    r.on_token = std::move(on_token);
    queued_.push_back(std::move(r));
    return queued_.back().ticket;
}

bool generator::idle() const {
    return queued_.empty() && active_.empty();
}

std::vector<std::pair<size_t, generation_result>> generator::take_finished() {
    return std::exchange(finished_, {});
}

// The prompt through the decoder in chunks; its last logits choose the first token.
void generator::admit(running& r) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<int32_t>& prompt = r.q.prompt;
    r.cache = sequence_cache::for_model(model_.config(), false);
    r.rng = token_rng(r.q.sampling.seed);
    r.res.prompt_tokens = (int64_t)prompt.size();
    std::vector<float>& logits = logits_;
    sequence_cache* seq[] = {&r.cache};
    for (size_t at = 0; at < prompt.size(); at += (size_t)opt_.prefill_chunk) {
        const int64_t n = std::min<int64_t>(opt_.prefill_chunk, (int64_t)(prompt.size() - at));
        const int64_t counts[] = {n};
        model_.decode(seq, std::span<const int32_t>(prompt.data() + at, (size_t)n), counts, logits, false);
    }
    stats_.prefill_tokens += (int64_t)prompt.size();
    stats_.prefill_seconds += seconds_since(t0);
    accept(r, sample_token(logits.data(), model_.config().vocab_size, r.q.sampling, r.rng));
}

// Emits a chosen token unless it stops the request; returns whether the request is finished.
bool generator::accept(running& r, const token_choice& c) {
    const generation_request& q = r.q;
    if (std::find(q.stop_ids.begin(), q.stop_ids.end(), c.id) != q.stop_ids.end()) {
        r.res.finish = "stop";
        return r.done = true;
    }
    r.res.tokens.push_back(c.id);
    r.res.choices.push_back(c);
    if (r.on_token) r.on_token(r.ticket, c);
    if (!q.stop_strings.empty() && opt_.detokenize) {
        // a stop string ends within the last few tokens' text (every token is at least one byte)
        size_t longest = 0;
        for (const std::string& s : q.stop_strings) longest = std::max(longest, s.size());
        const size_t n = r.res.tokens.size(), tail = std::min(n, longest + 2);
        const std::string recent = opt_.detokenize(std::span<const int32_t>(r.res.tokens.data() + n - tail, tail));
        if (first_stop(recent, q.stop_strings) != std::string::npos) {
            r.res.finish = "stop";
            return r.done = true;
        }
    }
    if ((int64_t)r.res.tokens.size() >= q.max_tokens || r.cache.len + 1 >= opt_.max_context) {
        r.res.finish = "length";
        return r.done = true;
    }
    r.next = c.id;
    return false;
}

// The result's text (cut before a stop string), handed to take_finished.
void generator::finish(running& r) {
    if (opt_.detokenize) {
        r.res.text = opt_.detokenize(r.res.tokens);
        const size_t at = first_stop(r.res.text, r.q.stop_strings);
        if (at != std::string::npos) r.res.text.resize(at);
    }
    finished_.emplace_back(r.ticket, std::move(r.res));
}

bool generator::step() {
    if (idle()) return false;
    while ((int64_t)active_.size() < opt_.max_batch && !queued_.empty()) {
        running r = std::move(queued_.front());
        queued_.erase(queued_.begin());
        admit(r);
        if (r.done)
            finish(r);
        else
            active_.push_back(std::move(r));
    }
    if (active_.empty()) return true;
    // one token of every running sequence, in one batch
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t V = model_.config().vocab_size;
    std::vector<sequence_cache*> seqs;
    std::vector<int32_t> ids;
    for (running& r : active_) {
        seqs.push_back(&r.cache);
        ids.push_back(r.next);
    }
    const std::vector<int64_t> counts(active_.size(), 1);
    model_.decode(seqs, ids, counts, logits_, false);
    for (size_t b = 0; b < active_.size(); b++) {
        running& r = active_[b];
        accept(r, sample_token(logits_.data() + (int64_t)b * V, V, r.q.sampling, r.rng));
    }
    stats_.decode_tokens += (int64_t)active_.size();
    stats_.decode_steps++;
    stats_.decode_seconds += seconds_since(t0);
    for (running& r : active_)
        if (r.done) finish(r);
    std::erase_if(active_, [](const running& r) { return r.done; });
    return true;
}

std::vector<generation_result> generator::run(const std::vector<generation_request>& requests,
                                              const token_callback& on_token) {
    for (const generation_request& q : requests) check(q);  // all of them before anything runs
    std::vector<size_t> tickets;
    for (const generation_request& q : requests) tickets.push_back(submit(q, on_token));
    std::map<size_t, generation_result> done;
    while (step())
        for (auto& [t, r] : take_finished()) done[t] = std::move(r);
    for (auto& [t, r] : take_finished()) done[t] = std::move(r);
    std::vector<generation_result> out;
    for (size_t t : tickets) out.push_back(std::move(done.at(t)));
    return out;
}

}  // namespace trex::infer
