// Word n-grams (optmodel/data_build/decontam.hpp), shared by trex data decontam and the recipe's general-text corpus:
// the hash of each run of n words of words_of(text), fixed (decontamination reports name the n-gram that matched),
// equal for equal word runs whatever their case and punctuation. The text profiles of trex data stats --against.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "trex/base/rng.hpp"
#include "trex/optmodel/data_build/decontam.hpp"
#include "trex/optmodel/data_build/text_stats.hpp"

using trex::optmodel::ngram_text;
using trex::optmodel::word_ngrams;

TEST(WordNgrams, EqualTextsGiveEqualHashes) {
    const std::string text = "A factory makes chairs and tables; each chair needs 2 hours.";
    EXPECT_EQ(word_ngrams(text, 3), word_ngrams(text, 3));
    EXPECT_EQ(word_ngrams(text, 3), word_ngrams("a FACTORY makes chairs, and tables each chair needs 2 hours", 3));
    EXPECT_EQ(word_ngrams(text, 3).size(), 9u);  // 11 words
    EXPECT_NE(word_ngrams(text, 3), word_ngrams("A factory makes stools and tables; each chair needs 2 hours.", 3));
}

TEST(WordNgrams, TheHashIsFixed) {
    using trex::hash_name;
    using trex::mix64;
    const uint64_t want = mix64(mix64(mix64(0x1234 ^ hash_name("x")) ^ hash_name("y2")) ^ hash_name("z"));
    EXPECT_EQ(word_ngrams("X, y2 z", 3), std::vector<uint64_t>{want});
    EXPECT_EQ(ngram_text("X, y2 z", 3, want), "x y2 z");
    EXPECT_EQ(ngram_text("X, y2 z", 3, want + 1), "");
}

TEST(WordNgrams, FewerWordsThanNGiveNone) {
    EXPECT_TRUE(word_ngrams("only four words here", 5).empty());
    EXPECT_EQ(word_ngrams("only four words here", 4).size(), 1u);
    EXPECT_TRUE(word_ngrams("", 1).empty());
    EXPECT_TRUE(word_ngrams("some words", 0).empty());
}

TEST(WordNgrams, SharedThirteenGramIsASetMember) {
    const std::string shared = "a company produces two products using three machines with limited weekly hours each";
    const std::string bench = "Question: " + shared + " and wants the best plan.";
    const std::string ours = "Consider this. " + shared + "; formulate a linear program.";
    const std::string other = "A farmer plants wheat and corn on one hundred acres with limited water and labour.";
    const std::vector<uint64_t> b = word_ngrams(bench, 13);
    const std::unordered_set<uint64_t> grams(b.begin(), b.end());
    std::string match;
    for (uint64_t h : word_ngrams(ours, 13))
        if (grams.count(h)) match = ngram_text(ours, 13, h);
    EXPECT_EQ(match, "a company produces two products using three machines with limited weekly hours each");
    for (uint64_t h : word_ngrams(other, 13)) EXPECT_EQ(grams.count(h), 0u);
}

// trex data stats --against: word types leave numbers out, n-grams mask them, the variety ratio counts repeats.
TEST(TextStats, ProfileCountsTypesAndMaskedNgrams) {
    using trex::optmodel::profile_texts;
    // "a b c 1" and "a b c 22": the 3-grams "a b c" and "b c #" repeat across the two texts
    const auto p = profile_texts({"A b, c 1.", "a B c 22"}, 3);
    EXPECT_EQ(p.texts, 2);
    EXPECT_EQ(p.words, 8);
    EXPECT_EQ(p.word_types, 3);  // a, b, c
    EXPECT_EQ(p.ngrams, 4);
    EXPECT_EQ(p.distinct_ngrams, 2);
    EXPECT_DOUBLE_EQ(p.distinct_ratio(), 0.5);
    const auto q = profile_texts({"one two three four", "five six seven eight"}, 3);
    EXPECT_DOUBLE_EQ(q.distinct_ratio(), 1.0);
    EXPECT_EQ(trex::optmodel::word_types({"Red fox 3", "red Dog"}), (std::vector<std::string>{"dog", "fox", "red"}));
}

TEST(TextStats, ProblemStatementDropsTheTaskRequest) {
    EXPECT_EQ(trex::optmodel::problem_statement("A farm.\n\nData here.\n\nWrite a program.\n"),
              "A farm.\n\nData here.");
    EXPECT_EQ(trex::optmodel::problem_statement("Just one paragraph."), "Just one paragraph.");
}
