#!/usr/bin/env python3
"""HF tokenizers peer for `trex bench tokenizer`.

Reads the documents trex wrote (JSONL, {"text": ...} per line), encodes them with HF tokenizers
(Tokenizer.encode_batch_fast — HF's fastest path, no offsets — or encode_batch on versions without it;
add_special_tokens=False) and prints one JSON line:
  {"mb_per_s": median, "mb_per_s_best": fastest, "mb_per_s_first": first pass, "seconds": [...], "tokens": total,
   "threads": n, "version": v}
Run it with RAYON_NUM_THREADS=1 and TOKENIZERS_PARALLELISM=false for one thread (the bench does); --threads 2 runs
encode_batch on a 2-thread Rayon pool (RAYON_NUM_THREADS=2, TOKENIZERS_PARALLELISM=true).
"""
import argparse
import json
import statistics
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("docs")
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    import tokenizers
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(a.tokenizer)
    with open(a.docs, encoding="utf-8") as f:
        docs = [json.loads(line)["text"] for line in f if line.strip()]
    nbytes = sum(len(d.encode()) for d in docs)
    encode = getattr(tok, "encode_batch_fast", None) or tok.encode_batch
    times, tokens = [], 0
    for r in range(a.repeats + 1):  # the first pass is reported separately (cold word cache)
        t0 = time.perf_counter()
        out = encode(docs, add_special_tokens=False)
        times.append(time.perf_counter() - t0)
        tokens = sum(len(e.ids) for e in out)
    warm = times[1:] or times
    print(json.dumps({"mb_per_s": nbytes / 1e6 / statistics.median(warm), "mb_per_s_first": nbytes / 1e6 / times[0],
                      "mb_per_s_best": nbytes / 1e6 / min(warm),
                      "seconds": times, "tokens": tokens, "threads": a.threads, "bytes": nbytes,
                      "version": tokenizers.__version__, "method": encode.__name__}))


if __name__ == "__main__":
    main()
