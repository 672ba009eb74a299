// Known-answer tests of the release number formats (spec §4.1, §4.2): FP8 E4M3FN, UE8M0, FP4 E2M1 with its nibble
// order, BF16, and the 128×128 / 1×32 block quantisers (UE8M0 and F32 scales).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "trex/base/error.hpp"
#include "trex/io/codecs.hpp"
#include "trex/io/safetensors.hpp"

namespace {

// Independent definition of E4M3FN: (−1)^s · (e == 0 ? m·2^−9 : (8 + m)·2^(e − 10)), NaN at S.1111.111.
double fp8_oracle(int c) {
    const int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
    if (e == 15 && m == 7) return std::nan("");
    const double v = e == 0 ? m * std::pow(2.0, -9) : (8 + m) * std::pow(2.0, e - 10);
    return s ? -v : v;
}

TEST(Fp8, EveryCodeDecodesToItsIeeeValue) {
    int nan = 0;
    for (int c = 0; c < 256; c++) {
        const double want = fp8_oracle(c);
        const float got = trex::fp8_e4m3_to_f32((uint8_t)c);
        if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(got)) << c;
            nan++;
            continue;
        }
        EXPECT_EQ((double)got, want) << "code " << c;
        EXPECT_EQ(std::signbit(got), (c & 0x80) != 0) << "code " << c;
    }
    EXPECT_EQ(nan, 2);  // 0x7F and 0xFF only: no infinities
    EXPECT_EQ(trex::fp8_e4m3_to_f32(0x7E), 448.0f);
    EXPECT_EQ(trex::fp8_e4m3_to_f32(0xFE), -448.0f);
    EXPECT_EQ(trex::fp8_e4m3_to_f32(0x38), 1.0f);
    EXPECT_EQ(trex::fp8_e4m3_to_f32(0x08), 0.015625f);             // smallest normal 2^−6
    EXPECT_EQ(trex::fp8_e4m3_to_f32(0x01), std::ldexp(1.0f, -9));  // smallest subnormal
    EXPECT_EQ(trex::fp8_e4m3_to_f32(0x07), 7 * std::ldexp(1.0f, -9));
}

TEST(Fp8, EncodeInvertsDecode) {
    for (int c = 0; c < 256; c++) {
        if (c == 0x7F || c == 0xFF) continue;
        EXPECT_EQ(trex::f32_to_fp8_e4m3(trex::fp8_e4m3_to_f32((uint8_t)c)), c) << c;
    }
}

TEST(Fp8, RoundsToNearestEvenAtEveryMidpoint) {
    for (int c = 0; c < 0x7E; c++) {  // consecutive positive codes c, c+1
        const double lo = fp8_oracle(c), hi = fp8_oracle(c + 1);
        const float mid = (float)((lo + hi) / 2);  // exact in float
        ASSERT_EQ((double)mid, (lo + hi) / 2);
        const int even = (c % 2 == 0) ? c : c + 1;
        EXPECT_EQ(trex::f32_to_fp8_e4m3(mid), even) << "midpoint of " << c << " and " << c + 1;
        EXPECT_EQ(trex::f32_to_fp8_e4m3(-mid), even | 0x80);
        EXPECT_EQ(trex::f32_to_fp8_e4m3(std::nextafter(mid, 0.0f)), c);
        EXPECT_EQ(trex::f32_to_fp8_e4m3(std::nextafter(mid, 1e9f)), c + 1);
    }
    // hand-computed values
    EXPECT_EQ(trex::f32_to_fp8_e4m3(0.3f), 0x2A);                    // 1.2·2^−2 → 1.25·2^−2
    EXPECT_EQ(trex::f32_to_fp8_e4m3(-3.3f), 0xC5);                   // −1.65·2 → −1.625·2
    EXPECT_EQ(trex::f32_to_fp8_e4m3(std::ldexp(1.0f, -10)), 0x00);   // half the smallest subnormal: tie → 0
    EXPECT_EQ(trex::f32_to_fp8_e4m3(std::ldexp(1.5f, -10)), 0x01);   // 0.75 of it → 1
    EXPECT_EQ(trex::f32_to_fp8_e4m3(std::ldexp(1.5f, -9)), 0x02);    // 1.5 subnormal ulps: tie → 2 (even)
    EXPECT_EQ(trex::f32_to_fp8_e4m3(std::ldexp(7.5f, -9)), 0x08);    // rounds up into the smallest normal
    EXPECT_EQ(trex::f32_to_fp8_e4m3(std::ldexp(1.0f, -140)), 0x00);  // float subnormal input
    EXPECT_EQ(trex::f32_to_fp8_e4m3(-0.0f), 0x80);
}

