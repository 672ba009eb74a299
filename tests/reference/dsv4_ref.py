"""Independent PyTorch reference of the T-Rex DeepSeek-V4 model (docs/model.md is the contract).

Parameters are a flat dict {checkpoint_name: tensor} with the official names of spec §4.4.1
(`embed.weight`, `layers.{i}.attn.wq_a.weight`, `layers.{i}.ffn.experts.{e}.w1.weight`, `mtp.0.e_proj.weight`, ...).
`ffn.gate.tid2eid` is an integer tensor, `ffn.gate.bias` a float buffer that only affects the expert selection.

The code is dtype-agnostic (float64 for fixtures, float32 for the benchmark), uses autograd for the backward pass and
is vectorised over tokens (Python loops only over layers, documents and experts), i.e. it is what an eager-PyTorch
user would write. Entry point: `forward(params, cfg, batch, mode=..., lambda_mtp=..., alpha_bal=..., lambda_idx=...)`.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

LOSS_NAMES = ("total", "lm", "mtp", "bal", "idx")


# ---------------------------------------------------------------------------------------------------------- config
@dataclass
class Config:
    raw: dict
    V: int
    d: int
    L: int
    H: int
    c: int
    r: int
    dc: int
    g: int
    dg: int
    win: int
    ratios: list
    rope_theta: float
    compress_rope_theta: float
    yarn_factor: float
    yarn_orig: int
    beta_fast: float
    beta_slow: float
    HI: int
    cI: int
    kI: int
    E: int
    K: int
    I: int
    n_shared: int
    n_hash: int
    rsf: float
    limit: float
    n_hc: int
    sk_iters: int
    hc_eps: float
    eps: float
    n_mtp: int = 1
    qat: str = "none"        # "release": the release's QAT simulation (docs/model.md §3.4), straight-through
    ties: str = "stable"     # indexer top-k ties: "stable" (lower entry first) or "torch" (torch.topk's choice)

    @staticmethod
    def from_dict(j: dict) -> "Config":
        rs = j.get("rope_scaling") or {}
        L = j["num_hidden_layers"]
        ratios = list(j["compress_ratios"])
        n_mtp = j.get("num_nextn_predict_layers", 1)
        if len(ratios) < L + n_mtp:
            raise ValueError("compress_ratios needs one entry per layer plus one per MTP block")
        cfg = Config(
            raw=j, V=j["vocab_size"], d=j["hidden_size"], L=L, H=j["num_attention_heads"], c=j["head_dim"],
            r=j["qk_rope_head_dim"], dc=j["q_lora_rank"], g=j["o_groups"], dg=j["o_lora_rank"],
            win=j["sliding_window"], ratios=ratios, rope_theta=float(j["rope_theta"]),
            compress_rope_theta=float(j["compress_rope_theta"]), yarn_factor=float(rs.get("factor", 1.0)),
            yarn_orig=int(rs.get("original_max_position_embeddings", j.get("max_position_embeddings", 1))),
            beta_fast=float(rs.get("beta_fast", 32)), beta_slow=float(rs.get("beta_slow", 1)),
            HI=j["index_n_heads"], cI=j["index_head_dim"], kI=j["index_topk"], E=j["n_routed_experts"],
            K=j["num_experts_per_tok"], I=j["moe_intermediate_size"], n_shared=j.get("n_shared_experts", 1),
            n_hash=j.get("num_hash_layers", 0), rsf=float(j["routed_scaling_factor"]),
            limit=float(j.get("swiglu_limit", 0.0) or 0.0), n_hc=j.get("hc_mult", 4),
            sk_iters=j.get("hc_sinkhorn_iters", 20), hc_eps=float(j.get("hc_eps", 1e-6)),
            eps=float(j.get("rms_norm_eps", 1e-6)), n_mtp=n_mtp)
        release = "quantization_config" in j   # a release checkpoint: the release's numerics unless keys say else
        fits = (cfg.c - cfg.r) % 64 == 0 and (4 not in ratios or (cfg.cI >= 32 and cfg.cI & (cfg.cI - 1) == 0))
        cfg.qat = j.get("qat", "release" if release and fits else "none")
        cfg.ties = j.get("indexer_ties", "torch" if release else "stable")
        assert cfg.qat in ("none", "release") and cfg.ties in ("stable", "torch")
        assert cfg.n_shared == 1, "the reference implements exactly one shared expert"
        assert cfg.n_mtp == 1, "the reference implements MTP depth 1"
        assert cfg.ratios[cfg.L] == 0, "the MTP block must be SWA-only (compress_ratios[L] == 0)"
        assert j.get("scoring_func", "sqrtsoftplus") == "sqrtsoftplus"
        return cfg

    @staticmethod
    def load(path: str) -> "Config":
        with open(path) as f:
            return Config.from_dict(json.load(f))

    def prefix(self, l: int) -> str:
        return f"layers.{l}." if l < self.L else f"mtp.{l - self.L}."

    def is_hash(self, l: int) -> bool:
        return l < self.n_hash

    def csa_layers(self):
        return [l for l in range(self.L + self.n_mtp) if self.ratios[l] == 4]


# ------------------------------------------------------------------------------------------------ parameter inventory
def param_shapes(cfg: Config) -> dict:
    """name -> (shape, kind); kind in {'matrix','norm','hc_fn','hc_base','hc_scale','sink','ape','bias','tid2eid'}."""
    d, n = cfg.d, cfg.n_hc
    rows = (2 + n) * n
    s = {"embed.weight": ((cfg.V, d), "embed"), "head.weight": ((cfg.V, d), "matrix"), "norm.weight": ((d,), "norm"),
         "hc_head_fn": ((n, n * d), "hc_fn"), "hc_head_base": ((n,), "hc_base"), "hc_head_scale": ((1,), "hc_scale")}
    for l in range(cfg.L + cfg.n_mtp):
        p = cfg.prefix(l)
        m = cfg.ratios[l]
        s[p + "attn_norm.weight"] = ((d,), "norm")
        s[p + "ffn_norm.weight"] = ((d,), "norm")
        for u in ("attn", "ffn"):
            s[p + f"hc_{u}_fn"] = ((rows, n * d), "hc_fn")
            s[p + f"hc_{u}_base"] = ((rows,), "hc_base")
            s[p + f"hc_{u}_scale"] = ((3,), "hc_scale")
        a = p + "attn."
        s[a + "attn_sink"] = ((cfg.H,), "sink")
        s[a + "wq_a.weight"] = ((cfg.dc, d), "matrix")
        s[a + "q_norm.weight"] = ((cfg.dc,), "norm")
        s[a + "wq_b.weight"] = ((cfg.H * cfg.c, cfg.dc), "matrix")
        s[a + "wkv.weight"] = ((cfg.c, d), "matrix")
        s[a + "kv_norm.weight"] = ((cfg.c,), "norm")
        s[a + "wo_a.weight"] = ((cfg.g * cfg.dg, cfg.H * cfg.c // cfg.g), "matrix")
        s[a + "wo_b.weight"] = ((d, cfg.g * cfg.dg), "matrix")
        if m > 0:
            coff = 2 if m == 4 else 1
            s[a + "compressor.wkv.weight"] = ((coff * cfg.c, d), "matrix")
            s[a + "compressor.wgate.weight"] = ((coff * cfg.c, d), "gate_matrix")
            s[a + "compressor.ape"] = ((m, coff * cfg.c), "ape")
            s[a + "compressor.norm.weight"] = ((cfg.c,), "norm")
        if m == 4:
            s[a + "indexer.wq_b.weight"] = ((cfg.HI * cfg.cI, cfg.dc), "matrix")
            s[a + "indexer.weights_proj.weight"] = ((cfg.HI, d), "matrix")
            s[a + "indexer.compressor.wkv.weight"] = ((2 * cfg.cI, d), "matrix")
            s[a + "indexer.compressor.wgate.weight"] = ((2 * cfg.cI, d), "gate_matrix")
            s[a + "indexer.compressor.ape"] = ((4, 2 * cfg.cI), "ape")
            s[a + "indexer.compressor.norm.weight"] = ((cfg.cI,), "norm")
        f = p + "ffn."
        s[f + "gate.weight"] = ((cfg.E, d), "router")
        if cfg.is_hash(l):
            s[f + "gate.tid2eid"] = ((cfg.V, cfg.K), "tid2eid")
        else:
            s[f + "gate.bias"] = ((cfg.E,), "bias")
        for e in range(cfg.E):
            s[f + f"experts.{e}.w1.weight"] = ((cfg.I, d), "matrix")
            s[f + f"experts.{e}.w2.weight"] = ((d, cfg.I), "matrix")
            s[f + f"experts.{e}.w3.weight"] = ((cfg.I, d), "matrix")
        s[f + "shared_experts.w1.weight"] = ((cfg.I, d), "matrix")
        s[f + "shared_experts.w2.weight"] = ((d, cfg.I), "matrix")
        s[f + "shared_experts.w3.weight"] = ((cfg.I, d), "matrix")
        if l >= cfg.L:
            s[p + "e_proj.weight"] = ((d, d), "matrix")
            s[p + "h_proj.weight"] = ((d, d), "matrix")
            s[p + "enorm.weight"] = ((d,), "norm")
            s[p + "hnorm.weight"] = ((d,), "norm")
            s[p + "norm.weight"] = ((d,), "norm")
            s[p + "hc_head_fn"] = ((n, n * d), "hc_fn")
            s[p + "hc_head_base"] = ((n,), "hc_base")
            s[p + "hc_head_scale"] = ((1,), "hc_scale")
    return s


def is_trainable(name: str) -> bool:
    return not (name.endswith("gate.bias") or name.endswith("gate.tid2eid"))


def _gen(seed: int, name: str) -> torch.Generator:
    # (seed, name) -> independent stream, so a tensor's values do not depend on the order of creation.
    h = 1469598103934665603
    for ch in f"{seed}:{name}".encode():
        h = ((h ^ ch) * 1099511628211) & ((1 << 63) - 1)
    return torch.Generator().manual_seed(h)


def init_params(cfg: Config, seed: int = 0, dtype=torch.float64, style: str = "signal") -> dict:
    """Random parameters. style='signal': every path carries signal (fixtures, HF check); style='contract': §5 init."""
    out = {}
    for name, (shape, kind) in param_shapes(cfg).items():
        g = _gen(seed, name)
        if kind == "tid2eid":
            t = torch.stack([torch.randperm(cfg.E, generator=g)[:cfg.K] for _ in range(cfg.V)])
            out[name] = t.to(torch.int64)
            continue
        z = torch.randn(shape, generator=g, dtype=torch.float64)
        u = torch.rand(shape, generator=g, dtype=torch.float64)
        if style == "contract":
            t = {"norm": torch.ones(shape, dtype=torch.float64), "hc_scale": torch.full(shape, 0.01, dtype=torch.float64)
                 }.get(kind, None)
            if t is None:
                t = z * 0.006 if kind in ("matrix", "gate_matrix", "router", "embed", "hc_fn") else torch.zeros(shape, dtype=torch.float64)
        else:
            fan_in = shape[-1] if len(shape) == 2 else 1
            if kind == "embed":
                t = z
            elif kind == "matrix":
                t = z / math.sqrt(fan_in)
            elif kind == "gate_matrix":
                t = z * 2.0 / math.sqrt(fan_in)  # compressor gates: non-uniform pooling weights
            elif kind == "router":
                t = z * 2.0 / math.sqrt(fan_in)  # router: diverse scores
            elif kind == "hc_fn":
                t = z / math.sqrt(fan_in)
            elif kind == "norm":
                t = 1.0 + 0.1 * z
            elif kind in ("sink", "ape", "hc_base"):
                t = 0.5 * z
            elif kind == "hc_scale":
                t = 0.5 * (0.5 + u)
            elif kind == "bias":
                t = 0.05 * z
            else:
                raise ValueError(kind)
        out[name] = t.to(dtype)
    if style == "signal" and cfg.limit > 0:
        # "hot" rows so that some SwiGLU pre-activations clearly exceed the clamp (the clamp path gets tested).
        for l in range(cfg.L + cfg.n_mtp):
            f = cfg.prefix(l) + "ffn."
            out[f + "experts.0.w1.weight"][0] *= 20.0
            out[f + "experts.0.w3.weight"][1] *= 20.0
            out[f + f"experts.{cfg.E - 1}.w3.weight"][2] *= 20.0
            out[f + "shared_experts.w3.weight"][0] *= 20.0
            out[f + "shared_experts.w1.weight"][1] *= 20.0
    return out


# ----------------------------------------------------------------------------------------------- batch layout
@dataclass
class CompLayout:
    m: int
    T: int                      # entries per row (padded to the max over rows)
    own: torch.Tensor           # [B,T,m] row-local slot of the own window
    prev: torch.Tensor          # [B,T,m] row-local slot of the previous window (valid if prev_ok)
    prev_ok: torch.Tensor       # [B,T] bool (entry index within its document > 0)
    valid: torch.Tensor         # [B,T] bool (not padding)
    pos: torch.Tensor           # [B,T] document position i·m of the entry
    idx: torch.Tensor           # [B,T] entry index i within its document
    visible: torch.Tensor       # [B,S,T] bool: entry visible to query (same document, (i+1)·m <= p+1)
    n_visible: torch.Tensor     # [B,S]


@dataclass
class Layout:
    B: int
    S: int
    pos: torch.Tensor           # [B,S] int64 document position
    doc: torch.Tensor           # [B,S] int64 document id (unique within the batch)
    docs: list                  # per row: list of (start, length)
    window: torch.Tensor        # [B,S,S] bool
    comp: dict = field(default_factory=dict)   # m -> CompLayout
    rope: dict = field(default_factory=dict)   # (kind, dtype) -> (cos,sin) cache


def build_layout(doc_start: torch.Tensor, cfg: Config) -> Layout:
    ds = doc_start.to(torch.int64).clone()
    B, S = ds.shape
    ds[:, 0] = 1  # slot 0 of every row is always a document start
    slot = torch.arange(S)
    start_slot = torch.cummax(torch.where(ds > 0, slot.expand(B, S), torch.zeros_like(ds)), dim=1).values
    pos = slot.expand(B, S) - start_slot
    doc = torch.cumsum(ds.reshape(-1), 0).reshape(B, S) - 1
    docs = []
    for b in range(B):
        st = torch.nonzero(ds[b]).flatten().tolist()
        docs.append([(s0, (st[i + 1] if i + 1 < len(st) else S) - s0) for i, s0 in enumerate(st)])
    t = slot.view(S, 1)
    s = slot.view(1, S)
    window = (doc.unsqueeze(2) == doc.unsqueeze(1)) & (s <= t) & (t - s < cfg.win)
    lay = Layout(B=B, S=S, pos=pos, doc=doc, docs=docs, window=window)
    for m in sorted(set(x for x in cfg.ratios if x > 0)):
        rows = []
        for b in range(B):
            ent = []
            for (s0, ln) in docs[b]:
                for i in range(ln // m):
                    ent.append((s0, i))
            rows.append(ent)
        T = max(1, max(len(e) for e in rows))
        own = torch.zeros(B, T, m, dtype=torch.int64)
        prev = torch.zeros(B, T, m, dtype=torch.int64)
        prev_ok = torch.zeros(B, T, dtype=torch.bool)
        valid = torch.zeros(B, T, dtype=torch.bool)
        epos = torch.zeros(B, T, dtype=torch.int64)
        eidx = torch.zeros(B, T, dtype=torch.int64)
        edoc = torch.full((B, T), -1, dtype=torch.int64)
        ar = torch.arange(m)
        for b, ent in enumerate(rows):
            for j, (s0, i) in enumerate(ent):
                own[b, j] = s0 + i * m + ar
                if i > 0:
                    prev[b, j] = s0 + (i - 1) * m + ar
                    prev_ok[b, j] = True
                valid[b, j] = True
                epos[b, j] = i * m
                eidx[b, j] = i
                edoc[b, j] = doc[b, s0]
        vis = valid.unsqueeze(1) & (edoc.unsqueeze(1) == doc.unsqueeze(2)) & \
            ((eidx.unsqueeze(1) + 1) * m <= pos.unsqueeze(2) + 1)
        lay.comp[m] = CompLayout(m=m, T=T, own=own, prev=prev, prev_ok=prev_ok, valid=valid, pos=epos, idx=eidx,
                                 visible=vis, n_visible=vis.sum(-1))
    return lay


# ------------------------------------------------------------------------------------------------------ basic ops
def rmsnorm(x, w, eps):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y if w is None else y * w


def rope_inv_freq(cfg: Config, yarn: bool) -> torch.Tensor:
    """θ_i (float64) of docs/model.md §3.2."""
    r = cfg.r
    base = cfg.compress_rope_theta if yarn else cfg.rope_theta
    i = torch.arange(r // 2, dtype=torch.float64)
    theta = base ** (-2.0 * i / r)
    if yarn:
        L0, bf, bs, fac = cfg.yarn_orig, cfg.beta_fast, cfg.beta_slow, cfg.yarn_factor
        low = math.floor(r * math.log(L0 / (bf * 2 * math.pi)) / (2 * math.log(base)))
        high = math.ceil(r * math.log(L0 / (bs * 2 * math.pi)) / (2 * math.log(base)))
        low, high = max(low, 0), min(high, r - 1)
        if high == low:
            high += 0.001
        ramp = ((i - low) / (high - low)).clamp(0, 1)
        theta = theta / fac * ramp + theta * (1 - ramp)
    return theta


def rope_table(lay: Layout, cfg: Config, yarn: bool, pos: torch.Tensor, dtype, key):
    k = (key, yarn, dtype)
    if k not in lay.rope:
        ang = pos.to(torch.float64).unsqueeze(-1) * rope_inv_freq(cfg, yarn)   # angles in double, rounded once
        lay.rope[k] = (ang.cos().to(dtype), ang.sin().to(dtype))
    return lay.rope[k]


def apply_rope(x, cos, sin, r, inverse=False):
    """Interleaved RoPE on the last r dims of x [..., c]; cos/sin [..., r/2] broadcastable after adding head dims."""
    nope, rp = x[..., :-r], x[..., -r:]
    x0, x1 = rp[..., 0::2], rp[..., 1::2]
    if inverse:
        sin = -sin
    y0 = x0 * cos - x1 * sin
    y1 = x0 * sin + x1 * cos
    return torch.cat([nope, torch.stack([y0, y1], dim=-1).flatten(-2)], dim=-1)


def softplus_exact(u):
    return u.clamp(min=0) + torch.log1p(torch.exp(-u.abs()))


def swiglu(x, w1, w3, w2, limit, rec=None, tag=None):
    a1 = x @ w1.t()
    a3 = x @ w3.t()
    if rec is not None:
        rec.setdefault("swiglu", []).append((tag, a1.detach(), a3.detach()))
    if limit > 0:
        a1 = a1.clamp(max=limit)
        a3 = a3.clamp(min=-limit, max=limit)
    return (F.silu(a1) * a3) @ w2.t()


# ------------------------------------------------------------------------------------------------------------ mHC
def hc_pre(X, fn, base, scale, cfg: Config):
    n = cfg.n_hc
    xf = X.flatten(-2)                                                  # [B,S,n*d], stream-major
    rho = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + cfg.eps)
    mix = rho * (xf @ fn.t())                                           # [B,S,(2+n)n]
    pre = torch.sigmoid(mix[..., :n] * scale[0] + base[:n]) + cfg.hc_eps
    post = 2 * torch.sigmoid(mix[..., n:2 * n] * scale[1] + base[n:2 * n])
    R = (mix[..., 2 * n:] * scale[2] + base[2 * n:]).unflatten(-1, (n, n))
    P = torch.softmax(R, dim=-1) + cfg.hc_eps
    P = P / (P.sum(-2, keepdim=True) + cfg.hc_eps)
    for _ in range(cfg.sk_iters - 1):
        P = P / (P.sum(-1, keepdim=True) + cfg.hc_eps)
        P = P / (P.sum(-2, keepdim=True) + cfg.hc_eps)
    y = (pre.unsqueeze(-1) * X).sum(-2)
    return y, post, P


def hc_post(F_, X, post, comb):
    # X'_k = post_k F + Σ_j comb_{jk} X_j
    return post.unsqueeze(-1) * F_.unsqueeze(-2) + torch.einsum("bsjk,bsjd->bskd", comb, X)


def hc_head(X, fn, base, scale, cfg: Config):
    xf = X.flatten(-2)
    rho = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + cfg.eps)
    mix = rho * (xf @ fn.t())
    pre = torch.sigmoid(mix * scale[0] + base) + cfg.hc_eps
    return (pre.unsqueeze(-1) * X).sum(-2)


# ------------------------------------------------------------------------------------------------------ attention
def _gather_rows(x, idx):
    """x [B,S,C], idx [B,T,m] -> [B,T,m,C]."""
    B, T, m = idx.shape
    return torch.gather(x, 1, idx.reshape(B, T * m, 1).expand(B, T * m, x.shape[-1])).reshape(B, T, m, x.shape[-1])


# ------------------------------------------------------------------------------------------------ release QAT
# The release's QAT simulation (spec §4.3), written from its definition: per block of the last dim the scale is the
# power of two 2^ceil(log2(p)), p = max(amax, floor)·(1/qmax) computed in float32 as the release's kernel does; values
# are clamped to ±qmax·s, rounded to the format (FP8 E4M3 by torch's own float8 cast, FP4 E2M1 by round-half-even on
# its grid) and scaled back. Gradients pass straight through (x + (fq(x) − x).detach()).
def _release_scale(blocks, qmax, floor):
    a = blocks.detach().abs().amax(-1, keepdim=True).to(torch.float32).clamp_min(floor)
    p = a * (1.0 / qmax)                                         # float32 product, as fast_round_scale
    m, e = torch.frexp(p)                                        # p = m·2^e, m in [0.5, 1)
    e = torch.where(m == 0.5, e - 1, e)                          # an exact power of two keeps its exponent
    return torch.ldexp(torch.ones_like(p), e).to(blocks.dtype)


def _fp8_e4m3(q):
    return q.to(torch.float8_e4m3fn).to(q.dtype)


def _fp4_e2m1(q):
    a = q.abs()
    step = torch.where(a < 2, torch.full_like(a, 0.5), torch.where(a < 4, torch.ones_like(a), torch.full_like(a, 2.0)))
    return torch.round(q / step) * step                          # torch.round: half to even


# When a list: every fake_quant call appends (kind, the smallest relative change of one of its inputs that would
# change the result — a value crossing a rounding midpoint, or a block's amax crossing a scale boundary). Fixtures
# use it to keep the discontinuities away from fp32 noise.
QAT_MARGINS = None


def _rounding_step(a, kind):
    """The spacing of the format's grid around |q| = a."""
    if kind == "fp8":
        e = torch.floor(torch.log2(a.clamp_min(2.0 ** -6)))
        return torch.where(a < 2.0 ** -6, torch.full_like(a, 2.0 ** -9), torch.pow(2.0, e - 3))
    return torch.where(a < 2, torch.full_like(a, 0.5), torch.where(a < 4, torch.ones_like(a), torch.full_like(a, 2.0)))


