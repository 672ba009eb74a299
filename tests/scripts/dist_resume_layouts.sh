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
cp -r "$work/dp2" "$work/to_ep2"
cp -r "$work/dp2" "$work/to_one"
cp -r "$work/dp2" "$work/to_pp2"
cp -r "$work/pp2" "$work/pp2_to_dp2"
run "$work/to_ep2.log" "${mpi[@]}" "$trex" train "${common[@]}" --ep 2 --steps 4 --resume auto --out "$work/to_ep2"
run "$work/to_one.log" "$trex" train "${common[@]}" --set data.grad_accum=2 --steps 4 --resume auto \
  --out "$work/to_one"
run "$work/to_pp2.log" "${mpi[@]}" "$trex" train "${common[@]}" --pp 2 --set data.grad_accum=2 --steps 4 \
  --resume auto --out "$work/to_pp2"
run "$work/pp2_to_dp2.log" "${mpi[@]}" "$trex" train "${common[@]}" --steps 4 --resume auto --out "$work/pp2_to_dp2"
grep -h "^resume:" "$work/to_ep2.log" "$work/to_one.log" "$work/to_pp2.log" "$work/pp2_to_dp2.log"
py=python3; [ -x "$src/.venv/bin/python" ] && py="$src/.venv/bin/python"
for r in to_ep2 to_one to_pp2 pp2_to_dp2; do
  echo "== $r"
  "$py" "$src/tests/scripts/compare_runs.py" "$work/single" "$work/$r" --bitwise
done
