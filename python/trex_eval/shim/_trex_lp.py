"""The LP text and solver call shared by the gurobipy shim and the runner's PuLP hook (docs/eval.md §4).

lp_text() writes a CPLEX LP file that GLPK's reader takes (one sign per term, no constants in expressions, columns
renamed x0, x1, ..., rows r0, r1, ...); solve() runs `$TREX_SOLVER eval _solve FILE` (GLPK reads, Clp/Cbc solve,
GLPK when COIN fails) and returns its JSON report: status, objective, x {name: value}, pi {row: dual}, rc.
"""
import json
import os


class LPError(Exception):
    pass


def fmt(x):
    r = repr(float(x) + 0.0)  # -0.0 -> 0.0
    if r in ("inf", "-inf", "nan"):
        raise LPError(f"coefficient {r} in the model")
    return r


def term(coef, name):
    """One signed term: '+ 2.0 x0' / '- 2.0 x0' (GLPK's reader takes one sign per term)."""
    c = float(coef)
    return f"- {fmt(-c)} {name}" if c < 0 else f"+ {fmt(c)} {name}"


def lp_text(maximize, obj, rows, cols, title="trex"):
    """maximize: bool; obj: [(col index, coef)]; rows: [([(col index, coef)], sense '<' '>' '=', rhs)];
    cols: [(lb, ub, kind 'C' 'I' 'B')] with +-1e30 and beyond meaning infinite."""
    n = [f"x{j}" for j in range(len(cols))]
    out = [f"\\ written by the {title}", "Maximize" if maximize else "Minimize"]
    body = " ".join(term(c, n[j]) for j, c in obj if c != 0.0)
    out.append(" obj: " + (body if body else "0 x0"))
    out.append("Subject To")
    for i, (items, sense, rhs) in enumerate(rows):
        items = [(j, c) for j, c in items if c != 0.0] or [(0, 0.0)]
        out.append(f" r{i}: {' '.join(term(c, n[j]) for j, c in items)} "
                   f"{ {'<': '<=', '>': '>=', '=': '='}[sense] } {fmt(rhs)}")
    if not rows:  # GLPK's reader wants at least one row
        out.append(f" trex_empty: + 0.0 {n[0]} >= 0.0")
    out.append("Bounds")
    ints, bins = [], []
    for j, (lb, ub, kind) in enumerate(cols):
        if kind == "B":
            bins.append(n[j])
            lb, ub = max(lb, 0.0), min(ub, 1.0)
        elif kind == "I":
            ints.append(n[j])
        lo = "-inf" if lb <= -1e30 else fmt(lb)
        hi = "+inf" if ub >= 1e30 else fmt(ub)
        out.append(f" {n[j]} free" if lo == "-inf" and hi == "+inf" else f" {lo} <= {n[j]} <= {hi}")
    if ints:
        out += ["General", " " + " ".join(ints)]
    if bins:
        out += ["Binary", " " + " ".join(bins)]
    out.append("End")
    return "\n".join(out) + "\n"


def _run(argv):
    """Runs argv (no shell) and returns (exit status, stdout, stderr). os.posix_spawn rather than subprocess:
    importing subprocess costs a third of a gurobipy answer's CPU time."""
    r, w = os.pipe()
    err_path = os.path.abspath("trex_solver.err")
    actions = [(os.POSIX_SPAWN_DUP2, w, 1), (os.POSIX_SPAWN_CLOSE, r),
               (os.POSIX_SPAWN_OPEN, 2, err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)]
    try:
        spawn = os.posix_spawn if os.path.isabs(argv[0]) else os.posix_spawnp
        pid = spawn(argv[0], argv, dict(os.environ), file_actions=actions)
    finally:
        os.close(w)
    chunks = []
    with os.fdopen(r, "rb") as f:
        while True:
            b = f.read(65536)
            if not b:
                break
            chunks.append(b)
    _, status = os.waitpid(pid, 0)
    try:
        with open(err_path, errors="replace") as f:
            err = f.read()
    except OSError:
        err = ""
    return status, b"".join(chunks).decode(errors="replace"), err


def solve(text, time_limit=None, path="trex_model.lp"):
    """Writes text to path (in the working directory) and solves it with trex; returns the JSON report."""
    env_limit = float(os.environ.get("TREX_SOLVE_TIME_LIMIT", 30))
    limit = env_limit if not time_limit else min(float(time_limit), env_limit)
    path = os.path.abspath(path)
    with open(path, "w") as f:
        f.write(text)
    solver = os.environ.get("TREX_SOLVER", "trex")
    try:
        _, out, err = _run([solver, "eval", "_solve", path, "--time-limit", str(limit)])
    except OSError as e:
        raise LPError(f"cannot run the solver {solver}: {e}")
    try:
        return json.loads(out)
    except Exception:
        raise LPError(f"solver failed: {err.strip()[-300:]}")
