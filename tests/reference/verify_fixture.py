#!/usr/bin/env python3
"""Recompute a golden fixture with dsv4_ref.py from its own w.* / in.* tensors and metadata, and report the relative
error ||ours - fixture|| / ||fixture|| of every stored output and gradient.

  --dtype float64 : must reproduce the file (checks the file and the reader; errors ~1e-7 = the F32 storage rounding)
  --dtype float32 : the reference itself in fp32 -> shows how much of a 1e-4 tolerance an fp32 implementation uses.
Also checks that the top-k sets and the routed experts are the same as in float64.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

import torch
from safetensors import safe_open

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dsv4_ref as R  # noqa: E402


def load_fixture(path, dtype=torch.float64):
    with safe_open(path, "pt") as f:
        meta = f.metadata()
        t = {k: f.get_tensor(k) for k in f.keys()}
    cfg = R.Config.from_dict(json.loads(meta["config"]))
    P = {}
    for k, v in t.items():
        if k.startswith("w."):
            P[k[2:]] = v.to(torch.int64) if not v.is_floating_point() else v.to(dtype)
    batch = {k[3:]: v.to(torch.int64) for k, v in t.items() if k.startswith("in.")}
    return cfg, meta, P, batch, t


def rel(a, b):
    a, b = a.detach().double(), b.detach().double()
    nb = b.norm()
    return 0.0 if nb == 0 and (a - b).norm() == 0 else float((a - b).norm() / nb)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fixture")
    ap.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    ap.add_argument("--full", action="store_true", help="print every tensor")
    args = ap.parse_args()
    dtype = getattr(torch, args.dtype)
    cfg, meta, P, batch, t = load_fixture(args.fixture, dtype)
    for k, v in P.items():
        if R.is_trainable(k):
            v.requires_grad_(True)
    out = R.forward(P, cfg, batch, mode=meta["mode"], lambda_mtp=float(meta["lambda_mtp"]),
                    alpha_bal=float(meta["alpha_bal"]), lambda_idx=float(meta["lambda_idx"]), record=True)
    out["losses"]["total"].backward()
    print(f"{os.path.basename(args.fixture)}: mode {meta['mode']}, reference in {args.dtype}")
    lf = t["out.losses"]
    for i, k in enumerate(R.LOSS_NAMES):
        v = float(out["losses"][k].detach())
        print(f"  loss {k:<5} fixture {float(lf[i]):.12f} ours {v:.12f} rel {abs(v - float(lf[i])) / max(abs(float(lf[i])), 1e-300):.2e}")
    print(f"  logits     rel {rel(out['logits'], t['out.logits']):.2e}")
    print(f"  mtp_logits rel {rel(out['mtp_logits'], t['out.mtp_logits']):.2e}")
    for l, v in out["topk"].items():
        same = torch.equal(v.to(torch.int32), t[f"out.topk.{l}"])
        print(f"  top-k layer {l}: {'identical' if same else 'DIFFERENT'}")
    if dtype != torch.float64:   # routed experts: same selection as a float64 run on the same weights?
        P64 = {k: (v.detach().double() if v.is_floating_point() else v) for k, v in P.items()}
        with torch.no_grad():
            o64 = R.forward(P64, cfg, batch, mode=meta["mode"], lambda_mtp=float(meta["lambda_mtp"]),
                            alpha_bal=float(meta["alpha_bal"]), lambda_idx=float(meta["lambda_idx"]), record=True)
        diff = sum(int((torch.sort(out["rec"]["router"][l]["sel"], -1).values !=
                        torch.sort(o64["rec"]["router"][l]["sel"], -1).values).any(-1).sum())
                   for l in out["rec"]["router"])
        print(f"  routed experts: {diff} tokens with a different expert set than float64")
    for k in sorted(x for x in t if x.startswith("act.")):
        l = int(k.split(".")[1])
        print(f"  {k:<10} rel {rel(out['acts'][l], t[k]):.2e}")
    errs = {}
    for k, v in P.items():
        if R.is_trainable(k):
            errs[k] = rel(v.grad if v.grad is not None else torch.zeros_like(v), t["g." + k])
    if args.full:
        for k, e in errs.items():
            print(f"  g.{k:<58} {e:.2e}")
    else:
        agg = {}
        for k, e in errs.items():
            p = re.sub(r"\.\d+\.", ".*.", k)
            agg[p] = max(agg.get(p, 0.0), e)
        for k, e in agg.items():
            print(f"  g.{k:<58} max {e:.2e}")
    worst = max(errs, key=errs.get)
    print(f"  worst gradient: {worst} {errs[worst]:.2e}; median {sorted(errs.values())[len(errs) // 2]:.2e}")


if __name__ == "__main__":
    main()
