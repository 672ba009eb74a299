// `trex tokenizer` on the command line: encode/decode round trips (one document, --lines, --jsonl), and malformed
// tokenizer.json files giving exactly one line of error naming the file and the field, exit status 1.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/test_support.hpp"

using trex::test::run_command;
using trex::test::source_path;
using trex::test::trex_binary;

namespace {

std::string temp_dir() {
    return trex::test::scratch_dir("tok_cli");
}

std::string one_line(std::string s) {
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
}

nlohmann::json small_tokenizer() {
    std::ifstream in(source_path("tests/golden/tokenizer/trained_v1000.json"));
    return nlohmann::json::parse(in);
}

// Writes j (or raw text) to dir/name and runs `trex tokenizer info` on it.
trex::test::command_result info_of(const std::string& dir, const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
    return run_command(trex_binary() + " tokenizer info --tokenizer " + dir + "/" + name);
}

}  // namespace

TEST(TokenizerCli, EncodeDecodeRoundTrip) {
    const std::string dir = temp_dir();
    const std::string tk = " --tokenizer " + source_path("tests/golden/tokenizer/deepseek_v4_reduced.json");
    std::ofstream(dir + "/in.txt", std::ios::binary) << "Hello <think>world</think> 12345 \xE4\xB8\xAD\xE6\x96\x87\xFF";
    auto r =
        run_command(trex_binary() + " tokenizer encode" + tk + " --input " + dir + "/in.txt > " + dir + "/ids.json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    r = run_command(trex_binary() + " tokenizer decode" + tk + " --input " + dir + "/ids.json > " + dir + "/out.txt");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    std::ifstream a(dir + "/in.txt", std::ios::binary), b(dir + "/out.txt", std::ios::binary);
    std::stringstream sa, sb;
    sa << a.rdbuf();
    sb << b.rdbuf();
    EXPECT_EQ(sa.str(), sb.str());
    // known ids (HF tokenizers on the real tokenizer.json): "Hello <think>world</think> 12345 中文"
    r = run_command("printf 'Hello <think>world</think> 12345 \\344\\270\\255\\346\\226\\207' | " + trex_binary() +
                    " tokenizer encode" + tk + " --format text");
    EXPECT_EQ(r.out, "19923 223 128821 29616 128822 223 6895 1883 223 21134\n");
    // --lines and --jsonl: one output line per document, in order
    r = run_command("printf 'a b\\n\\nc' | " + trex_binary() + " tokenizer encode" + tk + " --lines");
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out;
    r = run_command("printf '{\"text\":\"hi\"}\\n{\"b64\":\"/w==\"}\\n' | " + trex_binary() + " tokenizer encode" + tk +
                    " --jsonl --format text");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;
    r = run_command("echo '[5, 999999]' | " + trex_binary() + " tokenizer decode" + tk);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.out.find("id 999999 is not in the vocabulary"), std::string::npos) << r.out;
    std::filesystem::remove_all(dir);
}

