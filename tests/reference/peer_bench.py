#!/usr/bin/env python3
"""PyTorch eager peer for `trex bench step --peer`.

Input: a safetensors file with the fixture layout's `w.*` (weights) and `in.*` (batch) tensors and the metadata
`config`, `mode`, `lambda_mtp`, `alpha_bal`, `lambda_idx`. Runs forward + backward of dsv4_ref.py in float32, torch
eager (no torch.compile), and prints exactly one JSON line on stdout:
  {"tokens_per_s": ..., "step_seconds_median": ..., "threads": ..., "torch_version": ..., "loss": ...}
A step = zeroing the gradients, forward, all losses, backward (no optimizer). The batch layout (document masks,
compressed-entry index tables, RoPE tables) is built once, like a data loader would. --threads auto measures 1 and 2
intra-op threads (1 inter-op thread) and reports the faster.

--impl hf times Hugging Face transformers' DeepseekV4ForCausalLM instead (eager, float32, the same weights mapped by
check_hf.py; its default experts implementation, falling back to the expert loop). HF has no MTP, balance or indexer
loss, so that step is forward + LM loss + backward; the C++ side runs the same reduced step for the comparison.
Rows must be single documents (HF has no packed-document masking).
"""
from __future__ import annotations

import argparse
import json
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
    ap.add_argument("--impl", default="reference", choices=["reference", "hf"],
                    help="reference: tests/reference/dsv4_ref.py (the full step); hf: transformers (LM loss only)")
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

    def step():
        for p in params:
            p.grad = None
        out = R.forward(P, cfg, batch, mode=mode, lambda_mtp=lm, alpha_bal=ab, lambda_idx=li, layout=layout)
        out["losses"]["total"].backward()
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
                      "torch_version": torch.__version__, "loss": loss, "impl": args.impl}))


if __name__ == "__main__":
    main()
