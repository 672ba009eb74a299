#!/usr/bin/env python3
"""PyTorch reference for the optimizer recipe (spec §3) and the golden fixture tests/golden/optim_steps.safetensors.

Muon (hybrid Newton-Schulz, Nesterov momentum, update RMS rescaling, decoupled weight decay) is written here from
spec §3.1-3.2 in float64; AdamW is torch.optim.AdamW itself (an independent implementation of the formula the C++
code uses). Three steps per case with a different gradient and learning rate each; every intermediate W (and the
Muon momentum) is stored as F32.

    .venv/bin/python tests/reference/optim_ref.py --out tests/golden/optim_steps.safetensors
"""
import argparse
import json
import math

import torch
from safetensors.torch import save_file

MUON = dict(momentum=0.95, nesterov=True, update_rms=0.18, weight_decay=0.1, fast=8, stable=2)
ADAMW = dict(betas=(0.9, 0.95), eps=1e-20, weight_decay=0.1)
MUON_SHAPES = [(48, 32), (32, 48), (40, 40), (8, 200), (200, 8)]
ADAM_SHAPES = [(100,), (16, 12)]
LRS = [0.02, 0.01, 0.005]


def newton_schulz(M, fast, stable):
    X = M.clone()
    tr = X.shape[0] > X.shape[1]
    if tr:
        X = X.T
    X = X / (X.norm() + 1e-7)
    for k in range(fast + stable):
        a, b, c = (3.4445, -4.7750, 2.0315) if k < fast else (2.0, -1.5, 0.5)
        A = X @ X.T
        X = a * X + (b * A + c * A @ A) @ X
    return X.T if tr else X


def muon_steps(W, grads, lrs):
    W = W.clone()
    M = torch.zeros_like(W)
    out = []
    for G, lr in zip(grads, lrs):
        M = MUON["momentum"] * M + G
        U = MUON["momentum"] * M + G if MUON["nesterov"] else M
        O = newton_schulz(U, MUON["fast"], MUON["stable"]) * math.sqrt(max(W.shape)) * MUON["update_rms"]
        W = W * (1 - lr * MUON["weight_decay"]) - lr * O
        out.append((W.clone(), M.clone()))
    return out


def adamw_steps(W, grads, lrs):
    p = torch.nn.Parameter(W.clone())
    opt = torch.optim.AdamW([p], lr=lrs[0], **ADAMW)
    out = []
    for G, lr in zip(grads, lrs):
        for group in opt.param_groups:
            group["lr"] = lr
        p.grad = G.clone()
        opt.step()
        out.append(p.detach().clone())
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    g = torch.Generator().manual_seed(args.seed)
    t = {}
    for i, shape in enumerate(MUON_SHAPES):
        W = torch.randn(shape, generator=g, dtype=torch.float64).float().double() * 0.05
        grads = [torch.randn(shape, generator=g, dtype=torch.float64).float().double() for _ in LRS]
        t[f"muon.{i}.w0"] = W
        for k, G in enumerate(grads):
            t[f"muon.{i}.g{k}"] = G
        for k, (Wk, Mk) in enumerate(muon_steps(W, grads, LRS)):
            t[f"muon.{i}.w{k + 1}"] = Wk
            t[f"muon.{i}.m{k + 1}"] = Mk
    for i, shape in enumerate(ADAM_SHAPES):
        W = torch.randn(shape, generator=g, dtype=torch.float64).float().double()
        grads = [torch.randn(shape, generator=g, dtype=torch.float64).float().double() * 1e-3 for _ in LRS]
        t[f"adamw.{i}.w0"] = W
        for k, G in enumerate(grads):
            t[f"adamw.{i}.g{k}"] = G
        for k, Wk in enumerate(adamw_steps(W, grads, LRS)):
            t[f"adamw.{i}.w{k + 1}"] = Wk
    t = {k: v.float().contiguous() for k, v in t.items()}
    meta = {"muon": json.dumps(MUON), "adamw": json.dumps({**ADAMW, "betas": list(ADAMW["betas"])}),
            "lrs": json.dumps(LRS), "muon_cases": str(len(MUON_SHAPES)), "adamw_cases": str(len(ADAM_SHAPES)),
            "generator": "tests/reference/optim_ref.py --seed %d" % args.seed}
    save_file(t, args.out, metadata=meta)
    print(f"wrote {args.out}: {len(t)} tensors")


if __name__ == "__main__":
    main()
