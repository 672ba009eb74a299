"""The modelling layer the gurobipy and coptpy shims share (docs/eval.md §4): linear and quadratic expressions, the
arithmetic of variables, comparisons before they are added to a model, tupledict / tuplelist / multidict / quicksum,
number checks, and the helpers of addVars, addConstrs, setAttr / setInfo, solves and written files.

Contract: a shim makes one Shim (its name for messages, its exception class, its error for general constraints,
its sense constants, the error a non-number raises), subclasses the *Base classes here under its public names
(gurobipy.LinExpr, gurobipy.QuadExpr, coptpy.ConstrBuilder, tupledict, ...) and hands those to Shim.bind(). The code
here reads what differs from the Shim only: it raises the shim's exception with the shim's wording and builds and
recognises the shim's own classes, so each shim behaves as if this code were written in it, and one shim's objects
are never taken for the other's. What is not the same in both shims (constructors, attribute spellings, reprs,
models) stays there.
"""
import itertools
import numbers

import _trex_lp as _lp

_NUMPY_SCALARS = ("float64", "float32", "int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64",
                  "bool_")


def is_num(x):
    """A number of Python arithmetic: int, float, bool (True = 1, False = 0), NumPy scalars, Fraction, Decimal."""
    return isinstance(x, numbers.Number) or type(x).__name__ in _NUMPY_SCALARS


def number(x, error=None):
    """float(x). What is no number raises error(f"not a number: {x!r}") where an error class is given, else float's
    own TypeError / ValueError."""
    if error is None:
        return float(x)
    try:
        return float(x)
    except (TypeError, ValueError):
        raise error(f"not a number: {x!r}")


class Shim:
    """What differs between the shims, for the shared classes (each reads it as self._shim)."""

    def __init__(self, name, error, general, senses, number_error=None):
        self.name = name  # "gurobipy" / "coptpy": "... not supported by the trex gurobipy shim"
        self.error = error  # GurobiError / CoptError
        self.general = general  # raises the shim's error for general constraints (`>>`: indicators)
        self.le, self.ge, self.eq = senses  # the sense constants of <=, >=, ==
        self.number_error = number_error  # what a non-number raises (None: float's TypeError / ValueError)
        self.degree = f"expressions of degree above 2 are not supported by the trex {name} shim"
        self.division = f"division by a variable (nonlinear) is not supported by the trex {name} shim"

    def bind(self, Var, LinExpr, QuadExpr, Constr, tupledict, tuplelist, multidict_dict):
        """The shim's classes (Constr: the one `expr <= rhs` builds); multidict_dict: the type of multidict()'s
        value dicts."""
        self.Var, self.LinExpr, self.QuadExpr, self.Constr = Var, LinExpr, QuadExpr, Constr
        self.tupledict, self.tuplelist, self.multidict_dict = tupledict, tuplelist, multidict_dict
        for cls in (Var, LinExpr, QuadExpr, Constr, tupledict, tuplelist):
            cls._shim = self

    def num(self, x):
        return number(x, self.number_error)

    def refused(self, rep):
        """The shim's error for a solve the harness answered "unsupported" (a quadratic model that is nonconvex or
        has integer variables), with the harness's detail."""
        return self.error(f"this model is not supported by the trex {self.name} shim: "
                          f"{rep.get('detail') or 'the harness cannot solve it'}")

    def quicksum(self, items):
        e = self.LinExpr()
        for x in items:
            e.add(x)
        return e

    def multidict(self, data):
        """multidict({key: [a, b]}) -> [keys, {key: a}, {key: b}]; multidict({key: a}) -> [keys, {key: a}]."""
        keys = self.tuplelist(data.keys())
        first = next(iter(data.values()), None)
        if not isinstance(first, (list, tuple)):
            return [keys, self.multidict_dict(data)]
        dicts = [self.multidict_dict() for _ in range(len(first))]
        for k, vals in data.items():
            for i, d in enumerate(dicts):
                d[k] = vals[i]
        return [keys] + dicts