TEST(Fp8, SaturatesAndKeepsNaN) {
    for (float x : {448.0f, 449.0f, 464.0f, 465.0f, 480.0f, 1e6f, 3e38f, std::numeric_limits<float>::infinity()}) {
        EXPECT_EQ(trex::f32_to_fp8_e4m3(x), 0x7E) << x;
        EXPECT_EQ(trex::f32_to_fp8_e4m3(-x), 0xFE) << x;
    }
    EXPECT_EQ(trex::f32_to_fp8_e4m3(std::numeric_limits<float>::quiet_NaN()), 0x7F);
    EXPECT_EQ(trex::f32_to_fp8_e4m3(-std::numeric_limits<float>::quiet_NaN()), 0xFF);
    EXPECT_EQ(trex::f32_to_fp8_e4m3(432.0f), 0x7E);  // between 416 and 448: tie → 448 (mantissa 110, even)
    EXPECT_EQ(trex::f32_to_fp8_e4m3(431.0f), 0x7D);
}

TEST(Ue8m0, ExtremesAndNaN) {
    EXPECT_EQ(trex::ue8m0_to_f32(127), 1.0f);
    EXPECT_EQ(trex::ue8m0_to_f32(128), 2.0f);
    EXPECT_EQ(trex::ue8m0_to_f32(126), 0.5f);
    EXPECT_EQ(trex::ue8m0_to_f32(0), std::ldexp(1.0f, -127));  // a float subnormal, exactly representable
    EXPECT_GT(trex::ue8m0_to_f32(0), 0.0f);
    EXPECT_EQ(trex::ue8m0_to_f32(254), std::ldexp(1.0f, 127));
    EXPECT_TRUE(std::isnan(trex::ue8m0_to_f32(255)));
    for (int c = 0; c < 255; c++) EXPECT_EQ(trex::ue8m0_to_f32((uint8_t)c), std::ldexp(1.0f, c - 127)) << c;
    EXPECT_EQ(trex::ue8m0_from_exponent(-127), 0);
    EXPECT_EQ(trex::ue8m0_from_exponent(127), 254);
    EXPECT_THROW(trex::ue8m0_from_exponent(128), trex::error);
    EXPECT_THROW(trex::ue8m0_from_exponent(-128), trex::error);
}

TEST(ScaleChoice, PowerOfTwoCeilOfAmaxOverQmax) {
    using trex::pow2_scale_exponent;
    EXPECT_EQ(pow2_scale_exponent(448.0f, 448.0f, 0.0f), 0);
    EXPECT_EQ(pow2_scale_exponent(std::nextafter(448.0f, 1e9f), 448.0f, 0.0f), 1);
    EXPECT_EQ(pow2_scale_exponent(224.0f, 448.0f, 0.0f), -1);
    EXPECT_EQ(pow2_scale_exponent(std::nextafter(224.0f, 1e9f), 448.0f, 0.0f), 0);
    EXPECT_EQ(pow2_scale_exponent(1.0f, 448.0f, 0.0f), -8);  // 1/448 in (2^−9, 2^−8]
    EXPECT_EQ(pow2_scale_exponent(6.0f, 6.0f, 0.0f), 0);
    EXPECT_EQ(pow2_scale_exponent(6.0001f, 6.0f, 0.0f), 1);
    EXPECT_EQ(pow2_scale_exponent(3.0f, 6.0f, 0.0f), -1);
    EXPECT_EQ(pow2_scale_exponent(0.0f, 448.0f, trex::kFp8AmaxFloor), -22);  // 1e−4/448 ≈ 2^−22.1
    EXPECT_EQ(pow2_scale_exponent(0.0f, 6.0f, trex::kFp4AmaxFloor), -126);
    EXPECT_EQ(pow2_scale_exponent(3e38f, 6.0f, 0.0f), 126);
}

