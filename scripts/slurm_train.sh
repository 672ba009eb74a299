#!/usr/bin/env bash
# Multi-node `trex train` under Slurm (docs/distributed.md). Submit with sbatch, e.g.
#   sbatch --nodes 4 --ntasks-per-node 8 --cpus-per-task 16 scripts/slurm_train.sh \
#          --config configs/train-cpt.toml --ep 8 --out runs/cpt
# Every argument is passed to `trex train`. One rank per task; OpenMP threads = the task's CPUs. The run directory
# must be on a filesystem every node sees (rank 0 writes metrics and checkpoints, every rank reads checkpoints on
# --resume). TREX (default build/apps/trex/trex) names the binary.
#SBATCH --job-name=trex-train
#SBATCH --output=%x-%j.out
#SBATCH --exclusive
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-$(dirname "$0")/..}"
trex="${TREX:-build/apps/trex/trex}"
[ -x "$trex" ] || { echo "slurm_train.sh: $trex is not an executable (set TREX)" >&2; exit 2; }
export OMP_NUM_THREADS="${SLURM_CPUS_PER_TASK:-1}"
export OMP_PROC_BIND=close OMP_PLACES=cores
echo "slurm_train.sh: ${SLURM_NNODES:-1} node(s), ${SLURM_NTASKS:-1} rank(s), ${OMP_NUM_THREADS} threads each"
# srun starts the ranks through PMIx (Open MPI built with Slurm support); mpirun works inside the allocation too:
#   mpirun -n "$SLURM_NTASKS" --map-by "ppr:${SLURM_NTASKS_PER_NODE}:node:pe=${OMP_NUM_THREADS}" "$trex" train "$@"
if srun --mpi=list 2>/dev/null | grep -q pmix; then
  exec srun --mpi=pmix --cpu-bind=cores "$trex" train "$@"
else
  exec mpirun -n "${SLURM_NTASKS:-1}" --bind-to none "$trex" train "$@"
fi
