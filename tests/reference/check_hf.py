#!/usr/bin/env python3
"""Cross-check dsv4_ref.py against Hugging Face transformers' DeepseekV4ForCausalLM.

For each config (default: configs/v4-tiny.json and configs/v4-micro.json) and each CSA mode (dense: index_topk >=
number of entries; topk: the config's index_topk) it builds the HF model from our JSON, copies our random weights into
it through the spec §4.6 name mapping (checking that every HF parameter and buffer is covered), runs single-document
rows (no packing) with the MTP / balance / indexer losses off (HF has none of them), and compares logits, LM loss, the
gradient of every HF parameter (mapped back to checkpoint names) and the selected top-k sets.

Three precisions are run:
  f64     : both models in float64, with HF's internal float32 up-casts lifted to float64 (precision-only patch:
            `Tensor.float()` is the identity on float64 tensors and `torch.float32` means float64 inside the HF
            modeling / rope modules). This is the gating comparison: exit 1 if any relative error > --tol (1e-8).
  f64-raw : both in float64, HF unpatched (HF computes RMSNorm, mHC, RoPE tables, compressor softmax, indexer
            scores and the loss in float32 internally) - informational.
  f32     : both in float32, HF unpatched - informational.

All runs use a stable top-k inside HF (ties toward the lower index, the contract's rule; torch.topk leaves the order
of equal values unspecified and exact ties at 0 are common in the indexer); the report also counts how many queries
plain torch.topk would have changed and whether those were all exact ties.

Relative error of a tensor = ||ours - hf|| / ||hf|| (0 when both are exactly 0).
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import re
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dsv4_ref as R  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


# ------------------------------------------------------------------------------------------------ HF config / model
def hf_config(j: dict, index_topk: int | None = None):
    from transformers import DeepseekV4Config
    j = copy.deepcopy(j)
    L = j["num_hidden_layers"]
    ratios = j.pop("compress_ratios")[:L]
    hca = sorted(set(r for r in ratios if r not in (0, 4)))
    assert len(hca) <= 1, "HF supports a single HCA ratio"
    names = {0: "sliding_attention", 4: "compressed_sparse_attention"}
    layer_types = [names.get(r, "heavily_compressed_attention") for r in ratios]
    compress_rates = {"compressed_sparse_attention": 4, "heavily_compressed_attention": hca[0] if hca else 128}
    for k in ("architectures", "torch_dtype"):
        j.pop(k, None)
    if index_topk is not None:
        j["index_topk"] = index_topk
    cfg = DeepseekV4Config(layer_types=layer_types, compress_rates=compress_rates, **j)
    cfg._attn_implementation = "eager"
    return cfg


def check_rope_params(hcfg, j):
    main, comp = hcfg.rope_parameters["main"], hcfg.rope_parameters["compress"]
    rs = j["rope_scaling"]
    problems = []
    if main.get("rope_type") != "default" or float(main["rope_theta"]) != float(j["rope_theta"]):
        problems.append(f"main rope {main}")
    want = dict(rope_type="yarn", rope_theta=float(j["compress_rope_theta"]), factor=rs["factor"],
                original_max_position_embeddings=rs["original_max_position_embeddings"],
                beta_fast=rs["beta_fast"], beta_slow=rs["beta_slow"], attention_factor=1.0)
    for k, v in want.items():
        if k not in comp or (float(comp[k]) if not isinstance(v, str) else comp[k]) != v:
            problems.append(f"compress rope {k}={comp.get(k)} (want {v})")
    if abs(hcfg.partial_rotary_factor * j["head_dim"] - j["qk_rope_head_dim"]) > 1e-9:
        problems.append("partial_rotary_factor")
    return problems, main, comp


def name_map(cfg: R.Config) -> dict:
    """ours -> HF name for every tensor that maps 1:1 (spec §4.6); the routed experts are packed separately."""
    out = {"embed.weight": "model.embed_tokens.weight", "head.weight": "lm_head.weight",
           "norm.weight": "model.norm.weight", "hc_head_fn": "model.hc_head.hc_fn",
           "hc_head_base": "model.hc_head.hc_base", "hc_head_scale": "model.hc_head.hc_scale"}
    comp_map = (("wkv.weight", "kv_proj.weight"), ("wgate.weight", "gate_proj.weight"),
                ("ape", "position_bias"), ("norm.weight", "kv_norm.weight"))
    for l in range(cfg.L):
        o, h = f"layers.{l}.", f"model.layers.{l}."
        out[o + "attn_norm.weight"] = h + "input_layernorm.weight"
        out[o + "ffn_norm.weight"] = h + "post_attention_layernorm.weight"
        for u in ("attn", "ffn"):
            for x in ("fn", "base", "scale"):
                out[o + f"hc_{u}_{x}"] = h + f"{u}_hc.{x}"
        a, sa = o + "attn.", h + "self_attn."
        for ours, hf in (("wq_a.weight", "q_a_proj.weight"), ("q_norm.weight", "q_a_norm.weight"),
                         ("wq_b.weight", "q_b_proj.weight"), ("wkv.weight", "kv_proj.weight"),
                         ("kv_norm.weight", "kv_norm.weight"), ("wo_a.weight", "o_a_proj.weight"),
                         ("wo_b.weight", "o_b_proj.weight"), ("attn_sink", "sinks")):
            out[a + ours] = sa + hf
        m = cfg.ratios[l]
        if m > 0:
            for ours, hf in comp_map:
                out[a + "compressor." + ours] = sa + "compressor." + hf
        if m == 4:
            ix = sa + "compressor.indexer."
            out[a + "indexer.wq_b.weight"] = ix + "q_b_proj.weight"
            out[a + "indexer.weights_proj.weight"] = ix + "scorer.weights_proj.weight"
            for ours, hf in comp_map:
                out[a + "indexer.compressor." + ours] = ix + hf
        f, mp = o + "ffn.", h + "mlp."
        out[f + "gate.weight"] = mp + "gate.weight"
        if cfg.is_hash(l):
            out[f + "gate.tid2eid"] = mp + "gate.tid2eid"
        else:
            out[f + "gate.bias"] = mp + "gate.e_score_correction_bias"
        out[f + "shared_experts.w1.weight"] = mp + "shared_experts.gate_proj.weight"
        out[f + "shared_experts.w3.weight"] = mp + "shared_experts.up_proj.weight"
        out[f + "shared_experts.w2.weight"] = mp + "shared_experts.down_proj.weight"
    return out


def hf_state_from_ours(P: dict, cfg: R.Config) -> dict:
    """Our checkpoint-named tensors -> HF state dict (spec §4.6)."""
    out = {hf: (P[o].to(torch.int64) if o.endswith("tid2eid") else P[o]) for o, hf in name_map(cfg).items()}
    for l in range(cfg.L):
        f, mp = f"layers.{l}.ffn.", f"model.layers.{l}.mlp."
        # gate_up_proj[e] = cat(w1, w3) along the output dim (w1 rows first); down_proj[e] = w2
        out[mp + "experts.gate_up_proj"] = torch.stack(
            [torch.cat([P[f + f"experts.{e}.w1.weight"], P[f + f"experts.{e}.w3.weight"]], 0) for e in range(cfg.E)])
        out[mp + "experts.down_proj"] = torch.stack([P[f + f"experts.{e}.w2.weight"] for e in range(cfg.E)])
    return out


def ours_from_hf_grads(model, cfg: R.Config) -> dict:
    """HF parameter gradients -> our checkpoint names (None grads -> zeros)."""
    g = {n: (p.grad if p.grad is not None else torch.zeros_like(p)) for n, p in model.named_parameters()}
    out = {o: g[hf] for o, hf in name_map(cfg).items() if R.is_trainable(o)}
    I = cfg.I
    for l in range(cfg.L):
        f, mp = f"layers.{l}.ffn.", f"model.layers.{l}.mlp."
        gu, dn = g[mp + "experts.gate_up_proj"], g[mp + "experts.down_proj"]
        for e in range(cfg.E):
            out[f + f"experts.{e}.w1.weight"] = gu[e, :I]
            out[f + f"experts.{e}.w3.weight"] = gu[e, I:]
            out[f + f"experts.{e}.w2.weight"] = dn[e]
    missing = [k for k in R.param_shapes(cfg) if not k.startswith("mtp.") and R.is_trainable(k) and k not in out]
    assert not missing, missing
    used = set(name_map(cfg).values()) | {n for n, _ in model.named_parameters() if "experts." in n and "shared" not in n}
    unused = [n for n, _ in model.named_parameters() if n not in used]
    assert not unused, f"HF parameters without a checkpoint name: {unused}"
    return out


@contextlib.contextmanager
def lifted_float32():
    """Inside: Tensor.float() is the identity on float64 tensors and torch.float32/torch.float mean float64 in the
    HF DeepSeek-V4 modeling and rope modules. Precision-only: it removes HF's internal fp32 up-casts (which are
    down-casts for a float64 model) so that a float64 HF run is a float64 computation end to end."""
    import transformers.modeling_rope_utils as mru
    import transformers.models.deepseek_v4.modeling_deepseek_v4 as mdv
    import transformers.loss.loss_utils as lu

    class _TorchProxy:
        def __init__(self, real):
            self._real = real

        def __getattr__(self, k):
            if k in ("float32", "float"):
                return self._real.float64
            return getattr(self._real, k)

    real_float = torch.Tensor.float

    def _float(self, *a, **k):
        if self.dtype == torch.float64:
            return self
        return real_float(self, *a, **k)
    mods = (mru, mdv, lu)
    saved = [m.torch for m in mods]
    try:
        torch.Tensor.float = _float
        for m in mods:
            m.torch = _TorchProxy(torch)
        yield
    finally:
        torch.Tensor.float = real_float
        for m, t in zip(mods, saved):
            m.torch = t


@contextlib.contextmanager
def stable_topk():
    """torch.topk with ties broken toward the lower index (the contract's rule, docs/model.md §3.4/§3.5). torch.topk
    leaves the order of equal values unspecified, and exact ties are common in the indexer: an entry whose ReLU terms
    are all zero scores exactly 0. Only the tie order changes; the values are untouched."""
    real_m, real_f = torch.Tensor.topk, torch.topk

    def topk(x, k, dim=-1, largest=True, sorted=True):
        v, i = torch.sort(x, dim=dim, descending=largest, stable=True)
        return torch.return_types.topk((v.narrow(dim, 0, k), i.narrow(dim, 0, k)))
    try:
        torch.Tensor.topk = topk
        torch.topk = topk
        yield
    finally:
        torch.Tensor.topk = real_m
        torch.topk = real_f


def build_hf(j, P, cfg, dtype, index_topk, lifted):
    from transformers import DeepseekV4ForCausalLM
    ctx = lifted_float32() if lifted else contextlib.nullcontext()
    with ctx:
        hcfg = hf_config(j, index_topk)
        torch.manual_seed(0)
        model = DeepseekV4ForCausalLM(hcfg)
    model.config._attn_implementation = "eager"
    model.config._experts_implementation = "eager"   # the loop over experts (grouped_mm has no float64)
    model = model.to(dtype)
    model.eval()
    st = hf_state_from_ours({k: (v.to(dtype) if v.is_floating_point() else v) for k, v in P.items()}, cfg)
    sd = model.state_dict()
    persistent = set(sd.keys())
    extra = sorted(set(st) - persistent)
    uncovered = sorted(persistent - set(st))
    assert not extra, f"mapped names unknown to HF: {extra[:10]}"
    assert not uncovered, f"HF tensors not covered by the mapping: {uncovered[:10]}"
    for k, v in st.items():
        assert sd[k].shape == v.shape, (k, sd[k].shape, v.shape)
    model.load_state_dict(st, strict=True)
    assert model.lm_head.weight.data_ptr() != model.model.embed_tokens.weight.data_ptr(), "head tied to embedding"
    for k, v in model.state_dict().items():   # every HF tensor really holds our values
        assert torch.equal(v, st[k].to(v.dtype)), k
    # rotary buffers: in the lifted run recompute them in float64 after .to() (they are non-persistent buffers)
    return model, hcfg


def capture_indexer(model):
    import transformers.models.deepseek_v4.modeling_deepseek_v4 as mdv
    got = {}
    hooks = []
    for i, layer in enumerate(model.model.layers):
        comp = layer.self_attn.compressor
        if isinstance(comp, mdv.DeepseekV4CSACompressor):
            hooks.append(comp.indexer.register_forward_hook(
                lambda mod, args, out, i=i: got.__setitem__(i, out.detach().clone())))
            hooks.append(comp.indexer.scorer.register_forward_hook(
                lambda mod, args, out, i=i: got.__setitem__(("scores", i), out.detach().clone())))
    return got, hooks


def make_batch(cfg, B, S, seed):
    g = torch.Generator().manual_seed(seed)
    tok = torch.randint(0, cfg.V, (B, S + 2), generator=g)
    ids = tok[:, :S]
    labels = tok[:, 1:S + 1].clone()
    drop = torch.rand(B, S, generator=g) < 0.1
    labels[drop] = -1
    labels[:, S - 1] = -1           # HF shifts internally: the last slot has no target there
    mtp_ids = tok[:, 1:S + 1].clone()
    mtp_labels = tok[:, 2:S + 2].clone()
    ds = torch.zeros(B, S, dtype=torch.int64)
    ds[:, 0] = 1
    return dict(input_ids=ids, labels=labels, mtp_input_ids=mtp_ids, mtp_labels=mtp_labels, doc_start=ds)


def rel(a, b):
    a, b = a.detach().to(torch.float64), b.detach().to(torch.float64)
    nb = b.norm()
    na = (a - b).norm()
    if nb == 0:
        return 0.0 if na == 0 else float("inf")
    return float(na / nb)


def pattern(name):
    return re.sub(r"\.\d+\.", ".*.", name)


def run_case(j, cfg, P, batch, mode, prec, verbose):
    dtype = torch.float32 if prec == "f32" else torch.float64
    lifted = prec == "f64"
    entries = max(1, batch["input_ids"].shape[1] // 4)
    index_topk = max(cfg.kI, entries + 1) if mode == "dense" else cfg.kI
    model, hcfg = build_hf(j, P, cfg, dtype, index_topk, lifted)
    # ---- HF
    got, hooks = capture_indexer(model)
    ids = batch["input_ids"]
    hf_labels = torch.full_like(ids, -100)
    lab = batch["labels"]
    hf_labels[:, 1:] = torch.where(lab[:, :-1] >= 0, lab[:, :-1], torch.full_like(lab[:, :-1], -100))
    ctx = lifted_float32() if lifted else contextlib.nullcontext()
    t0 = time.time()
    with ctx, stable_topk():
        out_hf = model(input_ids=ids, labels=hf_labels, use_cache=False)
        out_hf.loss.backward()
    t_hf = time.time() - t0
    for h in hooks:
        h.remove()
    g_hf = ours_from_hf_grads(model, cfg)
    # ---- ours
    Pd = {k: (v.to(dtype).detach().clone().requires_grad_(R.is_trainable(k)) if v.is_floating_point() else v)
          for k, v in P.items() if not k.startswith("mtp.")}
    t0 = time.time()
    out = R.forward(Pd, cfg, batch, mode=mode, lambda_mtp=0.0, alpha_bal=0.0, lambda_idx=0.0, record=True,
                    with_mtp=False)
    out["losses"]["total"].backward()
    t_ref = time.time() - t0
    res = {"logits": rel(out["logits"], out_hf.logits),
           "loss": abs(float(out["losses"]["lm"].detach()) - float(out_hf.loss.detach())) / abs(float(out_hf.loss))}
    grads = {}
    for k, v in Pd.items():
        if not R.is_trainable(k):
            continue
        grads[k] = rel(v.grad if v.grad is not None else torch.zeros_like(v), g_hf[k])
    # ---- top-k sets (HF ran with the stable tie rule; also count what plain torch.topk would have changed)
    mism, total, raw_diff, raw_nontie = 0, 0, 0, 0
    for l, sel_ids in out["topk"].items():
        hf_idx = got[l]                                          # [B,S,k] with -1
        sc = got[("scores", l)]
        cl = out["layout"].comp[4]
        masked = sc.masked_fill(~cl.visible, float("-inf"))
        raw = masked.topk(min(cfg.kI, masked.shape[-1]), dim=-1).indices
        for b in range(ids.shape[0]):
            for s in range(ids.shape[1]):
                a = set(x for x in sel_ids[b, s].tolist() if x >= 0)
                h = set(x for x in hf_idx[b, s].tolist() if x >= 0)
                total += 1
                mism += a != h
                rw = set(x for x in raw[b, s].tolist() if cl.visible[b, s, x])
                if mode == "topk" and rw != h:
                    raw_diff += 1
                    va = sorted(float(sc[b, s, x]) for x in rw)
                    vh = sorted(float(sc[b, s, x]) for x in h)
                    raw_nontie += va != vh
    res["topk_mismatch"] = (mism, total)
    res["raw_topk"] = (raw_diff, raw_nontie)
    res["time"] = (t_ref, t_hf)
    res["grads"] = grads
    res["hf_loss"] = float(out_hf.loss)
    return res, hcfg


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", action="append", help="config JSON (repeatable); default: v4-tiny and v4-micro")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=0, help="sequence length (default: 256 for tiny, 64 for micro)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--precisions", default="f64,f64-raw,f32")
    ap.add_argument("--full", action="store_true", help="print every tensor, not only the per-pattern maximum")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    configs = args.config or [os.path.join(REPO, "configs", "v4-tiny.json"), os.path.join(REPO, "configs", "v4-micro.json")]
    precs = args.precisions.split(",")
    failed = []
    for path in configs:
        with open(path) as f:
            j = json.load(f)
        cfg = R.Config.from_dict(j)
        S = args.seq or (256 if cfg.d >= 256 else 64)
        P = R.init_params(cfg, args.seed, torch.float64)
        batch = make_batch(cfg, args.batch, S, args.seed + 100)
        print(f"=== {os.path.basename(path)}: B={args.batch} S={S}, layer ratios {cfg.ratios[:cfg.L]}, "
              f"CSA entries/row {S // 4}, index_topk {cfg.kI}")
        hcfg = hf_config(j)
        problems, main_rp, comp_rp = check_rope_params(hcfg, j)
        print(f"HF layer_types {hcfg.layer_types}, compress_rates {hcfg.compress_rates}, "
              f"mlp_layer_types {hcfg.mlp_layer_types}")
        print(f"HF rope main {main_rp}")
        print(f"HF rope compress {comp_rp}")
        if problems:
            print("ROPE PARAMETER PROBLEMS:", problems)
            failed.append((path, "rope"))
        for mode in ("dense", "topk"):
            results = {}
            for prec in precs:
                results[prec], _ = run_case(j, cfg, P, batch, mode, prec, args.full)
            print(f"--- mode {mode}")
            hdr = "".join(f"{p:>12}" for p in precs)
            print(f"{'quantity':<60}{hdr}")
            print(f"{'logits':<60}" + "".join(f"{results[p]['logits']:12.2e}" for p in precs))
            print(f"{'LM loss':<60}" + "".join(f"{results[p]['loss']:12.2e}" for p in precs))
            print(f"{'top-k sets differing (of queries)':<60}" + "".join(
                f"{'%d/%d' % results[p]['topk_mismatch']:>12}" for p in precs))
            names = list(results[precs[0]]["grads"].keys())
            if args.full:
                rows = [(n, [results[p]["grads"][n] for p in precs]) for n in names]
            else:
                agg = {}
                for n in names:
                    k = pattern(n)
                    cur = agg.setdefault(k, [0.0] * len(precs))
                    for i, p in enumerate(precs):
                        cur[i] = max(cur[i], results[p]["grads"][n])
                rows = [("grad " + k + " (max)", v) for k, v in agg.items()]
            for n, vals in rows:
                print(f"{n:<60}" + "".join(f"{v:12.2e}" for v in vals))
            for p in precs:
                r = results[p]
                worst = max(r["grads"].values())
                print(f"[{p}] max grad rel err {worst:.2e} ({len(r['grads'])} tensors), logits {r['logits']:.2e}, "
                      f"loss {r['loss']:.2e}, top-k mismatches {r['topk_mismatch'][0]} (plain torch.topk would pick "
                      f"a different set for {r['raw_topk'][0]} queries, {r['raw_topk'][1]} of them not exact ties), "
                      f"time ref {r['time'][0]:.1f}s hf {r['time'][1]:.1f}s, HF loss {r['hf_loss']:.6f}")
            if "f64" in results:
                r = results["f64"]
                bad = max([r["logits"], r["loss"]] + list(r["grads"].values()))
                if bad > args.tol or r["topk_mismatch"][0] != 0:
                    failed.append((path, mode, bad, r["topk_mismatch"]))
    if failed:
        print("FAILED:", failed)
        sys.exit(1)
    print(f"OK: every float64 relative error <= {args.tol:g} and identical top-k sets")


if __name__ == "__main__":
    main()
