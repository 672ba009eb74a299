// The layer modules (src/trex/model/layers/) on their own, outside the model: attention, MoE, a whole block (mHC
// around both), the vocabulary head and the MTP module are each built from the config, given their weight views, a
// batch geometry, a workspace and their planned saved tensors, and run forward and backward on random inputs through
// the CPU backend and through the reference backend (kernels/ref, plain loops) — outputs, input gradients and every
// parameter gradient agree. And the model is its layers composed: a model step's block outputs are bitwise those of
// the blocks run one after another by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "trex/kernels/kernel_table.hpp"
#include "trex/model/activations.hpp"
#include "trex/model/config.hpp"
#include "trex/model/layers/attention.hpp"
#include "trex/model/layers/block.hpp"
#include "trex/model/layers/head.hpp"
#include "trex/model/layers/moe.hpp"
#include "trex/model/layers/mtp.hpp"
#include "trex/model/layers/weights.hpp"
#include "trex/model/model.hpp"
#include "trex/train/synthetic_batch.hpp"

namespace {

constexpr double kTol = 2e-5;  // relative L2, reference loops vs the fast kernels, both fp32

trex::model_config micro() {
    return trex::load_config(trex::test::source_path("configs/v4-micro.json"));
}

std::vector<float> random_vector(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

void fill(std::span<float> dst, uint32_t seed) {
    const std::vector<float> v = random_vector(dst.size(), seed);
    std::copy(v.begin(), v.end(), dst.begin());
}

std::vector<float> copy_of(std::span<const float> s) {
    return {s.begin(), s.end()};
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    double norm = 0;
    for (float x : want) norm += (double)x * x;
    ASSERT_GT(norm, 0.0) << what << " is all zero: nothing compared";
    EXPECT_LT(trex::test::rel_error(got.data(), want.data(), (long)got.size()), kTol) << what;
}

// One layer's world on one backend: parameters (seed 7, gradients zeroed), a packed batch of 2 × 64 tokens and its
// geometry, the options, a workspace and an activation arena planned for the stage the test builds.
struct harness {
    trex::model_config cfg;
    const trex::kernel_table& k;
    trex::param_store ps;
    trex::synthetic_batch batch;
    trex::batch_view view;
    trex::batch_geometry geo;
    trex::step_options opts;
    trex::workspace ws;
    trex::stage_activations acts;

    harness(const trex::model_config& c, const trex::kernel_table& kt, const trex::step_options& o)
        : cfg(c), k(kt), ps(c), batch(make_batch(c)), view(batch.view()), opts(o) {
        ps.init(7);
        ps.zero_grads();
        geo = trex::make_geometry(cfg, view.B, view.S, view.doc_start);
    }
    static trex::synthetic_batch make_batch(const trex::model_config& c) {
        trex::synthetic_batch_options o;
        o.packed = true;
        return trex::make_synthetic_batch(2, 64, c.vocab_size, 11, o);
    }
    trex::layer_env env() { return trex::layer_env{cfg, k, ws, geo, view, opts}; }
    int64_t N() const { return geo.N; }
    int64_t nd() const { return (int64_t)cfg.hc_mult * cfg.hidden_size; }
    std::vector<float> grads() const { return {ps.grads.data(), ps.grads.data() + ps.n_floats}; }

    // The saved tensors of `blocks` (and the heads when asked), planned as the model plans a stage.
    void plan(const std::vector<trex::block_act_shape>& blocks, bool head, bool mtp) {
        trex::stage_plan p;
        p.head = {N(), cfg.hidden_size, cfg.hc_mult, head, mtp};
        p.mtp_in = mtp ? N() * nd() : 0;
        p.blocks = blocks;
        acts.plan(p);
    }
};

struct layer_outputs {
    std::vector<float> out, din, grads;
    double loss = 0;
    std::vector<int64_t> load;
};

layer_outputs run_attention(const trex::kernel_table& k, int layer, const trex::step_options& opts) {
    harness h(micro(), k, opts);
    const trex::transformer_block blk(h.cfg, layer);
    const trex::attention_layer attn(h.cfg, layer);
    const trex::block_weights W = trex::bind_block_weights(h.ps, layer, false);
    const trex::block_weights G = trex::bind_block_weights(h.ps, layer, true);
    h.plan({blk.act_shape(h.env())}, false, false);
    trex::block_acts& A = h.acts.block(0);
    fill(A.y1, 21);
    attn.forward(A, W.attn, h.env());
    layer_outputs r;
    r.out = copy_of(A.F1);
    r.loss = A.idx;
    const std::vector<float> dF = random_vector(h.N() * h.cfg.hidden_size, 22);
    r.din.resize(dF.size());
    attn.backward(A, r.din.data(), dF.data(), W.attn, G.attn, h.env());
    r.grads = h.grads();
    return r;
}

layer_outputs run_moe(const trex::kernel_table& k, int layer) {
    harness h(micro(), k, {});
    const trex::transformer_block blk(h.cfg, layer);
    const trex::moe_layer moe(h.cfg, layer);
    const trex::block_weights W = trex::bind_block_weights(h.ps, layer, false);
    const trex::block_weights G = trex::bind_block_weights(h.ps, layer, true);
    h.plan({blk.act_shape(h.env())}, false, false);
    trex::block_acts& A = h.acts.block(0);
    fill(A.y2, 31);
    moe.forward(A, W.ffn, h.env());
    layer_outputs r;
    r.out = copy_of(A.F2);
    r.loss = A.bal;
    r.load.assign(A.load.begin(), A.load.end());
    const std::vector<float> dF = random_vector(h.N() * h.cfg.hidden_size, 32);
    r.din.resize(dF.size());
    moe.backward(A, r.din.data(), dF.data(), W.ffn, G.ffn, h.env());
    r.grads = h.grads();
    return r;
}

layer_outputs run_block(const trex::kernel_table& k, int layer) {
    harness h(micro(), k, {});
    const trex::transformer_block blk(h.cfg, layer);
    const trex::block_weights W = trex::bind_block_weights(h.ps, layer, false);
    const trex::block_weights G = trex::bind_block_weights(h.ps, layer, true);
    h.plan({blk.act_shape(h.env())}, false, false);
    trex::block_acts& A = h.acts.block(0);
    const std::vector<float> h_in = random_vector(h.N() * h.nd(), 41);
    layer_outputs r;
    r.out.resize(h_in.size());
    blk.forward(A, r.out.data(), h_in.data(), W, h.env());
    const std::vector<float> dh_out = random_vector(h_in.size(), 42);
    r.din.resize(h_in.size());
    blk.backward(A, r.din.data(), dh_out.data(), h_in.data(), W, G, h.env());
    r.grads = h.grads();
    return r;
}

// The main head (and, with mtp, the MTP module after it, sharing head.weight's transposed gradient) on a random
// last state: the summed losses, dL/dh_L and the gradients.
layer_outputs run_heads(const trex::kernel_table& k, bool mtp) {
    trex::step_options opts;
    opts.head_chunk = 48;  // several chunks, the last one partial
    harness h(micro(), k, opts);
    const trex::lm_head head(h.cfg);
    const trex::mtp_block mtp_module(h.cfg);
    const trex::head_weights W = trex::bind_head_weights(h.ps, "", false);
    const trex::head_weights G = trex::bind_head_weights(h.ps, "", true);
    const trex::mtp_weights MW = trex::bind_mtp_weights(h.ps, false);
    const trex::mtp_weights MG = trex::bind_mtp_weights(h.ps, true);
    std::vector<trex::block_act_shape> shapes;
    if (mtp) shapes.push_back(mtp_module.block().act_shape(h.env()));
    h.plan(shapes, true, mtp);
    std::vector<float> states = random_vector(2 * h.N() * h.nd(), 51);  // h_L, then the MTP output
    std::vector<float> gT(h.cfg.hidden_size * h.cfg.vocab_size);
    trex::head_grad hg{gT.data()};
    layer_outputs r;
    int64_t n_valid = 0;
    r.loss = head.forward(trex::main_head_saved(h.acts.head), &n_valid, states.data(), h.view.labels, 1.0 / 128,
                          nullptr, hg, W, h.env());
    if (mtp) {
        r.loss += mtp_module.forward(h.acts.block(0), h.acts.head, h.acts.mtp_in, states.data() + h.N() * h.nd(),
                                     states.data(), &n_valid, 0.3 / 128, nullptr, hg, MW, h.env());
        r.out.assign(states.begin() + h.N() * h.nd(), states.end());
    }
    trex::lm_head::add_grad(G.head, hg, h.env());
    r.din.resize(h.N() * h.nd());
    head.backward(r.din.data(), states.data(), trex::main_head_saved(h.acts.head), W, G, h.env());
    if (mtp) {
        std::vector<float> de_mtp(h.N() * h.cfg.hidden_size);
        mtp_module.backward(r.din.data(), de_mtp.data(), h.acts.block(0), h.acts.head, h.acts.mtp_in,
                            states.data() + h.N() * h.nd(), states.data(), MW, MG, h.env());
        r.din.insert(r.din.end(), de_mtp.begin(), de_mtp.end());
    }
    r.grads = h.grads();
    return r;
}

void expect_same_layer(const layer_outputs& cpu, const layer_outputs& ref, const char* what) {
    SCOPED_TRACE(what);
    if (!ref.out.empty()) expect_close(cpu.out, ref.out, "output");
    expect_close(cpu.din, ref.din, "input gradient");
    expect_close(cpu.grads, ref.grads, "parameter gradients");
    EXPECT_NEAR(cpu.loss, ref.loss, 1e-5 * std::max(1.0, std::abs(ref.loss)));
    EXPECT_EQ(cpu.load, ref.load);
}

}  // namespace

TEST(LayerModules, AttentionAloneMatchesTheReferenceBackendOnEveryKind) {
    const trex::model_config cfg = micro();
    for (int l = 0; l < cfg.n_layers(); l++)
        for (bool dense : {false, true}) {
            if (dense && cfg.ratio(l) != 4) continue;
            trex::step_options opts;
            opts.dense_csa = dense;
            const layer_outputs cpu = run_attention(trex::cpu_kernels(), l, opts);
            const layer_outputs ref = run_attention(trex::ref_kernels(), l, opts);
            expect_same_layer(
                cpu, ref,
                ("layer " + std::to_string(l) + " ratio " + std::to_string(cfg.ratio(l)) + (dense ? " dense" : ""))
                    .c_str());
            if (cfg.ratio(l) == 4) {
                EXPECT_GT(cpu.loss, 0.0) << "the indexer loss of a CSA layer";
            }
        }
}

TEST(LayerModules, MoeAloneMatchesTheReferenceBackendHashAndScoreRouted) {
    const trex::model_config cfg = micro();
    ASSERT_TRUE(cfg.is_hash_layer(0));
    ASSERT_FALSE(cfg.is_hash_layer(1));
    for (int l : {0, 1}) {
        const layer_outputs cpu = run_moe(trex::cpu_kernels(), l);
        const layer_outputs ref = run_moe(trex::ref_kernels(), l);
        expect_same_layer(cpu, ref, l == 0 ? "hash-routed" : "score-routed");
        int64_t routed = 0;
        for (int64_t v : cpu.load) routed += v;
        EXPECT_EQ(routed, 2 * 64 * cfg.num_experts_per_tok);
        if (l == 1) {
            EXPECT_GT(cpu.loss, 0.0) << "the balance loss of a score-routed layer";
        }
    }
}

TEST(LayerModules, BlockWithItsMhcUnitsMatchesTheReferenceBackend) {
    for (int l : {0, 1, 2}) {  // window, CSA, HCA
        const layer_outputs cpu = run_block(trex::cpu_kernels(), l);
        const layer_outputs ref = run_block(trex::ref_kernels(), l);
        expect_same_layer(cpu, ref, ("block " + std::to_string(l)).c_str());
    }
}

TEST(LayerModules, HeadAndMtpModuleMatchTheReferenceBackend) {
    for (bool mtp : {false, true}) {
        const layer_outputs cpu = run_heads(trex::cpu_kernels(), mtp);
        const layer_outputs ref = run_heads(trex::ref_kernels(), mtp);
        expect_same_layer(cpu, ref, mtp ? "main head + MTP" : "main head");
        EXPECT_GT(cpu.loss, 1.0);  // ~ln V for a random state
    }
}

// The model composes its layers and adds nothing to their math: the state after each block of a model step is
// bitwise that of the embedding run through the blocks by hand.
TEST(LayerModules, TheModelIsItsBlocksComposed) {
    const trex::model_config cfg = micro();
    trex::dsv4_model model(cfg);
    model.params().init(7);
    trex::step_options opts;
    opts.backward = false;
    harness h(cfg, trex::cpu_kernels(), opts);
    model.step(h.view, opts);

    const int64_t N = h.N(), nd = h.nd(), d = cfg.hidden_size;
    std::vector<float> state(N * nd);
    const float* embed = h.ps.w("embed.weight");
    for (int64_t t = 0; t < N; t++)
        for (int64_t j = 0; j < cfg.hc_mult; j++)
            std::copy(embed + h.view.input_ids[t] * d, embed + (h.view.input_ids[t] + 1) * d,
                      state.begin() + t * nd + j * d);
    for (int l = 0; l < cfg.n_layers(); l++) {
        const trex::transformer_block blk(cfg, l);
        h.plan({blk.act_shape(h.env())}, false, false);
        std::vector<float> next(N * nd);
        blk.forward(h.acts.block(0), next.data(), state.data(), trex::bind_block_weights(h.ps, l, false), h.env());
        state = next;
        EXPECT_EQ(0, std::memcmp(state.data(), model.block_output(l), sizeof(float) * N * nd)) << "block " << l;
    }
}
