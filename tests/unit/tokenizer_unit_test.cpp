// Tokenizer building blocks: UTF-8 maximal subparts, base64, the Oniguruma->PCRE2 regex translation and match
// order, the BPE merge loop's two paths, arbitrary bytes (fuzz) and very long pieces, and hand-derived DeepSeek-V4
// chat sequences and masks.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "support/test_support.hpp"
#include "trex/base/base64.hpp"
#include "trex/base/error.hpp"
#include "trex/tokenizer/chat.hpp"
#include "trex/tokenizer/regex.hpp"
#include "trex/tokenizer/tokenizer.hpp"
#include "trex/tokenizer/utf8.hpp"

using trex::test::source_path;
namespace tok = trex::tok;

namespace {

const tok::tokenizer& reduced() {
    static const tok::tokenizer t =
        tok::tokenizer::from_file(source_path("tests/golden/tokenizer/deepseek_v4_reduced.json"));
    return t;
}

const tok::tokenizer& trained() {
    static const tok::tokenizer t = tok::tokenizer::from_file(source_path("tests/golden/tokenizer/trained_v1000.json"));
    return t;
}

std::vector<std::pair<size_t, size_t>> matches(const std::string& pattern, const std::string& s) {
    tok::regex re;
    std::string err;
    EXPECT_TRUE(re.compile(pattern, &err)) << err;
    std::vector<std::pair<size_t, size_t>> out;
    re.for_each_match(s.data(), s.size(), [&](size_t a, size_t b) { out.push_back({a, b}); });
    return out;
}

std::vector<int32_t> concat(std::initializer_list<std::vector<int32_t>> parts) {
    std::vector<int32_t> out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

}  // namespace

TEST(TokenizerUtf8, MaximalSubparts) {
    struct c {
        std::string bytes;
        int want;  // utf8_next result
    } cases[] = {
        {"a", 1},
        {"\xC3\xA9", 2},
        {"\xE4\xB8\xAD", 3},
        {"\xF0\x9F\x98\x80", 4},
        {"\x80", -1},
        {"\xC0\xAF", -1},
        {"\xC3", -1},
        {"\xE4\xB8", -2},
        {"\xED\xA0\x80", -1},
        {"\xF0\x9F\x98", -3},
        {"\xF4\x90\x80\x80", -1},
        {"\xF5", -1},
        {"\xE0\x80\x80", -1},
        {"\xE4\x41", -1},
    };
    for (const auto& x : cases) {
        uint32_t cp;
        EXPECT_EQ(tok::utf8_next((const unsigned char*)x.bytes.data(), x.bytes.size(), &cp), x.want)
            << tok::bytes_to_byte_level(x.bytes);
    }
    const std::string s = "ok\xE4\xB8\xADxx\xFF";
    EXPECT_EQ(tok::utf8_valid_prefix((const unsigned char*)s.data(), s.size()), 7u);
}

TEST(TokenizerUtf8, ByteLevelAlphabetAndBase64) {
    std::string all;
    for (int b = 0; b < 256; b++) all += (char)b;
    std::string back;
    ASSERT_TRUE(tok::byte_level_to_bytes(tok::bytes_to_byte_level(all), &back));
    EXPECT_EQ(back, all);
    EXPECT_EQ(tok::byte_to_char(' '), 0x120u);   // 'Ġ'
    EXPECT_EQ(tok::byte_to_char('\n'), 0x10Au);  // 'Ċ'
    for (const std::string& s : {std::string(""), std::string("a"), std::string("ab"), all}) {
        std::string d;
        ASSERT_TRUE(trex::base64_decode(trex::base64_encode(s), &d));
        EXPECT_EQ(d, s);
    }
    std::string d;
    EXPECT_FALSE(trex::base64_decode("abc", &d));
    EXPECT_FALSE(trex::base64_decode("a=bc", &d));
}

TEST(TokenizerRegex, OnigurumaSemantics) {
    // empty matches right after a match are skipped (Oniguruma find_iter as HF uses it)
    EXPECT_EQ(matches("a*", "baaab"), (std::vector<std::pair<size_t, size_t>>{{0, 0}, {1, 4}, {5, 5}}));
    // \s is Oniguruma's: U+0085, NBSP, U+3000, U+2028 yes; U+180E, U+200B, U+001C no
    EXPECT_EQ(matches("\\s", "x\xC2\x85x\xE1\xA0\x8Ex\xE2\x80\x8Bx\xC2\xA0x\xE3\x80\x80x\x1Cx\xE2\x80\xA8x").size(),
              4u);
    EXPECT_EQ(matches("\\d", "1\xC2\xB2\xD9\xA3").size(), 2u);  // Nd only: '1' and ARABIC-INDIC THREE, not '²'
    EXPECT_EQ(matches("\\h+", "af09 g"), (std::vector<std::pair<size_t, size_t>>{{0, 4}}));
    EXPECT_EQ(matches("\\u0041", "BAB"), (std::vector<std::pair<size_t, size_t>>{{1, 2}}));
    EXPECT_EQ(matches("^a", "a\na").size(), 2u);  // line anchors
    // Unicode 15+ characters HF's Oniguruma knows: U+1FAE8 (So, Unicode 15), U+105C0 (Lo, Unicode 16)
    EXPECT_EQ(matches("\\p{S}", "\xF0\x9F\xAB\xA8").size(), 1u);
    EXPECT_EQ(matches("[^\\p{L}]", "\xF0\x90\x97\x80").size(), 0u);
    EXPECT_EQ(matches("\\P{L}", "\xF0\x90\x97\x80").size(), 0u);
}

TEST(TokenizerRegex, ErrorsAreOneLine) {
    tok::regex re;
    std::string err;
    EXPECT_FALSE(re.compile("(ab", &err));
    EXPECT_NE(err.find("offset 3"), std::string::npos) << err;
    EXPECT_FALSE(re.compile("[a[b]]", &err));
    EXPECT_NE(err.find("nested character classes"), std::string::npos) << err;
    EXPECT_FALSE(re.compile("[\\S]", &err));
    EXPECT_FALSE(re.compile("[a&&b]", &err));
    EXPECT_EQ(err.find('\n'), std::string::npos);
}

TEST(TokenizerBpe, ArrayAndHeapPathsAgree) {
    std::mt19937 rng(7);
    const auto& m = reduced().model();
    std::vector<int32_t> a, b, tmp;
    const std::string alphabet = "the quick brown fox 0123456789 \xE4\xB8\xAD\xE6\x96\x87 <>=/\\n\t";
    for (int it = 0; it < 3000; it++) {
        std::string w;
        const int n = 1 + (int)(rng() % 120);
        for (int k = 0; k < n; k++) w += alphabet[rng() % alphabet.size()];
        a.clear();
        b.clear();
        m.encode_word((const unsigned char*)w.data(), w.size(), a, tmp, false);
        m.encode_word((const unsigned char*)w.data(), w.size(), b, tmp, true);
        ASSERT_EQ(a, b) << w;
    }
}

TEST(TokenizerFuzz, ArbitraryBytesRoundTrip) {
    std::mt19937_64 rng(12345);
    const std::vector<std::string> frags = {"a",
                                            " ",
                                            "  ",
                                            "\n",
                                            "\r\n",
                                            "1",
                                            "123",
                                            "\xE4\xB8\xAD",
                                            "\xF0\x9F\x98\x80",
                                            "<think>",
                                            "</think>",
                                            "<\xEF\xBD\x9CUser\xEF\xBD\x9C>",
                                            "\xE4\xB8",
                                            "\xFF",
                                            "\x80",
                                            "\xED\xA0\x80",
                                            "\xC0",
                                            "'s",
                                            "!!",
                                            "\t",
                                            "\xC2\xA0"};
    for (const tok::tokenizer* t : {&reduced(), &trained()}) {
        for (int it = 0; it < 4000; it++) {
            std::string s;
            const int n = (int)(rng() % 64);
            for (int k = 0; k < n; k++) {
                if (rng() % 3 == 0)
                    s += (char)(rng() % 256);
                else
                    s += frags[rng() % frags.size()];
            }
            const auto ids = t->encode(s, false);
            ASSERT_EQ(t->decode(ids), s) << "iteration " << it;
            for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < t->id_space());
        }
    }
}

