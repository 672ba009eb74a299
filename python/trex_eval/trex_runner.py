"""Runs one model-written Python answer inside the trex eval sandbox (docs/eval.md §4).

python -B trex_runner.py answer.py

- puts the gurobipy shim (./shim) first on sys.path, so `import gurobipy` gets trex's shim;
- replaces PuLP's LpProblem.solve() on import: the model goes to trex's solvers like the shim's;
- replaces Pyomo's SolverFactory on import: any solver name solves the model's LP text with trex's solvers;
- both send each model as LP text on the sandbox's solve channel (fd $TREX_CHANNEL_FD) to the harness, which solves
  it, records the result in its own log and replies with the solution. Nothing this process (or the answer, which
  runs in it) writes on the channel is taken as a result: a request only asks for a solve;
- runs answer.py as __main__ in its directory (data.json next to it);
- under the T-Rex protocol (TREX_PROTOCOL=trex), solves the program's `model` object when the program did not;
- tells the harness, as diagnostics, of a syntax error or an exception of the answer.
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "shim"))

import _trex_lp as lp  # noqa: E402

_PULP_STATUS = {"optimal": 1, "infeasible": -1, "unbounded": -2, "timeout": 0}


def _pulp_lp(pulp, prob):
    """The PuLP problem as LP text (columns x0.., rows r0.. in PuLP's order), its variables and constraints."""
    vs = prob.variables()
    idx = {v.name: j for j, v in enumerate(vs)}
    cols = [(-1e31 if v.lowBound is None else float(v.lowBound), 1e31 if v.upBound is None else float(v.upBound),
             "I" if v.cat == pulp.LpInteger else "C") for v in vs]
    objective = prob.objective if prob.objective is not None else pulp.LpAffineExpression()
    terms = [(idx[v.name], float(c)) for v, c in objective.items()]
    cons = list(prob.constraints.values())
    rows = [([(idx[v.name], float(c)) for v, c in con.items()], {-1: "<", 0: "=", 1: ">"}[con.sense],
             -float(con.constant)) for con in cons]
    if not cols:  # a problem without variables: one fixed column keeps the LP well formed
        cols = [(0.0, 0.0, "C")]
    text = lp.lp_text(prob.sense == pulp.LpMaximize, terms, rows, cols, "trex PuLP hook")
    return text, vs, cons, float(objective.constant or 0.0)


def _patch_pulp(pulp):
    if getattr(pulp, "__trex_patched__", False):
        return

    def solve(self, solver=None, **kwargs):
        limit = getattr(solver, "timeLimit", None) if solver is not None else None
        try:
            text, vs, cons, constant = _pulp_lp(pulp, self)
            rep = lp.solve(text, limit, "pulp", constant)
        except lp.LPError as e:
            raise pulp.PulpSolverError(str(e))
        status = rep.get("status")
        self.status = _PULP_STATUS.get(status, -3)
        self.sol_status = {1: 1, -1: -1, -2: -2}.get(self.status, 0)
        xs, pis = rep.get("x", {}), rep.get("pi", {})
        for j, v in enumerate(vs):
            v.varValue = float(xs[f"x{j}"]) if status == "optimal" and f"x{j}" in xs else None
        for i, con in enumerate(cons):
            con.pi = float(pis[f"r{i}"]) if status == "optimal" and f"r{i}" in pis else None
            if status == "optimal":
                con.slack = -float(con.value() or 0.0)
        if self.status == -3:
            raise pulp.PulpSolverError(f"trex solver: {rep.get('detail', status)}")
        return self.status

    pulp.LpProblem.solve = solve
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
            _patch_pulp(module)

        loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _PulpHook())


# ---- Pyomo: SolverFactory(any name) returns a solver that sends the model's LP text to trex's solvers

_PYOMO_STATUS = {"optimal": "optimal", "infeasible": "infeasible", "unbounded": "unbounded",
                 "inf_or_unbd": "infeasibleOrUnbounded", "timeout": "maxTimeLimit"}


