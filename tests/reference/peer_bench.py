#!/usr/bin/env python3
"""PyTorch eager peer for `trex bench step --peer`.

Input: a safetensors file with the fixture layout's `w.*` (weights) and `in.*` (batch) tensors and the metadata
`config`, `mode`, `lambda_mtp`, `alpha_bal`, `lambda_idx`. Runs forward + backward of dsv4_ref.py in float32, torch
eager (--impl compile: its forward under torch.compile, the compilation in the warm-up steps), and prints exactly one
JSON line on stdout:
  {"tokens_per_s": ..., "step_seconds_median": ..., "threads": ..., "torch_version": ..., "loss": ...}
A step = zeroing the gradients, forward, all losses, backward (no optimizer). The batch layout (document masks,
compressed-entry index tables, RoPE tables) is built once, like a data loader would. --threads auto measures 1 and 2
intra-op threads (1 inter-op thread) and reports the faster.

--impl hf times Hugging Face transformers' DeepseekV4ForCausalLM instead (eager, float32, the same weights mapped by
check_hf.py; its default experts implementation, falling back to the expert loop). HF has no MTP, balance or indexer
loss, so that step is forward + LM loss + backward; the C++ side runs the same reduced step for the comparison.
Rows must be single documents (HF has no packed-document masking).

--precision bf16 runs the forward (and its losses) under torch.autocast("cpu", dtype=torch.bfloat16): matmuls and
linears in bf16 with fp32 weights, PyTorch's mixed precision on CPU; the backward follows autocast's casts.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
import warnings


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", help="safetensors file with w.* / in.* tensors and the config metadata")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", default="auto", help="auto | K")
    ap.add_argument("--optimizer", action="store_true",
                    help="include the optimizer update: Muon (hybrid Newton-Schulz, Nesterov, RMS 0.18) for matrices, "
                         "torch.optim.AdamW for the rest, grouped as spec §3.3 / the C++ optimizer")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"],
                    help="bf16: the forward under torch.autocast (bf16 matmuls, fp32 weights)")
    ap.add_argument("--impl", default="reference", choices=["reference", "compile", "hf"],
                    help="reference: tests/reference/dsv4_ref.py (the full step), eager; compile: the same step with "
                         "the forward under torch.compile; hf: transformers (LM loss only)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    import torch
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    from safetensors import safe_open
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import dsv4_ref as R

    with safe_open(args.input, "pt") as f:
        meta = f.metadata() or {}
        t = {k: f.get_tensor(k) for k in f.keys()}
    cfg = R.Config.from_dict(json.loads(meta["config"]))
    mode = meta.get("mode", "topk")
    lm, ab, li = (float(meta.get(k, d)) for k, d in (("lambda_mtp", 0.3), ("alpha_bal", 1e-4), ("lambda_idx", 1.0)))
    P = {}
    for k, v in t.items():
        if k.startswith("w."):
            name = k[2:]
            if v.is_floating_point():
                P[name] = v.to(torch.float32).contiguous().requires_grad_(R.is_trainable(name))
            else:
                P[name] = v.to(torch.int64)
    batch = {k[3:]: v.to(torch.int64) for k, v in t.items() if k.startswith("in.")}
    if "doc_start" not in batch:
        batch["doc_start"] = torch.zeros_like(batch["input_ids"])
    B, S = batch["input_ids"].shape
    layout = R.build_layout(batch["doc_start"], cfg)
    params = [v for v in P.values() if v.requires_grad]

    opt_step = None
    if args.optimizer:
        import optim_ref as O
        muon_names = [n for n, v in P.items() if v.requires_grad and v.dim() == 2 and n not in
                      ("embed.weight", "head.weight") and not n.endswith(".ape")]
        adam_params = [v for n, v in P.items() if v.requires_grad and n not in muon_names]
        adam = torch.optim.AdamW(adam_params, lr=1e-4, betas=(0.9, 0.95), eps=1e-20, weight_decay=0.1, foreach=True)
        momentum = {n: torch.zeros_like(P[n]) for n in muon_names}
        groups = {n: (cfg.g if n.endswith("attn.wo_a.weight") else 1) for n in muon_names}

        @torch.no_grad()
        def opt_step():
            lr = 1e-4
            torch.nn.utils.clip_grad_norm_(params, 1.0)  # as the C++ optimizer (optim.clip_grad_norm = 1)
            for n in muon_names:
                W, G, M = P[n], P[n].grad, momentum[n]
                M.mul_(0.95).add_(G)
                U = 0.95 * M + G
                for blk in U.chunk(groups[n], dim=0):  # wo_a: one matrix per head group
                    O_ = O.newton_schulz(blk, 8, 2) * math.sqrt(max(blk.shape)) * 0.18
                    blk.copy_(O_)
                W.mul_(1 - lr * 0.1).sub_(lr * U)
            adam.step()

    forward = R.forward
    if args.impl == "compile":  # what a PyTorch user would try first: compile the forward (graph breaks allowed)
        forward = torch.compile(R.forward)

    def autocast():
        return torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.precision == "bf16")

    def step():
        for p in params:
            p.grad = None
        with autocast():
            out = forward(P, cfg, batch, mode=mode, lambda_mtp=lm, alpha_bal=ab, lambda_idx=li, layout=layout)
        out["losses"]["total"].backward()
        if opt_step is not None:
            opt_step()
        return float(out["losses"]["total"].detach())

    if args.impl == "hf":
        import check_hf as C
        j = json.loads(meta["config"])
        assert int(batch["doc_start"].sum()) == B, "--impl hf needs one document per row"
        model, _ = C.build_hf(j, {k: v.detach() for k, v in P.items()}, cfg, torch.float32,
                              None if mode == "topk" else 1 << 30, lifted=False)
        model.config._experts_implementation = None
        model.train()
        hf_params = [p for p in model.parameters() if p.requires_grad]
        ids = batch["input_ids"]
        hf_labels = ids.clone()  # HF shifts internally: position i predicts ids[i+1]

        def hf_step():
            for p in hf_params:
                p.grad = None
            with autocast():
                out = model(input_ids=ids, labels=hf_labels)
            out.loss.backward()
            return float(out.loss.detach())

        try:
            hf_step()
        except Exception:  # the default (grouped) experts path is not available: use HF's loop over experts
            model.config._experts_implementation = "eager"
        step = hf_step

    cands = [1, 2] if args.threads == "auto" else [int(args.threads)]
    best = None
    for th in cands:
        torch.set_num_threads(th)
        loss = None
        for _ in range(args.warmup):
            loss = step()
        times = []
        for _ in range(max(1, args.steps)):
            t0 = time.perf_counter()
            loss = step()
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        if best is None or med < best[0]:
            best = (med, th, loss)
    med, th, loss = best
    print(json.dumps({"tokens_per_s": B * S / med, "step_seconds_median": med, "threads": th,
                      "torch_version": torch.__version__, "loss": loss, "impl": args.impl,
                      "precision": args.precision}))


if __name__ == "__main__":
    main()