TEST(TokenizerFuzz, LongPiecesDoNotCrash) {
    for (const std::string& unit :
         {std::string(" "), std::string("a"), std::string("7"), std::string("\n"), std::string("\xE4\xB8\xAD"),
          std::string("!"), std::string("\xFF"), std::string(" \t")}) {
        std::string s;
        while (s.size() < 1000000) s += unit;
        const auto ids = reduced().encode(s, false);
        EXPECT_EQ(reduced().decode(ids), s);
    }
}

TEST(TokenizerChat, HandDerivedSequences) {
    const auto& t = reduced();
    const int32_t bos = 0, eos = 1, user = 128803, asst = 128804, think = 128821, end_think = 128822;
    ASSERT_EQ(t.token_to_id("<｜User｜>"), user);
    ASSERT_EQ(t.token_to_id("<think>"), think);
    auto enc = [&](const std::string& s) { return t.encode(s, false); };
    // chat mode, single turn: BOS <User> q <Assistant> </think> a EOS; trained: a EOS
    {
        std::vector<tok::chat_message> m = {{"user", "Hi", {}}, {"assistant", "Hello", {}}};
        const auto e = tok::encode_dsv4_chat(t, m, {});
        EXPECT_EQ(e.text, "<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜></think>Hello<｜end▁of▁sentence｜>");
        const auto hi = enc("Hi"), hello = enc("Hello");
        EXPECT_EQ(e.ids, concat({{bos, user}, hi, {asst, end_think}, hello, {eos}}));
        std::vector<uint8_t> mask(e.ids.size(), 0);
        for (size_t i = e.ids.size() - hello.size() - 1; i < e.ids.size(); i++) mask[i] = 1;
        EXPECT_EQ(e.mask, mask);
    }
    // thinking mode, system + two turns: the first turn's reasoning is dropped, the last is kept
    {
        std::vector<tok::chat_message> m = {{"system", "S", {}},
                                            {"user", "Q1", {}},
                                            {"assistant", "A1", std::string("R1")},
                                            {"user", "Q2", {}},
                                            {"assistant", "A2", std::string("R2")}};
        tok::chat_options o;
        o.thinking = true;
        const auto e = tok::encode_dsv4_chat(t, m, o);
        EXPECT_EQ(e.text,
                  "<｜begin▁of▁sentence｜>S<｜User｜>Q1<｜Assistant｜></think>A1<｜end▁of▁sentence｜><｜User｜>Q2"
                  "<｜Assistant｜><think>R2</think>A2<｜end▁of▁sentence｜>");
        const auto ids = concat({{bos},
                                 enc("S"),
                                 {user},
                                 enc("Q1"),
                                 {asst, end_think},
                                 enc("A1"),
                                 {eos, user},
                                 enc("Q2"),
                                 {asst, think},
                                 enc("R2"),
                                 {end_think},
                                 enc("A2"),
                                 {eos}});
        EXPECT_EQ(e.ids, ids);
        // trained: A1 EOS (first turn) and R2 </think> A2 EOS (last turn)
        std::vector<uint8_t> mask;
        auto push = [&](size_t n, uint8_t v) { mask.insert(mask.end(), n, v); };
        push(1 + enc("S").size() + 1 + enc("Q1").size() + 2, 0);
        push(enc("A1").size() + 1, 1);
        push(1 + enc("Q2").size() + 2, 0);
        push(enc("R2").size() + 1 + enc("A2").size() + 1, 1);
        EXPECT_EQ(e.mask, mask);
        // last-turn-only training
        o.train_last_only = true;
        const auto e2 = tok::encode_dsv4_chat(t, m, o);
        size_t trained = 0;
        for (auto v : e2.mask) trained += v;
        EXPECT_EQ(trained, enc("R2").size() + 1 + enc("A2").size() + 1);
        // keep the reasoning of earlier turns
        o.train_last_only = false;
        o.drop_thinking = false;
        const auto e3 = tok::encode_dsv4_chat(t, m, o);
        EXPECT_NE(e3.text.find("<｜Assistant｜><think>R1</think>A1"), std::string::npos) << e3.text;
    }
    // generation prompt (ends with a user message): nothing trained
    {
        std::vector<tok::chat_message> m = {{"user", "Q", {}}};
        tok::chat_options o;
        o.thinking = true;
        const auto e = tok::encode_dsv4_chat(t, m, o);
        EXPECT_EQ(e.text, "<｜begin▁of▁sentence｜><｜User｜>Q<｜Assistant｜><think>");
        for (auto v : e.mask) EXPECT_EQ(v, 0);
    }
}

