// The OpenAI request bodies `trex serve` accepts (src/trex/serve/openai_api.hpp): every field checked with an error
// naming it, the model name (404 for another), the defaults, and the response objects' shape (thinking mode's
// reasoning_content split at </think>, usage, streaming chunks).
#include <gtest/gtest.h>

#include <string>

#include "trex/serve/openai_api.hpp"

namespace {

using trex::serve::api_request;
using trex::serve::parse_request;

std::optional<trex::serve::api_error> chat(const std::string& body, api_request* r) {
    return parse_request(body, true, "trex", r);
}

TEST(ServeApi, ChatRequestFieldsAndDefaults) {
    api_request r;
    ASSERT_FALSE(chat(R"({"messages": [{"role": "system", "content": "Be brief."},
                                       {"role": "user", "content": [{"type": "text", "text": "a"},
                                                                    {"type": "text", "text": "b"}]}],
                          "n": 2, "temperature": 0.5, "top_p": 0.9, "max_tokens": 7, "seed": 3,
                          "stop": ["x", "yz"], "logprobs": true, "top_logprobs": 2, "stream": true,
                          "stream_options": {"include_usage": true}, "frequency_penalty": 0})",
                      &r));
    ASSERT_EQ(r.messages.size(), 2u);
    EXPECT_EQ(r.messages[1].content, "ab");
    EXPECT_EQ(r.n, 2);
    EXPECT_EQ(r.max_tokens, 7);
    EXPECT_EQ(*r.seed, 3u);
    EXPECT_EQ(r.stop.size(), 2u);
    EXPECT_TRUE(r.stream && r.include_usage && r.logprobs);
    EXPECT_EQ(r.top_logprobs, 2);
    EXPECT_EQ(r.model, "trex");
    api_request d;
    ASSERT_FALSE(chat(R"({"model": "trex", "messages": [{"role": "user", "content": "x"}], "stop": "s"})", &d));
    EXPECT_EQ(d.n, 1);
    EXPECT_FALSE(d.stream);
    EXPECT_EQ(d.stop, std::vector<std::string>{"s"});
    // a seed makes the samples' generators reproducible, and distinct per sample
    const auto p0 = trex::serve::sampling_of(r, 0, 99), p1 = trex::serve::sampling_of(r, 1, 12345);
    EXPECT_NE(p0.seed, p1.seed);
    EXPECT_EQ(trex::serve::sampling_of(r, 1, 1).seed, p1.seed);
}

TEST(ServeApi, BadFieldsAreErrorsNamingThem) {
    struct bad_case {
        const char* body;
        const char* param;
        int status;
    };
    const bad_case cases[] = {
        {"{not json", "", 400},
        {"[1, 2]", "", 400},
        {R"({})", "messages", 400},
        {R"({"messages": []})", "messages", 400},
        {R"({"messages": [{"role": "robot", "content": "x"}]})", "messages[0].role", 400},
        {R"({"messages": [{"role": "user"}]})", "messages[0].content", 400},
        {R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", "messages[0].content", 400},
        {R"({"messages": [{"role": "user", "content": "x"}], "temperature": 2.5})", "temperature", 400},
        {R"({"messages": [{"role": "user", "content": "x"}], "temperature": "hot"})", "temperature", 400},
        {R"({"messages": [{"role": "user", "content": "x"}], "top_p": 0})", "top_p", 400},
        {R"({"messages": [{"role": "user", "content": "x"}], "n": 0})", "n", 400},
        {R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": 1.5})", "max_tokens", 400},
        {R"({"messages": [{"role": "user", "content": "x"}], "stop": [1]})", "stop", 400},
        {R"({"messages": [{"role": "user", "content": "x"}], "stop": ["a", "b", "c", "d", "e"]})", "stop", 400},
        {R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 3})", "top_logprobs", 400},
        {R"({"messages": [{"role": "user", "content": "x"}], "stream": "yes"})", "stream", 400},
        {R"({"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]})", "model", 404},
    };
    for (const bad_case& c : cases) {
        api_request r;
        const auto e = chat(c.body, &r);
        ASSERT_TRUE(e.has_value()) << c.body;
        EXPECT_EQ(e->param, c.param) << c.body;
        EXPECT_EQ(e->status, c.status) << c.body;
        const auto body = e->body();
        EXPECT_TRUE(body["error"].contains("message") && body["error"].contains("type")) << body.dump();
    }
    api_request r;
    EXPECT_TRUE(parse_request(R"({"prompt": ["a", "b"]})", false, "trex", &r).has_value());
    EXPECT_FALSE(parse_request(R"({"prompt": "a", "logprobs": 2})", false, "trex", &r).has_value());
    EXPECT_EQ(r.top_logprobs, 2);
}

TEST(ServeApi, ResponsesSplitReasoningAndCountUsage) {
    api_request r;
    ASSERT_FALSE(chat(R"({"messages": [{"role": "user", "content": "x"}]})", &r));
    trex::serve::sample_out s;
    s.text = "let me think</think>The answer is 3.";
    s.finish = "stop";
    const auto j = trex::serve::response_object(r, "chatcmpl-1", 5, {s}, {10, 7}, true);
    EXPECT_EQ(j["object"], "chat.completion");
    EXPECT_EQ(j["choices"][0]["message"]["reasoning_content"], "let me think");
    EXPECT_EQ(j["choices"][0]["message"]["content"], "The answer is 3.");
    EXPECT_EQ(j["usage"]["total_tokens"], 17);
    const auto plain = trex::serve::response_object(r, "chatcmpl-1", 5, {s}, {10, 7}, false);
    EXPECT_EQ(plain["choices"][0]["message"]["content"], s.text);
    const auto first = trex::serve::chunk_object(r, "c", 5, 0, "", "", true, "hmm");
    EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
    EXPECT_EQ(first["choices"][0]["delta"]["reasoning_content"], "hmm");
    const auto last = trex::serve::chunk_object(r, "c", 5, 0, "", "length", false);
    EXPECT_EQ(last["choices"][0]["finish_reason"], "length");
    EXPECT_EQ(trex::serve::cut_at_stop("abcXYdef", {"XY", "de"}), "abc");
}

}  // namespace
