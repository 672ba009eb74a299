"""A gurobipy-compatible shim for trex eval: the API subset OR answers use, backed by trex's solvers.

Model building happens in Python; Model.optimize() writes the model as CPLEX LP text and sends it on the sandbox's
solve channel to the harness (GLPK reads it, Clp/Cbc solve it; GLPK when COIN fails), which records the solve
itself and sends back status, objective, variable values, duals and reduced costs. Covered: Model, Env, addVar(s), addConstr(s),
addLConstr, addRange, setObjective, getObjective, optimize, update, write(.lp), setParam / Params, quicksum,
LinExpr, tupledict (sum / prod / select), tuplelist, multidict, GRB constants (also GRB.Status / GRB.Attr /
GRB.Param), Status, ObjVal, Var.X / .x, VarName, LB / UB / Obj / VType, Constr.Pi / Slack / RHS, getAttr / setAttr,
getVars, getConstrs, getVarByName. Quadratic and general constraints raise GurobiError (not supported).
"""
import itertools

import _trex_lp as _lp

__version__ = "trex-shim"



class GurobiError(Exception):
    def __init__(self, errno_or_msg=10005, msg=None):
        if msg is None:
            msg, errno_or_msg = str(errno_or_msg), 10005
        super().__init__(msg)
        self.errno = errno_or_msg
        self.message = msg


class _Namespace:
    pass


class GRB:
    MINIMIZE = 1
    MAXIMIZE = -1
    CONTINUOUS = "C"
    BINARY = "B"
    INTEGER = "I"
    SEMICONT = "S"
    SEMIINT = "N"
    LESS_EQUAL = "<"
    GREATER_EQUAL = ">"
    EQUAL = "="
    INFINITY = 1e100
    UNDEFINED = 1e101
    LOADED = 1
    OPTIMAL = 2
    INFEASIBLE = 3
    INF_OR_UNBD = 4
    UNBOUNDED = 5
    CUTOFF = 6
    ITERATION_LIMIT = 7
    NODE_LIMIT = 8
    TIME_LIMIT = 9
    SOLUTION_LIMIT = 10
    INTERRUPTED = 11
    NUMERIC = 12
    SUBOPTIMAL = 13
    INPROGRESS = 14
    USER_OBJ_LIMIT = 15

    class Status:  # the status codes above (filled below)
        pass

    class Attr:
        pass

    class Param:
        pass

    class Callback:
        MIPSOL = 4
        MIP = 3


for _n in ("ObjVal", "ObjBound", "X", "Xn", "Status", "VarName", "ConstrName", "LB", "UB", "Obj", "VType", "RHS",
           "Sense", "Pi", "Slack", "RC", "ModelSense", "NumVars", "NumConstrs", "Runtime", "SolCount", "MIPGap",
           "IsMIP", "ObjCon", "ModelName", "NumIntVars", "NumBinVars", "IterCount", "NodeCount"):
    setattr(GRB.Attr, _n, _n)
for _n in ("OutputFlag", "TimeLimit", "MIPGap", "MIPGapAbs", "Threads", "LogToConsole", "Presolve", "Method",
           "NonConvex", "MIPFocus", "Seed", "LogFile", "DualReductions", "InfUnbdInfo", "IntFeasTol",
           "FeasibilityTol", "OptimalityTol", "SolutionLimit", "NodeLimit", "Heuristics", "Cuts"):
    setattr(GRB.Param, _n, _n)
for _n in ("LOADED", "OPTIMAL", "INFEASIBLE", "INF_OR_UNBD", "UNBOUNDED", "CUTOFF", "ITERATION_LIMIT", "NODE_LIMIT",
           "TIME_LIMIT", "SOLUTION_LIMIT", "INTERRUPTED", "NUMERIC", "SUBOPTIMAL", "INPROGRESS", "USER_OBJ_LIMIT"):
    setattr(GRB.Status, _n, getattr(GRB, _n))
GRB.status = GRB.Status
GRB.attr = GRB.Attr
GRB.param = GRB.Param
GRB.callback = GRB.Callback



def _is_num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) or type(x).__name__ in (
        "float64", "float32", "int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64", "bool_")


def _num(x):
    return float(x)


