// The inference cache's size per sequence (model/cache_size.hpp), by hand on a small config, and the shape of the
// V4 releases' numbers that `trex info` prints.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "trex/model/cache_size.hpp"
#include "trex/model/config.hpp"

namespace {

// 3 layers: SWA, CSA (m = 4), HCA (m = 128); window 8, c = 16, c_I = 8, d = 32, 4 streams, MTP depth 1.
trex::model_config small() {
    trex::model_config c = trex::load_config(trex::test::source_path("configs/v4-tiny.json"));
    c.num_hidden_layers = 3;
    c.compress_ratios = {0, 4, 128, 0};
    c.sliding_window = 8;
    c.head_dim = 16;
    c.index_head_dim = 8;
    c.hidden_size = 32;
    c.hc_mult = 4;
    c.num_nextn_predict_layers = 1;
    return c;
}

}  // namespace

TEST(InferenceCacheSize, ByHandOnThreeLayerKinds) {
    const trex::cache_size s = trex::inference_cache_size(small(), 300);
    EXPECT_EQ(s.window, 3 * 8 * 16);            // every layer's ring holds the last 8 tokens
    EXPECT_EQ(s.compressed, 75 * 16 + 2 * 16);  // CSA: floor(300/4) entries; HCA: floor(300/128)
    EXPECT_EQ(s.indexer, 75 * 8);               // CSA's indexer keys at c_I
    EXPECT_EQ(s.pending, 7 * 4 * 16             // CSA: 3 pending tokens and the previous block's 4, at 4c
                             + 7 * 4 * 8        // its indexer's compressor at c_I
                             + 127 * 2 * 16);   // HCA: 127 pending tokens at 2c
    EXPECT_EQ(s.mtp, 8 * 16 + 4 * 32);          // MTP's window and the 4-stream state it drafts from
    EXPECT_EQ(s.uncompressed, 4 * 300 * 16);    // 3 layers + MTP, every token
    EXPECT_EQ(s.total(), s.window + s.compressed + s.indexer + s.pending + s.mtp);
    // shorter than the window: the ring holds what there is, nothing is compressed yet
    const trex::cache_size t = trex::inference_cache_size(small(), 3);
    EXPECT_EQ(t.window, 3 * 3 * 16);
    EXPECT_EQ(t.compressed, 0);
    EXPECT_EQ(t.indexer, 0);
}

// V4-Flash: past the window the cache grows by (c + c_I)/4 per CSA layer and c/128 per HCA layer per token, so at 1M
// tokens it is that over c per layer (L + MTP) of caching every token at every layer.
TEST(InferenceCacheSize, V4FlashGrowsByTheCompressedEntriesOnly) {
    const trex::model_config cfg = trex::load_config(trex::test::source_path("configs/v4-flash.json"));
    const trex::cache_size a = trex::inference_cache_size(cfg, 1 << 17), b = trex::inference_cache_size(cfg, 1 << 20);
    int csa = 0, hca = 0;
    for (int l = 0; l < cfg.n_layers(); l++) {
        if (cfg.ratio(l) == 4) csa++;
        if (cfg.ratio(l) > 4) hca++;
    }
    EXPECT_EQ(csa, 21);
    EXPECT_EQ(hca, 20);
    const double per_token = csa * (cfg.head_dim + cfg.index_head_dim) / 4.0 + hca * cfg.head_dim / 128.0;
    EXPECT_DOUBLE_EQ(b.total() - a.total(), per_token * ((1 << 20) - (1 << 17)));
    const double ratio = per_token / ((cfg.n_layers() + 1) * (double)cfg.head_dim);  // 3440 / 22528
    EXPECT_NEAR(b.total() / b.uncompressed, ratio, 0.001 * ratio + 1e-3);
}
