#!/usr/bin/env python3
"""Every `#pragma omp simd` loop of src/ (the CPU kernels and the model code that has such loops) must vectorise.

GCC's -fopt-info-vec reports, for each loop it considers, "loop vectorized" or "couldn't vectorize loop" at a line
inside the loop. A loop marked `#pragma omp simd` whose lines carry a "couldn't vectorize" report and no "vectorized"
report stayed scalar: that happened silently to swiglu, the cross-entropy row maxima and the indexer ReLU (std::max /
std::min return references, and GCC gives up on the loop), costing ~7 % of a training step. This check keeps it from
coming back.

usage: check_simd_loops.py --cxx COMPILER --src SOURCE_ROOT [--native]
exit 0: all vectorised; 1: some are not (listed); 77: not GCC (the reports are GCC's), skipped.
"""
import argparse
import pathlib
import re
import subprocess
import sys


def simd_loops(lines):
    """(first, last) 1-based line ranges of the loops that follow `#pragma omp simd`."""
    loops = []
    for i, line in enumerate(lines):
        if not line.strip().startswith("#pragma omp simd"):
            continue
        first = i + 1  # 0-based index of the `for` line
        depth, opened, last = 0, False, first
        for j in range(first, len(lines)):
            code = lines[j].split("//")[0]
            depth += code.count("{") - code.count("}")
            opened = opened or "{" in code
            last = j
            if (opened and depth <= 0) or (not opened and code.rstrip().endswith(";")):
                break
        loops.append((first + 1, last + 1))
    return loops


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--native", action="store_true", help="compile with -march=native (TREX_NATIVE)")
    a = ap.parse_args()
    version = subprocess.run([a.cxx, "--version"], capture_output=True, text=True).stdout
    if "GCC" not in version and "g++" not in version and "Free Software Foundation" not in version:
        print(f"skipped: {a.cxx} is not GCC")
        return 77
    root = pathlib.Path(a.src)
    flags = ["-O3", "-fopenmp", "-fno-trapping-math", "-fno-math-errno", "-std=c++20", f"-I{root / 'src'}"]
    if a.native:
        flags.append("-march=native")
    report = re.compile(r"^(.*?):(\d+):\d+: (?:optimized|missed): (loop vectorized|couldn't vectorize loop)")
    bad, n_loops = [], 0
    files = [f for f in sorted((root / "src").rglob("*.cpp")) if "#pragma omp simd" in f.read_text()]
    for f in files:
        p = subprocess.run([a.cxx, *flags, "-c", str(f), "-o", "/dev/null", "-fopt-info-vec-all"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"cannot compile {f}:\n{p.stderr[-2000:]}")
            return 2
        vectorised, missed = set(), set()
        for line in p.stderr.splitlines():
            m = report.match(line)
            if m and pathlib.Path(m.group(1)).name == f.name:
                (vectorised if m.group(3) == "loop vectorized" else missed).add(int(m.group(2)))
        lines = f.read_text().splitlines()
        for first, last in simd_loops(lines):
            n_loops += 1
            span = set(range(first, last + 1))
            if span & missed and not span & vectorised:
                bad.append(f"{f.relative_to(root)}:{first}: {lines[first - 1].strip()}")
    for b in bad:
        print("not vectorised:", b)
    print(f"{n_loops} `#pragma omp simd` loops in {len(files)} files, {len(bad)} not vectorised")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