def _solution(value, attr):
    """A solution attribute: GurobiError when there is no solution (as gurobipy)."""
    if value is None:
        raise GurobiError(10005, f"Unable to retrieve attribute '{attr}'")
    return value


class _Modelled:
    """What variables and constraints share: their index, getAttr / setAttr."""
    __slots__ = ()

    @property
    def index(self):
        return self._index

    def getAttr(self, name):
        return getattr(self, name)

    def setAttr(self, name, value):
        setattr(self, name, value)


class Var(_Modelled):
    __slots__ = ("_model", "_index", "VarName", "LB", "UB", "Obj", "VType", "_x", "_rc", "__weakref__")

    def __init__(self, model, index, lb, ub, obj, vtype, name):
        self._model = model
        self._index = index
        self.LB = float(lb)
        self.UB = float(ub)
        self.Obj = float(obj)
        self.VType = vtype
        self.VarName = name
        self._x = None
        self._rc = None

    __hash__ = object.__hash__

    # attribute spellings
    def __getattr__(self, name):
        m = _VAR_ALIASES.get(name)
        if m is None:
            raise AttributeError(f"'Var' object has no attribute '{name}'")
        return getattr(self, m)

    def __setattr__(self, name, value):
        object.__setattr__(self, _VAR_ALIASES.get(name, name), value)

    @property
    def X(self):
        return _solution(self._x, "X")

    @property
    def RC(self):
        return _solution(self._rc, "RC")

    def sameAs(self, other):
        return self is other

    def __repr__(self):
        return f"<gurobi.Var {self.VarName}>"

    # arithmetic
    def _le(self):
        return LinExpr([(1.0, self)])

    def __add__(self, o):
        return self._le() + o

    def __radd__(self, o):
        return self._le() + o

    def __sub__(self, o):
        return self._le() - o

    def __rsub__(self, o):
        return (-self._le()) + o

    def __mul__(self, o):
        return self._le() * o

    def __rmul__(self, o):
        return self._le() * o

    def __truediv__(self, o):
        return self._le() / o

    def __neg__(self):
        return self._le() * -1.0

    def __pos__(self):
        return self._le()

    def __pow__(self, p):
        raise GurobiError("quadratic expressions are not supported by the trex gurobipy shim")

    def __le__(self, o):
        return TempConstr(self._le(), "<", o)

    def __ge__(self, o):
        return TempConstr(self._le(), ">", o)

    def __eq__(self, o):
        return TempConstr(self._le(), "=", o)


_VAR_ALIASES = {"x": "X", "varName": "VarName", "varname": "VarName", "lb": "LB", "ub": "UB", "obj": "Obj",
                "vType": "VType", "vtype": "VType", "rc": "RC"}