TEST(Fp4, CodeTableAndRounding) {
    const float table[16] = {0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0f, -0.5, -1, -1.5, -2, -3, -4, -6};
    for (int c = 0; c < 16; c++) {
        EXPECT_EQ(trex::fp4_e2m1_to_f32((uint8_t)c), table[c]) << c;
        EXPECT_EQ(std::signbit(trex::fp4_e2m1_to_f32((uint8_t)c)), c >= 8) << c;
        EXPECT_EQ(trex::f32_to_fp4_e2m1(table[c]), c) << c;
    }
    // ties go to the even code: 0.25 → 0, 0.75 → 1.0 (code 2), 1.25 → 1.0, 1.75 → 2, 2.5 → 2, 3.5 → 4, 5 → 4
    const float ties[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
    const int tie_codes[] = {0, 2, 2, 4, 4, 6, 6};
    for (int i = 0; i < 7; i++) {
        EXPECT_EQ(trex::f32_to_fp4_e2m1(ties[i]), tie_codes[i]) << ties[i];
        EXPECT_EQ(trex::f32_to_fp4_e2m1(-ties[i]), tie_codes[i] | 8) << -ties[i];
    }
    EXPECT_EQ(trex::f32_to_fp4_e2m1(0.26f), 1);
    EXPECT_EQ(trex::f32_to_fp4_e2m1(0.74f), 1);
    EXPECT_EQ(trex::f32_to_fp4_e2m1(3.49f), 5);
    EXPECT_EQ(trex::f32_to_fp4_e2m1(5.01f), 7);
    EXPECT_EQ(trex::f32_to_fp4_e2m1(100.0f), 7);  // saturates
    EXPECT_EQ(trex::f32_to_fp4_e2m1(-100.0f), 15);
    EXPECT_EQ(trex::f32_to_fp4_e2m1(-0.1f), 8);  // rounds to −0
}

TEST(Fp4, LowNibbleIsTheEvenColumn) {
    // one row of 32 values = one block with amax 6 → scale 2^0
    std::vector<float> w(32, 0.0f);
    w[0] = 0.5f;   // code 1
    w[1] = 6.0f;   // code 7
    w[2] = -1.0f;  // code 10
    w[3] = 3.0f;   // code 5
    std::vector<uint8_t> packed(16), scale(1);
    trex::quantize_fp4_1x32(w.data(), 1, 32, packed.data(), scale.data());
    EXPECT_EQ(scale[0], 127);
    EXPECT_EQ(packed[0], 0x71);  // low nibble = column 0, high nibble = column 1
    EXPECT_EQ(packed[1], 0x5A);
    for (int k = 2; k < 16; k++) EXPECT_EQ(packed[k], 0);
    // dequantise a hand-made packed row: byte 0x3C → columns (−2, 1.5), with scale 2^−2
    std::vector<uint8_t> p2 = {0x3C, 0xF0};
    std::vector<uint8_t> s2 = {125};
    std::vector<float> out(4);
    trex::dequantize_fp4_1x32(p2.data(), 1, 4, s2.data(), nullptr, out.data());
    EXPECT_EQ(out[0], -0.5f);
    EXPECT_EQ(out[1], 0.375f);
    EXPECT_EQ(out[2], 0.0f);
    EXPECT_EQ(out[3], -1.5f);
}

TEST(Fp4, OneScalePer32InputsPerRow) {
    // [2, 64]: 2 scales per row; row r block b has amax 6·2^(r+b)
    const int64_t R = 2, C = 64;
    std::vector<float> w(R * C);
    for (int64_t r = 0; r < R; r++)
        for (int64_t c = 0; c < C; c++)
            w[r * C + c] = (c % 2 ? -1.0f : 1.0f) * std::ldexp(trex::kFp4Table[c % 8], (int)(r + c / 32));
    std::vector<uint8_t> p(R * C / 2), s(R * 2);
    trex::quantize_fp4_1x32(w.data(), R, C, p.data(), s.data());
    EXPECT_EQ(s[0], 127);
    EXPECT_EQ(s[1], 128);
    EXPECT_EQ(s[2], 128);
    EXPECT_EQ(s[3], 129);
    std::vector<float> d(R * C);
    trex::dequantize_fp4_1x32(p.data(), R, C, s.data(), nullptr, d.data());
    for (int64_t i = 0; i < R * C; i++) EXPECT_EQ(d[i], w[i]) << i;  // every value is representable: exact
}

TEST(Fp8Block, DequantisesAHandMadeTensor) {
    // [130, 260]: a 2×3 grid of blocks, the last row/column of blocks partial
    const int64_t R = 130, C = 260;
    std::vector<uint8_t> codes(R * C);
    for (int64_t r = 0; r < R; r++)
        for (int64_t c = 0; c < C; c++) codes[r * C + c] = (uint8_t)(0x38 + (r + c) % 8);
    const uint8_t scales[6] = {127, 128, 120, 130, 0, 254};
    std::vector<float> out(R * C), out32(R * C);
    trex::dequantize_fp8_block(codes.data(), R, C, scales, nullptr, out.data());
    float sf[6];
    for (int k = 0; k < 6; k++) sf[k] = std::ldexp(1.0f, scales[k] - 127);
    trex::dequantize_fp8_block(codes.data(), R, C, nullptr, sf, out32.data());
    for (int64_t r = 0; r < R; r++)
        for (int64_t c = 0; c < C; c++) {
            const double want = fp8_oracle(codes[r * C + c]) * std::pow(2.0, scales[(r / 128) * 3 + c / 128] - 127);
            ASSERT_EQ((double)out[r * C + c], want) << r << "," << c;
            ASSERT_EQ(out32[r * C + c], out[r * C + c]);
        }
    // F32 scales need not be powers of two (Base checkpoints)
    float odd[6] = {0.3f, 1, 1, 1, 1, 1};
    trex::dequantize_fp8_block(codes.data(), R, C, nullptr, odd, out32.data());
    EXPECT_EQ(out32[0], trex::fp8_e4m3_to_f32(codes[0]) * 0.3f);
}

TEST(Fp8Block, QuantiseChoosesTheReleaseScaleAndIsAFixedPoint) {
    const int64_t R = 200, C = 300;
    std::mt19937 gen(7);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> w(R * C);
    for (auto& v : w) v = nd(gen) * 0.02f;
    for (int64_t c = 0; c < 128; c++) w[5 * C + c] = 0.0f;  // keep the first block non-zero but add zeros
    for (int64_t r = 128; r < R; r++)
        for (int64_t c = 128; c < 256; c++) w[r * C + c] = 0.0f;  // an all-zero block
    std::vector<uint8_t> q(R * C), s(2 * 3);
    trex::quantize_fp8_block(w.data(), R, C, q.data(), s.data(), "w");
    // scale = 2^ceil(log2(amax/448)) per block
    for (int bi = 0; bi < 2; bi++)
        for (int bj = 0; bj < 3; bj++) {
            float amax = 0;
            for (int64_t r = bi * 128; r < std::min<int64_t>(R, bi * 128 + 128); r++)
                for (int64_t c = bj * 128; c < std::min<int64_t>(C, bj * 128 + 128); c++)
                    amax = std::max(amax, std::fabs(w[r * C + c]));
            const int e = amax > 0 ? (int)std::ceil(std::log2((double)amax / 448.0)) : -22;
            EXPECT_EQ(s[bi * 3 + bj], e + 127) << bi << "," << bj;
        }
    std::vector<float> d(R * C);
    trex::dequantize_fp8_block(q.data(), R, C, s.data(), nullptr, d.data());
    // error bound: half an FP8 ulp relative (normals), half the subnormal step (2^−10·scale) otherwise
    for (int64_t r = 0; r < R; r++)
        for (int64_t c = 0; c < C; c++) {
            const float sc = trex::ue8m0_to_f32(s[(r / 128) * 3 + c / 128]);
            const double err = std::fabs((double)d[r * C + c] - w[r * C + c]);
            ASSERT_LE(err, std::max(std::fabs((double)w[r * C + c]) / 16.0, std::ldexp((double)sc, -10)));
        }
    // quantise → dequantise → quantise → dequantise reproduces the dequantised values exactly
    std::vector<uint8_t> q2(R * C), s2(6);
    trex::quantize_fp8_block(d.data(), R, C, q2.data(), s2.data(), "w");
    std::vector<float> d2(R * C);
    trex::dequantize_fp8_block(q2.data(), R, C, s2.data(), nullptr, d2.data());
    EXPECT_EQ(std::memcmp(d.data(), d2.data(), d.size() * 4), 0);
    // and from the second quantisation on the bytes are stable too
    std::vector<uint8_t> q3(R * C), s3(6);
    trex::quantize_fp8_block(d2.data(), R, C, q3.data(), s3.data(), "w");
    EXPECT_EQ(q3, q2);
    EXPECT_EQ(s3, s2);
}

TEST(Fp4Block, QuantiseIsAFixedPoint) {
    const int64_t R = 16, C = 96;
    std::mt19937 gen(3);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> w(R * C);
    for (auto& v : w) v = nd(gen) * 0.01f;
    std::vector<uint8_t> p(R * C / 2), s(R * 3);
    trex::quantize_fp4_1x32(w.data(), R, C, p.data(), s.data(), "e");
    std::vector<float> d(R * C), d2(R * C);
    trex::dequantize_fp4_1x32(p.data(), R, C, s.data(), nullptr, d.data());
    std::vector<uint8_t> p2(R * C / 2), s2(R * 3);
    trex::quantize_fp4_1x32(d.data(), R, C, p2.data(), s2.data(), "e");
    trex::dequantize_fp4_1x32(p2.data(), R, C, s2.data(), nullptr, d2.data());
    EXPECT_EQ(std::memcmp(d.data(), d2.data(), d.size() * 4), 0);
    // relative error of each block's largest value is at most 1/6 after rounding into (3, 6]
    for (int64_t r = 0; r < R; r++)
        for (int64_t b = 0; b < 3; b++) {
            const float sc = trex::ue8m0_to_f32(s[r * 3 + b]);
            for (int64_t c = b * 32; c < b * 32 + 32; c++)
                ASSERT_LE(std::fabs(d[r * C + c] - w[r * C + c]), sc * 1.0f + 1e-12f);  // half the widest gap (2)
        }
}

TEST(Quantise, NonFiniteValuesAreOneLineErrors) {
    std::vector<float> w(128 * 2, 1.0f);
    w[77] = std::numeric_limits<float>::quiet_NaN();
    std::vector<uint8_t> q(w.size()), s(128 * 8);
    try {
        trex::quantize_fp8_block(w.data(), 2, 128, q.data(), s.data(), "layers.0.attn.wq_a.weight");
        FAIL() << "no error";
    } catch (const trex::error& e) {
        EXPECT_NE(std::string(e.what()).find("layers.0.attn.wq_a.weight"), std::string::npos) << e.what();
    }
    EXPECT_THROW(trex::quantize_fp4_1x32(w.data(), 2, 128, q.data(), s.data(), "x"), trex::error);
    EXPECT_THROW(trex::quantize_fp4_1x32(w.data(), 1, 3, q.data(), s.data(), "odd"), trex::error);
}

TEST(Bf16, ArraysRoundToNearestEven) {
    const float x[4] = {1.0f, 1.00390625f /* 1 + 2^−8: tie → 1 */, 1.01171875f /* 1 + 3·2^−8: tie → 1 + 2^−6 */, -2.5f};
    uint16_t b[4];
    trex::f32_to_bf16_array(x, 4, b);
    EXPECT_EQ(b[0], 0x3F80);
    EXPECT_EQ(b[1], 0x3F80);
    EXPECT_EQ(b[2], 0x3F82);
    EXPECT_EQ(b[3], 0xC020);
    float y[4];
    trex::bf16_to_f32_array(reinterpret_cast<const uint8_t*>(b), 4, y);
    EXPECT_EQ(y[0], 1.0f);
    EXPECT_EQ(y[2], 1.015625f);
    EXPECT_EQ(y[3], -2.5f);
}

}  // namespace