class _TrexPyomoSolver:
    """What pyomo's SolverFactory gives an answer: solve(model) writes the model as an LP file (pyomo's own writer,
    symbolic names), has trex solve it through the channel, loads the values into the model's variables and returns
    a SolverResults with the status and termination condition."""

    def __init__(self, name="trex", **kwargs):
        self.name = str(name)
        self.options = {}

    def available(self, exception_flag=True):
        return True

    def license_is_valid(self):
        return True

    def set_options(self, *args, **kwargs):
        pass

    def solve(self, model, *args, **kwargs):
        import logging
        import tempfile

        from pyomo.opt import SolverResults, SolverStatus, TerminationCondition

        path = os.path.join(tempfile.mkdtemp(dir="."), "model.lp")
        logging.getLogger("pyomo").setLevel(logging.ERROR)
        _, smap_id = model.write(path, format="lp", io_options={"symbolic_solver_labels": True})
        with open(path) as f:
            text = f.read()
        limit = kwargs.get("timelimit") or self.options.get("tmlim") or self.options.get("sec") or \
            self.options.get("TimeLimit")
        try:
            rep = lp.solve(text, limit, "pyomo")
        except lp.LPError as e:
            raise RuntimeError(str(e))
        status = rep.get("status")
        res = SolverResults()
        res.solver.name = "trex"
        cond = _PYOMO_STATUS.get(status)
        res.solver.status = SolverStatus.ok if status == "optimal" else \
            (SolverStatus.warning if cond else SolverStatus.error)
        res.solver.termination_condition = getattr(TerminationCondition, cond or "error")
        if status == "optimal":
            symbols = model.solutions.symbol_map[smap_id].bySymbol
            for name, value in rep.get("x", {}).items():
                var = symbols.get(name)
                var = var() if callable(var) and not hasattr(var, "set_value") else var
                if var is not None and hasattr(var, "set_value"):
                    var.set_value(float(value), skip_validation=True)
        elif status not in _PYOMO_STATUS:
            raise RuntimeError(f"trex solver: {rep.get('detail', status)}")
        return res


def _patch_pyomo(module):
    # pyomo registers its plugins on the factory object itself: its class's __call__ is what is replaced
    factory_class = type(getattr(module, "SolverFactory", None))
    if factory_class is type(None) or getattr(factory_class, "__trex_patched__", False):
        return

    def call(self, name=None, *args, **kwargs):
        return _TrexPyomoSolver(name or "trex")

    factory_class.__call__ = call
    factory_class.__trex_patched__ = True


class _PyomoHook:
    """Meta-path finder: SolverFactory of pyomo.environ / pyomo.opt is replaced right after they are imported."""

    def find_spec(self, name, path=None, target=None):
        if name not in ("pyomo.environ", "pyomo.opt"):
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        orig_exec = spec.loader.exec_module

        def exec_module(module):
            orig_exec(module)
            _patch_pyomo(module)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _PyomoHook())


def _solve_model_object(g):
    """The T-Rex protocol reads the objective from the solved `model` object: a program that built `model` with a
    shim and never solved it gets it solved here (through the same channel, so the harness runs and records it)."""
    m = g.get("model")
    for api, unsolved in (("gurobipy", 1), ("coptpy", 0)):  # GRB.LOADED, COPT.UNSTARTED
        mod = sys.modules.get(api)
        cls = getattr(mod, "Model", None) if mod is not None else None
        if cls is not None and isinstance(m, cls) and getattr(m, "_status", None) == unsolved:
            m.optimize() if api == "gurobipy" else m.solve()
            return


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

        lp.event({"event": "syntax_error", "error": "".join(traceback.format_exception_only(type(e), e)).strip()})
        traceback.print_exc()
        return 2
    sys.argv = [path] + sys.argv[2:]
    import builtins
    import types

    # the answer is the __main__ module (multiprocessing and pickle find its functions there)
    main_module = types.ModuleType("__main__")
    main_module.__file__ = path
    main_module.__builtins__ = builtins
    sys.modules["__main__"] = main_module
    try:
        exec(code, main_module.__dict__)
        if os.environ.get("TREX_PROTOCOL") == "trex":
            _solve_model_object(main_module.__dict__)
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

        lp.event({"event": "exception", "type": type(e).__name__,
                  "error": "".join(traceback.format_exception_only(type(e), e)).strip()[:2000]})
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    rc = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    os._exit(rc if isinstance(rc, int) else 1)
