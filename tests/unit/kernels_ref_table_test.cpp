// The reference backend's kernel table (ref_kernels(), kernels/ref/kernel_table.cpp) against the CPU table
// (cpu_kernels()), entry by entry on random inputs of small odd sizes: the entries whose table contract differs from
// the reference signature (adapters: accumulate flags, row_scale, the fused residual of hc_pre_backward, the MoE
// routing state, the fused cross-entropy) and the plain loops that have no reference kernel (GEMM, SYRK, the MoE
// permutation pieces). The comparison is the one a future backend's table must pass against the reference table:
// relative L2 error ≤ 1e-5 (fp32 against fp32 with double accumulation). Every comparison prints one line
// "[REF] <name> rel=<error>".
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/cpu_compare.hpp"
#include "trex/kernels/cpu/gemm.hpp"
#include "trex/kernels/kernel_table.hpp"

using namespace trex;
using std::vector;

namespace {

constexpr double kTol = 1e-5;

const kernel_table& ref_table() {
    return ref_kernels();
}
const kernel_table& cpu_table() {
    return cpu_kernels();
}

// n normal(mean, sd) floats from a fixed seed
vector<float> rnd(size_t n, uint64_t seed, double sd = 1.0, double mean = 0.0) {
    return test::to_f(test::randn(n, seed, sd, mean));
}

// ||cpu − ref|| / ||ref|| over n values (ref: the reference table's output): printed, expected ≤ tol, and the
// reference must not be all zero (the comparison would prove nothing).
double expect_rel(const std::string& name, const float* cpu, const float* ref, size_t n, double tol = kTol) {
    double num = 0, den = 0;
    bool finite = true;
    for (size_t i = 0; i < n; i++) {
        finite = finite && std::isfinite(cpu[i]) && std::isfinite(ref[i]);
        num += ((double)cpu[i] - ref[i]) * ((double)cpu[i] - ref[i]);
        den += (double)ref[i] * ref[i];
    }
    const double rel = std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
    std::printf("[REF] %-50s n=%6zu |ref|=%.3e rel=%.3e\n", name.c_str(), n, std::sqrt(den), rel);
    EXPECT_TRUE(finite) << name << ": non-finite output";
    EXPECT_GT(den, 0.0) << name << ": the reference output is all zero";
    EXPECT_LE(rel, tol) << name;
    return rel;
}
double expect_rel(const std::string& name, const vector<float>& cpu, const vector<float>& ref, double tol = kTol) {
    EXPECT_EQ(cpu.size(), ref.size()) << name;
    return expect_rel(name, cpu.data(), ref.data(), std::min(cpu.size(), ref.size()), tol);
}
// An accumulated (+=) output: both tables ran on `before`; compares their increments after − before.
double expect_rel_inc(const std::string& name, const vector<float>& cpu, const vector<float>& ref,
                      const vector<float>& before, double tol = kTol) {
    vector<float> ic(cpu.size()), ir(ref.size());
    for (size_t i = 0; i < cpu.size(); i++) ic[i] = cpu[i] - before[i];
    for (size_t i = 0; i < ref.size(); i++) ir[i] = ref[i] - before[i];
    return expect_rel(name + " (+=)", ic, ir, tol);
}

// rows × cols block of a matrix with row stride ld
vector<float> block(const vector<float>& m, int64_t rows, int64_t cols, int64_t ld) {
    vector<float> out((size_t)(rows * cols));
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) out[i * cols + j] = m[i * ld + j];
    return out;
}

}  // namespace

#define TREX_EXPECT_ENTRY(entry) EXPECT_NE(t.entry, nullptr) << "ref_kernels()." #entry " is null"