class Indexed:
    """Variables and constraints: .index, their position in the model."""
    __slots__ = ()

    @property
    def index(self):
        return self._index


class VarArithmetic:
    """A variable in expressions: each operation is that of the one-term expression 1.0 * var."""
    __slots__ = ()

    def _le(self):
        return self._shim.LinExpr().add(self)

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
        return self._le() ** p

    def __rshift__(self, o):
        self._shim.general()

    def __le__(self, o):
        return self._shim.Constr(self._le(), self._shim.le, o)

    def __ge__(self, o):
        return self._shim.Constr(self._le(), self._shim.ge, o)

    def __eq__(self, o):
        return self._shim.Constr(self._le(), self._shim.eq, o)

    __hash__ = object.__hash__


class ExprArithmetic:
    """What linear and quadratic expressions share: sums and differences through copy() and add(), and comparisons
    that build the shim's constraint (`expr <= rhs`)."""

    def __add__(self, o):
        return self.copy().add(o)

    def __radd__(self, o):
        return self.copy().add(o)

    def __iadd__(self, o):
        return self.add(o)

    def __sub__(self, o):
        return self.copy().add(o, -1.0)

    def __isub__(self, o):
        return self.add(o, -1.0)

    def __le__(self, o):
        return self._shim.Constr(self, self._shim.le, o)

    def __ge__(self, o):
        return self._shim.Constr(self, self._shim.ge, o)

    def __eq__(self, o):
        return self._shim.Constr(self, self._shim.eq, o)

    __hash__ = object.__hash__


class LinExprBase(ExprArithmetic):
    """sum(coef * var) + constant: _terms {var: coef} (insertion order), _const. The product of two expressions with
    variables is a QuadExpr (QuadExprBase); adding a QuadExpr to one in place (add, +=, quicksum, tupledict.sum)
    turns it into that QuadExpr."""

    def _add_term(self, v, c):
        if not isinstance(v, self._shim.Var):
            raise self._shim.error(f"not a variable: {v!r}")
        self._terms[v] = self._terms.get(v, 0.0) + c

    def copy(self):
        e = self._shim.LinExpr()
        e._terms = dict(self._terms)
        e._const = self._const
        return e

    def add(self, expr, mult=1.0):
        """self += mult * expr (an expression, a variable or a number); returns self."""
        shim = self._shim
        mult = shim.num(mult)
        if isinstance(expr, shim.LinExpr):
            for v, c in expr._terms.items():
                self._terms[v] = self._terms.get(v, 0.0) + c * mult
            self._const += expr._const * mult
        elif isinstance(expr, shim.Var):
            self._terms[expr] = self._terms.get(expr, 0.0) + mult
        elif is_num(expr):
            self._const += shim.num(expr) * mult
        elif isinstance(expr, shim.QuadExpr):
            # the sum is quadratic: this object becomes a QuadExpr (same fields, plus the quadratic terms)
            self.__class__ = shim.QuadExpr
            self._qterms = {}
            return self.add(expr, mult)
        elif isinstance(expr, shim.Constr):
            raise shim.error("a constraint cannot be used as an expression")
        else:
            raise shim.error(f"unsupported operand in a linear expression: {type(expr).__name__}")
        return self

    def getConstant(self):
        return self._const

    def getVar(self, i):
        return list(self._terms.keys())[i]

    def getCoeff(self, i):
        return list(self._terms.values())[i]

    def getValue(self):
        return self._const + sum(c * v.x for v, c in self._terms.items())

    def clear(self):
        self._terms = {}
        self._const = 0.0

    # ---- arithmetic (a product of two expressions with variables is quadratic)
    def __rsub__(self, o):
        return (self * -1.0).add(o)

    def __mul__(self, o):
        shim = self._shim
        if isinstance(o, (shim.Var, shim.LinExpr, shim.QuadExpr)):
            if isinstance(o, shim.LinExpr) and not o._terms:
                o = o._const
            elif not self._terms:
                return (o * self._const) if isinstance(o, shim.QuadExpr) else shim.LinExpr().add(o, self._const)
            elif isinstance(o, shim.QuadExpr):
                if o._qterms:
                    raise shim.error(shim.degree)
                return product(shim, self, o)
            else:
                return product(shim, self, shim.LinExpr().add(o) if isinstance(o, shim.Var) else o)
        c = shim.num(o)
        e = shim.LinExpr()
        e._terms = {v: x * c for v, x in self._terms.items()}
        e._const = self._const * c
        return e

    __rmul__ = __mul__

    def __imul__(self, o):
        return self * o

    def __truediv__(self, o):
        shim = self._shim
        if isinstance(o, (shim.Var, shim.LinExpr, shim.QuadExpr)):
            return self * (1.0 / constant_value(shim, o, shim.division))
        return self * (1.0 / shim.num(o))

    def __pow__(self, p):
        n = exponent(self._shim, p)
        if n == 2:
            return self * self
        return self.copy() if n == 1 else self._shim.LinExpr().add(1.0)

    def __rshift__(self, o):
        self._shim.general()

    def __neg__(self):
        return self * -1.0

    def __pos__(self):
        return self



