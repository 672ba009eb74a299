"""Records torch.topk's CPU choices on rows full of ties, for tests/unit/kernels_topk_torch_test.cpp.

Each line: `n k v_0 … v_{n-1} | i_0 … i_{k-1}` — a row of n float32 scores drawn from a few values (exact ties, as
the lightning indexer's all-ReLU-zero entries give) with an optional -inf tail (the release's causal mask), k, and
the indices torch.topk(row, k) returns. Rows cover both of ATen's paths (k·64 ≤ n: partial sort; else nth_element).

    .venv/bin/python tests/reference/torch_topk_cases.py --out tests/golden/torch_topk_cases.txt
"""
import argparse
import random

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    palette = [0.0, 1.0, -1.0, 2.5, 0.5]
    with open(args.out, "w") as out:
        out.write(f"# torch {torch.__version__}: n k values | torch.topk indices\n")
        for _ in range(args.cases):
            n = rng.choice([3, 8, 16, 33, 64, 100, 257, 300, 640, 1100])
            k = rng.randint(1, min(n, rng.choice([2, 4, 16, 64])))
            used = palette[: rng.choice([1, 2, 3, 5])]
            vals = [rng.choice(used) for _ in range(n)]
            if rng.random() < 0.5:
                cut = rng.randint(0, n)
                vals[cut:] = [float("-inf")] * (n - cut)
            idx = torch.tensor(vals, dtype=torch.float32).topk(k)[1].tolist()
            out.write(f"{n} {k} " + " ".join(f"{v:g}" for v in vals) + " | " + " ".join(map(str, idx)) + "\n")


if __name__ == "__main__":
    main()
