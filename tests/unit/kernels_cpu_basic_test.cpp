// Fast CPU kernels against the reference (double) kernels: embedding, RMSNorm, RoPE, the oneDNN GEMM wrapper and
// the Linear helpers, the grouped output projection and cross-entropy. Each at a small odd size and a v4-tiny size.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "support/cpu_compare.hpp"
#include "trex/kernels/cpu/gemm.hpp"
#include "trex/kernels/cpu/ops.hpp"
#include "trex/kernels/cpu/vec_math.hpp"
#include "trex/kernels/ref/ops.hpp"

using namespace trex;
using namespace trex::test;
using std::vector;

namespace {

std::string tag(const char* op, int64_t N) {
    return std::string(op) + (N > 64 ? " [tiny]" : " [small]");
}

// ---------------------------------------------------------------- embedding
void check_embedding(int64_t N, int64_t d, int64_t V, int64_t n_ids, uint64_t seed) {
    // ids drawn from the first n_ids rows only: many repeats and unused rows
    std::mt19937 g(seed);
    vector<int32_t> ids(N);
    for (auto& id : ids) id = (int32_t)(g() % n_ids);
    ids[N - 1] = (int32_t)(V - 1);  // the last row
    const vector<double> table = randf(V * d, seed + 1);
    vector<double> out(N * d);
    vector<float> outf(N * d);
    ref::embedding_forward(out.data(), ids.data(), table.data(), N, d);
    const vector<float> tablef = to_f(table);
    cpu::embedding_forward(outf.data(), ids.data(), tablef.data(), N, d);
    EXPECT_EQ(rel_error(outf.data(), out.data(), N * d), 0.0) << "a lookup is a copy";

    const vector<double> dout = randf(N * d, seed + 2);
    vector<double> dtable(V * d, 0.0);
    ref::embedding_backward(dtable.data(), dout.data(), ids.data(), N, d);
    const vector<double> junk = junk_like(dtable, seed + 3);
    vector<float> dtablef = to_f(junk);
    cpu::embedding_backward(dtablef.data(), to_f(dout).data(), ids.data(), N, d, V);
    expect_close_acc(tag("embedding_backward dtable", N), dtablef, junk, dtable);
    // rows nobody used keep their junk bit for bit
    for (int64_t v = n_ids; v < V - 1; v++)
        for (int64_t j = 0; j < d; j++) ASSERT_EQ(dtablef[v * d + j], (float)junk[v * d + j]);
}

// ---------------------------------------------------------------- rmsnorm
void check_rmsnorm(int64_t N, int64_t D, bool weighted, uint64_t seed) {
    const std::string w_tag = weighted ? " weighted" : " unweighted";
    const double eps = 1e-6;
    const vector<double> x = randf(N * D, seed, 2.0), w = randf(D, seed + 1, 0.3, 1.0);
    vector<double> y(N * D), rstd(N);
    ref::rmsnorm_forward(y.data(), rstd.data(), x.data(), weighted ? w.data() : nullptr, N, D, eps);
    const vector<float> xf = to_f(x), wf = to_f(w);
    vector<float> yf(N * D), rstdf(N);
    cpu::rmsnorm_forward(yf.data(), rstdf.data(), xf.data(), weighted ? wf.data() : nullptr, N, D, eps);
    expect_close(tag("rmsnorm_forward y", N) + w_tag, yf, y);
    expect_close(tag("rmsnorm_forward rstd", N) + w_tag, rstdf, rstd);
    // in place (the model normalises the query heads in place)
    vector<float> inplace = xf, rstd2(N);
    cpu::rmsnorm_forward(inplace.data(), rstd2.data(), inplace.data(), weighted ? wf.data() : nullptr, N, D, eps);
    EXPECT_EQ(inplace, yf) << "in-place forward";

    const vector<double> dy = randf(N * D, seed + 2);
    vector<double> dx(N * D), dw(D, 0.0);
    ref::rmsnorm_backward(dx.data(), dw.data(), dy.data(), x.data(), weighted ? w.data() : nullptr, rstd.data(), N, D);
    const vector<double> junk_w = junk_like(dw, seed + 3);
    vector<float> dxf(N * D, 7.0f), dwf = to_f(junk_w);
    cpu::rmsnorm_backward(dxf.data(), dwf.data(), to_f(dy).data(), xf.data(), weighted ? wf.data() : nullptr,
                          rstdf.data(), N, D);
    expect_close(tag("rmsnorm_backward dx", N) + w_tag, dxf, dx);
    if (weighted) {
        expect_close_acc(tag("rmsnorm_backward dw", N), dwf, junk_w, dw);
    } else {
        EXPECT_EQ(dwf, to_f(junk_w)) << "unweighted: dw untouched";
    }
}

// ---------------------------------------------------------------- rope
// Tables as model/geometry.cpp builds them (compressed layers: YaRN), rounded to float; the double reference gets
// the same rounded values.
struct rope_tables {
    vector<float> cf, sf;
    vector<double> cd, sd;
    int half;
    int64_t n_pos;
};
rope_tables make_rope(int r, int64_t n_pos, bool yarn) {
    rope_tables t;
    t.half = r / 2;
    t.n_pos = n_pos;
    vector<double> theta(t.half);
    ref::rope_inv_freq(theta.data(), r, yarn ? 160000.0 : 10000.0, yarn, 4.0, 128, 32.0, 1.0);
    for (int64_t p = 0; p < n_pos; p++)
        for (int i = 0; i < t.half; i++) {
            t.cf.push_back((float)std::cos((double)p * theta[i]));
            t.sf.push_back((float)std::sin((double)p * theta[i]));
        }
    t.cd = to_d(t.cf);
    t.sd = to_d(t.sf);
    return t;
}

void check_rope(const vector<int64_t>& lens, int64_t nvec, int64_t c, int r, bool yarn, uint64_t seed) {
    const doc_layout L(lens);
    const int64_t N = L.N;
    const rope_tables t = make_rope(r, 600, yarn);
    const rope_table_t<double> td{t.cd.data(), t.sd.data(), t.half, t.n_pos};
    const rope_table_t<float> tf{t.cf.data(), t.sf.data(), t.half, t.n_pos};
    for (bool inverse : {false, true}) {
        const std::string name = tag(inverse ? "rope inverse" : "rope forward", N) + (yarn ? " yarn" : "");
        vector<double> x = randf(N * nvec * c, seed + inverse);
        vector<float> xf = to_f(x);
        ref::rope_forward(x.data(), L.pos.data(), td, N, nvec, c, inverse);
        cpu::rope_forward(xf.data(), L.pos.data(), tf, N, nvec, c, inverse);
        expect_close(name, xf, x);
        // the first c − r dims of every vector are untouched
        const vector<double> x0 = randf(N * nvec * c, seed + inverse);
        for (int64_t v = 0; v < N * nvec; v++)
            for (int64_t j = 0; j < c - r; j++) ASSERT_EQ(xf[v * c + j], (float)x0[v * c + j]);
    }
    // forward then inverse is the identity (up to rounding)
    vector<float> xf = to_f(randf(N * nvec * c, seed + 7)), x1 = xf;
    cpu::rope_forward(x1.data(), L.pos.data(), tf, N, nvec, c, false);
    cpu::rope_forward(x1.data(), L.pos.data(), tf, N, nvec, c, true);
    EXPECT_LT(rel_error(x1.data(), xf.data(), (long)xf.size()), 1e-6);
}

}  // namespace