def product(shim, a, b):
    """a * b of two expressions without quadratic terms (their _terms and _const), expanded: a QuadExpr with the
    constant a0 * b0, the linear terms a0 * b + b0 * a and a quadratic term per pair of their variables."""
    q = shim.QuadExpr()
    q._const = a._const * b._const
    for const, terms in ((b._const, a._terms), (a._const, b._terms)):
        if const:
            for v, c in terms.items():
                q._terms[v] = q._terms.get(v, 0.0) + c * const
    for v, c in a._terms.items():
        for w, d in b._terms.items():
            q._add_qterm(v, w, c * d)
    return q


def constant_value(shim, o, message):
    """o as a number: a number, or an expression without variables (its constant); a variable or an expression with
    variables raises the shim's error with message."""
    if isinstance(o, (shim.LinExpr, shim.QuadExpr)):
        if o._terms or getattr(o, "_qterms", None):
            raise shim.error(message)
        return o._const
    if isinstance(o, shim.Var):
        raise shim.error(message)
    return shim.num(o)


def exponent(shim, p):
    """The power p of `expr ** p` as 0, 1 or 2; an integer above 2 raises the shim's error naming the degree, any
    other power one naming the power."""
    if is_num(p):
        f = float(p)
        if f in (0.0, 1.0, 2.0):
            return int(f)
        if f.is_integer() and f > 2:
            raise shim.error(shim.degree)
    raise shim.error(f"the power {p!r} of an expression is not supported by the trex {shim.name} shim")


