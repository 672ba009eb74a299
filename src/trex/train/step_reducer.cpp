#include "trex/train/step_reducer.hpp"

#include <algorithm>

namespace trex {

step_reducer::step_reducer(int64_t grad_accum, int dp) : grad_accum_(grad_accum), dp_(dp) {}

void step_reducer::begin_step() {
    losses_.assign((size_t)kLossFields * grad_accum_, 0.0);
    loads_.clear();
}

void step_reducer::add(int64_t m, const step_result& r) {
    double* f = losses_.data() + (m / dp_) * kLossFields;
    f[0] = r.loss, f[1] = r.lm, f[2] = r.mtp, f[3] = r.bal, f[4] = r.idx;
    if (loads_.empty()) {
        loads_ = r.expert_load;
        return;
    }
    for (size_t l = 0; l < r.expert_load.size(); l++)
        for (size_t e = 0; e < r.expert_load[l].size(); e++) loads_[l][e] += r.expert_load[l][e];
}

step_result step_reducer::reduce(parallel::communicator& dpc, parallel::communicator& world, bool count_loads) const {
    // losses: all_losses[rank][micro-batch of that rank][field]
    std::vector<double> all(losses_.size() * dpc.size());
    dpc.all_gather(losses_.data(), all.data(), std::vector<int64_t>(dpc.size(), (int64_t)losses_.size()),
                   parallel::dtype::f64);
    step_result acc;
    const int64_t micro_total = grad_accum_ * dp_;
    const double w = 1.0 / (double)micro_total;
    for (int64_t m = 0; m < micro_total; m++) {
        const double* f = all.data() + (m % dp_) * losses_.size() + (m / dp_) * kLossFields;
        acc.loss += w * f[0];
        acc.lm += w * f[1];
        acc.mtp += w * f[2];
        acc.bal += w * f[3];
        acc.idx += w * f[4];
    }
    // loads: flattened, summed over the world, unflattened into the loads' shape
    std::vector<int64_t> flat;
    for (const auto& l : loads_) flat.insert(flat.end(), l.begin(), l.end());
    if (!count_loads) std::fill(flat.begin(), flat.end(), 0);
    world.all_reduce(flat.data(), (int64_t)flat.size(), parallel::dtype::i64, parallel::reduce_op::sum);
    acc.expert_load = loads_;
    for (size_t l = 0, k = 0; l < loads_.size(); l++)
        for (size_t e = 0; e < loads_[l].size(); e++) acc.expert_load[l][e] = flat[k++];
    return acc;
}

}  // namespace trex
