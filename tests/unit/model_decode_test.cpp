// Cached decoding (dsv4_model::decode, attention_layer::decode, attention_cache): the logits of every new token equal
// those of a full forward over the same prefix (the training forward, step(keep_logits)), for sequences longer than
// the window, crossing CSA and HCA compression boundaries, past the CSA top-k and past the YaRN original length, one
// token at a time, in prefill chunks of 1, 7 and 64 tokens, and in ragged batches of 8 sequences of different lengths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/model/cache_size.hpp"
#include "trex/model/config.hpp"
#include "trex/model/layers/attention_cache.hpp"
#include "trex/model/model.hpp"

namespace {

constexpr double kTol = 1e-5;  // max |decode − forward| / max |forward| per logits row, fp32

// v4-micro: window 8, CSA (ratio 4, top-4) and HCA (ratio 8) layers, YaRN past 32 positions, hash-routed layer 0.
trex::model_config micro() {
    return trex::load_config(trex::test::source_path("configs/v4-micro.json"));
}

// Weights large enough that attention, the indexer and the router are far from uniform (the 0.006 default makes
// every score nearly equal, which would hide a wrong key set).
void init_model(trex::dsv4_model& m) {
    m.params().init(2024, 0.08);
}

std::vector<int32_t> random_tokens(int64_t n, int64_t V, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int32_t> dist(2, (int32_t)V - 1);
    std::vector<int32_t> t((size_t)n);
    for (int32_t& x : t) x = dist(rng);
    return t;
}

// [S, V] logits of the training forward over one sequence: the main head's, or with mtp the MTP module's (position
// t: h_L(t) and mtp_ids[t]).
std::vector<float> forward_logits(trex::dsv4_model& m, const std::vector<int32_t>& ids,
                                  const std::vector<int32_t>& mtp_ids = {}, bool mtp = false) {
    const int64_t S = (int64_t)ids.size();
    std::vector<int32_t> labels((size_t)S, -1), mtp_in = mtp_ids;
    mtp_in.resize((size_t)S, 0);
    trex::batch_view b;
    b.B = 1;
    b.S = S;
    b.input_ids = ids.data();
    b.labels = labels.data();
    b.mtp_input_ids = mtp_in.data();
    trex::step_options o;
    o.backward = false;
    o.keep_logits = true;
    m.step(b, o);
    return mtp ? m.mtp_logits() : m.logits();
}

// max |a − b| / max |b| over row r of two [*, V] arrays
double row_error(const float* got, const float* want, int64_t V) {
    double diff = 0, scale = 0;
    for (int64_t v = 0; v < V; v++) {
        diff = std::max(diff, (double)std::fabs(got[v] - want[v]));
        scale = std::max(scale, (double)std::fabs(want[v]));
    }
    return scale > 0 ? diff / scale : diff;
}

trex::sequence_cache empty_cache(const trex::model_config& cfg) {
    return trex::sequence_cache::for_model(cfg, false);
}

// Feeds `ids` to a fresh cache in chunks of `chunk` tokens; returns every token's logits [S, V].
std::vector<float> decode_in_chunks(trex::dsv4_model& m, const std::vector<int32_t>& ids, int64_t chunk,
                                    trex::sequence_cache* out_cache = nullptr) {
    const int64_t V = m.config().vocab_size, S = (int64_t)ids.size();
    trex::sequence_cache cache = empty_cache(m.config());
    std::vector<float> all((size_t)(S * V)), logits;
    trex::sequence_cache* seqs[] = {&cache};
    for (int64_t t0 = 0; t0 < S; t0 += chunk) {
        const int64_t n = std::min(chunk, S - t0);
        const int64_t counts[] = {n};
        m.decode(seqs, std::span<const int32_t>(ids.data() + t0, (size_t)n), counts, logits, true);
        std::copy(logits.begin(), logits.end(), all.begin() + t0 * V);
    }
    if (out_cache) *out_cache = std::move(cache);
    return all;
}

TEST(ModelDecode, OneTokenAtATimeEqualsTheFullForwardAtEveryPosition) {
    const trex::model_config cfg = micro();
    ASSERT_EQ(cfg.sliding_window, 8);
    ASSERT_EQ(cfg.rope_scaling.original_max_position_embeddings, 32);
    trex::dsv4_model m(cfg);
    init_model(m);
    const int64_t S = 90, V = cfg.vocab_size;  // > window, 22 CSA entries (> top-4), 11 HCA entries, past 32
    const std::vector<int32_t> ids = random_tokens(S, V, 7);
    const std::vector<float> want = forward_logits(m, ids);
    trex::sequence_cache cache;
    const std::vector<float> got = decode_in_chunks(m, ids, 1, &cache);
    double worst = 0;
    for (int64_t t = 0; t < S; t++) {
        const double e = row_error(got.data() + t * V, want.data() + t * V, V);
        EXPECT_LE(e, kTol) << "position " << t;
        worst = std::max(worst, e);
    }
    RecordProperty("max_rel_error", std::to_string(worst));
    // the cache holds what docs/model.md §3.7 says: the window, the entries, the indexer keys
    EXPECT_EQ(cache.len, S);
    for (int l = 0; l < cfg.n_layers(); l++) {
        const trex::attention_cache& c = cache.layers[(size_t)l];
        const int m_l = cfg.ratio(l);
        EXPECT_EQ(c.len, S);
        EXPECT_EQ((int64_t)c.window.size(), cfg.sliding_window * cfg.head_dim) << "layer " << l;
        EXPECT_EQ((int64_t)c.entries.size(), m_l > 0 ? S / m_l * cfg.head_dim : 0) << "layer " << l;
        EXPECT_EQ((int64_t)c.index_keys.size(), m_l == 4 ? S / 4 * cfg.index_head_dim : 0) << "layer " << l;
    }
}

// The release's numerics (docs/model.md §3.4): decoding fake-quantises the window ring, the compressed entries and the
// indexer's keys and queries as the forward does, so its logits are the forward's. Lower-index ties: the release's
// torch.topk ranks a different row in a prefill than in a decoding step, so its choice among equal scores is not the
// same in the two (docs/model.md §3.7).
TEST(ModelDecode, ReleaseNumericsDecodeEqualsTheForward) {
    trex::model_config cfg = micro();
    cfg.head_dim = 80;  // 64 non-RoPE dims: one FP8 block
    cfg.qat = "release";
    trex::validate_config(cfg, "micro + qat");
    trex::dsv4_model m(cfg), plain_numerics([&] {
        trex::model_config c = cfg;
        c.qat = "none";
        return c;
    }());
    init_model(m);
    init_model(plain_numerics);
    const int64_t S = 90, V = cfg.vocab_size;
    const std::vector<int32_t> ids = random_tokens(S, V, 7);
    const std::vector<float> want = forward_logits(m, ids), fp32 = forward_logits(plain_numerics, ids);
    for (int64_t chunk : {1, 7}) {
        const std::vector<float> got = decode_in_chunks(m, ids, chunk);
        double worst = 0;
        for (int64_t t = 0; t < S; t++) worst = std::max(worst, row_error(got.data() + t * V, want.data() + t * V, V));
        std::printf("[decode qat] chunk %lld: worst row error %.3e\n", (long long)chunk, worst);
        EXPECT_LE(worst, kTol) << "chunk " << chunk;
    }
    double moved = 0;  // the quantisation is there: the fp32 forward differs
    for (int64_t t = 0; t < S; t++) moved = std::max(moved, row_error(fp32.data() + t * V, want.data() + t * V, V));
    EXPECT_GT(moved, 1e-3);
}

TEST(ModelDecode, ChunkedPrefillEqualsOneChunk) {
    const trex::model_config cfg = micro();
    trex::dsv4_model m(cfg);
    init_model(m);
    const int64_t S = 150, V = cfg.vocab_size;
    const std::vector<int32_t> ids = random_tokens(S, V, 11);
    const std::vector<float> want = forward_logits(m, ids);
    const std::vector<float> one = decode_in_chunks(m, ids, S);
    for (int64_t chunk : {1, 7, 64}) {
        const std::vector<float> got = decode_in_chunks(m, ids, chunk);
        double worst_one = 0, worst_fwd = 0;
        for (int64_t t = 0; t < S; t++) {
            worst_one = std::max(worst_one, row_error(got.data() + t * V, one.data() + t * V, V));
            worst_fwd = std::max(worst_fwd, row_error(got.data() + t * V, want.data() + t * V, V));
        }
        EXPECT_LE(worst_one, kTol) << "chunks of " << chunk << " against one chunk";
        EXPECT_LE(worst_fwd, kTol) << "chunks of " << chunk << " against the forward";
    }
}

TEST(ModelDecode, RaggedBatchOfEightEqualsEachSequenceAlone) {
    const trex::model_config cfg = micro();
    trex::dsv4_model m(cfg);
    init_model(m);
    const int64_t V = cfg.vocab_size, B = 8, steps = 12;
    const int64_t prompt[B] = {1, 5, 9, 17, 33, 40, 64, 71};  // different lengths: boundaries at different steps
    std::vector<std::vector<int32_t>> seq(B);
    std::vector<std::vector<float>> want(B);
    for (int64_t b = 0; b < B; b++) {
        seq[(size_t)b] = random_tokens(prompt[b] + steps, V, 100 + (uint32_t)b);
        want[(size_t)b] = forward_logits(m, seq[(size_t)b]);
    }
    std::vector<trex::sequence_cache> caches(B, empty_cache(cfg));
    std::vector<trex::sequence_cache*> ptrs;
    for (auto& c : caches) ptrs.push_back(&c);
    // one batched prefill of the prompts (every token's logits), then `steps` batched single-token steps
    std::vector<int32_t> ids;
    std::vector<int64_t> counts;
    for (int64_t b = 0; b < B; b++) {
        ids.insert(ids.end(), seq[(size_t)b].begin(), seq[(size_t)b].begin() + prompt[b]);
        counts.push_back(prompt[b]);
    }
    std::vector<float> logits;
    m.decode(ptrs, ids, counts, logits, true);
    double worst = 0;
    int64_t row = 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t t = 0; t < prompt[b]; t++, row++)
            worst = std::max(worst, row_error(logits.data() + row * V, want[(size_t)b].data() + t * V, V));
    EXPECT_LE(worst, kTol) << "batched prefill";
    for (int64_t s = 0; s < steps; s++) {
        ids.clear();
        counts.assign(B, 1);
        for (int64_t b = 0; b < B; b++) ids.push_back(seq[(size_t)b][(size_t)(prompt[b] + s)]);
        m.decode(ptrs, ids, counts, logits, false);
        ASSERT_EQ((int64_t)logits.size(), B * V);
        for (int64_t b = 0; b < B; b++) {
            const double e = row_error(logits.data() + b * V, want[(size_t)b].data() + (prompt[b] + s) * V, V);
            EXPECT_LE(e, kTol) << "sequence " << b << " step " << s;
        }
    }
    for (int64_t b = 0; b < B; b++) EXPECT_EQ(caches[(size_t)b].len, prompt[b] + steps);
}