class LinExpr:
    def __init__(self, arg1=None, arg2=None):
        self._terms = {}
        self._const = 0.0
        if arg1 is None:
            return
        if arg2 is not None:
            if isinstance(arg1, (list, tuple)):
                for c, v in zip(arg1, arg2):
                    self._add_term(v, _num(c))
            else:
                self._add_term(arg2, _num(arg1))
            return
        if isinstance(arg1, (list, tuple)):
            for c, v in arg1:
                self._add_term(v, _num(c))
        else:
            self.add(arg1)

    def _add_term(self, v, c):
        if not isinstance(v, Var):
            raise GurobiError(f"not a variable: {v!r}")
        self._terms[v] = self._terms.get(v, 0.0) + c

    def copy(self):
        e = LinExpr()
        e._terms = dict(self._terms)
        e._const = self._const
        return e

    def add(self, expr, mult=1.0):
        mult = _num(mult)
        if isinstance(expr, LinExpr):
            for v, c in expr._terms.items():
                self._terms[v] = self._terms.get(v, 0.0) + c * mult
            self._const += expr._const * mult
        elif isinstance(expr, Var):
            self._terms[expr] = self._terms.get(expr, 0.0) + mult
        elif _is_num(expr):
            self._const += _num(expr) * mult
        elif isinstance(expr, TempConstr):
            raise GurobiError("a constraint cannot be used as an expression")
        else:
            raise GurobiError(f"unsupported operand in a linear expression: {type(expr).__name__}")
        return self

    def addTerms(self, coeffs, vars):
        if isinstance(vars, Var):
            self._add_term(vars, _num(coeffs))
        else:
            for c, v in zip(coeffs, vars):
                self._add_term(v, _num(c))

    def addConstant(self, c):
        self._const += _num(c)

    def getConstant(self):
        return self._const

    def size(self):
        return len(self._terms)

    def getVar(self, i):
        return list(self._terms.keys())[i]

    def getCoeff(self, i):
        return list(self._terms.values())[i]

    def getValue(self):
        return self._const + sum(c * v.X for v, c in self._terms.items())

    def clear(self):
        self._terms = {}
        self._const = 0.0

    def __add__(self, o):
        return self.copy().add(o)

    def __radd__(self, o):
        return self.copy().add(o)

    def __iadd__(self, o):
        return self.add(o)

    def __sub__(self, o):
        return self.copy().add(o, -1.0)

    def __rsub__(self, o):
        return (self * -1.0).add(o)

    def __isub__(self, o):
        return self.add(o, -1.0)

    def __mul__(self, o):
        if isinstance(o, (Var, LinExpr)):
            if isinstance(o, LinExpr) and not o._terms:
                o = o._const
            elif not self._terms:
                return LinExpr().add(o, self._const)
            else:
                raise GurobiError("quadratic expressions are not supported by the trex gurobipy shim")
        c = _num(o)
        e = LinExpr()
        e._terms = {v: x * c for v, x in self._terms.items()}
        e._const = self._const * c
        return e

    __rmul__ = __mul__

    def __imul__(self, o):
        return self * o

    def __truediv__(self, o):
        return self * (1.0 / _num(o))

    def __neg__(self):
        return self * -1.0

    def __pos__(self):
        return self

    def __le__(self, o):
        return TempConstr(self, "<", o)

    def __ge__(self, o):
        return TempConstr(self, ">", o)

    def __eq__(self, o):
        return TempConstr(self, "=", o)

    __hash__ = object.__hash__

    def __repr__(self):
        parts = [f"{c:+g} {v.VarName}" for v, c in self._terms.items()]
        if self._const:
            parts.append(f"{self._const:+g}")
        return "<gurobi.LinExpr: " + " ".join(parts) + ">"


class QuadExpr(LinExpr):
    def __init__(self, *a, **k):
        raise GurobiError("quadratic expressions are not supported by the trex gurobipy shim")


class TempConstr:
    def __init__(self, lhs, sense, rhs):
        self.lhs = lhs if isinstance(lhs, LinExpr) else LinExpr().add(lhs)
        self.sense = sense
        self.rhs = rhs

    def _row(self):
        e = self.lhs.copy()
        e.add(self.rhs, -1.0)
        return e


class Constr(_Modelled):
    def __init__(self, model, index, expr, sense, rhs, name):
        self._model = model
        self._index = index
        self._expr = expr  # terms only
        self.Sense = sense
        self.RHS = rhs
        self.ConstrName = name
        self._pi = None
        self._slack = None

    def __getattr__(self, name):
        m = {"pi": "Pi", "slack": "Slack", "rhs": "RHS", "sense": "Sense", "constrName": "ConstrName",
             "constrname": "ConstrName"}.get(name)
        if m is None:
            raise AttributeError(f"'Constr' object has no attribute '{name}'")
        return getattr(self, m)

    @property
    def Pi(self):
        return _solution(self._pi, "Pi")

    @property
    def Slack(self):
        return _solution(self._slack, "Slack")

    def __repr__(self):
        return f"<gurobi.Constr {self.ConstrName}>"


def _match(key, pattern):
    if not isinstance(key, tuple):
        key = (key,)
    if len(pattern) != len(key):
        return False
    return all(p == "*" or p == k for p, k in zip(pattern, key))


class tupledict(dict):
    def select(self, *pattern):
        if not pattern:
            return list(self.values())
        return [v for k, v in self.items() if _match(k, pattern)]

    def sum(self, *pattern):
        e = LinExpr()
        for v in (self.select(*pattern) if pattern else self.values()):
            e.add(v)
        return e

    def prod(self, coeff, *pattern):
        e = LinExpr()
        for k, v in self.items():
            if pattern and not _match(k, pattern):
                continue
            if k in coeff:
                e.add(v, coeff[k])
        return e


class tuplelist(list):
    def select(self, *pattern):
        return tuplelist(k for k in self if _match(k, pattern))


