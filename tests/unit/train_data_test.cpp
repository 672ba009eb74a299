// Documents and chat messages into token shards (`trex data tokenize`), and from shards through the packer into SFT
// batches whose labels are exactly the assistant tokens; the trainer's tokenized sources.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/base/files.hpp"
#include "trex/data/packer.hpp"
#include "trex/data/shards.hpp"
#include "trex/data/sources.hpp"
#include "trex/data/tokenize.hpp"
#include "trex/tokenizer/chat.hpp"
#include "trex/tokenizer/tokenizer.hpp"
#include "trex/train/trainer.hpp"

namespace fs = std::filesystem;
using trex::tok::tokenizer;

namespace {

// A byte-level BPE tokenizer trained by `trex tokenizer train` (1000 ids, the DeepSeek-V4 special tokens).
std::string tok_path() {
    return trex::test::source_path("tests/golden/tokenizer/trained_v1000.json");
}

std::string tmp_dir(const std::string& name) {
    return trex::test::scratch_dir("train_data_test_" + name);
}

void write(const std::string& path, const std::string& text) {
    std::ofstream o(path, std::ios::binary);
    o << text;
}

std::string expect_error(const std::function<void()>& f) {
    try {
        f();
    } catch (const trex::error& e) {
        const std::string m = e.what();
        EXPECT_EQ(m.find('\n'), std::string::npos) << "error message is not one line: " << m;
        return m;
    }
    ADD_FAILURE() << "expected a trex::error";
    return "";
}

// Chats whose user and system parts use words that never occur in the answers, so a decoded trained span that
// contained prompt text would show it.
const char* kChats[] = {
    R"({"messages":[{"role":"system","content":"You are precise."},{"role":"user","content":"Maximize 3x+2y subject to x+y<=4."},{"role":"assistant","content":"OPTIMUM twelve at corner four zero."}]})",
    R"({"messages":[{"role":"user","content":"Quick question: what is two plus two?"},{"role":"assistant","content":"ANSWER four"},{"role":"user","content":"And three plus three?"},{"role":"assistant","content":"ANSWER six","reasoning_content":"adding"}]})",
    R"({"messages":[{"role":"user","content":"Name a solver."},{"role":"assistant","content":"CBC from COIN-OR."}]})",
};

std::vector<trex::tok::chat_message> parse(const char* line) {
    return trex::tok::parse_chat_messages(nlohmann::json::parse(line)["messages"], "test");
}

}  // namespace

TEST(DataTokenize, TextJsonlAndMessagesMatchTheTokenizer) {
    const std::string d = tmp_dir("formats");
    write(d + "/a.md", "# Linear programs\nA linear program minimises c'x subject to Ax <= b.\n");
    write(d + "/docs.jsonl", "{\"text\": \"first document\"}\n\n{\"text\": \"second one\"}\n");
    std::string chats;
    for (const char* c : kChats) chats += std::string(c) + "\n";
    write(d + "/chat.jsonl", chats);

    trex::tokenize_options o;
    o.inputs = {d + "/a.md", d + "/docs.jsonl", d + "/chat.jsonl"};
    o.tokenizer = tok_path();
    o.out_dir = d + "/out";
    const trex::tokenize_summary s = trex::tokenize_to_shards(o);
    EXPECT_EQ(s.files, 3);
    EXPECT_EQ(s.documents, 6);
    EXPECT_EQ(s.vocab_size, 1000u);
    ASSERT_EQ(s.shards.size(), 1u);
    EXPECT_TRUE(fs::exists(d + "/out/manifest.json"));

    const tokenizer t = tokenizer::from_file(tok_path());
    const int32_t bos = t.token_to_id(trex::tok::dsv4::bos), eos = t.token_to_id(trex::tok::dsv4::eos);
    ASSERT_GE(bos, 0);
    ASSERT_GE(eos, 0);
    trex::shard_file f(d + "/out/" + s.shards[0]);
    ASSERT_TRUE(f.has_mask());
    std::vector<int32_t> ids;
    std::vector<uint8_t> mask;
    const std::vector<std::string> texts = {"# Linear programs\nA linear program minimises c'x subject to Ax <= b.\n",
                                            "first document", "second one"};
    int64_t tokens = 0, targets = 0;
    for (int i = 0; i < 3; i++) {  // text documents: BOS + ids + EOS, all targets
        f.get(i, ids, mask);
        std::vector<int32_t> want = {bos};
        for (int32_t x : t.encode(texts[i], false)) want.push_back(x);
        want.push_back(eos);
        EXPECT_EQ(ids, want) << "document " << i;
        EXPECT_EQ(mask, std::vector<uint8_t>(ids.size(), 1));
        tokens += (int64_t)ids.size();
        targets += (int64_t)ids.size();
    }
    for (int i = 0; i < 3; i++) {  // chats: exactly encode_dsv4_chat's ids and mask
        f.get(3 + i, ids, mask);
        const trex::tok::chat_encoding c = trex::tok::encode_dsv4_chat(t, parse(kChats[i]), {});
        EXPECT_EQ(ids, c.ids) << "chat " << i;
        EXPECT_EQ(mask, c.mask) << "chat " << i;
        tokens += (int64_t)ids.size();
        for (uint8_t m : mask) targets += m;
    }
    EXPECT_EQ(s.tokens, tokens);
    EXPECT_EQ(s.target_tokens, targets);
    EXPECT_LT(s.target_tokens, s.tokens);
}

