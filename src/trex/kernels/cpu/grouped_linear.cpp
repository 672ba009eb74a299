// Grouped output projection (spec §2.5): group k of the heads is projected by its own block of rows of wo_a.
#include "trex/kernels/cpu/gemm.hpp"
#include "trex/kernels/cpu/ops.hpp"

namespace trex::cpu {

// u [N, g, dg] ; x [N, g, in_g] ; Wa [g·dg, in_g]
void grouped_linear_forward(float* u, const float* x, const float* Wa, int64_t N, int g, int64_t in_g, int64_t dg) {
    for (int k = 0; k < g; k++)
        gemm(false, true, N, dg, in_g, 1.0f, x + k * in_g, g * in_g, Wa + k * dg * in_g, in_g, 0.0f, u + k * dg,
             g * dg);
}

// dx = du_k · Wa_k (assigned) ; dWa_k += du_kᵀ · x_k
void grouped_linear_backward(float* dx, float* dWa, const float* du, const float* x, const float* Wa, int64_t N, int g,
                             int64_t in_g, int64_t dg) {
    for (int k = 0; k < g; k++) {
        gemm(false, false, N, in_g, dg, 1.0f, du + k * dg, g * dg, Wa + k * dg * in_g, in_g, 0.0f, dx + k * in_g,
             g * in_g);
        gemm(true, false, dg, in_g, N, 1.0f, du + k * dg, g * dg, x + k * in_g, g * in_g, 1.0f, dWa + k * dg * in_g,
             in_g);
    }
}

}  // namespace trex::cpu
