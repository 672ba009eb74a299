// The CPU backend's kernel table: every entry is the kernels/cpu function of its name.
#include "trex/kernels/kernel_table.hpp"

#include "trex/kernels/cpu/gemm.hpp"
#include "trex/kernels/cpu/ops.hpp"

namespace trex {

namespace {

kernel_table make_cpu_kernels() {
    kernel_table t;
    t.name = "cpu";
    t.memory = host_memory();
    t.gemm = cpu::gemm;
    t.syrk = cpu::syrk;
    t.linear_fwd = cpu::linear_fwd;
    t.linear_fwd_decode = cpu::linear_fwd_decode;
    t.linear_bwd_data = cpu::linear_bwd_data;
    t.linear_bwd_weight = cpu::linear_bwd_weight;
    t.add_transposed = cpu::add_transposed;
    t.gemm_stats_section = cpu::gemm_stats_section;
    t.embedding_forward = cpu::embedding_forward;
    t.embedding_backward = cpu::embedding_backward;
    t.rmsnorm_forward = cpu::rmsnorm_forward;
    t.rmsnorm_backward = cpu::rmsnorm_backward;
    t.rope_forward = cpu::rope_forward;
    t.hc_pre_forward = cpu::hc_pre_forward;
    t.hc_pre_backward = cpu::hc_pre_backward;
    t.hc_post_forward = cpu::hc_post_forward;
    t.hc_post_backward = cpu::hc_post_backward;
    t.hc_head_forward = cpu::hc_head_forward;
    t.hc_head_backward = cpu::hc_head_backward;
    t.compressor_forward = cpu::compressor_forward;
    t.compressor_backward = cpu::compressor_backward;
    t.indexer_scores_forward = cpu::indexer_scores_forward;
    t.indexer_scores_backward = cpu::indexer_scores_backward;
    t.indexer_topk = cpu::indexer_topk;
    t.indexer_loss = cpu::indexer_loss;
    t.attention_forward = cpu::attention_forward;
    t.attention_backward = cpu::attention_backward;
    t.grouped_linear_forward = cpu::grouped_linear_forward;
    t.grouped_linear_backward = cpu::grouped_linear_backward;
    t.fake_quant_fp8 = cpu::fake_quant_fp8;
    t.fake_quant_fp4 = cpu::fake_quant_fp4;
    t.hadamard_rows = cpu::hadamard_rows;
    t.router_forward = cpu::router_forward;
    t.router_backward = cpu::router_backward;
    t.swiglu_forward = cpu::swiglu_forward;
    t.swiglu_backward = cpu::swiglu_backward;
    t.moe_build_permutation = cpu::moe_build_permutation;
    t.moe_gather_rows = cpu::moe_gather_rows;
    t.moe_combine_rows = cpu::moe_combine_rows;
    t.moe_experts_forward = cpu::moe_experts_forward;
    t.moe_experts_backward = cpu::moe_experts_backward;
    t.moe_route_weight_backward = cpu::moe_route_weight_backward;
    t.balance_loss_forward = cpu::balance_loss_forward;
    t.balance_loss_backward = cpu::balance_loss_backward;
    t.cross_entropy_fused = cpu::cross_entropy_fused;
    t.cross_entropy_shard_stats = cpu::cross_entropy_shard_stats;
    t.cross_entropy_shard_exp = cpu::cross_entropy_shard_exp;
    t.cross_entropy_shard_grad = cpu::cross_entropy_shard_grad;
    t.copy = cpu::copy;
    t.fill_zero = cpu::fill_zero;
    t.scale = cpu::scale;
    t.add = cpu::add;
    t.broadcast_streams = cpu::broadcast_streams;
    t.sum_streams = cpu::sum_streams;
    t.rms_unweighted_backward = cpu::rms_unweighted_backward;
    t.attention_keys = cpu::attention_keys;
    t.indexer_head_sums = cpu::indexer_head_sums;
    t.indexer_target = cpu::indexer_target;
    t.hash_select = cpu::hash_select;
    t.expert_load = cpu::expert_load;
    return t;
}

}  // namespace

const kernel_table& cpu_kernels() {
    static const kernel_table table = make_cpu_kernels();
    return table;
}

}  // namespace trex
