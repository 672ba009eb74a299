// Config parsing and validation: every shipped config parses; every bad config gives a one-line error naming the
// file and the offending key.
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/model/config.hpp"

using nlohmann::json;
using trex::test::source_path;

namespace {

json read_json(const std::string& rel) {
    std::ifstream in(source_path(rel));
    return json::parse(in);
}

std::string temp_dir() {
    return trex::test::scratch_dir("config_test");
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

// The error message of parsing `j` (empty if it parses).
std::string parse_error(const json& j, const std::string& source = "configs/x.json") {
    try {
        trex::config_from_json(j, source);
    } catch (const trex::error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(Config, ShippedConfigsParse) {
    for (const char* name : {"v4-flash", "v4-pro", "v4-small", "v4-tiny", "v4-micro"}) {
        SCOPED_TRACE(name);
        auto cfg = trex::load_config(source_path(std::string("configs/") + name + ".json"));
        EXPECT_EQ((int)cfg.compress_ratios.size(), cfg.num_hidden_layers + cfg.num_nextn_predict_layers);
        EXPECT_EQ(cfg.ratio(cfg.n_layers()), 0);
        EXPECT_EQ(cfg.rope_scaling.type, "yarn");
    }
    auto flash = trex::load_config(source_path("configs/v4-flash.json"));
    EXPECT_EQ(flash.hidden_size, 4096);
    EXPECT_EQ(flash.num_hidden_layers, 43);
    EXPECT_EQ(flash.n_routed_experts, 256);
    EXPECT_EQ(flash.index_topk, 512);
    EXPECT_EQ(flash.num_hash_layers, 3);
    EXPECT_EQ(flash.expert_dtype, "fp4");
    EXPECT_TRUE(flash.has_fp8_quantization);
    EXPECT_DOUBLE_EQ(flash.rope_scaling.factor, 16);
    EXPECT_EQ(flash.rope_scaling.original_max_position_embeddings, 65536);
    EXPECT_DOUBLE_EQ(flash.swiglu_limit, 10.0);
    EXPECT_DOUBLE_EQ(flash.initializer_range, 0.02);
    EXPECT_EQ(flash.max_position_embeddings, 1048576);
    auto pro = trex::load_config(source_path("configs/v4-pro.json"));
    EXPECT_EQ(pro.hidden_size, 7168);
    EXPECT_EQ(pro.num_hidden_layers, 61);
    EXPECT_EQ(pro.compress_ratios.size(), 62u);
    EXPECT_EQ(pro.ratio(0), 128);
    EXPECT_EQ(pro.o_groups, 16);
    EXPECT_DOUBLE_EQ(pro.routed_scaling_factor, 2.5);
    auto tiny = trex::load_config(source_path("configs/v4-tiny.json"));
    EXPECT_FALSE(tiny.has_fp8_quantization);
    EXPECT_EQ(tiny.expert_dtype, "");
    EXPECT_EQ(tiny.torch_dtype, "float32");
}

// Pro = Flash + exactly the keys listed in spec §1.2.
TEST(Config, ProDiffersFromFlashOnlyInListedKeys) {
    json f = read_json("configs/v4-flash.json"), p = read_json("configs/v4-pro.json");
    std::set<std::string> differ;
    for (auto& [k, v] : f.items())
        if (!p.contains(k) || p[k] != v) differ.insert(k);
    for (auto& [k, v] : p.items())
        if (!f.contains(k)) differ.insert(k);
    std::set<std::string> want = {
        "hidden_size",       "index_topk", "moe_intermediate_size", "n_routed_experts",      "num_attention_heads",
        "num_hidden_layers", "o_groups",   "q_lora_rank",           "routed_scaling_factor", "compress_ratios"};
    EXPECT_EQ(differ, want);
}

TEST(Config, RoundTrip) {
    for (const char* name : {"v4-flash", "v4-pro", "v4-small", "v4-tiny", "v4-micro"}) {
        SCOPED_TRACE(name);
        auto cfg = trex::load_config(source_path(std::string("configs/") + name + ".json"));
        json j = trex::config_to_json(cfg);
        auto cfg2 = trex::config_from_json(j, "roundtrip");
        EXPECT_EQ(trex::config_to_json(cfg2), j);
        EXPECT_EQ(cfg2.compress_ratios, cfg.compress_ratios);
        EXPECT_EQ(cfg2.has_fp8_quantization, cfg.has_fp8_quantization);
        EXPECT_EQ(cfg2.expert_dtype, cfg.expert_dtype);
    }
}

// The numerics keys (docs/model.md §3.4): absent, a release checkpoint (quantization_config) gets the release's
// numerics where its shapes allow the QAT blocks, every other config fp32 and stable ties; explicit keys win and
// survive a round trip; a shape the blocks do not fit is an error naming 'qat'.
TEST(Config, NumericsKeys) {
    const auto flash = trex::load_config(source_path("configs/v4-flash.json"));
    EXPECT_EQ(flash.qat, "release");
    EXPECT_EQ(flash.indexer_ties, "torch");
    const auto tiny = trex::load_config(source_path("configs/v4-tiny.json"));
    EXPECT_EQ(tiny.qat, "none");
    EXPECT_EQ(tiny.indexer_ties, "stable");

    json rt = read_json("configs/v4-tiny.json");  // a tiny release-layout export: QAT blocks fit (64 non-RoPE dims)
    rt["quantization_config"] = {{"quant_method", "fp8"}};
    EXPECT_EQ(trex::config_from_json(rt, "x.json").qat, "release");
    json rm = read_json("configs/v4-micro.json");  // 16 non-RoPE dims: not a release shape, stays fp32
    rm["quantization_config"] = {{"quant_method", "fp8"}};
    EXPECT_EQ(trex::config_from_json(rm, "x.json").qat, "none");
    EXPECT_EQ(trex::config_from_json(rm, "x.json").indexer_ties, "torch");

    for (const char* qat : {"none", "release"})  // explicit keys win, also over a release config, and round-trip
        for (const char* ties : {"stable", "torch"}) {
            json j = read_json("configs/v4-flash.json");
            j["qat"] = qat;
            j["indexer_ties"] = ties;
            const auto cfg = trex::config_from_json(j, "x.json");
            EXPECT_EQ(cfg.qat, qat);
            EXPECT_EQ(cfg.indexer_ties, ties);
            const auto back = trex::config_from_json(trex::config_to_json(cfg), "roundtrip");
            EXPECT_EQ(back.qat, qat);
            EXPECT_EQ(back.indexer_ties, ties);
        }
    EXPECT_FALSE(trex::config_to_json(tiny).contains("qat")) << "implied keys are not written";

    json bad = read_json("configs/v4-micro.json");
    bad["qat"] = "release";
    EXPECT_NE(parse_error(bad).find("key 'qat': 'release' quantises head_dim − qk_rope_head_dim = 16 in blocks of 64"),
              std::string::npos)
        << parse_error(bad);
    bad["head_dim"] = 80;  // 64 non-RoPE dims, but index_head_dim 48 is not a power of two
    bad["index_head_dim"] = 48;
    EXPECT_NE(parse_error(bad).find("key 'qat': 'release' rotates index_head_dim = 48"), std::string::npos)
        << parse_error(bad);
    bad["index_head_dim"] = 32;
    EXPECT_EQ(parse_error(bad), "");
    for (const auto& [key, value] : {std::pair{"qat", "fp8"}, std::pair{"indexer_ties", "random"}}) {
        json j = read_json("configs/v4-tiny.json");
        j[key] = value;
        EXPECT_NE(parse_error(j).find(std::string("key '") + key + "': '" + value + "' is not"), std::string::npos)
            << parse_error(j);
    }
}

TEST(Config, OptionalAndUnknownKeys) {
    json j = read_json("configs/v4-tiny.json");
    for (const char* k :
         {"architectures", "model_type", "torch_dtype", "topk_method", "num_key_value_heads", "tie_word_embeddings",
          "bos_token_id", "eos_token_id", "initializer_range", "norm_topk_prob", "rope_scaling"})
        j.erase(k);
    j["some_future_key"] = {{"x", 1}};
    j["use_cache"] = true;
    auto cfg = trex::config_from_json(j, "x.json");
    EXPECT_EQ(cfg.rope_scaling.type, "none");
    EXPECT_EQ(cfg.num_key_value_heads, 1);
    EXPECT_FALSE(cfg.tie_word_embeddings);

    json k = read_json("configs/v4-tiny.json");
    k["rope_scaling"].erase("type");
    k["rope_scaling"]["rope_type"] = "yarn";
    EXPECT_EQ(trex::config_from_json(k, "x.json").rope_scaling.type, "yarn");
    k["rope_scaling"] = nullptr;  // HF writes null for "no scaling"
    EXPECT_EQ(trex::config_from_json(k, "x.json").rope_scaling.type, "none");

    json n = read_json("configs/v4-tiny.json");  // no MTP
    n["num_nextn_predict_layers"] = 0;
    n["compress_ratios"] = {0, 4, 8, 4};
    auto cfg0 = trex::config_from_json(n, "x.json");
    EXPECT_FALSE(cfg0.has_mtp());

    json h = read_json("configs/v4-tiny.json");  // HCA ratio 5 (> 4) is allowed
    h["compress_ratios"] = {0, 4, 5, 4, 0};
    EXPECT_EQ(parse_error(h), "");
}

struct bad_case {
    const char* what;
    std::function<void(json&)> mutate;
    const char* key;
    const char* detail;  // a substring of the message after the key
};

TEST(Config, BadConfigsNameTheKeyOnOneLine) {
    const std::vector<bad_case> cases = {
        {"missing", [](json& j) { j.erase("hidden_size"); }, "hidden_size", "missing required key"},
        {"null", [](json& j) { j["vocab_size"] = nullptr; }, "vocab_size", "null"},
        {"string for int", [](json& j) { j["head_dim"] = "128"; }, "head_dim", "expected an integer, got a string"},
        {"float for int", [](json& j) { j["head_dim"] = 128.0; }, "head_dim", "expected an integer, got a float"},
        {"negative size", [](json& j) { j["hidden_size"] = -256; }, "hidden_size", "must be >= 1 (got -256)"},
        {"zero layers", [](json& j) { j["num_hidden_layers"] = 0; }, "num_hidden_layers", "must be >= 1"},
        {"huge int", [](json& j) { j["vocab_size"] = 10000000000ull; }, "vocab_size", "out of range"},
        {"string for bool", [](json& j) { j["norm_topk_prob"] = "true"; }, "norm_topk_prob", "expected a boolean"},
        {"string for float", [](json& j) { j["rope_theta"] = "1e4"; }, "rope_theta", "expected a number"},
        {"ratios not array", [](json& j) { j["compress_ratios"] = 4; }, "compress_ratios", "expected an array"},
        {"ratios length",
         [](json& j) {
             j["compress_ratios"] = {0, 4, 8, 4};
         },
         "compress_ratios", "has 4 entries, expected num_hidden_layers + num_nextn_predict_layers = 5"},
        {"ratio 2",
         [](json& j) {
             j["compress_ratios"] = {0, 2, 8, 4, 0};
         },
         "compress_ratios", "entry 1 is 2"},
        {"ratio 1",
         [](json& j) {
             j["compress_ratios"] = {0, 4, 1, 4, 0};
         },
         "compress_ratios", "4 (CSA"},
        {"negative ratio",
         [](json& j) {
             j["compress_ratios"] = {0, 4, -8, 4, 0};
         },
         "compress_ratios", "entry 2 must be >= 0"},
        {"float ratio",
         [](json& j) {
             j["compress_ratios"] = {0, 4, 8.5, 4, 0};
         },
         "compress_ratios", "entry 2 must be an integer"},
        {"MTP ratio",
         [](json& j) {
             j["compress_ratios"] = {0, 4, 8, 4, 4};
         },
         "compress_ratios", "entry 4 (the MTP block) must be 0"},
        {"kv heads", [](json& j) { j["num_key_value_heads"] = 4; }, "num_key_value_heads", "must be 1"},
        {"odd rope", [](json& j) { j["qk_rope_head_dim"] = 63; }, "qk_rope_head_dim", "even"},
        {"rope > head", [](json& j) { j["qk_rope_head_dim"] = 256; }, "qk_rope_head_dim", "exceeds head_dim"},
        {"rope > index head", [](json& j) { j["index_head_dim"] = 32; }, "qk_rope_head_dim",
         "exceeds index_head_dim (32)"},
        {"o_groups", [](json& j) { j["o_groups"] = 3; }, "o_groups",
         "num_attention_heads*head_dim (512) is not divisible by o_groups (3)"},
        {"K > E", [](json& j) { j["num_experts_per_tok"] = 9; }, "num_experts_per_tok", "exceeds n_routed_experts"},
        {"hash layers", [](json& j) { j["num_hash_layers"] = 5; }, "num_hash_layers", "not in [0, num_hidden_layers"},
        {"scoring", [](json& j) { j["scoring_func"] = "sigmoid"; }, "scoring_func", "unsupported"},
        {"act", [](json& j) { j["hidden_act"] = "gelu"; }, "hidden_act", "unsupported"},
        {"hc_mult", [](json& j) { j["hc_mult"] = 0; }, "hc_mult", "must be >= 1"},
        {"sinkhorn", [](json& j) { j["hc_sinkhorn_iters"] = 0; }, "hc_sinkhorn_iters", "must be >= 1"},
        {"rope type", [](json& j) { j["rope_scaling"]["type"] = "linear"; }, "rope_scaling.type", "unsupported"},
        {"rope factor", [](json& j) { j["rope_scaling"].erase("factor"); }, "rope_scaling.factor", "missing"},
        {"rope not object", [](json& j) { j["rope_scaling"] = "yarn"; }, "rope_scaling", "expected an object"},
        {"MTP depth",
         [](json& j) {
             j["num_nextn_predict_layers"] = 2;
             j["compress_ratios"] = {0, 4, 8, 4, 0, 0};
         },
         "num_nextn_predict_layers", "unsupported"},
        {"tied", [](json& j) { j["tie_word_embeddings"] = true; }, "tie_word_embeddings", "unsupported"},
        {"topk 0", [](json& j) { j["index_topk"] = 0; }, "index_topk", "must be >= 1 when a layer uses CSA"},
        {"quant config", [](json& j) { j["quantization_config"] = "fp8"; }, "quantization_config",
         "expected an object"},
        {"expert dtype", [](json& j) { j["expert_dtype"] = "int3"; }, "expert_dtype", "unsupported"},
        {"model type", [](json& j) { j["model_type"] = "deepseek_v3"; }, "model_type", "unsupported"},
        {"eps", [](json& j) { j["rms_norm_eps"] = 0; }, "rms_norm_eps", "must be > 0"},
        {"eos", [](json& j) { j["eos_token_id"] = 4096; }, "eos_token_id", "vocab_size"},
        {"attention bias", [](json& j) { j["attention_bias"] = true; }, "attention_bias", "unsupported"},
        {"attention dropout", [](json& j) { j["attention_dropout"] = 0.1; }, "attention_dropout", "unsupported"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.what);
        json j = read_json("configs/v4-tiny.json");
        c.mutate(j);
        std::string msg = parse_error(j, "configs/x.json");
        ASSERT_FALSE(msg.empty()) << "parsed without error";
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
        const std::string prefix = std::string("configs/x.json: key '") + c.key + "': ";
        EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
        EXPECT_NE(msg.find(c.detail), std::string::npos) << msg;
    }
    // validate_config on a struct that bypassed parsing
    auto cfg = trex::load_config(source_path("configs/v4-tiny.json"));
    cfg.o_groups = 3;
    EXPECT_THROW(trex::validate_config(cfg, "mem"), trex::error);
    EXPECT_NE(parse_error(json::array()).find("must be a JSON object"), std::string::npos);
}

TEST(Config, LoadErrors) {
    const std::string dir = temp_dir();
    auto load_error = [](const std::string& path) -> std::string {
        try {
            trex::load_config(path);
        } catch (const trex::error& e) {
            return e.what();
        }
        return "";
    };
    // missing file
    std::string msg = load_error(dir + "/nope.json");
    EXPECT_NE(msg.find(dir + "/nope.json: cannot read config"), std::string::npos) << msg;
    // directory without config.json
    msg = load_error(dir);
    EXPECT_NE(msg.find("no config.json"), std::string::npos) << msg;
    // malformed JSON: the parser's position is included
    write_file(dir + "/bad.json", "{\n  \"vocab_size\": 4096,\n  \"hidden_size\": ,\n}\n");
    msg = load_error(dir + "/bad.json");
    EXPECT_NE(msg.find(dir + "/bad.json: malformed JSON"), std::string::npos) << msg;
    EXPECT_NE(msg.find("line 3"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    // empty file
    write_file(dir + "/empty.json", "");
    EXPECT_NE(load_error(dir + "/empty.json").find("malformed JSON"), std::string::npos);
    // a number beyond double's range: the JSON parser throws out_of_range (not parse_error), still a trex::error
    write_file(dir + "/overflow.json", "{\"vocab_size\": 4096, \"rope_theta\": 1e999}");
    msg = load_error(dir + "/overflow.json");
    EXPECT_NE(msg.find(dir + "/overflow.json: malformed JSON: number overflow parsing '1e999'"), std::string::npos)
        << msg;
    // a directory with config.json loads, and errors name the file inside it
    std::filesystem::create_directories(dir + "/model");
    std::filesystem::copy_file(source_path("configs/v4-tiny.json"), dir + "/model/config.json",
                               std::filesystem::copy_options::overwrite_existing);
    EXPECT_EQ(trex::load_config(dir + "/model").hidden_size, 256);
    json j = read_json("configs/v4-tiny.json");
    j["o_groups"] = 3;
    write_file(dir + "/model/config.json", j.dump());
    msg = load_error(dir + "/model");
    EXPECT_EQ(msg.rfind(dir + "/model/config.json: key 'o_groups': ", 0), 0u) << msg;
    std::filesystem::remove_all(dir);
}