TEST(ModelDecode, CacheSizeIsTheFormula) {
    const trex::model_config cfg = micro();
    trex::dsv4_model m(cfg);
    init_model(m);
    for (int64_t S : {3, 8, 33, 90}) {
        trex::sequence_cache cache;
        decode_in_chunks(m, random_tokens(S, cfg.vocab_size, 5), 5, &cache);
        const trex::cache_size want = trex::inference_cache_size(cfg, S);
        // what grows with the sequence is exactly the formula's: the window rings, the entries, the indexer keys
        double grows = 0, pending = 0;
        for (const auto& c : cache.layers) {
            grows += (double)(c.window.size() + c.entries.size() + c.index_keys.size());
            pending += (double)(c.pend_kv.size() + c.pend_gate.size() + c.ipend_kv.size() + c.ipend_gate.size());
        }
        EXPECT_EQ(grows, want.window + want.compressed + want.indexer) << S << " tokens";
        EXPECT_LE(pending, want.pending) << S << " tokens";  // the formula's is the most a partial block keeps
        EXPECT_EQ((double)cache.bytes(), 4 * (grows + pending)) << S << " tokens";
    }
}

TEST(ModelDecode, MtpOverItsCacheEqualsTheForwardsMtpLogits) {
    const trex::model_config cfg = micro();
    ASSERT_TRUE(cfg.has_mtp());
    trex::dsv4_model m(cfg);
    init_model(m);
    const int64_t S = 40, V = cfg.vocab_size, nd = (int64_t)cfg.hc_mult * cfg.hidden_size;
    const std::vector<int32_t> ids = random_tokens(S, V, 21);
    std::vector<int32_t> next(ids.begin() + 1, ids.end());
    next.push_back(5);
    const std::vector<float> want = forward_logits(m, ids, next, true);
    for (int64_t chunk : {1, 7, 40}) {
        trex::sequence_cache cache = trex::sequence_cache::for_model(cfg, true);
        ASSERT_EQ((int)cache.layers.size(), cfg.n_layers() + 1);
        trex::sequence_cache* seqs[] = {&cache};
        std::vector<float> logits, states, got;
        for (int64_t t0 = 0; t0 < S; t0 += chunk) {
            const int64_t n = std::min(chunk, S - t0);
            const int64_t counts[] = {n};
            m.decode(seqs, std::span<const int32_t>(ids.data() + t0, (size_t)n), counts, logits, false, &states);
            ASSERT_EQ((int64_t)states.size(), n * nd);
            m.decode_mtp(seqs, states, std::span<const int32_t>(next.data() + t0, (size_t)n), counts, logits, true);
            got.insert(got.end(), logits.begin(), logits.end());
        }
        double worst = 0;
        for (int64_t t = 0; t < S; t++) worst = std::max(worst, row_error(got.data() + t * V, want.data() + t * V, V));
        EXPECT_LE(worst, kTol) << "chunks of " << chunk;
        EXPECT_EQ(cache.layers[(size_t)cfg.n_layers()].len, S);
    }
}

