#!/usr/bin/env python3
"""Finite-difference check of the float64 reference: autograd gradient of the full total loss
(L_LM + λ_mtp·L_MTP + L_bal + λ_idx·L_idx) against central differences, for a few entries of tensors on every path
(indexer -> L_idx only, router -> balance loss, MTP, compressors, mHC, sink, experts, embeddings).
Also checks that L_idx alone sends no gradient outside `indexer.*` and that L_LM sends none into `indexer.*`.
Uses a fixture file (robust discrete choices) when given, else random weights.
"""
from __future__ import annotations

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dsv4_ref as R  # noqa: E402
from verify_fixture import load_fixture  # noqa: E402

NAMES = [
    "embed.weight", "head.weight", "hc_head_scale", "hc_head_base",
    "layers.0.hc_attn_scale", "layers.0.hc_ffn_fn", "layers.0.attn.attn_sink", "layers.0.ffn.gate.weight",
    "layers.1.attn.wq_b.weight", "layers.1.attn.compressor.ape", "layers.1.attn.compressor.wgate.weight",
    "layers.1.attn.indexer.wq_b.weight", "layers.1.attn.indexer.weights_proj.weight",
    "layers.1.attn.indexer.compressor.ape", "layers.1.attn.indexer.compressor.wkv.weight",
    "layers.1.attn.indexer.compressor.norm.weight", "layers.1.ffn.gate.weight",
    "layers.2.attn.compressor.wkv.weight", "layers.2.attn.compressor.norm.weight", "layers.2.hc_ffn_base",
    "layers.3.attn.indexer.wq_b.weight", "layers.3.ffn.experts.0.w1.weight", "layers.3.ffn.shared_experts.w3.weight",
    "layers.3.attn.wo_a.weight", "mtp.0.e_proj.weight", "mtp.0.h_proj.weight", "mtp.0.hc_head_fn",
    "mtp.0.ffn.gate.weight", "mtp.0.attn.kv_norm.weight", "mtp.0.hnorm.weight",
]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--fixture", help="fixture file (default: random micro weights)")
    ap.add_argument("--entries", type=int, default=3, help="entries per tensor")
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    cfg, meta, P, batch, _ = load_fixture(args.fixture, torch.float64)
    mode, lm, ab, li = meta["mode"], float(meta["lambda_mtp"]), float(meta["alpha_bal"]), float(meta["lambda_idx"])

    # The contract's gradient has stop-gradients (indexer inputs a, qr and the KL target are detached), so it is the
    # derivative of the loss with those three quantities frozen at their unperturbed values: freeze them for the
    # finite differences.
    with torch.no_grad():
        base = R.forward(P, cfg, batch, mode=mode, lambda_mtp=lm, alpha_bal=ab, lambda_idx=li, record=True)
    frozen = {l: {k: v[k] for k in ("a", "qr", "pt")} for l, v in base["rec"].get("indexer", {}).items()}

    def loss(Pd, which="total", freeze=True):
        out = R.forward(Pd, cfg, batch, mode=mode, lambda_mtp=lm, alpha_bal=ab, lambda_idx=li,
                        idx_override=frozen if freeze else None)
        return out["losses"][which], out

    Pg = {k: (v.clone().requires_grad_(R.is_trainable(k)) if v.is_floating_point() else v) for k, v in P.items()}
    L, out = loss(Pg, freeze=False)
    L.backward()
    print(f"losses: " + ", ".join(f"{k} {float(v.detach()):.6f}" for k, v in out["losses"].items()))
    g = torch.Generator().manual_seed(args.seed)
    worst = 0.0
    print(f"{'tensor':<52}{'idx':>7}{'autograd':>16}{'finite diff':>16}{'rel err':>10}")
    for name in NAMES:
        if name not in P:
            continue
        flat = P[name].view(-1)
        gr = Pg[name].grad.view(-1)
        # pick entries with a non-negligible gradient when possible
        cand = torch.argsort(gr.abs(), descending=True)[: max(1, flat.numel() // 4)]
        picks = cand[torch.randperm(cand.numel(), generator=g)[: args.entries]]
        for i in picks.tolist():
            with torch.no_grad():
                old = float(flat[i])
                Pp = dict(P)
                t = P[name].clone()
                t.view(-1)[i] = old + args.eps
                Pp[name] = t
                lp = float(loss(Pp)[0])
                t = P[name].clone()
                t.view(-1)[i] = old - args.eps
                Pp[name] = t
                lmn = float(loss(Pp)[0])
            fd = (lp - lmn) / (2 * args.eps)
            ag = float(gr[i])
            err = abs(fd - ag) / max(abs(ag), abs(fd), 1e-12)
            worst = max(worst, err if max(abs(ag), abs(fd)) > 1e-9 else 0.0)
            print(f"{name:<52}{i:>7}{ag:>16.8e}{fd:>16.8e}{err:>10.1e}")
    # gradient isolation of L_idx
    Pi = {k: (v.clone().requires_grad_(R.is_trainable(k)) if v.is_floating_point() else v) for k, v in P.items()}
    li_loss, _ = loss(Pi, "idx", freeze=False)
    li_loss.backward()
    leak = [k for k, v in Pi.items() if v.requires_grad and v.grad is not None and "indexer." not in k
            and float(v.grad.abs().max()) != 0.0]
    Pl = {k: (v.clone().requires_grad_(R.is_trainable(k)) if v.is_floating_point() else v) for k, v in P.items()}
    ll, _ = loss(Pl, "lm", freeze=False)
    ll.backward()
    leak2 = [k for k, v in Pl.items() if "indexer." in k and v.grad is not None and float(v.grad.abs().max()) != 0.0]
    print(f"L_idx gradient outside indexer.*: {leak or 'none'}; L_LM gradient into indexer.*: {leak2 or 'none'}")
    print(f"max relative error (entries with |grad| > 1e-9): {worst:.2e}")
    if worst > 1e-5 or leak or leak2:
        sys.exit(1)


if __name__ == "__main__":
    main()
