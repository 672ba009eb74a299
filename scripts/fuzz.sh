#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ (every input reader that takes untrusted bytes: run config, model config,
# safetensors, tokenizer.json, LP, MPS, MathProg, answer extraction, benchmark files, OpenAI request bodies), built
# with ASan + UBSan.
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS] [RUNS]
#                                              one target (or all of them, the default) for SECONDS each (default 30),
#                                              or until RUNS executions when those come first (e.g. 1000000)
#   scripts/fuzz.sh --list                     the targets
#
# Configures and builds build-fuzz/ (clang++-14: scripts/setup.sh --with-fuzz installs it) when needed. Each target
# starts from its seed corpus (the repository's fixtures, plus fuzz/seeds/<target>/ where the fixtures have nothing
# of that kind) copied to a scratch directory, and runs in a scratch working directory with TMPDIR pointing into it
# (MathProg can write files), so the checked-in corpus never grows and nothing is left behind; the scratch directory
# is removed at exit. Prints per target the executions and the result; exits non-zero on any finding (a crash, an
# abort, a sanitizer report, a leak, an uncaught exception, an input slower than 10 s, more than 2 GB of memory),
# whose reproducer is kept in build-fuzz/findings/<target>/ (rerun it: build-fuzz/fuzz/fuzz_<target> FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

targets=(train_config model_config safetensors tokenizer lp mps mathprog extract benchmark openai_request)
target=all
seconds=30
case "${1:-}" in
    --list) printf '%s\n' "${targets[@]}"; exit 0 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
esac
[ $# -ge 1 ] && target=$1
[ $# -ge 2 ] && seconds=$2
runs=-1  # libFuzzer's "no limit"
[ $# -ge 3 ] && runs=$3
if [ $# -gt 3 ] || ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ] || ! [[ "$runs" =~ ^(-1|[1-9][0-9]*)$ ]]; then
    echo "usage: scripts/fuzz.sh [TARGET|all] [SECONDS] [RUNS]" >&2
    exit 2
fi
if [ "$target" = all ]; then
    selected=("${targets[@]}")
elif printf '%s\n' "${targets[@]}" | grep -qx -- "$target"; then
    selected=("$target")
else
    echo "fuzz.sh: unknown target '$target' (targets: ${targets[*]})" >&2
    exit 2
fi

cxx=${TREX_FUZZ_CXX:-clang++-14}
if ! command -v "$cxx" > /dev/null; then
    echo "fuzz.sh: $cxx not found; run scripts/setup.sh --with-fuzz (clang 14, its sanitizer runtimes, OpenMP)" >&2
    exit 2
fi
if [ ! -f build-fuzz/CMakeCache.txt ]; then
    cmake -S . -B build-fuzz -DTREX_FUZZ=ON -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Debug
fi
cmake --build build-fuzz -j "$(nproc)" --target "${selected[@]/#/fuzz_}"

work=$(mktemp -d "${TMPDIR:-/tmp}/trex_fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The seed files of a target, one path per line.
seeds_of() {
    case "$1" in
        train_config) ls configs/*.toml fuzz/seeds/train_config/* ;;
        model_config) ls configs/v4-*.json ;;
        # tests/golden/*.safetensors (0.3-2.9 MB) would make every mutation slow: small files of every dtype instead
        safetensors) ls fuzz/seeds/safetensors/* ;;
        # the two small trained tokenizers (the 160 kB reduced DeepSeek-V4 one would slow every mutation down)
        tokenizer) ls tests/golden/tokenizer/trained_v600_digits.json tests/golden/tokenizer/trained_v1000.json \
                      fuzz/seeds/tokenizer/* ;;
        lp) ls tests/fixtures/eval/lp/*.lp fuzz/seeds/lp/* ;;
        mps) ls fuzz/seeds/mps/* ;;
        mathprog) ls fuzz/seeds/mathprog/* ;;
        benchmark) ls tests/fixtures/eval/*.json tests/fixtures/eval/*.jsonl tests/fixtures/eval/completions/*.jsonl ;;
        # the model files as whole completions (extract also sees the fixtures' completions: copy_seeds)
        extract) ls tests/fixtures/eval/lp/*.lp fuzz/seeds/mps/* fuzz/seeds/mathprog/* ;;
        openai_request) ls fuzz/seeds/openai_request/* ;;
    esac
}

# Fills directory $2 with the seed corpus of target $1.
copy_seeds() {
    mkdir -p "$2"
    seeds_of "$1" | while read -r f; do cp "$f" "$2/"; done
    if [ "$1" = extract ]; then  # one file per completion of the eval fixtures
        python3 - "$2" tests/fixtures/eval/completions/*.jsonl <<'PY'
import json, sys
out = sys.argv[1]
for path in sys.argv[2:]:
    for n, line in enumerate(open(path, encoding="utf-8")):
        if line.strip():
            name = path.rsplit("/", 1)[-1].removesuffix(".jsonl")
            open(f"{out}/{name}-{n + 1}.txt", "w", encoding="utf-8").write(json.loads(line)["completion"])
PY
    fi
}

export OMP_NUM_THREADS=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
results=()
failed=0
for t in "${selected[@]}"; do
    corpus=$work/corpus/$t
    run_dir=$work/run/$t
    artefact_dir=$work/findings/$t
    log=$work/$t.log
    kept=$root/build-fuzz/findings/$t
    rm -rf "$kept"  # a previous run's findings of this target
    copy_seeds "$t" "$corpus"
    mkdir -p "$run_dir" "$artefact_dir" "$work/tmp"
    echo "fuzz: $t for $seconds s ($(ls "$corpus" | wc -l) seeds)"
    rc=0
    (cd "$run_dir" && TMPDIR=$work/tmp "$root/build-fuzz/fuzz/fuzz_$t" -max_total_time="$seconds" -runs="$runs" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artefact_dir/" "$corpus" > "$log" 2>&1) || rc=$?
    execs=$(awk '/stat::number_of_executed_units:/ {n = $2} END {print n}' "$log")
    if [ "$rc" -eq 0 ] && [ -z "$(ls "$artefact_dir")" ]; then
        results+=("$(printf '%-13s %12s executions  0 findings' "$t" "${execs:-?}")")
        continue
    fi
    failed=1
    mkdir -p "$kept"
    cp "$artefact_dir"/* "$kept/" 2> /dev/null || true
    cp "$log" "$kept/libfuzzer.log"
    results+=("$(printf '%-13s %12s executions  FINDING (exit %s): reproducers and log in %s' "$t" "${execs:-?}" \
        "$rc" "build-fuzz/findings/$t")")
    echo "fuzz: $t: the end of libFuzzer's log:"
    tail -n 60 "$log"
done

echo "fuzz: results ($seconds s per target)"
printf '  %s\n' "${results[@]}"
exit $failed
