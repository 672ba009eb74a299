#!/usr/bin/env python3
"""HF transformers loads T-Rex's HF-layout export and computes the same logits as the engine.

Input: a directory written by `test_io --gtest_filter=HfExportGolden.*` with TREX_HF_EXPORT_OUT=DIR:
  DIR/bf16, DIR/fp8, DIR/fp4          exports (config.json, index, shards) of the v4-micro golden-fixture weights
  DIR/ours_logits.safetensors         the engine's logits [B,S,V] for each export (imported back), and input_ids

For each export this loads the directory with `DeepseekV4ForCausalLM.from_pretrained` - HF's own config (from the
exported config.json, which carries `layer_types`/`compress_rates`; only index_topk is raised to select every
compressed entry, as the engine's dense-CSA run does) and HF's own loader, with its
own name mapping for the release layout (transformers' conversion_mapping "deepseek_v4": `layers.i.attn.wq_a` ->
`model.layers.i.self_attn.q_a_proj`, experts merged into `gate_up_proj`/`down_proj`, ...) and, for fp8/fp4, its own
FP8 128x128 / FP4 1x32 dequantisation (FineGrainedFP8 with dequantize=True, the CPU path) - then checks that
  * every HF parameter and buffer was loaded from the checkpoint (no missing keys; the only unexpected keys are
    the MTP block's `mtp.*`, which HF drops),
  * HF's weights equal an independent Python decode of the files (spec section 4.1/4.2 + the section 4.6 mapping of
    check_hf.py), bit for bit,
  * HF's float32 logits on the same batch (single-document rows, every compressed entry selected = dense CSA)
    agree with ours: ||ours - hf|| / ||hf|| <= --tol (1e-4).
--write-golden FILE stores HF's logits (F32 [B,S,V] per dtype) as the committed CI fixture, with the FNV-1a 64 hash
of every shard HF read (metadata `fnv1a64.<dtype>/<file>`): the C++ test checks that our export still writes exactly
those bytes, so the CI check covers the file format (nibble order, scales, names), not only the weights' values.

HF's FP8 quantizer refuses to start without the `accelerate` package even when it only dequantises on CPU (its
validate_environment checks for it first); the dequantise path does not use it, so when accelerate is missing this
script skips that check (documented in docs/checkpoints.md).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import torch
from safetensors import safe_open
from safetensors.torch import save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_hf as C  # noqa: E402
import dsv4_ref as R  # noqa: E402

FP4_TABLE = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], dtype=torch.float32)


def allow_cpu_dequantise_without_accelerate():
    import importlib.util
    if importlib.util.find_spec("accelerate") is not None:
        return
    import transformers.quantizers.quantizer_finegrained_fp8 as q
    q.is_accelerate_available = lambda: True


def fp8_values(u8: torch.Tensor) -> torch.Tensor:
    """E4M3FN decode by the definition (spec 4.1), independent of torch.float8_e4m3fn."""
    c = u8.to(torch.int64)
    s, e, m = (c >> 7) & 1, (c >> 3) & 15, c & 7
    v = torch.where(e == 0, m.double() * 2.0 ** -9, (8 + m).double() * torch.pow(2.0, (e - 10).double()))
    v = torch.where((e == 15) & (m == 7), torch.full_like(v, float("nan")), v)
    return torch.where(s == 1, -v, v)


def read_dir(d: str) -> dict:
    """Our checkpoint names -> float64/int64 tensors, decoded from the files by the spec."""
    with open(os.path.join(d, "model.safetensors.index.json")) as f:
        wm = json.load(f)["weight_map"]
    raw = {}
    for shard in sorted(set(wm.values())):
        with safe_open(os.path.join(d, shard), "pt") as f:
            for k in f.keys():
                raw[k] = f.get_tensor(k)
    out = {}
    for k, t in raw.items():
        if k.endswith(".scale"):
            continue
        sk = k[:-len(".weight")] + ".scale" if k.endswith(".weight") else None
        if sk in raw:
            sc = raw[sk].view(torch.uint8).to(torch.int64)
            scale = torch.pow(2.0, (sc - 127).double())
            if t.dtype == torch.int8:       # FP4 E2M1, low nibble = even column, 1x32 scales
                u = t.view(torch.uint8).to(torch.int64)
                vals = torch.stack([FP4_TABLE[u & 15], FP4_TABLE[u >> 4]], -1).reshape(t.shape[0], -1).double()
                out[k] = vals * scale.repeat_interleave(32, 1)[:, :vals.shape[1]]
            else:                           # FP8 E4M3, 128x128 scales
                vals = fp8_values(t.view(torch.uint8))
                full = scale.repeat_interleave(128, 0).repeat_interleave(128, 1)[:vals.shape[0], :vals.shape[1]]
                out[k] = vals * full
        elif t.dtype == torch.int64:
            out[k] = t
        else:
            out[k] = t.double()
    return out


def fnv1a64(path: str) -> str:
    """FNV-1a 64 of a file (the C++ test recomputes it to prove it exports exactly the bytes HF was run on)."""
    h = 0xcbf29ce484222325
    with open(path, "rb") as f:
        for b in f.read():
            h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--write-golden")
    args = ap.parse_args()
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    allow_cpu_dequantise_without_accelerate()
    from transformers import DeepseekV4Config, DeepseekV4ForCausalLM
    from transformers.utils import logging as hf_logging
    hf_logging.set_verbosity_error()

    ours_f = safe_open(os.path.join(args.dir, "ours_logits.safetensors"), "pt")
    ids = ours_f.get_tensor("input_ids").to(torch.int64)
    golden, failed, hashes = {}, [], {}
    for name in ("bf16", "fp8", "fp4"):
        d = os.path.join(args.dir, name)
        with open(os.path.join(d, "config.json")) as f:
            j = json.load(f)
        # HF's config from the exported config.json alone (it carries layer_types / compress_rates for HF); only
        # index_topk is raised so that every compressed entry is selected (dense CSA, as the engine run)
        hcfg = DeepseekV4Config.from_pretrained(d)
        ref = C.hf_config({k: v for k, v in j.items() if k not in ("layer_types", "compress_rates")})
        assert hcfg.layer_types == ref.layer_types and hcfg.compress_rates == ref.compress_rates, \
            (hcfg.layer_types, hcfg.compress_rates)
        hcfg.index_topk = ids.shape[1] // 4 + 1
        hcfg._attn_implementation = "eager"
        model, info = DeepseekV4ForCausalLM.from_pretrained(d, config=hcfg, dtype=torch.float32,
                                                            output_loading_info=True)
        model.eval()
        missing = list(info.get("missing_keys", []))
        unexpected = [k for k in info.get("unexpected_keys", []) if not k.startswith("mtp.")]
        mism = list(info.get("mismatched_keys", []))
        problems = []
        if missing or unexpected or mism:
            problems.append(f"loading: missing {missing[:5]} unexpected {unexpected[:5]} mismatched {mism[:5]}")
        # HF's weights == an independent decode of the files, mapped by check_hf's section 4.6 table
        P = read_dir(d)
        cfg = R.Config.from_dict(j)
        want = C.hf_state_from_ours({k: v for k, v in P.items() if not k.startswith("mtp.")}, cfg)
        sd = model.state_dict()
        for k, v in want.items():
            got = sd[k]
            ok = torch.equal(got.to(torch.int64), v) if not v.is_floating_point() else \
                torch.equal(got.double(), v.to(got.dtype).double())
            if not ok:
                problems.append(f"weight {k} differs from the decoded file")
                break
        # logits
        with torch.no_grad(), C.stable_topk():
            hf = model(input_ids=ids, use_cache=False).logits.float()
        ours = ours_f.get_tensor(name)
        err = float((ours.double() - hf.double()).norm() / hf.double().norm())
        status = "OK" if err <= args.tol and not problems else "FAIL"
        print(f"[{name}] HF from_pretrained({d}): {sum(p.numel() for p in model.parameters())} params, "
              f"logits relative error {err:.2e} (tol {args.tol:g}); {status} {'; '.join(problems)}")
        if status != "OK":
            failed.append(name)
        golden[name] = hf.contiguous()
        for fn in sorted(os.listdir(d)):
            if fn.endswith(".safetensors"):
                hashes[f"fnv1a64.{name}/{fn}"] = fnv1a64(os.path.join(d, fn))
    if args.write_golden:
        import transformers
        save_file(golden, args.write_golden, metadata={
            "generator": "tests/reference/check_hf_export.py --write-golden",
            "source": "DeepseekV4ForCausalLM.from_pretrained on the bf16/fp8/fp4 exports of the "
                      "tests/golden/micro_dense.safetensors weights (test HfExportGolden)",
            "torch": torch.__version__, "transformers": transformers.__version__, "dtype": "float32", **hashes})
        print(f"wrote {args.write_golden}")
    if failed:
        print("FAILED:", failed)
        sys.exit(1)


if __name__ == "__main__":
    main()
