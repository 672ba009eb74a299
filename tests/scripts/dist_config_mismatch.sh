#!/usr/bin/env bash
# Two ranks started with different run configs (MPMD: one `trex train` command line per rank) must refuse to train:
# both exit at start, mpirun non-zero, and the message names the first differing key. Once they trained to exit 0
# with inconsistent results.
# Usage: dist_config_mismatch.sh TREX SOURCE_DIR WORKDIR. Exit 77 (skipped) when mpirun is absent.
set -euo pipefail
trex="$1"; src="$2"; work="$3"
command -v mpirun > /dev/null || { echo "mpirun not found: skipped"; exit 77; }
rm -rf "$work"; mkdir -p "$work"
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
common=(train --set "model.config=\"$src/configs/v4-micro.json\"" --set data.seq=64 --set log.report=false
        --set dist.timeout=20 --steps 2 --out "$work/run")
# case: what rank 1 is given differently | the key the message must name
cases=(
  "--set data.batch=4|data.batch"
  "--set run.seed=7|run.seed"
  "--set optim.lr=1e-3|optim.lr"
  "--set data.seq=32|data.seq"
)
status_all=0
for c in "${cases[@]}"; do
  flags="${c%%|*}"; key="${c##*|}"
  rm -rf "$work/run"
  status=0
  # shellcheck disable=SC2086
  timeout 120 mpirun --oversubscribe --bind-to none -n 1 "$trex" "${common[@]}" --set data.batch=2 --set run.seed=1 \
    : -n 1 "$trex" "${common[@]}" --set data.batch=2 --set run.seed=1 $flags > "$work/log" 2>&1 || status=$?
  if [ "$status" -eq 0 ]; then
    echo "FAIL ($flags): mpirun exited 0"; status_all=1; continue
  fi
  if [ "$status" -eq 124 ]; then
    echo "FAIL ($flags): still running after 120 s"; status_all=1; continue
  fi
  if ! grep -q "differs from rank 0 at '$key'" "$work/log"; then
    echo "FAIL ($flags): no message names '$key'"; cat "$work/log"; status_all=1; continue
  fi
  if [ -f "$work/run/metrics.jsonl" ] && [ -s "$work/run/metrics.jsonl" ]; then
    echo "FAIL ($flags): a step was trained"; status_all=1; continue
  fi
  echo "OK ($flags): refused, naming '$key': $(grep -o "differs from rank 0 at '[^']*' ([^)]*)" "$work/log" | head -1)"
done
# the same config on both ranks still trains
status=0
timeout 300 mpirun --oversubscribe --bind-to none -n 2 "$trex" "${common[@]}" --set data.batch=2 > "$work/log" 2>&1 ||
  status=$?
if [ "$status" -ne 0 ]; then echo "FAIL: equal configs did not train"; tail -20 "$work/log"; status_all=1; fi
rm -rf "$work/run"
exit $status_all