def _record_margin(q, s, qmax, kind):
    a = q.abs()
    step = _rounding_step(a, kind)
    frac = a / step - torch.floor(a / step)
    rel = torch.where(a > 0, (frac - 0.5).abs() * step / a.clamp_min(1e-300), torch.ones_like(a))
    amax = a.amax(-1)
    ratio = amax / qmax                                          # in (1/2, 1] unless the floor set the scale
    rel_scale = torch.where(amax > 0, torch.minimum((ratio - 0.5).abs() / 0.5, (1 - ratio).abs()),
                            torch.ones_like(amax))
    QAT_MARGINS.append((kind, min(float(rel.min()), float(rel_scale.min()))))


def fake_quant(x, block, kind):
    """Straight-through block fake quantisation of x [..., n] (n % block == 0): kind "fp8" or "fp4"."""
    qmax, floor, rnd = (448.0, 1e-4, _fp8_e4m3) if kind == "fp8" else (6.0, 6.0 * 2.0 ** -126, _fp4_e2m1)
    blocks = x.detach().unflatten(-1, (-1, block))
    s = _release_scale(blocks, qmax, floor)
    q = (blocks / s).clamp(-qmax, qmax)
    if QAT_MARGINS is not None:
        _record_margin(q, s, qmax, kind)
    y = (rnd(q) * s).flatten(-2)
    return x + (y - x).detach()


