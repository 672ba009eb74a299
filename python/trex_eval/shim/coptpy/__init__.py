"""A coptpy-compatible shim for trex eval: COPT's Python API as OR answers (ORLM, SIRL) use it, backed by trex's
solvers exactly like the gurobipy shim (docs/eval.md §4).

The model is built in Python; Model.solve() / solveLP() writes it as CPLEX LP text (_trex_lp.lp_text) and sends it
on the sandbox's solve channel to the harness, which solves it with GLPK / Clp / Cbc, records the solve itself and
replies with status, objective, values, duals and reduced costs. Covered: Envr / EnvrConfig, createModel, addVar(s)
(nameprefix), addConstr (expression, bool, or lhs / sense / rhs), addConstrs, addBoundConstr, setObjective,
setObjSense / setObjConst, setParam / getParam / Param, solve / solveLP, status, getAttr (LpStatus, MipStatus,
LpObjval, BestObj, ...), objval and the other model attributes in any case, getInfo / setInfo (Value, Dual, Slack,
RedCost, LB, UB, Obj), Var (x / X, getInfo, getName, index, lb, ub, vtype, rc), Constraint (pi / dual, slack, lb,
ub, getInfo, getName), getVars / getConstrs / getVarByName / getConstrByName, getValues / getDuals / getSlacks /
getRedcosts, quicksum, LinExpr (addTerm(s), addConstant, addLinExpr, getValue, ...), QuadExpr (x * y, x ** 2,
products of expressions; addTerm(s), getVar1 / getVar2 / getCoeff / getLinExpr / getValue), setQuadObjective /
getQuadObjective, addQConstr (also addConstr of a quadratic comparison), QConstraint (getName, getRhs, getSense,
slack), getQConstrs, tupledict (sum / prod / select), tuplelist, multidict, the COPT constants (also COPT.Param /
Attr / Info), write(".lp" / ".sol"), CoptError. A quadratic model the harness cannot solve (nonconvex, or with
integer variables), expressions of degree above 2, the duals of quadratic constraints, general constraints
(indicators, SOS, ...), cones, callbacks and the matrix API raise CoptError ("... not supported by the trex coptpy
shim"), never AttributeError.
"""
import _trex_expr as _ex
import _trex_lp as _lp

__version__ = "trex-shim"


class CoptError(Exception):
    def __init__(self, message="", retcode=1):
        if isinstance(message, int) and not isinstance(retcode, int):  # CoptError(retcode, message)
            message, retcode = retcode, message
        super().__init__(message)
        self.message = str(message)
        self.retcode = retcode


def _unsupported(what):
    def fail(*a, **k):
        raise CoptError(f"{what} not supported by the trex coptpy shim")

    return fail


_general = _unsupported("general constraints (indicators, SOS, max / min / abs / and / or) are")


