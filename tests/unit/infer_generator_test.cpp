// Generation over the cached decoder (src/trex/infer/generator.hpp): greedy output equals a greedy loop that re-runs
// the full training forward over the whole prefix for every token (the old eval path, an independent computation);
// a request's tokens do not depend on the batch it shares (greedy and seeded sampling); stop ids, stop strings,
// max_tokens and the context limit end requests as documented; bad requests are errors before anything runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/infer/generator.hpp"
#include "trex/model/config.hpp"
#include "trex/model/model.hpp"

namespace {

using trex::infer::generation_request;
using trex::infer::generation_result;
using trex::infer::generator;
using trex::infer::generator_options;

trex::model_config micro() {
    return trex::load_config(trex::test::source_path("configs/v4-micro.json"));
}

struct fixture {
    trex::model_config cfg = micro();
    trex::dsv4_model model{cfg};
    fixture() { model.params().init(2024, 0.08); }
};

// Greedy continuation by full forwards over the growing prefix (no cache).
std::vector<int32_t> greedy_by_forward(trex::dsv4_model& m, std::vector<int32_t> ids, int n) {
    const int64_t V = m.config().vocab_size;
    std::vector<int32_t> out;
    for (int i = 0; i < n; i++) {
        const int64_t S = (int64_t)ids.size();
        std::vector<int32_t> labels((size_t)S, -1), mtp((size_t)S, 0);
        trex::batch_view b;
        b.B = 1;
        b.S = S;
        b.input_ids = ids.data();
        b.labels = labels.data();
        b.mtp_input_ids = mtp.data();
        trex::step_options o;
        o.backward = false;
        o.keep_logits = true;
        m.step(b, o);
        const float* row = m.logits().data() + (S - 1) * V;
        int32_t best = 0;
        for (int32_t v = 1; v < V; v++)
            if (row[v] > row[best]) best = v;
        out.push_back(best);
        ids.push_back(best);
    }
    return out;
}

std::vector<int32_t> prompt_of(int n, int salt) {
    std::vector<int32_t> p;
    for (int i = 0; i < n; i++) p.push_back(2 + (i * 37 + salt * 11) % 250);
    return p;
}

// Six requests of 3 to 48 prompt tokens, greedy and sampled (top-p 0.9, seeded) in turn, with top-2 log-probabilities.
std::vector<generation_request> six_requests() {
    std::vector<generation_request> qs;
    for (int i = 0; i < 6; i++) {
        generation_request q;
        q.prompt = prompt_of(3 + 9 * i, i);
        q.max_tokens = 10 + 3 * i;
        q.sampling.temperature = i % 2 ? 0.8 : 0.0;
        q.sampling.top_p = 0.9;
        q.sampling.seed = 100 + (uint64_t)i;
        q.sampling.top_logprobs = 2;
        qs.push_back(q);
    }
    return qs;
}

TEST(InferGenerator, GreedyEqualsTheFullForwardLoop) {
    fixture f;
    generation_request q;
    q.prompt = prompt_of(29, 1);
    q.max_tokens = 40;  // to position 69: past the window, CSA top-k, HCA blocks and YaRN's 32
    generator_options o;
    o.prefill_chunk = 8;
    generator g(f.model, o);
    const std::vector<generation_result> r = g.run({q});
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].finish, "length");
    EXPECT_EQ(r[0].prompt_tokens, 29);
    EXPECT_EQ(r[0].tokens, greedy_by_forward(f.model, q.prompt, 40));
    EXPECT_EQ(g.stats().prefill_tokens, 29);
    EXPECT_EQ(g.stats().decode_tokens, 39);
}

