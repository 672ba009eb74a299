#!/usr/bin/env bash
# Layout-independent checkpoints (docs/distributed.md): save under dp2 after 2 steps, resume under ep2, pp2 and one
# process to step 4; save under pp2 (2 micro-batches per step through the pipeline), resume under dp2. Every
# continuation must be bitwise identical to an uninterrupted single-process run (each of these layouts is bitwise the
# single-process run, so the checkpoint is the only thing that could break it). The
# schedule is pinned (optim.total) so that the 2-step run has the 4-step run's learning rates.
# Usage: dist_resume_layouts.sh TREX SOURCE_DIR WORKDIR. Exit 77 (skipped) when mpirun is absent.
set -euo pipefail
source "$(dirname "$0")/dist_resume_common.sh"
mpi=(mpirun -n 2 --oversubscribe --bind-to none)
run "$work/single.log" "$trex" train "${common[@]}" --set data.grad_accum=2 --steps 4 --out "$work/single"
run "$work/dp2.log" "${mpi[@]}" "$trex" train "${common[@]}" --steps 2 --out "$work/dp2"
run "$work/pp2.log" "${mpi[@]}" "$trex" train "${common[@]}" --pp 2 --set data.grad_accum=2 --steps 2 \
  --out "$work/pp2"
py=python3; [ -x "$src/.venv/bin/python" ] && py="$src/.venv/bin/python"
# resume NAME FROM TRAIN-COMMAND...: a copy of FROM's run resumed to step 4, compared with the single-process run
resume() {
  local name="$1" from="$2"; shift 2
  cp -r "$work/$from" "$work/$name"
  run "$work/$name.log" "$@" --steps 4 --resume auto --out "$work/$name"
  grep -h "^resume:" "$work/$name.log"
  echo "== $name"
  "$py" "$src/tests/scripts/compare_runs.py" "$work/single" "$work/$name" --bitwise
  done_with "$name"
}
resume to_ep2 dp2 "${mpi[@]}" "$trex" train "${common[@]}" --ep 2
resume to_one dp2 "$trex" train "${common[@]}" --set data.grad_accum=2
resume to_pp2 dp2 "${mpi[@]}" "$trex" train "${common[@]}" --pp 2 --set data.grad_accum=2
done_with dp2
resume pp2_to_dp2 pp2 "${mpi[@]}" "$trex" train "${common[@]}"