TEST(KernelsCpuBasic, Embedding) {
    check_embedding(13, 7, 10, 4, 100);
    check_embedding(512, 256, 4096, 64, 200);
}

TEST(KernelsCpuBasic, RmsNorm) {
    for (bool weighted : {true, false}) {
        check_rmsnorm(11, 13, weighted, 300);
        check_rmsnorm(512, 256, weighted, 310);   // attn_norm / ffn_norm
        check_rmsnorm(512, 128, weighted, 320);   // q_norm, kv_norm (c = 128)
        check_rmsnorm(2048, 128, weighted, 330);  // per-head query norm (N·H rows)
    }
}

TEST(KernelsCpuBasic, Rope) {
    check_rope(small_docs(), 3, 13, 6, false, 400);
    check_rope(small_docs(), 1, 6, 6, true, 410);     // rope on the whole vector
    check_rope(tiny_docs(), 4, 128, 64, false, 420);  // queries, H = 4
    check_rope(tiny_docs(), 1, 128, 64, true, 430);   // kv, compressed layer (YaRN)
}

// ---------------------------------------------------------------- GEMM wrapper
namespace {
// C = alpha·op(A)·op(B) + beta·C in double on the stored (strided) matrices.
void gemm_ref(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const vector<double>& A, int64_t lda,
              const vector<double>& B, int64_t ldb, double beta, vector<double>& C, int64_t ldc) {
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double acc = 0;
            for (int64_t k = 0; k < K; k++)
                acc += (ta ? A[k * lda + i] : A[i * lda + k]) * (tb ? B[j * ldb + k] : B[k * ldb + j]);
            C[i * ldc + j] = alpha * acc + (beta == 0 ? 0.0 : beta * C[i * ldc + j]);
        }
}