def multidict(data):
    keys = tuplelist(data.keys())
    first = next(iter(data.values()), None)
    if isinstance(first, (list, tuple)):
        n = len(first)
        dicts = [dict() for _ in range(n)]
        for k, vals in data.items():
            for i in range(n):
                dicts[i][k] = vals[i]
        return [keys] + dicts
    return [keys, dict(data)]


def quicksum(items):
    e = LinExpr()
    for x in items:
        e.add(x)
    return e


def _general(*a, **k):
    raise GurobiError("general constraints (max_, min_, abs_, and_, or_, indicators) are not supported by the "
                      "trex gurobipy shim")


max_ = min_ = abs_ = and_ = or_ = norm = _general


class _Params:
    def __init__(self, store):
        object.__setattr__(self, "_store", store)

    def __setattr__(self, name, value):
        self._store[name] = value

    def __getattr__(self, name):
        return self._store.get(name, 0)


class Env:
    def __init__(self, logfilename="", empty=False, params=None):
        self._params = dict(params or {})

    def setParam(self, name, value):
        self._params[name] = value

    def start(self):
        return self

    def dispose(self):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def _key_tuple(k):
    return k if isinstance(k, tuple) else (k,)


def _keys_from(indices):
    if len(indices) == 1:
        ix = indices[0]
        if isinstance(ix, int):
            return list(range(ix))
        return list(ix)
    lists = [list(range(ix)) if isinstance(ix, int) else list(ix) for ix in indices]
    out = []
    for combo in itertools.product(*lists):
        flat = []
        for c in combo:
            flat.extend(c if isinstance(c, tuple) else (c,))
        out.append(tuple(flat))
    return out


def _pick(arg, key, i):
    if isinstance(arg, dict):
        return arg[key]
    if isinstance(arg, (list, tuple)) and not isinstance(arg, str):
        return arg[i]
    return arg


