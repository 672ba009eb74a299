// `trex info --config` on bad input: non-zero exit and exactly one line of output naming the file and key.
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "support/test_support.hpp"

using trex::test::run_command;
using trex::test::source_path;
using trex::test::trex_binary;

namespace {

std::string temp_dir() {
    return trex::test::scratch_dir("config_cli");
}

// Output without its final newline; a one-line message has no other newline.
std::string one_line(std::string s) {
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
}

}  // namespace

TEST(ConfigCli, BadConfigGivesOneLineError) {
    const std::string dir = temp_dir();
    std::ifstream in(source_path("configs/v4-tiny.json"));
    nlohmann::json j = nlohmann::json::parse(in);
    j["o_groups"] = 3;
    std::ofstream(dir + "/bad.json") << j.dump(2);
    auto r = run_command(trex_binary() + " info --config " + dir + "/bad.json");
    EXPECT_NE(r.exit_code, 0);
    std::string line = one_line(r.out);
    EXPECT_EQ(line.find('\n'), std::string::npos) << r.out;
    EXPECT_EQ(line,
              "trex: error: " + dir +
                  "/bad.json: key 'o_groups': num_attention_heads*head_dim (512) is not divisible by o_groups (3)");

    std::ofstream(dir + "/garbage.json") << "{\"vocab_size\": 12,,}";
    r = run_command(trex_binary() + " info --config " + dir + "/garbage.json");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_EQ(one_line(r.out).find('\n'), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("malformed JSON"), std::string::npos) << r.out;

    r = run_command(trex_binary() + " info --config " + dir + "/missing.json");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_EQ(one_line(r.out).find('\n'), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("missing.json: cannot read config"), std::string::npos) << r.out;

    r = run_command(trex_binary() + " info --config " + source_path("configs/v4-tiny.json") + " --seq-len 0");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_EQ(one_line(r.out), "trex: error: --seq-len must be >= 1 (got 0)");
    std::filesystem::remove_all(dir);
}

// A model whose parameters cannot fit this machine (the release configs: 2.3 TB and 12.8 TB of fp32 weights and
// gradients) is a one-line error before any allocation, not an out-of-memory kill in the middle of zero-filling.
TEST(ConfigCli, ModelLargerThanTheMachineIsAOneLineError) {
    const std::string out = temp_dir() + "/never_made";
    const std::string pro = source_path("configs/v4-pro.json");
    const std::string cmds[] = {
        trex_binary() + " bench step --steps 1 --warmup 0 --config " + pro,
        trex_binary() + " train --config " + source_path("configs/train-tiny-cpt.toml") + " --set model.config=" + pro +
            " --steps 1 --out " + out,
    };
    for (const std::string& cmd : cmds) {
        const auto r = run_command(cmd);
        EXPECT_NE(r.exit_code, 0) << cmd;
        const std::string line = one_line(r.out);
        EXPECT_EQ(line.find('\n'), std::string::npos) << r.out;
        EXPECT_NE(line.find("the model's fp32 weights and gradients would take 12"), std::string::npos) << r.out;
        EXPECT_NE(line.find("GB of memory"), std::string::npos) << r.out;
    }
    EXPECT_FALSE(std::filesystem::exists(out)) << "the failed run left its directory behind";
}

// Out-of-range run-config values given on the command line (the shortcut flags too: `--steps -1` once meant "not
// given" and ran 100 steps) are one line naming the key and value; no run directory is made.
TEST(ConfigCli, OutOfRangeRunConfigIsOneLineAndMakesNoRunDirectory) {
    const std::string out = temp_dir() + "/never_made";
    const std::pair<std::string, std::string> cases[] = {
        {"--steps -1", "'run.steps' = -1: must be positive"},
        {"--tp 0", "'dist.tp' = 0: must be positive"},
        {"--set optim.beta1=1.5", "'optim.beta1' = 1.5: must be in [0, 1)"},
        {"--set optim.lr=inf", "'optim.lr' = inf: must be a finite number > 0"},
        {"--set data.batch=0", "'data.batch' = 0: must be positive"},
        // CLI11 once clamped this to 2^63 - 1 without a word
        {"--steps 123456789012345678901", "'run.steps' = '123456789012345678901': expected an integer"},
    };
    for (const auto& [flags, want] : cases) {
        const auto r = run_command(trex_binary() + " train " + flags + " --out " + out);
        EXPECT_NE(r.exit_code, 0) << flags;
        const std::string line = one_line(r.out);
        EXPECT_EQ(line.find('\n'), std::string::npos) << r.out;
        EXPECT_NE(line.find(want), std::string::npos) << flags << ": " << r.out;
    }
    EXPECT_FALSE(std::filesystem::exists(out)) << "a refused config left its run directory behind";
}