TEST(ModelDecode, ChosenLogitRowsAreThoseOfEveryRow) {
    // decode_rows / decode_mtp_rows: each sequence's last rows_wanted[b] rows (0, some, all), in sequence order, are
    // the all-logits call's rows; a count outside [0, counts[b]] is an error
    const trex::model_config cfg = micro();
    trex::dsv4_model m(cfg);
    init_model(m);
    const int64_t V = cfg.vocab_size;
    const std::vector<int32_t> ids = random_tokens(8, V, 41);
    const int64_t counts[] = {3, 1, 4}, wanted[] = {0, 1, 2}, first_row[] = {0, 3, 4};
    auto fresh = [&] {
        std::vector<trex::sequence_cache> c;
        for (int i = 0; i < 3; i++) c.push_back(trex::sequence_cache::for_model(cfg, true));
        return c;
    };
    std::vector<trex::sequence_cache> a = fresh(), b = fresh();
    std::vector<trex::sequence_cache*> sa{&a[0], &a[1], &a[2]}, sb{&b[0], &b[1], &b[2]};
    std::vector<float> all, some, states, states_b, mtp_all, mtp_some;
    m.decode(sa, ids, counts, all, true, &states);
    m.decode_rows(sb, ids, counts, wanted, some, &states_b);
    ASSERT_EQ((int64_t)some.size(), 3 * V);
    EXPECT_EQ(0, std::memcmp(states.data(), states_b.data(), states.size() * sizeof(float)));
    const std::vector<int32_t> next = random_tokens(8, V, 43);
    m.decode_mtp(sa, states, next, counts, mtp_all, true);
    m.decode_mtp_rows(sb, states, next, counts, wanted, mtp_some);
    ASSERT_EQ((int64_t)mtp_some.size(), 3 * V);
    int64_t at = 0;
    for (int b = 0; b < 3; b++)
        for (int64_t r = counts[b] - wanted[b]; r < counts[b]; r++, at++) {
            EXPECT_LE(row_error(some.data() + at * V, all.data() + (first_row[b] + r) * V, V), 1e-6) << b << " " << r;
            EXPECT_LE(row_error(mtp_some.data() + at * V, mtp_all.data() + (first_row[b] + r) * V, V), 1e-6)
                << b << " " << r;
        }
    const int64_t none[] = {0, 0, 0}, too_many[] = {0, 2, 0};
    std::vector<trex::sequence_cache> c = fresh();
    std::vector<trex::sequence_cache*> sc{&c[0], &c[1], &c[2]};
    m.decode_rows(sc, ids, counts, none, some);
    EXPECT_TRUE(some.empty());
    EXPECT_THROW(m.decode_rows(sc, ids, counts, too_many, some), trex::error);
}

