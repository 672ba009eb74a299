#!/usr/bin/env bash
# A distributed layout against the single-process run on v4-tiny (docs/distributed.md): the same global batch
# (the single process runs the DP ranks' micro-batches as gradient accumulation; TP and PP ranks share theirs), 3 optimizer steps, then
# tests/scripts/compare_runs.py with COMPARE (--bitwise: every step's losses and gradient norm, the final weights and
# optimizer state identical; or --rtol 1e-6 --bitwise-first --metrics-only).
# The single process runs SINGLE_ACCUM micro-batches per step: the layout's data.grad_accum x its DP size (pipeline
# layouts pass --set data.grad_accum=K to the distributed run: K micro-batches flow through each pipeline).
# Usage: dist_equivalence.sh TREX SOURCE_DIR WORKDIR RANKS SINGLE_ACCUM "COMPARE FLAGS" [trex train flags: --ep N ...]
# Exit 77 (skipped) when mpirun is absent.
set -euo pipefail
trex="$1"; src="$2"; work="$3"; ranks="$4"; accum="$5"; compare="$6"; shift 6
command -v mpirun > /dev/null || { echo "mpirun not found: skipped"; exit 77; }
rm -rf "$work"; mkdir -p "$work"
# A run's checkpoint is 150 MB: both are removed when this script ends, pass or fail (the logs and metrics stay);
# TREX_KEEP_TEST_RUNS=1 keeps them for debugging.
[ "${TREX_KEEP_TEST_RUNS:-0}" = 1 ] || trap 'rm -rf "$work"/*/checkpoints' EXIT
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# TREX_DIST_SHARED: more trex train flags for both runs (e.g. the numerics keys); TREX_DIST_STEPS: steps (3)
read -r -a shared <<< "${TREX_DIST_SHARED:-}"
common=(--set "model.config=\"$src/configs/v4-tiny.json\"" --set data.batch=2 --set data.seq=64
        --set optim.lr=1e-3 --set checkpoint.every=0 --set log.report=false --set dist.timeout=120
        --steps "${TREX_DIST_STEPS:-3}" "${shared[@]}")
"$trex" train "${common[@]}" --set data.grad_accum="$accum" --out "$work/single" > "$work/single.log" 2>&1 ||
  { cat "$work/single.log"; exit 1; }
mpirun -n "$ranks" --oversubscribe --bind-to none "$trex" train "${common[@]}" "$@" --out "$work/dist" \
  > "$work/dist.log" 2>&1 || { cat "$work/dist.log"; exit 1; }
grep -E '^(dist|pp):' "$work/dist.log" | head -20
py=python3; [ -x "$src/.venv/bin/python" ] && py="$src/.venv/bin/python"
"$py" "$src/tests/scripts/compare_runs.py" "$work/single" "$work/dist" $compare