class QuadExprBase(ExprArithmetic):
    """A quadratic expression: the fields of a linear one (_terms {var: coef}, _const) and _qterms, the terms
    coef * var1 * var2, one per unordered pair of variables (x*y and y*x merge) in insertion order, as
    {(id(var1), id(var2)): (var1, var2, coef)} (keyed by ids, since == of variables builds a constraint).

    Arithmetic keeps the degree at most 2: sums with expressions, variables and numbers, products and quotients with
    numbers (or expressions without variables); a product with anything holding a variable and a power above 1
    raise the shim's error naming the degree. An expression without quadratic terms multiplies as a linear one."""

    _add_term = LinExprBase._add_term

    def _add_qterm(self, v1, v2, c):
        shim = self._shim
        for v in (v1, v2):
            if not isinstance(v, shim.Var):
                raise shim.error(f"not a variable: {v!r}")
        key = (id(v1), id(v2))
        old = self._qterms.get(key)
        if old is None and (id(v2), id(v1)) in self._qterms:
            key = (id(v2), id(v1))
            old = self._qterms[key]
        self._qterms[key] = (v1, v2, c) if old is None else (old[0], old[1], old[2] + c)

    def copy(self):
        q = self._shim.QuadExpr()
        q._terms = dict(self._terms)
        q._const = self._const
        q._qterms = dict(self._qterms)
        return q

    def add(self, expr, mult=1.0):
        """self += mult * expr (a quadratic or linear expression, a variable or a number); returns self."""
        shim = self._shim
        if not isinstance(expr, shim.QuadExpr):
            return LinExprBase.add(self, expr, mult)  # the same fields: the linear part and the constant
        mult = shim.num(mult)
        for v1, v2, c in list(expr._qterms.values()):
            self._add_qterm(v1, v2, c * mult)
        for v, c in list(expr._terms.items()):
            self._terms[v] = self._terms.get(v, 0.0) + c * mult
        self._const += expr._const * mult
        return self

    def _scaled(self, k):
        q = self._shim.QuadExpr()
        q._terms = {v: c * k for v, c in self._terms.items()}
        q._const = self._const * k
        q._qterms = {key: (v1, v2, c * k) for key, (v1, v2, c) in self._qterms.items()}
        return q

    def _qterm(self, i):
        return list(self._qterms.values())[i]

    def getVar1(self, i):
        """The first variable of the i-th quadratic term."""
        return self._qterm(i)[0]

    def getVar2(self, i):
        return self._qterm(i)[1]

    def getCoeff(self, i):
        """The coefficient of the i-th quadratic term."""
        return self._qterm(i)[2]

    def getLinExpr(self):
        """The linear part with the constant, a LinExpr."""
        e = self._shim.LinExpr()
        e._terms = dict(self._terms)
        e._const = self._const
        return e

    def getConstant(self):
        return self._const

    def getValue(self):
        return (self._const + sum(c * v.x for v, c in self._terms.items())
                + sum(c * v1.x * v2.x for v1, v2, c in self._qterms.values()))

    def clear(self):
        self._terms = {}
        self._const = 0.0
        self._qterms = {}

    def remove(self, item):
        """remove(i): the i-th quadratic term; remove(var): every term, linear or quadratic, with var."""
        if isinstance(item, self._shim.Var):
            self._remove_var(item)
        else:
            self._remove_qterm(int(item))

    def _remove_var(self, v):
        """Drops every term, linear or quadratic, with the variable v."""
        self._terms.pop(v, None)
        self._qterms = drop_var(self._qterms, v)

    def _remove_qterm(self, i):
        del self._qterms[list(self._qterms)[i]]

    # ---- arithmetic
    def __rsub__(self, o):
        return self._scaled(-1.0).add(o)

    def __mul__(self, o):
        shim = self._shim
        if not self._qterms and isinstance(o, (shim.Var, shim.LinExpr, shim.QuadExpr)):
            return self.getLinExpr() * o
        return self._scaled(constant_value(shim, o, shim.degree))

    __rmul__ = __mul__

    def __imul__(self, o):
        return self * o

    def __truediv__(self, o):
        return self._scaled(1.0 / constant_value(self._shim, o, self._shim.division))

    def __pow__(self, p):
        n = exponent(self._shim, p)
        if n == 0:
            return self._shim.LinExpr().add(1.0)
        return self.copy() if n == 1 else self * self

    def __neg__(self):
        return self._scaled(-1.0)

    def __pos__(self):
        return self

    def __rshift__(self, o):
        self._shim.general()




class ComparisonBase:
    """`lhs sense rhs` (gurobipy's TempConstr, coptpy's ConstrBuilder) before it is added to a model."""

    def __init__(self, lhs, sense, rhs):
        shim = self._shim
        self.lhs = lhs if isinstance(lhs, (shim.LinExpr, shim.QuadExpr)) else shim.LinExpr().add(lhs)
        self.sense = sense
        self.rhs = rhs

    def _row(self):
        """lhs - rhs as one expression (a LinExpr, or a QuadExpr where either side is quadratic): `row sense 0`,
        the right-hand side is minus its constant."""
        e = self.lhs.copy()
        e.add(self.rhs, -1.0)
        return e

    def __rshift__(self, o):  # indicator: (b == 1) >> (x <= 5)
        self._shim.general()

    __rrshift__ = __rshift__


