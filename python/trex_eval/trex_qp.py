"""Convex quadratic solves for trex's solver (src/trex/optmodel/solvers/solve_qp.cpp is the only caller), with HiGHS
through highspy.

python trex_qp.py < problem.json > result.json

The problem (already checked convex by the caller, minimisation form):
    {"n": N, "col_lo": [..], "col_up": [..], "c": [..],            # None in a bound: infinite
     "obj_quad": [[i, j, q], ..],                                   # objective += q x_i x_j (i <= j)
     "rows": [{"lo": v|None, "up": v|None, "a": [[j, a], ..]}, ..], # linear rows
     "qrows": [{"up": v, "a": [[j, a], ..], "q": [[i, j, q], ..]}], # convex rows a'x + sum q x_i x_j <= up
     "time_limit": seconds, "feasibility_tol": 1e-9}
The result: {"status": "optimal" | "infeasible" | "unbounded" | "time_limit" | "error", "x": [..], "row_dual": [..],
"qrow_dual": [..], "col_dual": [..], "iterations": K, "cuts": C, "message": ".."}; duals as d(objective)/d(bound)
of the minimisation.

Without quadratic rows the QP goes to HiGHS as it is (its active-set QP solver). One quadratic row is met through its
multiplier (_one_row: bisection on the Lagrangian's multiplier, one exact QP per step). Otherwise, and where that
does not settle, quadratic rows are met by outer approximation (Kelley's cutting planes): each round solves the QP over the linear rows and the tangent cuts so far,
then adds the tangent g(x) + grad g(x)'(y - x) <= up of every row the point violates; a convex row lies inside each
of its tangents, so every round is a relaxation and the last point, once it meets every row within feasibility_tol,
is optimal within that tolerance. A relaxation that is unbounded before any cut (min -x - y over x^2 + y^2 <= 1 with
x, y free) gets a box of +-1e7 on the free sides of the variables of quadratic rows; a point that ends on that box
is not an answer: the result is then "unbounded". The last point is polished with the rows' multipliers (_polish).
"""
import json
import os
import sys
import time

_BOX = 1e7
_MAX_ROUNDS = 2000


def _inf(v, sign):
    return sign * float("inf") if v is None else float(v)


def _hessian(highspy, n, quad):
    """HiGHS's lower-triangular column-wise Hessian Q of 1/2 x'Qx for the objective sum q x_i x_j."""
    cols = [dict() for _ in range(n)]
    for i, j, q in quad:
        i, j = (int(i), int(j)) if int(i) <= int(j) else (int(j), int(i))
        cols[i][j] = cols[i].get(j, 0.0) + (2.0 * q if i == j else q)
    h = highspy.HighsHessian()
    h.dim_ = n
    h.format_ = highspy.HessianFormat.kTriangular
    start, index, value = [0], [], []
    for i in range(n):
        for j in sorted(cols[i]):
            index.append(j)
            value.append(cols[i][j])
        start.append(len(index))
    h.start_, h.index_, h.value_ = start, index, value
    return h


def _row_value(a, q, x):
    return sum(c * x[j] for j, c in a) + sum(c * x[i] * x[j] for i, j, c in q)


def _row_gradient(a, q, x):
    g = {}
    for j, c in a:
        g[j] = g.get(j, 0.0) + c
    for i, j, c in q:
        g[i] = g.get(i, 0.0) + c * x[j]
        g[j] = g.get(j, 0.0) + c * x[i]
    return g