void check_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, double beta, int64_t pad,
                uint64_t seed, double tol = kCpuTol) {
    const int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
    const int64_t rows_a = ta ? K : M, rows_b = tb ? N : K;
    const vector<double> A = randf(std::max<int64_t>(rows_a * lda, 1), seed),
                         B = randf(std::max<int64_t>(rows_b * ldb, 1), seed + 1);
    vector<double> C = randf(M * ldc, seed + 2);
    vector<float> Cf = to_f(C);
    if (beta == 0 && K > 0)  // BLAS convention: C is not read when beta == 0 (NaN junk must not leak)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) Cf[i * ldc + j] = std::numeric_limits<float>::quiet_NaN();
    const vector<float> Cf0 = Cf;
    gemm_ref(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    cpu::gemm(ta, tb, M, N, K, (float)alpha, to_f(A).data(), lda, to_f(B).data(), ldb, (float)beta, Cf.data(), ldc);
    char name[160];
    std::snprintf(name, sizeof name, "gemm %c%c M=%ld N=%ld K=%ld a=%g b=%g pad=%ld", ta ? 'T' : 'N', tb ? 'T' : 'N',
                  (long)M, (long)N, (long)K, alpha, beta, (long)pad);
    // compare the M×N block, and the padding columns must be untouched
    vector<float> blk;
    vector<double> blkr;
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) {
            blk.push_back(Cf[i * ldc + j]);
            blkr.push_back(C[i * ldc + j]);
        }
        for (int64_t j = N; j < ldc; j++) ASSERT_EQ(Cf[i * ldc + j], Cf0[i * ldc + j]) << name << ": padding written";
    }
    if (K == 0) {  // beta·C exactly
        for (size_t i = 0; i < blk.size(); i++) ASSERT_EQ(blk[i], (float)blkr[i]) << name;
        return;
    }
    expect_close(name, blk, blkr, tol);
}

// Linear helpers against ref::linear_forward / linear_backward, plain and accumulating.
void check_linear(int64_t N, int64_t in, int64_t out, uint64_t seed) {
    const vector<double> x = randf(N * in, seed), W = randf(out * in, seed + 1, 1.0 / std::sqrt((double)in)),
                         dy = randf(N * out, seed + 2);
    const vector<float> xf = to_f(x), Wf = to_f(W), dyf = to_f(dy);
    char buf[96];
    std::snprintf(buf, sizeof buf, " N=%ld in=%ld out=%ld", (long)N, (long)in, (long)out);
    const std::string sz = buf;

    vector<double> y(N * out);
    ref::linear_forward(y.data(), x.data(), W.data(), N, in, out);
    vector<float> yf(N * out, std::numeric_limits<float>::quiet_NaN());
    cpu::linear_fwd(yf.data(), xf.data(), Wf.data(), N, in, out);
    expect_close("linear_fwd" + sz, yf, y);
    const vector<double> y0 = junk_like(y, seed + 3);
    vector<float> yacc = to_f(y0);
    cpu::linear_fwd(yacc.data(), xf.data(), Wf.data(), N, in, out, true);
    expect_close_acc("linear_fwd accumulate" + sz, yacc, y0, y);

    vector<double> dx(N * in), dW(out * in, 0.0);
    ref::linear_backward(dx.data(), dW.data(), dy.data(), x.data(), W.data(), N, in, out);
    vector<float> dxf(N * in, std::numeric_limits<float>::quiet_NaN());
    cpu::linear_bwd_data(dxf.data(), dyf.data(), Wf.data(), N, in, out);
    expect_close("linear_bwd_data" + sz, dxf, dx);
    const vector<double> dx0 = junk_like(dx, seed + 4);
    vector<float> dxacc = to_f(dx0);
    cpu::linear_bwd_data(dxacc.data(), dyf.data(), Wf.data(), N, in, out, true);
    expect_close_acc("linear_bwd_data accumulate" + sz, dxacc, dx0, dx);
    const vector<double> dW0 = junk_like(dW, seed + 5);
    vector<float> dWf = to_f(dW0);
    cpu::linear_bwd_weight(dWf.data(), dyf.data(), xf.data(), N, in, out);
    expect_close_acc("linear_bwd_weight" + sz, dWf, dW0, dW);
}
}  // namespace

