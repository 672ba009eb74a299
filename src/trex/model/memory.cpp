// Memory held by a step's saved activations (what `trex bench step` reports and tests/unit/model_step_test.cpp
// checks: recompute keeps one block's activations, the rest grows linearly with the tokens).
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "trex/model/model.hpp"

namespace trex {

namespace {

template <class... V>
size_t capacity_bytes(const V&... v) {
    return ((v.capacity() * sizeof(typename V::value_type)) + ... + 0);
}

}  // namespace

size_t block_acts::bytes() const {
    return capacity_bytes(y1, post1, comb1, mix1, rho1, h_mid, y2, post2, comb2, mix2, rho2, F1, F2, a1, a1_rstd, qa,
                          qa_rstd, qr, q, q_rstd, kv_pre, kv_rstd, kv_all, ckv, cg, cpool, cpool_rstd, iq, ikv, ig,
                          ipool, ipool_rstd, ik, iw, iscores, sel, nsel, key_offset, key_idx, n_window, P, o, u, a2,
                          a2_rstd, logits, s, weight, sel_e, sh13, load) +
           capacity_bytes(moe.expert_offset, moe.row_slot, moe.slot_row, moe.a13);
}

size_t head_acts::bytes() const {
    return capacity_bytes(x, xn, xrstd, hmix, hrho, dxn, en, erstd, hn, hrstd, x2, xn2, x2rstd, h2mix, h2rho, dxn2);
}

size_t dsv4_model::activation_bytes() const {
    size_t total = capacity_bytes(hs_, mtp_in_) + head_.bytes();
    for (const block_acts& a : acts_) total += a.bytes();
    return total;
}

size_t dsv4_model::workspace_bytes() const {
    return capacity_bytes(de_mtp_, hash_sel_) + ws_.capacity_bytes();
}

std::string describe_activation_memory(double bytes, int64_t tokens, bool recompute) {
    return fmt::format("activations kept for backward {:.1f} MiB ({:.1f} KiB/token{})", bytes / (1024.0 * 1024.0),
                       bytes / 1024.0 / (double)std::max<int64_t>(tokens, 1),
                       recompute ? ", recompute: one block's" : "");
}

}  // namespace trex