def _highs(highspy, p, lo, up, c, quad, tol, limit):
    """A HiGHS model of min c'x + sum quad over the bounds lo..up and p's linear rows: quiet, one thread,
    feasibility tolerances tol, Hessian regularisation off (its default 1e-7 moves an interior optimum by ~1e-7
    relative), time_limit limit."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("primal_feasibility_tolerance", max(tol, 1e-10))
    h.setOptionValue("dual_feasibility_tolerance", max(tol, 1e-10))
    h.setOptionValue("qp_regularization_value", 1e-12)
    h.setOptionValue("time_limit", limit)
    inf = highspy.kHighsInf
    for j in range(int(p["n"])):
        h.addVar(max(lo[j], -inf), min(up[j], inf))
        h.changeColCost(j, float(c[j]))
    for r in p["rows"]:
        h.addRow(max(_inf(r["lo"], -1), -inf), min(_inf(r["up"], 1), inf), len(r["a"]), [int(j) for j, _ in r["a"]],
                 [float(a) for _, a in r["a"]])
    if quad:
        h.passHessian(_hessian(highspy, int(p["n"]), quad))
    return h


def solve(p):
    import highspy

    t0 = time.monotonic()
    n = int(p["n"])
    inf = highspy.kHighsInf  # float("inf")
    tol = float(p.get("feasibility_tol", 1e-9))
    limit = float(p.get("time_limit", 30.0))
    qrows = p.get("qrows", [])
    if len(qrows) == 1:
        one = _one_row(highspy, p, tol, t0, limit)
        if one is not None:
            return one

    col_lo = [_inf(v, -1) for v in p["col_lo"]]
    col_up = [_inf(v, 1) for v in p["col_up"]]
    boxed = set()  # the box that keeps the first relaxations bounded
    for r in qrows:
        for j in [j for j, _ in r["a"]] + [k for i, j, _ in r["q"] for k in (i, j)]:
            boxed.add(int(j))
    lo = [(-_BOX if j in boxed and col_lo[j] == -inf else col_lo[j]) for j in range(n)]
    up = [(_BOX if j in boxed and col_up[j] == inf else col_up[j]) for j in range(n)]
    h = _highs(highspy, p, lo, up, p["c"], p.get("obj_quad"), tol, limit)
    n_lin = len(p["rows"])
    cut_of = []  # the quadratic row of each cut
    rounds = 0
    while True:
        rounds += 1
        h.setOptionValue("time_limit", max(0.01, limit - (time.monotonic() - t0)))
        h.run()
        st = h.getModelStatus()
        if st != highspy.HighsModelStatus.kOptimal:
            return _not_optimal(highspy, h, st, rounds, len(cut_of))
        x = list(h.getSolution().col_value)
        added = 0
        for k, r in enumerate(qrows):
            g = _row_value(r["a"], r["q"], x)
            rhs = float(r["up"])
            if g - rhs <= tol * max(1.0, abs(rhs)):
                continue
            grad = _row_gradient(r["a"], r["q"], x)
            idx = sorted(j for j in grad if grad[j] != 0.0)
            if not idx:
                return {"status": "infeasible", "message": f"quadratic row {k} cannot be met", "iterations": rounds}
            bound = rhs - g + sum(grad[j] * x[j] for j in idx)
            h.addRow(-inf, bound, len(idx), idx, [grad[j] for j in idx])
            cut_of.append(k)
            added += 1
        if added == 0:
            break
        if rounds >= _MAX_ROUNDS or time.monotonic() - t0 > limit:
            return {"status": "time_limit", "iterations": rounds, "cuts": len(cut_of),
                    "message": f"outer approximation not converged after {rounds} rounds"}
    sol = h.getSolution()
    row_dual = list(sol.row_dual)
    qrow_dual = [0.0] * len(qrows)
    for c, k in enumerate(cut_of):
        qrow_dual[k] += row_dual[n_lin + c]
    if qrows:
        x = _polish(highspy, p, x, qrow_dual, tol)
    on_box = [j for j in boxed if (col_lo[j] == -inf and x[j] <= -_BOX * (1 - 1e-9)) or
              (col_up[j] == inf and x[j] >= _BOX * (1 - 1e-9))]
    if on_box:
        return {"status": "unbounded", "iterations": rounds, "cuts": len(cut_of),
                "message": f"the optimum of the relaxation lies on the artificial box |x| <= {_BOX:g}"}
    return {"status": "optimal", "x": x, "row_dual": row_dual[:n_lin], "qrow_dual": qrow_dual,
            "col_dual": list(sol.col_dual), "iterations": rounds, "cuts": len(cut_of)}


def _lagrangian_solve(highspy, p, lam, tol):
    """min f + sum lambda_k g_k over the bounds and linear rows (HiGHS's QP): (model status, x, row duals, column
    duals), the last three None unless optimal."""
    quad = list(p["obj_quad"])
    c = [float(v) for v in p["c"]]
    for k, r in enumerate(p["qrows"]):
        if lam[k] == 0.0:
            continue
        quad += [[i, j, lam[k] * q] for i, j, q in r["q"]]
        for j, a in r["a"]:
            c[int(j)] += lam[k] * a
    lo = [_inf(v, -1) for v in p["col_lo"]]
    up = [_inf(v, 1) for v in p["col_up"]]
    h = _highs(highspy, p, lo, up, c, quad, tol, 10.0)
    h.run()
    st = h.getModelStatus()
    if st != highspy.HighsModelStatus.kOptimal:
        return st, None, None, None
    sol = h.getSolution()
    return st, list(sol.col_value), list(sol.row_dual), list(sol.col_dual)


def _lagrangian_point(highspy, p, lam, tol):
    """The minimiser of f + sum lambda_k g_k over the bounds and linear rows, or None."""
    return _lagrangian_solve(highspy, p, lam, tol)[1]


def _one_row(highspy, p, tol, t0, limit):
    """A model with one quadratic row g(x) <= up, by its multiplier: the minimiser x(l) of the Lagrangian
    f + l (g - up) over the linear rows meets the row more and more as l grows (g(x(l)) - up is nonincreasing, the
    dual function being concave), so l = 0 when x(0) meets it, else the l where g(x(l)) = up, bracketed by doubling
    and found by bisection. Each step is one exact QP of HiGHS, so the point is as precise as a QP's (cutting planes
    need thousands of rounds for a 100-asset variance limit). Returns the result, or None when the row is not met for
    any l up to 1e15, or the minimiser jumps across the row (a singular Hessian): the cutting planes then decide."""
    S = highspy.HighsModelStatus
    r = p["qrows"][0]
    up = float(r["up"])
    within = tol * max(1.0, abs(up))
    steps = 0

    def at(lam):
        nonlocal steps
        steps += 1
        st, x, rd, cd = _lagrangian_solve(highspy, p, [lam], tol)
        return st, x, rd, cd, (None if x is None else _row_value(r["a"], r["q"], x) - up)

    def result(x, rd, cd, lam):
        return {"status": "optimal", "x": x, "row_dual": rd, "qrow_dual": [-lam], "col_dual": cd,
                "iterations": steps, "cuts": 0, "method": "lagrangian"}

    st, x, rd, cd, v = at(0.0)
    if st == S.kInfeasible:
        return {"status": "infeasible", "iterations": steps, "cuts": 0, "message": "the linear rows cannot hold"}
    if x is not None and v <= within:
        return result(x, rd, cd, 0.0)
    lo, hi = 0.0, 1.0
    while True:
        st, x, rd, cd, v = at(hi)
        if x is not None and v <= 0.0:
            break
        lo, hi = hi, hi * 4.0
        if hi > 1e15 or time.monotonic() - t0 > limit:
            return None
    while v < -within and hi - lo > 1e-14 * hi:
        if time.monotonic() - t0 > limit:
            return None
        mid = 0.5 * (lo + hi)
        st, xm, rdm, cdm, vm = at(mid)
        if xm is not None and vm <= 0.0:
            hi, x, rd, cd, v = mid, xm, rdm, cdm, vm
        else:
            lo = mid
    return result(x, rd, cd, hi) if v >= -within else None


def _polish(highspy, p, x, qrow_dual, tol):
    """The cutting planes leave the point precise in objective but not along the rows' boundary (the vertex of two
    tangents). With the rows' multipliers lambda (minus the cuts' duals, summed) the Lagrangian QP
    min f + sum lambda_k g_k over the linear rows has the optimum itself as solution; as lambda is known to ~1e-9,
    lambda (1 + d) for d = 0, 1e-9, ..., 1e-6 is tried (a larger multiplier pulls the point inside the rows) and the
    first point that meets every quadratic row within tol with an objective within 1e-7 (relative) of x's is taken
    (x itself may lie outside the rows by tol, its objective a little better than the optimum's); else x stays. The
    caller's optimality check judges whichever is returned."""

    def f(z):
        return sum(float(v) * z[j] for j, v in enumerate(p["c"])) + sum(q * z[i] * z[j] for i, j, q in p["obj_quad"])

    base = [max(0.0, -d) for d in qrow_dual]
    for d in (0.0, 1e-9, 1e-8, 1e-7, 1e-6):
        y = _lagrangian_point(highspy, p, [v * (1 + d) for v in base], tol)
        if y is None:
            return x
        feasible = all(_row_value(r["a"], r["q"], y) - float(r["up"]) <= tol * max(1.0, abs(float(r["up"])))
                       for r in p["qrows"])
        if feasible and f(y) <= f(x) + 1e-7 * max(1.0, abs(f(x))):
            return y
    return x


def _not_optimal(highspy, h, st, rounds, cuts):
    S = highspy.HighsModelStatus
    out = {"iterations": rounds, "cuts": cuts, "message": h.modelStatusToString(st)}
    if st == S.kInfeasible:
        out["status"] = "infeasible"
    elif st == S.kUnbounded:
        out["status"] = "unbounded"
    elif st == S.kUnboundedOrInfeasible:
        # which of the two: the same rows with no objective
        lp = h.getLp()
        f = highspy.Highs()
        f.setOptionValue("output_flag", False)
        lp.col_cost_ = [0.0] * lp.num_col_
        f.passModel(lp)
        f.run()
        out["status"] = "infeasible" if f.getModelStatus() == S.kInfeasible else "unbounded"
    elif st in (S.kTimeLimit, S.kIterationLimit):
        out["status"] = "time_limit"
    else:
        out["status"] = "error"
    return out


def main():
    # HiGHS prints its banner on stdout: everything but the result goes to stderr
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    try:
        p = json.load(sys.stdin)
        r = solve(p)
    except ImportError as e:
        r = {"status": "error", "message": f"highspy is not installed ({e}); scripts/setup.sh installs it"}
    except Exception as e:  # noqa: BLE001 - any failure is an error result, never a crash
        r = {"status": "error", "message": f"{type(e).__name__}: {e}"}
    json.dump(r, out)
    out.write("\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
