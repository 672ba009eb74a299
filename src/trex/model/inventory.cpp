#include "trex/model/inventory.hpp"

#include <fmt/format.h>

namespace trex {

int64_t tensor_spec::numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
}

namespace {

struct inventory_builder {
    std::vector<tensor_spec>* out;
    int layer = -1;
    bool mtp = false;

    void add(const std::string& name, std::vector<int64_t> shape, optim_group group, release_format format,
             tensor_role role = tensor_role::weight, int expert = -1) {
        tensor_spec t;
        t.name = name;
        t.shape = std::move(shape);
        t.role = role;
        t.group = role == tensor_role::weight ? group : optim_group::none;
        t.format = format;
        t.layer = layer;
        t.expert = expert;
        t.is_mtp = mtp;
        t.is_indexer = name.find(".attn.indexer.") != std::string::npos;
        t.is_embedding = name == "embed.weight";
        t.is_head = name == "head.weight";
        out->push_back(std::move(t));
    }
    void matrix(const std::string& name, int64_t rows, int64_t cols, release_format format) {
        add(name, {rows, cols}, optim_group::muon, format);
    }
    void norm(const std::string& name, int64_t dim) { add(name, {dim}, optim_group::adamw, release_format::bf16); }
    void f32_vector(const std::string& name, int64_t dim) { add(name, {dim}, optim_group::adamw, release_format::f32); }
};

// The tensors every block has (attention + mHC + MoE), for block prefix `p` ("layers.3." or "mtp.0.").
void add_block(inventory_builder& b, const model_config& cfg, const std::string& p, int l) {
    const int64_t d = cfg.hidden_size, H = cfg.num_attention_heads, c = cfg.head_dim;
    const int64_t dc = cfg.q_lora_rank, g = cfg.o_groups, dg = cfg.o_lora_rank;
    const int64_t nhc = cfg.hc_mult, hcr = cfg.hc_dim();
    const int64_t E = cfg.n_routed_experts, I = cfg.moe_intermediate_size;
    const int64_t Is = (int64_t)cfg.n_shared_experts * I;
    const int m = cfg.ratio(l);
    const auto fp8 = release_format::fp8_block;
    const auto bf16 = release_format::bf16;

    b.norm(p + "attn_norm.weight", d);
    b.norm(p + "ffn_norm.weight", d);
    for (const char* unit : {"attn", "ffn"}) {
        b.add(p + fmt::format("hc_{}_fn", unit), {hcr, nhc * d}, optim_group::muon, release_format::f32);
        b.f32_vector(p + fmt::format("hc_{}_base", unit), hcr);
        b.f32_vector(p + fmt::format("hc_{}_scale", unit), 3);
    }
    b.f32_vector(p + "attn.attn_sink", H);
    b.matrix(p + "attn.wq_a.weight", dc, d, fp8);
    b.norm(p + "attn.q_norm.weight", dc);
    b.matrix(p + "attn.wq_b.weight", H * c, dc, fp8);
    b.matrix(p + "attn.wkv.weight", c, d, fp8);
    b.norm(p + "attn.kv_norm.weight", c);
    b.matrix(p + "attn.wo_a.weight", g * dg, H * c / g, fp8);
    b.matrix(p + "attn.wo_b.weight", d, g * dg, fp8);
    if (m > 0) {
        const int64_t coff = m == 4 ? 2 : 1;
        b.matrix(p + "attn.compressor.wkv.weight", coff * c, d, bf16);
        b.matrix(p + "attn.compressor.wgate.weight", coff * c, d, bf16);
        b.f32_vector(p + "attn.compressor.ape", 0);
        b.out->back().shape = {m, coff * c};
        b.norm(p + "attn.compressor.norm.weight", c);
    }
    if (m == 4) {
        const int64_t HI = cfg.index_n_heads, cI = cfg.index_head_dim;
        b.matrix(p + "attn.indexer.wq_b.weight", HI * cI, dc, fp8);
        b.matrix(p + "attn.indexer.weights_proj.weight", HI, d, bf16);
        b.matrix(p + "attn.indexer.compressor.wkv.weight", 2 * cI, d, bf16);
        b.matrix(p + "attn.indexer.compressor.wgate.weight", 2 * cI, d, bf16);
        b.f32_vector(p + "attn.indexer.compressor.ape", 0);
        b.out->back().shape = {4, 2 * cI};
        b.norm(p + "attn.indexer.compressor.norm.weight", cI);
    }
    b.matrix(p + "ffn.gate.weight", E, d, bf16);
    if (cfg.is_hash_layer(l) && l < cfg.n_layers()) {
        b.add(p + "ffn.gate.tid2eid", {cfg.vocab_size, cfg.num_experts_per_tok}, optim_group::none, release_format::i64,
              tensor_role::hash_table);
    } else {
        b.add(p + "ffn.gate.bias", {E}, optim_group::none, release_format::f32, tensor_role::bias_buffer);
    }
    b.matrix(p + "ffn.shared_experts.w1.weight", Is, d, fp8);
    b.matrix(p + "ffn.shared_experts.w3.weight", Is, d, fp8);
    b.matrix(p + "ffn.shared_experts.w2.weight", d, Is, fp8);
    const auto efmt = cfg.expert_dtype == "fp4" ? release_format::fp4_1x32 : fp8;
    for (int64_t e = 0; e < E; e++) {
        b.add(p + fmt::format("ffn.experts.{}.w1.weight", e), {I, d}, optim_group::muon, efmt, tensor_role::weight,
              (int)e);
        b.add(p + fmt::format("ffn.experts.{}.w3.weight", e), {I, d}, optim_group::muon, efmt, tensor_role::weight,
              (int)e);
        b.add(p + fmt::format("ffn.experts.{}.w2.weight", e), {d, I}, optim_group::muon, efmt, tensor_role::weight,
              (int)e);
    }
}

}  // namespace