TEST(TokenizerChat, BadMessagesAreOneLineErrors) {
    auto err = [](const char* json) {
        try {
            tok::parse_chat_messages(nlohmann::json::parse(json), "m.json");
        } catch (const trex::error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(err(R"([{"role":"tool","content":"x"}])"),
              "m.json: messages[0].role: 'tool' is not supported (system, user, assistant)");
    EXPECT_EQ(err(R"([{"content":"x"}])"), "m.json: messages[0]: missing string field 'role'");
    EXPECT_EQ(err(R"([{"role":"user","content":3}])"), "m.json: messages[0].content: expected a string");
    EXPECT_EQ(err(R"([{"role":"assistant","content":"x","tool_calls":[{}]}])"),
              "m.json: messages[0].tool_calls: not supported by trex's DeepSeek-V4 chat encoder");
    EXPECT_EQ(err(R"({"msgs":[]})"), "m.json: expected an array of messages or an object with \"messages\"");
}

// A number beyond double's range makes the JSON parser throw out_of_range, not parse_error: still a one-line
// trex::error naming the file.
TEST(TokenizerLoad, NumberOverflowIsOneLineError) {
    const std::string path = trex::test::scratch_dir("tokenizer_overflow") + "/tokenizer.json";
    std::ofstream(path) << "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 1e999}}}\n";
    const std::string msg = trex::test::error_of([&] { tok::tokenizer::from_file(path); });
    EXPECT_NE(msg.find(path + ": malformed JSON"), std::string::npos) << msg;
    EXPECT_NE(msg.find("number overflow"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(TokenizerLoad, MergesInStringAndListFormsAgree) {
    std::ifstream in(source_path("tests/golden/tokenizer/trained_v1000.json"));
    nlohmann::json j = nlohmann::json::parse(in);
    ASSERT_TRUE(j["model"]["merges"][0].is_array());
    const auto list_form = tok::tokenizer::from_json(j, "list");
    for (auto& m : j["model"]["merges"]) m = m[0].get<std::string>() + " " + m[1].get<std::string>();
    const auto string_form = tok::tokenizer::from_json(j, "string");
    const std::string text = "The quick brown fox, 12345 \xE4\xB8\xAD\xE6\x96\x87 <think>x</think>\n\n  end";
    EXPECT_EQ(list_form.encode(text), string_form.encode(text));
    EXPECT_EQ(list_form.model().n_merges, string_form.model().n_merges);
}