TEST(RefKernelTable, EveryEntryIsSetAndNamedRef) {
    static_assert(sizeof(kernel_table) == sizeof(const char*) + 60 * sizeof(void (*)()) + sizeof(device_allocator),
                  "kernel_table gained or lost an entry: list it here and set it in kernels/ref/kernel_table.cpp");
    const kernel_table& t = ref_kernels();
    ASSERT_NE(t.name, nullptr);
    EXPECT_STREQ(t.name, "ref");
    EXPECT_EQ(&t, &ref_kernels()) << "the table is built once";
    TREX_EXPECT_ENTRY(memory.allocate);
    TREX_EXPECT_ENTRY(memory.release);
    TREX_EXPECT_ENTRY(gemm);
    TREX_EXPECT_ENTRY(syrk);
    TREX_EXPECT_ENTRY(linear_fwd);
    TREX_EXPECT_ENTRY(linear_fwd_decode);
    TREX_EXPECT_ENTRY(linear_bwd_data);
    TREX_EXPECT_ENTRY(linear_bwd_weight);
    TREX_EXPECT_ENTRY(add_transposed);
    TREX_EXPECT_ENTRY(gemm_stats_section);
    TREX_EXPECT_ENTRY(embedding_forward);
    TREX_EXPECT_ENTRY(embedding_backward);
    TREX_EXPECT_ENTRY(rmsnorm_forward);
    TREX_EXPECT_ENTRY(rmsnorm_backward);
    TREX_EXPECT_ENTRY(rope_forward);
    TREX_EXPECT_ENTRY(hc_pre_forward);
    TREX_EXPECT_ENTRY(hc_pre_backward);
    TREX_EXPECT_ENTRY(hc_post_forward);
    TREX_EXPECT_ENTRY(hc_post_backward);
    TREX_EXPECT_ENTRY(hc_head_forward);
    TREX_EXPECT_ENTRY(hc_head_backward);
    TREX_EXPECT_ENTRY(compressor_forward);
    TREX_EXPECT_ENTRY(compressor_backward);
    TREX_EXPECT_ENTRY(indexer_scores_forward);
    TREX_EXPECT_ENTRY(indexer_scores_backward);
    TREX_EXPECT_ENTRY(indexer_topk);
    TREX_EXPECT_ENTRY(indexer_loss);
    TREX_EXPECT_ENTRY(attention_forward);
    TREX_EXPECT_ENTRY(attention_backward);
    TREX_EXPECT_ENTRY(grouped_linear_forward);
    TREX_EXPECT_ENTRY(grouped_linear_backward);
    TREX_EXPECT_ENTRY(router_forward);
    TREX_EXPECT_ENTRY(router_backward);
    TREX_EXPECT_ENTRY(swiglu_forward);
    TREX_EXPECT_ENTRY(swiglu_backward);
    TREX_EXPECT_ENTRY(moe_build_permutation);
    TREX_EXPECT_ENTRY(moe_gather_rows);
    TREX_EXPECT_ENTRY(moe_combine_rows);
    TREX_EXPECT_ENTRY(moe_experts_forward);
    TREX_EXPECT_ENTRY(moe_experts_backward);
    TREX_EXPECT_ENTRY(moe_route_weight_backward);
    TREX_EXPECT_ENTRY(balance_loss_forward);
    TREX_EXPECT_ENTRY(balance_loss_backward);
    TREX_EXPECT_ENTRY(cross_entropy_fused);
    TREX_EXPECT_ENTRY(cross_entropy_shard_stats);
    TREX_EXPECT_ENTRY(cross_entropy_shard_exp);
    TREX_EXPECT_ENTRY(cross_entropy_shard_grad);
    TREX_EXPECT_ENTRY(copy);
    TREX_EXPECT_ENTRY(fill_zero);
    TREX_EXPECT_ENTRY(scale);
    TREX_EXPECT_ENTRY(add);
    TREX_EXPECT_ENTRY(broadcast_streams);
    TREX_EXPECT_ENTRY(sum_streams);
    TREX_EXPECT_ENTRY(rms_unweighted_backward);
    TREX_EXPECT_ENTRY(attention_keys);
    TREX_EXPECT_ENTRY(indexer_head_sums);
    TREX_EXPECT_ENTRY(indexer_target);
    TREX_EXPECT_ENTRY(hash_select);
    TREX_EXPECT_ENTRY(expert_load);
    TREX_EXPECT_ENTRY(fake_quant_fp8);
    TREX_EXPECT_ENTRY(fake_quant_fp4);
    TREX_EXPECT_ENTRY(hadamard_rows);
    // the CPU table is a different one
    EXPECT_NE(t.linear_fwd, cpu_kernels().linear_fwd);
}

#undef TREX_EXPECT_ENTRY

// C = alpha·op(A)·op(B) + beta·C, all four transpose combinations, beta 0 and 1, row strides wider than the rows.
TEST(RefKernelTable, GemmMatchesCpu) {
    const int64_t M = 7, N = 5, K = 9;
    const float alpha = 0.75f;
    uint64_t seed = 100;
    for (bool ta : {false, true})
        for (bool tb : {false, true})
            for (float beta : {0.0f, 1.0f}) {
                const std::string name =
                    std::string("gemm ") + (ta ? "T" : "N") + (tb ? "T" : "N") + " beta=" + std::to_string((int)beta);
                const int64_t a_rows = ta ? K : M, a_cols = ta ? M : K, lda = a_cols + 3;
                const int64_t b_rows = tb ? N : K, b_cols = tb ? K : N, ldb = b_cols + 2;
                const int64_t ldc = N + 4;
                const vector<float> A = rnd(a_rows * lda, seed++), B = rnd(b_rows * ldb, seed++);
                const vector<float> C0 = rnd(M * ldc, seed++);
                vector<float> Cc = C0, Cr = C0;
                cpu_table().gemm(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, Cc.data(), ldc);
                ref_table().gemm(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, Cr.data(), ldc);
                expect_rel(name, block(Cc, M, N, ldc), block(Cr, M, N, ldc));
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = N; j < ldc; j++)
                        ASSERT_EQ(Cr[i * ldc + j], C0[i * ldc + j]) << name << ": wrote past the N columns";
                if (beta == 0.0f) {  // C is not read: NaN in it changes nothing
                    vector<float> Cn(C0.size(), std::numeric_limits<float>::quiet_NaN());
                    ref_table().gemm(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, Cn.data(), ldc);
                    EXPECT_EQ(block(Cn, M, N, ldc), block(Cr, M, N, ldc)) << name << ": read C with beta == 0";
                }
            }
}

// C [n,n] = alpha·X·Xᵀ + beta·C (only the lower triangle read), exactly symmetric; n below and above the CPU's
// recursion leaf (64).
TEST(RefKernelTable, SyrkMatchesCpu) {
    const int64_t k = 7, ldx = k + 2;
    const float alpha = 0.5f;
    uint64_t seed = 200;
    for (int64_t n : {11, 67})
        for (float beta : {0.0f, 1.0f}) {
            const std::string name = "syrk n=" + std::to_string(n) + " beta=" + std::to_string((int)beta);
            const int64_t ldc = n + 3;
            const vector<float> X = rnd(n * ldx, seed++), C0 = rnd(n * ldc, seed++);
            vector<float> Cc = C0, Cr = C0;
            cpu_table().syrk(n, k, alpha, X.data(), ldx, beta, Cc.data(), ldc);
            ref_table().syrk(n, k, alpha, X.data(), ldx, beta, Cr.data(), ldc);
            expect_rel(name, block(Cc, n, n, ldc), block(Cr, n, n, ldc));
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < i; j++)
                    ASSERT_EQ(Cr[i * ldc + j], Cr[j * ldc + i]) << name << ": not symmetric";
        }
}

