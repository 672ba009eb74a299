// The MPI backend of the communicator (Open MPI through the C API). Every call's return code is checked
// (MPI_ERRORS_RETURN on every communicator); a failed call or a wait past the timeout aborts the whole job with a
// message naming the operation and the rank.
#include <mpi.h>

#include <climits>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "trex/base/error.hpp"
#include "trex/parallel/communicator.hpp"

namespace trex::parallel {

namespace {

MPI_Datatype mpi_type(dtype t) {
    switch (t) {
        case dtype::f32:
            return MPI_FLOAT;
        case dtype::f64:
            return MPI_DOUBLE;
        case dtype::i32:
            return MPI_INT32_T;
        case dtype::i64:
            return MPI_INT64_T;
        case dtype::u8:
            return MPI_UINT8_T;
    }
    return MPI_BYTE;
}

MPI_Op mpi_op(reduce_op op) {
    return op == reduce_op::sum ? MPI_SUM : MPI_MAX;
}

std::string mpi_error_string(int rc) {
    char buf[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, buf, &len) != MPI_SUCCESS) return fmt::format("MPI error {}", rc);
    return std::string(buf, len);
}

int g_thread_level = MPI_THREAD_SINGLE;

void finalize_at_exit() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

class mpi_communicator;

// A started non-blocking MPI operation; owns the int count arrays MPI reads until completion.
class mpi_handle : public comm_handle {
   public:
    mpi_handle(mpi_communicator& c, std::string what);
    bool test() override;
    MPI_Request req = MPI_REQUEST_NULL;
    std::vector<int> a, b, c, d;  // counts and displacements kept alive

   private:
    mpi_communicator& mc_;
    bool done_ = false;
};

class mpi_communicator : public communicator {
   public:
    explicit mpi_communicator(MPI_Comm comm) : comm_(comm) {
        check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
        check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
        check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
    }
    ~mpi_communicator() override {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (comm_ != MPI_COMM_WORLD && !finalized) MPI_Comm_free(&comm_);
    }

    int rank() const override { return rank_; }
    int size() const override { return size_; }
    std::string backend() const override { return "MPI"; }
    bool helper_thread_ok() const override { return g_thread_level >= MPI_THREAD_SERIALIZED; }

    void check(int rc, const std::string& what) {
        if (rc != MPI_SUCCESS) abort(fmt::format("rank {}: {} failed: {}", rank_, what, mpi_error_string(rc)));
    }
    int to_int(int64_t n, const char* what) {
        if (n < 0 || n > INT_MAX) abort(fmt::format("rank {}: {}: count {} outside MPI's int range", rank_, what, n));
        return (int)n;
    }
    std::vector<int> ints(const std::vector<int64_t>& v, const char* what) {
        if ((int)v.size() != size_)
            abort(fmt::format("rank {}: {}: {} counts for {} ranks", rank_, what, v.size(), size_));
        std::vector<int> r(v.size());
        for (size_t i = 0; i < v.size(); i++) r[i] = to_int(v[i], what);
        return r;
    }
    static std::vector<int> displs_of(const std::vector<int>& counts) {
        std::vector<int> d(counts.size(), 0);
        for (size_t i = 1; i < counts.size(); i++) d[i] = d[i - 1] + counts[i - 1];
        return d;
    }
    std::unique_ptr<mpi_handle> start(const char* what, int64_t bytes) {
        stats.ops++;
        stats.bytes += bytes;
        return std::make_unique<mpi_handle>(*this, fmt::format("{} on a communicator of {} ranks", what, size_));
    }

