#!/usr/bin/env python3
"""HF transformers peer for `trex bench generate --peer`.

Input: a safetensors file with the model's `w.*` weights (checkpoint names), `in.prompt` (token ids) and the
metadata `config` (our config JSON). Builds DeepseekV4ForCausalLM with those weights (check_hf.py's mapping; float32,
eager attention), then times its `generate` with the model's own cache, greedy, batch 1:
  - prefill: generate with max_new_tokens=1 (the prompt's forward and one token);
  - decode:  generate with max_new_tokens=N; decode tokens/s = (N - 1) / (t_N - t_1).
End-of-sequence is ignored (min_new_tokens = N), as on the C++ side. Prints one JSON line:
  {"decode_tokens_per_s", "prefill_tokens_per_s", "tokens": [N ids], "threads", "torch_version",
   "transformers_version"}
--threads auto measures 1 and 2 intra-op threads and reports the faster.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--threads", default="auto", help="auto | K")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    import torch
    import transformers
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    from safetensors import safe_open
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import check_hf as C
    import dsv4_ref as R

    with safe_open(args.input, "pt") as f:
        meta = f.metadata() or {}
        t = {k: f.get_tensor(k) for k in f.keys()}
    j = json.loads(meta["config"])
    cfg = R.Config.from_dict(j)
    P = {k[2:]: (v.to(torch.float32) if v.is_floating_point() else v.to(torch.int64))
         for k, v in t.items() if k.startswith("w.")}
    prompt = t["in.prompt"].to(torch.int64).reshape(1, -1)
    model, _ = C.build_hf(j, P, cfg, torch.float32, None, lifted=False)
    model.eval()
    N = args.new_tokens

    def generate(n):
        with torch.no_grad(), C.stable_topk():
            return model.generate(prompt, max_new_tokens=n, min_new_tokens=n, do_sample=False, use_cache=True,
                                  pad_token_id=0)

    cands = [1, 2] if args.threads == "auto" else [int(args.threads)]
    best = None
    for th in cands:
        torch.set_num_threads(th)
        generate(2)  # warm-up
        t0 = time.perf_counter()
        generate(1)
        t1 = time.perf_counter() - t0
        t0 = time.perf_counter()
        out = generate(N)
        tn = time.perf_counter() - t0
        rate = (N - 1) / max(tn - t1, 1e-9)
        if best is None or rate > best[0]:
            best = (rate, prompt.shape[1] / t1, th, out[0, prompt.shape[1]:].tolist())
    rate, prefill, th, tokens = best
    print(json.dumps({"decode_tokens_per_s": rate, "prefill_tokens_per_s": prefill, "tokens": tokens,
                      "threads": th, "torch_version": torch.__version__,
                      "transformers_version": transformers.__version__}))


if __name__ == "__main__":
    main()
