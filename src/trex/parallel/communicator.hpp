// Collective and point-to-point communication between the ranks of a run (docs/distributed.md).
//
// `communicator` is the interface the trainer, ZeRO-1 and expert parallelism use; MPI implements it now
// (mpi_communicator.cpp), and an NCCL or HCCL backend can implement the same calls. Every operation has an
// asynchronous form returning a handle; the blocking form is `start(...)->wait()`. A wait polls the operation until
// a deadline (communicator::timeout_seconds): a peer that died or hangs makes every other rank report which
// operation timed out and exit non-zero (the MPI backend calls MPI_Abort), never wait forever.
//
// A single-process communicator (world size 1) runs everything without mpirun.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace trex::parallel {

enum class dtype { f32, f64, i32, i64, u8 };
size_t dtype_size(dtype t);

enum class reduce_op { sum, max };

// An operation in flight. test() reports completion without blocking; wait() polls until completion or until the
// communicator's timeout, which is fatal (the message names the operation, the rank and the time waited).
class comm_handle {
   public:
    virtual ~comm_handle() = default;
    virtual bool test() = 0;
    void wait();
    // wait() for an operation whose peer is busy with slow local work that leaves a trace on disk (rank 0 writing a
    // checkpoint or tokenizing data into the run directory): the deadline is the communicator's timeout after the last
    // change of `progress()` (polled about once a second). A peer that keeps writing is waited for; one that stopped
    // (hung, SIGSTOPped, dead) ends the wait like any other.
    void wait_while_progressing(const std::function<uint64_t()>& progress);

   protected:
    comm_handle(class communicator& c, std::string what) : comm_(c), what_(std::move(what)) {}
    class communicator& comm_;
    std::string what_;
};
using handle = std::unique_ptr<comm_handle>;

// Time spent blocked in waits (exposed communication) and number of operations started.
struct comm_stats {
    double wait_seconds = 0;
    int64_t ops = 0;
    int64_t bytes = 0;  // bytes this rank contributed (sent)
};

class communicator {
   public:
    virtual ~communicator() = default;

    virtual int rank() const = 0;
    virtual int size() const = 0;
    virtual std::string backend() const = 0;

    // In place: buf[i] = op over ranks of buf[i].
    virtual handle all_reduce_async(void* buf, int64_t count, dtype t, reduce_op op) = 0;
    // Sums send (Σ counts elements, rank r's block at Σ_{q<r} counts[q]) over ranks; rank r receives block r into
    // recv (counts[rank] elements).
    virtual handle reduce_scatter_async(const void* send, void* recv, const std::vector<int64_t>& counts, dtype t) = 0;
    // recv (Σ counts) = the concatenation of every rank's send (counts[rank] elements), in rank order.
    virtual handle all_gather_async(const void* send, void* recv, const std::vector<int64_t>& counts, dtype t) = 0;
    // Like all_gather but only `root` receives (recv is ignored elsewhere).
    virtual handle gather_async(const void* send, void* recv, const std::vector<int64_t>& counts, dtype t,
                                int root) = 0;
    // Rank r sends send_counts[q] elements at send_displs[q] to rank q and receives recv_counts[q] elements from rank
    // q at recv_displs[q].
    virtual handle all_to_all_v_async(const void* send, const std::vector<int64_t>& send_counts,
                                      const std::vector<int64_t>& send_displs, void* recv,
                                      const std::vector<int64_t>& recv_counts, const std::vector<int64_t>& recv_displs,
                                      dtype t) = 0;
    virtual handle send_async(const void* buf, int64_t count, dtype t, int dest, int tag) = 0;
    virtual handle recv_async(void* buf, int64_t count, dtype t, int source, int tag) = 0;
    virtual handle barrier_async() = 0;

    // May one other thread drive handles (test()) while this thread makes no communicator call? (MPI: initialised
    // with MPI_THREAD_SERIALIZED or better.) Used to progress transfers while computation overlaps them.
    virtual bool helper_thread_ok() const { return true; }

    // A communicator over the ranks passing the same color, ordered by key (MPI_Comm_split).
    virtual std::unique_ptr<communicator> split(int color, int key) = 0;

    // Ends every rank of the job with a non-zero status after printing `why` (a dead or hung peer, a fatal error on
    // one rank that the others would otherwise wait for).
    [[noreturn]] virtual void abort(const std::string& why) = 0;

    // Blocking forms.
    void all_reduce(void* buf, int64_t count, dtype t, reduce_op op) { all_reduce_async(buf, count, t, op)->wait(); }
    void reduce_scatter(const void* send, void* recv, const std::vector<int64_t>& counts, dtype t) {
        reduce_scatter_async(send, recv, counts, t)->wait();
    }
    void all_gather(const void* send, void* recv, const std::vector<int64_t>& counts, dtype t) {
        all_gather_async(send, recv, counts, t)->wait();
    }
    void gather(const void* send, void* recv, const std::vector<int64_t>& counts, dtype t, int root) {
        gather_async(send, recv, counts, t, root)->wait();
    }
    void all_to_all_v(const void* send, const std::vector<int64_t>& send_counts,
                      const std::vector<int64_t>& send_displs, void* recv, const std::vector<int64_t>& recv_counts,
                      const std::vector<int64_t>& recv_displs, dtype t) {
        all_to_all_v_async(send, send_counts, send_displs, recv, recv_counts, recv_displs, t)->wait();
    }
    void send(const void* buf, int64_t count, dtype t, int dest, int tag) {
        send_async(buf, count, t, dest, tag)->wait();
    }
    void recv(void* buf, int64_t count, dtype t, int source, int tag) {
        recv_async(buf, count, t, source, tag)->wait();
    }
    void barrier() { barrier_async()->wait(); }

    // Seconds a wait may take before the job is aborted (a dead or hung peer).
    double timeout_seconds = 300.0;
    comm_stats stats;
};

// The world communicator: MPI when the process was started by an MPI launcher (mpirun/srun set the PMIx/OMPI
// environment), otherwise the single-process communicator. The MPI backend initialises MPI on first use and
// finalises it at exit.
std::unique_ptr<communicator> make_world_communicator();

// World size 1: every collective is a copy; send/recv to self go through a mailbox.
std::unique_ptr<communicator> make_single_communicator();

// True when the environment says this process was launched by mpirun or srun with more than one rank possible.
bool launched_by_mpi();

}  // namespace trex::parallel