TEST(InferGenerator, ARequestsTokensDoNotDependOnItsBatch) {
    fixture f;
    const std::vector<generation_request> qs = six_requests();
    generator_options batched;
    batched.max_batch = 4;  // six requests through four slots: some join as others finish
    std::vector<int64_t> streamed(qs.size(), 0);
    const auto together = generator(f.model, batched).run(qs, [&](size_t t, const auto&) { streamed[t]++; });
    generator_options alone;
    alone.max_batch = 1;
    for (size_t i = 0; i < qs.size(); i++) {
        const auto one = generator(f.model, alone).run({qs[i]});
        EXPECT_EQ(together[i].tokens, one[0].tokens) << "request " << i;
        ASSERT_EQ(together[i].choices.size(), together[i].tokens.size());
        EXPECT_EQ((int64_t)together[i].tokens.size(), qs[i].max_tokens);
        EXPECT_EQ(streamed[i], (int64_t)together[i].tokens.size());
        EXPECT_EQ(together[i].choices[0].top.size(), 2u);
    }
    // the same seeds again: the same draws
    const auto again = generator(f.model, batched).run(qs);
    for (size_t i = 0; i < qs.size(); i++) EXPECT_EQ(again[i].tokens, together[i].tokens);
}

// Interleaved prefill (the server's mode): the same tokens as admission-time prefill, and a long prompt admitted
// while another request decodes costs that stream one chunk per step, not a stall: the running request gets a token
// at every step while the new prompt goes through in chunks of 8, and the new request's first token comes with the
// step that feeds its last chunk.
TEST(InferGenerator, InterleavedPrefillKeepsTheTokensAndTheStreamsMoving) {
    fixture f;
    const std::vector<generation_request> qs = six_requests();
    generator_options mixed;
    mixed.max_batch = 4;
    mixed.prefill_chunk = 8;
    mixed.interleave_prefill = true;
    generator g(f.model, mixed);
    const auto together = g.run(qs);
    int64_t prompt_tokens = 0, output_tokens = 0;
    generator_options alone;
    alone.max_batch = 1;
    alone.prefill_chunk = 8;
    for (size_t i = 0; i < qs.size(); i++) {
        EXPECT_EQ(together[i].tokens, generator(f.model, alone).run({qs[i]})[0].tokens) << "request " << i;
        prompt_tokens += (int64_t)qs[i].prompt.size();
        output_tokens += (int64_t)together[i].tokens.size();
    }
    EXPECT_EQ(g.stats().prefill_tokens, prompt_tokens);
    EXPECT_EQ(g.stats().decode_tokens, output_tokens - (int64_t)qs.size());  // first tokens come from prefill

    generator s(f.model, mixed);
    std::vector<int64_t> got(2, 0);
    auto count = [&](size_t t, const auto&) { got[t]++; };
    generation_request a;
    a.prompt = prompt_of(5, 7);
    a.max_tokens = 30;
    s.submit(a, count);
    ASSERT_TRUE(s.step());
    ASSERT_EQ(got[0], 1);  // a's prompt in one chunk, its first token
    generation_request b;
    b.prompt = prompt_of(40, 8);  // five chunks of 8
    b.max_tokens = 4;
    s.submit(b, count);
    for (int k = 1; k <= 5; k++) {
        ASSERT_TRUE(s.step());
        EXPECT_EQ(got[0], 1 + k) << "step " << k;
        EXPECT_EQ(got[1], k == 5 ? 1 : 0) << "step " << k;
    }
}

TEST(InferGenerator, StopIdsStringsLengthAndContext) {
    fixture f;
    generation_request q;
    q.prompt = prompt_of(5, 2);
    q.max_tokens = 12;
    generator_options o;
    o.detokenize = [](std::span<const int32_t> ids) {
        std::string s;
        for (int32_t id : ids) s.append("<").append(std::to_string(id)).append(">");
        return s;
    };
    const auto free_run = generator(f.model, o).run({q})[0].tokens;
    ASSERT_EQ(free_run.size(), 12u);
    // a stop id: not emitted
    generation_request stop_id = q;
    stop_id.stop_ids = {free_run[4]};
    auto r = generator(f.model, o).run({stop_id})[0];
    size_t first = 0;
    while (free_run[first] != free_run[4]) first++;
    EXPECT_EQ(r.finish, "stop");
    EXPECT_EQ(r.tokens, std::vector<int32_t>(free_run.begin(), free_run.begin() + (long)first));
    // a stop string: the text is cut before it
    generation_request stop_str = q;
    const std::string needle = "<" + std::to_string(free_run[6]) + "><" + std::to_string(free_run[7]) + ">";
    stop_str.stop_strings = {needle};
    r = generator(f.model, o).run({stop_str})[0];
    EXPECT_EQ(r.finish, "stop");
    const std::string full = o.detokenize(free_run);
    EXPECT_EQ(r.text, full.substr(0, full.find(needle)));
    // the context: prompt + output ≤ max_context
    generator_options small = o;
    small.max_context = 9;
    r = generator(f.model, small).run({q})[0];
    EXPECT_EQ(r.finish, "length");
    EXPECT_EQ(r.tokens.size(), 4u);
    EXPECT_EQ(r.tokens, std::vector<int32_t>(free_run.begin(), free_run.begin() + 4));
}