class Model:
    def __init__(self, name="", env=None):
        self.ModelName = name
        self._vars = []
        self._constrs = []
        self._obj_const = 0.0
        self.ModelSense = GRB.MINIMIZE
        self._params = dict(getattr(env, "_params", {}) or {})
        self.Params = _Params(self._params)
        self.params = self.Params
        self._status = GRB.LOADED
        self._objval = None
        self.Runtime = 0.0

    # ---- context manager / lifecycle
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def dispose(self):
        pass

    def update(self):
        pass

    def reset(self, clearall=0):
        self._status = GRB.LOADED
        self._objval = None

    def setParam(self, name, value):
        self._params[str(name)] = value

    def getParamInfo(self, name):
        return (name, type(self._params.get(name, 0)), self._params.get(name, 0))

    def terminate(self):
        pass

    # ---- building
    def addVar(self, lb=0.0, ub=GRB.INFINITY, obj=0.0, vtype=GRB.CONTINUOUS, name="", column=None):
        if column is not None:
            raise GurobiError("Column() is not supported by the trex gurobipy shim")
        v = Var(self, len(self._vars), lb, ub, obj, vtype, name or f"C{len(self._vars)}")
        self._vars.append(v)
        return v

    def addVars(self, *indices, lb=0.0, ub=GRB.INFINITY, obj=0.0, vtype=GRB.CONTINUOUS, name=""):
        if not indices:
            raise GurobiError("addVars needs at least one index")
        keys = _keys_from(indices)
        td = tupledict()
        for i, k in enumerate(keys):
            if isinstance(name, str):
                nm = f"{name}[{','.join(str(x) for x in _key_tuple(k))}]" if name else ""
            else:
                nm = _pick(name, k, i)
            td[k] = self.addVar(_pick(lb, k, i), _pick(ub, k, i), _pick(obj, k, i), _pick(vtype, k, i), nm)
        return td

    def addConstr(self, constr, name="", *rest):
        if rest:  # legacy addConstr(lhs, sense, rhs, name)
            lhs, sense, rhs = constr, name, rest[0]
            name = rest[1] if len(rest) > 1 else ""
            return self.addLConstr(lhs, sense, rhs, name)
        if isinstance(constr, bool):
            raise GurobiError("constraint has no variables (it is a plain boolean)")
        if not isinstance(constr, TempConstr):
            raise GurobiError(f"unsupported constraint type {type(constr).__name__}")
        e = constr._row()
        c = Constr(self, len(self._constrs), e, constr.sense, -e._const, name or f"R{len(self._constrs)}")
        c._expr._const = 0.0
        self._constrs.append(c)
        return c

    def addLConstr(self, lhs, sense=None, rhs=None, name=""):
        if isinstance(lhs, TempConstr):
            return self.addConstr(lhs, sense or name)
        s = {"<": "<", "<=": "<", ">": ">", ">=": ">", "=": "=", "==": "="}[sense]
        return self.addConstr(TempConstr(lhs if isinstance(lhs, LinExpr) else LinExpr().add(lhs), s, rhs), name)

    def addConstrs(self, generator, name=""):
        td = tupledict()
        code = getattr(generator, "gi_code", None)
        loop_vars = [v for v in (code.co_varnames if code else ()) if v != ".0"]
        i = 0
        for tc in generator:
            key = i
            frame = getattr(generator, "gi_frame", None)
            if frame is not None and loop_vars:
                vals = tuple(frame.f_locals.get(v) for v in loop_vars)
                flat = []
                for x in vals:
                    flat.extend(x if isinstance(x, tuple) else (x,))
                key = flat[0] if len(flat) == 1 else tuple(flat)
            nm = f"{name}[{','.join(str(x) for x in _key_tuple(key))}]" if name else ""
            td[key] = self.addConstr(tc, nm)
            i += 1
        return td

    def addRange(self, expr, lower, upper, name=""):
        self.addConstr(TempConstr(LinExpr().add(expr), ">", lower), (name + "_lo") if name else "")
        return self.addConstr(TempConstr(LinExpr().add(expr), "<", upper), name)

    def addGenConstrMax(self, *a, **k):
        _general()

    addGenConstrMin = addGenConstrAbs = addGenConstrAnd = addGenConstrOr = addGenConstrIndicator = addGenConstrMax
    addSOS = addQConstr = addGenConstrPWL = addGenConstrMax

    def setObjective(self, expr, sense=None):
        e = LinExpr().add(expr)
        for v in self._vars:
            v.Obj = 0.0
        for v, c in e._terms.items():
            v.Obj = c
        self._obj_const = e._const
        if sense is not None:
            self.ModelSense = sense

    def setObjectiveN(self, *a, **k):
        raise GurobiError("multi-objective models are not supported by the trex gurobipy shim")

    def getObjective(self):
        e = LinExpr()
        for v in self._vars:
            if v.Obj:
                e._terms[v] = v.Obj
        e._const = self._obj_const
        return e

    def remove(self, item):
        if isinstance(item, Constr) and item in self._constrs:
            self._constrs.remove(item)
        elif isinstance(item, (list, tuple)):
            for x in item:
                self.remove(x)

    # ---- queries
    def getVars(self):
        return list(self._vars)

    def getConstrs(self):
        return list(self._constrs)

    def getVarByName(self, name):
        for v in self._vars:
            if v.VarName == name:
                return v
        return None

    def getConstrByName(self, name):
        for c in self._constrs:
            if c.ConstrName == name:
                return c
        return None

    def getAttr(self, attr, objs=None):
        if objs is None:
            return getattr(self, attr)
        if isinstance(objs, dict):
            return {k: getattr(v, attr) for k, v in objs.items()}
        return [getattr(o, attr) for o in objs]

    def setAttr(self, attr, objs, values=None):
        if values is None:
            setattr(self, attr, objs)
            return
        if isinstance(objs, dict):
            for k, o in objs.items():
                setattr(o, attr, values[k] if isinstance(values, dict) else values)
        else:
            for o, val in zip(objs, values if isinstance(values, (list, tuple)) else itertools.repeat(values)):
                setattr(o, attr, val)

    def __getattr__(self, name):
        low = name.lower()
        if low == "status":
            return self._status
        if low in ("objval", "objbound"):
            if self._objval is None:
                raise GurobiError(10005, f"Unable to retrieve attribute '{name}'")
            return self._objval
        if low == "solcount":
            return 1 if self._objval is not None else 0
        if low == "numvars":
            return len(self._vars)
        if low == "numconstrs":
            return len(self._constrs)
        if low == "numintvars":
            return sum(1 for v in self._vars if v.VType in ("I", "B"))
        if low == "numbinvars":
            return sum(1 for v in self._vars if v.VType == "B")
        if low == "ismip":
            return int(any(v.VType in ("I", "B") for v in self._vars))
        if low == "modelsense":
            return object.__getattribute__(self, "ModelSense")
        if low == "mipgap":
            return 0.0
        if low in ("itercount", "nodecount", "barleritercount"):
            return 0
        if low == "objcon":
            return self._obj_const
        raise AttributeError(f"'Model' object has no attribute '{name}'")

    # ---- solving
    def _lp_text(self):
        col = {v: j for j, v in enumerate(self._vars)}
        rows = [([(col[v], x) for v, x in c._expr._terms.items()], c.Sense, c.RHS) for c in self._constrs]
        kinds = {"B": "B", "I": "I", "N": "I"}
        cols = [(v.LB, v.UB, kinds.get(v.VType, "C")) for v in self._vars]
        try:
            text = _lp.lp_text(self.ModelSense == GRB.MAXIMIZE, [(j, v.Obj) for j, v in enumerate(self._vars)], rows,
                               cols, "trex gurobipy shim")
        except _lp.LPError as e:
            raise GurobiError(str(e))
        return text, {v: f"x{j}" for v, j in col.items()}

    def write(self, filename):
        if filename.endswith(".lp"):
            text, _ = self._lp_text()
            with open(filename, "w") as f:
                f.write(text)
            _lp.written(filename, text, "gurobipy")
        elif filename.endswith((".sol", ".json")):
            with open(filename, "w") as f:
                for v in self._vars:
                    f.write(f"{v.VarName} {v._x if v._x is not None else 0}\n")
        else:
            raise GurobiError(f"write({filename!r}): only .lp and .sol are supported by the trex gurobipy shim")

    def optimize(self, callback=None):
        if not self._vars:
            raise GurobiError("the model has no variables")
        text, vname = self._lp_text()
        try:
            rep = _lp.solve(text, self._params.get("TimeLimit"), "gurobipy", self._obj_const)
        except _lp.LPError as e:
            raise GurobiError(str(e))
        st = rep.get("status")
        self._status = {"optimal": GRB.OPTIMAL, "infeasible": GRB.INFEASIBLE, "unbounded": GRB.UNBOUNDED,
                        "timeout": GRB.TIME_LIMIT}.get(st, GRB.NUMERIC)
        for v in self._vars:
            v._x = None
            v._rc = None
        for c in self._constrs:
            c._pi = None
            c._slack = None
        self._objval = None
        if st == "optimal":
            self._objval = float(rep["objective"])  # the harness added the constant
            xs, rcs = rep.get("x", {}), rep.get("rc", {})
            for v in self._vars:
                v._x = float(xs.get(vname[v], 0.0))
                if vname[v] in rcs:
                    v._rc = float(rcs[vname[v]])
            pis = rep.get("pi", {})
            for i, c in enumerate(self._constrs):
                act = sum(x * v._x for v, x in c._expr._terms.items())
                c._slack = c.RHS - act
                if f"r{i}" in pis:
                    c._pi = float(pis[f"r{i}"])
        if self._status == GRB.NUMERIC:
            raise GurobiError(f"solver error: {rep.get('detail', st)}")

    def computeIIS(self):
        raise GurobiError("computeIIS is not supported by the trex gurobipy shim")

    def printAttr(self, attr, filter="*"):
        for v in self._vars:
            try:
                val = getattr(v, attr)
            except GurobiError:
                continue
            if val:
                print(f"{v.VarName} {val}")

    def printStats(self):
        print(f"Model {self.ModelName}: {len(self._vars)} variables, {len(self._constrs)} constraints")

    def relax(self):
        m = Model(self.ModelName + "_relaxed")
        raise GurobiError("relax() is not supported by the trex gurobipy shim")


def read(filename, env=None):
    raise GurobiError("gurobipy.read() is not supported by the trex gurobipy shim")


def setParam(name, value):
    pass


def disposeDefaultEnv():
    pass


__all__ = ["GRB", "Model", "Env", "Var", "Constr", "LinExpr", "QuadExpr", "TempConstr", "GurobiError", "quicksum",
           "tupledict", "tuplelist", "multidict", "max_", "min_", "abs_", "and_", "or_", "norm", "read", "setParam",
           "disposeDefaultEnv"]