TEST(KernelsCpuBasic, GemmWrapper) {
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            check_gemm(ta, tb, 7, 5, 9, 1.0, 0.0, 0, 500);
            check_gemm(ta, tb, 7, 5, 9, 0.7, 1.0, 3, 510);
            check_gemm(ta, tb, 13, 11, 3, -1.3, -0.5, 2, 520);
            check_gemm(ta, tb, 1, 9, 17, 1.0, 0.0, 1, 530);
            check_gemm(ta, tb, 96, 80, 300, 1.0, 1.0, 5, 540);
        }
    // K = 0: C = beta·C (oneDNN is bypassed)
    for (double beta : {0.0, 1.0, 0.25}) check_gemm(false, true, 5, 7, 0, 1.0, beta, 2, 550);
    // M = 0 or N = 0: nothing is written
    float c = 3.0f, a = 1.0f;
    cpu::gemm(false, false, 0, 1, 1, 1.0f, &a, 1, &a, 1, 0.0f, &c, 1);
    cpu::gemm(false, false, 1, 0, 1, 1.0f, &a, 1, &a, 1, 0.0f, &c, 1);
    EXPECT_EQ(c, 3.0f);
}

// syrk: C = alpha·X·Xᵀ + beta·C against the double reference; sizes below, at and above the 64-row leaf (several
// recursion levels, odd splits), with padding (ldx, ldc > n), beta = 0 (C not read: NaN junk must not leak) and
// beta ≠ 0 (only the lower triangle of C is read); the result is exactly symmetric.
TEST(KernelsCpuBasic, SyrkMatchesReferenceAndIsSymmetric) {
    struct shape {
        int64_t n, k, pad;
        double alpha, beta;
    };
    const shape cases[] = {{1, 5, 0, 1.0, 0.0},    {7, 3, 2, 0.5, 1.0},     {64, 40, 0, 1.0, 0.0},
                           {65, 33, 1, -1.3, 0.7}, {130, 90, 3, 2.0, -4.8}, {300, 257, 0, 1.0, 0.0}};
    uint64_t seed = 560;
    for (const shape& c : cases) {
        const int64_t ldx = c.k + c.pad, ldc = c.n + c.pad;
        const vector<double> X = randf(c.n * ldx, seed++);
        vector<double> C0 = randf(c.n * ldc, seed++);
        for (int64_t i = 0; i < c.n; i++)  // a symmetric C on input (the documented use)
            for (int64_t j = 0; j < i; j++) C0[j * ldc + i] = C0[i * ldc + j];
        vector<double> C = C0;
        gemm_ref(false, true, c.n, c.n, c.k, c.alpha, X, ldx, X, ldx, c.beta, C, ldc);
        vector<float> Cf = to_f(C0);
        for (int64_t i = 0; i < c.n; i++)
            for (int64_t j = 0; j < c.n; j++)
                if (c.beta == 0.0 || j > i) Cf[i * ldc + j] = std::numeric_limits<float>::quiet_NaN();
        const vector<float> Cf0 = Cf;
        cpu::syrk(c.n, c.k, (float)c.alpha, to_f(X).data(), ldx, (float)c.beta, Cf.data(), ldc);
        char name[96];
        std::snprintf(name, sizeof name, "syrk n=%ld k=%ld a=%g b=%g", (long)c.n, (long)c.k, c.alpha, c.beta);
        vector<float> blk;
        vector<double> blkr;
        for (int64_t i = 0; i < c.n; i++) {
            for (int64_t j = 0; j < c.n; j++) {
                blk.push_back(Cf[i * ldc + j]);
                blkr.push_back(C[i * ldc + j]);
                ASSERT_EQ(Cf[i * ldc + j], Cf[j * ldc + i]) << name << ": not symmetric at " << i << "," << j;
            }
            for (int64_t j = c.n; j < ldc; j++) ASSERT_EQ(Cf[i * ldc + j], Cf0[i * ldc + j]) << name << ": padding";
        }
        expect_close(name, blk, blkr);
    }
}

