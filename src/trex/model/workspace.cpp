#include "trex/model/workspace.hpp"

#include <algorithm>
#include <new>

#include "trex/base/error.hpp"

namespace trex {

namespace {

constexpr size_t kAlignFloats = 16;               // 64 bytes: a cache line, an AVX-512 vector
constexpr size_t kMinOverflow = size_t(1) << 18;  // an overflow block holds at least 1 MiB

size_t round_up(size_t n) {
    return (n + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
}

}  // namespace

workspace::scope::scope(workspace& ws)
    : ws_(ws), depth_(++ws.depth_), block_(ws.current_), block_used_(0), in_use_(ws.in_use_) {
    if (!ws.blocks_.empty()) block_used_ = ws.blocks_[ws.current_].used;
}

workspace::scope::~scope() {
    ws_.close(*this);
}

float* workspace::scope::floats(size_t n) {
    TREX_ASSERT(depth_ == ws_.depth_);  // only the innermost open scope hands out buffers
    return ws_.take(n);
}

workspace::block workspace::make_block(size_t n) const {
    block b;
    b.data =
        std::unique_ptr<float, void (*)(void*)>(static_cast<float*>(mem_->allocate(n * sizeof(float))), mem_->release);
    b.size = n;
    return b;
}

float* workspace::take(size_t n) {
    n = round_up(std::max<size_t>(n, 1));
    auto fits = [&](const block& b) { return b.used + n <= b.size; };
    // a later block, emptied when its scope closed
    while (current_ + 1 < blocks_.size() && !fits(blocks_[current_])) current_++;
    if (current_ >= blocks_.size() || !fits(blocks_[current_])) {
        blocks_.push_back(make_block(std::max(n, kMinOverflow)));
        current_ = blocks_.size() - 1;
    }
    block& b = blocks_[current_];
    float* p = b.data.get() + b.used;
    b.used += n;
    in_use_ += n;
    high_water_ = std::max(high_water_, in_use_);
    return p;
}

void workspace::close(const scope& s) {
    depth_--;  // s is the innermost scope: scopes are RAII objects, destroyed in reverse order
    for (size_t i = s.block_ + 1; i < blocks_.size(); i++) blocks_[i].used = 0;
    current_ = s.block_;
    if (current_ < blocks_.size()) blocks_[current_].used = s.block_used_;
    in_use_ = s.in_use_;
    if (depth_ == 0 && blocks_.size() > 1) {  // one block of the high-water size for the next step
        blocks_.clear();
        blocks_.push_back(make_block(high_water_));
        current_ = 0;
    }
}

size_t workspace::capacity_bytes() const {
    size_t n = 0;
    for (const block& b : blocks_) n += b.size;
    return n * sizeof(float);
}

size_t workspace::high_water_bytes() const {
    return high_water_ * sizeof(float);
}

}  // namespace trex
