#!/usr/bin/env bash
# `trex eval sandbox` run by an unprivileged user (nobody): the sandbox is built in a user namespace of its own and
# every required guarantee must hold there too (docs/eval.md §4). Exit 77 (skipped) when this machine cannot say:
# not root (no user to switch to), the binary not reachable by nobody, or unprivileged user namespaces disabled.
# Usage: sandbox_unprivileged.sh TREX
set -uo pipefail
trex="$1"
[ "$(id -u)" -eq 0 ] || { echo "not root: cannot switch to nobody: skipped"; exit 77; }
command -v setpriv > /dev/null || { echo "setpriv not found: skipped"; exit 77; }
as_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
"${as_nobody[@]}" test -x "$trex" || { echo "nobody cannot run $trex (its directories): skipped"; exit 77; }
out=$(cd / && "${as_nobody[@]}" "$trex" eval sandbox 2>&1)
status=$?
echo "$out"
if [ $status -ne 0 ] && echo "$out" | grep -q "in a user namespace: sandbox setup failed: cannot start the sandbox"; then
  echo "unprivileged user namespaces are disabled on this machine: skipped"
  exit 77
fi
[ $status -eq 0 ] || { echo "FAIL: trex eval sandbox as nobody exited $status"; exit 1; }
echo "$out" | grep -q "^sandbox: isolated in a user namespace" || { echo "FAIL: not isolated in a user namespace"; exit 1; }
for g in pid_namespace root_view work_dir network no_privileges seccomp kill_on_exit; do
  echo "$out" | grep -qE "^  $g +held" || { echo "FAIL: $g does not hold"; exit 1; }
done
echo "ok: every required guarantee holds for an unprivileged user"