TEST(DataTokenize, SftBatchesTrainExactlyOnAssistantTokens) {
    // End to end: messages JSONL -> tokenize -> shard source -> SFT packer. Every label >= 0 must be a token of an
    // assistant answer (or the EOS that closes it), every answer token must be a label exactly once, and the decoded
    // labels must contain the answers and none of the prompt text.
    const std::string d = tmp_dir("sftmask");
    std::string chats;
    for (const char* c : kChats) chats += std::string(c) + "\n";
    write(d + "/chat.jsonl", chats);
    trex::tokenize_options o;
    o.inputs = {d + "/chat.jsonl"};
    o.tokenizer = tok_path();
    o.out_dir = d + "/out";
    const trex::tokenize_summary s = trex::tokenize_to_shards(o);

    trex::packer p(std::make_unique<trex::shard_source>(std::vector<std::string>{o.out_dir}, 7, 0, 4096u), "sft", 2);
    trex::train_batch b;
    const int64_t B = 3, S = 64;  // the chats have 63, 62 and 27 tokens: no two share a row, 3 rows = one epoch
    p.next(b, B, S);
    EXPECT_EQ(b.target_tokens, s.target_tokens);

    const tokenizer t = tokenizer::from_file(tok_path());
    std::string trained;
    int64_t labels = 0;
    for (int64_t r = 0; r < B; r++) {
        std::vector<int32_t> row_labels;
        for (int64_t i = 0; i < S; i++) {
            const int32_t l = b.labels[r * S + i];
            if (l < 0) continue;
            labels++;
            EXPECT_EQ(l, b.ids[r * S + i + 1]) << "a label is the next token";
            row_labels.push_back(l);
        }
        trained += t.decode(row_labels) + "|";
    }
    EXPECT_EQ(labels, s.target_tokens);
    for (const char* answer : {"OPTIMUM twelve at corner four zero.", "ANSWER four", "ANSWER six", "CBC from COIN-OR."})
        EXPECT_NE(trained.find(answer), std::string::npos) << answer << " not trained: " << trained;
    for (const char* prompt : {"Maximize", "precise", "question", "three plus", "Name a solver", "adding"})
        EXPECT_EQ(trained.find(prompt), std::string::npos) << prompt << " trained: " << trained;
}

TEST(DataTokenize, BadInputIsAOneLineErrorAndLeavesNothing) {
    const std::string d = tmp_dir("errors");
    trex::tokenize_options o;
    o.tokenizer = tok_path();
    o.out_dir = d + "/out";

    write(d + "/bad.jsonl", "{\"text\": \"ok\"}\n{\"text\": broken\n");
    o.inputs = {d + "/bad.jsonl"};
    EXPECT_NE(expect_error([&] { trex::tokenize_to_shards(o); }).find("bad.jsonl:2"), std::string::npos);

    write(d + "/nomsg.jsonl", "{\"messages\": [{\"role\": \"wizard\", \"content\": \"x\"}]}\n");
    o.inputs = {d + "/nomsg.jsonl"};
    EXPECT_NE(expect_error([&] { trex::tokenize_to_shards(o); }).find("nomsg.jsonl:1"), std::string::npos);

    write(d + "/nokey.jsonl", "{\"body\": \"x\"}\n");
    o.inputs = {d + "/nokey.jsonl"};
    EXPECT_NE(expect_error([&] { trex::tokenize_to_shards(o); }).find("neither 'text' nor 'messages'"),
              std::string::npos);

    o.inputs = {d + "/missing.txt"};
    EXPECT_NE(expect_error([&] { trex::tokenize_to_shards(o); }).find("missing.txt"), std::string::npos);

    write(d + "/ok.txt", "fine");
    o.inputs = {d + "/ok.txt"};
    o.max_vocab = 500;  // the tokenizer has 1000 ids
    EXPECT_NE(expect_error([&] { trex::tokenize_to_shards(o); }).find("vocabulary of 500"), std::string::npos);
    o.max_vocab = 0;

    // nothing half-written: no output directory, no temporary sibling
    for (const auto& e : fs::directory_iterator(d))
        EXPECT_EQ(e.path().filename().string().find("out"), std::string::npos) << e.path();

    trex::tokenize_to_shards(o);
    EXPECT_NE(expect_error([&] { trex::tokenize_to_shards(o); }).find("exists"), std::string::npos);
    o.force = true;
    EXPECT_NO_THROW(trex::tokenize_to_shards(o));
}

