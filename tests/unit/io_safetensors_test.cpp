// safetensors reader/writer: round trip, a file laid out by hand the way Python's safetensors writes it, and bad
// files (truncated, garbage, oversized header, bad entries) that must give one-line errors and never crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "trex/base/error.hpp"
#include "trex/io/safetensors.hpp"

namespace fs = std::filesystem;

namespace {

class SafetensorsTest : public ::testing::Test {
   protected:
    void SetUp() override {
        dir_ = (fs::temp_directory_path() / ("trex_st_test_" + std::to_string(getpid()) + "_" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                   .string();
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string& name) const { return dir_ + "/" + name; }
    std::string dir_;
};

std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
    fs::remove(path);  // a fresh file: rewriting a truncated one makes ext4 flush it on close (slow)
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), (std::streamsize)bytes.size());
}

std::string le64(uint64_t n) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; i++) s[i] = (char)((n >> (8 * i)) & 0xff);
    return s;
}

// A file as Python's safetensors lays it out: u64 LE header length, JSON header padded with spaces to a multiple of
// 8, then the data.
std::string make_file(std::string header, const std::string& data) {
    header.append((8 - header.size() % 8) % 8, ' ');
    return le64(header.size()) + header + data;
}

// The error message of opening `path` ("" if it opens).
std::string open_error(const std::string& path) {
    try {
        trex::safetensors_file f(path);
    } catch (const trex::error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_F(SafetensorsTest, RoundTrip) {
    const std::vector<float> f32 = {1.0f, -2.5f, 3.25f, 0.0f, 1e-30f, -7.0f};
    const std::vector<double> f64 = {3.141592653589793, -1e300};
    const std::vector<int32_t> i32 = {1, -2, 2147483647, -2147483647 - 1};
    const std::vector<int64_t> i64 = {1, -2, (int64_t)1 << 40};
    const std::vector<float> bf = {1.0f, -0.5f, 3.0f, 1.00390625f /* 1 + 2^-8: ties to even -> 1.0 */};
    const uint8_t fp8[4] = {0x00, 0x38, 0xb8, 0x7e};
    trex::safetensors_writer w;
    w.add_f32("a.weight", {2, 3}, f32.data());
    w.add_f64("losses", {2}, f64.data());
    w.add_i32("ids", {4}, i32.data());
    w.add_i64("tid2eid", {3, 1}, i64.data());
    w.add_bf16("norm", {4}, bf.data());
    w.add_raw("q.weight", trex::st_dtype::f8_e4m3, {2, 2}, fp8, 4);
    w.add_raw("q.scale", trex::st_dtype::f8_e8m0, {1, 1}, fp8 + 1, 1);
    w.add_f32("empty", {0, 5}, nullptr);
    w.add_f32("scalar", {}, f32.data());
    w.set_metadata("config", "{\"a\": 1}");
    w.set_metadata("mode", "dense");
    w.write(path("x.safetensors"));
    EXPECT_FALSE(fs::exists(path("x.safetensors.tmp")));

    // the data section starts 8-byte aligned
    const std::string raw = read_bytes(path("x.safetensors"));
    uint64_t n;
    std::memcpy(&n, raw.data(), 8);
    EXPECT_EQ(n % 8, 0u);

    trex::safetensors_file f(path("x.safetensors"));
    EXPECT_EQ(f.names(), (std::vector<std::string>{"a.weight", "losses", "ids", "tid2eid", "norm", "q.weight",
                                                   "q.scale", "empty", "scalar"}));
    EXPECT_EQ(f.metadata().at("config"), "{\"a\": 1}");
    EXPECT_EQ(f.metadata().at("mode"), "dense");
    EXPECT_EQ(f.tensor("a.weight").shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(f.tensor("a.weight").dtype, trex::st_dtype::f32);
    EXPECT_EQ(f.to_f32("a.weight"), f32);
    EXPECT_EQ(f.to_f64("losses"), f64);
    EXPECT_EQ(f.to_f32("losses")[0], (float)f64[0]);
    EXPECT_EQ(f.to_i32("ids"), i32);
    EXPECT_EQ(f.to_i64("ids"), std::vector<int64_t>(i32.begin(), i32.end()));
    EXPECT_EQ(f.to_i64("tid2eid"), i64);
    EXPECT_EQ(f.to_f32("norm"), (std::vector<float>{1.0f, -0.5f, 3.0f, 1.0f}));
    EXPECT_EQ(f.tensor("q.weight").dtype, trex::st_dtype::f8_e4m3);
    auto qb = f.bytes("q.weight");
    ASSERT_EQ(qb.size(), 4u);
    EXPECT_EQ(std::memcmp(qb.data(), fp8, 4), 0);
    EXPECT_EQ(f.tensor("q.scale").dtype, trex::st_dtype::f8_e8m0);
    EXPECT_EQ(f.tensor("empty").numel(), 0);
    EXPECT_TRUE(f.to_f32("empty").empty());
    EXPECT_EQ(f.tensor("scalar").numel(), 1);
    EXPECT_EQ(f.to_f32("scalar"), std::vector<float>{1.0f});
    EXPECT_TRUE(f.has("ids"));
    EXPECT_FALSE(f.has("nope"));

    // overwrite an existing file; move the reader
    trex::safetensors_writer w2;
    w2.add_f32("only", {1}, f32.data());
    w2.write(path("x.safetensors"));
    trex::safetensors_file g(path("x.safetensors"));
    trex::safetensors_file moved(std::move(g));
    EXPECT_EQ(moved.names(), std::vector<std::string>{"only"});
    EXPECT_TRUE(moved.metadata().empty());
    EXPECT_EQ(f.to_f32("a.weight"), f32);  // the first mapping stays valid after the rename
}

// Bytes written by hand following the format rules (as Python's safetensors would write them: sorted entries,
// "__metadata__" {"format": "pt"}, space padding), with values encoded by hand.
TEST_F(SafetensorsTest, StreamingModeWritesTheSameFile) {
    std::vector<float> a(1000);
    for (size_t i = 0; i < a.size(); i++) a[i] = 0.25f * (float)i - 3.0f;
    const int64_t t[3] = {7, 8, 9};
    trex::safetensors_writer buffered, streamed;
    buffered.add_f32("a", {10, 100}, a.data());
    buffered.add_i64("t", {3}, t);
    buffered.add_f32("empty", {0}, nullptr);
    buffered.set_metadata("format", "pt");
    std::vector<std::string> order;
    streamed.add_deferred("a", trex::st_dtype::f32, {10, 100}, [&](uint8_t* out) {
        order.push_back("a");
        std::memcpy(out, a.data(), a.size() * 4);
    });
    streamed.add_raw("t", trex::st_dtype::i64, {3}, t, sizeof t);
    streamed.add_deferred("empty", trex::st_dtype::f32, {0}, [&](uint8_t*) { order.push_back("empty"); });
    streamed.set_metadata("format", "pt");
    EXPECT_EQ(streamed.data_bytes(), 4000u + 24u);
    EXPECT_TRUE(order.empty());  // nothing is produced before write()
    buffered.write(path("b.safetensors"));
    streamed.write(path("s.safetensors"));
    EXPECT_EQ(order, (std::vector<std::string>{"a", "empty"}));
    EXPECT_EQ(read_bytes(path("b.safetensors")), read_bytes(path("s.safetensors")));
    // a throwing fill leaves no file behind
    trex::safetensors_writer bad;
    bad.add_deferred("x", trex::st_dtype::u8, {4}, [](uint8_t*) { trex::throw_error("tensor 'x': cannot encode"); });
    EXPECT_THROW(bad.write(path("bad.safetensors")), trex::error);
    EXPECT_FALSE(fs::exists(path("bad.safetensors")));
    EXPECT_FALSE(fs::exists(path("bad.safetensors.tmp")));
    // drop_pages keeps the file readable
    trex::safetensors_file f(path("s.safetensors"));
    f.drop_pages();
    EXPECT_EQ(f.to_f32("a"), a);
}

TEST_F(SafetensorsTest, ReadsHandWrittenPythonFile) {
    std::string data;
    data += std::string("\x00\x00\x80\x3f", 4) + std::string("\x00\x00\x20\xc0", 4);               // F32 1.0, -2.5
    data += std::string("\x80\x3f", 2) + std::string("\x00\xbf", 2);                               // BF16 1.0, -0.5
    data += std::string("\xfd\xff\xff\xff\xff\xff\xff\xff", 8);                                    // I64 -3
    data += std::string("\x00\x3c", 2) + std::string("\xff\x7b", 2) + std::string("\x01\x00", 2);  // F16
    data += std::string("\x07\x00\x00\x00", 4);                                                    // I32 7
    data += std::string("\x00\x00\x00\x00\x00\x00\xf0\x3f", 8);                                    // F64 1.0
    const std::string header =
        "{\"__metadata__\":{\"format\":\"pt\"},"
        "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
        "\"b\":{\"dtype\":\"BF16\",\"shape\":[1,2],\"data_offsets\":[8,12]},"
        "\"c\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[12,20]},"
        "\"h\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[20,26]},"
        "\"i\":{\"dtype\":\"I32\",\"shape\":[],\"data_offsets\":[26,30]},"
        "\"z\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[30,38]}}";
    write_bytes(path("py.safetensors"), make_file(header, data));
    trex::safetensors_file f(path("py.safetensors"));
    EXPECT_EQ(f.metadata().at("format"), "pt");
    EXPECT_EQ(f.to_f32("a"), (std::vector<float>{1.0f, -2.5f}));
    EXPECT_EQ(f.to_f32("b"), (std::vector<float>{1.0f, -0.5f}));
    EXPECT_EQ(f.tensor("b").shape, (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(f.to_i64("c"), std::vector<int64_t>{-3});
    EXPECT_EQ(f.to_i32("c"), std::vector<int32_t>{-3});
    auto h = f.to_f32("h");
    EXPECT_EQ(h[0], 1.0f);
    EXPECT_EQ(h[1], 65504.0f);               // largest F16
    EXPECT_EQ(h[2], std::ldexp(1.0f, -24));  // smallest F16 subnormal
    EXPECT_EQ(f.to_i32("i"), std::vector<int32_t>{7});
    EXPECT_EQ(f.to_f64("z"), std::vector<double>{1.0});
    EXPECT_EQ(f.file_size(), (uint64_t)read_bytes(path("py.safetensors")).size());
}

TEST(SafetensorsScalars, Conversions) {
    EXPECT_EQ(trex::f16_to_f32(0x0000), 0.0f);
    EXPECT_TRUE(std::signbit(trex::f16_to_f32(0x8000)));
    EXPECT_EQ(trex::f16_to_f32(0xc000), -2.0f);
    EXPECT_EQ(trex::f16_to_f32(0x3555), 0.333251953125f);
    EXPECT_EQ(trex::f16_to_f32(0x0400), std::ldexp(1.0f, -14));     // smallest normal
    EXPECT_EQ(trex::f16_to_f32(0x03ff), std::ldexp(1023.0f, -24));  // largest subnormal
    EXPECT_TRUE(std::isinf(trex::f16_to_f32(0x7c00)));
    EXPECT_TRUE(std::isnan(trex::f16_to_f32(0x7e00)));
    EXPECT_EQ(trex::f32_to_bf16(1.0f), 0x3f80);
    EXPECT_EQ(trex::f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);                          // tie -> even
    EXPECT_EQ(trex::f32_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3f81);  // above the tie
    EXPECT_EQ(trex::f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);                      // tie -> even (up)
    EXPECT_TRUE(std::isnan(trex::bf16_to_f32(trex::f32_to_bf16(std::nanf("")))));
    EXPECT_TRUE(std::isinf(trex::bf16_to_f32(trex::f32_to_bf16(std::numeric_limits<float>::infinity()))));
    EXPECT_EQ(trex::bf16_to_f32(0xc0a0), -5.0f);
    std::string name;
    trex::st_dtype t;
    for (const char* n :
         {"F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL", "F8_E4M3", "F8_E5M2", "F8_E8M0"}) {
        ASSERT_TRUE(trex::st_dtype_from_name(n, &t)) << n;
        EXPECT_STREQ(trex::st_dtype_name(t), n);
    }
    EXPECT_FALSE(trex::st_dtype_from_name("F7", &t));
    EXPECT_EQ(trex::st_dtype_size(trex::st_dtype::bf16), 2u);
    EXPECT_EQ(trex::st_dtype_size(trex::st_dtype::i64), 8u);
}

TEST_F(SafetensorsTest, BadFilesGiveOneLineErrors) {
    const std::string good_data(16, '\0');
    const std::string entry_a = "\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]}";
    struct bad_case {
        const char* what;
        std::string bytes;
        const char* expect;  // substring of the message
    };
    const std::vector<bad_case> cases = {
        {"empty", "", "truncated file (0 bytes"},
        {"short", "abc", "truncated file (3 bytes"},
        {"header beyond file", le64(100) + "{}", "header length 100 exceeds the file size (10 bytes"},
        {"huge header length", le64(~0ull) + "{}", "header length 18446744073709551615 exceeds the file size"},
        {"garbage", std::string("\x10\x00\x00\x00\x00\x00\x00\x00", 8) + "this is no json!", "bad header JSON"},
        {"binary garbage", le64(8) + std::string("\xff\xfe\x00\x01\x80\x7f{[", 8), "bad header JSON"},
        {"not an object", make_file("[1,2,3]", ""), "expected a JSON object"},
        {"number overflow", make_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[1e999],\"data_offsets\":[0,16]}}", good_data),
         "bad header JSON: number overflow parsing '1e999'"},
        {"unknown dtype", make_file("{\"a\":{\"dtype\":\"F7\",\"shape\":[4],\"data_offsets\":[0,16]}}", good_data),
         "tensor 'a': unknown dtype 'F7'"},
        {"size mismatch", make_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,12]}}", good_data),
         "tensor 'a': size mismatch: shape [2,2] of F32 is 16 bytes but data_offsets span 12"},
        {"beyond data", make_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[16],\"data_offsets\":[0,64]}}", good_data),
         "tensor 'a': data_offsets [0,64] exceed the data section (16 bytes"},
        {"begin > end", make_file("{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[8,4]}}", good_data),
         "tensor 'a': data_offsets [8,4] has begin > end"},
        {"overlap",
         make_file("{" + entry_a + ",\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", good_data),
         "tensors 'a' and 'b' overlap"},
        {"negative dim", make_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[-4],\"data_offsets\":[0,16]}}", good_data),
         "tensor 'a': bad shape"},
        {"float dim", make_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[4.0],\"data_offsets\":[0,16]}}", good_data),
         "tensor 'a': bad shape"},
        {"huge dims",
         make_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4611686018427387904,0],"
                   "\"data_offsets\":[0,0]}}",
                   good_data),
         "tensor 'a': shape [4611686018427387904,4611686018427387904,0] is too large"},
        {"no dtype", make_file("{\"a\":{\"shape\":[4],\"data_offsets\":[0,16]}}", good_data),
         "tensor 'a': missing or non-string 'dtype'"},
        {"bad offsets", make_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0]}}", good_data),
         "tensor 'a': 'data_offsets' must be [begin, end]"},
        {"entry not object", make_file("{\"a\":5}", good_data), "tensor 'a': entry must be an object"},
        {"metadata value", make_file("{\"__metadata__\":{\"k\":1}," + entry_a + "}", good_data),
         "__metadata__ 'k' must be a string"},
        {"metadata type", make_file("{\"__metadata__\":[]," + entry_a + "}", good_data), "__metadata__ must be"},
        {"truncated data", make_file("{" + entry_a + "}", good_data.substr(0, 10)),
         "tensor 'a': data_offsets [0,16] exceed the data section (10 bytes"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.what);
        write_bytes(path("bad.safetensors"), c.bytes);
        const std::string msg = open_error(path("bad.safetensors"));
        ASSERT_FALSE(msg.empty()) << "opened without error";
        EXPECT_EQ(msg.rfind(path("bad.safetensors") + ": ", 0), 0u) << msg;
        EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
    // header over the 100 MB limit (sparse file: nothing is really allocated)
    {
        const uint64_t n = 100'000'008;
        std::ofstream out(path("big.safetensors"), std::ios::binary);
        out << le64(n);
        out.close();
        fs::resize_file(path("big.safetensors"), 8 + n);
        EXPECT_NE(open_error(path("big.safetensors")).find("exceeds the 100000000-byte limit"), std::string::npos);
    }
    EXPECT_NE(open_error(path("missing.safetensors")).find("cannot open"), std::string::npos);
    EXPECT_NE(open_error(dir_).find("not a regular file"), std::string::npos);
}

