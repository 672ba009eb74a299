#include "trex/parallel/communicator.hpp"

#include <cstdlib>
#include <cstring>
#include <deque>
#include <thread>

#include <fmt/format.h>

#include "trex/base/error.hpp"
#include "trex/base/timer.hpp"

namespace trex::parallel {

size_t dtype_size(dtype t) {
    switch (t) {
        case dtype::f32:
            return 4;
        case dtype::f64:
            return 8;
        case dtype::i32:
            return 4;
        case dtype::i64:
            return 8;
        case dtype::u8:
            return 1;
    }
    return 1;
}

void comm_handle::wait() {
    wait_while_progressing(nullptr);
}

void comm_handle::wait_while_progressing(const std::function<uint64_t()>& progress) {
    const double t0 = now_seconds();
    double deadline = t0 + comm_.timeout_seconds, next_look = t0 + 1.0;
    uint64_t last = progress ? progress() : 0;
    int64_t polls = 0;
    while (!test()) {
        polls++;
        if (polls > 200) {
            // oversubscribed ranks share cores: give the peer the CPU instead of spinning
            if (polls % 64 == 0)
                std::this_thread::sleep_for(std::chrono::microseconds(50));
            else
                std::this_thread::yield();
        }
        if ((polls & 255) != 0) continue;
        const double now = now_seconds();
        if (progress && now >= next_look) {
            next_look = now + 1.0;
            const uint64_t p = progress();
            if (p != last) deadline = now + comm_.timeout_seconds;
            last = p;
        }
        if (now > deadline)
            comm_.abort(fmt::format("rank {}: {} did not complete within {:.0f} s{} (a peer died or hangs; "
                                    "timeout dist.timeout)",
                                    comm_.rank(), what_, comm_.timeout_seconds,
                                    progress ? " of the peer's last progress" : ""));
    }
    comm_.stats.wait_seconds += now_seconds() - t0;
}

namespace {

// A handle that is complete when created (the single-process operations are copies).
class done_handle : public comm_handle {
   public:
    done_handle(communicator& c, const char* what) : comm_handle(c, what) {}
    bool test() override { return true; }
};

class single_communicator : public communicator {
   public:
    int rank() const override { return 0; }
    int size() const override { return 1; }
    std::string backend() const override { return "single-process"; }

    handle all_reduce_async(void*, int64_t, dtype, reduce_op) override { return done(); }
    handle reduce_scatter_async(const void* send, void* recv, const std::vector<int64_t>& counts, dtype t) override {
        copy(recv, send, counts.at(0), t);
        return done();
    }
    handle all_gather_async(const void* send, void* recv, const std::vector<int64_t>& counts, dtype t) override {
        copy(recv, send, counts.at(0), t);
        return done();
    }
    handle gather_async(const void* send, void* recv, const std::vector<int64_t>& counts, dtype t, int root) override {
        TREX_CHECK(root == 0, "gather: root {} outside a world of 1 rank", root);
        copy(recv, send, counts.at(0), t);
        return done();
    }
    handle all_to_all_v_async(const void* send, const std::vector<int64_t>& send_counts,
                              const std::vector<int64_t>& send_displs, void* recv,
                              const std::vector<int64_t>& recv_counts, const std::vector<int64_t>& recv_displs,
                              dtype t) override {
        TREX_CHECK(send_counts.at(0) == recv_counts.at(0), "all_to_all_v: send count {} != receive count {}",
                   send_counts[0], recv_counts[0]);
        const size_t es = dtype_size(t);
        copy((char*)recv + recv_displs.at(0) * es, (const char*)send + send_displs.at(0) * es, send_counts[0], t);
        return done();
    }
    handle send_async(const void* buf, int64_t count, dtype t, int dest, int tag) override {
        TREX_CHECK(dest == 0, "send: destination rank {} outside a world of 1 rank", dest);
        mailbox_.push_back({tag, std::vector<char>((const char*)buf, (const char*)buf + count * dtype_size(t))});
        return done();
    }
    handle recv_async(void* buf, int64_t count, dtype t, int source, int tag) override;
    handle barrier_async() override { return done(); }
    std::unique_ptr<communicator> split(int, int) override { return std::make_unique<single_communicator>(); }
    [[noreturn]] void abort(const std::string& why) override {
        std::fprintf(stderr, "trex: error: %s\n", why.c_str());
        std::fflush(stderr);
        std::_Exit(1);
    }

    struct message {
        int tag;
        std::vector<char> bytes;
    };
    std::deque<message> mailbox_;

   private:
    handle done() {
        stats.ops++;
        return std::make_unique<done_handle>(*this, "local operation");
    }
    void copy(void* dst, const void* src, int64_t n, dtype t) {
        if (dst != src && n > 0) std::memmove(dst, src, n * dtype_size(t));
    }
};

// A receive from self completes once a send with the same tag is in the mailbox.
class self_recv_handle : public comm_handle {
   public:
    self_recv_handle(single_communicator& c, void* buf, size_t bytes, int tag)
        : comm_handle(c, fmt::format("recv (tag {}) from rank 0", tag)), c_(c), buf_(buf), bytes_(bytes), tag_(tag) {}
    bool test() override {
        if (done_) return true;
        for (auto it = c_.mailbox_.begin(); it != c_.mailbox_.end(); ++it) {
            if (it->tag != tag_) continue;
            TREX_CHECK(it->bytes.size() == bytes_, "recv: message of {} bytes, expected {}", it->bytes.size(), bytes_);
            std::memcpy(buf_, it->bytes.data(), bytes_);
            c_.mailbox_.erase(it);
            done_ = true;
            return true;
        }
        return false;
    }

   private:
    single_communicator& c_;
    void* buf_;
    size_t bytes_;
    int tag_;
    bool done_ = false;
};

handle single_communicator::recv_async(void* buf, int64_t count, dtype t, int source, int tag) {
    TREX_CHECK(source == 0, "recv: source rank {} outside a world of 1 rank", source);
    stats.ops++;
    return std::make_unique<self_recv_handle>(*this, buf, (size_t)count * dtype_size(t), tag);
}

}  // namespace

std::unique_ptr<communicator> make_single_communicator() {
    return std::make_unique<single_communicator>();
}

bool launched_by_mpi() {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
        if (std::getenv(v)) return true;
    return false;
}

}  // namespace trex::parallel