// The decoding GEMM: the reference's result for every row count of each kernel class (the dot products up to
// decode_dot_rows, the lanes kernel up to decode_rows, oneDNN past it), and a row's result bitwise the same whatever
// rows share its call within a class.
TEST(RefKernelTable, LinearFwdDecodeMatchesAndIsRowIndependent) {
    const int64_t in = 67, out = 131, rows = cpu::decode_rows + 2;
    const vector<float> x = rnd(rows * in, 310), W = rnd(out * in, 311);
    for (int64_t N : {1, 2, 4, 5, 8, 16, 17, 20, 32, 33, 48, 64, 66})
        for (bool acc : {false, true}) {
            const vector<float> y0 = rnd(N * out, 312);
            vector<float> yc = y0, yr = y0;
            cpu_table().linear_fwd_decode(yc.data(), x.data(), W.data(), N, in, out, acc);
            ref_table().linear_fwd_decode(yr.data(), x.data(), W.data(), N, in, out, acc);
            expect_rel("linear_fwd_decode N=" + std::to_string(N) + (acc ? " accumulate" : ""), yc, yr);
        }
    // each class: every row of its largest call against the same row in calls of other sizes (alone where the class
    // starts at one row; else in the smallest call of the class holding it)
    const int64_t dot = cpu::decode_dot_rows, lanes = cpu::decode_rows;
    vector<float> together(lanes * out), alone(lanes * out);
    cpu_table().linear_fwd_decode(together.data(), x.data(), W.data(), dot, in, out, false);
    for (int64_t t = 0; t < dot; t++) {
        cpu_table().linear_fwd_decode(alone.data(), x.data() + t * in, W.data(), 1, in, out, false);
        for (int64_t o = 0; o < out; o++) ASSERT_EQ(alone[o], together[t * out + o]) << "row " << t << " col " << o;
    }
    cpu_table().linear_fwd_decode(together.data(), x.data(), W.data(), lanes, in, out, false);
    for (int64_t n : {dot + 1, int64_t{17}, int64_t{33}, lanes - 1})
        for (int64_t t0 = 0; t0 + n <= lanes; t0 += n) {
            cpu_table().linear_fwd_decode(alone.data(), x.data() + t0 * in, W.data(), n, in, out, false);
            for (int64_t t = 0; t < n; t++)
                for (int64_t o = 0; o < out; o++)
                    ASSERT_EQ(alone[t * out + o], together[(t0 + t) * out + o])
                        << "rows " << t0 << ".." << t0 + n - 1 << ", row " << t0 + t << " col " << o;
        }
}

// y = x·Wᵀ (+ y), dx = dy·W (+ dx), dW += dyᵀ·x.
TEST(RefKernelTable, LinearMatchesCpu) {
    const int64_t N = 7, in = 9, out = 5;
    const vector<float> x = rnd(N * in, 300), W = rnd(out * in, 301), dy = rnd(N * out, 302);
    for (bool acc : {false, true}) {
        const std::string a = acc ? " accumulate" : "";
        const vector<float> y0 = rnd(N * out, 303), dx0 = rnd(N * in, 304);
        vector<float> yc = y0, yr = y0, dxc = dx0, dxr = dx0;
        cpu_table().linear_fwd(yc.data(), x.data(), W.data(), N, in, out, acc);
        ref_table().linear_fwd(yr.data(), x.data(), W.data(), N, in, out, acc);
        expect_rel("linear_fwd" + a, yc, yr);
        cpu_table().linear_bwd_data(dxc.data(), dy.data(), W.data(), N, in, out, acc);
        ref_table().linear_bwd_data(dxr.data(), dy.data(), W.data(), N, in, out, acc);
        expect_rel("linear_bwd_data" + a, dxc, dxr);
        // the accumulated part, on its own
        if (acc) {
            expect_rel_inc("linear_fwd", yc, yr, y0);
            expect_rel_inc("linear_bwd_data", dxc, dxr, dx0);
        }
    }
    const vector<float> dW0 = rnd(out * in, 305);
    vector<float> dWc = dW0, dWr = dW0;
    cpu_table().linear_bwd_weight(dWc.data(), dy.data(), x.data(), N, in, out);
    ref_table().linear_bwd_weight(dWr.data(), dy.data(), x.data(), N, in, out);
    expect_rel_inc("linear_bwd_weight", dWc, dWr, dW0);
    expect_rel("linear_bwd_weight total", dWc, dWr);
}

// dst [rows,cols] += srcᵀ
TEST(RefKernelTable, AddTransposedMatchesCpu) {
    const int64_t rows = 7, cols = 5;
    const vector<float> src = rnd(cols * rows, 400), dst0 = rnd(rows * cols, 401);
    vector<float> dc = dst0, dr = dst0;
    cpu_table().add_transposed(dc.data(), src.data(), rows, cols);
    ref_table().add_transposed(dr.data(), src.data(), rows, cols);
    expect_rel_inc("add_transposed", dc, dr, dst0);
    EXPECT_EQ(dc, dr) << "one addition per element: bitwise equal";
}

