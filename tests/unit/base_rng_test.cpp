#include <gtest/gtest.h>

#include "trex/base/rng.hpp"

TEST(Rng, DependsOnlyOnSeedStreamIndex) {
    EXPECT_EQ(trex::normal01(1, 2, 3), trex::normal01(1, 2, 3));
    EXPECT_NE(trex::normal01(1, 2, 3), trex::normal01(1, 2, 4));
    EXPECT_NE(trex::normal01(1, 2, 3), trex::normal01(2, 2, 3));
    double sum = 0, sq = 0;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        double v = trex::normal01(7, 11, i);
        sum += v;
        sq += v * v;
    }
    EXPECT_NEAR(sum / n, 0.0, 0.01);
    EXPECT_NEAR(sq / n, 1.0, 0.01);
}