TEST(ModelDecode, RewindRestoresTheCacheBitwise) {
    // tokens appended and rewound leave the cache as if they never came: the next tokens decode bitwise as on a
    // cache that never saw them — at every prompt length, so that the two rewound tokens cross the window's wrap and
    // complete CSA (4) and HCA (8) blocks
    const trex::model_config cfg = micro();
    trex::dsv4_model m(cfg);
    init_model(m);
    const int64_t V = cfg.vocab_size;
    const std::vector<int32_t> ids = random_tokens(40, V, 31);
    const int32_t wrong[] = {7, 9}, right[] = {11, 13};
    const int64_t two[] = {2};
    for (int64_t P = 1; P <= 30; P++) {
        trex::sequence_cache a = empty_cache(cfg), b = empty_cache(cfg);
        trex::sequence_cache* sa[] = {&a};
        trex::sequence_cache* sb[] = {&b};
        std::vector<float> la, lb;
        const int64_t np[] = {P};
        m.decode(sa, std::span<const int32_t>(ids.data(), (size_t)P), np, la);
        m.decode(sb, std::span<const int32_t>(ids.data(), (size_t)P), np, lb);
        const trex::sequence_cache::mark_t mark = a.mark(cfg.n_layers(), 2);
        m.decode(sa, wrong, two, la);
        a.rewind(mark);
        EXPECT_EQ(a.len, P);
        EXPECT_EQ(a.bytes(), b.bytes()) << "prompt " << P;
        m.decode(sa, right, two, la, true);
        m.decode(sb, right, two, lb, true);
        ASSERT_EQ(la.size(), lb.size());
        EXPECT_EQ(0, std::memcmp(la.data(), lb.data(), la.size() * sizeof(float))) << "prompt " << P;
    }
}

