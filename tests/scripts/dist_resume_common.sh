# Sourced by dist_resume_layouts.sh and dist_resume_tp.sh (their arguments: TREX SOURCE_DIR WORKDIR): exit 77
# (skipped) without mpirun, a fresh work directory, MPI allowed as root, the shared v4-tiny run settings (`common`,
# schedule pinned by optim.total so that a 2-step run has the 4-step run's learning rates) and `run LOG CMD...`
# (prints LOG and fails when CMD fails).
trex="$1"; src="$2"; work="$3"
command -v mpirun > /dev/null || { echo "mpirun not found: skipped"; exit 77; }
rm -rf "$work"; mkdir -p "$work"
# Checkpoints are 150 MB each: all are removed when the test ends, pass or fail (logs and metrics stay);
# TREX_KEEP_TEST_RUNS=1 keeps them for debugging. `done_with DIR...` removes runs' checkpoints as soon as they are
# no longer needed, which keeps the test's peak disk use near 1 GB.
[ "${TREX_KEEP_TEST_RUNS:-0}" = 1 ] || trap 'rm -rf "$work"/*/checkpoints' EXIT
done_with() { [ "${TREX_KEEP_TEST_RUNS:-0}" = 1 ] || for d in "$@"; do rm -rf "$work/$d/checkpoints"; done; }
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
common=(--set "model.config=\"$src/configs/v4-tiny.json\"" --set data.batch=2 --set data.seq=64
        --set optim.lr=1e-3 --set optim.total=4 --set checkpoint.every=2 --set log.report=false --set dist.timeout=120)
run() { local log="$1"; shift; "$@" > "$log" 2>&1 || { cat "$log"; exit 1; }; }