// Requests of several prompt lengths (the drafts cross the window, CSA and HCA boundaries at different steps).
std::vector<generation_request> spec_requests(double temperature) {
    std::vector<generation_request> qs;
    for (int i = 0; i < 5; i++) {
        generation_request q;
        q.prompt = prompt_of(1 + 7 * i, 3 + i);
        q.max_tokens = 25;
        q.sampling.temperature = temperature;
        q.sampling.seed = 40 + (uint64_t)i;
        qs.push_back(q);
    }
    return qs;
}

TEST(InferGenerator, SpeculativeGreedyEqualsPlainGreedyWithMtpDrafts) {
    fixture f;
    const auto qs = spec_requests(0.0);
    generator_options plain;
    plain.max_batch = 3;
    const auto want = generator(f.model, plain).run(qs);
    generator_options spec = plain;
    spec.speculative = true;
    generator g(f.model, spec);
    const auto got = g.run(qs);
    for (size_t i = 0; i < qs.size(); i++) EXPECT_EQ(got[i].tokens, want[i].tokens) << "request " << i;
    EXPECT_GT(g.stats().drafted, 0);
    RecordProperty("mtp_acceptance", std::to_string(g.stats().acceptance()));
}

TEST(InferGenerator, SpeculativeWithInterleavedPrefillKeepsTheOutputAndTheDrafts) {
    // prompts fed in chunks of 8 inside the speculative steps (the server's mode): the greedy output is the plain
    // one, and every MTP draft is the one made after a separate one-chunk prefill — the MTP module saw every prompt
    // position, across chunk boundaries, with its state and the token after it
    fixture f;
    const auto qs = spec_requests(0.0);
    const auto want = generator(f.model, generator_options{}).run(qs);
    struct drafts {
        std::vector<std::vector<int32_t>> ids;
        std::vector<std::vector<std::vector<float>>> logits;
        std::vector<size_t> order;  // the tickets, draft by draft
    };
    auto drafts_of = [&](generator_options o) {
        drafts d;
        d.ids.resize(qs.size());
        d.logits.resize(qs.size());
        o.speculative = true;
        o.on_draft = [&](size_t t, int32_t x, std::span<const float> lg) {
            d.ids[t].push_back(x);
            d.logits[t].emplace_back(lg.begin(), lg.end());
            d.order.push_back(t);
        };
        generator g(f.model, o);
        const auto got = g.run(qs);
        int64_t prompt_tokens = 0;
        for (size_t i = 0; i < qs.size(); i++) {
            EXPECT_EQ(got[i].tokens, want[i].tokens) << "request " << i;
            prompt_tokens += (int64_t)qs[i].prompt.size();
        }
        EXPECT_EQ(g.stats().prefill_tokens, prompt_tokens);
        return d;
    };
    generator_options separate;  // every prompt in one chunk, alone
    separate.max_batch = 1;
    const drafts ref = drafts_of(separate);
    generator_options mixed;
    mixed.max_batch = 3;
    mixed.prefill_chunk = 8;
    mixed.interleave_prefill = true;
    const drafts got = drafts_of(mixed);
    // interleaved for real: request 0 (a 1-token prompt) is speculating while request 2's two chunks go in, so it has
    // drafted more than once before request 2's first draft (admitted before the step, it would have drafted once)
    const auto first_of_2 = std::find(got.order.begin(), got.order.end(), size_t{2});
    EXPECT_GE(std::count(got.order.begin(), first_of_2, size_t{0}), 2);
    for (size_t i = 0; i < qs.size(); i++) {
        ASSERT_FALSE(ref.ids[i].empty());
        EXPECT_EQ(got.ids[i], ref.ids[i]) << "request " << i;
        ASSERT_EQ(got.logits[i].size(), ref.logits[i].size());
        for (size_t k = 0; k < ref.logits[i].size(); k++) {
            double err = 0, scale = 0;
            for (size_t v = 0; v < ref.logits[i][k].size(); v++) {
                err = std::max(err, (double)std::fabs(got.logits[i][k][v] - ref.logits[i][k][v]));
                scale = std::max(scale, (double)std::fabs(ref.logits[i][k][v]));
            }
            EXPECT_LE(err, 1e-5 * scale) << "request " << i << ", draft " << k;
        }
    }
}