// dtable[v] += Σ_{ids[n] = v} dout[n]; rows no token uses keep their values.
TEST(RefKernelTable, EmbeddingBackwardMatchesCpu) {
    const int64_t N = 11, d = 5, V = 7;
    std::mt19937 g(500);
    vector<int32_t> ids(N);
    for (auto& id : ids) id = (int32_t)(g() % 5);  // rows 0..4: repeats; row 5 unused
    ids[N - 1] = (int32_t)(V - 1);
    const vector<float> dout = rnd(N * d, 501), table0 = rnd(V * d, 502);
    vector<float> tc = table0, tr = table0;
    cpu_table().embedding_backward(tc.data(), dout.data(), ids.data(), N, d, V);
    ref_table().embedding_backward(tr.data(), dout.data(), ids.data(), N, d, V);
    expect_rel_inc("embedding_backward", tc, tr, table0);
    for (int64_t j = 0; j < d; j++) EXPECT_EQ(tr[5 * d + j], table0[5 * d + j]) << "unused row 5 changed";
}

// A negative id is a token another vocabulary shard holds: a zero row forward, nothing added backward.
TEST(RefKernelTable, EmbeddingNegativeIdsAreOtherShardsTokens) {
    const int64_t N = 6, d = 4, V = 5;
    const vector<int32_t> ids = {3, -1, 0, -1, 3, 4};
    const vector<float> table = rnd(V * d, 510), dout = rnd(N * d, 511);
    for (const kernel_table* t : {&cpu_table(), &ref_table()}) {
        vector<float> out(N * d, 7.0f);
        t->embedding_forward(out.data(), ids.data(), table.data(), N, d);
        for (int64_t n = 0; n < N; n++)
            for (int64_t j = 0; j < d; j++)
                EXPECT_EQ(out[n * d + j], ids[n] < 0 ? 0.0f : table[ids[n] * d + j]) << t->name << " row " << n;
        vector<float> dt(V * d, 0.0f);
        t->embedding_backward(dt.data(), dout.data(), ids.data(), N, d, V);
        for (int64_t j = 0; j < d; j++) {
            EXPECT_EQ(dt[3 * d + j], dout[0 * d + j] + dout[4 * d + j]) << t->name;
            EXPECT_EQ(dt[0 * d + j], dout[2 * d + j]) << t->name;
            EXPECT_EQ(dt[1 * d + j], 0.0f) << t->name;
        }
    }
}

// Σ CE over the valid rows, n_valid, and the logits overwritten by scale·(softmax − onehot) (0 on label −1 rows).
TEST(RefKernelTable, CrossEntropyFusedMatchesCpu) {
    const int64_t N = 9, V = 13;
    const double scale = 0.37;
    std::mt19937 g(600);
    vector<int32_t> labels(N);
    for (auto& l : labels) l = (int32_t)(g() % V);
    labels[2] = labels[6] = -1;
    const vector<float> logits = rnd(N * V, 601, 2.0);
    vector<float> gc = logits, gr = logits;
    int64_t nc = -1, nr = -1;
    const double lc = cpu_table().cross_entropy_fused(gc.data(), &nc, labels.data(), N, V, scale);
    const double lr = ref_table().cross_entropy_fused(gr.data(), &nr, labels.data(), N, V, scale);
    EXPECT_EQ(nr, N - 2);
    EXPECT_EQ(nc, nr);
    std::printf("[REF] %-50s cpu=%.9e ref=%.9e\n", "cross_entropy_fused loss", lc, lr);
    EXPECT_GT(lr, 0.0);
    EXPECT_LE(std::fabs(lc - lr) / std::fabs(lr), kTol);
    expect_rel("cross_entropy_fused grad", gc, gr);
    for (int64_t v = 0; v < V; v++) {
        EXPECT_EQ(gr[2 * V + v], 0.0f);
        EXPECT_EQ(gr[6 * V + v], 0.0f);
    }
}

// The vocabulary-parallel cross-entropy: the logits' columns split into shards (even and uneven), each shard's three
// steps with the reductions over the shards done here the way tensor parallelism does them (max, then sums in shard
// order). Loss, n_valid and every shard's gradient columns must equal the fused form's over the whole row; with one
// shard the CPU steps are the fused kernel bit for bit.
namespace {
struct shard_ce {
    double loss = 0;
    int64_t n_valid = -1;
    vector<float> grad;  // [N,V] put back together from the shards
};
shard_ce run_shards(const kernel_table& t, const vector<float>& logits, const vector<int32_t>& labels, int64_t N,
                    int64_t V, const vector<int64_t>& bounds, double scale) {
    const size_t S = bounds.size() - 1;
    vector<vector<float>> part(S), mx(S, vector<float>(N)), tg(S, vector<float>(N)), sm(S, vector<float>(N));
    for (size_t s = 0; s < S; s++) {
        const int64_t c = bounds[s + 1] - bounds[s];
        part[s] = block(vector<float>(logits.begin() + bounds[s], logits.end()), N, c, V);
        t.cross_entropy_shard_stats(mx[s].data(), tg[s].data(), part[s].data(), labels.data(), bounds[s], N, c);
    }
    vector<float> M(N), T(N, 0.0f), Z(N, 0.0f);
    for (int64_t n = 0; n < N; n++) {
        M[n] = mx[0][n];
        for (size_t s = 0; s < S; s++) M[n] = std::max(M[n], mx[s][n]), T[n] += tg[s][n];
    }
    for (size_t s = 0; s < S; s++)
        t.cross_entropy_shard_exp(sm[s].data(), part[s].data(), M.data(), N, bounds[s + 1] - bounds[s]);
    for (int64_t n = 0; n < N; n++)
        for (size_t s = 0; s < S; s++) Z[n] += sm[s][n];
    shard_ce r;
    r.grad.assign(N * V, 0.0f);
    for (size_t s = 0; s < S; s++) {
        const int64_t c = bounds[s + 1] - bounds[s];
        int64_t nv = -1;
        const double l = t.cross_entropy_shard_grad(part[s].data(), &nv, M.data(), Z.data(), T.data(), labels.data(),
                                                    bounds[s], N, c, scale);
        if (s == 0) r.loss = l, r.n_valid = nv;
        EXPECT_EQ(l, r.loss) << "every shard returns the same loss";
        for (int64_t n = 0; n < N; n++)
            for (int64_t j = 0; j < c; j++) r.grad[n * V + bounds[s] + j] = part[s][n * c + j];
    }
    return r;
}
}  // namespace

