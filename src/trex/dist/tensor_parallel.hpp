// Tensor parallelism over MPI (docs/distributed.md §5): the model's tensor_parallel hook on the communicator of the
// tp ranks that share a micro-batch, and the gradient combination that follows the backward.
#pragma once

#include <vector>

#include "trex/dist/communicator.hpp"
#include "trex/model/params.hpp"
#include "trex/model/tensor_parallel.hpp"

namespace trex::dist {

class tp_group : public tensor_parallel {
   public:
    // comm: the TP ranks of this rank's (pp, dp) coordinates, ordered by tp rank.
    explicit tp_group(communicator& comm) : comm_(comm) {}

    int size() const override { return comm_.size(); }
    int rank() const override { return comm_.rank(); }
    // All-gather, then the sum in rank order (not MPI_Allreduce, whose order is implementation-defined): every rank
    // gets the same bits.
    void all_reduce_sum(float* x, int64_t n) override;
    void all_reduce_sum(double* x, int64_t n) override;

    // After the backward: the TP-split tensors' gradients (non-zero only in each rank's slice) are summed over the TP
    // ranks, which assembles them exactly; the replicated tensors' gradients are already the same on every TP rank.
    // Afterwards every TP rank holds the whole gradient, as one process would.
    void combine_gradients(param_store& p);

    communicator& comm() { return comm_; }

   private:
    template <class T>
    void sum(T* x, int64_t n, dtype t, std::vector<T>& buf);
    communicator& comm_;
    std::vector<float> fbuf_, pack_;
    std::vector<double> dbuf_;
};

}  // namespace trex::dist