TEST(InferGenerator, SpeculativeAcceptedAndRejectedDraftsKeepTheGreedyOutput) {
    // a drafter that knows the plain greedy output and is wrong every third draft: both verification paths run, the
    // output is the plain one, and the acceptance is what the drafter's hit rate makes it
    fixture f;
    const auto qs = spec_requests(0.0);
    const auto want = generator(f.model, generator_options{}).run(qs);
    generator_options spec;
    spec.max_batch = 4;
    spec.speculative = true;
    int64_t calls = 0;
    spec.drafter = [&](size_t ticket, std::span<const int32_t> emitted) {
        const auto& w = want[ticket].tokens;
        const int32_t truth = emitted.size() < w.size() ? w[emitted.size()] : 0;
        return ++calls % 3 == 0 ? (truth + 1) % 256 : truth;
    };
    generator g(f.model, spec);
    const auto got = g.run(qs);
    for (size_t i = 0; i < qs.size(); i++) EXPECT_EQ(got[i].tokens, want[i].tokens) << "request " << i;
    EXPECT_GT(g.stats().accepted, 0);
    EXPECT_LT(g.stats().accepted, g.stats().drafted);
    EXPECT_NEAR(g.stats().acceptance(), 2.0 / 3.0, 0.15);
    EXPECT_LT(g.stats().decode_steps, 5 * 24);  // fewer steps than tokens: accepted drafts emit two
}

TEST(InferGenerator, SpeculativeSamplingIsSeededAndStaysInTheTargetSupport) {
    // with sampling, the speculative tokens are reproducible from the seeds, and a top-k of 1 (a one-point target)
    // makes them the greedy ones whatever the drafts
    fixture f;
    auto qs = spec_requests(0.9);
    generator_options spec;
    spec.speculative = true;
    const auto a = generator(f.model, spec).run(qs), b = generator(f.model, spec).run(qs);
    for (size_t i = 0; i < qs.size(); i++) EXPECT_EQ(a[i].tokens, b[i].tokens);
    for (auto& q : qs) q.sampling.top_k = 1;
    const auto greedy = generator(f.model, generator_options{}).run(spec_requests(0.0));
    const auto one_point = generator(f.model, spec).run(qs);
    for (size_t i = 0; i < qs.size(); i++) EXPECT_EQ(one_point[i].tokens, greedy[i].tokens) << "request " << i;
}

TEST(InferGenerator, BadRequestsAreErrorsBeforeAnythingRuns) {
    fixture f;
    generator g(f.model, generator_options{});
    generation_request empty;
    EXPECT_THROW(g.run({empty}), trex::error);
    generation_request bad_id;
    bad_id.prompt = {3, (int32_t)f.cfg.vocab_size};
    EXPECT_THROW(g.run({bad_id}), trex::error);
    generation_request bad_temp;
    bad_temp.prompt = {3};
    bad_temp.sampling.temperature = -0.5;
    EXPECT_THROW(g.run({bad_temp}), trex::error);
    generator_options tiny;
    tiny.max_context = 4;
    generation_request too_long;
    too_long.prompt = {3, 4, 5, 6};
    EXPECT_THROW(generator(f.model, tiny).run({too_long}), trex::error);
    EXPECT_EQ(g.stats().prefill_tokens, 0);
}

}  // namespace
