#!/usr/bin/env python3
"""Golden fixture generator (docs/model.md §6) from the PyTorch reference dsv4_ref.py.

Everything is computed in float64 (--dtype) from float32-representable weights and stored as F32 (losses F64).
The C++ engine runs in fp32 and must make the same discrete choices (indexer top-k sets, routed experts, SwiGLU clamp
branches), so the generator makes every such choice robust, deterministically from the seed:

  * indexer (topk mode): for every query whose document has more visible entries than index_topk, the relative gap
    between the k-th and (k+1)-th score, (I_k - I_k+1) / max_j |I_j|, must be >= --min-margin. An exact tie at 0 (entries
    whose ReLU terms are all zero, which is common) is robust and resolved by the config's tie rule (lower index, or
    torch.topk's choice with "indexer_ties": "torch"), provided every
    pre-ReLU product q_h.k_j of the tied entries is <= -min_margin * max|q.k| (reported as the tie margin).
    Repair: a few Adam steps on that layer's indexer.* weights with a hinge on the margins (the indexer only feeds
    the selection and L_idx, so only this layer's selection and everything downstream changes).
  * SwiGLU clamp: every pre-activation must be at least --min-margin * L away from the clamp boundary (+L for w1,
    ±L for w3). Hot rows make a good fraction of the values clearly exceed L. Repair: rescale the offending row.
  * router (score layers incl. MTP): (key_K - key_K+1) / max_e |key_e| >= --min-margin with key = s + gate.bias.
    Repair: move gate.bias by solving the difference-constraint system "every token keeps its selected set with the
    margin" (Bellman-Ford). gate.bias only affects the selection, so no value changes.
  * the release's QAT ("qat": "release"): every fake-quantised input must be at least --qat-margin (relative) away
    from a rounding midpoint and its block's amax from a scale boundary. No repair: the draw is rejected.
  Layers are repaired in order (a repair changes only the layers after it); the result is verified by a final
  forward. If a repair fails, the weights are re-drawn with the next derived seed.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dsv4_ref as R  # noqa: E402


def log(*a):
    print(*a, file=sys.stderr if LOG_STDERR else sys.stdout, flush=True)


LOG_STDERR = False


# ------------------------------------------------------------------------------------------------------------ inputs
def make_docs(S, packed, rng, cfg):
    if not packed:
        return [S]
    mh = max([m for m in cfg.ratios if m not in (0, 4)] or [8])
    for _ in range(1000):
        short = int(torch.randint(1, 4, (1,), generator=rng))
        L1 = int(torch.randint(int(0.40 * S), int(0.55 * S) + 1, (1,), generator=rng))
        rest = S - L1 - short
        L3 = int(torch.randint(max(1, rest // 3), max(2, 2 * rest // 3), (1,), generator=rng))
        L4 = rest - L3
        lens = [L1, short, L3, L4]
        if min(lens) < 1 or sum(lens) != S:
            continue
        if not any(x % mh for x in (L1, L3, L4)):
            continue
        return lens
    raise RuntimeError("could not build a packed layout")


def make_batch(cfg, B, S, packed, seed):
    rng = torch.Generator().manual_seed(seed * 7919 + 17)
    ids = torch.zeros(B, S, dtype=torch.int64)
    labels = torch.zeros_like(ids)
    mtp_ids = torch.zeros_like(ids)
    mtp_labels = torch.zeros_like(ids)
    doc_start = torch.zeros_like(ids)
    doc_lens = []
    for b in range(B):
        lens = make_docs(S, packed and b >= 1, rng, cfg)
        doc_lens.append(lens)
        tok = torch.randint(0, cfg.V, (S + 2,), generator=rng)
        docid = torch.zeros(S + 2, dtype=torch.int64)
        dstart = torch.zeros(S + 2, dtype=torch.int64)
        s0 = 0
        for k, ln in enumerate(lens):
            end = s0 + ln if k + 1 < len(lens) else S + 2
            docid[s0:end] = k
            dstart[s0:end] = s0
            doc_start[b, s0] = 1
            s0 += ln
        # SFT-like prompt of each document: targets inside it are masked
        prompt = torch.zeros(S + 2, dtype=torch.bool)
        s0 = 0
        for ln in lens:
            p = int(torch.randint(0, max(1, ln // 4) + 1, (1,), generator=rng))
            prompt[s0:s0 + p] = True
            s0 += ln
        i = torch.arange(S)
        ids[b] = tok[:S]
        lab = tok[1:S + 1].clone()
        lab[(docid[i + 1] != docid[i]) | prompt[i + 1]] = -1
        mlab = tok[2:S + 2].clone()
        mlab[(docid[i + 2] != docid[i]) | prompt[i + 2]] = -1
        drop = torch.rand(S, generator=rng) < 0.04
        lab[drop] = -1
        drop = torch.rand(S, generator=rng) < 0.04
        mlab[drop] = -1
        labels[b] = lab
        mtp_labels[b] = mlab
        mtp_ids[b] = tok[1:S + 1]
    return dict(input_ids=ids, labels=labels, mtp_input_ids=mtp_ids, mtp_labels=mtp_labels,
                doc_start=doc_start), doc_lens


# ------------------------------------------------------------------------------------------------------------ margins
def indexer_query_margins(I, x, visible, k):
    """Per query with more than k visible entries: robustness margin of its top-k set (see module doc).
    Returns (margins [Q], kind [Q] 0=gap 1=zero-tie, (b,s) index [Q,2], and the tensors needed by the hinge)."""
    nvis = visible.sum(-1)
    qmask = nvis > k
    Im = I.masked_fill(~visible, float("-inf"))
    v, order = torch.sort(Im, dim=-1, descending=True, stable=True)
    vk, vk1 = v[..., k - 1], v[..., k] if v.shape[-1] > k else v[..., k - 1]
    scale = I.abs().masked_fill(~visible, 0).amax(-1)
    xs = x.abs().masked_fill(~visible.unsqueeze(2), 0).amax(-1).amax(-1)        # [B,S]
    gap = (vk - vk1) / torch.where(scale > 0, scale, torch.ones_like(scale))
    tie0 = (vk == vk1) & (vk == 0)
    # zero tie straddling the boundary: every tied entry must be robustly dead
    in_group = visible & (I == 0)                                              # [B,S,T]
    xmax = x.amax(2)                                                            # [B,S,T] max over heads
    dead = torch.where(in_group, -xmax / torch.where(xs > 0, xs, torch.ones_like(xs)).unsqueeze(-1),
                       torch.full_like(xmax, float("inf"))).amin(-1)
    marg = torch.where(tie0, dead, gap)
    marg = torch.where(qmask, marg, torch.full_like(marg, float("inf")))
    return marg, tie0, qmask, order


def router_margins(s, bias, K):
    key = s + bias
    v = torch.sort(key, dim=-1, descending=True, stable=True).values
    return (v[:, K - 1] - v[:, K]) / key.abs().amax(-1)


def clamp_margins(entries, L):
    """entries: list of (tag, a1, a3). Returns list of (tag, which, row, margin_min) per row and the global min."""
    rows = []
    for tag, a1, a3 in entries:
        if a1.numel() == 0:
            continue
        m1 = ((a1 - L).abs() / L).amin(0)
        m3 = (torch.minimum((a3 - L).abs(), (a3 + L).abs()) / L).amin(0)
        for which, mm in (("w1", m1), ("w3", m3)):
            for r in torch.nonzero(mm < 0.01).flatten().tolist():   # only rows that come near the boundary
                rows.append((tag, which, r, float(mm[r])))
    return rows


def clamp_stats(rec, L):
    n_beyond, n_total, mmin = 0, 0, float("inf")
    for l, entries in rec["swiglu_layers"].items():
        for tag, a1, a3 in entries:
            n_beyond += int((a1 > L).sum() + (a3.abs() > L).sum())
            n_total += a1.numel() + a3.numel()
            if a1.numel():
                mmin = min(mmin, float((a1 - L).abs().min() / L),
                           float(torch.minimum((a3 - L).abs(), (a3 + L).abs()).min() / L))
    return n_beyond, n_total, mmin


# ------------------------------------------------------------------------------------------------------------ repairs
def repair_indexer(P, cfg, lay, l, rec, thr, target):
    """Hinge on the margins of layer l's indexer; only indexer.wq_b and indexer.weights_proj move (the indexer keys
    KI stay fixed, so each step is cheap)."""
    pre = cfg.prefix(l) + "attn."
    a, qr = rec["indexer"][l]["a"], rec["indexer"][l]["qr"]
    vis = lay.comp[4].visible
    B, S, _ = a.shape
    KI = R.compressor(a, P, pre + "indexer.compressor.", lay.comp[4], cfg.cI, cfg, lay)
    cos, sin = R.rope_table(lay, cfg, True, lay.pos, a.dtype, "tok")
    names = [pre + "indexer.wq_b.weight", pre + "indexer.weights_proj.weight"]
    theta = [P[n].detach().clone().requires_grad_(True) for n in names]
    opt = torch.optim.Adam(theta, lr=1e-3)

    def scores(wq, wp):
        qI = R.apply_rope((qr @ wq.t()).view(B, S, cfg.HI, cfg.cI), cos.unsqueeze(2), sin.unsqueeze(2), cfg.r)
        qI = R.qat_index(qI, cfg)   # the release's QAT when the config has it (KI has it from R.compressor)
        w = (a @ wp.t()) * (cfg.cI * cfg.HI) ** -0.5
        x = torch.einsum("bshc,btc->bsht", qI, KI)
        return (torch.relu(x) * w.unsqueeze(-1)).sum(2), x

    best = None
    for step in range(600):
        I, x = scores(*theta)
        marg, tie0, qmask, order = indexer_query_margins(I.detach(), x.detach(), vis, cfg.kI)
        mmin = float(marg.min())
        if best is None or mmin > best[0]:
            best = (mmin, [t.detach().clone() for t in theta])
        if mmin >= target:
            break
        scale = I.detach().abs().masked_fill(~vis, 0).amax(-1).clamp(min=1e-30)
        xs = x.detach().abs().masked_fill(~vis.unsqueeze(2), 0).amax(-1).amax(-1).clamp(min=1e-30)
        ik = order[..., cfg.kI - 1:cfg.kI]
        ik1 = order[..., cfg.kI:cfg.kI + 1]
        gap = (I.gather(-1, ik) - I.gather(-1, ik1)).squeeze(-1) / scale
        lg = torch.relu(2 * target - gap)[qmask & ~tie0].sum()
        grp = (vis & (I.detach() == 0) & (qmask & tie0).unsqueeze(-1)).unsqueeze(2)   # [B,S,1,T]
        lt = (torch.relu(2 * target + x / xs.view(*xs.shape, 1, 1)) * grp).sum()
        opt.zero_grad()
        (lg + lt).backward()
        opt.step()
    for n, t in zip(names, best[1]):
        P[n] = t.float().double().to(P[n].dtype)
    I, x = scores(P[names[0]], P[names[1]])
    return float(indexer_query_margins(I, x, vis, cfg.kI)[0].min()), step


def repair_clamp(P, cfg, l, rows, rec_entries, thr, target):
    f = cfg.prefix(l) + "ffn."
    L = cfg.limit
    data = {tag: (a1, a3) for tag, a1, a3 in rec_entries}
    ok = True
    for tag, which, r, mm in rows:
        if mm >= thr:
            continue
        a1, a3 = data[tag]
        a = (a1 if which == "w1" else a3)[:, r]
        best, bf = -1.0, 1.0
        for k in range(1, 200):
            for fac in (1 + 0.005 * k, 1 - 0.005 * k):
                b = a * fac
                m = float(((b - L).abs() / L).min()) if which == "w1" else \
                    float((torch.minimum((b - L).abs(), (b + L).abs()) / L).min())
                if m > best:
                    best, bf = m, fac
            if best >= target:
                break
        name = f + ("shared_experts" if tag == "shared" else f"experts.{tag}") + f".{which}.weight"
        P[name] = P[name].clone()
        P[name][r] = (P[name][r] * bf).float().double().to(P[name].dtype)
        ok = ok and best >= thr
    return ok


def repair_router(P, cfg, l, s, sel, thr):
    """Move gate.bias so that every token keeps its selected experts with margin >= thr (difference constraints)."""
    f = cfg.prefix(l) + "ffn."
    b0 = P[f + "gate.bias"].detach().double()
    s = s.double()
    E, K = cfg.E, cfg.K
    N = s.shape[0]
    in_sel = torch.zeros(N, E, dtype=torch.bool)
    in_sel.scatter_(1, sel, True)
    scale = (s + b0).abs().amax(-1)                                   # ~ unchanged by the small bias moves

    def solve(M):
        # constraint b_f - b_e <= s_te - s_tf - M*scale_t  for e in sel_t, f not in sel_t
        W = torch.full((E, E), float("inf"), dtype=torch.float64)
        diff = s.unsqueeze(2) - s.unsqueeze(1) - (M * scale).view(N, 1, 1)   # [N,e,f]
        valid = in_sel.unsqueeze(2) & ~in_sel.unsqueeze(1)
        W = torch.where(valid, diff, torch.full_like(diff, float("inf"))).amin(0)
        d = b0.clone()
        for _ in range(E + 1):
            nd = torch.minimum(d, (d.unsqueeze(1) + W).amin(0))
            if torch.equal(nd, d):
                return d
            d = nd
        return None
    lo, hi = 0.0, 0.2
    if solve(thr) is None:
        return False, 0.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if solve(mid) is None:
            hi = mid
        else:
            lo = mid
    M = min(0.5 * lo, 20 * thr) if 0.5 * lo >= 2 * thr else max(thr * 1.5, lo * 0.75)
    M = min(M, lo)
    d = solve(M)
    P[f + "gate.bias"] = d.float().double().to(P[f + "gate.bias"].dtype)
    return True, lo


def repair_router_gate(P, cfg, l, x, thr, target):
    """Fallback when no bias move works: hinge on gate.weight of layer l (changes values downstream)."""
    f = cfg.prefix(l) + "ffn."
    Wg = P[f + "gate.weight"].detach().clone().requires_grad_(True)
    b = P[f + "gate.bias"].detach()
    opt = torch.optim.Adam([Wg], lr=1e-3)
    best = None
    for step in range(600):
        key = torch.sqrt(R.softplus_exact(x @ Wg.t())) + b
        v = torch.sort(key, dim=-1, descending=True, stable=True).values
        gap = (v[:, cfg.K - 1] - v[:, cfg.K]) / key.detach().abs().amax(-1)
        mmin = float(gap.min())
        if best is None or mmin > best[0]:
            best = (mmin, Wg.detach().clone())
        if mmin >= target:
            break
        opt.zero_grad()
        torch.relu(2 * target - gap).sum().backward()
        opt.step()
    P[f + "gate.weight"] = best[1].float().double().to(P[f + "gate.weight"].dtype)
    key = torch.sqrt(R.softplus_exact(x @ P[f + "gate.weight"].t())) + b
    return float(router_margins(key - b, b, cfg.K).min()), step


# ------------------------------------------------------------------------------------------------------------ driver
def check_all(P, cfg, batch, mode, args, out=None):
    if out is None:
        with torch.no_grad():
            out = R.forward(P, cfg, batch, mode=mode, lambda_mtp=args.lambda_mtp, alpha_bal=args.alpha_bal,
                            lambda_idx=args.lambda_idx, record=True)
    rec, lay = out["rec"], out["layout"]
    res = {"indexer": {}, "clamp": {}, "router": {}}
    for l in range(cfg.L + cfg.n_mtp):
        if mode == "topk" and l in rec.get("indexer", {}):
            ri = rec["indexer"][l]
            marg, tie0, qmask, _ = indexer_query_margins(ri["I"], ri["x"], lay.comp[4].visible, cfg.kI)
            res["indexer"][l] = (float(marg.min()) if bool(qmask.any()) else float("inf"),
                                 int(qmask.sum()), int((tie0 & qmask).sum()))
        if cfg.limit > 0:
            rows = clamp_margins(rec["swiglu_layers"][l], cfg.limit)
            res["clamp"][l] = (min([r[3] for r in rows] + [float("inf")]), rows)
        if not cfg.is_hash(l):
            rr = rec["router"][l]
            res["router"][l] = float(router_margins(rr["s"], rr["bias"], cfg.K).min())
    return out, res


def qat_margin(P, cfg, batch, args):
    """The smallest relative change of any fake-quantised input (dsv4_ref.QAT_MARGINS) that would flip its rounding."""
    R.QAT_MARGINS = []
    try:
        with torch.no_grad():
            R.forward(P, cfg, batch, mode=args.mode, lambda_mtp=args.lambda_mtp, alpha_bal=args.alpha_bal,
                      lambda_idx=args.lambda_idx)
        return min(m for _, m in R.QAT_MARGINS)
    finally:
        R.QAT_MARGINS = None


def generate(cfg, args, seed):
    dtype = getattr(torch, args.dtype)
    P = R.init_params(cfg, seed, torch.float64)
    P = {k: (v.float().double().to(dtype) if v.is_floating_point() else v) for k, v in P.items()}
    batch, doc_lens = make_batch(cfg, args.batch, args.seq, args.packed, seed)
    thr, target = args.min_margin, 3 * args.min_margin
    n_fwd = 0
    for it in range(6 * (cfg.L + 1) + 4):
        out, res = check_all(P, cfg, batch, args.mode, args)
        n_fwd += 1
        lay, rec = out["layout"], out["rec"]
        changed = moved = False
        for l in range(cfg.L + cfg.n_mtp):
            if l in res["indexer"] and res["indexer"][l][0] < thr:
                m, steps = repair_indexer(P, cfg, lay, l, rec, thr, target)
                log(f"  seed {seed}: layer {l} indexer margin {res['indexer'][l][0]:.2e} -> {m:.2e} "
                    f"({steps} hinge steps on indexer.wq_b/weights_proj)")
                if m < thr:
                    return None
                changed = True
                break
            if l in res["router"] and res["router"][l] < thr:
                rr = rec["router"][l]
                ok, mx = repair_router(P, cfg, l, rr["s"], rr["sel"], thr)
                if ok:   # gate.bias moved; every selection kept, so no value changes: keep checking this pass
                    moved = True
                    log(f"  seed {seed}: layer {l} router margin {res['router'][l]:.2e} -> gate.bias moved "
                        f"(best achievable {mx:.2e})")
                else:
                    m, steps = repair_router_gate(P, cfg, l, rr["x"], thr, target)
                    log(f"  seed {seed}: layer {l} router margin {res['router'][l]:.2e}: no bias move works; "
                        f"gate.weight hinge -> {m:.2e} ({steps} steps)")
                    if m < thr:
                        return None
                    changed = True
                    break
            if l in res["clamp"] and res["clamp"][l][0] < thr:
                ok = repair_clamp(P, cfg, l, res["clamp"][l][1], rec["swiglu_layers"][l], thr, target)
                log(f"  seed {seed}: layer {l} clamp margin {res['clamp'][l][0]:.2e} -> rows rescaled (ok={ok})")
                if not ok:
                    return None
                changed = True
                break
        if not changed and not moved:   # a clean pass (bias moves are re-verified by one more pass)
            break
    else:
        return None
    return P, batch, doc_lens, n_fwd


def main(argv=None):
    global LOG_STDERR
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", choices=("dense", "topk"), default="topk")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--packed", action="store_true", help="rows 1.. are packed with several documents")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lambda-mtp", type=float, default=0.3)
    ap.add_argument("--alpha-bal", type=float, default=0.1)
    ap.add_argument("--lambda-idx", type=float, default=1.0)
    ap.add_argument("--dtype", default="float64", choices=("float64", "float32"))
    ap.add_argument("--min-margin", type=float, default=1e-3)
    ap.add_argument("--qat-margin", type=float, default=4e-6,
                    help="with the release's QAT: every fake-quantised input must be this far (relative) from a "
                         "rounding or scale boundary, or the draw is rejected (fp32 noise must not flip a rounding)")
    ap.add_argument("--act-layers", default="all",
                    help="which act.<layer> to store: 'all', 'none' or a comma list (e.g. 1,3)")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads (1: fastest here, deterministic)")
    ap.add_argument("--quiet", action="store_true", help="log to stderr")
    args = ap.parse_args(argv)
    LOG_STDERR = args.quiet
    if args.threads:
        torch.set_num_threads(args.threads)
    t0 = time.time()
    with open(args.config) as f:
        raw = json.load(f)
    cfg = R.Config.from_dict(raw)
    res = None
    for attempt in range(400):
        seed = args.seed + 1000003 * attempt
        res = generate(cfg, args, seed)
        if res is not None and cfg.qat == "release":
            qm = qat_margin(res[0], cfg, res[1], args)
            log(f"  seed {seed}: smallest relative change that flips a QAT rounding {qm:.2e}")
            if qm < args.qat_margin:
                res = None
        if res is not None:
            break
        log(f"seed {seed} rejected, re-drawing")
    if res is None:
        raise SystemExit("no robust draw found")
    P, batch, doc_lens, n_fwd = res
    # final forward + backward
    Pg = {k: (v.detach().clone().requires_grad_(R.is_trainable(k)) if v.is_floating_point() else v)
          for k, v in P.items()}
    out = R.forward(Pg, cfg, batch, mode=args.mode, lambda_mtp=args.lambda_mtp, alpha_bal=args.alpha_bal,
                    lambda_idx=args.lambda_idx, record=True)
    out["losses"]["total"].backward()
    _, margins = check_all(Pg, cfg, batch, args.mode, args, out=out)
    # ---- report
    thr = args.min_margin
    worst = []
    log(f"config {os.path.basename(args.config)} mode {args.mode} B={args.batch} S={args.seq} seed {seed} "
        f"docs per row {doc_lens}")
    for l, (m, nq, nt) in margins["indexer"].items():
        log(f"  indexer layer {l}: min margin {m:.3e} over {nq} queries with > {cfg.kI} visible entries "
            f"({nt} boundaries are exact zero ties, resolved by the {cfg.ties} rule)")
        worst.append(m)
    for l, m in margins["router"].items():
        log(f"  router  layer {l}: min relative margin (K-th vs K+1-th of s+bias) {m:.3e}")
        worst.append(m)
    if cfg.limit > 0:
        nb, nt, mm = clamp_stats(out["rec"], cfg.limit)
        log(f"  SwiGLU clamp: {nb} of {nt} pre-activations beyond the limit, min distance to the boundary "
            f"{mm:.3e}·L")
        worst.append(mm)
    if cfg.qat == "release":
        log(f"  QAT: the smallest relative change of a fake-quantised input that flips its rounding or scale "
            f"{qat_margin(P, cfg, batch, args):.2e} (--qat-margin {args.qat_margin:g})")
    if min(worst) < thr:
        raise SystemExit(f"margin check failed: {min(worst)} < {thr}")
    L = out["losses"]
    log("  losses: " + ", ".join(f"{k} {float(L[k].detach()):.10f}" for k in R.LOSS_NAMES))
    # ---- write
    from safetensors.torch import save_file
    t = {}
    for k, v in P.items():
        t["w." + k] = v.to(torch.int32).contiguous() if not v.is_floating_point() else v.float().contiguous()
    for k in ("input_ids", "labels", "mtp_input_ids", "mtp_labels", "doc_start"):
        t["in." + k] = batch[k].to(torch.int32).contiguous()
    t["out.logits"] = out["logits"].detach().float().contiguous()
    t["out.mtp_logits"] = out["mtp_logits"].detach().float().contiguous()
    t["out.losses"] = torch.tensor([float(L[k].detach()) for k in R.LOSS_NAMES], dtype=torch.float64)
    for k, v in Pg.items():
        if R.is_trainable(k):
            g = v.grad if v.grad is not None else torch.zeros_like(v)
            t["g." + k] = g.detach().float().contiguous()
    for l, v in out["topk"].items():
        t[f"out.topk.{l}"] = v.to(torch.int32).contiguous()
    keep = set(out["acts"]) if args.act_layers == "all" else set() if args.act_layers == "none" else \
        {int(x) for x in args.act_layers.split(",")}
    for l, v in out["acts"].items():
        if l in keep:
            t[f"act.{l}"] = v.float().contiguous()
    meta = {"config": json.dumps(raw), "mode": args.mode, "lambda_mtp": repr(args.lambda_mtp),
            "alpha_bal": repr(args.alpha_bal), "lambda_idx": repr(args.lambda_idx), "seed": str(seed),
            "generator": "tests/reference/make_fixtures.py " + " ".join(sys.argv[1:] if argv is None else argv)}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    save_file(t, args.out, metadata=meta)
    log(f"wrote {args.out} ({os.path.getsize(args.out) / 1e6:.2f} MB, {len(t)} tensors) in {time.time() - t0:.1f}s "
        f"({n_fwd} checking forwards)")


if __name__ == "__main__":
    main()