TEST(KernelsCpuBasic, Linear) {
    check_linear(7, 13, 5, 600);
    check_linear(1, 3, 1, 610);
    {  // no tokens: nothing to write, dW += 0
        vector<float> W(15, 1.0f), dW(15, 2.0f);
        cpu::linear_fwd(nullptr, nullptr, W.data(), 0, 5, 3);
        cpu::linear_bwd_data(nullptr, nullptr, W.data(), 0, 5, 3);
        cpu::linear_bwd_weight(dW.data(), nullptr, nullptr, 0, 5, 3);
        for (float v : dW) EXPECT_EQ(v, 2.0f);
    }
    // v4-tiny projections at N = 512: wq_a, wq_b, wkv, compressor (2c), gate, indexer weights, shared w13/w2, head
    check_linear(512, 256, 128, 620);
    check_linear(512, 128, 512, 630);
    check_linear(512, 256, 256, 640);
    check_linear(512, 256, 8, 650);
    check_linear(512, 256, 4, 655);
    check_linear(512, 256, 512, 660);
    check_linear(512, 256, 256, 670);
    check_linear(512, 256, 4096, 680);
}

// ---------------------------------------------------------------- grouped output projection
namespace {
void check_grouped(int64_t N, int g, int64_t in_g, int64_t dg, uint64_t seed) {
    const vector<double> x = randf(N * g * in_g, seed),
                         Wa = randf(g * dg * in_g, seed + 1, 1.0 / std::sqrt((double)in_g)),
                         du = randf(N * g * dg, seed + 2);
    vector<double> u(N * g * dg), dx(N * g * in_g), dWa(g * dg * in_g, 0.0);
    ref::grouped_linear_forward(u.data(), x.data(), Wa.data(), N, g, in_g, dg);
    ref::grouped_linear_backward(dx.data(), dWa.data(), du.data(), x.data(), Wa.data(), N, g, in_g, dg);
    const vector<float> xf = to_f(x), Waf = to_f(Wa), duf = to_f(du);
    vector<float> uf(N * g * dg, 5.0f), dxf(N * g * in_g, 5.0f);
    cpu::grouped_linear_forward(uf.data(), xf.data(), Waf.data(), N, g, in_g, dg);
    const vector<double> dWa0 = junk_like(dWa, seed + 3);
    vector<float> dWaf = to_f(dWa0);
    cpu::grouped_linear_backward(dxf.data(), dWaf.data(), duf.data(), xf.data(), Waf.data(), N, g, in_g, dg);
    expect_close(tag("grouped_linear_forward u", N), uf, u);
    expect_close(tag("grouped_linear_backward dx", N), dxf, dx);
    expect_close_acc(tag("grouped_linear_backward dWa", N), dWaf, dWa0, dWa);
}
}  // namespace

TEST(KernelsCpuBasic, GroupedLinear) {
    check_grouped(7, 3, 11, 5, 700);
    check_grouped(512, 2, 256, 128, 710);  // H·c/g = 4·128/2, o_lora_rank 128
}