TEST(RefKernelTable, CrossEntropyShardsEqualTheFusedFormOverTheWholeRow) {
    const int64_t N = 9, V = 13;
    const double scale = 0.37;
    std::mt19937 g(610);
    vector<int32_t> labels(N);
    for (auto& l : labels) l = (int32_t)(g() % V);
    labels[2] = labels[6] = -1;
    labels[0] = 0, labels[1] = (int32_t)(V - 1);  // the first and last columns: a shard edge each
    const vector<float> logits = rnd(N * V, 611, 3.0);
    for (const kernel_table* t : {&cpu_table(), &ref_table()}) {
        vector<float> fused = logits;
        int64_t nf = -1;
        const double lf = t->cross_entropy_fused(fused.data(), &nf, labels.data(), N, V, scale);
        for (const vector<int64_t>& bounds :
             {vector<int64_t>{0, V}, vector<int64_t>{0, 6, V}, vector<int64_t>{0, 1, 5, 12, V}}) {
            const std::string what = std::string(t->name) + " shards " + std::to_string(bounds.size() - 1);
            const shard_ce r = run_shards(*t, logits, labels, N, V, bounds, scale);
            EXPECT_EQ(r.n_valid, nf) << what;
            EXPECT_LE(std::fabs(r.loss - lf) / lf, 1e-6) << what;
            expect_rel(what + " grad", r.grad, fused, 1e-6);
            for (int64_t v = 0; v < V; v++) EXPECT_EQ(r.grad[2 * V + v], 0.0f) << what;
            if (bounds.size() == 2 && t == &cpu_table()) {
                EXPECT_EQ(r.loss, lf) << "one shard: the fused kernel's bits";
                EXPECT_EQ(r.grad, fused) << "one shard: the fused kernel's bits";
            }
        }
    }
}

// h = swiglu(a13) with and without the clamp, with and without row_scale.
TEST(RefKernelTable, SwigluForwardRowScaleMatchesCpu) {
    const int64_t n = 7, I = 6;
    const vector<float> a13 = rnd(n * 2 * I, 700, 2.0), row_scale = rnd(n, 701, 0.3, 0.8);
    for (double limit : {0.0, 1.5})
        for (bool scaled : {false, true}) {
            const std::string name = "swiglu_forward limit=" + std::to_string(limit) + (scaled ? " row_scale" : "");
            vector<float> hc(n * I, 7.0f), hr(n * I, 7.0f);
            const float* rs = scaled ? row_scale.data() : nullptr;
            cpu_table().swiglu_forward(hc.data(), a13.data(), n, I, limit, rs);
            ref_table().swiglu_forward(hr.data(), a13.data(), n, I, limit, rs);
            expect_rel(name, hc, hr);
        }
    // row_scale does scale the rows
    vector<float> h1(n * I), hs(n * I);
    ref_table().swiglu_forward(h1.data(), a13.data(), n, I, 1.5, nullptr);
    ref_table().swiglu_forward(hs.data(), a13.data(), n, I, 1.5, row_scale.data());
    for (int64_t r = 0; r < n; r++)
        for (int64_t i = 0; i < I; i++) EXPECT_FLOAT_EQ(hs[r * I + i], row_scale[r] * h1[r * I + i]);
}

// hc_pre's forward, and its backward without dX_out (dX +=) and with it (dX = combᵀ·dX_out + the unit's gradient);
// both backwards read the CPU forward's mix and rho.
TEST(RefKernelTable, HcPreBackwardWithResidualMatchesCpu) {
    const int64_t N = 5, d = 7;
    mhc_dims dm;
    dm.n = 4;
    dm.d = (int)d;
    const int n = dm.n, rows = dm.rows();
    const int64_t nd = n * d;
    const vector<float> fn = rnd(rows * nd, 800, 1.0 / std::sqrt((double)nd)), base = rnd(rows, 801, 0.5),
                        scale = rnd(3, 802, 0.3, 1.0), X = rnd(N * nd, 803, 1.5);
    vector<float> y[2], post[2], comb[2], mix[2], rho[2];
    const kernel_table* tables[2] = {&cpu_table(), &ref_table()};
    for (int s = 0; s < 2; s++) {
        y[s].resize(N * d), post[s].resize(N * n), comb[s].resize(N * n * n), mix[s].resize(N * rows);
        rho[s].resize(N);
        tables[s]->hc_pre_forward(y[s].data(), post[s].data(), comb[s].data(), mix[s].data(), rho[s].data(), X.data(),
                                  fn.data(), base.data(), scale.data(), N, dm);
    }
    expect_rel("hc_pre_forward y", y[0], y[1]);
    expect_rel("hc_pre_forward post", post[0], post[1]);
    expect_rel("hc_pre_forward comb", comb[0], comb[1]);
    expect_rel("hc_pre_forward mix", mix[0], mix[1]);
    expect_rel("hc_pre_forward rho", rho[0], rho[1]);

    const vector<float> dy = rnd(N * d, 804), dpost = rnd(N * n, 805), dcomb = rnd(N * n * n, 806),
                        dX_out = rnd(N * nd, 807);
    for (bool residual : {false, true}) {
        const std::string tag = residual ? " (dX_out)" : "";
        const vector<float> dX0 = rnd(N * nd, 808), dfn0 = rnd(rows * nd, 809, 0.1), dbase0 = rnd(rows, 810, 0.1),
                            dscale0 = rnd(3, 811, 0.1);
        vector<float> dX[2] = {dX0, dX0}, dfn[2] = {dfn0, dfn0}, dbase[2] = {dbase0, dbase0},
                      dscale[2] = {dscale0, dscale0};
        for (int s = 0; s < 2; s++)
            tables[s]->hc_pre_backward(dX[s].data(), dfn[s].data(), dbase[s].data(), dscale[s].data(), dy.data(),
                                       dpost.data(), dcomb.data(), X.data(), fn.data(), base.data(), scale.data(),
                                       mix[0].data(), rho[0].data(), N, dm, residual ? dX_out.data() : nullptr);
        if (residual)
            expect_rel("hc_pre_backward dX" + tag, dX[0], dX[1]);  // assigned: the junk is gone in both
        else
            expect_rel_inc("hc_pre_backward dX" + tag, dX[0], dX[1], dX0);
        expect_rel_inc("hc_pre_backward dfn" + tag, dfn[0], dfn[1], dfn0);
        expect_rel_inc("hc_pre_backward dbase" + tag, dbase[0], dbase[1], dbase0);
        expect_rel_inc("hc_pre_backward dscale" + tag, dscale[0], dscale[1], dscale0);
    }
}

