"""A gurobipy-compatible shim for trex eval: the API subset OR answers use, backed by trex's solvers.

Model building happens in Python; Model.optimize() writes the model as CPLEX LP text and sends it on the sandbox's
solve channel to the harness (GLPK reads it, Clp/Cbc solve it; GLPK when COIN fails; convex quadratic models go to
its QP solver), which records the solve itself and sends back status, objective, variable values, duals and reduced
costs. Covered: Model, Env, addVar(s), addConstr(s), addLConstr, addRange, addQConstr, setObjective, getObjective,
optimize, update, write(.lp), setParam / Params, quicksum, LinExpr, QuadExpr (products of expressions, squares;
size / getVar1 / getVar2 / getCoeff / getLinExpr / getValue), tupledict (sum / prod / select), tuplelist,
multidict, GRB constants (also GRB.Status / GRB.Attr / GRB.Param), Status, ObjVal, Var.X / .x, VarName, LB / UB /
Obj / VType, Constr.Pi / Slack / RHS, QConstr.QCName / QCSense / QCRHS / QCSlack, getAttr / setAttr, getVars,
getConstrs, getQConstrs, getVarByName. A quadratic model the harness cannot solve (nonconvex, or with integer
variables), expressions of degree above 2, the duals of quadratic constraints (QCPi) and general constraints
(addGenConstr*, max_ / min_ / abs_ / and_ / or_, indicators, SOS) raise GurobiError (not supported). A constraint
that is a plain truth value (`addConstr(0 <= 5)`) is an empty row, trivially satisfied when True and infeasible when
False; bools count as 1 / 0 in expressions; an infinite right-hand side (float('inf'), GRB.INFINITY) is no
constraint on the open side and an infeasible one on the other.
"""
import _trex_expr as _ex
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
    SOS_TYPE1 = 1
    SOS_TYPE2 = 2

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
           "IsMIP", "ObjCon", "ModelName", "NumIntVars", "NumBinVars", "IterCount", "NodeCount", "QCName", "QCSense",
           "QCRHS", "QCPi", "QCSlack", "NumQConstrs", "NumQNZs", "NumQCNZs"):
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



def _general(*a, **k):
    raise GurobiError("general constraints are not supported by the trex gurobipy shim (max_, min_, abs_, and_, "
                      "or_, norm, indicators, addGenConstr*, SOS)")


# the expression layer shared with the coptpy shim (_trex_expr); the classes are bound below tuplelist
_SHIM = _ex.Shim("gurobipy", GurobiError, _general, (GRB.LESS_EQUAL, GRB.GREATER_EQUAL, GRB.EQUAL))
_num = _SHIM.num  # float(x)


def _solution(value, attr):
    """A solution attribute: GurobiError when there is no solution (as gurobipy)."""
    if value is None:
        raise GurobiError(10005, f"Unable to retrieve attribute '{attr}'")
    return value


class _Modelled(_ex.Indexed):
    """What variables and constraints share: their index, getAttr / setAttr."""
    __slots__ = ()

    def getAttr(self, name):
        return getattr(self, name)

    def setAttr(self, name, value):
        setattr(self, name, value)


class Var(_Modelled, _ex.VarArithmetic):
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


_VAR_ALIASES = {"x": "X", "varName": "VarName", "varname": "VarName", "lb": "LB", "ub": "UB", "obj": "Obj",
                "vType": "VType", "vtype": "VType", "rc": "RC"}


class LinExpr(_ex.LinExprBase):
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

    def addTerms(self, coeffs, vars):
        if isinstance(vars, Var):
            self._add_term(vars, _num(coeffs))
        else:
            for c, v in zip(coeffs, vars):
                self._add_term(v, _num(c))

    def addConstant(self, c):
        self._const += _num(c)

    def size(self):
        return len(self._terms)

    def __repr__(self):
        parts = [f"{c:+g} {v.VarName}" for v, c in self._terms.items()]
        if self._const:
            parts.append(f"{self._const:+g}")
        return "<gurobi.LinExpr: " + " ".join(parts) + ">"