// ---------------------------------------------------------------- cross-entropy
namespace {
void check_cross_entropy(int64_t N, int64_t V, uint64_t seed) {
    const vector<double> logits = randf(N * V, seed, 2.0);
    std::mt19937 g(seed + 1);
    vector<int32_t> labels(N);
    for (auto& l : labels) l = (g() % 5 == 0) ? -1 : (int32_t)(g() % V);
    labels[0] = -1;
    labels[1] = (int32_t)(V - 1);
    const vector<float> lf = to_f(logits);
    int64_t nv_ref = 0, nv_fast = -1, nv_fused = -1;
    const double loss_ref = ref::cross_entropy_forward(&nv_ref, logits.data(), labels.data(), N, V);
    const double loss_fast = cpu::cross_entropy_forward(&nv_fast, lf.data(), labels.data(), N, V);
    EXPECT_EQ(nv_fast, nv_ref);
    expect_close_scalar(tag("cross_entropy_forward loss", N), loss_fast, loss_ref);
    const double scale = 1.0 / (double)nv_ref;
    vector<double> dl(N * V);
    ref::cross_entropy_backward(dl.data(), logits.data(), labels.data(), N, V, scale);
    vector<float> dlf(N * V, 9.0f);
    cpu::cross_entropy_backward(dlf.data(), lf.data(), labels.data(), N, V, scale);
    expect_close(tag("cross_entropy_backward dlogits", N), dlf, dl);
    vector<float> fused = lf;
    const double loss_fused = cpu::cross_entropy_fused(fused.data(), &nv_fused, labels.data(), N, V, scale);
    EXPECT_EQ(nv_fused, nv_ref);
    expect_close_scalar(tag("cross_entropy_fused loss", N), loss_fused, loss_ref);
    expect_close(tag("cross_entropy_fused dlogits", N), fused, dl);
    for (int64_t n = 0; n < N; n++) {
        if (labels[n] < 0) {
            for (int64_t v = 0; v < V; v++) ASSERT_EQ(fused[n * V + v], 0.0f) << "label −1 row " << n;
        }
    }
    // no valid label at all
    vector<int32_t> none(N, -1);
    vector<float> f2 = lf;
    EXPECT_EQ(cpu::cross_entropy_fused(f2.data(), &nv_fused, none.data(), N, V, 1.0), 0.0);
    EXPECT_EQ(nv_fused, 0);
    for (float v : f2) ASSERT_EQ(v, 0.0f);
}
}  // namespace

TEST(KernelsCpuBasic, CrossEntropy) {
    check_cross_entropy(9, 37, 800);
    check_cross_entropy(512, 4096, 810);
}

// exp_fast (every softmax, sigmoid and swiglu of the CPU kernels): relative error against double exp over the whole
// clamped range, through the vectorised loop the kernels use, with the rounding ties of x·log2 e (x = (k + ½)·ln 2)
// included; below the clamp it returns the clamp's value (≈ 1e-38), not 0.
TEST(KernelsCpuBasic, ExpFastIsAccurateOverItsRange) {
    std::vector<float> x;
    for (double v = -87.0; v <= 88.0; v += 0.0137) x.push_back((float)v);
    for (int k = -125; k <= 126; k++) x.push_back((float)((k + 0.5) * std::log(2.0)));
    for (float v : {0.0f, -0.0f, 1e-8f, -1e-8f, 1.0f, -1.0f}) x.push_back(v);
    std::vector<float> y(x.size());
    const int64_t n = (int64_t)x.size();
#pragma omp simd
    for (int64_t i = 0; i < n; i++) y[i] = trex::cpu::exp_fast(x[i]);
    double worst = 0;
    float worst_x = 0;
    for (int64_t i = 0; i < n; i++) {
        const double ref = std::exp((double)x[i]);
        const double rel = std::fabs(y[i] - ref) / ref;
        if (rel > worst) worst = rel, worst_x = x[i];
    }
    EXPECT_LT(worst, 2e-7) << "at x = " << worst_x;
    EXPECT_EQ(trex::cpu::exp_fast(0.0f), 1.0f);
    EXPECT_GT(trex::cpu::exp_fast(-1000.0f), 0.0f);
    EXPECT_LT(trex::cpu::exp_fast(-1000.0f), 1e-37f);
    std::printf("exp_fast: max relative error %.3g at x = %g over %lld points\n", worst, worst_x, (long long)n);
}
