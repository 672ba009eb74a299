#include "trex/parallel/pipeline_runner.hpp"

#include <algorithm>

#include "trex/base/error.hpp"
#include "trex/base/timer.hpp"

namespace trex::parallel {

namespace {

enum message_kind : int { K_ACT = 0, K_GRAD = 1, K_DE_MTP = 2 };

// this chunk's part of a micro-batch's result into the rank's part (the blocks of different chunks are disjoint and
// the others hold exact zeros, so the sums are exact)
void merge(step_result& into, const step_result& r, bool last_chunk) {
    if (last_chunk) {
        into.lm = r.lm;
        into.mtp = r.mtp;
        into.n_lm = r.n_lm;
        into.n_mtp = r.n_mtp;
    }
    if (into.block_bal.empty()) {
        into.block_bal = r.block_bal;
        into.block_idx = r.block_idx;
        into.expert_load = r.expert_load;
        return;
    }
    for (size_t l = 0; l < r.block_bal.size(); l++) {
        into.block_bal[l] += r.block_bal[l];
        into.block_idx[l] += r.block_idx[l];
        if (!r.expert_load[l].empty()) into.expert_load[l] = r.expert_load[l];
    }
}

}  // namespace

pipeline_runner::pipeline_runner(dsv4_model& model, communicator& world, const device_mesh& mesh,
                                 pipeline_layout layout, expert_dispatcher* ep)
    : model_(model), world_(world), mesh_(mesh), layout_(std::move(layout)), ep_(ep) {}

int pipeline_runner::neighbour(int model_chunk) const {
    return mesh_.rank_of(mesh_.tp_rank, layout_.rank_of_chunk(model_chunk), mesh_.dp_rank);
}

int pipeline_runner::tag(int kind, int mb, int model_chunk) const {
    const int t = 3 * (mb * layout_.chunks() + model_chunk) + kind;
    TREX_CHECK(t < 32767, "pipeline: {} micro-batches x {} model chunks exceed the message tags MPI guarantees", mb + 1,
               layout_.chunks());
    return t;
}

void pipeline_runner::wait(handle& h) {
    const double t0 = now_seconds();
    h->wait();
    wait_ += now_seconds() - t0;
}

std::vector<step_result> pipeline_runner::run(const std::vector<batch_view>& batches, const step_options& opts,
                                              const std::function<void(int mb, int chunk)>& after_backward) {
    const double t0 = now_seconds();
    wait_ = 0;
    const model_config& cfg = model_.config();
    const int m = (int)batches.size(), v = layout_.v, C = layout_.chunks();
    TREX_CHECK(m >= 1, "pipeline: no micro-batches");
    const int64_t N = batches[0].B * batches[0].S, d = cfg.hidden_size, nd = cfg.hc_mult * d;
    for (const batch_view& b : batches)
        TREX_CHECK(b.B * b.S == N, "pipeline: micro-batches of different sizes ({} and {} tokens)", b.B * b.S, N);
    const bool mtp = cfg.has_mtp() && batches[0].mtp_input_ids != nullptr;
    const std::vector<pp_action> steps = pipeline_schedule(layout_.kind, layout_.pp, v, m, layout_.rank);

    // per (micro-batch, local chunk) idx = mb·v + chunk: received input state and output gradient, sent output
    // state and input gradient; per micro-batch the MTP embedding gradient (last chunk → chunk 0)
    std::vector<std::vector<float>> act_in(m * v), act_out(m * v), grad_in(m * v), grad_out(m * v), de_in(m), de_out(m);
    std::vector<handle> recv_act(m * v), recv_grad(m * v), recv_de(m), sends;
    for (const pp_action& a : steps) {
        const int idx = a.mb * v + a.chunk, mc = layout_.model_chunk(a.chunk);
        if (a.op == pp_op::recv_forward) {
            act_in[idx].resize(N * nd);
            recv_act[idx] =
                world_.recv_async(act_in[idx].data(), N * nd, dtype::f32, neighbour(mc - 1), tag(K_ACT, a.mb, mc - 1));
        } else if (a.op == pp_op::recv_backward) {
            grad_in[idx].resize(N * nd);
            recv_grad[idx] = world_.recv_async(grad_in[idx].data(), N * nd, dtype::f32, neighbour(mc + 1),
                                               tag(K_GRAD, a.mb, mc + 1));
        } else if (a.op == pp_op::backward && mc == 0 && mtp && C > 1) {
            de_in[a.mb].resize(N * d);
            recv_de[a.mb] =
                world_.recv_async(de_in[a.mb].data(), N * d, dtype::f32, neighbour(C - 1), tag(K_DE_MTP, a.mb, 0));
        }
    }

    std::map<int, forward_state> live;
    std::vector<step_result> out(m);
    for (const pp_action& a : steps) {
        // drive the transfers in flight (MPI progresses a request only inside MPI calls)
        sends.erase(std::remove_if(sends.begin(), sends.end(), [](handle& h) { return h->test(); }), sends.end());
        const int idx = a.mb * v + a.chunk, mc = layout_.model_chunk(a.chunk);
        const stage_range& range = layout_.ranges[a.chunk];
        const bool first = mc == 0, last = mc == C - 1;
        switch (a.op) {
            case pp_op::recv_forward:
                wait(recv_act[idx]);
                break;
            case pp_op::recv_backward:
                wait(recv_grad[idx]);
                break;
            case pp_op::forward: {
                forward_state st;
                if (!pool_.empty()) {
                    st = std::move(pool_.back());
                    pool_.pop_back();
                } else {
                    allocated_++;
                }
                model_.swap_state(st);  // the model computes in this micro-batch's buffers
                if (ep_) ep_->select_slot(idx);
                float* h_out = nullptr;
                if (!last) {
                    act_out[idx].resize(N * nd);
                    h_out = act_out[idx].data();
                }
                const step_result r =
                    model_.stage_forward(range, batches[a.mb], opts, first ? nullptr : act_in[idx].data(), h_out);
                merge(out[a.mb], r, last);
                model_.swap_state(st);
                live[idx] = std::move(st);
                break;
            }
            case pp_op::send_forward:
                sends.push_back(world_.send_async(act_out[idx].data(), N * nd, dtype::f32, neighbour(mc + 1),
                                                  tag(K_ACT, a.mb, mc)));
                break;
            case pp_op::backward: {
                auto it = live.find(idx);
                TREX_ASSERT(it != live.end());
                forward_state st = std::move(it->second);
                live.erase(it);
                model_.swap_state(st);
                if (ep_) ep_->select_slot(idx);
                float* dh_in = nullptr;
                if (!first) {
                    grad_out[idx].resize(N * nd);
                    dh_in = grad_out[idx].data();
                }
                float* de_mtp = nullptr;
                if (mtp && C > 1 && last) {
                    de_out[a.mb].resize(N * d);
                    de_mtp = de_out[a.mb].data();
                }
                if (mtp && C > 1 && first) {
                    wait(recv_de[a.mb]);
                    de_mtp = de_in[a.mb].data();
                }
                model_.stage_backward(range, batches[a.mb], opts, last ? nullptr : grad_in[idx].data(), dh_in, de_mtp);
                model_.swap_state(st);
                pool_.push_back(std::move(st));
                if (mtp && C > 1 && last)
                    sends.push_back(world_.send_async(de_out[a.mb].data(), N * d, dtype::f32, neighbour(0),
                                                      tag(K_DE_MTP, a.mb, 0)));
                if (after_backward) after_backward(a.mb, a.chunk);
                break;
            }
            case pp_op::send_backward:
                sends.push_back(world_.send_async(grad_out[idx].data(), N * nd, dtype::f32, neighbour(mc - 1),
                                                  tag(K_GRAD, a.mb, mc)));
                break;
        }
    }
    TREX_ASSERT(live.empty());
    for (handle& h : sends) wait(h);
    if (ep_) ep_->select_slot(0);
    run_ = now_seconds() - t0;
    return out;
}

}  // namespace trex::parallel