def hadamard(x):
    """x·H/√n over the last dim (Sylvester H, n a power of two)."""
    n = x.shape[-1]
    H = torch.ones(1, 1, dtype=x.dtype)
    while H.shape[0] < n:
        H = torch.cat([torch.cat([H, H], 1), torch.cat([H, -H], 1)], 0)
    return (x @ H) * n ** -0.5


def qat_kv(kv, cfg: Config):
    """Window / compressed KV: the non-RoPE dims to FP8 in blocks of 64."""
    if cfg.qat != "release":
        return kv
    return torch.cat([fake_quant(kv[..., :cfg.c - cfg.r], 64, "fp8"), kv[..., cfg.c - cfg.r:]], dim=-1)


def qat_index(x, cfg: Config):
    """Indexer queries and keys: Hadamard-rotated, then FP4 in blocks of 32."""
    if cfg.qat != "release":
        return x
    return fake_quant(hadamard(x), 32, "fp4")


def compressor(a, P, pre, cl: CompLayout, c, cfg: Config, lay: Layout):
    """Pooled, normed and roped compressed entries [B,T,c] (docs/model.md §3.4), then the release's QAT of the
    attention's (c = head_dim) or the indexer's (c = index_head_dim) compressed vectors."""
    kv = a @ P[pre + "wkv.weight"].t()
    gt = a @ P[pre + "wgate.weight"].t()
    ape = P[pre + "ape"]
    m = cl.m
    own_kv = _gather_rows(kv, cl.own)                     # [B,T,m,coff*c]
    own_g = _gather_rows(gt, cl.own) + ape
    if m == 4:
        prev_kv = _gather_rows(kv, cl.prev)[..., :c]
        prev_g = (_gather_rows(gt, cl.prev) + ape)[..., :c]
        ok = cl.prev_ok.view(*cl.prev_ok.shape, 1, 1)
        prev_g = torch.where(ok, prev_g, torch.full_like(prev_g, float("-inf")))
        prev_kv = torch.where(ok, prev_kv, torch.zeros_like(prev_kv))
        kvs = torch.cat([prev_kv, own_kv[..., c:]], dim=2)   # [B,T,2m,c]
        gs = torch.cat([prev_g, own_g[..., c:]], dim=2)
    else:
        kvs, gs = own_kv, own_g
    w = torch.softmax(gs, dim=2)
    pooled = (w * kvs).sum(2)
    pooled = rmsnorm(pooled, P[pre + "norm.weight"], cfg.eps)
    cos, sin = rope_table(lay, cfg, True, cl.pos, pooled.dtype, ("comp", m))
    out = apply_rope(pooled, cos, sin, cfg.r)
    return qat_index(out, cfg) if pre.endswith("indexer.compressor.") else qat_kv(out, cfg)


