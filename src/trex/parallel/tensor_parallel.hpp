// Tensor parallelism over MPI (docs/distributed.md §5): the model's tensor_parallel hook on the communicator of the
// tp ranks that share a micro-batch, and the gradient preparation that lets ZeRO-1 reduce over every rank.
#pragma once

#include <vector>

#include "trex/model/params.hpp"
#include "trex/model/tensor_parallel.hpp"
#include "trex/parallel/communicator.hpp"

namespace trex::parallel {

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
    void all_reduce_max(float* x, int64_t n) override;

    // After the backward, before ZeRO-1 sums the replicated tensors' gradients over all ranks: they are the same on
    // every TP rank, so TP ranks other than 0 zero theirs (counted once). The TP-split tensors are this rank's slices
    // (summed over the DP ranks of its TP index only). Routed experts are never replicated over TP: split over TP
    // (ep 1) or held by their EP rank, which computed the gradient of this rank's tokens only.
    void drop_replicated_gradients(param_store& p) const;

    communicator& comm() { return comm_; }

   private:
    template <class T>
    void sum(T* x, int64_t n, dtype t, std::vector<T>& buf);
    communicator& comm_;
    std::vector<float> fbuf_;
    std::vector<double> dbuf_;
};

}  // namespace trex::parallel
