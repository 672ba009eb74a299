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

// A request joins the batch with an empty cache; plain_step feeds its prompt (interleaved prefill).
void generator::start(running& r) {
    r.cache = sequence_cache::for_model(model_.config(), false);
    r.rng = token_rng(r.q.sampling.seed);
    r.res.prompt_tokens = (int64_t)r.q.prompt.size();
}

// The prompt through the decoder in chunks; its last logits choose the first token.
void generator::admit(running& r) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<int32_t>& prompt = r.q.prompt;
    const int64_t nd = (int64_t)model_.config().hc_mult * model_.config().hidden_size;
    const bool mtp = opt_.speculative && !opt_.drafter;  // the MTP module drafts
    r.cache = sequence_cache::for_model(model_.config(), mtp);
    r.rng = token_rng(r.q.sampling.seed);
    r.res.prompt_tokens = (int64_t)prompt.size();
    std::vector<float>& logits = logits_;
    sequence_cache* seq[] = {&r.cache};
    std::vector<float> states, mtp_logits;
    for (size_t at = 0; at < prompt.size(); at += (size_t)opt_.prefill_chunk) {
        const int64_t n = std::min<int64_t>(opt_.prefill_chunk, (int64_t)(prompt.size() - at));
        const int64_t counts[] = {n};
        model_.decode(seq, std::span<const int32_t>(prompt.data() + at, (size_t)n), counts, logits, false,
                      mtp ? &states : nullptr);
        if (!mtp) continue;
        // the MTP module over the chunk's positions but its last (whose next token comes with the next chunk)
        if (!r.tail_state.empty()) states.insert(states.begin(), r.tail_state.begin(), r.tail_state.end());
        const int64_t first = (int64_t)at - (r.tail_state.empty() ? 0 : 1), known = (int64_t)at + n - 1 - first;
        if (known > 0) {
            const int64_t mcounts[] = {known};
            model_.decode_mtp(seq, std::span<const float>(states.data(), (size_t)(known * nd)),
                              std::span<const int32_t>(prompt.data() + first + 1, (size_t)known), mcounts, mtp_logits);
        }
        r.tail_state.assign(states.end() - nd, states.end());
    }
    r.fed = prompt.size();
    stats_.prefill_tokens += (int64_t)prompt.size();
    stats_.prefill_seconds += seconds_since(t0);
    if (accept(r, sample_token(logits.data(), model_.config().vocab_size, r.q.sampling, r.rng)) || !opt_.speculative)
        return;
    std::vector<running*> rs{&r};
    std::vector<std::vector<float>> st{r.tail_state};
    std::vector<std::vector<int32_t>> nx{{r.next}};
    draft(rs, st, nx);
}

