// HF release-layout import/export (docs/checkpoints.md): bit-exact round trips of v4-micro in bf16, fp8 and fp4,
// the layout itself (names, dtypes, scale shapes, shards, index, config), the legacy/Base variants
// (`weight_scale_inv`, F32 scales, a single model.safetensors), ignorable extras, and corrupt checkpoints that must
// give one-line errors naming the file and the tensor.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/io/codecs.hpp"
#include "trex/io/hf_checkpoint.hpp"
#include "trex/io/safetensors.hpp"
#include "trex/model/config.hpp"
#include "trex/model/params.hpp"
#include "trex/io/checkpoint.hpp"

namespace fs = std::filesystem;

namespace {

struct raw_tensor {
    trex::st_dtype dtype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;
};
using raw_ckpt = std::map<std::string, raw_tensor>;

// Every tensor of a checkpoint directory (test sizes only).
raw_ckpt load_raw(const std::string& dir) {
    raw_ckpt out;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (e.path().extension() != ".safetensors") continue;
        trex::safetensors_file f(e.path().string());
        for (const auto& t : f.tensors()) {
            auto b = f.bytes(t.name);
            out[t.name] = raw_tensor{t.dtype, t.shape, std::vector<uint8_t>(b.begin(), b.end())};
        }
    }
    return out;
}

// Rewrites `dir` as a checkpoint holding `c`: one model.safetensors (indexed = false) or one shard per
// `per_shard` tensors plus an index.
void save_raw(const std::string& dir, const raw_ckpt& c, bool indexed, size_t per_shard = 1000000) {
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".safetensors" || e.path().filename() == "model.safetensors.index.json")
            fs::remove(e.path());
    if (!indexed) {
        trex::safetensors_writer w;
        for (const auto& [n, t] : c) w.add_raw(n, t.dtype, t.shape, t.data.data(), t.data.size());
        w.write(dir + "/model.safetensors");
        return;
    }
    const size_t n_shards = (c.size() + per_shard - 1) / per_shard;
    nlohmann::json wm = nlohmann::json::object();
    auto it = c.begin();
    for (size_t k = 0; k < n_shards; k++) {
        const std::string fname = fmt::format("model-{:05d}-of-{:05d}.safetensors", k + 1, n_shards);
        trex::safetensors_writer w;
        for (size_t j = 0; j < per_shard && it != c.end(); j++, ++it) {
            w.add_raw(it->first, it->second.dtype, it->second.shape, it->second.data.data(), it->second.data.size());
            wm[it->first] = fname;
        }
        w.write(dir + "/" + fname);
    }
    std::ofstream(dir + "/model.safetensors.index.json")
        << nlohmann::json{{"metadata", {{"total_size", 0}}}, {"weight_map", wm}}.dump();
}