TEST(ModelDecode, RewindKeepsTheVerifiedTokenAndCutsTheDraft) {
    // speculative decoding's rejection: two tokens fed, the second cut (rewind keeping one). The cache holds what the
    // kept token fed alone leaves: same bytes, and the next logits within the decode tolerance whichever draft was cut
    // (not bitwise: the routed experts' oneDNN GEMMs may round a row differently when the draft shares its expert). A
    // mark released after an accepted draft changes nothing, bitwise — at every prompt length across the window's
    // wrap and the CSA (4) and HCA (8) blocks
    const trex::model_config cfg = micro();
    trex::dsv4_model m(cfg);
    init_model(m);
    const int64_t V = cfg.vocab_size;
    const std::vector<int32_t> ids = random_tokens(40, V, 37);
    const int32_t draft_a[] = {11, 7}, draft_b[] = {11, 9}, alone[] = {11}, next[] = {13, 17};
    const int64_t one[] = {1}, two[] = {2};
    for (int64_t P = 1; P <= 30; P++) {
        std::vector<trex::sequence_cache> c(4, empty_cache(cfg));
        std::vector<std::vector<float>> l(4);
        const std::span<const int32_t> prompt(ids.data(), (size_t)P);
        const int64_t np[] = {P};
        for (size_t i = 0; i < 4; i++) {
            trex::sequence_cache* s[] = {&c[i]};
            m.decode(s, prompt, np, l[i]);
        }
        trex::sequence_cache* s0[] = {&c[0]};
        trex::sequence_cache* s1[] = {&c[1]};
        trex::sequence_cache* s2[] = {&c[2]};
        trex::sequence_cache* s3[] = {&c[3]};
        const trex::sequence_cache::mark_t m0 = c[0].mark(cfg.n_layers(), 2);
        m.decode(s0, draft_a, two, l[0]);
        c[0].rewind(m0, 1);
        const trex::sequence_cache::mark_t m1 = c[1].mark(cfg.n_layers(), 2);
        m.decode(s1, draft_b, two, l[1]);
        c[1].rewind(m1, 1);
        m.decode(s2, alone, one, l[2]);
        ASSERT_EQ(c[0].len, P + 1);
        EXPECT_EQ(c[0].bytes(), c[2].bytes()) << "prompt " << P;
        for (int i = 0; i < 3; i++) {
            trex::sequence_cache* s[] = {&c[(size_t)i]};
            m.decode(s, next, two, l[(size_t)i], true);
        }
        EXPECT_EQ(c[1].bytes(), c[2].bytes()) << "prompt " << P;
        for (int i = 0; i < 2; i++)
            for (int64_t t = 0; t < 2; t++)
                EXPECT_LE(row_error(l[(size_t)i].data() + t * V, l[2].data() + t * V, V), kTol)
                    << "prompt " << P << ", draft " << i << ", row " << t;
        // accepted: marked, two fed, released — bitwise a cache never marked
        trex::sequence_cache plain = empty_cache(cfg);
        trex::sequence_cache* sp[] = {&plain};
        std::vector<float> lp;
        m.decode(sp, prompt, np, lp);
        const trex::sequence_cache::mark_t m3 = c[3].mark(cfg.n_layers(), 2);
        m.decode(s3, draft_a, two, l[3]);
        c[3].release(m3);
        m.decode(sp, draft_a, two, lp);
        EXPECT_EQ(c[3].bytes(), plain.bytes()) << "prompt " << P;
        m.decode(s3, next, two, l[3], true);
        m.decode(sp, next, two, lp, true);
        EXPECT_EQ(0, std::memcmp(l[3].data(), lp.data(), lp.size() * sizeof(float))) << "prompt " << P;
    }
}

TEST(ModelDecode, BadInputIsAnErrorAndLeavesTheCacheAlone) {
    const trex::model_config cfg = micro();
    trex::dsv4_model m(cfg);
    init_model(m);
    trex::sequence_cache cache = empty_cache(cfg);
    trex::sequence_cache* seqs[] = {&cache};
    std::vector<float> logits;
    const int32_t bad[] = {(int32_t)cfg.vocab_size};
    const int64_t one[] = {1};
    EXPECT_THROW(m.decode(seqs, bad, one, logits), trex::error);
    const int32_t two[] = {3, 4};
    EXPECT_THROW(m.decode(seqs, two, one, logits), trex::error);
    trex::sequence_cache short_cache = trex::sequence_cache::for_model(cfg, false);
    short_cache.layers.pop_back();
    trex::sequence_cache* short_seqs[] = {&short_cache};
    const int32_t ok[] = {3};
    EXPECT_THROW(m.decode(short_seqs, ok, one, logits), trex::error);
    EXPECT_EQ(cache.len, 0);
    EXPECT_EQ(cache.layers[0].len, 0);
}

}  // namespace