// rs[i]'s MTP positions: states[i] (their final states, one after another) with next[i] (the tokens after them);
// the last logits of each give rs[i]->drafted, and rs[i]->tail_state is cleared (every fed position has run).
void generator::draft(std::vector<running*>& rs, std::vector<std::vector<float>>& states,
                      std::vector<std::vector<int32_t>>& next) {
    if (opt_.drafter) {
        for (running* r : rs) r->drafted = opt_.drafter(r->ticket, r->res.tokens);
        return;
    }
    std::vector<sequence_cache*> seqs;
    std::vector<float> h;
    std::vector<int32_t> ids;
    std::vector<int64_t> counts;
    for (size_t i = 0; i < rs.size(); i++) {
        seqs.push_back(&rs[i]->cache);
        h.insert(h.end(), states[i].begin(), states[i].end());
        ids.insert(ids.end(), next[i].begin(), next[i].end());
        counts.push_back((int64_t)next[i].size());
    }
    std::vector<float> logits;
    model_.decode_mtp(seqs, h, ids, counts, logits);
    const int64_t V = model_.config().vocab_size;
    sampling_params greedy;
    token_rng unused(0);
    for (size_t i = 0; i < rs.size(); i++) {
        rs[i]->drafted = sample_token(logits.data() + (int64_t)i * V, V, greedy, unused).id;
        rs[i]->tail_state.clear();
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
        if (opt_.interleave_prefill && !opt_.speculative) {
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

// One token of every running sequence and, interleaved, prompt chunks of the sequences still prefilling: the first
// such chunk always, further ones while they fit in prefill_chunk tokens. A sequence whose prompt is through chooses
// its first token from the chunk's last logits.
void generator::plain_step() {
    const int64_t V = model_.config().vocab_size;
    std::vector<running*> fed;
    std::vector<sequence_cache*> seqs;
    std::vector<int32_t> ids;
    std::vector<int64_t> counts;
    int64_t budget = opt_.prefill_chunk;
    bool prefilled = false;
    for (running& r : active_) {
        int64_t n = 1;
        if (r.prefilling()) {
            n = std::min<int64_t>(opt_.prefill_chunk, (int64_t)(r.q.prompt.size() - r.fed));
            if (prefilled && n > budget) continue;
            budget -= n;
            prefilled = true;
            ids.insert(ids.end(), r.q.prompt.begin() + (int64_t)r.fed, r.q.prompt.begin() + (int64_t)r.fed + n);
        } else {
            ids.push_back(r.next);
        }
        fed.push_back(&r);
        seqs.push_back(&r.cache);
        counts.push_back(n);
    }
    model_.decode(seqs, ids, counts, logits_, false);
    for (size_t b = 0; b < fed.size(); b++) {
        running& r = *fed[b];
        if (r.prefilling()) {
            r.fed += (size_t)counts[b];
            stats_.prefill_tokens += counts[b];
            if (r.prefilling()) continue;
        } else {
            stats_.decode_tokens++;
        }
        accept(r, sample_token(logits_.data() + (int64_t)b * V, V, r.q.sampling, r.rng));
    }
}

// Every running sequence fed its chosen token and its draft in one batch; each draft verified against the main
// model's logits at the chosen token. Accepted: the draft and the token after it are emitted. Rejected: the
// verification's choice is emitted, and the draft is rewound out of the caches (the chosen token is fed again on
// its own, so that the caches hold exactly the sequence). The MTP module then runs over the positions fed, for the
// next drafts.
void generator::speculative_step() {
    const model_config& cfg = model_.config();
    const int64_t V = cfg.vocab_size, nd = (int64_t)cfg.hc_mult * cfg.hidden_size;
    std::vector<sequence_cache*> seqs;
    std::vector<int32_t> ids;
    std::vector<sequence_cache::mark_t> marks;
    for (running& r : active_) {
        marks.push_back(r.cache.mark(cfg.n_layers(), 2, cfg.head_dim));
        seqs.push_back(&r.cache);
        ids.push_back(r.next);
        ids.push_back(r.drafted);
    }
    const std::vector<int64_t> twos(active_.size(), 2);
    std::vector<float> states;
    model_.decode(seqs, ids, twos, logits_, true, &states);
    struct rejected {
        running* r;
        int32_t fed;
        token_choice choice;
    };
    std::vector<rejected> redo;
    std::vector<running*> mtp;
    std::vector<std::vector<float>> mtp_states;
    std::vector<std::vector<int32_t>> mtp_next;
    for (size_t b = 0; b < active_.size(); b++) {
        running& r = active_[b];
        const float* row0 = logits_.data() + (int64_t)(2 * b) * V;
        const float* s0 = states.data() + (int64_t)(2 * b) * nd;
        token_choice c;
        const bool ok = verify_draft(row0, V, r.q.sampling, r.drafted, r.rng, &c);
        stats_.drafted++;
        stats_.accepted += ok;
        if (!ok) {
            r.cache.rewind(marks[b], cfg.head_dim);
            redo.push_back({&r, r.next, c});
            continue;
        }
        stats_.decode_tokens++;
        if (accept(r, c)) continue;
        const token_choice c2 = sample_token(row0 + V, V, r.q.sampling, r.rng);
        stats_.decode_tokens++;
        if (accept(r, c2)) continue;
        mtp.push_back(&r);
        mtp_states.emplace_back(s0, s0 + 2 * nd);
        mtp_next.push_back({c.id, c2.id});
    }
    if (!redo.empty()) {  // the chosen tokens fed again, alone: the caches hold exactly the sequence
        std::vector<sequence_cache*> rs;
        std::vector<int32_t> again;
        for (const rejected& x : redo) {
            rs.push_back(&x.r->cache);
            again.push_back(x.fed);
        }
        const std::vector<int64_t> ones(redo.size(), 1);
        std::vector<float> redo_logits;
        model_.decode(rs, again, ones, redo_logits, false, &states);
        for (size_t i = 0; i < redo.size(); i++) {
            running& r = *redo[i].r;
            stats_.decode_tokens++;
            if (accept(r, redo[i].choice)) continue;
            mtp.push_back(&r);
            mtp_states.emplace_back(states.begin() + (int64_t)i * nd, states.begin() + (int64_t)(i + 1) * nd);
            mtp_next.push_back({r.next});
        }
    }
    if (!mtp.empty()) draft(mtp, mtp_states, mtp_next);
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