class QuadExpr(_ex.QuadExprBase):
    """Linear part, constant and quadratic terms (_trex_expr.QuadExprBase); x * y, x ** 2 and products of linear
    expressions build one."""

    def __init__(self, expr=None):
        self._terms = {}
        self._const = 0.0
        self._qterms = {}
        if expr is not None:
            self.add(expr)

    def addTerms(self, coeffs, vars, vars2=None):
        """Linear terms coeffs[k] * vars[k], or quadratic ones coeffs[k] * vars[k] * vars2[k] where vars2 is given
        (each argument a list or a single one)."""
        if isinstance(vars, Var):
            coeffs, vars, vars2 = [coeffs], [vars], None if vars2 is None else [vars2]
        for k, (c, v) in enumerate(zip(coeffs, vars)):
            if vars2 is None:
                self._add_term(v, _num(c))
            else:
                self._add_qterm(v, vars2[k], _num(c))

    def addConstant(self, c):
        self._const += _num(c)

    def size(self):
        """The number of quadratic terms."""
        return len(self._qterms)


    def __repr__(self):
        parts = [f"{c:+g} {v.VarName}" for v, c in self._terms.items()]
        parts += [f"{c:+g} {a.VarName} * {b.VarName}" for a, b, c in self._qterms.values()]
        if self._const:
            parts.append(f"{self._const:+g}")
        return "<gurobi.QuadExpr: " + " ".join(parts) + ">"


class TempConstr(_ex.ComparisonBase):  # `expr <= rhs` before addConstr
    pass


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


class QConstr(_Modelled):
    """A quadratic constraint `expr QCSense QCRHS` (expr without its constant); its dual (QCPi) is not available."""

    def __init__(self, model, index, expr, sense, rhs, name):
        self._model = model
        self._index = index
        self._expr = expr
        self.QCSense = sense
        self.QCRHS = rhs
        self.QCName = name
        self._slack = None

    def __getattr__(self, name):
        m = {"qcname": "QCName", "qcsense": "QCSense", "qcrhs": "QCRHS", "qcslack": "QCSlack",
             "qcpi": "QCPi"}.get(name.lower())
        if m is None:
            raise AttributeError(f"'QConstr' object has no attribute '{name}'")
        return getattr(self, m)

    @property
    def QCSlack(self):
        return _solution(self._slack, "QCSlack")

    @property
    def QCPi(self):
        raise GurobiError("the duals of quadratic constraints (QCPi) are not supported by the trex gurobipy shim")

    def __repr__(self):
        return f"<gurobi.QConstr {self.QCName}>"


class tupledict(_ex.TupleDictBase):
    pass


class tuplelist(_ex.TupleListBase):
    pass


_SHIM.bind(Var, LinExpr, QuadExpr, TempConstr, tupledict, tuplelist, multidict_dict=dict)
quicksum = _SHIM.quicksum
multidict = _SHIM.multidict
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