TEST(TokenizerCli, MalformedTokenizerJsonIsOneLineError) {
    const std::string dir = temp_dir();
    struct bad {
        std::string name, expect;
        std::function<void(nlohmann::json&)> edit;
        std::string raw;  // used instead of the edited JSON when not empty
    };
    const std::vector<bad> cases = {
        {"no_merges.json", "model: missing field 'merges'", [](auto& j) { j["model"].erase("merges"); }, ""},
        {"bad_regex.json",
         "pre_tokenizer.pretokenizers[0].pattern.Regex: bad regex: missing closing parenthesis at offset 4",
         [](auto& j) { j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(\\d+"; }, ""},
        {"vocab_array.json", "model.vocab: expected an object {token: id}, got an array",
         [](auto& j) {
             j["model"]["vocab"] = nlohmann::json::array({1, 2});
         },
         ""},
        {"merge_int.json", "model.merges[3]: expected \"left right\" or [\"left\", \"right\"], got 7",
         [](auto& j) { j["model"]["merges"][3] = 7; }, ""},
        {"merge_oov.json", "model.merges[0]: token \"zzzq\" is not in model.vocab",
         [](auto& j) {
             j["model"]["merges"][0] = nlohmann::json::array({"zzzq", "a"});
         },
         ""},
        {"merge_three.json", "model.merges[1]: expected \"left right\" (two tokens separated by one space)",
         [](auto& j) { j["model"]["merges"][1] = "a b c"; }, ""},
        {"model_type.json", "model.type: model 'WordPiece' is not supported (supported: BPE)",
         [](auto& j) { j["model"]["type"] = "WordPiece"; }, ""},
        {"pretok_type.json", "pre_tokenizer.pretokenizers[1].type: pre-tokenizer 'Metaspace' is not supported",
         [](auto& j) {
             j["pre_tokenizer"]["pretokenizers"][1] = {{"type", "Metaspace"}};
         },
         ""},
        {"normalizer.json", "normalizer.type: normalizer 'NFKC' is not supported",
         [](auto& j) {
             j["normalizer"] = {{"type", "NFKC"}};
         },
         ""},
        {"behavior.json", "pre_tokenizer.pretokenizers[2].behavior: unknown split behavior 'Sideways'",
         [](auto& j) { j["pre_tokenizer"]["pretokenizers"][2]["behavior"] = "Sideways"; }, ""},
        {"invert_type.json", "pre_tokenizer.pretokenizers[0].invert: expected a boolean, got a string",
         [](auto& j) { j["pre_tokenizer"]["pretokenizers"][0]["invert"] = "no"; }, ""},
        {"added_id.json", "added_tokens[3].id: \"<｜User｜>\" has id 9 in the file, but HF tokenizers assigns it id 3",
         [](auto& j) { j["added_tokens"][3]["id"] = 9; }, ""},
        {"dropout.json", "model.dropout: BPE dropout is not supported", [](auto& j) { j["model"]["dropout"] = 0.1; },
         ""},
        {"truncation.json", "truncation: not supported",
         [](auto& j) {
             j["truncation"] = {{"max_length", 5}};
         },
         ""},
        {"decoder.json", "decoder.type: decoder 'WordPiece' is not supported",
         [](auto& j) {
             j["decoder"] = {{"type", "WordPiece"}};
         },
         ""},
        {"no_bytelevel.json", "pre_tokenizer: no ByteLevel step",
         [](auto& j) { j["pre_tokenizer"]["pretokenizers"].erase(3); }, ""},
        {"huge_id.json", "model.vocab: id 2000000000 is far beyond the vocabulary's 1001 entries",
         [](auto& j) { j["model"]["vocab"]["zzzz"] = 2000000000; }, ""},
        {"garbage.json", "malformed JSON", nullptr, "{\"model\": {\"vocab\": {\"a\": 1,,}"},
        {"top_array.json", "expected a JSON object at the top level", nullptr, "[1, 2]"},
    };
    for (const auto& c : cases) {
        std::string text = c.raw;
        if (text.empty()) {
            auto j = small_tokenizer();
            c.edit(j);
            text = j.dump();
        }
        const auto r = info_of(dir, c.name, text);
        EXPECT_EQ(r.exit_code, 1) << c.name << ": " << r.out;
        const std::string line = one_line(r.out);
        EXPECT_EQ(line.find('\n'), std::string::npos) << c.name << ": " << r.out;
        EXPECT_EQ(line.rfind("trex: error: " + dir + "/" + c.name + ": ", 0), 0u) << line;
        EXPECT_NE(line.find(c.expect), std::string::npos) << c.name << ": " << line;
    }
    auto r = run_command(trex_binary() + " tokenizer info --tokenizer " + dir + "/absent.json");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(one_line(r.out).find("absent.json: cannot read tokenizer"), std::string::npos) << r.out;
    r = run_command(trex_binary() + " tokenizer info --tokenizer " + dir);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(one_line(r.out), "trex: error: " + dir + ": cannot read tokenizer: not a regular file");
    std::filesystem::remove_all(dir);
}

TEST(TokenizerCli, BenchWithoutPeer) {
    const auto r = run_command(trex_binary() + " bench tokenizer --no-peer --json --repeats 1 --tokenizer " +
                               source_path("tests/golden/tokenizer/deepseek_v4_reduced.json") + " --corpus " +
                               source_path("tests/golden/tokenizer/train_corpus.txt"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_GT(j["trex_mb_per_s_1thread"].get<double>(), 0.0);
    EXPECT_GT(j["trex_mb_per_s_2threads"].get<double>(), 0.0);
    EXPECT_GT(j["tokens"].get<size_t>(), 10000u);
    EXPECT_FALSE(j.contains("hf_mb_per_s_1thread"));
}