TEST_F(SafetensorsTest, AccessorErrorsNameFileAndTensor) {
    const int64_t big[2] = {5, (int64_t)1 << 40};
    trex::safetensors_writer w;
    w.add_i64("big", {2}, big);
    const float x[1] = {1.0f};
    w.add_f32("x", {1}, x);
    w.write(path("a.safetensors"));
    trex::safetensors_file f(path("a.safetensors"));
    auto err = [&](auto fn) -> std::string {
        try {
            fn();
        } catch (const trex::error& e) {
            return e.what();
        }
        return "";
    };
    const std::string p = path("a.safetensors");
    EXPECT_EQ(err([&] { f.tensor("nope"); }), p + ": no tensor 'nope'");
    EXPECT_EQ(err([&] { f.to_f32("big"); }), p + ": tensor 'big': cannot convert I64 to float32");
    EXPECT_EQ(err([&] { f.to_i64("x"); }), p + ": tensor 'x': cannot convert F32 to int64");
    EXPECT_EQ(err([&] { f.to_i32("big"); }), p + ": tensor 'big': element 1 = 1099511627776 does not fit in int32");
}

TEST_F(SafetensorsTest, WriterErrorsLeaveNoFile) {
    const float x[4] = {1, 2, 3, 4};
    trex::safetensors_writer w;
    w.add_f32("x", {4}, x);
    EXPECT_THROW(w.add_f32("x", {4}, x), trex::error);                           // duplicate
    EXPECT_THROW(w.add_f32("__metadata__", {4}, x), trex::error);                // reserved
    EXPECT_THROW(w.add_f32("", {4}, x), trex::error);                            // empty name
    EXPECT_THROW(w.add_raw("r", trex::st_dtype::f32, {4}, x, 12), trex::error);  // size mismatch
    EXPECT_THROW(w.add_raw("n", trex::st_dtype::f32, {-1}, x, 0), trex::error);  // negative dim
    EXPECT_EQ(w.size(), 1u);
    // a directory that does not exist: error naming the path, nothing written
    const std::string target = path("no/such/dir/out.safetensors");
    try {
        w.write(target);
        FAIL() << "wrote into a missing directory";
    } catch (const trex::error& e) {
        EXPECT_NE(std::string(e.what()).find(target + ": cannot create"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(target));
    EXPECT_FALSE(fs::exists(target + ".tmp"));
    // the target is a directory: rename fails, the temp file is removed, the directory stays
    fs::create_directories(path("isdir"));
    fs::create_directories(path("isdir/inner"));
    EXPECT_THROW(w.write(path("isdir")), trex::error);
    EXPECT_FALSE(fs::exists(path("isdir.tmp")));
    EXPECT_TRUE(fs::is_directory(path("isdir")));
}

// Every truncation of a valid file and random corruption of its header give trex::error (or a valid file), never
// a crash.
TEST_F(SafetensorsTest, TruncationAndCorruptionNeverCrash) {
    const float x[6] = {1, 2, 3, 4, 5, 6};
    const int64_t ids[3] = {7, 8, 9};
    trex::safetensors_writer w;
    w.add_f32("layers.0.w", {2, 3}, x);
    w.add_i64("ids", {3}, ids);
    w.add_bf16("b", {2}, x);
    w.set_metadata("mode", "topk");
    w.write(path("good.safetensors"));
    const std::string good = read_bytes(path("good.safetensors"));
    for (size_t len = 0; len < good.size(); len++) {
        write_bytes(path("t.safetensors"), good.substr(0, len));
        EXPECT_THROW(trex::safetensors_file f(path("t.safetensors")), trex::error) << "length " << len;
    }
    uint64_t n;
    std::memcpy(&n, good.data(), 8);
    std::mt19937 rng(12345);
    int opened = 0, rejected = 0;
    for (int it = 0; it < 3000; it++) {
        std::string b = good;
        const int flips = 1 + (int)(rng() % 4);
        for (int k = 0; k < flips; k++) {
            const size_t pos = rng() % (8 + n);  // the length field and the header
            b[pos] = (char)(rng() % 256);
        }
        write_bytes(path("c.safetensors"), b);
        try {
            trex::safetensors_file f(path("c.safetensors"));
            for (const auto& t : f.tensors()) (void)f.bytes(t.name);
            opened++;
        } catch (const trex::error& e) {
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
            rejected++;
        }
    }
    EXPECT_GT(rejected, 0);
    EXPECT_EQ(opened + rejected, 3000);
}