TEST(DataTokenize, ManyShardsNeverSplitADocument) {
    const std::string d = tmp_dir("shards");
    std::string docs;
    for (int i = 0; i < 200; i++) docs += "{\"text\": \"document number " + std::to_string(i) + " of the set\"}\n";
    write(d + "/docs.jsonl", docs);
    trex::tokenize_options o;
    o.inputs = {d};  // a directory
    o.tokenizer = tok_path();
    o.out_dir = d + "/out";
    o.shard_tokens = 100;
    const trex::tokenize_summary s = trex::tokenize_to_shards(o);
    EXPECT_EQ(s.documents, 200);
    EXPECT_GT(s.shards.size(), 10u);
    int64_t docs_seen = 0, tokens = 0;
    for (const std::string& name : s.shards) {
        trex::shard_file f(o.out_dir + "/" + name);
        EXPECT_LE(f.tokens(), 100);
        EXPECT_FALSE(f.has_mask());
        docs_seen += f.docs();
        tokens += f.tokens();
    }
    EXPECT_EQ(docs_seen, 200);
    EXPECT_EQ(tokens, s.tokens);
}

TEST(Train, SftOnMessagesTrainsOnAssistantTokensOnly) {
    // `trex train` in sft mode straight from a messages JSONL (tokenized into the run directory): each step's target
    // count is that of the same stream packed here from the tokenized shards (assistant tokens only, as the test
    // above proves), and the loss falls as the model memorises the answers (12 steps over 3 chats).
    const std::string d = tmp_dir("sfttrain");
    std::string chats;
    for (const char* c : kChats) chats += std::string(c) + "\n";
    write(d + "/chat.jsonl", chats);
    auto cfg = trex::load_train_config(
        "", {"model.config=\"" + trex::test::source_path("configs/v4-tiny.json") + "\"", "run.mode=\"sft\"",
             "data.batch=3", "data.seq=64", "data.tokenizer=\"" + tok_path() + "\"",
             "data.sources=[{kind=\"messages\", path=\"" + d + "/chat.jsonl\"}]", "optim.lr=3e-3", "optim.warmup=2",
             "checkpoint.every=0", "log.report=false", "run.steps=12", "run.out_dir=\"" + d + "/run\""});
    const auto s = trex::run_training(cfg);
    std::ifstream in(d + "/run/metrics.jsonl");
    std::string line;
    std::vector<nlohmann::json> rows;
    while (std::getline(in, line))
        if (!line.empty()) rows.push_back(nlohmann::json::parse(line));
    ASSERT_EQ(rows.size(), 12u);
    trex::packer p(
        std::make_unique<trex::shard_source>(std::vector<std::string>{d + "/run/data/source-0"}, cfg.seed, 0, 4096u),
        "sft", cfg.pad_id);
    trex::train_batch b;
    for (const auto& r : rows) {
        p.next(b, 3, 64);
        EXPECT_EQ(r["target_tokens"].get<int64_t>(), b.target_tokens) << "step " << r["step"];
    }
    EXPECT_LT(s.last_loss, 0.5 * s.first_loss);

    // a second run reuses the tokenized source (same fingerprint)
    const auto mtime = fs::last_write_time(d + "/run/data/source-0/manifest.json");
    cfg.out_dir = d + "/run";
    cfg.resume = "";
    cfg.steps = 1;
    trex::run_training(cfg);
    EXPECT_EQ(fs::last_write_time(d + "/run/data/source-0/manifest.json"), mtime);
}

TEST(Train, TinyCptOfTheReadmeMainJobLearns) {
    // The README's main job (configs/train-tiny-cpt.toml: v4-tiny, Muon + AdamW, 30 steps of 2,048 tokens on the
    // successor-chain corpus). A uniform guess costs ln(4096) = 8.32 nats; a model that has learnt the successor map
    // costs ~0. Runs reach an LM loss of ~0.2-0.4 by step 30 (from 8.3 at step 1); the bar is a mean LM loss under 1.0
    // (12% of the uniform cost) over the last 5 steps, with a report written.
    const std::string d = tmp_dir("tinycpt");
    auto cfg = trex::load_train_config(trex::test::source_path("configs/train-tiny-cpt.toml"),
                                       {"run.out_dir=\"" + d + "/run\""});
    const auto s = trex::run_training(cfg);
    std::ifstream in(d + "/run/metrics.jsonl");
    std::string line;
    std::vector<double> lm;
    double rss = 0;
    while (std::getline(in, line))
        if (!line.empty()) {
            const auto j = nlohmann::json::parse(line);
            lm.push_back(j["lm"].get<double>());
            EXPECT_GE(j.value("peak_rss_mib", 0.0), rss) << "a peak cannot fall";
            rss = j.value("peak_rss_mib", 0.0);
        }
    ASSERT_EQ(lm.size(), 30u);
    EXPECT_GT(rss, 8.0 * 13e6 / (1024 * 1024)) << "below the weights and gradients alone";
    EXPECT_NEAR(lm.front(), std::log(4096.0), 0.3);
    double tail = 0;
    for (size_t i = lm.size() - 5; i < lm.size(); i++) tail += lm[i];
    EXPECT_LT(tail / 5, 1.0);
    EXPECT_EQ(s.skipped, 0);
    EXPECT_TRUE(fs::exists(d + "/run/report.html"));
    EXPECT_TRUE(fs::exists(d + "/run/report.md"));
    EXPECT_NE(trex::read_file(d + "/run/report.md").find("| peak resident memory (rank 0) |"), std::string::npos);
}