    handle all_reduce_async(void* buf, int64_t count, dtype t, reduce_op op) override {
        auto h = start("all_reduce", count * (int64_t)dtype_size(t));
        check(MPI_Iallreduce(MPI_IN_PLACE, buf, to_int(count, "all_reduce"), mpi_type(t), mpi_op(op), comm_, &h->req),
              "MPI_Iallreduce");
        return h;
    }
    handle reduce_scatter_async(const void* send, void* recv, const std::vector<int64_t>& counts, dtype t) override {
        auto h = start("reduce_scatter", 0);
        h->a = ints(counts, "reduce_scatter");
        int64_t total = 0;
        for (int x : h->a) total += x;
        stats.bytes += total * (int64_t)dtype_size(t);
        check(MPI_Ireduce_scatter(send, recv, h->a.data(), mpi_type(t), MPI_SUM, comm_, &h->req),
              "MPI_Ireduce_scatter");
        return h;
    }
    handle all_gather_async(const void* send, void* recv, const std::vector<int64_t>& counts, dtype t) override {
        auto h = start("all_gather", counts.at(rank_) * (int64_t)dtype_size(t));
        h->a = ints(counts, "all_gather");
        h->b = displs_of(h->a);
        check(MPI_Iallgatherv(send, h->a[rank_], mpi_type(t), recv, h->a.data(), h->b.data(), mpi_type(t), comm_,
                              &h->req),
              "MPI_Iallgatherv");
        return h;
    }
    handle gather_async(const void* send, void* recv, const std::vector<int64_t>& counts, dtype t, int root) override {
        auto h = start("gather", counts.at(rank_) * (int64_t)dtype_size(t));
        h->a = ints(counts, "gather");
        h->b = displs_of(h->a);
        check(MPI_Igatherv(send, h->a[rank_], mpi_type(t), recv, h->a.data(), h->b.data(), mpi_type(t), root, comm_,
                           &h->req),
              "MPI_Igatherv");
        return h;
    }
    handle all_to_all_v_async(const void* send, const std::vector<int64_t>& send_counts,
                              const std::vector<int64_t>& send_displs, void* recv,
                              const std::vector<int64_t>& recv_counts, const std::vector<int64_t>& recv_displs,
                              dtype t) override {
        int64_t sent = 0;
        for (int64_t x : send_counts) sent += x;
        auto h = start("all_to_all_v", sent * (int64_t)dtype_size(t));
        h->a = ints(send_counts, "all_to_all_v");
        h->b = ints(send_displs, "all_to_all_v");
        h->c = ints(recv_counts, "all_to_all_v");
        h->d = ints(recv_displs, "all_to_all_v");
        check(MPI_Ialltoallv(send, h->a.data(), h->b.data(), mpi_type(t), recv, h->c.data(), h->d.data(), mpi_type(t),
                             comm_, &h->req),
              "MPI_Ialltoallv");
        return h;
    }
    handle send_async(const void* buf, int64_t count, dtype t, int dest, int tag) override {
        auto h = start("send", count * (int64_t)dtype_size(t));
        check(MPI_Isend(buf, to_int(count, "send"), mpi_type(t), dest, tag, comm_, &h->req), "MPI_Isend");
        return h;
    }
    handle recv_async(void* buf, int64_t count, dtype t, int source, int tag) override {
        auto h = start("recv", 0);
        check(MPI_Irecv(buf, to_int(count, "recv"), mpi_type(t), source, tag, comm_, &h->req), "MPI_Irecv");
        return h;
    }
    handle barrier_async() override {
        auto h = start("barrier", 0);
        check(MPI_Ibarrier(comm_, &h->req), "MPI_Ibarrier");
        return h;
    }
    std::unique_ptr<communicator> split(int color, int key) override {
        MPI_Comm sub = MPI_COMM_NULL;
        check(MPI_Comm_split(comm_, color, key, &sub), "MPI_Comm_split");
        auto c = std::make_unique<mpi_communicator>(sub);
        c->timeout_seconds = timeout_seconds;
        return c;
    }
    [[noreturn]] void abort(const std::string& why) override {
        std::fprintf(stderr, "trex: error: %s\n", why.c_str());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
        std::_Exit(1);
    }

   private:
    MPI_Comm comm_;
    int rank_ = 0, size_ = 1;
};

mpi_handle::mpi_handle(mpi_communicator& c, std::string what) : comm_handle(c, std::move(what)), mc_(c) {}

bool mpi_handle::test() {
    if (done_) return true;
    int flag = 0;
    mc_.check(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), "MPI_Test of " + what_);
    done_ = flag != 0;
    return done_;
}

}  // namespace

std::unique_ptr<communicator> make_world_communicator() {
    if (!launched_by_mpi()) return make_single_communicator();
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
        int provided = 0;
        // SERIALIZED: a helper thread may progress a transfer while the main thread computes (never concurrently)
        if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
            throw error("MPI_Init_thread failed (is this process started by mpirun?)");
        g_thread_level = provided;
        std::atexit(finalize_at_exit);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return std::make_unique<mpi_communicator>(MPI_COMM_WORLD);
}

}  // namespace trex::parallel