class Model:
    def __init__(self, name="", env=None):
        self.ModelName = name
        self._vars = []
        self._constrs = []
        self._qconstrs = []
        self._obj_const = 0.0
        self._obj_quad = {}  # the objective's quadratic terms (a QuadExpr's _qterms)
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
        return _ex.append_var(self, Var, lb, ub, obj, vtype, name)

    def addVars(self, *indices, lb=0.0, ub=GRB.INFINITY, obj=0.0, vtype=GRB.CONTINUOUS, name=""):
        if not indices:
            raise GurobiError("addVars needs at least one index")
        keys = _ex.keys_from(indices, lambda ix: isinstance(ix, int))
        unnamed = isinstance(name, str) and not name
        return _ex.add_vars(tupledict(), keys, self.addVar, lb, ub, obj, vtype,
                            lambda k, i: "" if unnamed else _ex.element_name(name, k, i, "[]"))

    def addConstr(self, constr, name="", *rest):
        if rest:  # legacy addConstr(lhs, sense, rhs, name)
            lhs, sense, rhs = constr, name, rest[0]
            name = rest[1] if len(rest) > 1 else ""
            return self.addLConstr(lhs, sense, rhs, name)
        if _lp.is_bool(constr):  # e.g. addConstr(sum([]) <= 5): Python compares 0 <= 5, the bool True
            c = Constr(self, len(self._constrs), LinExpr(), "<" if constr else ">", 0.0 if constr else 1.0,
                       name or f"R{len(self._constrs)}")
            self._constrs.append(c)
            return c
        if not isinstance(constr, TempConstr):
            raise GurobiError(f"unsupported constraint type {type(constr).__name__}")
        e = constr._row()
        if _ex.is_quadratic(_SHIM, e):
            return self._add_qconstr(e, constr.sense, name)
        if isinstance(e, QuadExpr):  # quadratic in form only
            e = e.getLinExpr()
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
        for key, tc in _ex.keyed(generator):
            td[key] = self.addConstr(tc, _ex.indexed_name(name, key, "[]") if name else "")
        return td

    def addRange(self, expr, lower, upper, name=""):
        self.addConstr(TempConstr(LinExpr().add(expr), ">", lower), (name + "_lo") if name else "")
        return self.addConstr(TempConstr(LinExpr().add(expr), "<", upper), name)

    def addGenConstrMax(self, *a, **k):
        _general()

    addGenConstrMin = addGenConstrAbs = addGenConstrAnd = addGenConstrOr = addGenConstrIndicator = addGenConstrMax
    addSOS = addGenConstrPWL = addGenConstrPow = addGenConstrExp = addGenConstrLog = addGenConstrMax
    addGenConstrPoly = addGenConstrNorm = addGenConstrSin = addGenConstrCos = addGenConstrTan = addGenConstrMax
    addGenConstrExpA = addGenConstrLogA = addGenConstrLogistic = addGenConstrNL = setPWLObj = addGenConstrMax

    def _add_qconstr(self, e, sense, name):
        """The quadratic constraint `e sense 0` (e = lhs - rhs), its constant moved to the right-hand side."""
        qc = QConstr(self, len(self._qconstrs), e, sense, -e._const, name or f"QC{len(self._qconstrs)}")
        e._const = 0.0
        self._qconstrs.append(qc)
        return qc

    def addQConstr(self, lhs, sense=None, rhs=None, name=""):
        """addQConstr(expr <= rhs, name) or addQConstr(lhs, sense, rhs, name): a QConstr, also for a linear
        expression."""
        if isinstance(lhs, TempConstr):
            if isinstance(sense, str) and rhs is None and not name:
                name = sense
            tc = lhs
        else:
            s = {"<": "<", "<=": "<", ">": ">", ">=": ">", "=": "=", "==": "="}.get(sense)
            if s is None:
                raise GurobiError(f"addQConstr: unknown constraint sense {sense!r}")
            tc = TempConstr(lhs, s, 0.0 if rhs is None else rhs)
        e = tc._row()
        if not isinstance(e, QuadExpr):
            e = QuadExpr(e)
        return self._add_qconstr(e, tc.sense, name)

    def addMQConstr(self, *a, **k):
        raise GurobiError("the matrix API (addMQConstr, setMObjective) is not supported by the trex gurobipy shim")

    setMObjective = addMQConstr

    def setObjective(self, expr, sense=None):
        self._obj_const, self._obj_quad = _ex.set_objective(self._vars, LinExpr().add(expr), "Obj")
        if sense is not None:
            self.ModelSense = sense

    def setObjectiveN(self, *a, **k):
        raise GurobiError("multi-objective models are not supported by the trex gurobipy shim")

    def getObjective(self):
        """A LinExpr, or a QuadExpr for a quadratic objective."""
        return _ex.get_objective(QuadExpr() if self._obj_quad else LinExpr(), self._vars, "Obj", self._obj_const,
                                 self._obj_quad)

    def remove(self, item):
        if isinstance(item, Constr) and item in self._constrs:
            self._constrs.remove(item)
        elif isinstance(item, QConstr) and item in self._qconstrs:
            self._qconstrs.remove(item)
            for i, qc in enumerate(self._qconstrs):
                qc._index = i
        elif isinstance(item, (list, tuple)):
            for x in item:
                self.remove(x)

    # ---- queries
    def getVars(self):
        return list(self._vars)

    def getConstrs(self):
        return list(self._constrs)

    def getQConstrs(self):
        return list(self._qconstrs)

    def getQCRow(self, qc):
        """The quadratic constraint's left-hand side, a QuadExpr."""
        return qc._expr.copy()

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
        _ex.spread(objs, values, lambda o, val: setattr(o, attr, val))

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
        if low == "numqconstrs":
            return len(self._qconstrs)
        if low == "numqnzs":
            return len(self._obj_quad)
        if low == "numqcnzs":
            return sum(len(qc._expr._qterms) for qc in self._qconstrs)
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
        if name.startswith("addGenConstr"):  # every general constraint, also those of newer Gurobi versions
            return _general
        raise AttributeError(f"'Model' object has no attribute '{name}'")

    # ---- solving
    def _lp_text(self, with_constant=False):
        """The LP text: rows r0.. the linear constraints in order, then the quadratic ones."""
        col = {v: j for j, v in enumerate(self._vars)}
        try:
            rows = [_lp.bounded_row([(col[v], x) for v, x in c._expr._terms.items()], c.Sense, c.RHS, GRB.INFINITY)
                    for c in self._constrs]
            rows += [_lp.bounded_row([(col[v], x) for v, x in qc._expr._terms.items()], qc.QCSense, qc.QCRHS,
                                     GRB.INFINITY, _ex.quad_items(qc._expr._qterms, col)) for qc in self._qconstrs]
            obj_quad = _ex.quad_items(self._obj_quad, col)
        except (_lp.LPError, TypeError, ValueError) as e:
            raise GurobiError(str(e))
        kinds = {"B": "B", "I": "I", "N": "I"}
        cols = [(v.LB, v.UB, kinds.get(v.VType, "C")) for v in self._vars]
        try:
            text = _lp.lp_text(self.ModelSense == GRB.MAXIMIZE, [(j, v.Obj) for j, v in enumerate(self._vars)], rows,
                               cols, "trex gurobipy shim", self._obj_const if with_constant else 0.0, obj_quad)
        except _lp.LPError as e:
            raise GurobiError(str(e))
        return text

    def write(self, filename):
        if filename.endswith(".lp"):
            _ex.write_lp(filename, self._lp_text(with_constant=True), "gurobipy")
        elif filename.endswith((".sol", ".json")):
            _ex.write_sol(filename, [(v.VarName, v._x) for v in self._vars])
        else:
            raise GurobiError(f"write({filename!r}): only .lp and .sol are supported by the trex gurobipy shim")

    def optimize(self, callback=None):
        if not self._vars:
            raise GurobiError("the model has no variables")
        text = self._lp_text()
        try:
            rep = _lp.solve(text, self._params.get("TimeLimit"), "gurobipy", self._obj_const)
        except _lp.LPError as e:
            raise GurobiError(str(e))
        st = rep.get("status")
        self._status = {"optimal": GRB.OPTIMAL, "infeasible": GRB.INFEASIBLE, "unbounded": GRB.UNBOUNDED,
                        "timeout": GRB.TIME_LIMIT}.get(st, GRB.NUMERIC)
        _ex.clear_solution(self._vars, self._constrs)
        for qc in self._qconstrs:
            qc._slack = None
        self._objval = None
        if st == "unsupported":
            raise _SHIM.refused(rep)
        if st == "optimal":
            self._objval = float(rep["objective"])  # the harness added the constant
            _ex.read_columns(self._vars, rep)
            pis = rep.get("pi", {})
            for i, c in enumerate(self._constrs):
                act = sum(x * v._x for v, x in c._expr._terms.items())
                c._slack = c.RHS - act
                if f"r{i}" in pis:
                    c._pi = float(pis[f"r{i}"])
            for qc in self._qconstrs:  # no duals: the harness sends those of the linear rows only
                qc._slack = qc.QCRHS - qc._expr.getValue()
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
        print(f"Model {self.ModelName}: {len(self._vars)} variables, {len(self._constrs)} constraints, "
              f"{len(self._qconstrs)} quadratic constraints")

    def relax(self):
        m = Model(self.ModelName + "_relaxed")
        raise GurobiError("relax() is not supported by the trex gurobipy shim")


def read(filename, env=None):
    raise GurobiError("gurobipy.read() is not supported by the trex gurobipy shim")


def setParam(name, value):
    pass


def disposeDefaultEnv():
    pass


__all__ = ["GRB", "Model", "Env", "Var", "Constr", "QConstr", "LinExpr", "QuadExpr", "TempConstr", "GurobiError",
           "quicksum", "tupledict", "tuplelist", "multidict", "max_", "min_", "abs_", "and_", "or_", "norm", "read",
           "setParam", "disposeDefaultEnv"]