namespace {

// One MoE layer's inputs: E experts of which expert 3 gets no token, K distinct experts per token.
struct moe_case {
    int64_t N = 7, d = 8, I = 6;
    int E = 5, K = 2;
    double limit = 2.0;
    vector<int32_t> sel;
    vector<float> x, weight;
    vector<vector<float>> w13, w2;
    vector<const float*> w13p, w2p;

    moe_case() {
        std::mt19937 g(900);
        for (int64_t t = 0; t < N; t++) {
            vector<int32_t> pool = {0, 1, 2, 4};
            std::shuffle(pool.begin(), pool.end(), g);
            sel.insert(sel.end(), pool.begin(), pool.begin() + K);
        }
        x = rnd(N * d, 901);
        weight = rnd(N * K, 902, 0.3, 0.7);
        for (int e = 0; e < E; e++) {
            w13.push_back(rnd(2 * I * d, 910 + e, 0.5));
            w2.push_back(rnd(d * I, 920 + e, 0.5));
        }
        for (int e = 0; e < E; e++) w13p.push_back(w13[e].data()), w2p.push_back(w2[e].data());
    }
};

vector<float> concat(const vector<vector<float>>& v) {
    vector<float> out;
    for (const auto& a : v) out.insert(out.end(), a.begin(), a.end());
    return out;
}

}  // namespace

// The routed experts through each table's forward (permutation state, a13, y) and backward (dx, dweight assigned;
// dw13, dw2 +=), each backward on its own forward's state.
TEST(RefKernelTable, MoeExpertsMatchCpu) {
    const moe_case c;
    const int64_t N = c.N, d = c.d, I = c.I, NK = N * c.K;
    const kernel_table* tables[2] = {&cpu_table(), &ref_table()};
    moe_routing_storage store[2];
    moe_routing st[2];
    vector<float> y[2];
    for (int s = 0; s < 2; s++) {
        st[s] = store[s].view(N, c.E, c.K, I);
        std::fill(store[s].a13.begin(), store[s].a13.end(), 9.0f);
        y[s].assign(N * d, 9.0f);
        tables[s]->moe_experts_forward(y[s].data(), st[s], c.x.data(), c.sel.data(), c.weight.data(), c.w13p.data(),
                                       c.w2p.data(), N, d, c.E, c.K, I, c.limit);
    }
    expect_rel("moe_experts_forward y", y[0], y[1]);
    EXPECT_EQ(store[0].expert_offset, store[1].expert_offset);
    EXPECT_EQ(store[0].row_slot, store[1].row_slot);
    EXPECT_EQ(store[0].slot_row, store[1].slot_row);
    EXPECT_EQ(store[1].expert_offset[3], store[1].expert_offset[4]) << "expert 3 should have no rows";
    expect_rel("moe_experts_forward a13", store[0].a13, store[1].a13);

    // with an empty a13 the reference table leaves it alone and gives the same y
    {
        moe_routing_storage s2;
        moe_routing v = s2.view(N, c.E, c.K, I);
        v.a13 = {};
        vector<float> y2(N * d);
        ref_table().moe_experts_forward(y2.data(), v, c.x.data(), c.sel.data(), c.weight.data(), c.w13p.data(),
                                        c.w2p.data(), N, d, c.E, c.K, I, c.limit);
        EXPECT_EQ(y2, y[1]);
        EXPECT_EQ(s2.row_slot, store[1].row_slot);
    }

    const vector<float> dy = rnd(N * d, 930);
    vector<vector<float>> dw13_0, dw2_0;
    for (int e = 0; e < c.E; e++)
        dw13_0.push_back(rnd(2 * I * d, 940 + e, 0.1)), dw2_0.push_back(rnd(d * I, 950 + e, 0.1));
    vector<float> dx[2], dweight[2];
    vector<vector<float>> dw13[2] = {dw13_0, dw13_0}, dw2[2] = {dw2_0, dw2_0};
    for (int s = 0; s < 2; s++) {
        dx[s].assign(N * d, 9.0f);
        dweight[s].assign(NK, 9.0f);
        vector<float*> p13, p2;
        for (int e = 0; e < c.E; e++) p13.push_back(dw13[s][e].data()), p2.push_back(dw2[s][e].data());
        tables[s]->moe_experts_backward(dx[s].data(), dweight[s].data(), p13.data(), p2.data(), dy.data(), st[s],
                                        c.x.data(), c.weight.data(), c.w13p.data(), c.w2p.data(), N, d, c.E, c.K, I,
                                        c.limit);
    }
    expect_rel("moe_experts_backward dx", dx[0], dx[1]);
    expect_rel("moe_experts_backward dweight", dweight[0], dweight[1]);
    expect_rel_inc("moe_experts_backward dw13", concat(dw13[0]), concat(dw13[1]), concat(dw13_0));
    expect_rel_inc("moe_experts_backward dw2", concat(dw2[0]), concat(dw2[1]), concat(dw2_0));
    EXPECT_EQ(dw13[1][3], dw13_0[3]) << "expert 3 has no rows: its gradient must not change";
    EXPECT_EQ(dw2[1][3], dw2_0[3]);
}

