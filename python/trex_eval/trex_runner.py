"""Runs one model-written Python answer inside the trex eval sandbox (docs/eval.md).

python -B trex_runner.py answer.py

- puts the gurobipy shim (./shim) first on sys.path, so `import gurobipy` gets trex's shim backed by trex's solvers;
- hooks PuLP: every LpProblem.solve() is reported;
- runs answer.py as __main__ in its directory (data.json next to it);
- reports, one JSON object per line on the file descriptor $TREX_RESULT_FD:
    {"event": "solve", "api": "pulp"|"gurobipy", "status": "optimal"|"infeasible"|"unbounded"|"inf_or_unbd"|...,
     "objective": float|null, "raw": solver status text}
    {"event": "syntax_error", "error": "..."}
    {"event": "exception", "type": "...", "error": "..."}
"""
import json
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "shim"))

_fd = -1
try:
    _fd = os.dup(int(os.environ.get("TREX_RESULT_FD", "-1")))
    os.close(int(os.environ.get("TREX_RESULT_FD", "-1")))
    os.set_inheritable(_fd, False)
except Exception:
    _fd = -1


def report(ev):
    if _fd < 0:
        return
    try:
        os.write(_fd, (json.dumps(ev) + "\n").encode())
    except Exception:
        pass


import builtins  # noqa: E402

builtins.__trex_report__ = report  # the shim reports through this


def _polish(pulp, prob, obj):
    """PuLP reads CBC's solution file, whose values have 8 significant digits, so a fractional optimum comes back
    rounded (11586.153848 for 11586.153846153846) and fails an absolute 1e-6 judge. When some value is fractional,
    the same model is solved again by trex's solver (Clp/Cbc at full precision); its objective replaces CBC's when
    the two agree to CBC's printed precision. Returns (objective, note)."""
    if not os.environ.get("TREX_SOLVER"):
        return obj, ""
    try:
        import _trex_lp as lp

        vs = prob.variables()
        if not vs or all(v.varValue is None or float(v.varValue).is_integer() for v in vs):
            return obj, ""
        idx = {v.name: j for j, v in enumerate(vs)}
        cols = [(-1e31 if v.lowBound is None else float(v.lowBound), 1e31 if v.upBound is None else float(v.upBound),
                 "I" if v.cat == pulp.LpInteger else "C") for v in vs]
        objective = prob.objective if prob.objective is not None else pulp.LpAffineExpression()
        terms = [(idx[v.name], float(c)) for v, c in objective.items()]
        rows = [([(idx[v.name], float(c)) for v, c in con.items()], {-1: "<", 0: "=", 1: ">"}[con.sense],
                 -float(con.constant)) for con in prob.constraints.values()]
        rep = lp.solve(lp.lp_text(prob.sense == pulp.LpMaximize, terms, rows, cols, "trex PuLP hook"), None,
                       "trex_pulp_check.lp")
    except Exception:
        return obj, ""
    if rep.get("status") == "optimal":
        ours = float(rep["objective"]) + float(objective.constant or 0.0)
        if abs(ours - obj) <= 1e-6 * max(1.0, abs(obj)):
            return ours, " (objective at full precision by trex)"
    return obj, ""


def _patch_pulp(pulp):
    if getattr(pulp, "__trex_patched__", False):
        return
    cls = pulp.LpProblem
    orig = cls.solve

    def solve(self, *args, **kwargs):
        result = orig(self, *args, **kwargs)
        raw = pulp.LpStatus.get(self.status, str(self.status))
        status = {1: "optimal", -1: "infeasible", -2: "unbounded"}.get(self.status, "other")
        obj = None
        if status == "optimal":
            try:
                obj = float(pulp.value(self.objective)) if self.objective is not None else 0.0
            except Exception:
                obj = None
            if obj is not None:
                obj, note = _polish(pulp, self, obj)
                raw += note
        report({"event": "solve", "api": "pulp", "status": status, "objective": obj, "raw": raw})
        return result

    cls.solve = solve
    pulp.__trex_patched__ = True


class _PulpHook:
    """Meta-path finder: patches pulp right after it is imported."""

    def find_spec(self, name, path=None, target=None):
        if name != "pulp":
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        orig_exec = loader.exec_module

        def exec_module(module):
            orig_exec(module)
            try:
                _patch_pulp(module)
            except Exception:
                pass

        loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _PulpHook())


def main():
    if len(sys.argv) < 2:
        print("usage: trex_runner.py answer.py", file=sys.stderr)
        return 2
    path = sys.argv[1]
    with open(path, encoding="utf-8", errors="replace") as f:
        src = f.read()
    try:
        code = compile(src, path, "exec")
    except (SyntaxError, ValueError) as e:
        import traceback

        report({"event": "syntax_error", "error": "".join(traceback.format_exception_only(type(e), e)).strip()})
        traceback.print_exc()
        return 2
    sys.argv = [path] + sys.argv[2:]
    g = {"__name__": "__main__", "__file__": path, "__builtins__": builtins}
    try:
        exec(code, g)
    except SystemExit as e:
        c = e.code
        if c is None:
            return 0
        if isinstance(c, int):
            return c
        print(c, file=sys.stderr)
        return 1
    except BaseException as e:  # noqa: BLE001 - everything the answer raises is a result
        import traceback

        report({"event": "exception", "type": type(e).__name__,
                "error": "".join(traceback.format_exception_only(type(e), e)).strip()[:2000]})
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    rc = main()
    try:
        sys.stdout.flush()
    except Exception:
        pass
    os._exit(rc if isinstance(rc, int) else 1)