std::string read_file(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

trex::model_config micro() {
    return trex::load_config(trex::test::source_path("configs/v4-micro.json"));
}

// Signal-carrying fp32 values (not representable in bf16/fp8), including a few exact zeros and a wide range.
void fill_signal(trex::param_store& ps, uint64_t seed) {
    ps.init(seed, 0.05);
    for (size_t i = 0; i < ps.specs.size(); i++) {
        if (ps.specs[i].role == trex::tensor_role::hash_table) continue;
        float* w = ps.w((int)i);
        const int64_t n = ps.specs[i].numel();
        for (int64_t k = 0; k < n; k++) w[k] += 0.001f * (float)((k * 7919 + i * 31) % 17) - 0.008f;
        if (n > 3) w[1] = 0.0f;
    }
}

bool same_weights(const trex::param_store& a, const trex::param_store& b, std::string* first_diff) {
    for (size_t i = 0; i < a.specs.size(); i++) {
        const auto& s = a.specs[i];
        bool eq;
        if (s.role == trex::tensor_role::hash_table)
            eq = std::memcmp(a.tables.data() + a.offset[i], b.tables.data() + b.offset[i], s.numel() * 4) == 0;
        else
            eq = std::memcmp(a.weights.data() + a.offset[i], b.weights.data() + b.offset[i], s.numel() * 4) == 0;
        if (!eq) {
            *first_diff = s.name;
            return false;
        }
    }
    return true;
}

class HfCheckpoint : public ::testing::Test {
   protected:
    void SetUp() override {
        dir_ = (fs::temp_directory_path() / ("trex_hf_test_" + std::to_string(getpid()) + "_" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                   .string();
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string& name) const { return dir_ + "/" + name; }

    // Exports a signal-filled micro model in `dtype` to path(name) and returns the store.
    std::unique_ptr<trex::param_store> exported(const std::string& name, trex::hf_dtype dtype,
                                                uint64_t shard = 5ull << 30) {
        auto ps = std::make_unique<trex::param_store>(micro(), true, false);
        fill_signal(*ps, 5);
        trex::hf_save_options o;
        o.dtype = dtype;
        o.max_shard_bytes = shard;
        trex::save_hf_checkpoint(*ps, path(name), o);
        return ps;
    }
    // The one-line error of loading path(name) into a micro store ("" if it loads).
    std::string load_error(const std::string& name, bool mtp = true) {
        trex::param_store ps(micro(), mtp, false);
        try {
            trex::load_hf_checkpoint(ps, path(name));
        } catch (const trex::error& e) {
            const std::string msg = e.what();
            EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
            return msg;
        }
        return "";
    }
    std::string dir_;
};

// ------------------------------------------------------------------------------------------------ round trips

TEST_F(HfCheckpoint, Bf16RoundTripIsBitExact) {
    auto src = exported("a", trex::hf_dtype::bf16);
    trex::param_store back(micro(), true, false);
    auto r = trex::load_hf_checkpoint(back, path("a"));
    EXPECT_TRUE(r.ignored.empty());
    EXPECT_EQ(r.files, 1);
    for (size_t i = 0; i < src->specs.size(); i++) {
        const auto& s = src->specs[i];
        if (s.role == trex::tensor_role::hash_table) {
            ASSERT_EQ(
                std::memcmp(src->tables.data() + src->offset[i], back.tables.data() + back.offset[i], s.numel() * 4), 0)
                << s.name;
            continue;
        }
        const float* a = src->w((int)i);
        const float* b = back.w((int)i);
        for (int64_t k = 0; k < s.numel(); k++) {
            const float want =
                s.format == trex::release_format::f32 ? a[k] : trex::bf16_to_f32(trex::f32_to_bf16(a[k]));
            ASSERT_EQ(std::memcmp(&b[k], &want, 4), 0) << s.name << "[" << k << "]";
        }
    }
    // exporting what was imported writes the same bytes
    trex::save_hf_checkpoint(back, path("b"));
    for (const char* f : {"model-00001-of-00001.safetensors", "model.safetensors.index.json", "config.json"})
        EXPECT_EQ(read_file(path("a/") + f), read_file(path("b/") + f)) << f;
}

void quantised_round_trip(HfCheckpoint* t, trex::hf_dtype d,
                          const std::function<std::string(const std::string&)>& path) {
    trex::param_store src(micro(), true, false);
    fill_signal(src, 9);
    trex::hf_save_options o;
    o.dtype = d;
    trex::save_hf_checkpoint(src, path("q1"), o);
    const trex::model_config cfg1 = trex::load_hf_config(path("q1"));
    trex::param_store w1(cfg1, true, false), w2(cfg1, true, false);
    trex::load_hf_checkpoint(w1, path("q1"));
    trex::save_hf_checkpoint(w1, path("q2"), o);
    trex::load_hf_checkpoint(w2, path("q2"));
    std::string diff;
    EXPECT_TRUE(same_weights(w1, w2, &diff)) << "quantise → dequantise → quantise changed " << diff;
    // from the second export on the bytes are a fixed point too
    trex::save_hf_checkpoint(w2, path("q3"), o);
    EXPECT_EQ(read_file(path("q2/model-00001-of-00001.safetensors")),
              read_file(path("q3/model-00001-of-00001.safetensors")));
    // F32 tensors and tables are untouched; quantised tensors are close to the source
    for (size_t i = 0; i < src.specs.size(); i++) {
        const auto& s = src.specs[i];
        if (s.role == trex::tensor_role::hash_table) continue;
        const float* a = src.w((int)i);
        const float* b = w1.w((int)i);
        if (s.format == trex::release_format::f32) {
            EXPECT_EQ(std::memcmp(a, b, s.numel() * 4), 0) << s.name;
            continue;
        }
        const double err = trex::test::rel_error(b, a, (long)s.numel());
        const bool fp4 = d == trex::hf_dtype::fp4 && s.expert >= 0;
        EXPECT_LT(err, fp4 ? 0.25 : 0.05) << s.name;
    }
    (void)t;
}

TEST_F(HfCheckpoint, Fp8RoundTripIsAFixedPoint) {
    quantised_round_trip(this, trex::hf_dtype::fp8, [this](const std::string& n) { return path(n); });
    auto raw = load_raw(path("q1"));
    EXPECT_EQ(raw.at("layers.0.attn.wq_a.weight").dtype, trex::st_dtype::f8_e4m3);
    EXPECT_EQ(raw.at("layers.0.attn.wq_a.scale").dtype, trex::st_dtype::f8_e8m0);
    EXPECT_EQ(raw.at("layers.0.attn.wq_a.scale").shape, (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(raw.at("layers.1.ffn.experts.3.w2.weight").dtype, trex::st_dtype::f8_e4m3);  // Base layout
    EXPECT_EQ(raw.at("embed.weight").dtype, trex::st_dtype::bf16);
    EXPECT_EQ(raw.at("layers.1.ffn.gate.weight").dtype, trex::st_dtype::bf16);
    EXPECT_EQ(raw.at("layers.1.attn.compressor.wkv.weight").dtype, trex::st_dtype::bf16);
    EXPECT_EQ(raw.at("hc_head_fn").dtype, trex::st_dtype::f32);
    EXPECT_EQ(raw.at("layers.1.ffn.gate.bias").dtype, trex::st_dtype::f32);
    EXPECT_EQ(raw.at("layers.0.ffn.gate.tid2eid").dtype, trex::st_dtype::i64);
    EXPECT_EQ(raw.count("layers.0.ffn.gate.weight_scale_inv"), 0u);
    auto cfg = nlohmann::json::parse(read_file(path("q1/config.json")));
    EXPECT_EQ(cfg.at("quantization_config").at("scale_fmt"), "ue8m0");
    EXPECT_EQ(cfg.at("torch_dtype"), "bfloat16");
    EXPECT_FALSE(cfg.contains("expert_dtype"));
    // for HF transformers: the layer kinds of micro's compress_ratios [0, 4, 8, 4]
    EXPECT_EQ(cfg.at("layer_types"), nlohmann::json::parse(R"(["sliding_attention", "compressed_sparse_attention",
        "heavily_compressed_attention", "compressed_sparse_attention"])"));
    EXPECT_EQ(cfg.at("compress_rates").at("heavily_compressed_attention"), 8);
}

TEST_F(HfCheckpoint, Fp4RoundTripIsAFixedPoint) {
    quantised_round_trip(this, trex::hf_dtype::fp4, [this](const std::string& n) { return path(n); });
    auto raw = load_raw(path("q1"));
    const auto cfg = micro();
    const int64_t I = cfg.moe_intermediate_size, d = cfg.hidden_size;
    const auto& w1 = raw.at("layers.2.ffn.experts.1.w1.weight");
    EXPECT_EQ(w1.dtype, trex::st_dtype::i8);
    EXPECT_EQ(w1.shape, (std::vector<int64_t>{I, d / 2}));
    EXPECT_EQ(raw.at("layers.2.ffn.experts.1.w1.scale").shape, (std::vector<int64_t>{I, d / 32}));
    EXPECT_EQ(raw.at("layers.2.ffn.experts.1.w2.weight").shape, (std::vector<int64_t>{d, I / 2}));
    EXPECT_EQ(raw.at("layers.2.ffn.experts.1.w2.scale").shape, (std::vector<int64_t>{d, (I + 31) / 32}));
    EXPECT_EQ(raw.at("layers.2.ffn.shared_experts.w1.weight").dtype, trex::st_dtype::f8_e4m3);  // shared: FP8
    EXPECT_EQ(raw.at("mtp.0.ffn.experts.0.w3.weight").dtype, trex::st_dtype::i8);
    EXPECT_EQ(raw.at("mtp.0.e_proj.weight").dtype, trex::st_dtype::f8_e4m3);
    auto j = nlohmann::json::parse(read_file(path("q1/config.json")));
    EXPECT_EQ(j.at("expert_dtype"), "fp4");
    // the exported experts decode to exactly what the importer produced
    trex::param_store back(trex::load_hf_config(path("q1")), true, false);
    trex::load_hf_checkpoint(back, path("q1"));
    std::vector<float> deq(I * d);
    trex::dequantize_fp4_1x32(w1.data.data(), I, d, raw.at("layers.2.ffn.experts.1.w1.scale").data.data(), nullptr,
                              deq.data());
    EXPECT_EQ(std::memcmp(deq.data(), back.w("layers.2.ffn.experts.1.w1.weight"), deq.size() * 4), 0);
}

TEST_F(HfCheckpoint, ShardsIndexAndConfig) {
    auto src = exported("s", trex::hf_dtype::fp8, 20000);
    auto index = nlohmann::json::parse(read_file(path("s/model.safetensors.index.json")));
    const auto& wm = index.at("weight_map");
    std::set<std::string> files;
    for (auto it = wm.begin(); it != wm.end(); ++it) files.insert(it.value().get<std::string>());
    ASSERT_GT(files.size(), 3u);
    const size_t n = files.size();
    uint64_t total = 0, count = 0;
    size_t k = 1;
    for (const auto& f : files) {  // model-00001-of-0000n … in order
        EXPECT_EQ(f, fmt::format("model-{:05d}-of-{:05d}.safetensors", k++, n));
        trex::safetensors_file sf(path("s/") + f);
        EXPECT_EQ(sf.metadata().at("format"), "pt");
        for (const auto& t : sf.tensors()) {
            EXPECT_EQ(wm.at(t.name), f) << t.name;
            total += t.nbytes();
            count++;
        }
    }
    EXPECT_EQ(count, wm.size());
    EXPECT_EQ(index.at("metadata").at("total_size").get<uint64_t>(), total);
    const trex::param_store& ps = *src;
    EXPECT_EQ((int64_t)count, trex::release_tensor_count(ps.specs));
    // a weight and its scale share a shard
    for (auto it = wm.begin(); it != wm.end(); ++it) {
        const std::string name = it.key();
        if (name.size() > 6 && name.substr(name.size() - 6) == ".scale") {
            EXPECT_EQ(wm.at(name.substr(0, name.size() - 6) + ".weight"), it.value()) << name;
        }
    }
    // the config round-trips through load_config
    const auto cfg = trex::load_hf_config(path("s"));
    EXPECT_EQ(cfg.hidden_size, src->cfg.hidden_size);
    EXPECT_EQ(cfg.compress_ratios, src->cfg.compress_ratios);
    EXPECT_TRUE(cfg.has_fp8_quantization);
    trex::param_store back(cfg, true, false);
    auto r = trex::load_hf_checkpoint(back, path("s"));
    EXPECT_EQ(r.files, (int64_t)n);
    EXPECT_EQ(r.bytes, total);
}

TEST_F(HfCheckpoint, LegacyScaleNamesF32ScalesAndSingleFile) {
    exported("x", trex::hf_dtype::fp8);
    trex::param_store want(trex::load_hf_config(path("x")), true, false);
    trex::load_hf_checkpoint(want, path("x"));
    // Base-style: F32 scales under the legacy name, one model.safetensors without an index
    auto raw = load_raw(path("x"));
    raw_ckpt alt;
    for (auto& [n, t] : raw) {
        if (n.size() > 6 && n.substr(n.size() - 6) == ".scale") {
            raw_tensor f{trex::st_dtype::f32, t.shape, std::vector<uint8_t>(t.data.size() * 4)};
            for (size_t k = 0; k < t.data.size(); k++) {
                const float v = trex::ue8m0_to_f32(t.data[k]);
                std::memcpy(f.data.data() + 4 * k, &v, 4);
            }
            alt[n.substr(0, n.size() - 6) + ".weight_scale_inv"] = f;
        } else {
            alt[n] = t;
        }
    }
    save_raw(path("x"), alt, false);
    trex::param_store got(want.cfg, true, false);
    auto r = trex::load_hf_checkpoint(got, path("x"));
    EXPECT_EQ(r.files, 1);
    EXPECT_GT(r.encodings.at("F8_E4M3+F32"), 0);
    std::string diff;
    EXPECT_TRUE(same_weights(want, got, &diff)) << diff;
    // F32 weights in place of BF16 ones and BF16 in place of F32 are accepted too
    raw_ckpt plain = alt;
    {
        auto& e = plain.at("embed.weight");
        raw_tensor f{trex::st_dtype::f32, e.shape, std::vector<uint8_t>(e.data.size() * 2)};
        for (size_t k = 0; k < e.data.size() / 2; k++) {
            uint16_t b;
            std::memcpy(&b, e.data.data() + 2 * k, 2);
            const float v = trex::bf16_to_f32(b);
            std::memcpy(f.data.data() + 4 * k, &v, 4);
        }
        e = f;
    }
    save_raw(path("x"), plain, true, 60);
    trex::param_store got2(want.cfg, true, false);
    trex::load_hf_checkpoint(got2, path("x"));
    EXPECT_TRUE(same_weights(want, got2, &diff)) << diff;
}

TEST_F(HfCheckpoint, IgnorableExtrasAndNoMtpStore) {
    exported("m", trex::hf_dtype::bf16);
    auto raw = load_raw(path("m"));
    raw["mtp.0.emb.tok_emb.weight"] = raw.at("embed.weight");
    raw["mtp.0.head.weight"] = raw.at("head.weight");
    save_raw(path("m"), raw, true, 50);
    trex::param_store ps(micro(), true, false);
    auto r = trex::load_hf_checkpoint(ps, path("m"));
    EXPECT_EQ(r.ignored, (std::vector<std::string>{"mtp.0.emb.tok_emb.weight", "mtp.0.head.weight"}));
    // a store without MTP ignores every mtp.* tensor
    trex::param_store no_mtp(micro(), false, false);
    auto r2 = trex::load_hf_checkpoint(no_mtp, path("m"));
    size_t n_mtp = 0;
    for (const auto& [n, t] : raw) n_mtp += n.rfind("mtp.", 0) == 0;
    EXPECT_EQ(r2.ignored.size(), n_mtp);
    // but a store with MTP needs them
    for (auto it = raw.begin(); it != raw.end();) it = it->first.rfind("mtp.", 0) == 0 ? raw.erase(it) : std::next(it);
    save_raw(path("m"), raw, true, 50);
    EXPECT_NE(load_error("m").find("tensor 'mtp.0."), std::string::npos) << load_error("m");
    EXPECT_EQ(load_error("m", false), "");
}

// ------------------------------------------------------------------------------------------------ corrupt inputs

TEST_F(HfCheckpoint, CorruptCheckpointsAreOneLineErrors) {
    exported("base", trex::hf_dtype::fp4);
    const raw_ckpt good = load_raw(path("base"));
    const std::string cfg_text = read_file(path("base/config.json"));
    auto variant = [&](const std::string& name, const std::function<void(raw_ckpt&)>& edit, bool indexed = true) {
        fs::create_directories(path(name));
        std::ofstream(path(name + "/config.json")) << cfg_text;
        raw_ckpt c = good;
        edit(c);
        save_raw(path(name), c, indexed, (good.size() + 3) / 4);  // 4 shards
    };
    auto expect = [&](const std::string& name, std::initializer_list<const char*> parts) {
        trex::param_store ps(trex::load_hf_config(path("base")), true, false);
        std::string msg;
        try {
            trex::load_hf_checkpoint(ps, path(name));
        } catch (const trex::error& e) {
            msg = e.what();
        }
        ASSERT_FALSE(msg.empty()) << name << ": loaded without an error";
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
        for (const char* p : parts)
            EXPECT_NE(msg.find(p), std::string::npos) << name << ": '" << p << "' not in: " << msg;
    };

    variant("missing", [](raw_ckpt& c) { c.erase("layers.1.attn.wq_b.weight"); });
    expect("missing", {"layers.1.attn.wq_b.weight", "missing", "model.safetensors.index.json"});

    variant("shape", [](raw_ckpt& c) { c.at("norm.weight").shape = {2, 32}; });
    expect("shape", {"norm.weight", "shape [2,32]", "[64]", ".safetensors"});

    variant("dtype", [](raw_ckpt& c) {
        auto& t = c.at("layers.0.attn_norm.weight");
        t.dtype = trex::st_dtype::i16;
    });
    expect("dtype", {"layers.0.attn_norm.weight", "dtype I16 is not accepted"});

    variant("fp8_on_bf16", [](raw_ckpt& c) {
        auto& t = c.at("layers.1.ffn.gate.weight");
        t.dtype = trex::st_dtype::f8_e4m3;
        t.data.resize(t.data.size() / 2);
    });
    expect("fp8_on_bf16", {"layers.1.ffn.gate.weight", "F8_E4M3 is not accepted"});

    variant("no_scale", [](raw_ckpt& c) { c.erase("layers.0.attn.wkv.scale"); });
    expect("no_scale", {"layers.0.attn.wkv.weight", "without a scale"});

    variant("scale_shape", [](raw_ckpt& c) {
        auto& t = c.at("layers.1.ffn.experts.2.w2.scale");
        t.shape = {1, t.shape[0]};
    });
    expect("scale_shape", {"layers.1.ffn.experts.2.w2.scale", "scale shape"});

    variant("scale_dtype", [](raw_ckpt& c) { c.at("layers.0.attn.wq_a.scale").dtype = trex::st_dtype::u8; });
    expect("scale_dtype", {"layers.0.attn.wq_a.scale", "scale dtype U8"});

    variant("two_scales",
            [](raw_ckpt& c) { c["layers.0.attn.wq_a.weight_scale_inv"] = c.at("layers.0.attn.wq_a.scale"); });
    expect("two_scales", {"layers.0.attn.wq_a.weight", "two scales"});

    variant("packed_shape", [](raw_ckpt& c) {
        auto& t = c.at("layers.3.ffn.experts.0.w1.weight");
        t.shape = {t.shape[1], t.shape[0]};
    });
    expect("packed_shape", {"layers.3.ffn.experts.0.w1.weight", "packed FP4 shape"});

    variant("unknown", [](raw_ckpt& c) { c["layers.0.attn.bogus.weight"] = c.at("norm.weight"); });
    expect("unknown", {"layers.0.attn.bogus.weight", "not part of the model"});

    variant("hf_names", [](raw_ckpt& c) {
        c["model.embed_tokens.weight"] = c.at("embed.weight");
        c.erase("embed.weight");
    });
    expect("hf_names", {"model.embed_tokens.weight", "internal naming"});

    variant("stray_scale", [](raw_ckpt& c) { c["layers.0.ffn.gate.scale"] = c.at("layers.0.attn.wq_a.scale"); });
    expect("stray_scale", {"layers.0.ffn.gate.scale", "has a scale tensor"});

    variant("tid2eid", [](raw_ckpt& c) {
        auto& t = c.at("layers.0.ffn.gate.tid2eid");
        const int64_t bad = 99;
        std::memcpy(t.data.data() + 8 * 5, &bad, 8);
    });
    expect("tid2eid",
           {"layers.0.ffn.gate.tid2eid", "element 5 = 99 (token 2, choice 1) is not an expert id in [0, 4)"});
    variant("tid2eid_negative", [](raw_ckpt& c) {
        auto& t = c.at("layers.0.ffn.gate.tid2eid");
        const int64_t bad = -1;
        std::memcpy(t.data.data() + 8 * 6, &bad, 8);
    });
    expect("tid2eid_negative",
           {"layers.0.ffn.gate.tid2eid", "element 6 = -1 (token 3, choice 0) is not an expert id in [0, 4)"});
    variant("tid2eid_int32_overflow", [](raw_ckpt& c) {
        auto& t = c.at("layers.0.ffn.gate.tid2eid");
        const int64_t bad = (int64_t)1 << 32;  // would wrap to expert 0 if narrowed before the check
        std::memcpy(t.data.data() + 8 * 7, &bad, 8);
    });
    expect("tid2eid_int32_overflow", {"layers.0.ffn.gate.tid2eid", "element 7 = 4294967296"});

    // index problems
    variant("idx_missing_shard", [](raw_ckpt&) {});
    fs::remove(path("idx_missing_shard/model-00002-of-00004.safetensors"));
    expect("idx_missing_shard", {"model.safetensors.index.json", "model-00002-of-00004.safetensors", "does not exist"});

    variant("idx_bad_json", [](raw_ckpt&) {});
    std::ofstream(path("idx_bad_json/model.safetensors.index.json")) << "{\"weight_map\": {\"a\": ";
    expect("idx_bad_json", {"model.safetensors.index.json", "bad JSON"});

    variant("idx_unlisted", [](raw_ckpt&) {});
    {
        auto j = nlohmann::json::parse(read_file(path("idx_unlisted/model.safetensors.index.json")));
        j["weight_map"].erase("head.weight");
        std::ofstream(path("idx_unlisted/model.safetensors.index.json")) << j.dump();
    }
    expect("idx_unlisted", {"head.weight", "not listed"});

    variant("idx_phantom", [](raw_ckpt&) {});
    {
        auto j = nlohmann::json::parse(read_file(path("idx_phantom/model.safetensors.index.json")));
        j["weight_map"]["layers.9.phantom"] = "model-00001-of-00004.safetensors";
        std::ofstream(path("idx_phantom/model.safetensors.index.json")) << j.dump();
    }
    expect("idx_phantom", {"layers.9.phantom", "does not hold it"});

    // a truncated shard, and a shard whose header disagrees with its size
    variant("truncated", [](raw_ckpt&) {});
    {
        const std::string p = path("truncated/model-00003-of-00004.safetensors");
        fs::resize_file(p, fs::file_size(p) - 100);
    }
    expect("truncated", {"model-00003-of-00004.safetensors", "truncated"});

    variant("short_header", [](raw_ckpt&) {});
    {
        const std::string p = path("short_header/model-00001-of-00004.safetensors");
        fs::resize_file(p, 20);
    }
    expect("short_header", {"model-00001-of-00004.safetensors", "header length"});

    // config.json of a different model
    variant("config", [](raw_ckpt&) {});
    {
        auto j = nlohmann::json::parse(cfg_text);
        j["moe_intermediate_size"] = 32;
        std::ofstream(path("config/config.json")) << j.dump();
    }
    expect("config", {"config.json", "different model", "layers.0.ffn.shared_experts.w1.weight"});

    // not a checkpoint
    expect("nonexistent", {"nonexistent", "not a checkpoint directory"});
    fs::create_directories(path("empty"));
    expect("empty", {"empty", "no model.safetensors.index.json"});
}

// ------------------------------------------------------------------------------------------------ non-finite values

namespace {

void put_u16(raw_tensor& t, int64_t k, uint16_t v) { std::memcpy(t.data.data() + 2 * k, &v, 2); }
void put_f32(raw_tensor& t, int64_t k, float v) { std::memcpy(t.data.data() + 4 * k, &v, 4); }

// A UE8M0 scale tensor as F32 (the Flash-Base encoding), same values.
raw_tensor ue8m0_as_f32(const raw_tensor& t) {
    raw_tensor f{trex::st_dtype::f32, t.shape, std::vector<uint8_t>(t.data.size() * 4)};
    for (size_t k = 0; k < t.data.size(); k++) put_f32(f, (int64_t)k, trex::ue8m0_to_f32(t.data[k]));
    return f;
}

struct nonfinite_case {
    std::string name;
    std::function<void(raw_ckpt&)> edit;
    std::string tensor;   // the tensor the error names
    std::string detail;   // "element k ([i, j]) is nan"
    std::string loaded;   // the tensor whose imported value is non-finite when allowed
    int64_t element = 0;  // ... at this element
};

std::vector<nonfinite_case> nonfinite_cases() {
    const float inf = std::numeric_limits<float>::infinity();
    return {
        {"bf16_nan", [](raw_ckpt& c) { put_u16(c.at("layers.1.ffn.gate.weight"), 37, 0x7FC0); },
         "layers.1.ffn.gate.weight", "element 37 ([0, 37]) is nan", "layers.1.ffn.gate.weight", 37},
        {"bf16_inf", [](raw_ckpt& c) { put_u16(c.at("embed.weight"), 197, 0x7F80); }, "embed.weight",
         "element 197 ([3, 5]) is +inf", "embed.weight", 197},
        {"bf16_minus_inf", [](raw_ckpt& c) { put_u16(c.at("norm.weight"), 10, 0xFF80); }, "norm.weight",
         "element 10 ([10]) is -inf", "norm.weight", 10},
        {"f32_nan", [](raw_ckpt& c) { put_f32(c.at("layers.2.hc_ffn_base"), 3, std::nanf("")); },
         "layers.2.hc_ffn_base", "element 3 ([3]) is nan", "layers.2.hc_ffn_base", 3},
        {"fp8_code_nan", [](raw_ckpt& c) { c.at("layers.0.attn.wkv.weight").data[70] = 0x7F; },
         "layers.0.attn.wkv.weight", "element 70 ([1, 6]) is nan", "layers.0.attn.wkv.weight", 70},
        {"fp8_scale_nan", [](raw_ckpt& c) { c.at("layers.0.attn.wq_a.scale").data[0] = 0xFF; },
         "layers.0.attn.wq_a.scale", "element 0 ([0, 0]) is nan", "layers.0.attn.wq_a.weight", 0},
        {"fp4_scale_nan", [](raw_ckpt& c) { c.at("layers.1.ffn.experts.2.w1.scale").data[1] = 0xFF; },
         "layers.1.ffn.experts.2.w1.scale", "element 1 ([0, 1]) is nan", "layers.1.ffn.experts.2.w1.weight", 32},
        {"f32_scale_inf",
         [inf](raw_ckpt& c) {
             raw_tensor f = ue8m0_as_f32(c.at("layers.0.attn.wo_b.scale"));
             put_f32(f, 0, inf);
             c.at("layers.0.attn.wo_b.scale") = f;
         },
         "layers.0.attn.wo_b.scale", "element 0 ([0, 0]) is +inf", "layers.0.attn.wo_b.weight", 0},
        // finite codes and a finite F32 scale whose product overflows: 448 * 1e38
        {"fp8_overflow",
         [](raw_ckpt& c) {
             raw_tensor f = ue8m0_as_f32(c.at("layers.0.attn.wq_b.scale"));
             put_f32(f, 0, 1e38f);
             c.at("layers.0.attn.wq_b.scale") = f;
             c.at("layers.0.attn.wq_b.weight").data[0] = 0x7E;
         },
         "layers.0.attn.wq_b.weight", "element 0 ([0, 0]) is +inf", "layers.0.attn.wq_b.weight", 0},
    };
}

}  // namespace

TEST_F(HfCheckpoint, NonFiniteWeightsAndScalesAreRefusedUnlessAllowed) {
    // NaN / inf in BF16, F32 and FP8 weights, in UE8M0 (0xFF is NaN by definition) and F32 block scales, and finite
    // codes whose dequantised value overflows: each is a one-line error naming the tensor and the first bad element;
    // allow_nonfinite lets them through (and counts them).
    exported("base", trex::hf_dtype::fp4);
    const raw_ckpt good = load_raw(path("base"));
    const std::string cfg_text = read_file(path("base/config.json"));
    const trex::model_config cfg = trex::load_hf_config(path("base"));
    for (const nonfinite_case& c : nonfinite_cases()) {
        fs::create_directories(path(c.name));
        std::ofstream(path(c.name + "/config.json")) << cfg_text;
        raw_ckpt r = good;
        c.edit(r);
        save_raw(path(c.name), r, true, (good.size() + 3) / 4);
        trex::param_store ps(cfg, true, false);
        std::string msg;
        try {
            trex::load_hf_checkpoint(ps, path(c.name));
        } catch (const trex::error& e) {
            msg = e.what();
        }
        ASSERT_FALSE(msg.empty()) << c.name << ": loaded without an error";
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
        EXPECT_NE(msg.find("tensor '" + c.tensor + "': " + c.detail), std::string::npos) << c.name << ": " << msg;
        EXPECT_NE(msg.find(".safetensors"), std::string::npos) << msg;

        trex::param_store loose(cfg, true, false);
        trex::hf_load_options lo;
        lo.allow_nonfinite = true;
        const auto rep = trex::load_hf_checkpoint(loose, path(c.name), lo);
        EXPECT_FALSE(std::isfinite(loose.w(c.loaded)[c.element])) << c.name;
        EXPECT_GE(rep.nonfinite, 1) << c.name;
    }
    // the untouched checkpoint: no non-finite values counted
    trex::param_store ps(cfg, true, false);
    trex::hf_load_options lo;
    lo.allow_nonfinite = true;
    EXPECT_EQ(trex::load_hf_checkpoint(ps, path("base"), lo).nonfinite, 0);
}

TEST_F(HfCheckpoint, ConvertRefusesNonFiniteUnlessAllowed) {
    const std::string trex = trex::test::trex_binary();
    exported("base", trex::hf_dtype::bf16);
    raw_ckpt r = load_raw(path("base"));
    put_u16(r.at("layers.3.attn.wo_a.weight"), 2, 0x7FC1);
    save_raw(path("base"), r, true);
    auto e = trex::test::run_command(trex + " convert --from " + path("base") + " --to " + path("out"));
    EXPECT_EQ(e.exit_code, 1) << e.out;
    EXPECT_NE(e.out.find("tensor 'layers.3.attn.wo_a.weight': element 2 ([0, 2]) is nan"), std::string::npos)
        << e.out;
    EXPECT_EQ(std::count(e.out.begin(), e.out.end(), '\n'), 1) << e.out;
    EXPECT_FALSE(fs::exists(path("out")));
    auto ok = trex::test::run_command(trex + " convert --from " + path("base") + " --to " + path("out") +
                                      " --allow-nonfinite");
    ASSERT_EQ(ok.exit_code, 0) << ok.out;
    EXPECT_NE(ok.out.find("1 non-finite value"), std::string::npos) << ok.out;
    trex::param_store back(micro(), true, false);
    trex::hf_load_options lo;
    lo.allow_nonfinite = true;
    trex::load_hf_checkpoint(back, path("out"), lo);
    EXPECT_TRUE(std::isnan(back.w("layers.3.attn.wo_a.weight")[2]));
    // a training checkpoint as --from: the same rule
    trex::param_store ps(micro());
    ps.init(1);
    ps.w("layers.1.attn.attn_sink")[1] = -std::numeric_limits<float>::infinity();
    const std::string ckpt = trex::save_checkpoint(path("run"), ps, nullptr, trex::checkpoint_state{}, 1);
    auto e2 = trex::test::run_command(trex + " convert --from " + ckpt + " --to " + path("out2"));
    EXPECT_EQ(e2.exit_code, 1) << e2.out;
    EXPECT_NE(e2.out.find("tensor 'layers.1.attn.attn_sink': element 1 ([1]) is -inf"), std::string::npos) << e2.out;
    EXPECT_FALSE(fs::exists(path("out2")));
    auto ok2 = trex::test::run_command(trex + " convert --from " + ckpt + " --to " + path("out2") +
                                       " --allow-nonfinite");
    EXPECT_EQ(ok2.exit_code, 0) << ok2.out;
    EXPECT_NE(ok2.out.find("1 non-finite value"), std::string::npos) << ok2.out;
}

// ------------------------------------------------------------------------------------------------ atomic export

TEST_F(HfCheckpoint, ExportIsAtomic) {
    auto ps = exported("out", trex::hf_dtype::bf16);
    const std::string before = read_file(path("out/model-00001-of-00001.safetensors"));
    // an existing non-empty directory is kept unless overwrite is asked for
    try {
        trex::save_hf_checkpoint(*ps, path("out"));
        FAIL() << "overwrote without being asked";
    } catch (const trex::error& e) {
        EXPECT_NE(std::string(e.what()).find("not empty"), std::string::npos) << e.what();
    }
    // a failing export (non-finite weight, FP8) leaves nothing behind and the old directory intact
    ps->w("layers.2.attn.wo_b.weight")[3] = std::nanf("");
    trex::hf_save_options o;
    o.dtype = trex::hf_dtype::fp8;
    o.overwrite = true;
    try {
        trex::save_hf_checkpoint(*ps, path("out"), o);
        FAIL() << "quantised a NaN";
    } catch (const trex::error& e) {
        EXPECT_NE(std::string(e.what()).find("layers.2.attn.wo_b.weight"), std::string::npos) << e.what();
    }
    EXPECT_EQ(read_file(path("out/model-00001-of-00001.safetensors")), before);
    int entries = 0;
    for (const auto& e : fs::directory_iterator(dir_)) {
        (void)e;
        entries++;
    }
    EXPECT_EQ(entries, 1) << "temporary directories left behind";
    // overwrite replaces it
    ps->w("layers.2.attn.wo_b.weight")[3] = 0.5f;
    trex::save_hf_checkpoint(*ps, path("out"), o);
    EXPECT_EQ(trex::safetensors_file(path("out/model-00001-of-00001.safetensors")).tensor("embed.weight").dtype,
              trex::st_dtype::bf16);
    EXPECT_EQ(
        trex::safetensors_file(path("out/model-00001-of-00001.safetensors")).tensor("layers.0.attn.wq_a.weight").dtype,
        trex::st_dtype::f8_e4m3);
    // an empty existing directory is simply replaced
    fs::create_directories(path("empty"));
    trex::save_hf_checkpoint(*ps, path("empty"));
    EXPECT_TRUE(fs::exists(path("empty/model.safetensors.index.json")));
}

// ------------------------------------------------------------------------------------------------ CLI

TEST_F(HfCheckpoint, ConvertCommand) {
    const std::string trex = trex::test::trex_binary();
    auto r = trex::test::run_command(trex + " convert --init " + trex::test::source_path("configs/v4-micro.json") +
                                     " --to " + path("init") + " --seed 3 --dtype fp4 --shard-size 0.05");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("wrote"), std::string::npos) << r.out;
    // --init is the documented initialisation
    trex::param_store want(micro(), true, false);
    want.init(3, micro().initializer_range);
    auto r2 = trex::test::run_command(trex + " convert --from " + path("init") + " --to " + path("bf16"));
    ASSERT_EQ(r2.exit_code, 0) << r2.out;
    EXPECT_NE(r2.out.find("read"), std::string::npos) << r2.out;
    trex::param_store got(trex::load_hf_config(path("init")), true, false);
    trex::load_hf_checkpoint(got, path("init"));
    trex::param_store got2(trex::load_hf_config(path("bf16")), true, false);
    trex::load_hf_checkpoint(got2, path("bf16"));
    std::string diff;
    // fp4/fp8 values are exactly representable in bf16: the bf16 copy holds the same weights
    EXPECT_TRUE(same_weights(got, got2, &diff)) << diff;
    EXPECT_NE(trex::safetensors_file(path("bf16/model-00001-of-00001.safetensors")).tensor("embed.weight").dtype,
              trex::st_dtype::f8_e4m3);
    for (size_t i = 0; i < want.specs.size(); i++) {
        if (want.specs[i].format == trex::release_format::f32) {
            EXPECT_EQ(std::memcmp(want.w((int)i), got.w((int)i), want.specs[i].numel() * 4), 0) << want.specs[i].name;
        }
    }
    // errors: one line, exit status 1
    auto e1 = trex::test::run_command(trex + " convert --from " + path("nope") + " --to " + path("x"));
    EXPECT_EQ(e1.exit_code, 1);
    EXPECT_NE(e1.out.find("trex: error: "), std::string::npos) << e1.out;
    EXPECT_EQ(std::count(e1.out.begin(), e1.out.end(), '\n'), 1) << e1.out;
    auto e2 = trex::test::run_command(trex + " convert --from " + path("init") + " --to " + path("bf16"));
    EXPECT_EQ(e2.exit_code, 1);
    EXPECT_NE(e2.out.find("not empty"), std::string::npos) << e2.out;
    auto e3 = trex::test::run_command(trex + " convert --from " + path("init") + " --init x --to " + path("y"));
    EXPECT_EQ(e3.exit_code, 1);
}

}  // namespace