std::vector<tensor_spec> build_inventory(const model_config& cfg, bool include_mtp) {
    std::vector<tensor_spec> out;
    inventory_builder b{&out};
    const int64_t d = cfg.hidden_size, V = cfg.vocab_size, nhc = cfg.hc_mult;
    b.add("embed.weight", {V, d}, optim_group::adamw, release_format::bf16);
    b.add("head.weight", {V, d}, optim_group::adamw, release_format::bf16);
    b.norm("norm.weight", d);
    b.add("hc_head_fn", {nhc, nhc * d}, optim_group::muon, release_format::f32);
    b.f32_vector("hc_head_base", nhc);
    b.f32_vector("hc_head_scale", 1);
    for (int l = 0; l < cfg.n_layers(); l++) {
        b.layer = l;
        add_block(b, cfg, fmt::format("layers.{}.", l), l);
    }
    if (include_mtp && cfg.has_mtp()) {
        for (int k = 0; k < cfg.num_nextn_predict_layers; k++) {
            b.layer = cfg.n_layers() + k;
            b.mtp = true;
            const std::string p = fmt::format("mtp.{}.", k);
            b.matrix(p + "e_proj.weight", d, d, release_format::fp8_block);
            b.matrix(p + "h_proj.weight", d, d, release_format::fp8_block);
            b.norm(p + "enorm.weight", d);
            b.norm(p + "hnorm.weight", d);
            b.norm(p + "norm.weight", d);
            b.add(p + "hc_head_fn", {nhc, nhc * d}, optim_group::muon, release_format::f32);
            b.f32_vector(p + "hc_head_base", nhc);
            b.f32_vector(p + "hc_head_scale", 1);
            add_block(b, cfg, p, cfg.n_layers() + k);
        }
    }
    return out;
}

int64_t release_tensor_count(const std::vector<tensor_spec>& specs) {
    int64_t n = 0;
    for (const auto& t : specs) {
        n += 1;
        if (t.format == release_format::fp8_block || t.format == release_format::fp4_1x32) n += 1;
    }
    return n;
}

}  // namespace trex