// Expert parallelism's pieces: the permutation, gather, combine and the routing-weight step.
TEST(RefKernelTable, MoePermutationPiecesMatchCpu) {
    const moe_case c;
    const int64_t N = c.N, d = c.d, I = c.I, NK = N * c.K;
    moe_routing_storage sc, sr;
    moe_routing vc = sc.view(N, c.E, c.K, I), vr = sr.view(N, c.E, c.K, I);
    cpu_table().moe_build_permutation(vc, c.sel.data(), N, c.E, c.K);
    ref_table().moe_build_permutation(vr, c.sel.data(), N, c.E, c.K);
    EXPECT_EQ(sc.expert_offset, sr.expert_offset);
    EXPECT_EQ(sc.row_slot, sr.row_slot);
    EXPECT_EQ(sc.slot_row, sr.slot_row);

    vector<float> gc(NK * d), gr(NK * d);
    cpu_table().moe_gather_rows(gc.data(), c.x.data(), vc, d, c.K);
    ref_table().moe_gather_rows(gr.data(), c.x.data(), vr, d, c.K);
    EXPECT_EQ(gc, gr) << "a gather is a copy";

    const vector<float> rows = rnd(NK * d, 960);
    vector<float> yc(N * d, 9.0f), yr(N * d, 9.0f);
    cpu_table().moe_combine_rows(yc.data(), rows.data(), vc, N, d, c.K);
    ref_table().moe_combine_rows(yr.data(), rows.data(), vr, N, d, c.K);
    expect_rel("moe_combine_rows", yc, yr);

    const vector<float> h = rnd(NK * I, 961), dh0 = rnd(NK * I, 962), dyp0 = rnd(NK * d, 963);
    for (bool with_slot : {false, true}) {
        const std::string tag = with_slot ? " (slot)" : " (identity)";
        const int32_t* slot = with_slot ? sr.row_slot.data() : nullptr;
        vector<float> dhc = dh0, dhr = dh0, dypc = dyp0, dypr = dyp0, dwc(NK, 9.0f), dwr(NK, 9.0f);
        cpu_table().moe_route_weight_backward(dhc.data(), dypc.data(), dwc.data(), h.data(), c.weight.data(), slot, NK,
                                              I, d);
        ref_table().moe_route_weight_backward(dhr.data(), dypr.data(), dwr.data(), h.data(), c.weight.data(), slot, NK,
                                              I, d);
        expect_rel("moe_route_weight_backward dw" + tag, dwc, dwr);
        expect_rel("moe_route_weight_backward dh" + tag, dhc, dhr);
        expect_rel("moe_route_weight_backward dyp" + tag, dypc, dypr);
    }
}

// ---------------------------------------------------------------- the layers' passes and bookkeeping

TEST(RefKernelTable, ElementwisePassesMatchCpu) {
    const int64_t N = 7, n = 4, d = 9, R = 11, D = 13;
    const vector<float> x = rnd(N * d, 91), base = rnd(N * n * d, 92);
    for (bool acc : {false, true}) {
        vector<float> oc = base, orf = base;
        cpu_table().broadcast_streams(oc.data(), x.data(), N, n, d, acc);
        ref_table().broadcast_streams(orf.data(), x.data(), N, n, d, acc);
        expect_rel(acc ? "broadcast_streams (+=)" : "broadcast_streams", oc, orf);
    }
    vector<float> sc(N * d), sr(N * d);
    cpu_table().sum_streams(sc.data(), base.data(), N, n, d);
    ref_table().sum_streams(sr.data(), base.data(), N, n, d);
    expect_rel("sum_streams", sc, sr);
    vector<float> yc(N * d), yr(N * d);
    cpu_table().scale(yc.data(), x.data(), -0.37f, N * d);
    ref_table().scale(yr.data(), x.data(), -0.37f, N * d);
    expect_rel("scale", yc, yr);
    cpu_table().add(yc.data(), x.data(), N * d);
    ref_table().add(yr.data(), x.data(), N * d);
    expect_rel("add", yc, yr);
    cpu_table().copy(yc.data(), base.data(), N * d);
    ref_table().fill_zero(yr.data(), N * d);
    ref_table().copy(yr.data(), base.data(), N * d);
    expect_rel("copy", yc, yr);
    cpu_table().fill_zero(yc.data(), N * d);
    EXPECT_EQ(std::count(yc.begin(), yc.end(), 0.0f), N * d) << "fill_zero";
    // the unweighted RMS backward from the output: yhat normalised rows, their rstd
    const vector<float> xin = rnd(R * D, 93), dy = rnd(R * D, 94);
    vector<float> yhat(R * D), rstd(R), dxc(R * D), dxr(R * D);
    cpu_table().rmsnorm_forward(yhat.data(), rstd.data(), xin.data(), nullptr, R, D, 1e-6);
    cpu_table().rms_unweighted_backward(dxc.data(), dy.data(), yhat.data(), rstd.data(), R, D);
    ref_table().rms_unweighted_backward(dxr.data(), dy.data(), yhat.data(), rstd.data(), R, D);
    expect_rel("rms_unweighted_backward", dxc, dxr);
}

