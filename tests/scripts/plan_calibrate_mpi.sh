#!/usr/bin/env bash
# The planner calibrated against this machine, end to end (docs/plan.md §9): link and memory bandwidths from
# `trex bench comm` (2 ranks), the GEMM rate from `trex bench step`, a hardware profile from `trex plan calibrate`,
# step times of dp2 and ep2 (overlap off/on) from `trex bench dist`, then `trex plan compare`. Checks that every
# stage runs and that the comparison holds every measured layout with positive measured and predicted times (the
# numbers themselves depend on the machine and its load: docs/plan.md §9 reports them).
# Usage: plan_calibrate_mpi.sh TREX WORKDIR. Exit 77 (skipped) when mpirun is absent.
set -euo pipefail
trex="$1"; work="$2"
command -v mpirun > /dev/null || { echo "mpirun not found: skipped"; exit 77; }
rm -rf "$work"; mkdir -p "$work"; cd "$work"
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
run2() { mpirun -n 2 --oversubscribe --bind-to none "$trex" "$@"; }
run2 bench comm --bytes 1048576 --triad-bytes 25165824 --out bw.json
run2 bench dist --batch 1 --seq 64 --steps 1 --warmup 1 --rounds 1 --out dist.json
"$trex" bench step --batch 1 --seq 64 --steps 1 --warmup 1 --json > step.json
"$trex" plan calibrate --bench step.json --bandwidth bw.json --out hw.json --name this-machine
"$trex" plan compare --measured dist.json --hardware hw.json
"$trex" plan compare --measured dist.json --hardware hw.json --json > compare.json
py=python3
"$py" - compare.json <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
rows = c["rows"]
assert len(rows) == 3, f"expected dp2 + ep2 off/on, got {len(rows)} rows"
assert [r["ep"] for r in rows] == [1, 2, 2] and [r["ep_overlap"] for r in rows] == [False, False, True], rows
for r in rows:
    for k in ("measured_step_s", "predicted_step_s", "predicted_compute_s", "predicted_comm_s"):
        assert r[k] > 0 and r[k] < 1e4, (k, r)
assert rows[2]["predicted_comm_s"] < rows[1]["predicted_comm_s"], "EP overlap must hide part of the all-to-all"
print("plan_calibrate_mpi: ok, compute scale %.2f" % c["compute_scale"])
PY
