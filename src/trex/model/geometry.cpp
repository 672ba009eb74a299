#include "trex/model/geometry.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "trex/kernels/ref/ops.hpp"

namespace trex {

rope_table_t<float> batch_geometry::rope_for_ratio(int m) const {
    rope_table_t<float> t;
    t.half = rope_half;
    t.n_pos = max_doc_len;
    t.cos = m == 0 ? cos_main.data() : cos_comp.data();
    t.sin = m == 0 ? sin_main.data() : sin_comp.data();
    return t;
}

namespace {

void fill_table(std::vector<float>& cs, std::vector<float>& sn, const double* theta, int half, int64_t n_pos) {
    cs.resize((size_t)n_pos * half);
    sn.resize((size_t)n_pos * half);
    for (int64_t p = 0; p < n_pos; p++)
        for (int i = 0; i < half; i++) {
            const double a = (double)p * theta[i];
            cs[p * half + i] = (float)std::cos(a);
            sn[p * half + i] = (float)std::sin(a);
        }
}

// Both tables for positions [0, n_pos): the main layers' (rope_theta) and the compressed layers' (YaRN).
void fill_rope_tables(batch_geometry& g, const model_config& cfg, int64_t n_pos) {
    const int r = cfg.qk_rope_head_dim;
    g.rope_half = r / 2;
    std::vector<double> theta(g.rope_half);
    ref::rope_inv_freq(theta.data(), r, cfg.rope_theta, false, 1.0, 0, 0, 0);
    fill_table(g.cos_main, g.sin_main, theta.data(), g.rope_half, n_pos);
    const auto& rs = cfg.rope_scaling;
    ref::rope_inv_freq(theta.data(), r, cfg.compress_rope_theta, rs.type == "yarn", rs.factor,
                       rs.original_max_position_embeddings, rs.beta_fast, rs.beta_slow);
    fill_table(g.cos_comp, g.sin_comp, theta.data(), g.rope_half, n_pos);
}

}  // namespace

void set_decode_geometry(batch_geometry& g, const model_config& cfg, std::span<const int64_t> lens,
                         std::span<const int64_t> counts) {
    g.docs.clear();
    g.doc_of.clear();
    g.pos.clear();
    g.comp.clear();
    int64_t end = 0;
    for (size_t b = 0; b < counts.size(); b++) {
        g.docs.push_back({(int64_t)g.pos.size(), counts[b]});
        for (int64_t j = 0; j < counts[b]; j++) {
            g.doc_of.push_back((int32_t)b);
            g.pos.push_back((int32_t)(lens[b] + j));
        }
        end = std::max(end, lens[b] + counts[b]);
    }
    g.N = (int64_t)g.pos.size();
    g.B = 1;
    g.S = g.N;
    if (end > g.max_doc_len || g.cos_main.empty()) {
        g.max_doc_len = std::max<int64_t>({end, 2 * g.max_doc_len, 256});
        fill_rope_tables(g, cfg, g.max_doc_len);
    }
}

batch_geometry make_geometry(const model_config& cfg, int64_t B, int64_t S, const int32_t* doc_start) {
    batch_geometry g;
    g.B = B;
    g.S = S;
    g.N = B * S;
    g.doc_of.resize(g.N);
    g.pos.resize(g.N);
    for (int64_t t = 0; t < g.N; t++) {
        const bool start = (t % S == 0) || (doc_start && doc_start[t] != 0);
        if (start) g.docs.push_back({t, 0});
        g.docs.back().len++;
        g.doc_of[t] = (int32_t)g.docs.size() - 1;
        g.pos[t] = (int32_t)(t - g.docs.back().start);
    }
    for (const auto& d : g.docs) g.max_doc_len = std::max(g.max_doc_len, d.len);

    std::set<int> ratios;
    for (int m : cfg.compress_ratios)
        if (m > 0) ratios.insert(m);
    for (int m : ratios) {
        compressed_layout c;
        c.m = m;
        for (const auto& d : g.docs) {
            c.entry_offset.push_back(c.n_entries);
            const int64_t ne = d.len / m;
            for (int64_t i = 0; i < ne; i++) c.entry_pos.push_back((int32_t)(i * m));
            c.n_entries += ne;
            c.max_entries = std::max(c.max_entries, ne);
        }
        g.comp[m] = std::move(c);
    }

    fill_rope_tables(g, cfg, g.max_doc_len);
    return g;
}

}  // namespace trex