namespace {

// Two rows of 20 tokens: documents of 7 and 13 tokens, then one of 20; compressed entries of ratio m per document.
struct toy_geometry {
    int64_t N = 40;
    vector<int32_t> pos, doc_of;
    vector<int64_t> entry_offset;
    explicit toy_geometry(int m) {
        const int64_t lens[] = {7, 13, 20};
        int64_t entries = 0;
        for (int doc = 0; doc < 3; doc++) {
            entry_offset.push_back(entries);
            entries += m > 0 ? lens[doc] / m : 0;
            for (int64_t p = 0; p < lens[doc]; p++) {
                pos.push_back((int32_t)p);
                doc_of.push_back(doc);
            }
        }
    }
};

}  // namespace

TEST(RefKernelTable, AttentionKeysAndIndexerTargetMatchCpu) {
    const int64_t window = 5, kw = 3;
    for (int m : {0, 4, 8}) {
        SCOPED_TRACE("ratio " + std::to_string(m));
        const toy_geometry g(m);
        const int64_t N = g.N;
        // a CSA selection: min(kw, visible) distinct visible entries per query, ascending
        vector<int32_t> sel(N * kw, -1), nsel(N, 0);
        std::mt19937 rng(5);
        for (int64_t t = 0; m == 4 && t < N; t++) {
            const int64_t visible = (g.pos[t] + 1) / 4;
            vector<int32_t> all(visible);
            for (int64_t i = 0; i < visible; i++) all[i] = (int32_t)i;
            std::shuffle(all.begin(), all.end(), rng);
            nsel[t] = (int32_t)std::min(kw, visible);
            std::sort(all.begin(), all.begin() + nsel[t]);
            std::copy(all.begin(), all.begin() + nsel[t], sel.begin() + t * kw);
        }
        vector<int64_t> off_c(N + 1), off_r(N + 1);
        vector<int32_t> idx_c(N * 64, -7), idx_r(N * 64, -7), nw_c(N), nw_r(N);
        const int64_t kc =
            cpu_table().attention_keys(off_c.data(), idx_c.data(), nw_c.data(), g.pos.data(), g.doc_of.data(),
                                       g.entry_offset.data(), sel.data(), nsel.data(), kw, N, window, m);
        const int64_t kr =
            ref_table().attention_keys(off_r.data(), idx_r.data(), nw_r.data(), g.pos.data(), g.doc_of.data(),
                                       g.entry_offset.data(), sel.data(), nsel.data(), kw, N, window, m);
        EXPECT_EQ(kc, kr);
        EXPECT_EQ(off_c, off_r);
        EXPECT_EQ(nw_c, nw_r);
        EXPECT_EQ(idx_c, idx_r);
        EXPECT_EQ(nw_c[7], 1) << "the first token of a document sees only itself";
        EXPECT_EQ(nw_c[19], window);
        if (m != 4) continue;
        // the indexer target from random attention probabilities laid out per query as [h][key]
        const int H = 3;
        const vector<float> P = rnd(kc * H, 95, 0.2, 0.5);
        vector<double> sc(N * kw, -1.0), sr(N * kw, -2.0);
        cpu_table().indexer_head_sums(sc.data(), P.data(), off_c.data(), nw_c.data(), nsel.data(), N, H, kw);
        ref_table().indexer_head_sums(sr.data(), P.data(), off_c.data(), nw_c.data(), nsel.data(), N, H, kw);
        EXPECT_EQ(sc, sr);
        vector<float> pc(N * kw, 0.0f), pr(N * kw, 0.0f);
        cpu_table().indexer_target(pc.data(), sc.data(), nsel.data(), N, kw);
        ref_table().indexer_target(pr.data(), sc.data(), nsel.data(), N, kw);
        expect_rel("indexer_target", pc, pr);
        for (int64_t t = 0; t < N; t++) {
            double total = 0;
            for (int64_t j = 0; j < nsel[t]; j++) total += pc[t * kw + j];
            if (nsel[t] > 0) {
                EXPECT_NEAR(total, 1.0, 1e-6) << "query " << t;
            }
        }
    }
}

TEST(RefKernelTable, HashSelectionAndExpertLoadMatchCpu) {
    const int64_t N = 9, V = 6;
    const int K = 2, E = 5;
    vector<int32_t> tid2eid(V * K), ids(N);
    for (int64_t i = 0; i < V * K; i++) tid2eid[i] = (int32_t)((i * 3 + 1) % E);
    for (int64_t t = 0; t < N; t++) ids[t] = (int32_t)((t * 5) % V);
    vector<int32_t> sc(N * K), sr(N * K);
    cpu_table().hash_select(sc.data(), tid2eid.data(), ids.data(), N, K);
    ref_table().hash_select(sr.data(), tid2eid.data(), ids.data(), N, K);
    EXPECT_EQ(sc, sr);
    vector<int64_t> lc(E, 99), lr(E, 98);
    cpu_table().expert_load(lc.data(), sc.data(), N * K, E);
    ref_table().expert_load(lr.data(), sc.data(), N * K, E);
    EXPECT_EQ(lc, lr);
    int64_t total = 0;
    for (int64_t v : lc) total += v;
    EXPECT_EQ(total, N * K);
}