def matches(key, pattern):
    """tupledict / tuplelist select(): each position of the key equals the pattern's or the pattern has '*'."""
    if not isinstance(key, tuple):
        key = (key,)
    if len(pattern) != len(key):
        return False
    return all(p == "*" or p == k for p, k in zip(pattern, key))


class TupleDictBase(dict):
    def select(self, *pattern):
        if not pattern:
            return list(self.values())
        return [v for k, v in self.items() if matches(k, pattern)]

    def sum(self, *pattern):
        e = self._shim.LinExpr()
        for v in (self.select(*pattern) if pattern else self.values()):
            e.add(v)
        return e

    def prod(self, coeff, *pattern):
        """sum(coeff[k] * self[k]) over the keys in coeff (and matching the pattern)."""
        e = self._shim.LinExpr()
        for k, v in self.items():
            if pattern and not matches(k, pattern):
                continue
            if k in coeff:
                self._add_product(e, v, coeff[k])
        return e

    def _add_product(self, e, value, coeff):
        e.add(value, coeff)


class TupleListBase(list):
    def select(self, *pattern):
        return self._shim.tuplelist(k for k in self if matches(k, pattern))


# ---- models: addVar(s), addConstrs, setAttr / setInfo, the objective

def append_var(model, var_class, lb, ub, obj, vtype, name):
    """addVar: a new var_class(model, index, ...) at the end of model._vars, named C<index> where name is empty."""
    v = var_class(model, len(model._vars), lb, ub, obj, vtype, name or f"C{len(model._vars)}")
    model._vars.append(v)
    return v


def key_tuple(k):
    return k if isinstance(k, tuple) else (k,)


def flatten(values):
    """The values with each tuple among them spliced in, as a tuple: (1, (2, 3)) -> (1, 2, 3)."""
    flat = []
    for x in values:
        flat.extend(x if isinstance(x, tuple) else (x,))
    return tuple(flat)


def keys_from(indices, is_count):
    """The keys of addVars(*indices): an index for which is_count() holds is range(int(index)), any other is
    iterated; several indices give their product, each key a flat tuple."""
    lists = [list(range(int(ix))) if is_count(ix) else list(ix) for ix in indices]
    if len(lists) == 1:
        return lists[0]
    return [flatten(combo) for combo in itertools.product(*lists)]


def pick(arg, key, i):
    """One element's value of an addVars argument: by key from a dict, by position from a list or tuple, else the
    argument itself (one value for all)."""
    if isinstance(arg, dict):
        return arg[key]
    if isinstance(arg, (list, tuple)) and not isinstance(arg, str):
        return arg[i]
    return arg


def indexed_name(prefix, key, brackets):
    """prefix[1,2] (brackets "[]") or prefix(1,2) (brackets "()"): the name of an addVars / addConstrs element."""
    return f"{prefix}{brackets[0]}{','.join(str(x) for x in key_tuple(key))}{brackets[1]}"


def element_name(name, key, i, brackets):
    """The name of addVars' element `key` (the i-th): a str names them all (indexed_name()), a dict or list gives each
    its own (pick())."""
    return indexed_name(name, key, brackets) if isinstance(name, str) else pick(name, key, i)


def add_vars(td, keys, add_var, lb, ub, obj, vtype, name_of):
    """addVars: td[key] = add_var(lb, ub, obj, vtype, name_of(key, i)) for the i-th key, each of lb, ub, obj and
    vtype picked for the key (pick()); returns td."""
    for i, k in enumerate(keys):
        name = name_of(k, i)
        td[k] = add_var(pick(lb, k, i), pick(ub, k, i), pick(obj, k, i), pick(vtype, k, i), name)
    return td


