#!/usr/bin/env python3
"""Compares two `trex train` runs (docs/distributed.md): the metrics of every step and the final checkpoint.

usage: compare_runs.py REF_RUN RUN [--bitwise | --rtol 1e-6 [--later-rtol 1e-5] [--idx-rtol 1e-5] [--bitwise-first]
                                    [--metrics-only] [--judge-until-routing-flip N]]

--bitwise: every logged number of every step and every tensor of the last checkpoint (model.safetensors: weights,
expert biases; optim.safetensors: Muon momentum, AdamW m and v) must be identical.
Otherwise losses (loss, lm, mtp, bal, idx) and the gradient norm of every step must agree to a relative rtol, with
--bitwise-first the first step's losses exactly (the first forward sees the same weights and batches), and unless
--metrics-only every checkpoint tensor to rtol relative to the tensor's largest magnitude. --idx-rtol sets its own
tolerance for the indexer KL loss (a small difference of two cross-entropies, so its relative rounding is ~20x that
of its inputs; tensor parallelism needs it, docs/distributed.md). --later-rtol sets the tolerance of the other
metrics after the first step: the first step sees the same weights on both sides, but once the two runs sum in a
different order, AdamW turns the rounding of gradients that cancel to ~0 (the mHC bases) into full-size steps, so the
later steps differ by more than the rounding of one forward and backward (docs/distributed.md §5). Prints the
largest differences; exits 1 on a mismatch.
--judge-until-routing-flip N (with --metrics-only, for runs whose order of sums differs): the expert top-k is a
discontinuous function, so two runs that differ by rounding can route one near-tied token differently, after which
their losses differ by more than rounding. A step after step N whose expert loads differ then ends the judging: it
and the later steps are reported, not judged. A difference in expert loads at step N or earlier is a mismatch.
"""
import json
import os
import struct
import sys
from array import array

try:
    import numpy as np
except ImportError:  # plain Python fallback (slower)
    np = None


def metrics(run):
    rows = [json.loads(l) for l in open(os.path.join(run, "metrics.jsonl")) if l.strip()]
    return {r["step"]: r for r in rows}


def last_checkpoint(run):
    root = os.path.join(run, "checkpoints")
    steps = sorted(d for d in os.listdir(root) if d.startswith("step-") and len(d) == 13)
    return os.path.join(root, steps[-1])


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        if np is not None:
            out[name] = np.frombuffer(data[b:e], dtype=np.float32 if info["dtype"] == "F32" else np.int32)
            continue
        a = array("f" if info["dtype"] == "F32" else "i")
        a.frombytes(data[b:e])
        out[name] = a
    return out


def main():
    args = sys.argv[1:]
    rtol = 1e-6
    bitwise_first = "--bitwise-first" in args
    metrics_only = "--metrics-only" in args
    if "--rtol" in args:
        rtol = float(args[args.index("--rtol") + 1])
    if "--bitwise" in args:
        rtol = 0.0
    idx_rtol = float(args[args.index("--idx-rtol") + 1]) if "--idx-rtol" in args else rtol
    later_rtol = float(args[args.index("--later-rtol") + 1]) if "--later-rtol" in args else rtol
    flip_after = None
    if "--judge-until-routing-flip" in args:
        flip_after = int(args[args.index("--judge-until-routing-flip") + 1])
        if not metrics_only:
            print("--judge-until-routing-flip needs --metrics-only (the last checkpoint comes after the flip)")
            return 2
    valued = ("--rtol", "--idx-rtol", "--later-rtol", "--judge-until-routing-flip")
    ref, run = [a for i, a in enumerate(args)
                if not a.startswith("--") and (i == 0 or args[i - 1] not in valued)][:2]
    ok = True
    m_ref, m_run = metrics(ref), metrics(run)
    if sorted(m_ref) != sorted(m_run):
        print(f"steps differ: {sorted(m_ref)} vs {sorted(m_run)}")
        return 1
    worst = 0.0
    judged = []
    for step in sorted(m_ref):
        if m_ref[step]["expert_load"] != m_run[step]["expert_load"] and flip_after is not None and step > flip_after:
            print(f"step {step}: expert loads differ (a near-tied token routed the other way): steps >= {step} are "
                  f"reported, not judged")
            for later in sorted(s for s in m_ref if s >= step):
                for key in ("loss", "lm", "mtp", "bal", "idx", "grad_norm"):
                    a, b = m_ref[later][key], m_run[later][key]
                    print(f"  step {later} {key}: {a!r} vs {b!r} (rel {abs(a - b) / max(abs(a), 1e-30):.3g})")
            break
        judged.append(step)
        for key in ("loss", "lm", "mtp", "bal", "idx", "grad_norm"):
            a, b = m_ref[step][key], m_run[step][key]
            rel = abs(a - b) / max(abs(a), 1e-30)
            worst = max(worst, rel)
            if bitwise_first and step == min(m_ref) and key != "grad_norm" and a != b:
                print(f"step {step} {key}: {a!r} vs {b!r}: not bitwise identical")
                ok = False
            tol = idx_rtol if key == "idx" else (rtol if step == min(m_ref) else later_rtol)
            if rel > tol:
                print(f"step {step} {key}: {a!r} vs {b!r} (rel {rel:.3g} > {tol})")
                ok = False
        if m_ref[step]["expert_load"] != m_run[step]["expert_load"]:
            print(f"step {step}: expert loads differ")
            ok = False
    print(f"metrics: {len(judged)} of {len(m_ref)} steps judged, largest relative difference {worst:.3g}")
    if metrics_only:
        print("OK" if ok else "MISMATCH")
        return 0 if ok else 1
    c_ref, c_run = last_checkpoint(ref), last_checkpoint(run)
    for fname in ("model.safetensors", "optim.safetensors"):
        a, b = read_safetensors(os.path.join(c_ref, fname)), read_safetensors(os.path.join(c_run, fname))
        if sorted(a) != sorted(b):
            print(f"{fname}: tensor names differ")
            ok = False
            continue
        worst, where = 0.0, ""
        for name in a:
            x, y = a[name], b[name]
            if np is not None:
                x, y = x.astype(np.float64), y.astype(np.float64)
                scale = float(np.abs(x).max()) if x.size else 0.0
                diff = float(np.abs(x - y).max()) if x.size else 0.0
            else:
                scale = max((abs(v) for v in x), default=0.0)
                diff = max((abs(p - q) for p, q in zip(x, y)), default=0.0)
            rel = diff / scale if scale > 0 else diff
            if rel > worst:
                worst, where = rel, name
            if rel > rtol:
                print(f"{fname}: {name}: max |diff| {diff:.3g} = {rel:.3g} of the tensor's largest value")
                ok = False
        print(f"{fname}: {len(a)} tensors, largest relative difference {worst:.3g} ({where})")
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