class _Names(type):
    """COPT.Param / COPT.Attr / COPT.Info: each name is its own string (COPT.Param.TimeLimit == "TimeLimit")."""

    def __getattr__(cls, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return name


class COPT:
    # objective sense
    MINIMIZE = 1
    MAXIMIZE = -1
    # variable types
    CONTINUOUS = "C"
    BINARY = "B"
    INTEGER = "I"
    # constraint senses
    LESS_EQUAL = "L"
    GREATER_EQUAL = "G"
    EQUAL = "E"
    FREE = "N"
    RANGE = "R"
    INFINITY = 1e30
    UNDEFINED = 1e40
    # solution status (LpStatus / MipStatus)
    UNSTARTED = 0
    OPTIMAL = 1
    INFEASIBLE = 2
    UNBOUNDED = 3
    INF_OR_UNB = 4
    NUMERICAL = 5
    NODELIMIT = 6
    IMPRECISE = 7
    TIMEOUT = 8
    UNFINISHED = 9
    INTERRUPTED = 10
    ITERLIMIT = 11
    # basis status
    BASIS_LOWER = 0
    BASIS_BASIC = 1
    BASIS_UPPER = 2
    BASIS_SUPERBASIC = 3
    BASIS_FIXED = 4
    SOS_TYPE1 = 1
    SOS_TYPE2 = 2
    CONE_QUAD = 1
    CONE_RQUAD = 2
    INDICATOR_IF = 1
    INDICATOR_ONLYIF = 2
    INDICATOR_IFANDONLYIF = 3
    CLIENT_CLUSTER = "CaCertFile"
    CBCONTEXT_INCUMBENT = 1
    CBCONTEXT_MIPRELAX = 2
    CBCONTEXT_MIPSOL = 4
    CBCONTEXT_MIPNODE = 8
    VERSION_MAJOR = 7
    VERSION_MINOR = 1
    VERSION_TECHNICAL = 0

    class Param(metaclass=_Names):
        TimeLimit = "TimeLimit"
        RelGap = "RelGap"
        AbsGap = "AbsGap"
        Logging = "Logging"
        LogToConsole = "LogToConsole"
        Threads = "Threads"

    class Attr(metaclass=_Names):
        LpStatus = "LpStatus"
        MipStatus = "MipStatus"
        LpObjval = "LpObjval"
        BestObj = "BestObj"
        BestBnd = "BestBnd"
        BestGap = "BestGap"
        HasLpSol = "HasLpSol"
        HasMipSol = "HasMipSol"
        Cols = "Cols"
        Rows = "Rows"
        ObjSense = "ObjSense"
        ObjConst = "ObjConst"
        IsMIP = "IsMIP"

    class Info(metaclass=_Names):
        Value = "Value"
        Dual = "Dual"
        Slack = "Slack"
        RedCost = "RedCost"
        LB = "LB"
        UB = "UB"
        Obj = "Obj"


_STATUS = {"optimal": COPT.OPTIMAL, "infeasible": COPT.INFEASIBLE, "unbounded": COPT.UNBOUNDED,
           "inf_or_unbd": COPT.INF_OR_UNB, "timeout": COPT.TIMEOUT}


# the expression layer shared with the gurobipy shim (_trex_expr); the classes are bound below tuplelist
_SHIM = _ex.Shim("coptpy", CoptError, _general, (COPT.LESS_EQUAL, COPT.GREATER_EQUAL, COPT.EQUAL),
                 number_error=CoptError)
_is_num = _ex.is_num
_num = _SHIM.num  # float(x), CoptError("not a number: ...") where it is none


def _inf(x):
    """A bound in COPT's convention: |x| >= COPT.INFINITY is infinite."""
    x = _num(x)
    return float("inf") if x >= COPT.INFINITY else float("-inf") if x <= -COPT.INFINITY else x


def _solution(value, what):
    if value is None:
        raise CoptError(f"no solution information '{what}' available (no solve, or no optimal solution)")
    return value


class _Modelled(_ex.Indexed):
    """What variables and constraints share: index, name, getInfo / setInfo, case-insensitive attributes."""
    __slots__ = ()

    def getIdx(self):
        return self._index

    def getName(self):
        return self._name

    def setName(self, name):
        self._name = str(name)

    def getInfo(self, name):
        return self._info(str(name))

    def setInfo(self, name, value):
        self._set_info(str(name), value)

    def getBasis(self):
        raise CoptError("basis status is not supported by the trex coptpy shim")

    def remove(self):
        self._model.remove(self)


class Var(_Modelled, _ex.VarArithmetic):
    __slots__ = ("_model", "_index", "_name", "_lb", "_ub", "_obj", "_vtype", "_x", "_rc", "__weakref__")
    __array_ufunc__ = None  # numpy scalars defer to our operators

    def __init__(self, model, index, lb, ub, obj, vtype, name):
        self._model = model
        self._index = index
        self._lb = _num(lb)
        self._ub = _num(ub)
        self._obj = _num(obj)
        if vtype not in (COPT.CONTINUOUS, COPT.BINARY, COPT.INTEGER):
            raise CoptError(f"unknown variable type {vtype!r}")
        self._vtype = vtype
        self._name = str(name)
        self._x = None
        self._rc = None

    __hash__ = object.__hash__

    _ATTRS = {"x": "_x", "value": "_x", "lb": "_lb", "ub": "_ub", "obj": "_obj", "vtype": "_vtype", "name": "_name",
              "rc": "_rc", "redcost": "_rc"}

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        slot = Var._ATTRS.get(name.lower())
        if slot is None:
            if name.lower() == "basis":
                self.getBasis()
            raise CoptError(f"Var attribute '{name}' is not supported by the trex coptpy shim")
        v = object.__getattribute__(self, slot)
        return _solution(v, name) if slot in ("_x", "_rc") else v

    def __setattr__(self, name, value):
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        slot = Var._ATTRS.get(name.lower())
        if slot in ("_lb", "_ub", "_obj"):
            object.__setattr__(self, slot, _num(value))
        elif slot == "_vtype":
            object.__setattr__(self, slot, value)
        elif slot == "_name":
            object.__setattr__(self, slot, str(value))
        else:
            raise CoptError(f"Var attribute '{name}' cannot be set")

    def _info(self, name):
        low = name.lower()
        if low == "value":
            return _solution(self._x, name)
        if low == "redcost":
            return _solution(self._rc, name)
        if low in ("lb", "ub", "obj"):
            return getattr(self, "_" + low)
        raise CoptError(f"Var information '{name}' is not supported by the trex coptpy shim")

    def _set_info(self, name, value):
        low = name.lower()
        if low not in ("lb", "ub", "obj"):
            raise CoptError(f"Var information '{name}' cannot be set")
        object.__setattr__(self, "_" + low, _num(value))

    def getType(self):
        return self._vtype

    def setType(self, vtype):
        self._vtype = vtype

    def __repr__(self):
        return f"<coptpy.Var: {self._name}>"


class _Constant:
    """The constant of COPT's LinExpr and QuadExpr."""

    def addConstant(self, c):
        self._const += _num(c)
        return self

    def setConst(self, c):
        self._const = _num(c)

    def getConst(self):
        return self._const


class LinExpr(_Constant, _ex.LinExprBase):
    __array_ufunc__ = None

    def __init__(self, arg1=0.0, arg2=None):
        self._terms = {}
        self._const = 0.0
        if arg2 is not None:
            if isinstance(arg1, Var):  # LinExpr(var, coeff)
                self.addTerm(arg1, arg2)
            else:  # LinExpr(vars, coeffs)
                self.addTerms(arg1, arg2)
            return
        if isinstance(arg1, (list, tuple)):  # [(var, coeff)] or [(coeff, var)]
            for pair in arg1:
                a, b = pair
                if isinstance(a, Var):
                    self.addTerm(a, b)
                else:
                    self.addTerm(b, a)
            return
        self.add(arg1)

    # ---- building (add, getVar, getCoeff, getValue, clear, copy and the arithmetic: _trex_expr.LinExprBase)
    addLinExpr = addExpr = _ex.LinExprBase.add

    def addTerm(self, var, coeff=1.0):
        self._add_term(var, _num(coeff))
        return self

    def addTerms(self, vars, coeffs=1.0):
        """COPT's order is addTerms(vars, coeffs); gurobipy's (coeffs, vars) is taken too."""
        if isinstance(coeffs, Var) or (isinstance(coeffs, (list, tuple)) and coeffs and isinstance(coeffs[0], Var)):
            vars, coeffs = coeffs, vars
        if isinstance(vars, Var):
            return self.addTerm(vars, coeffs)
        if isinstance(vars, dict):
            vars = list(vars.values())
        vars = list(vars)
        if _is_num(coeffs):
            coeffs = [coeffs] * len(vars)
        coeffs = list(coeffs)
        if len(coeffs) != len(vars):
            raise CoptError("addTerms: as many coefficients as variables are needed")
        for v, c in zip(vars, coeffs):
            self._add_term(v, _num(c))
        return self


    def setCoeff(self, idx, c):
        self._terms[self.getVar(idx)] = _num(c)

    def getSize(self):
        return len(self._terms)

    @property
    def size(self):
        return len(self._terms)

    def remove(self, item):
        if isinstance(item, Var):
            self._terms.pop(item, None)
        else:
            del self._terms[self.getVar(item)]

    clone = _ex.LinExprBase.copy

    def reserve(self, n):
        pass

    def __repr__(self):
        parts = [f"{c:+g} {v._name}" for v, c in self._terms.items()]
        if self._const or not parts:
            parts.append(f"{self._const:+g}")
        return "<coptpy.LinExpr: " + " ".join(parts) + ">"


class QuadExpr(_Constant, _ex.QuadExprBase):
    """Linear part, constant and quadratic terms (_trex_expr.QuadExprBase); x * y, x ** 2 and products of linear
    expressions build one."""
    __array_ufunc__ = None

    def __init__(self, expr=0.0):
        self._terms = {}
        self._const = 0.0
        self._qterms = {}
        self.add(expr)

    addLinExpr = addQuadExpr = addExpr = _ex.QuadExprBase.add

    def addTerm(self, coeff, var1, var2=None):
        """coeff * var1 (* var2); addTerm(var, coeff) in LinExpr's order is taken too."""
        if isinstance(coeff, Var) and not isinstance(var1, Var):
            coeff, var1 = var1, coeff
        if var2 is None:
            self._add_term(var1, _num(coeff))
        else:
            self._add_qterm(var1, var2, _num(coeff))
        return self

    def addTerms(self, coeffs, vars1, vars2=None):
        """Linear terms coeffs[k] * vars1[k], or quadratic ones coeffs[k] * vars1[k] * vars2[k] where vars2 is given
        (each argument a list or a single one; one coefficient for all)."""
        if isinstance(vars1, Var):
            vars1, vars2 = [vars1], None if vars2 is None else [vars2]
        vars1 = list(vars1)
        vars2 = [None] * len(vars1) if vars2 is None else list(vars2)
        coeffs = [coeffs] * len(vars1) if _is_num(coeffs) else list(coeffs)
        if len(coeffs) != len(vars1) or len(vars2) != len(vars1):
            raise CoptError("addTerms: as many coefficients as variables are needed")
        for c, v1, v2 in zip(coeffs, vars1, vars2):
            self.addTerm(c, v1, v2)
        return self


    def setCoeff(self, idx, c):
        """The coefficient of the idx-th quadratic term."""
        v1, v2, _ = self._qterm(idx)
        self._qterms[list(self._qterms)[idx]] = (v1, v2, _num(c))

    def getSize(self):
        """The number of quadratic terms."""
        return len(self._qterms)

    @property
    def size(self):
        return len(self._qterms)


    clone = _ex.QuadExprBase.copy

    def reserve(self, n):
        pass

    def __repr__(self):
        parts = [f"{c:+g} {v._name}" for v, c in self._terms.items()]
        parts += [f"{c:+g} {a._name} * {b._name}" for a, b, c in self._qterms.values()]
        if self._const or not parts:
            parts.append(f"{self._const:+g}")
        return "<coptpy.QuadExpr: " + " ".join(parts) + ">"


class ConstrBuilder(_ex.ComparisonBase):
    """`expr <= rhs`, `expr >= rhs`, `expr == rhs` before it is added to a model."""

    def _bounds(self, e):
        """(terms, lb, ub) of the linear row e = lhs - rhs (`e sense 0`) moved to `lb <= terms <= ub`."""
        b = -e._const
        if b != b:
            raise CoptError("right-hand side nan in a constraint")
        inf = float("inf")
        return e._terms, (b if self.sense in ("G", "E") else -inf), (b if self.sense in ("L", "E") else inf)

    def getExpr(self):
        return self.lhs

    def getSense(self):
        return self.sense


class Constraint(_Modelled):
    def __init__(self, model, index, terms, lb, ub, name):
        self._model = model
        self._index = index
        self._terms = dict(terms)
        self._lb = lb  # -inf / +inf when open (COPT.INFINITY and beyond count as infinite)
        self._ub = ub
        self._name = str(name)
        self._pi = None
        self._slack = None

    _ATTRS = {"pi": "_pi", "dual": "_pi", "slack": "_slack", "lb": "_lb", "ub": "_ub", "name": "_name"}

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        slot = Constraint._ATTRS.get(name.lower())
        if slot is None:
            if name.lower() == "basis":
                self.getBasis()
            raise CoptError(f"Constraint attribute '{name}' is not supported by the trex coptpy shim")
        v = object.__getattribute__(self, slot)
        if slot in ("_lb", "_ub"):
            return max(min(v, COPT.INFINITY), -COPT.INFINITY)
        return _solution(v, name) if slot in ("_pi", "_slack") else v

    def __setattr__(self, name, value):
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        slot = Constraint._ATTRS.get(name.lower())
        if slot in ("_lb", "_ub"):
            object.__setattr__(self, slot, _inf(value))
        elif slot == "_name":
            object.__setattr__(self, slot, str(value))
        else:
            raise CoptError(f"Constraint attribute '{name}' cannot be set")

    def _info(self, name):
        low = name.lower()
        if low in ("dual", "slack", "lb", "ub"):
            return getattr(self, low)
        raise CoptError(f"Constraint information '{name}' is not supported by the trex coptpy shim")

    def _set_info(self, name, value):
        if name.lower() not in ("lb", "ub"):
            raise CoptError(f"Constraint information '{name}' cannot be set")
        setattr(self, name.lower(), value)

    def _rows(self, col):
        """The LP rows of `lb <= terms <= ub`: one, two (a range), none (free) or an infeasible empty row."""
        items = [(col[v], c) for v, c in self._terms.items()]
        lb, ub = self._lb, self._ub
        if lb >= COPT.INFINITY or ub <= -COPT.INFINITY or lb > ub:
            return [_lp.constant_row(False)]
        lo, hi = lb > -COPT.INFINITY, ub < COPT.INFINITY
        if lo and hi and lb == ub:
            return [(items, "=", lb)]
        return ([(items, ">", lb)] if lo else []) + ([(items, "<", ub)] if hi else [])

    def __repr__(self):
        return f"<coptpy.Constraint: {self._name}>"


class QConstraint(_Modelled):
    """A quadratic constraint `expr sense rhs` (expr without its constant, sense COPT.LESS_EQUAL / GREATER_EQUAL /
    EQUAL). Its slack is, as a Constraint's, the activity of expr; its dual is not available."""

    def __init__(self, model, index, expr, sense, rhs, name):
        self._model = model
        self._index = index
        self._expr = expr
        self._sense = sense
        self._rhs = _num(rhs)
        self._name = str(name)
        self._slack = None

    _ATTRS = {"name": "_name", "rhs": "_rhs", "sense": "_sense", "slack": "_slack"}

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        low = name.lower()
        if low in ("pi", "dual"):
            raise CoptError("the duals of quadratic constraints are not supported by the trex coptpy shim")
        slot = QConstraint._ATTRS.get(low)
        if slot is None:
            raise CoptError(f"QConstraint attribute '{name}' is not supported by the trex coptpy shim")
        v = object.__getattribute__(self, slot)
        return _solution(v, name) if slot == "_slack" else v

    def __setattr__(self, name, value):
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        elif name.lower() == "rhs":
            self.setRhs(value)
        elif name.lower() == "sense":
            self.setSense(value)
        elif name.lower() == "name":
            self.setName(value)
        else:
            raise CoptError(f"QConstraint attribute '{name}' cannot be set")

    def getRhs(self):
        return self._rhs

    def setRhs(self, rhs):
        self._rhs = _num(rhs)

    def getSense(self):
        return self._sense

    def setSense(self, sense):
        s = _SENSES.get(sense)
        if s is None:
            raise CoptError(f"unknown constraint sense {sense!r}")
        self._sense = s

    def _info(self, name):
        if name.lower() in ("slack", "dual"):
            return getattr(self, name.lower())
        raise CoptError(f"QConstraint information '{name}' is not supported by the trex coptpy shim")

    def _set_info(self, name, value):
        raise CoptError(f"QConstraint information '{name}' cannot be set")

    def _row(self, col):
        """The LP row of the constraint (an infinite right-hand side: _trex_lp.bounded_row)."""
        return _lp.bounded_row([(col[v], c) for v, c in self._expr._terms.items()],
                               {"L": "<", "G": ">", "E": "="}[self._sense], self._rhs, COPT.INFINITY,
                               _ex.quad_items(self._expr._qterms, col))

    def __repr__(self):
        return f"<coptpy.QConstraint: {self._name}>"


class VarArray(list):
    def getAll(self):
        return list(self)

    def getSize(self):
        return len(self)

    def getVar(self, i):
        return self[i]

    def pushBack(self, v):
        self.extend(v if isinstance(v, (list, tuple)) else [v])


class ConstrArray(list):
    def getAll(self):
        return list(self)

    def getSize(self):
        return len(self)

    def getConstr(self, i):
        return self[i]

    def pushBack(self, c):
        self.extend(c if isinstance(c, (list, tuple)) else [c])


class QConstrArray(ConstrArray):
    def getQConstr(self, i):
        return self[i]


class tupledict(_ex.TupleDictBase):
    def _add_product(self, e, value, coeff):
        if isinstance(value, (Var, LinExpr, QuadExpr)):
            e.add(value, coeff)
        else:  # a tupledict of numbers times a dict of expressions
            e.add(coeff, value)


class tuplelist(_ex.TupleListBase):
    def add(self, item):
        self.append(item)


_SHIM.bind(Var, LinExpr, QuadExpr, ConstrBuilder, tupledict, tuplelist, multidict_dict=tupledict)
quicksum = _SHIM.quicksum
multidict = _SHIM.multidict


class Column:
    def __init__(self, *a, **k):
        raise CoptError("Column() is not supported by the trex coptpy shim")


class CallbackBase:
    """Subclassing works; Model.setCallback() raises CoptError (callbacks are not supported)."""

    def __init__(self, *a, **k):
        pass


class EnvrConfig:
    def __init__(self):
        self._config = {}

    def set(self, name, value):
        self._config[name] = value


class Envr:
    def __init__(self, arg=None):
        pass

    def createModel(self, name=""):
        return Model(self, name)

    def close(self):
        pass

    def setLogFile(self, *a):
        pass


class _Params:
    def __init__(self, model):
        object.__setattr__(self, "_model", model)

    def __setattr__(self, name, value):
        self._model.setParam(name, value)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self._model.getParam(name)


_SENSES = {"L": "L", "<": "L", "<=": "L", "G": "G", ">": "G", ">=": "G", "E": "E", "=": "E", "==": "E"}


# Methods of coptpy's Model this shim cannot carry out, with what they need: each raises CoptError.
_UNSUPPORTED = {
    "general constraints (indicators, SOS, max / min / abs / and / or) are": (
        "addSOS", "addGenConstrIndicator", "addGenConstrMax", "addGenConstrMin", "addGenConstrAbs",
        "addGenConstrAnd", "addGenConstrOr", "addGenConstrPWL", "addIndicator", "addGenConstrs"),
    "cones and semidefinite constraints are": ("addCone", "addCones", "addExpCone", "addExpCones",
                                               "addAffineCone", "addPsdVar", "addPsdVars", "addPsdConstr",
                                               "addLmiConstr", "addSymMat", "setPsdObjective"),
    "nonlinear constraints are": ("addNlConstr", "addNlConstrs", "setNlObjective"),
    "callbacks are": ("setCallback", "cbGet", "cbCut", "cbLazy", "addLazyConstr", "addLazyConstrs",
                      "addUserCut", "addUserCuts"),
    "the matrix API is": ("addMVar", "addMConstr", "addMQConstr", "setMObjective", "getA", "loadMatrix"),
    "multiple objectives are": ("setObjectiveN", "getObjectiveN"),
    "IIS and feasibility relaxation are": ("computeIIS", "writeIIS", "feasRelax", "feasRelaxS", "writeRelax"),
    "the tuner is": ("tune", "loadTuneParam"),
    "MIP starts and the solution pool are": ("setMipStart", "loadMipStart", "getPoolSolution", "getPoolObjVal"),
}
_UNSUPPORTED_BY_NAME = {n.lower(): what for what, names in _UNSUPPORTED.items() for n in names}


class Model:
    def __init__(self, env=None, name=""):
        self._name = str(name)
        self._vars = []
        self._constrs = []
        self._qconstrs = []
        self._obj_const = 0.0
        self._obj_quad = {}  # the objective's quadratic terms (a QuadExpr's _qterms)
        self._sense = COPT.MINIMIZE
        self._params = {}
        self.Param = _Params(self)
        self._lpstatus = COPT.UNSTARTED
        self._mipstatus = COPT.UNSTARTED
        self._status = COPT.UNSTARTED
        self._objval = None
        self._solved_mip = False

    # ---- parameters
    def setParam(self, name, value):
        self._params[str(name).lower()] = value

    def getParam(self, name):
        return self._params.get(str(name).lower(), 0)

    def getParamInfo(self, name):
        v = self.getParam(name)
        return (str(name), v, v, v, v)

    def resetParam(self):
        self._params = {}

    def setLogFile(self, *a):
        pass

    def setLogCallback(self, *a):
        pass

    # ---- building
    def addVar(self, lb=0.0, ub=COPT.INFINITY, obj=0.0, vtype=COPT.CONTINUOUS, name="", column=None):
        if column is not None:
            raise CoptError("Column() is not supported by the trex coptpy shim")
        return _ex.append_var(self, Var, lb, ub, obj, vtype, name)

    def addVars(self, *indices, lb=0.0, ub=COPT.INFINITY, obj=0.0, vtype=COPT.CONTINUOUS, nameprefix="C",
                name=None):
        if not indices:
            raise CoptError("addVars needs at least one index")
        if name is not None:  # gurobipy's spelling: taken as the prefix
            nameprefix = name
        return _ex.add_vars(tupledict(), _ex.keys_from(indices, _is_num), self.addVar, lb, ub, obj, vtype,
                            lambda k, i: _ex.element_name(nameprefix, k, i, "()"))

    def _add(self, terms, lb, ub, name):
        c = Constraint(self, len(self._constrs), terms, lb, ub, name or f"R{len(self._constrs)}")
        self._constrs.append(c)
        return c

    def addConstr(self, lhs, sense=None, rhs=None, name=""):
        if (isinstance(lhs, ConstrBuilder) or _lp.is_bool(lhs)) and rhs is None:
            if isinstance(sense, str) and not name:
                name = sense  # addConstr(x + y <= 5, "c1")
            sense = None
        if sense is not None or rhs is not None:  # addConstr(lhs, sense, rhs, name)
            if isinstance(lhs, ConstrBuilder):
                raise CoptError("addConstr: a constraint with a sense and a right-hand side")
            s = _SENSES.get(sense)
            if s is None:
                raise CoptError(f"addConstr: unknown constraint sense {sense!r}")
            lhs = ConstrBuilder(lhs, s, 0.0 if rhs is None else rhs)
        if _lp.is_bool(lhs):  # a comparison without variables, e.g. addConstr(sum([]) <= 5): True holds
            return self._add({}, -float("inf") if lhs else float("inf"), float("inf"), name)
        if not isinstance(lhs, ConstrBuilder):
            raise CoptError(f"addConstr: unsupported constraint of type {type(lhs).__name__}")
        e = lhs._row()
        if _ex.is_quadratic(_SHIM, e):  # as COPT: a quadratic comparison makes a QConstraint
            return self._add_qconstr(e, lhs.sense, name)
        terms, lb, ub = lhs._bounds(e)
        return self._add(terms, _inf(lb), _inf(ub), name)

    addLConstr = addConstr

    def _add_qconstr(self, e, sense, name):
        """The quadratic constraint `e sense 0` (e = lhs - rhs), its constant moved to the right-hand side."""
        if e._const != e._const:
            raise CoptError("right-hand side nan in a constraint")
        qc = QConstraint(self, len(self._qconstrs), e, sense, -e._const, name or f"Q{len(self._qconstrs)}")
        e._const = 0.0
        self._qconstrs.append(qc)
        return qc

    def addQConstr(self, lhs, sense=None, rhs=None, name=""):
        """addQConstr(expr <= rhs, name) or addQConstr(lhs, sense, rhs, name): a QConstraint, also for a linear
        expression."""
        if isinstance(lhs, ConstrBuilder):
            if isinstance(sense, str) and rhs is None and not name and sense not in _SENSES:
                name = sense
            builder = lhs
        else:
            s = _SENSES.get(sense)
            if s is None:
                raise CoptError(f"addQConstr: unknown constraint sense {sense!r}")
            builder = ConstrBuilder(lhs, s, 0.0 if rhs is None else rhs)
        e = builder._row()
        return self._add_qconstr(e if isinstance(e, QuadExpr) else QuadExpr(e), builder.sense, name)

    def addBoundConstr(self, expr, lb=-COPT.INFINITY, ub=COPT.INFINITY, name=""):
        e = LinExpr().add(expr)
        if isinstance(e, QuadExpr):
            raise CoptError("addBoundConstr of a quadratic expression is not supported by the trex coptpy shim "
                            "(addQConstr is)")
        return self._add(e._terms, _inf(_num(lb) - e._const), _inf(_num(ub) - e._const), name)

    def addConstrs(self, generator, nameprefix="R", name=None):
        if name is not None:
            nameprefix = name
        if isinstance(generator, (ConstrBuilder, bool)):
            return self.addConstr(generator, name=nameprefix)
        td = tupledict()
        for key, tc in _ex.keyed(generator, number_unhashable=True):  # a loop over dicts or lists: numbered
            td[key] = self.addConstr(tc, name=_ex.indexed_name(nameprefix, key, "()") if nameprefix else "")
        return td

    def setObjective(self, expr, sense=None):
        self._obj_const, self._obj_quad = _ex.set_objective(self._vars, LinExpr().add(expr), "_obj")
        if sense is not None:
            self.setObjSense(sense)

    setQuadObjective = setObjective

    def setObjSense(self, sense):
        if sense not in (COPT.MINIMIZE, COPT.MAXIMIZE):
            raise CoptError(f"unknown objective sense {sense!r}")
        self._sense = sense

    def setObjConst(self, c):
        self._obj_const = _num(c)

    def getObjective(self):
        """A LinExpr, or a QuadExpr for a quadratic objective."""
        return _ex.get_objective(QuadExpr() if self._obj_quad else LinExpr(), self._vars, "_obj", self._obj_const,
                                 self._obj_quad)

    def getQuadObjective(self):
        return _ex.get_objective(QuadExpr(), self._vars, "_obj", self._obj_const, self._obj_quad)

    def setVarType(self, vars, vtypes):
        vs = list(vars.values()) if isinstance(vars, dict) else vars if isinstance(vars, (list, tuple)) else [vars]
        for i, v in enumerate(vs):
            v._vtype = _ex.pick(vtypes, None, i) if not isinstance(vtypes, dict) else vtypes[v]

    def remove(self, item):
        if isinstance(item, Constraint):  # by identity: Var.__eq__ builds a constraint
            self._constrs = [c for c in self._constrs if c is not item]
        elif isinstance(item, QConstraint):
            self._qconstrs = [c for c in self._qconstrs if c is not item]
        elif isinstance(item, Var):
            self._vars = [v for v in self._vars if v is not item]
            for c in self._constrs:
                c._terms.pop(item, None)
            for qc in self._qconstrs:
                qc._expr._remove_var(item)
            self._obj_quad = _ex.drop_var(self._obj_quad, item)
        elif isinstance(item, dict):
            for x in list(item.values()):
                self.remove(x)
        elif isinstance(item, (list, tuple)):
            for x in list(item):
                self.remove(x)
        for i, v in enumerate(self._vars):
            v._index = i
        for i, c in enumerate(self._constrs):
            c._index = i
        for i, qc in enumerate(self._qconstrs):
            qc._index = i

    def update(self):
        pass

    def reset(self, clearall=0):
        self._status = self._lpstatus = self._mipstatus = COPT.UNSTARTED
        self._objval = None
        self._clear_solution()

    resetAll = reset

    def clear(self):
        self.__init__(None, self._name)

    def interrupt(self):
        pass

    # ---- queries
    def getVars(self):
        return VarArray(self._vars)

    def getConstrs(self):
        return ConstrArray(self._constrs)

    def getVar(self, idx):
        return self._vars[idx]

    def getConstr(self, idx):
        return self._constrs[idx]

    def getQConstrs(self):
        return QConstrArray(self._qconstrs)

    def getQConstr(self, idx):
        return self._qconstrs[idx]

    def getQConstrByName(self, name):
        for qc in self._qconstrs:
            if qc._name == name:
                return qc
        raise CoptError(f"no quadratic constraint named '{name}'")

    def getQuadRow(self, qconstr):
        """The quadratic constraint's left-hand side, a QuadExpr."""
        return qconstr._expr.copy()

    def getVarByName(self, name):
        for v in self._vars:
            if v._name == name:
                return v
        raise CoptError(f"no variable named '{name}'")

    def getConstrByName(self, name):
        for c in self._constrs:
            if c._name == name:
                return c
        raise CoptError(f"no constraint named '{name}'")

    def getInfo(self, name, args):
        """COPT.Info.* of one Var / Constraint (a number), a list or array of them (a list), or a dict of them
        (a tupledict with the same keys)."""
        if isinstance(args, (Var, Constraint, QConstraint)):
            return args.getInfo(name)
        if isinstance(args, dict):
            return tupledict((k, v.getInfo(name)) for k, v in args.items())
        if isinstance(args, (list, tuple)):
            return [o.getInfo(name) for o in args]
        raise CoptError(f"getInfo: unsupported argument of type {type(args).__name__}")

    def setInfo(self, name, args, values):
        if isinstance(args, (Var, Constraint, QConstraint)):
            args.setInfo(name, values)
            return
        _ex.spread(args, values, lambda o, v: o.setInfo(name, v))

    def getValues(self):
        return [v.x for v in self._vars]

    def getDuals(self):
        return [c.pi for c in self._constrs]

    def getSlacks(self):
        return [c.slack for c in self._constrs]

    def getRedcosts(self):
        return [v.rc for v in self._vars]

    def getLpSolution(self):
        return self.getValues(), self.getSlacks(), self.getDuals(), self.getRedcosts()

    def getRow(self, constr):
        e = LinExpr()
        e._terms = dict(constr._terms)
        return e

    def getCoeff(self, constr, var):
        return constr._terms.get(var, 0.0)

    def setCoeff(self, constr, var, value):
        constr._terms[var] = _num(value)

    def _is_mip(self):
        return any(v._vtype in ("I", "B") for v in self._vars)

    def getAttr(self, name):
        low = str(name).lower()
        if low in ("status",):
            return self._status
        if low == "lpstatus":
            return self._lpstatus
        if low == "mipstatus":
            return self._mipstatus
        if low in ("objval", "lpobjval", "bestobj", "bestbnd", "objbound"):
            if self._objval is None:
                raise CoptError(f"no objective value ('{name}'): the model has no solution")
            return self._objval
        if low == "bestgap":
            return 0.0
        if low in ("haslpsol", "hasmipsol", "hassol"):
            has = int(self._objval is not None)
            if low == "haslpsol":
                return has if not self._solved_mip else 0
            if low == "hasmipsol":
                return has if self._solved_mip else 0
            return has
        if low == "hasbasis":
            return 0
        if low == "cols":
            return len(self._vars)
        if low == "rows":
            return len(self._constrs)
        if low == "elems":
            return sum(len(c._terms) for c in self._constrs)
        if low == "ints":
            return sum(1 for v in self._vars if v._vtype == "I")
        if low == "bins":
            return sum(1 for v in self._vars if v._vtype == "B")
        if low == "ismip":
            return int(self._is_mip())
        if low in ("objsense",):
            return self._sense
        if low in ("objconst",):
            return self._obj_const
        if low == "qconstrs":
            return len(self._qconstrs)
        if low == "hasqobj":
            return int(bool(self._obj_quad))
        if low == "qelems":
            return len(self._obj_quad)
        if low in ("solvingtime", "simplexiter", "barrieriter", "nodecnt", "poolsols", "soss", "cones",
                   "indicators", "haspsdobj"):
            return 0
        if low in _UNSUPPORTED_BY_NAME:
            raise CoptError(f"{_UNSUPPORTED_BY_NAME[low]} not supported by the trex coptpy shim")
        raise CoptError(f"model attribute '{name}' is not supported by the trex coptpy shim")

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        low = name.lower()
        if low in _UNSUPPORTED_BY_NAME or low.startswith("addgenconstr"):
            return _unsupported(_UNSUPPORTED_BY_NAME.get(low, "general constraints (indicators, SOS, max / min / "
                                                                "abs / and / or) are"))
        return self.getAttr(name)

    def __setattr__(self, name, value):
        if name.startswith("_") or name == "Param":
            object.__setattr__(self, name, value)
        elif name.lower() == "objsense":
            self.setObjSense(value)
        elif name.lower() == "objconst":
            self.setObjConst(value)
        else:
            raise CoptError(f"model attribute '{name}' cannot be set")

    # ---- solving
    def _lp_text(self, relax=False, with_constant=False):
        """The LP text and the linear constraint of each of its first rows (owner[i]: row r{i}); the quadratic
        constraints' rows follow those."""
        col = {v: j for j, v in enumerate(self._vars)}
        rows, owner = [], []
        try:
            for c in self._constrs:
                for r in c._rows(col):
                    rows.append(r)
                    owner.append(c)
            rows += [qc._row(col) for qc in self._qconstrs]
            obj_quad = _ex.quad_items(self._obj_quad, col)
            kinds = {"B": "B", "I": "I"}
            cols = [(v._lb, v._ub, "C" if relax else kinds.get(v._vtype, "C")) for v in self._vars]
            text = _lp.lp_text(self._sense == COPT.MAXIMIZE, [(j, v._obj) for j, v in enumerate(self._vars)], rows,
                               cols, "trex coptpy shim", self._obj_const if with_constant else 0.0, obj_quad)
        except (_lp.LPError, TypeError, ValueError) as e:
            raise CoptError(str(e))
        return text, owner

    def _clear_solution(self):
        _ex.clear_solution(self._vars, self._constrs)
        for qc in self._qconstrs:
            qc._slack = None

    def _solve(self, relax):
        if not self._vars:
            raise CoptError("the model has no variables")
        text, owner = self._lp_text(relax)
        try:
            rep = _lp.solve(text, self._params.get("timelimit"), "coptpy", self._obj_const)
        except _lp.LPError as e:
            raise CoptError(str(e))
        st = rep.get("status")
        code = _STATUS.get(st, COPT.NUMERICAL)
        mip = self._is_mip() and not relax
        self._solved_mip = mip
        self._status = code
        if mip:
            self._mipstatus = code
        else:
            self._lpstatus = code
        self._clear_solution()
        self._objval = None
        if st == "unsupported":
            raise _SHIM.refused(rep)
        if st == "optimal":
            self._objval = float(rep["objective"])  # the harness added the constant
            _ex.read_columns(self._vars, rep)
            for qc in self._qconstrs:  # no duals: the harness sends those of the linear rows only
                qc._slack = qc._expr.getValue()
            pis = rep.get("pi", {})
            for c in self._constrs:
                c._slack = sum(x * v._x for v, x in c._terms.items())  # COPT's Slack is the row activity
                if not mip:
                    c._pi = 0.0
            for i, c in enumerate(owner):
                if f"r{i}" in pis:
                    c._pi = (c._pi or 0.0) + float(pis[f"r{i}"])
        if code == COPT.NUMERICAL:
            raise CoptError(f"solver error: {rep.get('detail', st)}")

    def solve(self):
        self._solve(relax=False)

    def solveLP(self):
        self._solve(relax=True)

    # ---- files
    def write(self, filename):
        filename = str(filename)
        if filename.endswith(".lp"):
            text, _ = self._lp_text(with_constant=True)
            _ex.write_lp(filename, text, "coptpy")
        elif filename.endswith(".sol"):
            _ex.write_sol(filename, [(v._name, v._x) for v in self._vars])
        else:
            raise CoptError(f"write({filename!r}): formats other than .lp and .sol are not supported by the trex "
                            "coptpy shim")

    def writeLp(self, filename):
        self.write(filename if str(filename).endswith(".lp") else str(filename) + ".lp")

    def writeSol(self, filename):
        self.write(filename if str(filename).endswith(".sol") else str(filename) + ".sol")

    def read(self, filename):
        raise CoptError("reading model files is not supported by the trex coptpy shim")

    readLp = readMps = read

    def clone(self):
        raise CoptError("Model.clone() is not supported by the trex coptpy shim")

    def __repr__(self):
        return f"<coptpy.Model: {self._name}>"


class NlExpr:
    def __init__(self, *a, **k):
        raise CoptError("nonlinear expressions are not supported by the trex coptpy shim")


__all__ = ["COPT", "Envr", "EnvrConfig", "Model", "Var", "VarArray", "Constraint", "ConstrArray", "ConstrBuilder",
           "QConstraint", "QConstrArray", "LinExpr", "QuadExpr", "NlExpr", "Column", "CallbackBase", "CoptError",
           "quicksum", "tupledict", "tuplelist", "multidict"]
