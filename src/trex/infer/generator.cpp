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
    int32_t next = -1;              // the chosen token, fed at the next step
    int32_t drafted = -1;           // speculative: the MTP module's guess of the token after `next`
    std::vector<float> tail_state;  // speculative: the final state of the last position fed (its MTP input)
    size_t fed = 0;                 // prompt tokens through the decoder (interleaved prefill)
    bool done = false;
    bool prefilling() const { return fed < q.prompt.size(); }
};

generator::generator(dsv4_model& model, generator_options opt) : model_(model), opt_(std::move(opt)) {
    TREX_CHECK(opt_.max_batch >= 1, "generate: max_batch {} must be ≥ 1", opt_.max_batch);
    TREX_CHECK(opt_.prefill_chunk >= 1, "generate: prefill_chunk {} must be ≥ 1", opt_.prefill_chunk);
    TREX_CHECK(opt_.max_context >= 2, "generate: max_context {} must be ≥ 2", opt_.max_context);
    TREX_CHECK(!opt_.speculative || opt_.drafter || model_.config().has_mtp(),
               "generate: speculative decoding needs the model's MTP module (num_nextn_predict_layers = 0)");
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

bool generator::cancel(size_t ticket) {
    auto match = [&](const running& r) { return r.ticket == ticket; };
    return std::erase_if(queued_, match) + std::erase_if(active_, match) > 0;
}

size_t generator::batch_size() const {
    return active_.size();
}

size_t generator::queue_length() const {
    return queued_.size();
}

size_t generator::cache_bytes() const {
    size_t b = 0;
    for (const running& r : active_) b += r.cache.bytes();
    return b;
}

bool generator::idle() const {
    return queued_.empty() && active_.empty();
}

std::vector<std::pair<size_t, generation_result>> generator::take_finished() {
    return std::exchange(finished_, {});
}

// The MTP module's work of one step: per sequence, the final states of positions whose next token is known, those
// tokens, and whether the last one's logits give the sequence's draft (a prompt still prefilling: no).
struct generator::mtp_batch {
    std::vector<running*> rs;
    std::vector<std::vector<float>> states;
    std::vector<std::vector<int32_t>> next;
    std::vector<int64_t> drafts;  // 1: draft from the last position, 0: the cache only
    void add(running* r, std::vector<float> h, std::vector<int32_t> nx, bool draft) {
        rs.push_back(r);
        states.push_back(std::move(h));
        next.push_back(std::move(nx));
        drafts.push_back(draft ? 1 : 0);
    }
};

// A request joins the batch with an empty cache; the steps feed its prompt (interleaved prefill).
void generator::start(running& r) {
    r.cache = sequence_cache::for_model(model_.config(), opt_.speculative && !opt_.drafter);
    r.rng = token_rng(r.q.sampling.seed);
    r.res.prompt_tokens = (int64_t)r.q.prompt.size();
}

// The prompt through the decoder in chunks before the step; its last logits choose the first token.
void generator::admit(running& r) {
    const auto t0 = std::chrono::steady_clock::now();
    start(r);
    const std::vector<int32_t>& prompt = r.q.prompt;
    sequence_cache* seq[] = {&r.cache};
    std::vector<float> states;
    const bool mtp = opt_.speculative && !opt_.drafter;
    while (r.prefilling()) {
        const int64_t n = std::min<int64_t>(opt_.prefill_chunk, (int64_t)(prompt.size() - r.fed));
        const int64_t counts[] = {n}, rows[] = {r.fed + (size_t)n == prompt.size() ? 1 : 0};
        model_.decode_rows(seq, std::span<const int32_t>(prompt.data() + r.fed, (size_t)n), counts, rows, logits_,
                           mtp ? &states : nullptr);
        mtp_batch w;
        prompt_fed(r, n, states.data(), logits_.data(), w);
        draft(w);
    }
    stats_.prefill_seconds += seconds_since(t0);
}

void generator::prompt_fed(running& r, int64_t n, const float* states, const float* last_logits, mtp_batch& w) {
    const std::vector<int32_t>& prompt = r.q.prompt;
    const int64_t nd = (int64_t)model_.config().hc_mult * model_.config().hidden_size;
    const int64_t at = (int64_t)r.fed;
    r.fed += (size_t)n;
    stats_.prefill_tokens += n;
    const bool through = !r.prefilling();
    token_choice first;
    if (through) {
        first = sample_token(last_logits, model_.config().vocab_size, r.q.sampling, r.rng);
        if (accept(r, first)) return;
    }
    if (!opt_.speculative) return;
    if (opt_.drafter) {
        if (through) w.add(&r, {}, {}, true);
        return;
    }
    // the MTP positions: the previous chunk's last (its state kept in tail_state) and this chunk's, each with the
    // token after it; a chunk's last waits for the next chunk unless the prompt is through
    const int64_t from = at - (r.tail_state.empty() ? 0 : 1);
    std::vector<float> h = std::move(r.tail_state);
    r.tail_state.clear();
    h.insert(h.end(), states, states + n * nd);
    std::vector<int32_t> next(prompt.begin() + from + 1, prompt.begin() + at + n);
    if (through) {
        next.push_back(first.id);
    } else {
        r.tail_state.assign(h.end() - nd, h.end());
        h.resize(h.size() - (size_t)nd);
    }
    if (!next.empty()) w.add(&r, std::move(h), std::move(next), through);
}

void generator::draft(mtp_batch& w) {
    if (w.rs.empty()) return;
    if (opt_.drafter) {
        for (size_t i = 0; i < w.rs.size(); i++)
            if (w.drafts[i]) w.rs[i]->drafted = opt_.drafter(w.rs[i]->ticket, w.rs[i]->res.tokens);
        return;
    }
    std::vector<sequence_cache*> seqs;
    std::vector<float> h;
    std::vector<int32_t> ids;
    std::vector<int64_t> counts;
    for (size_t i = 0; i < w.rs.size(); i++) {
        seqs.push_back(&w.rs[i]->cache);
        h.insert(h.end(), w.states[i].begin(), w.states[i].end());
        ids.insert(ids.end(), w.next[i].begin(), w.next[i].end());
        counts.push_back((int64_t)w.next[i].size());
    }
    std::vector<float> logits;
    model_.decode_mtp_rows(seqs, h, ids, counts, w.drafts, logits);
    const int64_t V = model_.config().vocab_size;
    sampling_params greedy;
    token_rng unused(0);
    int64_t row = 0;
    for (size_t i = 0; i < w.rs.size(); i++) {
        if (!w.drafts[i]) continue;
        const std::span<const float> lg(logits.data() + row++ * V, (size_t)V);
        w.rs[i]->drafted = sample_token(lg.data(), V, greedy, unused).id;
        if (opt_.on_draft) opt_.on_draft(w.rs[i]->ticket, w.rs[i]->drafted, lg);
    }
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
    // prompt + output tokens: the context the next token would need (independent of how far the caches ran ahead)
    if ((int64_t)r.res.tokens.size() >= q.max_tokens ||
        r.res.prompt_tokens + (int64_t)r.res.tokens.size() >= opt_.max_context) {
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
        if (opt_.interleave_prefill) {
            start(r);
            active_.push_back(std::move(r));
            continue;
        }
        admit(r);
        if (r.done)
            finish(r);
        else
            active_.push_back(std::move(r));
    }
    if (active_.empty()) return true;
    const auto t0 = std::chrono::steady_clock::now();
    if (opt_.speculative)
        speculative_step();
    else
        plain_step();
    stats_.decode_steps++;
    stats_.decode_seconds += seconds_since(t0);
    for (running& r : active_)
        if (r.done) finish(r);
    std::erase_if(active_, [](const running& r) { return r.done; });
    return true;
}

struct generator::step_batch {
    std::vector<running*> fed;
    std::vector<sequence_cache*> seqs;
    std::vector<int32_t> ids;
    std::vector<int64_t> counts, rows;          // per sequence: tokens fed, logits rows wanted (its last)
    std::vector<sequence_cache::mark_t> marks;  // speculative: the running sequences' (a prompt chunk's: empty)
};

// Every running sequence's chosen token (and, speculating, its draft) and, interleaved, prompt chunks of the
// sequences still prefilling: the first such chunk always, further ones while they fit in prefill_chunk tokens.
generator::step_batch generator::gather_step(bool speculative) {
    const int L = model_.config().n_layers();
    step_batch s;
    int64_t budget = opt_.prefill_chunk;
    bool prefilled = false;
    for (running& r : active_) {
        if (r.prefilling()) {
            const int64_t left = (int64_t)(r.q.prompt.size() - r.fed), n = std::min<int64_t>(opt_.prefill_chunk, left);
            if (prefilled && n > budget) continue;
            budget -= n;
            prefilled = true;
            s.ids.insert(s.ids.end(), r.q.prompt.begin() + (int64_t)r.fed, r.q.prompt.begin() + (int64_t)r.fed + n);
            s.counts.push_back(n);
            s.rows.push_back(n == left ? 1 : 0);
            if (speculative) s.marks.emplace_back();
        } else if (speculative) {
            s.marks.push_back(r.cache.mark(L, 2));
            s.ids.push_back(r.next);
            s.ids.push_back(r.drafted);
            s.counts.push_back(2);
            s.rows.push_back(2);
        } else {
            s.ids.push_back(r.next);
            s.counts.push_back(1);
            s.rows.push_back(1);
        }
        s.fed.push_back(&r);
        s.seqs.push_back(&r.cache);
    }
    return s;
}

// One token of every running sequence and, interleaved, prompt chunks (gather_step). A sequence whose prompt is
// through chooses its first token from the chunk's last logits.
void generator::plain_step() {
    const int64_t V = model_.config().vocab_size;
    step_batch s = gather_step(false);
    model_.decode_rows(s.seqs, s.ids, s.counts, s.rows, logits_);
    mtp_batch unused;
    int64_t row = 0;
    for (size_t b = 0; b < s.fed.size(); b++) {
        running& r = *s.fed[b];
        const float* lg = logits_.data() + row * V;
        row += s.rows[b];
        if (r.prefilling()) {
            prompt_fed(r, s.counts[b], nullptr, lg, unused);
            continue;
        }
        stats_.decode_tokens++;
        accept(r, sample_token(lg, V, r.q.sampling, r.rng));
    }
}

// Every running sequence fed its chosen token and its draft in one batch (with prompt chunks, interleaved); each
// draft verified against the main model's logits at the chosen token. Accepted: the draft and the token after it are
// emitted. Rejected: the verification's choice is emitted and the draft is cut out of the caches (rewound to the
// chosen token, whose logits and state the batch computed). The MTP module then runs over the positions kept, for
// the next drafts.
void generator::speculative_step() {
    const model_config& cfg = model_.config();
    const int64_t V = cfg.vocab_size, nd = (int64_t)cfg.hc_mult * cfg.hidden_size;
    step_batch s = gather_step(true);
    std::vector<float> states;
    model_.decode_rows(s.seqs, s.ids, s.counts, s.rows, logits_, &states);
    mtp_batch w;
    int64_t row = 0, pos = 0;
    for (size_t b = 0; b < s.fed.size(); b++) {
        running& r = *s.fed[b];
        const float* row0 = logits_.data() + row * V;
        const float* s0 = states.data() + pos * nd;
        row += s.rows[b];
        pos += s.counts[b];
        if (r.prefilling()) {
            prompt_fed(r, s.counts[b], s0, row0, w);
            continue;
        }
        token_choice c;
        const bool ok = verify_draft(row0, V, r.q.sampling, r.drafted, r.rng, &c);
        stats_.drafted++;
        stats_.accepted += ok;
        stats_.decode_tokens++;
        if (!ok) {
            r.cache.rewind(s.marks[b], 1);
            if (!accept(r, c)) w.add(&r, std::vector<float>(s0, s0 + nd), {c.id}, true);
            continue;
        }
        r.cache.release(s.marks[b]);
        if (accept(r, c)) continue;
        const token_choice c2 = sample_token(row0 + V, V, r.q.sampling, r.rng);
        stats_.decode_tokens++;
        if (!accept(r, c2)) w.add(&r, std::vector<float>(s0, s0 + 2 * nd), {c.id, c2.id}, true);
    }
    const auto t0 = std::chrono::steady_clock::now();
    draft(w);
    stats_.draft_seconds += seconds_since(t0);
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
