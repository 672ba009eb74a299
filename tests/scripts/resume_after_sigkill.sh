#!/usr/bin/env bash
# Kill `trex train` with SIGKILL at random points and resume with --resume auto: the losses after the resume must be
# bitwise identical to an uninterrupted run's (issue 4). Usage: resume_after_sigkill.sh TREX_BINARY SOURCE_DIR WORKDIR
set -euo pipefail
trex="$1"; src="$2"; work="$3"
rm -rf "$work"; mkdir -p "$work"
steps=14
common=(--set "model.config=\"$src/configs/v4-micro.json\"" --set data.batch=4 --set data.seq=64
        --set optim.lr=5e-3 --set optim.warmup=3 --set checkpoint.every=2 --set checkpoint.keep_last=2
        --set log.report=false --steps $steps)

losses() {  # the loss fields of every step, as printed (shortest round-trip decimal)
  python3 - "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["step"], repr(r["loss"]), repr(r["lm"]), repr(r["mtp"]), repr(r["bal"]), repr(r["idx"]), repr(r["grad_norm"]))
PY
}

"$trex" train "${common[@]}" --out "$work/ref" > /dev/null 2>&1
losses "$work/ref/metrics.jsonl" > "$work/ref.txt"
[ "$(wc -l < "$work/ref.txt")" -eq $steps ] || { echo "reference run logged $(wc -l < "$work/ref.txt") steps"; exit 1; }

RANDOM=${TREX_TEST_SEED:-7}
for trial in 1 2 3; do
  run="$work/run$trial"
  kill_at=$((2 + RANDOM % (steps - 3)))   # kill once this many steps are logged
  "$trex" train "${common[@]}" --out "$run" > "$run.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 3000); do
    n=0; [ -f "$run/metrics.jsonl" ] && n=$(wc -l < "$run/metrics.jsonl")
    [ "$n" -ge "$kill_at" ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.02
  done
  sleep "0.0$((RANDOM % 10))"   # land somewhere inside a step (or a checkpoint write)
  kill -9 $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  "$trex" train "${common[@]}" --out "$run" --resume auto >> "$run.log" 2>&1
  losses "$run/metrics.jsonl" > "$run.txt"
  if ! cmp -s "$work/ref.txt" "$run.txt"; then
    echo "trial $trial (killed after $kill_at logged steps): losses differ from the uninterrupted run"
    diff "$work/ref.txt" "$run.txt" | head -20
    grep -i "resume" "$run.log" || true
    exit 1
  fi
  echo "trial $trial: killed after >= $kill_at logged steps; $(grep -c '^resume:' "$run.log" || true) resume line(s); losses identical"
done
echo "OK: SIGKILL + --resume auto reproduces the uninterrupted run bitwise"