def indexer_scores(P, a_d, qr_d, pre, cfg: Config, lay: Layout, return_pre=False):
    """I [B,S,T] from detached inputs a_d [B,S,d] (attention input) and qr_d [B,S,dc]."""
    B, S, _ = a_d.shape
    cl = lay.comp[4]
    qI = (qr_d @ P[pre + "indexer.wq_b.weight"].t()).view(B, S, cfg.HI, cfg.cI)
    cos, sin = rope_table(lay, cfg, True, lay.pos, qI.dtype, "tok")
    qI = qat_index(apply_rope(qI, cos.unsqueeze(2), sin.unsqueeze(2), cfg.r), cfg)
    KI = compressor(a_d, P, pre + "indexer.compressor.", cl, cfg.cI, cfg, lay)     # [B,T,cI]
    w = (a_d @ P[pre + "indexer.weights_proj.weight"].t()) * (cfg.cI * cfg.HI) ** -0.5  # [B,S,HI]
    x = torch.einsum("bshc,btc->bsht", qI, KI)                                          # [B,S,HI,T]
    I = (torch.relu(x) * w.unsqueeze(-1)).sum(2)
    return (I, x, w) if return_pre else I


def select_topk_torch(I, visible, k, cl: CompLayout, lay: Layout):
    """The release's selection: per document, torch.topk(min(k, T_doc)) over the document's T_doc = floor(len/4)
    entries with the invisible ones at -inf (its prefill mask), invisible picks dropped."""
    Im = I.detach().masked_fill(~visible, float("-inf"))
    sel = torch.zeros_like(visible)
    for b in range(lay.B):
        j0 = 0
        for (s0, ln) in lay.docs[b]:
            Td = ln // cl.m
            if Td > 0:
                idx = Im[b, s0:s0 + ln, j0:j0 + Td].topk(min(k, Td), dim=-1).indices + j0
                sel[b, s0:s0 + ln].scatter_(-1, idx, True)
            j0 += Td
    return sel & visible