def keyed(generator, number_unhashable=False):
    """The items of addConstrs' generator, each with its key: the values of the generator's loop variables (tuples
    spliced, one value as itself); the item's number where there are none (a list, not a generator) or, with
    number_unhashable, where they make no dict key (a loop over lists or dicts)."""
    code = getattr(generator, "gi_code", None)
    loop_vars = [v for v in (code.co_varnames if code else ()) if v != ".0"]
    for i, item in enumerate(generator):
        key = i
        frame = getattr(generator, "gi_frame", None)
        if frame is not None and loop_vars:
            flat = flatten(frame.f_locals.get(v) for v in loop_vars)
            key = flat[0] if len(flat) == 1 else flat
            if number_unhashable and not _hashable(key):
                key = i
        yield key, item


def _hashable(x):
    try:
        hash(x)
    except TypeError:
        return False
    return True


def spread(objs, values, set_one):
    """set_one(obj, value) for each of objs: over a dict of objects, `values` by key (a dict) or one value for all;
    over a list, by position (a list or tuple) or one value for all."""
    if isinstance(objs, dict):
        for k, o in objs.items():
            set_one(o, values[k] if isinstance(values, dict) else values)
        return
    for o, v in zip(objs, values if isinstance(values, (list, tuple)) else itertools.repeat(values)):
        set_one(o, v)


def set_objective(variables, expr, attr):
    """setObjective: each variable's objective coefficient (attribute attr: Obj / _obj) from expr's linear terms, 0
    where it has none; returns expr's constant and its quadratic terms (a copy of a QuadExpr's _qterms, {} for a
    linear expression)."""
    for v in variables:
        setattr(v, attr, 0.0)
    for v, c in expr._terms.items():
        setattr(v, attr, c)
    return expr._const, dict(getattr(expr, "_qterms", {}))


def get_objective(expr, variables, attr, const, qterms=None):
    """getObjective: the empty expr (a QuadExpr where there are qterms) filled with the variables' nonzero objective
    coefficients (attribute attr), the constant and the quadratic terms."""
    for v in variables:
        if getattr(v, attr):
            expr._terms[v] = getattr(v, attr)
    expr._const = const
    if qterms:
        expr._qterms = dict(qterms)
    return expr


def is_quadratic(shim, expr):
    """A QuadExpr with a nonzero quadratic term (one without, such as x*y - y*x, is linear)."""
    return isinstance(expr, shim.QuadExpr) and any(c for _, _, c in expr._qterms.values())


def quad_items(qterms, col):
    """Quadratic terms (_qterms) as _trex_lp.lp_text() takes them: [(column of var1, column of var2, coef)]."""
    return [(col[v1], col[v2], c) for v1, v2, c in qterms.values()]


def drop_var(qterms, v):
    """The quadratic terms (_qterms) without those of the variable v."""
    return {k: t for k, t in qterms.items() if t[0] is not v and t[1] is not v}


# ---- solutions and files

def clear_solution(variables, constraints):
    """Forgets the last solve's values: each variable's _x / _rc, each constraint's _pi / _slack become None."""
    for v in variables:
        v._x = None
        v._rc = None
    for c in constraints:
        c._pi = None
        c._slack = None


def read_columns(variables, rep):
    """Sets _x (0.0 where the reply has none) and _rc (where it has one) of the variables written as columns x0,
    x1, ... (lp_text()'s names, in this order) from a solve reply."""
    xs, rcs = rep.get("x", {}), rep.get("rc", {})
    for j, v in enumerate(variables):
        v._x = float(xs.get(f"x{j}", 0.0))
        if f"x{j}" in rcs:
            v._rc = float(rcs[f"x{j}"])


def write_lp(filename, text, api):
    """Writes the LP text to filename and tells the harness (_trex_lp.written)."""
    with open(filename, "w") as f:
        f.write(text)
    _lp.written(filename, text, api)


def write_sol(filename, values):
    """A .sol file: a line `name value` per (name, value) pair, 0 for a value of None (no solution)."""
    with open(filename, "w") as f:
        for name, x in values:
            f.write(f"{name} {x if x is not None else 0}\n")
