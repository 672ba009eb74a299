#!/usr/bin/env bash
# trex eval solve from the command line: model files solved as the judge solves answers, in the sandboxed worker.
# Checks, each against an optimum worked out by hand: a Gurobi-written QP (min w'Sw, S = diag(1, 2, 4), sum w = 1:
# 4/7, its certified gap in the detail), a Pyomo-written QCQP (max 2x + 3y over x^2 + y^2 <= 13: 13), an MPS LP
# (min x + y, x + 2y >= 4, 3x + y >= 6: x = 8/5, y = 6/5, 14/5), the portfolio QP as an MPS file with QUADOBJ (4/7),
# a MathProg MILP; exit 0 for each. A nonconvex QP is
# `unsupported`, a cubic term a parse error naming the file and the line, an unknown extension and a missing file
# one-line errors; exit 1 for each. Skipped (77) where the sandbox cannot isolate.
# Usage: eval_solve_cli.sh TREX WORKDIR
set -euo pipefail
trex="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
"$trex" eval sandbox > "$work/sandbox.txt" 2>&1 || { cat "$work/sandbox.txt"; exit 77; }

cat > "$work/portfolio.lp" <<'LP'
\ Model portfolio
\ LP format - for model browsing. Use MPS format to capture full model detail.
Minimize
  [ 2 w[1] ^2 + 4 w[2] ^ 2 + 8 w[3] ^ 2 ] / 2
Subject To
 budget: w[1] + w[2] + w[3] = 1
Bounds
End
LP
cat > "$work/disc.lp" <<'LP'
\* Source Pyomo model name=unknown *\

max
obj:
+2 x
+3 y

s.t.

c_u_disc_:
+ [
+1 x ^ 2
+1 y ^ 2
]
<= 13

bounds
   0 <= x <= +inf
   0 <= y <= +inf
end
LP
cat > "$work/two.mps" <<'MPS'
NAME          TWO
ROWS
 N  COST
 G  R1
 G  R2
COLUMNS
    X         COST         1.0   R1           1.0
    X         R2           3.0
    Y         COST         1.0   R1           2.0
    Y         R2           1.0
RHS
    RHS       R1           4.0   R2           6.0
ENDATA
MPS
cat > "$work/portfolio.mps" <<'MPS'
NAME portfolio
ROWS
 N  R0000
 E  budget
COLUMNS
    w[1]      budget    1
    w[2]      budget    1
    w[3]      budget    1
RHS
    RHS1      budget    1
BOUNDS
QUADOBJ
    w[1]      w[1]      2
    w[2]      w[2]      4
    w[3]      w[3]      8
ENDATA
MPS
cat > "$work/knap.mod" <<'MOD'
var a binary; var b binary; var c binary;
maximize v: 6*a + 5*b + 4*c;
s.t. w: 3*a + 2*b + 2*c <= 4;
end;
MOD
printf 'Minimize\n obj: [ 2 x * y ] / 2\nSubject To\n c: x + y >= 1\nBounds\n x <= 3\n y <= 3\nEnd\n' > "$work/saddle.lp"
printf 'Minimize\n obj: x + [ x ^ 3 ] / 2\nSubject To\n c: x >= 1\nEnd\n' > "$work/cubic.lp"

"$trex" eval solve "$work/portfolio.lp" --json > "$work/portfolio.json" || fail "portfolio: exit $?"
"$trex" eval solve "$work/disc.lp" --json > "$work/disc.json" || fail "disc: exit $?"
"$trex" eval solve "$work/two.mps" --json > "$work/two.json" || fail "mps: exit $?"
"$trex" eval solve "$work/portfolio.mps" --json > "$work/portfolio_mps.json" || fail "mps qp: exit $?"
"$trex" eval solve "$work/knap.mod" > "$work/knap.txt" || fail "mathprog: exit $?"
grep -q "optimal, objective 9 " "$work/knap.txt" || { cat "$work/knap.txt"; fail "knapsack: expected 9 (b and c)"; }
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
p = json.load(open(f"{w}/portfolio.json"))
assert p["status"] == "optimal" and p["solver"] == "highs-qp", p
assert abs(p["objective"] - 4 / 7) < 1e-9, p
assert p["detail"].startswith("optimality gap"), p
d = json.load(open(f"{w}/disc.json"))
assert d["status"] == "optimal" and abs(d["objective"] - 13) < 1e-7, d
t = json.load(open(f"{w}/two.json"))
assert t["status"] == "optimal" and abs(t["objective"] - 14 / 5) < 1e-9, t
q = json.load(open(f"{w}/portfolio_mps.json"))
assert q["status"] == "optimal" and q["solver"] == "highs-qp" and abs(q["objective"] - 4 / 7) < 1e-9, q
PY

set +e
"$trex" eval solve "$work/saddle.lp" > "$work/saddle.txt" 2>&1; rc=$?
[ "$rc" -eq 1 ] && grep -q "unsupported" "$work/saddle.txt" && grep -q "nonconvex quadratic objectives" "$work/saddle.txt" ||
  { cat "$work/saddle.txt"; fail "saddle: rc $rc"; }
"$trex" eval solve "$work/cubic.lp" > "$work/cubic.txt" 2>&1; rc=$?
[ "$rc" -eq 1 ] && grep -q "parse_error" "$work/cubic.txt" && grep -q "cubic.lp: not a valid CPLEX LP file" "$work/cubic.txt" &&
  grep -q "line 2: 'x ^ 3': only squares" "$work/cubic.txt" ||
  { cat "$work/cubic.txt"; fail "cubic: rc $rc"; }
cp "$work/cubic.lp" "$work/cubic.txtmodel"
"$trex" eval solve "$work/cubic.txtmodel" > "$work/ext.txt" 2>&1; rc=$?
[ "$rc" -ne 0 ] && [ "$(wc -l < "$work/ext.txt")" -eq 1 ] && grep -q "give --format" "$work/ext.txt" ||
  { cat "$work/ext.txt"; fail "unknown extension: rc $rc"; }
"$trex" eval solve "$work/none.lp" > "$work/none.txt" 2>&1; rc=$?
[ "$rc" -ne 0 ] && [ "$(wc -l < "$work/none.txt")" -eq 1 ] && grep -q "none.lp" "$work/none.txt" ||
  { cat "$work/none.txt"; fail "missing file: rc $rc"; }
echo "eval_solve_cli: ok"