def select_topk(I, visible, k):
    """Boolean selection [B,S,T]: the top-min(k, visible) visible entries, ties toward the lower entry index."""
    Im = I.detach().masked_fill(~visible, float("-inf"))
    order = torch.sort(Im, dim=-1, descending=True, stable=True).indices[..., :k]
    sel = torch.zeros_like(visible)
    sel.scatter_(-1, order, True)
    return sel & visible


def attention(l, a, P, cfg: Config, lay: Layout, mode, rec, losses, idx_override=None):
    pre = cfg.prefix(l) + "attn."
    B, S, _ = a.shape
    H, c, r = cfg.H, cfg.c, cfg.r
    m = cfg.ratios[l]
    yarn = m > 0
    cos, sin = rope_table(lay, cfg, yarn, lay.pos, a.dtype, "tok")
    cos_h, sin_h = cos.unsqueeze(2), sin.unsqueeze(2)
    qr = rmsnorm(a @ P[pre + "wq_a.weight"].t(), P[pre + "q_norm.weight"], cfg.eps)
    q = (qr @ P[pre + "wq_b.weight"].t()).view(B, S, H, c)
    q = rmsnorm(q, None, cfg.eps)
    q = apply_rope(q, cos_h, sin_h, r)
    kv = rmsnorm(a @ P[pre + "wkv.weight"].t(), P[pre + "kv_norm.weight"], cfg.eps)
    kv = qat_kv(apply_rope(kv, cos, sin, r), cfg)
    keys, mask = kv, lay.window
    sel = None
    if m > 0:
        cl = lay.comp[m]
        kvc = compressor(a, P, pre + "compressor.", cl, c, cfg, lay)
        if m == 4:
            ov = idx_override.get(l) if idx_override else None
            a_d, qr_d = (ov["a"], ov["qr"]) if ov else (a.detach(), qr.detach())
            I, xpre, wI = indexer_scores(P, a_d, qr_d, pre, cfg, lay, return_pre=True)
            if mode == "dense":
                sel = cl.visible
            elif cfg.ties == "torch":
                sel = select_topk_torch(I, cl.visible, cfg.kI, cl, lay)
            else:
                sel = select_topk(I, cl.visible, cfg.kI)
            if rec is not None:
                rec.setdefault("indexer", {})[l] = dict(I=I.detach(), x=xpre.detach(), w=wI.detach(), sel=sel,
                                                        a=a.detach(), qr=qr.detach())
                rec.setdefault("topk", {})[l] = sel
        else:
            sel = cl.visible
        keys = torch.cat([kv, kvc], dim=1)
        mask = torch.cat([lay.window, sel], dim=2)
    scores = torch.einsum("bshc,bkc->bhsk", q, keys) * c ** -0.5
    scores = scores.masked_fill(~mask.unsqueeze(1), float("-inf"))
    sink = P[pre + "attn_sink"].view(1, H, 1, 1).expand(B, H, S, 1)
    probs = torch.softmax(torch.cat([scores, sink], dim=-1), dim=-1)[..., :-1]
    o = torch.einsum("bhsk,bkc->bshc", probs, keys)
    o = apply_rope(o, cos_h, sin_h, r, inverse=True)
    if m == 4 and losses is not None:
        # indexer KL loss (targets: main attention probabilities of the compressed entries, detached)
        pa = probs[..., S:].detach().sum(1)                                        # [B,S,T]
        pa = torch.where(sel, pa, torch.zeros_like(pa))
        nonempty = sel.any(-1)
        den = pa.sum(-1, keepdim=True)
        pt = pa / torch.where(den > 0, den, torch.ones_like(den))
        if idx_override and l in idx_override:
            pt = idx_override[l]["pt"]
        if rec is not None:
            rec["indexer"][l]["pt"] = pt
        logits_I = torch.where(sel, I, torch.full_like(I, float("-inf")))
        logits_I = torch.where(nonempty.unsqueeze(-1), logits_I, torch.zeros_like(logits_I))
        logq = torch.log_softmax(logits_I, dim=-1)
        pos_mask = sel & (pt > 0)
        safe_logq = torch.where(pos_mask, logq, torch.zeros_like(logq))
        safe_pt = torch.where(pos_mask, pt, torch.ones_like(pt))
        kl = torch.where(pos_mask, pt * (torch.log(safe_pt) - safe_logq), torch.zeros_like(pt)).sum(-1)
        nq = nonempty.sum()
        losses["idx"].append(kl.sum() / nq if nq > 0 else kl.sum() * 0)
    # grouped output projection
    og = o.reshape(B, S, cfg.g, H * c // cfg.g)
    wa = P[pre + "wo_a.weight"].view(cfg.g, cfg.dg, H * c // cfg.g)
    u = torch.einsum("bsgi,goi->bsgo", og, wa).flatten(-2)
    return u @ P[pre + "wo_b.weight"].t()


# ------------------------------------------------------------------------------------------------------------ MoE
def moe(l, x, ids, P, cfg: Config, rec, losses, alpha_bal):
    f = cfg.prefix(l) + "ffn."
    B, S, d = x.shape
    N = B * S
    xf = x.reshape(N, d)
    u = xf @ P[f + "gate.weight"].t()
    s = torch.sqrt(softplus_exact(u))                                  # [N,E]
    if cfg.is_hash(l):
        sel = P[f + "gate.tid2eid"].to(torch.int64)[ids.reshape(N).to(torch.int64)]
    else:
        key = (s + P[f + "gate.bias"]).detach()
        sel = torch.sort(key, dim=-1, descending=True, stable=True).indices[:, :cfg.K]
    ws = s.gather(1, sel)
    w = cfg.rsf * ws / ws.sum(-1, keepdim=True)                         # [N,K]
    if rec is not None:
        rec.setdefault("router", {})[l] = dict(s=s.detach(), sel=sel, x=xf.detach(),
                                               bias=None if cfg.is_hash(l) else P[f + "gate.bias"].detach())
        sw = rec.setdefault("swiglu_layers", {})
        r2 = {}
    y = swiglu(xf, P[f + "shared_experts.w1.weight"], P[f + "shared_experts.w3.weight"],
               P[f + "shared_experts.w2.weight"], cfg.limit, r2 if rec is not None else None, "shared")
    routed = torch.zeros_like(y)
    for e in range(cfg.E):
        tok, slot = torch.nonzero(sel == e, as_tuple=True)
        if tok.numel() == 0:
            continue
        he = swiglu(xf[tok], P[f + f"experts.{e}.w1.weight"], P[f + f"experts.{e}.w3.weight"],
                    P[f + f"experts.{e}.w2.weight"], cfg.limit, r2 if rec is not None else None, e)
        routed.index_add_(0, tok, he * w[tok, slot].unsqueeze(-1))
    y = y + routed
    if rec is not None:
        sw[l] = r2.get("swiglu", [])
    if losses is not None and not cfg.is_hash(l) and alpha_bal != 0:
        cnt = torch.zeros(B, S, cfg.E, dtype=s.dtype)
        cnt.scatter_(-1, sel.view(B, S, cfg.K), 1.0)
        fi = cnt.sum(1) * (cfg.E / (cfg.K * S))                                # [B,E] constant
        sp = s / s.sum(-1, keepdim=True)
        Pi = sp.view(B, S, cfg.E).mean(1)                                      # [B,E]
        losses["bal"].append(alpha_bal * (fi * Pi).sum(-1).mean())
    return y.view(B, S, d)


# ---------------------------------------------------------------------------------------------------------- model
def block(l, X, ids, P, cfg: Config, lay: Layout, mode, rec, losses, alpha_bal, idx_override=None):
    p = cfg.prefix(l)
    y, post, comb = hc_pre(X, P[p + "hc_attn_fn"], P[p + "hc_attn_base"], P[p + "hc_attn_scale"], cfg)
    a = rmsnorm(y, P[p + "attn_norm.weight"], cfg.eps)
    X = hc_post(attention(l, a, P, cfg, lay, mode, rec, losses, idx_override), X, post, comb)
    y, post, comb = hc_pre(X, P[p + "hc_ffn_fn"], P[p + "hc_ffn_base"], P[p + "hc_ffn_scale"], cfg)
    x = rmsnorm(y, P[p + "ffn_norm.weight"], cfg.eps)
    return hc_post(moe(l, x, ids, P, cfg, rec, losses, alpha_bal), X, post, comb)


def _ce(logits, labels):
    V = logits.shape[-1]
    lab = labels.reshape(-1).to(torch.int64)
    n = int((lab >= 0).sum())
    tot = F.cross_entropy(logits.reshape(-1, V), lab.clamp(min=0), reduction="none")
    tot = torch.where(lab >= 0, tot, torch.zeros_like(tot)).sum()
    return tot / n if n > 0 else tot * 0


def forward(P: dict, cfg: Config, batch: dict, mode: str = "topk", lambda_mtp: float = 0.3,
            alpha_bal: float = 1e-4, lambda_idx: float = 1.0, record: bool = False, layout: Layout | None = None,
            with_mtp: bool = True, idx_override: dict | None = None):
    """Forward + losses. batch: input_ids, labels, mtp_input_ids, mtp_labels, doc_start ([B,S] ints).

    Returns dict(logits [B,S,V], mtp_logits, losses{total,lm,mtp,bal,idx}, topk{layer: [B,S,k] int64},
    acts{layer: [B,S,4,d]}, layout, rec (diagnostics, only when record=True)). Call .backward() on
    out['losses']['total'] for the gradients of docs/model.md §4.
    idx_override {layer: dict(a, qr, pt)} replaces the indexer's (detached) inputs and KL target by given constants;
    with the values of an unperturbed run this makes the stop-gradients explicit for finite-difference checks.
    """
    assert mode in ("topk", "dense")
    ids = batch["input_ids"].to(torch.int64)
    B, S = ids.shape
    lay = layout if layout is not None else build_layout(batch["doc_start"], cfg)
    rec = {} if record else None
    losses = {"bal": [], "idx": []}
    dtype = P["embed.weight"].dtype
    e = P["embed.weight"][ids]
    X = e.unsqueeze(2).expand(B, S, cfg.n_hc, cfg.d)
    acts = {}
    for l in range(cfg.L):
        X = block(l, X, ids, P, cfg, lay, mode, rec, losses, alpha_bal, idx_override)
        if record:
            acts[l] = X.detach()
    logits = rmsnorm(hc_head(X, P["hc_head_fn"], P["hc_head_base"], P["hc_head_scale"], cfg), P["norm.weight"],
                     cfg.eps) @ P["head.weight"].t()
    out = {"logits": logits}
    zero = logits.new_zeros(())
    l_lm = _ce(logits, batch["labels"])
    l_mtp = zero
    if with_mtp:
        p = cfg.prefix(cfg.L)
        mids = batch["mtp_input_ids"].to(torch.int64)
        em = rmsnorm(P["embed.weight"][mids], P[p + "enorm.weight"], cfg.eps) @ P[p + "e_proj.weight"].t()
        hm = rmsnorm(X, P[p + "hnorm.weight"], cfg.eps) @ P[p + "h_proj.weight"].t()
        Z = em.unsqueeze(2) + hm
        Z = block(cfg.L, Z, mids, P, cfg, lay, mode, rec, losses, alpha_bal, idx_override)
        if record:
            acts[cfg.L] = Z.detach()
        mlog = rmsnorm(hc_head(Z, P[p + "hc_head_fn"], P[p + "hc_head_base"], P[p + "hc_head_scale"], cfg),
                       P[p + "norm.weight"], cfg.eps) @ P["head.weight"].t()
        out["mtp_logits"] = mlog
        l_mtp = _ce(mlog, batch["mtp_labels"])
    l_bal = sum(losses["bal"], zero)
    l_idx = sum(losses["idx"], zero)
    total = l_lm + lambda_mtp * l_mtp + l_bal + lambda_idx * l_idx
    out["losses"] = {"total": total, "lm": l_lm, "mtp": l_mtp, "bal": l_bal, "idx": l_idx}
    out["layout"] = lay
    if record:
        out["acts"] = acts
        out["rec"] = rec
        out["topk"] = {l: topk_ids(sel, lay.comp[4], cfg.kI if mode == "topk" else None)
                       for l, sel in rec.get("topk", {}).items()}
    return out


def topk_ids(sel, cl: CompLayout, k=None):
    """Selected entry ids (index within the query's document), sorted ascending, -1 padded: [B,S,k].
    k=None (dense mode): k = the largest number of entries of any document in the batch."""
    if k is None:
        k = int(cl.idx.masked_fill(~cl.valid, -1).max()) + 1
        k = max(k, 1)
    big = torch.iinfo(torch.int64).max
    v = torch.where(sel, cl.idx.unsqueeze(1).expand_as(sel), torch.full_like(cl.idx.unsqueeze(1).expand_as(sel), big))
    v = torch.sort(v, dim=-1).values
    if v.shape[-1] < k:
        v = torch.cat([v, torch.full((*v.shape[:-1], k - v.shape[-1]), big, dtype=v.dtype)], dim=-1)
    v = v[..., :k]
    return torch.where(v == big, torch.full_like(v, -1), v)
