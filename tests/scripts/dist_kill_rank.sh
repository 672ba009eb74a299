#!/usr/bin/env bash
# Kill one rank of a 2-rank `trex train` mid-run (docs/distributed.md): every rank must exit within a bounded time,
# mpirun with a non-zero status, and the log must name the failure.
#   kill: SIGKILL rank 1 (a dead peer: mpirun reports the rank and the signal and ends the job);
#   hang: SIGSTOP rank 1 (a hung peer: rank 0's wait times out after dist.timeout and aborts the job naming the
#         operation that did not complete).
#   hang_writer: SIGSTOP rank 0 while it writes a checkpoint (checkpoint.every=1): rank 1, waiting for the write,
#         sees it make no progress and aborts after dist.timeout (it once waited an hour).
# Usage: dist_kill_rank.sh TREX SOURCE_DIR WORKDIR kill|hang|hang_writer [trex train flags; default --ep 2]. Exit 77
# (skipped) when mpirun is absent.
set -euo pipefail
trex="$1"; src="$2"; work="$3"; mode="$4"; shift 4
flags=("$@"); [ ${#flags[@]} -gt 0 ] || flags=(--ep 2)
command -v mpirun > /dev/null || { echo "mpirun not found: skipped"; exit 77; }
rm -rf "$work"; mkdir -p "$work"
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
timeout_s=10
bound=$((timeout_s + 50))
mpirun -n 2 --oversubscribe --bind-to none "$trex" train --set "model.config=\"$src/configs/v4-micro.json\"" \
  --set data.batch=2 --set data.seq=64 --set checkpoint.every=0 --set log.report=false \
  --set dist.timeout=$timeout_s "${flags[@]}" --steps 100000 --out "$work/run" > "$work/log" 2>&1 &
launcher=$!
victim_rank=1; survivor_rank=0
[ "$mode" = hang_writer ] && { victim_rank=0; survivor_rank=1; }
victim=""; survivor=""
for _ in $(seq 1 1200); do
  victim=$(sed -n "s/^dist: rank $victim_rank pid \([0-9]*\).*/\1/p" "$work/log" | head -1)
  survivor=$(sed -n "s/^dist: rank $survivor_rank pid \([0-9]*\).*/\1/p" "$work/log" | head -1)
  n=0; [ -f "$work/run/metrics.jsonl" ] && n=$(wc -l < "$work/run/metrics.jsonl")
  [ -n "$victim" ] && [ -n "$survivor" ] && [ "$n" -ge 2 ] && break
  kill -0 $launcher 2>/dev/null || { cat "$work/log"; echo "the run ended before the kill"; exit 1; }
  sleep 0.1
done
[ -n "$victim" ] || { cat "$work/log"; echo "rank $victim_rank never started"; kill $launcher; exit 1; }
if [ "$mode" = hang_writer ]; then
  # stop rank 0 while a checkpoint's temporary directory exists; a stop that came after the rename is undone and tried
  # again at a later checkpoint
  caught=0
  for _ in $(seq 1 20000); do
    if compgen -G "$work/run/checkpoints/*.tmp-*" > /dev/null; then
      kill -STOP "$victim"
      if compgen -G "$work/run/checkpoints/*.tmp-*" > /dev/null; then caught=1; break; fi
      kill -CONT "$victim"
    fi
    kill -0 $launcher 2>/dev/null || { cat "$work/log"; echo "the run ended before the stop"; exit 1; }
  done
  [ "$caught" -eq 1 ] || { kill -KILL "$victim" "$survivor" $launcher 2>/dev/null; echo "FAIL: never caught a write"; exit 1; }
  echo "stopped rank 0 inside the write of $(compgen -G "$work/run/checkpoints/*.tmp-*" | head -1)"
fi
t0=$(date +%s)
if [ "$mode" = kill ]; then kill -KILL "$victim"; elif [ "$mode" = hang ]; then kill -STOP "$victim"; fi
echo "$mode: rank $victim_rank (pid $victim) at $(wc -l < "$work/run/metrics.jsonl") logged steps"
status=0
for _ in $(seq 1 $((bound * 10))); do
  kill -0 $launcher 2>/dev/null || break
  sleep 0.1
done
if kill -0 $launcher 2>/dev/null; then
  echo "FAIL: mpirun still running $bound s after the $mode"
  [ "$mode" = kill ] || kill -CONT "$victim" 2>/dev/null || true
  kill -KILL "$victim" "$survivor" $launcher 2>/dev/null || true
  exit 1
fi
wait $launcher || status=$?
elapsed=$(( $(date +%s) - t0 ))
# a stopped process acts on the termination signal mpirun sent it only once it runs again
[ "$mode" != kill ] && kill -CONT "$victim" 2>/dev/null || true
for p in "$victim" "$survivor"; do
  for _ in $(seq 1 100); do
    [ -e "/proc/$p" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ] || break
    sleep 0.1
  done
  if [ -e "/proc/$p" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ]; then
    echo "FAIL: rank pid $p still alive 10 s after mpirun ended"; kill -KILL "$p"; exit 1
  fi
done
elapsed=$(( $(date +%s) - t0 ))
grep -v '^dist:\|^zero:\|^train:' "$work/log" | tail -8
[ "$status" -ne 0 ] || { echo "FAIL: mpirun exited 0"; exit 1; }
if [ "$mode" = kill ]; then
  grep -Eqi "rank 1.*(signal 9|killed)|exited on signal 9" "$work/log" || { echo "FAIL: no message names the dead rank"; exit 1; }
else
  grep -q "did not complete within $timeout_s s" "$work/log" || { echo "FAIL: no timeout message"; exit 1; }
fi
echo "OK: $mode of rank $victim_rank: every rank gone after ${elapsed} s (bound ${bound} s), mpirun status $status, failure named"
