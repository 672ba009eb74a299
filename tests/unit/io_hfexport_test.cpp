// HF transformers loads our export and computes the same logits (docs/checkpoints.md §5).
//
// The weights of the golden fixture tests/golden/micro_dense.safetensors (v4-micro, signal-carrying random weights)
// are exported in bf16, fp8 and fp4, imported again into the engine, and the engine's logits on the fixture's batch
// (single-document rows, dense CSA) are compared with the logits HF transformers' DeepseekV4ForCausalLM computed
// from the same export directories (`from_pretrained`), committed in tests/golden/hf_export_logits.safetensors by
// tests/reference/check_hf_export.py --write-golden. When TREX_HF_EXPORT_OUT is set the exports and our logits are
// also written there, for check_hf_export.py to run HF on them at test time (CTest does this when torch is present).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/test_support.hpp"
#include "trex/io/hf_checkpoint.hpp"
#include "trex/io/safetensors.hpp"
#include "trex/model/model.hpp"

namespace fs = std::filesystem;

namespace {

constexpr double kTol = 1e-4;  // relative error of the logits, ||ours − hf|| / ||hf||

std::string fnv1a64(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    uint64_t h = 0xcbf29ce484222325ull;
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        for (std::streamsize i = 0; i < in.gcount(); i++) {
            h ^= (uint8_t)buf[i];
            h *= 0x100000001b3ull;
        }
    }
    return fmt::format("{:016x}", h);
}

TEST(HfExportGolden, LogitsMatchTransformers) {
    const std::string fixture = trex::test::source_path("tests/golden/micro_dense.safetensors");
    const std::string golden = trex::test::source_path("tests/golden/hf_export_logits.safetensors");
    trex::safetensors_file f(fixture);
    const auto cfg = trex::config_from_json(nlohmann::json::parse(f.metadata().at("config")), fixture + ":config");
    trex::param_store src(cfg, true, false);
    for (size_t i = 0; i < src.specs.size(); i++) {
        const auto& s = src.specs[i];
        if (s.role == trex::tensor_role::hash_table) {
            auto v = f.to_i32("w." + s.name);
            std::copy(v.begin(), v.end(), src.tables.data() + src.offset[i]);
        } else {
            auto v = f.to_f32("w." + s.name);
            std::copy(v.begin(), v.end(), src.w((int)i));
        }
    }
    auto ids = f.to_i32("in.input_ids"), labels = f.to_i32("in.labels"), mids = f.to_i32("in.mtp_input_ids"),
         mlabels = f.to_i32("in.mtp_labels"), starts = f.to_i32("in.doc_start");
    const auto shape = f.tensor("in.input_ids").shape;
    trex::batch_view b;
    b.B = shape[0];
    b.S = shape[1];
    b.input_ids = ids.data();
    b.labels = labels.data();
    b.mtp_input_ids = mids.data();
    b.mtp_labels = mlabels.data();
    b.doc_start = starts.data();
    trex::step_options o;
    o.dense_csa = true;
    o.keep_logits = true;
    o.backward = false;

    const char* env = std::getenv("TREX_HF_EXPORT_OUT");
    const std::string out = env && *env
                                ? std::string(env)
                                : (fs::temp_directory_path() / ("trex_hfexport_" + std::to_string(getpid()))).string();
    fs::create_directories(out);
    trex::safetensors_writer ours;
    ours.add_i32("input_ids", shape, ids.data());
    ours.set_metadata("fixture", "tests/golden/micro_dense.safetensors");
    ours.set_metadata("mode", "dense");
    const bool have_golden = fs::exists(golden);
    std::unique_ptr<trex::safetensors_file> g;
    if (have_golden) g = std::make_unique<trex::safetensors_file>(golden);
    for (auto d : {trex::hf_dtype::bf16, trex::hf_dtype::fp8, trex::hf_dtype::fp4}) {
        const std::string name = trex::hf_dtype_name(d);
        const std::string dir = out + "/" + name;
        trex::hf_save_options so;
        so.dtype = d;
        so.overwrite = true;
        trex::save_hf_checkpoint(src, dir, so);
        trex::dsv4_model model(trex::load_hf_config(dir));
        trex::load_hf_checkpoint(model.params(), dir);
        model.step(b, o);
        const auto& logits = model.logits();
        ASSERT_EQ((int64_t)logits.size(), b.B * b.S * cfg.vocab_size);
        ours.add_f32(name, {b.B, b.S, cfg.vocab_size}, logits.data());
        if (g) {
            // the bytes HF was run on
            int files = 0;
            for (const auto& e : fs::directory_iterator(dir)) {
                if (e.path().extension() != ".safetensors") continue;
                const std::string key = "fnv1a64." + name + "/" + e.path().filename().string();
                auto it = g->metadata().find(key);
                ASSERT_NE(it, g->metadata().end()) << "golden has no " << key;
                EXPECT_EQ(fnv1a64(e.path().string()), it->second)
                    << key << ": the export no longer writes the bytes HF transformers was run on (regenerate "
                    << "tests/golden/hf_export_logits.safetensors if the change is intended)";
                files++;
            }
            EXPECT_EQ(files, 1) << name;
            auto want = g->to_f32(name);
            ASSERT_EQ(want.size(), logits.size()) << name;
            const double err = trex::test::rel_error(logits.data(), want.data(), (long)want.size());
            std::printf("[%s] logits vs HF transformers (golden): relative error %.2e\n", name.c_str(), err);
            EXPECT_LT(err, kTol) << name;
        }
    }
    ours.write(out + "/ours_logits.safetensors");
    if (!env || !*env) fs::remove_all(out);
    if (!have_golden) GTEST_SKIP() << "no " << golden << " (generate it with tests/reference/check_hf_export.py)";
}

}  // namespace
